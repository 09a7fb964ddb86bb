"""Notice descriptors added, changed or removed while the gateway runs, cheaply.

A fingerprint is what the sources hold, file by file: each descriptor file's path and identity
(`card_cache.file_stamp`: inode, size, times), each place that cannot be read and why, and the
MCP tool snapshots (`mcp_snapshots`): computing it lists directories and stats files but parses
nothing. Only when it changes is the catalog rebuilt, and then only changed files are loaded
again (`FileLoads`). A snapshot taken by another process (`aai-gateway cache refresh`) reaches a
running gateway like an edited descriptor.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..descriptor import Platform
from .card_cache import CardCache, file_stamp
from .catalog import Catalog, SourceMarks, build_catalog
from .loading import FileLoads
from .mcp_snapshots import SnapshotStore
from .scanner import Found, root_status, walk_source
from .sources import SourceSpec


@dataclass(frozen=True)
class Fingerprint:
    sources: SourceMarks
    snapshots: frozenset[tuple[str, int, int, int]] = frozenset()


def fingerprint(sources: Sequence[SourceSpec], snapshots: SnapshotStore | None = None) -> Fingerprint:
    files: set[tuple[str, str]] = set()
    unreadable: set[tuple[str, str]] = set()
    for spec in sources:
        status = root_status(spec)
        if not status.exists:
            unreadable.add((str(spec.root), status.reason))
            continue
        for item in walk_source(spec):
            if isinstance(item, Found):
                files.add((str(item.path), file_stamp(item.info)))
            else:
                unreadable.add((str(item.path), item.reason))
    taken = snapshots.file_keys() if snapshots is not None else frozenset()
    return Fingerprint(SourceMarks(frozenset(files), frozenset(unreadable)), taken)


class CatalogWatcher:
    """The catalog of `sources`, rebuilt by `poll` when they changed. `cache`: the persistent
    card cache (`card_cache.py`), so a start loads only the files that changed since the last."""

    def __init__(
        self,
        sources: Sequence[SourceSpec],
        host: Platform | None = None,
        snapshots: SnapshotStore | None = None,
        cache: CardCache | None = None,
        on_reading: Callable[[int], None] | None = None,
    ) -> None:
        """`on_reading`: told how many files a build is about to read (`FileLoads.on_reading`)."""
        self.sources = list(sources)
        self.host = host
        self.snapshots = snapshots
        self.loads = FileLoads(host, cache, on_reading=on_reading)
        taken = snapshots.file_keys() if snapshots is not None else frozenset()
        self.catalog = build_catalog(self.sources, host, self.loads, snapshots)
        self._mark = Fingerprint(self.catalog.marks, taken)  # the build walked the sources already

    def poll(self) -> Catalog | None:
        """A new catalog when anything changed on disk since the last poll, else None. Files read
        while they could still change without their stamp changing (`FileLoads.racy`) are read
        again even when no stamp changed."""
        mark = fingerprint(self.sources, self.snapshots)
        same_files = mark == self._mark
        if same_files and not self.loads.racy:
            return None
        catalog = build_catalog(self.sources, self.host, self.loads, self.snapshots)
        self._mark = mark  # only now: a build that raised is tried again by the next poll
        if same_files and (catalog.entries, catalog.skipped) == (self.catalog.entries, self.catalog.skipped):
            return None  # those files had not changed after all
        self.catalog = catalog
        return catalog
