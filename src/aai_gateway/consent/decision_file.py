"""Where consent decisions live when no OS keyring is usable (docs/consent.md, "Without a keyring").

Consent decisions are not secrets (which client may use which tool), so a machine without a
Secret Service — a server, a container, WSL, an SSH session — keeps them in one JSON file in the
user state directory instead of forgetting every "always" answer. Credentials never go here.

- `DecisionFile` stores strings by key, like the secret store it stands in for: one JSON
  object `{key: value}` in a file only its owner can read or write (directory 0700, file 0600).
- Every change is a locked read-change-write (`filelock`: concurrent gateways and the CLI never
  lose each other's decisions), written atomically (temporary file, fsync, rename).
- A file that is not ours to trust — not JSON, not an object of strings, writable by others or
  owned by another user — counts as holding no decisions (absence never allows) and is logged;
  the next change moves it aside as `<name>.corrupt-<time>` instead of overwriting it.
- `DecisionRecords` picks the place once per process: the OS keyring when it is usable, else
  the file; `where` says which, for `consent list` and the start-up log.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import stat
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Final

from ..auth.secrets import SecretStore
from ..errors import DecisionFileError, SecretStoreUnavailableError

logger = logging.getLogger(__name__)

FILE_NAME: Final = "consent.json"
if TYPE_CHECKING:
    from filelock import FileLock

LOCK_SECONDS: Final = 10.0


class DecisionFile:
    """Strings by key in one owner-only JSON file (see the module docstring)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._file_lock: FileLock | None = None  # made at the first read or write of a decision
        self._warned: float | None = None  # the mtime of an untrusted file already reported

    def get(self, key: str) -> str | None:
        return self._read().get(key)

    def keys(self, prefix: str = "") -> list[str]:
        return sorted(k for k in self._read() if k.startswith(prefix))

    def set(self, key: str, value: str) -> None:
        with self._locked() as values:
            values[key] = value

    def delete(self, key: str) -> None:
        with self._locked() as values:
            values.pop(key, None)

    def writable(self) -> bool:
        """Whether a decision could be written here now (the folder exists or can be made)."""
        try:
            self._make_folder()
        except OSError:
            return False
        return os.access(self.path.parent, os.W_OK | os.X_OK)

    # ----------------------------------------------------------------- reading

    def _read(self) -> dict[str, str]:
        try:
            values, problem = self._load()
        except OSError as exc:
            logger.warning("cannot read the consent decision file %s (%s): no decisions used", self.path, exc)
            return {}
        if problem is not None:
            self._report(problem)
        return values

    def _load(self) -> tuple[dict[str, str], str | None]:
        """The file's values, or nothing and why it cannot be trusted."""
        try:
            with open(self.path, "rb") as handle:
                info = os.fstat(handle.fileno())
                raw = handle.read()
        except FileNotFoundError:
            return {}, None
        if hasattr(os, "getuid") and info.st_uid != os.getuid():
            return {}, "it belongs to another user"
        if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            return {}, "other users can write it"
        try:
            document = json.loads(raw)
        except (ValueError, UnicodeDecodeError) as exc:
            return {}, f"it is not JSON ({exc})"
        if not isinstance(document, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in document.items()
        ):
            return {}, "it is not an object of strings"
        return document, None

    def _report(self, problem: str) -> None:
        try:
            mtime = self.path.stat().st_mtime
        except OSError:
            mtime = 0.0
        if self._warned != mtime:  # once per version of the file, not at every read
            self._warned = mtime
            logger.warning(
                "ignoring the consent decision file %s: %s. No remembered decision is used; the next "
                "decision moves it aside as %s.corrupt-<time>",
                self.path,
                problem,
                self.path.name,
            )

    # ----------------------------------------------------------------- writing

    @contextlib.contextmanager
    def _locked(self) -> Iterator[dict[str, str]]:
        from filelock import FileLock, Timeout  # noqa: PLC0415 (~10 ms: not at every start)

        if self._file_lock is None:
            self._file_lock = FileLock(
                str(self.path) + ".lock", timeout=LOCK_SECONDS, mode=0o600, thread_local=False
            )
        try:
            self._make_folder()
            with self._file_lock:
                values, problem = self._load()
                if problem is not None:
                    self._move_aside(problem)
                before = dict(values)
                yield values
                if values != before:
                    self._write(values)
        except Timeout as exc:
            raise DecisionFileError(self.path, f"another process holds its lock ({exc})") from exc
        except OSError as exc:
            raise DecisionFileError(self.path, exc.strerror or str(exc)) from exc

    def _make_folder(self) -> None:
        folder = self.path.parent
        if not folder.is_dir():
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)

    def _move_aside(self, problem: str) -> None:
        aside = self.path.with_name(f"{self.path.name}.corrupt-{time.strftime('%Y%m%d-%H%M%S')}")
        with contextlib.suppress(FileNotFoundError):
            os.replace(self.path, aside)
            logger.warning("moved the consent decision file aside to %s (%s)", aside, problem)

    def _write(self, values: dict[str, str]) -> None:
        data = json.dumps(values, indent=1, sort_keys=True, ensure_ascii=False).encode("utf-8") + b"\n"
        descriptor, temporary = tempfile.mkstemp(dir=self.path.parent, prefix=f".{self.path.name}.")
        try:
            with os.fdopen(descriptor, "wb") as handle:  # mkstemp: mode 0600, owner only
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temporary, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise


class DecisionRecords:
    """The consent records' store: the OS keyring when usable, else `DecisionFile` (chosen on
    first use, once per process). Satisfies the secret store protocol `ConsentStore` expects."""

    def __init__(self, open_keyring: Callable[[], SecretStore], file: DecisionFile) -> None:
        self._open_keyring = open_keyring
        self.file = file
        self._chosen: SecretStore | None = None
        self._keyring_problem: str | None = None
        self._lock = threading.Lock()

    def _store(self) -> SecretStore:
        with self._lock:
            if self._chosen is None:
                try:
                    self._chosen = self._open_keyring()
                except SecretStoreUnavailableError as exc:
                    self._keyring_problem = str(exc.data.get("reason") or exc.message)
                    self._chosen = self.file
            return self._chosen

    @property
    def in_file(self) -> bool:
        return self._store() is self.file

    @property
    def where(self) -> str:
        """For people: where decisions are kept, and why there."""
        if self.in_file:
            return f"the file {self.file.path} (no usable OS keyring: {self._keyring_problem})"
        return "the OS keyring"

    def can_remember(self) -> bool:
        """Whether an "always" answer given now would be kept."""
        return not self.in_file or self.file.writable()

    def get(self, key: str) -> str | None:
        return self._store().get(key)

    def set(self, key: str, value: str) -> None:
        self._store().set(key, value)

    def delete(self, key: str) -> None:
        self._store().delete(key)

    def keys(self, prefix: str = "") -> list[str]:
        return self._store().keys(prefix)
