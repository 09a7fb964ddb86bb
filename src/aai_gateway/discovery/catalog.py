"""The catalog: every usable app from every source, first source winning, with a report of the rest."""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..descriptor import AppDescriptor, Platform, Source, load_text
from ..descriptor.mcp_tools import with_server_tools, without_server_tools
from ..errors import Problem
from .mcp_snapshots import ServerInfo, Snapshot, SnapshotStore
from .scanner import Unreadable, describe_os_error, read_descriptor_bytes, root_status, walk_source
from .sources import SourceSpec

logger = logging.getLogger(__name__)


SERVER_LIST = "tools/list of its MCP server"
"""Where problems with a server's own tools are (after the descriptor's path)."""


@dataclass(frozen=True)
class ServerToolsState:
    """Where an app that leaves its tools to its MCP server has them from: the snapshot taken
    when (`taken_at`; None: never, the tools are read from the server on first use), of which
    server, how many tools it listed, and whether it was taken for another execution section
    (`stale`: not applied)."""

    taken_at: float | None = None
    stale: bool = False
    server: ServerInfo | None = None
    listed: int = 0


@dataclass(frozen=True)
class CatalogEntry:
    descriptor: AppDescriptor
    source_label: str
    warnings: tuple[Problem, ...] = ()
    server_tools: ServerToolsState | None = None
    """None: the descriptor declares its tools."""
    server_problems: tuple[Problem, ...] = ()
    """What is wrong with the tools its server listed (those tools are left out)."""

    @property
    def path(self) -> str:
        return self.descriptor.source.location


@dataclass(frozen=True)
class Skipped:
    path: str
    source_label: str
    reason: str
    problems: tuple[Problem, ...] = ()


@dataclass(frozen=True)
class SourceReport:
    label: str
    root: str
    pattern: str
    status: str
    found: int = 0


@dataclass
class Catalog:
    entries: list[CatalogEntry] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    sources: list[SourceReport] = field(default_factory=list)

    def get(self, app_id: str) -> CatalogEntry | None:
        return next((e for e in self.entries if e.descriptor.id == app_id), None)

    @property
    def apps(self) -> list[AppDescriptor]:
        """Apps sorted by id: the deterministic order every listing uses."""
        return sorted((e.descriptor for e in self.entries), key=lambda d: d.id)


FileKey = tuple[str, int, int, int]  # path, inode, size, mtime_ns


class LoadCache:
    """Loaded descriptors by file identity, so a rescan only re-reads files that changed."""

    def __init__(self) -> None:
        self._entries: dict[FileKey, CatalogEntry | Skipped] = {}

    def load(
        self, path: Path, label: str, host: Platform | None, bundled: bool = False
    ) -> CatalogEntry | Skipped:
        key = file_key(path)
        if key is None:
            return load_file(path, label, host, bundled=bundled)
        cached = self._entries.get(key)
        if cached is not None and cached.source_label == label:
            return cached
        outcome = load_file(path, label, host, bundled=bundled)
        self._entries[key] = outcome
        return outcome

    def retain(self, keys: set[FileKey]) -> None:
        self._entries = {k: v for k, v in self._entries.items() if k in keys}


def file_key(path: Path) -> FileKey | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return (str(path), info.st_ino, info.st_size, info.st_mtime_ns)


def build_catalog(
    sources: Iterable[SourceSpec],
    host: Platform | None = None,
    cache: LoadCache | None = None,
    snapshots: SnapshotStore | None = None,
) -> Catalog:
    """`snapshots`: where the tools of apps that leave them to their MCP server are kept (without
    it, such apps have no tools until their server is asked)."""
    catalog = Catalog()
    by_id: dict[str, CatalogEntry] = {}
    seen_files: set[str] = set()
    for spec in sources:
        status = root_status(spec)
        if not status.exists:
            catalog.sources.append(
                SourceReport(spec.label, str(spec.root), spec.pattern.value, status.reason)
            )
            if spec.explicit:
                catalog.skipped.append(Skipped(str(spec.root), spec.label, f"path {status.reason}"))
            continue
        found = 0
        for item in walk_source(spec):
            if isinstance(item, Unreadable):
                catalog.skipped.append(Skipped(str(item.path), spec.label, item.reason))
                continue
            real = os.path.realpath(item.path)
            if real in seen_files:
                continue
            seen_files.add(real)
            outcome = (
                cache.load(item.path, spec.label, host, spec.bundled)
                if cache
                else load_file(item.path, spec.label, host, bundled=spec.bundled)
            )
            if isinstance(outcome, Skipped):
                catalog.skipped.append(outcome)
                continue
            found += 1
            winner = by_id.get(outcome.descriptor.id)
            if winner is not None:
                catalog.skipped.append(
                    Skipped(
                        outcome.path,
                        spec.label,
                        f"duplicate app id {outcome.descriptor.id!r}: already provided by {winner.path} "
                        f"({winner.source_label}), which takes precedence",
                    )
                )
                continue
            by_id[outcome.descriptor.id] = outcome
            if snapshots is not None and not outcome.descriptor.tools_declared:
                outcome = with_snapshot(outcome, snapshots.load(outcome.descriptor))
            catalog.entries.append(outcome)
        catalog.sources.append(SourceReport(spec.label, str(spec.root), spec.pattern.value, "ok", found))
    for skipped in catalog.skipped:
        logger.info("skipped %s: %s", skipped.path, skipped.reason)
    return catalog


def load_file(
    path: Path, label: str, host: Platform | None = None, *, bundled: bool = False
) -> CatalogEntry | Skipped:
    # Absolute: the location is the app's binding for consent and credentials, and a relative one
    # would name another file when the gateway runs from another folder.
    path = Path(os.path.abspath(path))
    try:
        data = read_descriptor_bytes(path)
    except OSError as exc:
        return Skipped(str(path), label, describe_os_error(exc))
    result = load_text(data, Source(kind="bundled" if bundled else "file", location=str(path)), host)
    problems = tuple(p.located(str(path)) for p in result.problems)
    if result.descriptor is None:
        errors = [p for p in problems if p.severity == "error"]
        first = f"{errors[0].pointer or '/'}: {errors[0].message}"
        summary = first if len(errors) == 1 else f"{len(errors)} problems, first {first}"
        return Skipped(str(path), label, f"invalid descriptor: {summary}", problems)
    return CatalogEntry(result.descriptor, label, tuple(p for p in problems if p.severity == "warning"))


# --------------------------------------------------------------------------- server tools


def with_snapshot(entry: CatalogEntry, snapshot: Snapshot | None) -> CatalogEntry:
    """`entry` (an app that leaves its tools to its MCP server) with the tools of `snapshot`,
    or with none when there is no snapshot or it was taken for another execution section."""
    app = entry.descriptor
    if snapshot is None or snapshot.is_stale_for(app):
        bare = without_server_tools(app)
        state = ServerToolsState()
        if snapshot is not None:
            state = ServerToolsState(snapshot.taken_at, True, snapshot.server, snapshot.listed)
        return replace(entry, descriptor=bare, server_tools=state, server_problems=())
    updated, taken = with_server_tools(app, list(snapshot.tools), listed=snapshot.listed)
    problems = tuple(p.located(f"{entry.path} ({SERVER_LIST})") for p in taken.problems)
    left_out = sum(p.severity == "error" for p in problems)
    if left_out:
        logger.info(
            "%s: %d tools its MCP server listed are left out (`aai-gateway scan` says why)", app.id, left_out
        )
    state = ServerToolsState(snapshot.taken_at, False, snapshot.server, snapshot.listed)
    return replace(entry, descriptor=updated, server_tools=state, server_problems=problems)


def catalog_with_snapshot(catalog: Catalog, app: AppDescriptor, snapshot: Snapshot) -> Catalog:
    """`catalog` with `snapshot` applied to the entry of `app` (same binding and id); the same
    catalog when it holds no such entry."""
    entries = [
        with_snapshot(e, snapshot)
        if (e.descriptor.id, e.descriptor.binding) == (app.id, app.binding)
        and not e.descriptor.tools_declared
        else e
        for e in catalog.entries
    ]
    return Catalog(entries, list(catalog.skipped), list(catalog.sources))


def snapshot_age(state: ServerToolsState, now: float | None = None) -> str:
    """`3 min`, `2.5 h`, `4 days`: how long ago the snapshot was taken (`-` when never)."""
    return "-" if state.taken_at is None else time_since(state.taken_at, now)


def time_since(at: float, now: float | None = None) -> str:
    """`3 min`, `2.5 h`, `4 days`: how long ago `at` (seconds since the epoch) was."""
    seconds = max(0.0, (time.time() if now is None else now) - at)
    if seconds < 3600:
        return f"{int(seconds // 60)} min"
    if seconds < 48 * 3600:
        return f"{seconds / 3600:.1f} h"
    return f"{int(seconds // 86400)} days"
