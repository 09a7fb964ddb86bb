"""The catalog: every usable app from every source, first source winning, with a report of the rest."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ..descriptor import AppDescriptor, Platform, Source, load_text
from ..errors import Problem
from .scanner import Unreadable, describe_os_error, read_descriptor_bytes, root_status, walk_source
from .sources import SourceSpec

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class CatalogEntry:
    descriptor: AppDescriptor
    source_label: str
    warnings: tuple[Problem, ...] = ()

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
    sources: Iterable[SourceSpec], host: Platform | None = None, cache: LoadCache | None = None
) -> Catalog:
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
