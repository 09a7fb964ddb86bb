"""Where secrets live: the OS keyring (service `aai-gateway`), or memory for unit tests.

There is deliberately no plaintext fallback: with no usable keyring the store refuses, and the
error says how to get one. Calls are blocking (the keyring may talk DBus or a system API):
async code calls them through `anyio.to_thread`.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Callable
from typing import Any, Protocol

import keyring
from keyring.backends import fail
from keyring.errors import KeyringError, PasswordDeleteError

from ..errors import SecretStoreUnavailableError

SERVICE = "aai-gateway"
INDEX_KEY = "__index__"
INDEX_ATTEMPTS = 5


class SecretStore(Protocol):
    """Strings by key. `keys()` lists what was stored through this store (keyrings cannot list)."""

    def get(self, key: str) -> str | None: ...

    def set(self, key: str, value: str) -> None: ...

    def delete(self, key: str) -> None: ...

    def keys(self, prefix: str = "") -> list[str]: ...


class MemorySecretStore:
    def __init__(self) -> None:
        self._values: dict[str, str] = {}
        self._lock = threading.Lock()

    def get(self, key: str) -> str | None:
        with self._lock:
            return self._values.get(key)

    def set(self, key: str, value: str) -> None:
        with self._lock:
            self._values[key] = value

    def delete(self, key: str) -> None:
        with self._lock:
            self._values.pop(key, None)

    def keys(self, prefix: str = "") -> list[str]:
        with self._lock:
            return sorted(k for k in self._values if k.startswith(prefix))


class KeyringSecretStore:
    """The OS keyring through `keyring`; an index entry remembers which keys exist."""

    def __init__(self, service: str = SERVICE, backend: Any | None = None) -> None:
        self.service = service
        if backend is None:
            try:
                backend = keyring.get_keyring()
            except (KeyringError, RuntimeError) as exc:  # e.g. PYTHON_KEYRING_BACKEND names a dead one
                raise SecretStoreUnavailableError(f"{type(exc).__name__}: {exc}") from exc
        self._backend = backend
        self._lock = threading.Lock()
        self._check_usable()

    def _check_usable(self) -> None:
        # A chain of backends reads from every member, so one insecure member taints the chain.
        members = getattr(self._backend, "backends", None) or [self._backend]
        for backend in [self._backend, *members]:
            name = type(backend).__module__ + "." + type(backend).__name__
            if isinstance(backend, fail.Keyring) or "plaintext" in name.lower() or "null" in name.lower():
                raise SecretStoreUnavailableError(f"keyring backend {name} does not store secrets securely")

    def _call(self, method: str, *args: str) -> Any:
        try:
            return getattr(self._backend, method)(self.service, *args)
        except PasswordDeleteError:
            raise  # "nothing stored under that key": not a keyring failure
        except KeyringError as exc:
            raise SecretStoreUnavailableError(f"{type(exc).__name__}: {exc}") from exc
        except Exception as exc:  # a backend's own failure: the keyring is another process
            # keyring's backends pass some failures of their own through: SecretService's D-Bus
            # errors (a collection removed while in use: secretstorage's ItemNotFoundException),
            # and any backend may do the same. The store is unavailable for this call, as when
            # locked; what was being stored is never part of the reason.
            reason = str(exc)
            for value in args[1:]:
                reason = reason.replace(value, "[secret]") if value else reason
            raise SecretStoreUnavailableError(f"{type(exc).__name__}: {reason}") from None

    def get(self, key: str) -> str | None:
        value: str | None = self._call("get_password", key)
        return value

    def set(self, key: str, value: str) -> None:
        with self._lock:
            self._call("set_password", key, value)
            self._update_index(add=key)

    def delete(self, key: str) -> None:
        with self._lock:
            with contextlib.suppress(PasswordDeleteError):  # already gone: deleting is idempotent
                self._call("delete_password", key)
            self._update_index(remove=key)

    def keys(self, prefix: str = "") -> list[str]:
        return sorted(k for k in self._index() if k.startswith(prefix))

    def _update_index(self, *, add: str | None = None, remove: str | None = None) -> None:
        """Read, change, write, then read back: another process (the CLI while the server runs)
        may have written the index in between; retrying until our change shows makes the lost
        update window small, and a lost index entry loses only listing, never the secret."""
        for _ in range(INDEX_ATTEMPTS):
            index = self._index()
            wanted = (index | {add}) - {remove} if add else index - {remove}
            if wanted == index:
                return
            self._call("set_password", INDEX_KEY, json.dumps(sorted(wanted)))
            after = self._index()
            if (add is None or add in after) and (remove is None or remove not in after):
                return

    def _index(self) -> frozenset[str]:
        raw = self._call("get_password", INDEX_KEY)
        try:
            keys = json.loads(raw) if raw else []
        except json.JSONDecodeError:
            keys = []
        if not isinstance(keys, list):
            return frozenset()
        return frozenset(k for k in keys if isinstance(k, str))


class LazySecretStore:
    """Opens the real store on first use, so a gateway without a keyring still starts; until a
    keyring is usable every call raises the same how-to-fix error (and retries opening it)."""

    def __init__(self, open_store: Callable[[], SecretStore]) -> None:
        self._open_store = open_store
        self._store: SecretStore | None = None
        self._lock = threading.Lock()

    def _get_store(self) -> SecretStore:
        with self._lock:
            if self._store is None:
                self._store = self._open_store()
            return self._store

    def get(self, key: str) -> str | None:
        return self._get_store().get(key)

    def set(self, key: str, value: str) -> None:
        self._get_store().set(key, value)

    def delete(self, key: str) -> None:
        self._get_store().delete(key)

    def keys(self, prefix: str = "") -> list[str]:
        return self._get_store().keys(prefix)
