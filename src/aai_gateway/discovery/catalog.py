"""The catalog: every usable app from every source, first source winning, with a report of the rest."""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path

from ..bulk import without_cyclic_gc
from ..descriptor import AppDescriptor, Platform
from ..descriptor.card import AppCard, card_of
from ..descriptor.mcp_tools import with_server_tools, without_server_tools
from ..errors import AppChangedError, Problem
from .card_cache import file_stamp
from .file_outcomes import FileLoad, invalid_reason, read_file
from .loading import FileLoads, LoadBuild
from .mcp_snapshots import ServerInfo, Snapshot, SnapshotStore
from .scanner import Found, RootStatus, Unreadable, root_status, walk_source
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


@dataclass  # never changed once made (not frozen: see descriptor/card.py)
class CatalogEntry:
    """One app of the catalog: its card, always at hand, and its full descriptor, `held` in
    memory (an app with its MCP server's tools applied, or one made in memory) or loaded from
    its file when asked for (`descriptor`, through `loads`)."""

    card: AppCard
    source_label: str
    warnings: tuple[Problem, ...] = ()
    server_tools: ServerToolsState | None = None
    """None: the descriptor declares its tools."""
    server_problems: tuple[Problem, ...] = ()
    """What is wrong with the tools its server listed (those tools are left out)."""
    held: AppDescriptor | None = field(default=None, compare=False, repr=False)
    stamp: str = ""  # the file's identity when `card` was made (`card_cache.file_stamp`)
    loads: FileLoads | None = field(default=None, compare=False, repr=False)

    @classmethod
    def of(
        cls,
        descriptor: AppDescriptor,
        source_label: str,
        warnings: tuple[Problem, ...] = (),
        server_tools: ServerToolsState | None = None,
        server_problems: tuple[Problem, ...] = (),
    ) -> CatalogEntry:
        """An entry holding `descriptor`."""
        return cls(card_of(descriptor), source_label, warnings, server_tools, server_problems, descriptor)

    @property
    def descriptor(self) -> AppDescriptor:
        """The app's full descriptor: held, else loaded from its file (AppChangedError when the
        file no longer holds the app)."""
        if self.held is not None:
            return self.held
        if self.loads is None:
            raise AppChangedError(self.card.id, self.path, "was never loaded")
        return self.loads.descriptor(self.card)

    @property
    def path(self) -> str:
        return self.card.location


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


@dataclass(frozen=True)
class SourceMarks:
    """What sources hold, file by file, without reading any: each descriptor file's path and
    identity (`card_cache.file_stamp`), and each place that cannot be read with why (a fixed
    permission is a change too)."""

    files: frozenset[tuple[str, str]]
    unreadable: frozenset[tuple[str, str]]


@dataclass
class Catalog:
    entries: list[CatalogEntry] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    sources: list[SourceReport] = field(default_factory=list)
    loads: FileLoads | None = field(default=None, repr=False)
    """How its files were loaded (None for a catalog made in memory)."""
    marks: SourceMarks = field(default_factory=lambda: SourceMarks(frozenset(), frozenset()), repr=False)
    """What the sources held when it was built (`watch.fingerprint` compares them)."""

    @cached_property
    def _by_key(self) -> dict[tuple[str, str], CatalogEntry]:
        return {entry.card.key: entry for entry in self.entries}

    def entry(self, key: tuple[str, str]) -> CatalogEntry | None:
        """The entry of the app with `key` (`AppCard.key`: binding and id)."""
        return self._by_key.get(key)

    def get(self, app_id: str) -> CatalogEntry | None:
        return next((e for e in self.entries if e.card.id == app_id), None)

    @property
    def cards(self) -> list[AppCard]:
        """Every app's card, sorted by id: the deterministic order every listing uses."""
        return sorted((e.card for e in self.entries), key=lambda card: card.id)

    @property
    def unread_servers(self) -> list[CatalogEntry]:
        """The apps whose MCP server's tools were never read (no snapshot yet), sorted by id:
        search knows them by name and description only until they are."""
        unread = [e for e in self.entries if e.server_tools is not None and e.server_tools.taken_at is None]
        return sorted(unread, key=lambda entry: entry.card.id)

    @property
    def apps(self) -> list[AppDescriptor]:
        """Every app's full descriptor, sorted by id (loads every file that is not held: for
        commands that show everything, not for the server)."""
        return sorted((e.descriptor for e in self.entries), key=lambda d: d.id)


def build_catalog(
    sources: Iterable[SourceSpec],
    host: Platform | None = None,
    loads: FileLoads | None = None,
    snapshots: SnapshotStore | None = None,
) -> Catalog:
    """The catalog of `sources` for `host`. `loads`: how files are loaded, shared between the
    catalogs of one watcher so that unchanged files are not loaded again (a new one when not
    given); `snapshots`: where the tools of apps that leave them to their MCP server are kept
    (without it, such apps have no tools until their server is asked)."""
    loads = loads if loads is not None else FileLoads(host)
    catalog = Catalog(loads=loads)
    files: set[tuple[str, str]] = set()
    unreadable: set[tuple[str, str]] = set()
    sources = list(sources)
    with without_cyclic_gc():
        build = loads.begin(snapshot_key(sources, loads.platform))
        _add_sources(catalog, sources, (loads, build), snapshots, (files, unreadable))
        loads.finish(build)
    catalog.marks = SourceMarks(frozenset(files), frozenset(unreadable))
    for skipped in catalog.skipped:
        logger.info("skipped %s: %s", skipped.path, skipped.reason)
    return catalog


def snapshot_key(sources: Iterable[SourceSpec], host: Platform) -> str:
    """What names a set of sources' snapshot in the card cache."""
    described = [[s.label, os.path.abspath(s.root), s.pattern.value, s.explicit, s.bundled] for s in sources]
    return json.dumps([host, described])


def _add_sources(
    catalog: Catalog,
    sources: Iterable[SourceSpec],
    loading: tuple[FileLoads, LoadBuild],
    snapshots: SnapshotStore | None,
    marks: tuple[set[tuple[str, str]], set[tuple[str, str]]],
) -> None:
    loads, build = loading
    by_id: dict[str, CatalogEntry] = {}
    seen_files: set[tuple[int, int]] = set()
    files, unreadable = marks
    walked: list[tuple[SourceSpec, RootStatus, list[tuple[Found | Unreadable, str]]]] = []

    def walk() -> Iterator[tuple[str, str, bool]]:
        """Every source walked into `walked`, each readable file given to `read_ahead` as found."""
        for spec in sources:
            status = root_status(spec)
            items: list[tuple[Found | Unreadable, str]] = []
            walked.append((spec, status, items))
            for item in walk_source(spec) if status.exists else ():
                stamped = _stamped(item)
                items.append(stamped)
                if not isinstance(item, Unreadable):
                    yield item.path, stamped[1], spec.bundled

    loads.read_ahead(build, walk())
    for spec, status, items in walked:
        if not status.exists:
            unreadable.add((str(spec.root), status.reason))
            catalog.sources.append(
                SourceReport(spec.label, str(spec.root), spec.pattern.value, status.reason)
            )
            if spec.explicit:
                catalog.skipped.append(Skipped(str(spec.root), spec.label, f"path {status.reason}"))
            continue
        found = 0
        for item, stamp in items:
            if isinstance(item, Unreadable):
                unreadable.add((str(item.path), item.reason))
                catalog.skipped.append(Skipped(str(item.path), spec.label, item.reason))
                continue
            path, info = item.path, item.info  # absolute: the binding, whatever the folder
            files.add((path, stamp))
            identity = (info.st_dev, info.st_ino)
            if identity in seen_files:  # the same file by another path
                continue
            seen_files.add(identity)
            load = loads.load(build, path, info, bundled=spec.bundled, stamp=stamp)
            if load.card is None:
                catalog.skipped.append(Skipped(path, spec.label, load.reason, load.problems))
                continue
            found += 1
            winner = by_id.get(load.card.id)
            if winner is not None:
                catalog.skipped.append(
                    Skipped(
                        path,
                        spec.label,
                        f"duplicate app id {load.card.id!r}: already provided by {winner.path} "
                        f"({winner.source_label}), which takes precedence",
                    )
                )
                continue
            entry = CatalogEntry(load.card, spec.label, load.problems, stamp=load.stamp, loads=loads)
            by_id[load.card.id] = entry
            if snapshots is not None and not load.card.tools_declared:
                entry = _with_snapshot_or_none(entry, snapshots)
            catalog.entries.append(entry)
        catalog.sources.append(SourceReport(spec.label, str(spec.root), spec.pattern.value, "ok", found))


def _stamped(item: Found | Unreadable) -> tuple[Found | Unreadable, str]:
    return item, "" if isinstance(item, Unreadable) else file_stamp(item.info)


def _with_snapshot_or_none(entry: CatalogEntry, snapshots: SnapshotStore) -> CatalogEntry:
    try:
        app = entry.descriptor
    except AppChangedError as exc:  # changed since its card was made: the next rescan sees it
        logger.info("%s", exc.message)
        return entry
    return with_snapshot(replace(entry, held=app), snapshots.load(app))


def load_file(
    path: Path, label: str, host: Platform | None = None, *, bundled: bool = False
) -> CatalogEntry | Skipped:
    """One descriptor file on its own (a file the user names), held in memory."""
    location = os.path.abspath(path)
    loaded = read_file(location, bundled, host)
    if isinstance(loaded, FileLoad):
        return Skipped(location, label, loaded.reason)
    app, problems = loaded
    if app is None:
        return Skipped(location, label, invalid_reason(problems), problems)
    return CatalogEntry.of(app, label, problems)


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
        return replace(entry, card=card_of(bare), held=bare, server_tools=state, server_problems=())
    updated, taken = with_server_tools(app, list(snapshot.tools), listed=snapshot.listed)
    problems = tuple(p.located(f"{entry.path} ({SERVER_LIST})") for p in taken.problems)
    left_out = sum(p.severity == "error" for p in problems)
    if left_out:
        logger.info(
            "%s: tools its MCP server listed are left out (%d problems: `aai-gateway scan` says which)",
            app.id,
            left_out,
        )
    state = ServerToolsState(snapshot.taken_at, False, snapshot.server, snapshot.listed)
    return replace(entry, card=card_of(updated), held=updated, server_tools=state, server_problems=problems)


def catalog_with_snapshot(catalog: Catalog, app: AppDescriptor, snapshot: Snapshot) -> Catalog:
    """`catalog` with `snapshot` applied to the entry of `app` (same binding and id); the same
    catalog when it holds no such entry."""
    key = (str(app.binding), app.id)
    entries = [
        with_snapshot(e, snapshot) if e.card.key == key and not e.card.tools_declared else e
        for e in catalog.entries
    ]
    return Catalog(entries, list(catalog.skipped), list(catalog.sources), catalog.loads)


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
