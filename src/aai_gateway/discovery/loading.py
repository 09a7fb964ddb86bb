"""Loading descriptor files for the catalog: each file's card once per change, full descriptors
when an app is used.

`FileLoads` is the one place a catalog's files are loaded. `load` gives what a file holds (an
app's card and warnings, or why it is skipped) from, in order: what this process loaded before
(the same file, unchanged), the persistent card cache (`card_cache.py`, rows of the same file,
build and host), or the file itself, parsed and checked, whose outcome then goes to the cache
(`finish`). A build with many files to read reads them first, on every core (`read_ahead`,
`load_workers.py`). `descriptor` gives an app's full `AppDescriptor` from its file, keeping the most
recently used ones (`HELD_DESCRIPTORS`); `texts` gives what search indexes of each app.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from ..descriptor import AppDescriptor, Platform, host_platform
from ..descriptor.card import AppCard, OperationText, texts_of
from ..descriptor.card_records import texts_from_record
from ..errors import AppChangedError
from .card_cache import CardCache, NewOutcome, StoredOutcome, file_stamp, is_racy
from .file_outcomes import (
    FileLoad,
    ReadAhead,
    checked_outcome,
    outcome_row_of,
    outcomes_of_snapshot,
    read_file,
    read_outcome,
    snapshot_body,
    storable,
)
from .load_workers import (
    PARALLEL_FROM,
    WorkerRow,
    end_workers,
    read_on_every_core,
    start_worker,
    worker_count,
)
from .scanner import describe_os_error

logger = logging.getLogger(__name__)

HELD_DESCRIPTORS = 256
"""Full descriptors kept in memory (the most recently used): an agent works with a few apps."""


@dataclass(frozen=True, slots=True)
class LoadCounts:
    """Where one catalog build found each file's outcome."""

    unchanged: int = 0  # loaded earlier by this process
    cached: int = 0  # from the card cache
    checked: int = 0  # read, parsed and checked
    by_workers: int = 0  # of those, by worker processes (`load_workers`)

    def describe(self) -> str:
        shared = f" ({self.by_workers} of them by worker processes)" if self.by_workers else ""
        return (
            f"{self.checked} descriptor files read and checked{shared}, {self.cached} from the "
            f"descriptor cache, {self.unchanged} unchanged"
        )


@dataclass
class LoadBuild:
    """One catalog build's share of `FileLoads`: the files it saw, what it loaded for the card
    cache, and where each outcome came from."""

    snapshot: str = ""  # the key of the sources' snapshot in the card cache ("": none)
    first: bool = False  # the first build of its `FileLoads`
    seen: set[str] = field(default_factory=set)
    new: list[NewOutcome] = field(default_factory=list)
    counts: list[int] = field(default_factory=lambda: [0, 0, 0, 0])  # as LoadCounts
    read_ahead: dict[str, ReadAhead] = field(default_factory=dict)  # by `FileLoads.read_ahead`
    read_ahead_ns: int = 0  # when reading ahead began


class FileLoads:
    """Loads for one host platform (None: this machine's), with the persistent `cache` when there
    is one. Safe to share between catalog versions and threads: the watcher rebuilds in a worker
    thread while the server loads descriptors for guides and calls and search reads texts. The
    lock is held only around this object's dictionaries, never while a file is read."""

    def __init__(
        self,
        host: Platform | None = None,
        cache: CardCache | None = None,
        *,
        parallel_from: int = PARALLEL_FROM,
        on_reading: Callable[[int], None] | None = None,
    ) -> None:
        self.host = host
        self.cache = cache
        self.parallel_from = parallel_from  # files to read from which worker processes help
        self.on_reading = on_reading
        """Told, once a build's walk is done, how many files it is about to read and check (when
        there are any): a command that may take seconds says so (`cli/common.reading_notice`)."""
        self._lock = threading.Lock()
        self._loads: dict[str, FileLoad] = {}
        self._stored: dict[str, StoredOutcome] | None = None
        self._texts: dict[str, tuple[OperationText, ...] | str] = {}  # without a cache only; str: JSON
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
        ahead = build.read_ahead.pop(path, None)
        if ahead is not None and ahead.load.stamp == stamp and ahead.load.bundled == bundled:
            # Read for this build, as it is now (nothing this process or the cache held of it was):
            # racy as of before it was read (the later the time, the fewer files are).
            return self._keep(build, ahead, racy=is_racy(info, build.read_ahead_ns))
        known = self._unchanged(path, stamp, bundled)
        if known is not None:
            build.counts[1 if path in self._restored else 0] += 1
            return known
        found = self._from_cache(build, path, stamp, bundled)
        if found is None:
            racy = is_racy(info, time.time_ns())  # as of before it is read
            return self._keep(build, read_outcome(path, stamp, bundled, self.host), racy=racy)
        build.counts[1] += 1
        with self._lock:
            self._loads[path] = found
            self._racy.discard(path)
        return found

    def _unchanged(self, path: str, stamp: str, bundled: bool) -> FileLoad | None:
        """What this process loaded of the file before, if the file is as it was then."""
        with self._lock:
            known = self._loads.get(path)
            if known is None or known.stamp != stamp or known.bundled != bundled or path in self._racy:
                return None
            return known

    def _stored_row(self, build: LoadBuild, path: str, stamp: str, bundled: bool) -> StoredOutcome | None:
        """The card cache's row of the file, if it is of the file as it is."""
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
        return None if row is None or row.stamp != stamp or row.bundled != bundled else row

    def _from_cache(self, build: LoadBuild, path: str, stamp: str, bundled: bool) -> FileLoad | None:
        row = self._stored_row(build, path, stamp, bundled)
        if row is None:
            return None
        try:
            record = None if row.card is None else json.loads(row.card)
            return checked_outcome(
                path, stamp, bundled=bundled, record=record, reason=row.reason, problems=row.problems
            )
        except (ValueError, TypeError, RecursionError):
            logger.debug("descriptor cache row of %s does not read back; loading the file", path)
            return None

    def read_ahead(self, build: LoadBuild, files: Iterable[tuple[str, str, bool]]) -> None:
        """`files` (path, stamp, bundled) that `build` is about to load, every one taken as a walk
        finds them: when many must be read, worker processes start while the walk goes on (their
        imports take ~0.45 s), and once it is done the files are read on every core
        (`load_workers`); `load` takes them in turn."""
        build.read_ahead_ns = time.time_ns()  # before any is found: their races are judged from here
        found: set[str] = set()
        wanted: list[tuple[str, bool]] = []
        stamps: dict[str, str] = {}
        workers: list[subprocess.Popen[bytes]] = []
        can_start = True
        try:
            for path, stamp, bundled in files:
                if path in found:  # a path named twice (by two sources) is read once
                    continue
                found.add(path)
                if self._must_read(build, path, stamp, bundled):
                    wanted.append((path, bundled))
                    stamps[path] = stamp
                    can_start = can_start and self._start_workers(workers, len(wanted))
            if wanted and self.on_reading is not None:
                self.on_reading(len(wanted))
            if workers:
                self._read_on_every_core(build, wanted, stamps, workers)
        except BaseException:
            end_workers(workers)
            raise

    def _start_workers(self, workers: list[subprocess.Popen[bytes]], wanted: int) -> bool:
        """As many workers as `wanted` files to read call for; False when one could not start (the
        build then starts no more). Asked at each file, it counts only where their number can
        change: `worker_count` grows by steps of half `parallel_from`."""
        step = max(self.parallel_from // 2, 1)
        if wanted < self.parallel_from or (wanted != self.parallel_from and wanted % step):
            return True
        for _ in range(worker_count(wanted, self.parallel_from) - len(workers)):
            process = start_worker(self.platform)
            if process is None:
                return False
            workers.append(process)
        return True

    def _read_on_every_core(
        self,
        build: LoadBuild,
        wanted: Sequence[tuple[str, bool]],
        stamps: dict[str, str],
        workers: Sequence[subprocess.Popen[bytes]],
    ) -> None:
        def read_here(path: str, bundled: bool) -> None:
            ahead = read_outcome(path, stamps[path], bundled, self.host)
            if ahead.app is not None and ahead.app.tools_declared:
                # Not held: thousands read at once would only pass through the few held, each
                # freed then, one after the other. Freed here, it is freed while workers read
                # too. (An app whose tools its server lists is asked for at once: kept.)
                ahead.app = None
            build.read_ahead[path] = ahead

        def take_row(answer: WorkerRow) -> None:
            path, bundled, card, record, reason, problems, texts = answer
            row = NewOutcome(path, stamps[path], bundled, card, reason, problems, texts)
            try:
                load = checked_outcome(
                    path, row.stamp, bundled=bundled, record=record, reason=reason, problems=problems
                )
            except (ValueError, TypeError, RecursionError):
                logger.debug("a worker's outcome of %s does not read back; loading the file here", path)
                return
            # Its texts stay the row's JSON, checked when search reads them (`texts`), as a cache's.
            build.read_ahead[path] = ReadAhead(load, None, None, row)

        read_on_every_core(wanted, read_here, take_row, workers)

    def _must_read(self, build: LoadBuild, path: str, stamp: str, bundled: bool) -> bool:
        return (
            self._unchanged(path, stamp, bundled) is None
            and self._stored_row(build, path, stamp, bundled) is None
        )

    def _keep(self, build: LoadBuild, ahead: ReadAhead, *, racy: bool) -> FileLoad:
        """A file's outcome read now: its app held, its texts kept, its row for the card cache."""
        outcome, path = ahead.load, ahead.load.path
        if ahead.app is not None and not racy:  # one that may change within its stamp is read again
            self._hold(path, outcome.stamp, ahead.app)
        texts = None
        if self.cache is None:
            texts = ahead.texts if ahead.row is None else ahead.row.texts
        elif not racy and outcome.stamp and storable(path):
            build.new.append(ahead.row if ahead.row is not None else outcome_row_of(outcome, ahead.texts))
        with self._lock:
            if texts is not None:
                self._texts[path] = texts
            self._loads[path] = outcome
            if racy:
                self._racy.add(path)
            else:
                self._racy.discard(path)
        build.counts[2] += 1
        build.counts[3] += ahead.row is not None
        return outcome

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
            if self.cache is None:
                return
            kept = {p: load for p, load in self._loads.items() if p not in self._racy and storable(p)}
        if forgotten:
            self.cache.forget(forgotten)
        if not build.snapshot:
            return
        marks = frozenset((path, load.stamp) for path, load in kept.items())
        if marks != self._in_snapshot:
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
            info = os.stat(path)
        except OSError as exc:
            raise AppChangedError(card.id, path, f"cannot be read ({describe_os_error(exc)})") from None
        stamp, racy = file_stamp(info), is_racy(info, time.time_ns())  # racy: as of before reading
        with self._lock:
            held = self._held.get(path)
            if held is not None and held[0] == stamp:
                self._held.move_to_end(path)
                return held[1]
        loaded = read_file(path, card.source_kind == "bundled", self.host)
        if isinstance(loaded, FileLoad):
            raise AppChangedError(card.id, path, f"cannot be read ({loaded.reason})")
        app = loaded[0]
        if app is None:
            raise AppChangedError(card.id, path, "is no longer a valid descriptor")
        if app.id != card.id:
            raise AppChangedError(card.id, path, f"now describes the app {app.id!r}")
        if not racy:  # it may still change within its stamp: read again next time
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
                held = self._texts.get(path)
            written = held if isinstance(held, str) else stored.get(path)
            kept = held if isinstance(held, tuple) else None
            if written is not None:
                try:
                    kept = texts_from_record(json.loads(written))
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
    def racy(self) -> bool:
        """Whether an outcome was read while its file may still change within the same stamp (on
        a file system keeping whole seconds, a second save within the second, at the same size,
        leaves the stamp as it was): a rescan then reads it again even if no stamp changed."""
        with self._lock:
            return bool(self._racy)

    @property
    def platform(self) -> Platform:
        return self.host or host_platform()
