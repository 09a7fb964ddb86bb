"""Notice descriptors added, changed or removed while the gateway runs, by polling cheaply.

A fingerprint is the set of (path, inode, size, mtime) of every descriptor file the sources
hold: computing it lists directories and stats files but parses nothing. Only when it changes
is the catalog rebuilt, and then only changed files are parsed again (`LoadCache`). The MCP tool
snapshots (`mcp_snapshots`) are part of the fingerprint: a snapshot taken by another process
(`aai-gateway cache refresh`) reaches a running gateway like an edited descriptor.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..descriptor import Platform
from .catalog import Catalog, FileKey, LoadCache, build_catalog, file_key
from .mcp_snapshots import SnapshotStore
from .scanner import Found, root_status, walk_source
from .sources import SourceSpec


@dataclass(frozen=True)
class Fingerprint:
    files: frozenset[FileKey]
    unreadable: frozenset[tuple[str, str]]  # (path, reason): a fixed permission is a change too
    snapshots: frozenset[FileKey] = frozenset()


def fingerprint(sources: Sequence[SourceSpec], snapshots: SnapshotStore | None = None) -> Fingerprint:
    files: set[FileKey] = set()
    unreadable: set[tuple[str, str]] = set()
    for spec in sources:
        status = root_status(spec)
        if not status.exists:
            unreadable.add((str(spec.root), status.reason))
            continue
        for item in walk_source(spec):
            key = file_key(item.path) if isinstance(item, Found) else None
            if key is not None:
                files.add(key)
            else:
                unreadable.add((str(item.path), getattr(item, "reason", "vanished")))
    taken = snapshots.file_keys() if snapshots is not None else frozenset()
    return Fingerprint(frozenset(files), frozenset(unreadable), taken)


class CatalogWatcher:
    def __init__(
        self,
        sources: Sequence[SourceSpec],
        host: Platform | None = None,
        snapshots: SnapshotStore | None = None,
    ) -> None:
        self.sources = list(sources)
        self.host = host
        self.snapshots = snapshots
        self._cache = LoadCache()
        self._mark = fingerprint(self.sources, snapshots)
        self.catalog = build_catalog(self.sources, host, self._cache, snapshots)

    def poll(self) -> Catalog | None:
        """A new catalog when anything changed on disk since the last poll, else None."""
        mark = fingerprint(self.sources, self.snapshots)
        if mark == self._mark:
            return None
        self._mark = mark
        self.catalog = build_catalog(self.sources, self.host, self._cache, self.snapshots)
        self._cache.retain(set(mark.files))
        return self.catalog
