"""Whether each app's MCP server is running and the last error it gave, for `aai-gateway scan`.

The sessions with MCP servers live in the gateway processes that run them (`aai-gateway serve`,
one per client; `import` while it takes snapshots), not in the process that runs `scan`. So
every such process, an *instance*, tells the others through two files of its own under
`<cache dir>/mcp-servers/`:

    <instance>.json   per app whose server it ran: running or stopped since when, over which
                      transport, the server's process id and protocol, its last error
    <instance>.lock   locked by the instance for as long as it lives

The instance name is random, so a process id used again never passes for an earlier instance.
A reader counts a server as running only while the file's lock is held: the OS drops the lock
when the process ends, however it ends, so a killed gateway never shows its servers as running.
Files of ended instances are kept for their last errors (the newest `KEEP_ENDED`; an instance
removes older ones when it starts).

Nothing here may stop a gateway or `scan`: a file that cannot be written is logged, one that
cannot be read (not a regular file, too large, not what this module writes) is skipped. Error
messages are the gateway's own, already scrubbed of secrets; they are cut and cleaned of
characters a terminal would act on before they are kept.
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..descriptor import AppDescriptor
from ..descriptor.shown_text import visible_text
from .mcp_snapshots import private_directory, read_regular_file
from .web_cache import write_atomic

if TYPE_CHECKING:
    from filelock import FileLock

logger = logging.getLogger(__name__)

STATE_DIR: Final = "mcp-servers"
KEEP_ENDED: Final = 20
MAX_FILE_BYTES: Final = 1024 * 1024
MAX_ERROR_CHARS: Final = 1_000
MAX_APPS: Final = 2_000
_STATE_SUFFIX: Final = ".json"
_LOCK_SUFFIX: Final = ".lock"

Transport = Literal["stdio", "http"]
AppKey = tuple[str, str]
"""An app's binding and id."""


@dataclass(frozen=True)
class LastError:
    at: float
    code: str
    message: str


@dataclass(frozen=True)
class ServerRecord:
    """What one instance knows of one app's server."""

    app_id: str
    binding: str
    transport: Transport
    running: bool
    since: float
    """When it started (running) or stopped."""
    pid: int | None = None
    """The server's process (stdio)."""
    protocol: str | None = None
    last_error: LastError | None = None


@dataclass(frozen=True)
class ServerState:
    """One app's server across every instance: how many live instances run it, the latest
    record (a running one first), and the newest error any instance saw."""

    running: int
    latest: ServerRecord
    last_error: LastError | None


class _ErrorFile(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore", frozen=True)
    at: float = Field(ge=0, allow_inf_nan=False)
    code: str = Field(max_length=64)
    message: str = Field(max_length=MAX_ERROR_CHARS)


class _RecordFile(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore", frozen=True)
    app_id: str = Field(min_length=1, max_length=128)
    binding: str = Field(min_length=1, max_length=8192)
    transport: Transport
    running: bool
    since: float = Field(ge=0, allow_inf_nan=False)
    pid: int | None = Field(default=None, ge=0)
    protocol: str | None = Field(default=None, max_length=64)
    last_error: _ErrorFile | None = None


class _InstanceFile(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore", frozen=True)
    format: Literal[1]
    gateway_pid: int = Field(ge=0)
    servers: list[_RecordFile] = Field(max_length=MAX_APPS)


def error_of(code: str, message: str, at: float | None = None) -> LastError:
    text = visible_text(message, max_chars=MAX_ERROR_CHARS, one_line=True)[0]
    return LastError(time.time() if at is None else at, code[:64], text)


class ServerStateRecorder:
    """This instance's file: `started`, `stopped` and `failed` as its servers come and go;
    `close` when the instance ends (its servers are stopped by then)."""

    def __init__(self, root: Path, *, gateway_pid: int) -> None:
        self.root = Path(root)
        self.gateway_pid = gateway_pid
        self.name = secrets.token_hex(8)
        self._records: dict[AppKey, ServerRecord] = {}
        self._lock: FileLock | None = None

    @classmethod
    def in_cache(cls, cache_root: Path, *, gateway_pid: int) -> ServerStateRecorder:
        return cls(Path(cache_root) / STATE_DIR, gateway_pid=gateway_pid)

    def started(
        self, app: AppDescriptor, transport: Transport, pid: int | None, protocol: str | None
    ) -> None:
        self._change(app, transport, running=True, since=time.time(), pid=pid, protocol=protocol)

    def stopped(self, app: AppDescriptor, transport: Transport, error: LastError | None = None) -> None:
        """Stopped; with the error it ended with, when it ended on its own."""
        since = error.at if error is not None else time.time()
        self._change(app, transport, running=False, since=since, error=error)

    def failed(self, app: AppDescriptor, transport: Transport, error: LastError) -> None:
        """An error of the server (it did not start, a call failed): kept as its last error."""
        before = self._records.get(_key(app))
        if before is None:
            self._change(app, transport, running=False, since=error.at, error=error)
        else:
            self._keep(replace(before, last_error=error))

    def _change(
        self,
        app: AppDescriptor,
        transport: Transport,
        *,
        running: bool,
        since: float,
        pid: int | None = None,
        protocol: str | None = None,
        error: LastError | None = None,
    ) -> None:
        """A new record of `app`'s server, keeping its last error unless there is a new one."""
        before = self._records.get(_key(app))
        last_error = error or (before.last_error if before is not None else None)
        self._keep(
            ServerRecord(app.id, str(app.binding), transport, running, since, pid, protocol, last_error)
        )

    def close(self) -> None:
        """Every server stopped (the instance ends); the file stays for its last errors."""
        now = time.time()
        if any(r.running for r in self._records.values()):
            self._records = {
                key: replace(r, running=False, since=now) if r.running else r
                for key, r in self._records.items()
            }
            self._write()
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    def _keep(self, record: ServerRecord) -> None:
        key = (record.binding, record.app_id)
        if key not in self._records and len(self._records) >= MAX_APPS:
            return
        self._records[key] = record
        self._write()

    def _write(self) -> None:
        from filelock import FileLock, Timeout  # noqa: PLC0415 (with the first state kept)

        try:
            if self._lock is None:
                private_directory(self.root)
                lock = FileLock(self.root / f"{self.name}{_LOCK_SUFFIX}", mode=0o600, thread_local=False)
                lock.acquire(timeout=0)
                self._lock = lock
                remove_ended(self.root, keep=KEEP_ENDED)
            document = _InstanceFile.model_validate(
                {
                    "format": 1,
                    "gateway_pid": self.gateway_pid,
                    "servers": [asdict(r) for r in self._records.values()],
                }
            )
            write_atomic(self.root / f"{self.name}{_STATE_SUFFIX}", document.model_dump_json().encode())
        except (OSError, Timeout, ValueError) as exc:  # ValueError: a record the file cannot hold
            logger.warning("cannot keep the state of MCP servers in %s: %s", self.root, exc)


def read_states(root: Path) -> dict[AppKey, ServerState]:
    """Every app's server state, from the files of every instance under `root`."""
    by_app: dict[AppKey, list[tuple[bool, ServerRecord]]] = {}
    for name, alive in _instances(root):
        for record in _read_instance(root / f"{name}{_STATE_SUFFIX}"):
            by_app.setdefault((record.binding, record.app_id), []).append((alive, record))
    states = {}
    for key, seen in by_app.items():
        running = [r for alive, r in seen if alive and r.running]
        stopped = [replace(r, running=False) for alive, r in seen if not (alive and r.running)]
        latest = max(running or stopped, key=lambda r: r.since)
        errors = [r.last_error for _, r in seen if r.last_error is not None]
        states[key] = ServerState(len(running), latest, max(errors, key=lambda e: e.at, default=None))
    return states


def remove_ended(root: Path, *, keep: int) -> int:
    """Remove the files of ended instances but the newest `keep`; how many instances."""
    ended = []
    for name, alive in _instances(root):
        path = root / f"{name}{_STATE_SUFFIX}"
        with contextlib.suppress(OSError):
            if not alive:
                ended.append((os.stat(path).st_mtime, name))
    removed = 0
    for _, name in sorted(ended, reverse=True)[keep:]:
        for suffix in (_STATE_SUFFIX, _LOCK_SUFFIX):
            with contextlib.suppress(OSError):
                os.unlink(root / f"{name}{suffix}")
        removed += 1
    return removed


def _instances(root: Path) -> list[tuple[str, bool]]:
    """(name, alive) of every instance with a state file under `root`."""
    try:
        names = sorted(os.listdir(root))
    except OSError:
        return []
    found = []
    for file_name in names:
        name = file_name.removesuffix(_STATE_SUFFIX)
        if file_name.endswith(_STATE_SUFFIX) and not name.startswith(".") and name.isalnum():
            found.append((name, _is_alive(root / f"{name}{_LOCK_SUFFIX}")))
    return found


def _is_alive(lock_path: Path) -> bool:
    """Whether an instance holds its lock. A lock file that is missing or cannot be opened
    counts as ended: nothing would hold it."""
    if not lock_path.is_file() or lock_path.is_symlink():
        return False
    from filelock import FileLock, Timeout  # noqa: PLC0415

    probe = FileLock(lock_path, thread_local=False)
    try:
        probe.acquire(timeout=0)
    except Timeout:
        return True
    except OSError:
        return False
    probe.release()
    return False


def _read_instance(path: Path) -> list[ServerRecord]:
    try:
        data = read_regular_file(path, MAX_FILE_BYTES)
        if data is None:
            raise ValueError(f"not a regular file of at most {MAX_FILE_BYTES} bytes")
        document = _InstanceFile.model_validate_json(data)
    except FileNotFoundError:
        return []
    except (OSError, ValueError) as exc:  # pydantic's ValidationError is a ValueError
        logger.warning("ignoring the MCP server state file %s: %s", path, str(exc).splitlines()[0])
        return []
    return [_record(r) for r in document.servers]


def _record(file: _RecordFile) -> ServerRecord:
    """A record as read, its texts cleaned again: the file is not trusted more than a server."""
    error = file.last_error
    return ServerRecord(
        **file.model_dump(exclude={"protocol", "last_error"}),
        protocol=visible_text(file.protocol, max_chars=64, one_line=True)[0] if file.protocol else None,
        last_error=None if error is None else error_of(error.code, error.message, error.at),
    )


def _key(app: AppDescriptor) -> AppKey:
    return (str(app.binding), app.id)
