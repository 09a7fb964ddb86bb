"""Where secrets live: the OS keyring (service `aai-gateway`), or memory for unit tests.

There is deliberately no plaintext fallback: with no usable keyring the store refuses, and the
error says how to get one. Calls are blocking (the keyring may talk DBus or a system API):
async code calls them through `anyio.to_thread`.
"""

from __future__ import annotations

import json
import threading
from typing import Any, Protocol

from ..errors import AaiError, ErrorCode

SERVICE = "aai-gateway"
INDEX_KEY = "__index__"


class SecretStoreUnavailableError(AaiError):
    def __init__(self, reason: str) -> None:
        super().__init__(
            f"no usable OS keyring ({reason}). The gateway keeps credentials only in the OS keyring: "
            "on Linux install and unlock a Secret Service (GNOME Keyring: `apt install gnome-keyring`, "
            "or KeePassXC with Secret Service enabled) in your desktop session; macOS Keychain and "
            "Windows Credential Manager work out of the box",
            {"reason": reason},
            ErrorCode.AUTH_REQUIRED,
        )


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
        import keyring  # imported here: loading the keyring backends costs time on every start

        self.service = service
        self._keyring = keyring
        self._backend = backend if backend is not None else keyring.get_keyring()
        self._lock = threading.Lock()
        self._check_usable()

    def _check_usable(self) -> None:
        from keyring.backends import fail

        name = type(self._backend).__module__ + "." + type(self._backend).__name__
        if isinstance(self._backend, fail.Keyring) or "plaintext" in name.lower() or "null" in name.lower():
            raise SecretStoreUnavailableError(f"keyring backend {name} does not store secrets securely")

    def _call(self, method: str, *args: str) -> Any:
        from keyring.errors import KeyringError

        try:
            return getattr(self._backend, method)(self.service, *args)
        except KeyringError as exc:
            raise SecretStoreUnavailableError(f"{type(exc).__name__}: {exc}") from exc

    def get(self, key: str) -> str | None:
        value: str | None = self._call("get_password", key)
        return value

    def set(self, key: str, value: str) -> None:
        with self._lock:
            self._call("set_password", key, value)
            index = self._index()
            if key not in index:
                self._call("set_password", INDEX_KEY, json.dumps(sorted({*index, key})))

    def delete(self, key: str) -> None:
        from keyring.errors import PasswordDeleteError

        with self._lock:
            try:
                self._call("delete_password", key)
            except PasswordDeleteError:
                pass  # already gone: deleting is idempotent
            index = self._index()
            if key in index:
                self._call("set_password", INDEX_KEY, json.dumps(sorted(index - {key})))

    def keys(self, prefix: str = "") -> list[str]:
        return sorted(k for k in self._index() if k.startswith(prefix))

    def _index(self) -> frozenset[str]:
        raw = self._call("get_password", INDEX_KEY)
        try:
            keys = json.loads(raw) if raw else []
        except json.JSONDecodeError:
            keys = []
        return frozenset(k for k in keys if isinstance(k, str))
