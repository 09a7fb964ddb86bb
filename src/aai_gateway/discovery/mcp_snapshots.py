"""Snapshots of MCP servers' tool lists, so that listing apps never has to start their servers.

An `mcp` descriptor without `tools` leaves them to its server. When the gateway (its `mcp`
executor) has asked a server for its tools, the answer is kept as a `Snapshot`, one file per app
(binding and id) under `<cache dir>/mcp-snapshots/`:

    <root>/<sha256 of "binding\\napp id", 32 hex digits>.json

holding the server's tools exactly as it listed them (bounded: `descriptor.mcp_wire`), its
`serverInfo` and `instructions` (cut to `MAX_INSTRUCTIONS_CHARS`), when the snapshot was taken,
and the `fingerprint` of the execution section it was taken for. A descriptor whose execution
section has changed since (another command, arguments, environment, url or headers: another
server, maybe) makes its snapshot *stale*: it is not applied, and shows as stale in `cache list`
and `scan`, until the server is asked again.

Files are written atomically (temporary file, fsync, rename), readable by their owner only, in
a directory only the owner can enter. A file is read up to `MAX_SNAPSHOT_BYTES`; one that is not
a regular file, too large, not the JSON this module writes, or written for another app, counts
as absent and is logged, never raised: a snapshot is a copy, the server is the truth, and one bad
file must not stop discovery. The tools inside are held to the descriptor rules when applied
(`descriptor.mcp_tools`), not here.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import logging
import os
import stat
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..descriptor import AppDescriptor
from ..descriptor.mcp_tools import mcp_channel
from ..descriptor.mcp_wire import MAX_TOOLS, MAX_TOOLS_BYTES, bounded_tools
from ..descriptor.shown_text import visible_text
from .web_cache import write_atomic

logger = logging.getLogger(__name__)

SNAPSHOT_DIR: Final = "mcp-snapshots"
FORMAT: Final = 1
MAX_INSTRUCTIONS_CHARS: Final = 8_192
MAX_INFO_CHARS: Final = 200
MAX_SNAPSHOT_BYTES: Final = MAX_TOOLS_BYTES + 256 * 1024
"""The tools' bytes, and room for everything else the file holds."""
_SUFFIX: Final = ".json"
_Paths = list[Path]  # `SnapshotStore.list` hides the built-in name inside the class
_NO_FOLLOW_NO_WAIT: Final = 0 if sys.platform == "win32" else os.O_NOFOLLOW | os.O_NONBLOCK
_TMP_SUFFIX: Final = ".tmp"


@dataclass(frozen=True)
class ServerInfo:
    """What the server says it is (its `serverInfo`)."""

    name: str
    version: str
    title: str | None = None

    def describe(self) -> str:
        return f"{self.title or self.name} {self.version}".strip()


@dataclass(frozen=True)
class Snapshot:
    """One app's server tools as the server listed them. Make one with `Snapshot.taken`."""

    app_id: str
    binding: str
    fingerprint: str
    taken_at: float
    server: ServerInfo | None
    instructions: str | None
    tools: tuple[Any, ...]
    """The wire tools (`tools/list` entries as JSON objects), at most `MAX_TOOLS`."""
    listed: int
    """How many tools the server listed (more than `tools` holds when some were left out)."""

    @classmethod
    def taken(
        cls,
        app: AppDescriptor,
        tools: list[Any],
        *,
        server: ServerInfo | None = None,
        instructions: str | None = None,
        taken_at: float | None = None,
    ) -> Snapshot:
        """A snapshot of `app`'s server: `tools` as the server listed them (every page, each a
        JSON object as on the wire: `Tool.model_dump(mode="json", by_alias=True,
        exclude_none=True)`), bounded here; server info and instructions cleaned and cut."""
        return cls(
            app_id=app.id,
            binding=str(app.binding),
            fingerprint=descriptor_fingerprint(app),
            taken_at=time.time() if taken_at is None else taken_at,
            server=_clean_info(server),
            instructions=_clean_instructions(instructions),
            tools=tuple(bounded_tools(tools)),
            listed=len(tools),
        )

    def is_stale_for(self, app: AppDescriptor) -> bool:
        """Taken for another execution section than `app`'s (or for another app)."""
        return (self.app_id, self.binding) != (app.id, str(app.binding)) or self.fingerprint != (
            descriptor_fingerprint(app)
        )


def descriptor_fingerprint(app: AppDescriptor) -> str:
    """What a snapshot is valid for: the app's MCP channel as the descriptor declares it (command,
    arguments, environment, working directory, url, headers; not its timeout), hashed."""
    channel = mcp_channel(app)
    if channel is None:
        raise ValueError(f"{app.id} is not an MCP server")
    declared = channel.model_dump(mode="json", exclude={"timeout_ms"})
    text = json.dumps(declared, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def snapshot_file_name(app_id: str, binding: str) -> str:
    digest = hashlib.sha256(f"{binding}\n{app_id}".encode()).hexdigest()
    return digest[:32] + _SUFFIX


class SnapshotStore:
    """The snapshots under `root` (`<cache dir>/mcp-snapshots`: `SnapshotStore.in_cache`)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    @classmethod
    def in_cache(cls, cache_root: Path) -> SnapshotStore:
        return cls(Path(cache_root) / SNAPSHOT_DIR)

    def path_for(self, app: AppDescriptor | Snapshot) -> Path:
        return self.root / snapshot_file_name(
            app.app_id if isinstance(app, Snapshot) else app.id, str(app.binding)
        )

    # ----------------------------------------------------------------- writing

    def save(self, app: AppDescriptor, snapshot: Snapshot) -> Path:
        """Keep `snapshot` as `app`'s (OSError when it cannot be written)."""
        if (snapshot.app_id, snapshot.binding) != (app.id, str(app.binding)):
            raise ValueError(f"a snapshot of {snapshot.app_id} ({snapshot.binding}) saved for {app.id}")
        private_directory(self.root)
        path = self.path_for(app)
        write_atomic(path, _encode(snapshot))
        return path

    def forget(self, app: AppDescriptor | Snapshot) -> bool:
        """Remove the snapshot of `app`; whether there was one."""
        path = self.path_for(app)
        existed = path.exists()
        path.unlink(missing_ok=True)
        return existed

    def clear(self) -> int:
        """Remove every snapshot (and temporary files left by an interrupted save); how many."""
        removed = 0
        for path in self._files(include_temporary=True):
            path.unlink(missing_ok=True)
            removed += path.name.endswith(_SUFFIX)
        return removed

    # ----------------------------------------------------------------- reading

    def load(self, app: AppDescriptor) -> Snapshot | None:
        """The snapshot of `app`, stale or not (`Snapshot.is_stale_for`); None when there is none
        or it cannot be used (logged)."""
        path = self.path_for(app)
        snapshot = self._read(path)
        if snapshot is not None and (snapshot.app_id, snapshot.binding) != (app.id, str(app.binding)):
            self._ignore(path, "it was written for another app")
            return None
        return snapshot

    def list(self) -> list[Snapshot]:
        """Every usable snapshot, sorted by app id and binding; unusable files are logged."""
        found = []
        for path in self._files():
            snapshot = self._read(path)
            if snapshot is not None and path.name != snapshot_file_name(snapshot.app_id, snapshot.binding):
                self._ignore(path, "its name does not match the app it holds")
            elif snapshot is not None:
                found.append(snapshot)
        return sorted(found, key=lambda s: (s.app_id, s.binding))

    def file_keys(self) -> frozenset[tuple[str, int, int, int]]:
        """(path, inode, size, mtime) of every snapshot file: a cheap mark of what changed."""
        keys = set()
        for path in self._files():
            with contextlib.suppress(OSError):
                info = os.stat(path)
                keys.add((str(path), info.st_ino, info.st_size, info.st_mtime_ns))
        return frozenset(keys)

    def _files(self, *, include_temporary: bool = False) -> _Paths:
        try:
            names = sorted(os.listdir(self.root))
        except FileNotFoundError:
            return []
        except OSError as exc:
            logger.warning("cannot list the MCP tool snapshots in %s: %s", self.root, exc.strerror or exc)
            return []
        ours = [n for n in names if n.endswith(_SUFFIX) and not n.startswith(".")]
        if include_temporary:
            ours += [n for n in names if n.startswith(".") and n.endswith(_TMP_SUFFIX)]
        return [self.root / name for name in ours]

    def _read(self, path: Path) -> Snapshot | None:
        try:
            data = read_regular_file(path, MAX_SNAPSHOT_BYTES)
        except FileNotFoundError:
            return None
        except OSError as exc:
            self._ignore(path, f"cannot read it ({exc.strerror or exc})")
            return None
        if data is None:
            self._ignore(path, f"it is not a regular file of at most {MAX_SNAPSHOT_BYTES} bytes")
            return None
        try:
            return _decode(data)
        except Exception as exc:  # whatever one file holds, it costs only itself
            self._ignore(path, f"it is not a snapshot the gateway wrote ({_reason(exc)})")
            return None

    def _ignore(self, path: Path, reason: str) -> None:
        logger.warning("ignoring the MCP tool snapshot %s: %s", path, reason)


# --------------------------------------------------------------------------- the file


class _InfoFile(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore", frozen=True)
    name: str = Field(max_length=MAX_INFO_CHARS)
    version: str = Field(max_length=MAX_INFO_CHARS)
    title: str | None = Field(default=None, max_length=MAX_INFO_CHARS)


class _SnapshotFile(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore", frozen=True)
    format: Literal[1]
    app_id: str = Field(min_length=1, max_length=128)
    binding: str = Field(min_length=1, max_length=8192)
    fingerprint: str = Field(pattern=r"^[0-9a-f]{64}$")
    taken_at: float = Field(ge=0, allow_inf_nan=False)
    server: _InfoFile | None = None
    instructions: str | None = Field(default=None, max_length=MAX_INSTRUCTIONS_CHARS)
    listed: int = Field(ge=0, le=2**31)
    tools: list[Any] = Field(max_length=MAX_TOOLS)


def _encode(snapshot: Snapshot) -> bytes:
    document = {
        "format": FORMAT,
        "app_id": snapshot.app_id,
        "binding": snapshot.binding,
        "fingerprint": snapshot.fingerprint,
        "taken_at": snapshot.taken_at,
        "server": None if snapshot.server is None else vars(snapshot.server),
        "instructions": snapshot.instructions,
        "listed": snapshot.listed,
        "tools": list(snapshot.tools),
    }
    return json.dumps(document, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode("utf-8")


def _decode(data: bytes) -> Snapshot:
    document = json.loads(data.decode("utf-8"), parse_constant=_refuse_constant)
    file = _SnapshotFile.model_validate(document)
    server = (
        None if file.server is None else ServerInfo(file.server.name, file.server.version, file.server.title)
    )
    return Snapshot(
        app_id=file.app_id,
        binding=file.binding,
        fingerprint=file.fingerprint,
        taken_at=file.taken_at,
        server=_clean_info(server),
        instructions=_clean_instructions(file.instructions),
        tools=tuple(file.tools),
        listed=max(file.listed, len(file.tools)),
    )


def read_regular_file(path: Path, max_bytes: int) -> bytes | None:
    """The file's bytes; None when it is not a regular file or larger than `max_bytes`. Opened
    without following a symlink and without blocking (a FIFO would otherwise hang the reader)."""
    fd = os.open(path, os.O_RDONLY | _NO_FOLLOW_NO_WAIT)
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_size > max_bytes:
            return None
        data = handle.read(max_bytes + 1)
    return None if len(data) > max_bytes else data


def private_directory(root: Path) -> None:
    """Make `root` (and its parents) if needed; one of ours others could enter is closed to them.
    A folder shared with others (sticky, such as /tmp, or another user's that others may write
    in) is left as it is and refused (PermissionError): closing /tmp would break every other
    user's programs, and what is kept there, others could plant or replace."""
    root.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = os.stat(root)
    if os.name != "posix" or not info.st_mode & 0o077:
        return
    if info.st_mode & stat.S_ISVTX or (info.st_uid != os.getuid() and info.st_mode & 0o022):
        raise PermissionError(
            errno.EACCES, "a folder shared with other users (such as /tmp): choose one of your own", str(root)
        )
    if info.st_uid == os.getuid():
        os.chmod(root, 0o700)


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _reason(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        where = "/".join(str(part) for part in first["loc"]) or "the top level"
        return f"{where}: {first['msg']}"
    if isinstance(exc, RecursionError):
        return "nested too deep"
    return type(exc).__name__


def _clean_info(info: ServerInfo | None) -> ServerInfo | None:
    if info is None:
        return None

    def clean(text: str) -> str:
        return visible_text(text, max_chars=MAX_INFO_CHARS, one_line=True)[0]

    return ServerInfo(clean(info.name), clean(info.version), clean(info.title) if info.title else None)


def _clean_instructions(text: str | None) -> str | None:
    return visible_text(text, max_chars=MAX_INSTRUCTIONS_CHARS)[0] if text else None
