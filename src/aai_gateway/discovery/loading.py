"""Loading descriptor files for the catalog: each file's card once per change, full descriptors
when an app is used.

`FileLoads` is the one place a catalog's files are loaded. `load` gives what a file holds (an
app's card and warnings, or why it is skipped) from, in order: what this process loaded before
(the same file, unchanged), the persistent card cache (`card_cache.py`, rows of the same file,
build and host), or the file itself, parsed and checked, whose outcome then goes to the cache
(`flush`). `descriptor` gives an app's full `AppDescriptor` from its file, keeping the most
recently used ones (`HELD_DESCRIPTORS`); `texts` gives what search indexes of each app.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..descriptor import AppDescriptor, Platform, Source, host_platform
from ..descriptor.card import AppCard, OperationText, card_of, texts_of
from ..descriptor.card_records import card_from_record, card_record, texts_from_record, texts_record
from ..descriptor.mcp_wire import is_unicode
from ..errors import AppChangedError, Problem
from .card_cache import (
    CardCache,
    NewOutcome,
    StoredOutcome,
    file_stamp,
    is_racy,
    problems_from_json,
    problems_json,
)
from .scanner import describe_os_error, read_descriptor_bytes

logger = logging.getLogger(__name__)

HELD_DESCRIPTORS = 256
"""Full descriptors kept in memory (the most recently used): an agent works with a few apps."""


@dataclass(frozen=True, slots=True)
class LoadCounts:
    """Where one catalog build found each file's outcome."""

    unchanged: int = 0  # loaded earlier by this process
    cached: int = 0  # from the card cache
    checked: int = 0  # read, parsed and checked

    def describe(self) -> str:
        return (
            f"{self.checked} descriptor files read and checked, {self.cached} from the descriptor cache, "
            f"{self.unchanged} unchanged"
        )


@dataclass(slots=True)  # never changed once made (not frozen: see descriptor/card.py)
class FileLoad:
    """What one descriptor file held when it had `stamp`: an app (`card`, with its warnings), or
    nothing usable (`reason`, and every problem in `problems`)."""

    path: str
    stamp: str
    bundled: bool
    card: AppCard | None
    problems: tuple[Problem, ...]
    reason: str = ""


@dataclass
class LoadBuild:
    """One catalog build's share of `FileLoads`: the files it saw, what it loaded for the card
    cache, and where each outcome came from."""

    snapshot: str = ""  # the key of the sources' snapshot in the card cache ("": none)
    first: bool = False  # the first build of its `FileLoads`
    seen: set[str] = field(default_factory=set)
    new: list[NewOutcome] = field(default_factory=list)
    counts: list[int] = field(default_factory=lambda: [0, 0, 0])  # unchanged, cached, checked


class FileLoads:
    """Loads for one host platform (None: this machine's), with the persistent `cache` when there
    is one. Safe to share between catalog versions and threads: the watcher rebuilds in a worker
    thread while the server loads descriptors for guides and calls and search reads texts. The
    lock is held only around this object's dictionaries, never while a file is read."""

    def __init__(self, host: Platform | None = None, cache: CardCache | None = None) -> None:
        self.host = host
        self.cache = cache
        self._lock = threading.Lock()
        self._loads: dict[str, FileLoad] = {}
        self._stored: dict[str, StoredOutcome] | None = None
        self._texts: dict[str, tuple[OperationText, ...]] = {}  # without a cache only
        self._held: OrderedDict[str, tuple[str, AppDescriptor]] = OrderedDict()
        self._restored: set[str] = set()  # outcomes a first build took from the snapshot
        self._racy: set[str] = set()  # outcomes read while their file may still change: read again
        self._in_snapshot: frozenset[tuple[str, str]] | None = None  # what the stored one holds
        self.last_counts = LoadCounts()

    # ----------------------------------------------------------------- cards

    def load(
        self, build: LoadBuild, path: str, info: os.stat_result, *, bundled: bool, stamp: str
    ) -> FileLoad:
        """What the file at `path` holds; `info` and `stamp` are its `stat` and `file_stamp`."""
        build.seen.add(path)
        with self._lock:
            known = self._loads.get(path)
            racy_before = path in self._racy
        if known is not None and known.stamp == stamp and known.bundled == bundled and not racy_before:
            build.counts[1 if path in self._restored else 0] += 1
            return known
        found = self._from_cache(build, path, stamp, bundled)
        racy = False
        if found is None:
            racy = is_racy(info, time.time_ns())
            found = self._from_file(build, path, stamp, bundled, racy=racy)
            build.counts[2] += 1
        else:
            build.counts[1] += 1
        with self._lock:
            self._loads[path] = found
            if racy:
                self._racy.add(path)
            else:
                self._racy.discard(path)
        return found

    def _from_cache(self, build: LoadBuild, path: str, stamp: str, bundled: bool) -> FileLoad | None:
        if self.cache is None:
            return None
        with self._lock:
            first = build.first and self._stored is None and not self._restored
        if first:  # a first build without a snapshot: every row at once
            stored = self.cache.outcomes()
            with self._lock:
                self._stored = stored
        stored_now = self._stored
        row = stored_now.get(path) if stored_now is not None else self.cache.outcome(path)
        if row is None or row.stamp != stamp or row.bundled != bundled:
            return None
        try:
            record = None if row.card is None else json.loads(row.card)
            return checked_outcome(
                path, stamp, bundled=bundled, record=record, reason=row.reason, problems=row.problems
            )
        except (ValueError, TypeError, RecursionError):
            logger.debug("descriptor cache row of %s does not read back; loading the file", path)
            return None

    def _from_file(self, build: LoadBuild, path: str, stamp: str, bundled: bool, *, racy: bool) -> FileLoad:
        loaded = self._read(path, bundled)
        if isinstance(loaded, FileLoad):
            return loaded
        app, problems = loaded
        if app is None:
            outcome = FileLoad(path, stamp, bundled, None, problems, invalid_reason(problems))
            texts = None
        else:
            outcome = FileLoad(path, stamp, bundled, card_of(app), problems)
            texts = texts_of(app)
            self._hold(path, stamp, app)
        if self.cache is None:
            if texts is not None:
                with self._lock:
                    self._texts[path] = texts
        elif not racy and storable(path):
            build.new.append(
                NewOutcome(
                    path,
                    stamp,
                    bundled,
                    None
                    if outcome.card is None
                    else json.dumps(card_record(outcome.card), ensure_ascii=False),
                    outcome.reason or None,
                    problems_json(problems),
                    None if texts is None else json.dumps(texts_record(texts), ensure_ascii=False),
                )
            )
        return outcome

    def _read(self, path: str, bundled: bool) -> FileLoad | tuple[AppDescriptor | None, tuple[Problem, ...]]:
        try:
            data = read_descriptor_bytes(Path(path))
        except OSError as exc:
            return FileLoad(path, "", bundled, None, (), describe_os_error(exc))
        from ..descriptor.loader import load_text  # noqa: PLC0415 (the loader: when a file is read)

        result = load_text(data, Source(kind="bundled" if bundled else "file", location=path), self.host)
        problems = tuple(p.located(path) for p in result.problems)
        if result.descriptor is None:
            return None, problems
        return result.descriptor, tuple(p for p in problems if p.severity == "warning")

    def begin(self, snapshot: str = "") -> LoadBuild:
        """A build over the sources whose snapshot key is `snapshot`; the first build of this
        object starts from that snapshot, when the card cache has one."""
        with self._lock:
            first = not self._loads and self._stored is None
        build = LoadBuild(snapshot=snapshot, first=first)
        if first and snapshot and self.cache is not None:
            self._restore(snapshot)
        return build

    def finish(self, build: LoadBuild) -> None:
        """The end of `build`: the outcomes of files loaded during it go to the card cache, and
        the files it did not see (gone since the last) are forgotten, here and there; the
        sources' snapshot is written again when what they hold has changed."""
        if self.cache is not None and build.new:
            self.cache.store(build.new)
        with self._lock:
            self.last_counts = LoadCounts(*build.counts)
            self._stored = None  # later builds ask for the few files that changed
            gone = [path for path in self._loads if path not in build.seen]
            for path in gone:
                del self._loads[path]
                self._texts.pop(path, None)
                self._held.pop(path, None)
                self._racy.discard(path)
            # The rows of a file restored but not seen (its folder unmounted for now) are kept.
            forgotten = [path for path in gone if path not in self._restored and storable(path)]
            self._restored.clear()
            kept = {p: load for p, load in self._loads.items() if p not in self._racy and storable(p)}
        if self.cache is not None and forgotten:
            self.cache.forget(forgotten)
        marks = frozenset((path, load.stamp) for path, load in kept.items())
        if self.cache is not None and build.snapshot and marks != self._in_snapshot:
            self.cache.store_snapshot(build.snapshot, snapshot_body(kept.values()))
            self._in_snapshot = marks

    def _restore(self, key: str) -> None:
        """Every outcome of the snapshot `key`, as if loaded earlier by this process (`load`
        still compares each file's stamp)."""
        assert self.cache is not None
        body = self.cache.snapshot(key)
        if body is None:
            return
        try:
            restored = outcomes_of_snapshot(body)
        except (ValueError, TypeError, RecursionError):
            logger.info("descriptor cache snapshot does not read back; loading file by file")
            return
        with self._lock:
            self._loads.update(restored)
            self._restored = set(restored)
            self._in_snapshot = frozenset((path, load.stamp) for path, load in restored.items())

    # ----------------------------------------------------------------- full descriptors and texts

    def descriptor(self, card: AppCard) -> AppDescriptor:
        """The full descriptor of `card`'s app, as its file holds it now. AppChangedError when
        the file no longer holds that app (the catalog catches up at its next rescan)."""
        path = card.location
        try:
            stamp = file_stamp(os.stat(path))
        except OSError as exc:
            raise AppChangedError(card.id, path, f"cannot be read ({describe_os_error(exc)})") from None
        with self._lock:
            held = self._held.get(path)
            if held is not None and held[0] == stamp:
                self._held.move_to_end(path)
                return held[1]
        loaded = self._read(path, card.source_kind == "bundled")
        if isinstance(loaded, FileLoad):
            raise AppChangedError(card.id, path, f"cannot be read ({loaded.reason})")
        app = loaded[0]
        if app is None:
            raise AppChangedError(card.id, path, "is no longer a valid descriptor")
        if app.id != card.id:
            raise AppChangedError(card.id, path, f"now describes the app {app.id!r}")
        self._hold(path, stamp, app)
        return app

    def _hold(self, path: str, stamp: str, app: AppDescriptor) -> None:
        with self._lock:
            self._held[path] = (stamp, app)
            self._held.move_to_end(path)
            while len(self._held) > HELD_DESCRIPTORS:
                self._held.popitem(last=False)

    def texts(self, cards: Sequence[tuple[AppCard, str]]) -> dict[str, tuple[OperationText, ...]]:
        """What search indexes of each app of `cards` (with the stamp of its file), by path:
        from memory or the card cache, else from the descriptor loaded again."""
        found: dict[str, tuple[OperationText, ...]] = {}
        wanted = [(card.location, stamp) for card, stamp in cards]
        stored = self.cache.texts(wanted) if self.cache is not None else {}
        for card, _stamp in cards:
            path = card.location
            with self._lock:
                kept = self._texts.get(path)
            if kept is None and path in stored:
                try:
                    kept = texts_from_record(json.loads(stored[path]))
                except (ValueError, TypeError, RecursionError):
                    kept = None
            if kept is None:
                try:
                    kept = texts_of(self.descriptor(card))
                except AppChangedError:
                    continue
            found[path] = kept
        return found

    @property
    def platform(self) -> Platform:
        return self.host or host_platform()


def snapshot_body(loads: Iterable[FileLoad]) -> str:
    return json.dumps(
        [
            [
                load.path,
                load.stamp,
                load.bundled,
                None if load.card is None else card_record(load.card),
                load.reason,
                problems_json(load.problems),
            ]
            for load in loads
        ],
        ensure_ascii=False,
    )


def outcomes_of_snapshot(body: str) -> dict[str, FileLoad]:
    """What `snapshot_body` wrote, by path; ValueError or TypeError for anything else."""
    outcomes: dict[str, FileLoad] = {}
    entries = json.loads(body)
    if type(entries) is not list:
        raise ValueError("not a snapshot")
    for entry in entries:
        if type(entry) is not list or len(entry) != 6:
            raise ValueError("not a snapshot entry")
        path, stamp, bundled, record, reason, problems = entry
        if not (type(path) is str and type(stamp) is str and type(bundled) is bool):
            raise ValueError("not a snapshot entry")
        outcomes[path] = checked_outcome(
            path, stamp, bundled=bundled, record=record, reason=reason, problems=problems
        )
    return outcomes


def checked_outcome(
    path: str, stamp: str, *, bundled: bool, record: Any, reason: Any, problems: Any
) -> FileLoad:
    """A stored outcome of the file at `path`, checked as a row or a snapshot entry holds it:
    ValueError or TypeError when any part is not what this module writes (or names another
    file, or another kind of source)."""
    if type(problems) is not str or not (reason is None or type(reason) is str):
        raise ValueError("not an outcome")
    card = None if record is None else card_from_record(record)
    if card is None and not reason:
        raise ValueError("an outcome with neither an app nor a reason")
    if card is not None and (card.location != path or (card.source_kind == "bundled") != bundled):
        raise ValueError("an outcome of another file")
    return FileLoad(path, stamp, bundled, card, problems_from_json(problems, path), reason or "")


def storable(path: str) -> bool:
    """Whether the card cache can keep `path` (a name that is not UTF-8 cannot be stored)."""
    return is_unicode(path)


def invalid_reason(problems: Sequence[Problem]) -> str:
    """Why a file with these problems is skipped, in one line: the first error and how many."""
    errors = [p for p in problems if p.severity == "error"]
    first = f"{errors[0].pointer or '/'}: {errors[0].message}" if errors else "no app in it"
    summary = first if len(errors) <= 1 else f"{len(errors)} problems, first {first}"
    return f"invalid descriptor: {summary}"
