"""Notice descriptors added, changed or removed while the gateway runs, by polling cheaply.

A fingerprint is the set of (path, inode, size, mtime) of every descriptor file the sources
hold: computing it lists directories and stats files but parses nothing. Only when it changes
is the catalog rebuilt, and then only changed files are parsed again (`LoadCache`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..descriptor import Platform
from .catalog import Catalog, FileKey, LoadCache, build_catalog, file_key
from .scanner import Found, root_status, walk_source
from .sources import SourceSpec


@dataclass(frozen=True)
class Fingerprint:
    files: frozenset[FileKey]
    unreadable: frozenset[tuple[str, str]]  # (path, reason): a fixed permission is a change too


def fingerprint(sources: Sequence[SourceSpec]) -> Fingerprint:
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
    return Fingerprint(frozenset(files), frozenset(unreadable))


class CatalogWatcher:
    def __init__(self, sources: Sequence[SourceSpec], host: Platform | None = None) -> None:
        self.sources = list(sources)
        self.host = host
        self._cache = LoadCache()
        self._mark = fingerprint(self.sources)
        self.catalog = build_catalog(self.sources, host, self._cache)

    def poll(self) -> Catalog | None:
        """A new catalog when anything changed on disk since the last poll, else None."""
        mark = fingerprint(self.sources)
        if mark == self._mark:
            return None
        self._mark = mark
        self.catalog = build_catalog(self.sources, self.host, self._cache)
        self._cache.retain(set(mark.files))
        return self.catalog
