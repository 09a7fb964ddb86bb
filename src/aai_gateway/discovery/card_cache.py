"""What loading each descriptor file gave, kept between runs, so a start parses and checks only
the files that changed (docs/architecture.md, "The descriptor cache").

One SQLite database per format of its tables, `<cache dir>/descriptor-cards-<FORMAT>.sqlite3`,
one row per file, gateway build (`build_stamp`) and host platform: the file's identity when it
was loaded (`stamp`: inode, size, and modification and change times in nanoseconds), whether it
is bundled, and the outcome: the app's card and warnings, or why the file was skipped. The
texts search indexes are a column of their own, read only when an index is built.

Beside the rows, one *snapshot* per set of sources (`snapshot`, `store_snapshot`): every
outcome of the last catalog build over them, in one document a start reads at once instead of
ten thousand rows. It is checked by its digest as a whole (a snapshot that does not match it
is ignored), and each file's stamp is still compared with the file's before its outcome is used.

A row is used only when every part of its key equals the file's now; anything else (an edited,
replaced or touched file) is loaded again and the row replaced. Two builds or hosts sharing the
cache (two installs of the gateway, `--platform`) keep rows and snapshots of their own; those of
a build that has written nothing for `UNUSED_BUILD_DAYS`, or beyond the `BUILDS_KEPT` most
recent, are dropped by the next that writes.
A row whose record does not read back as what this module writes counts as absent. A database
that SQLite cannot read is deleted and made anew, and a cache that cannot be used at all (a
folder that is not ours, a read-only disk, a lock held too long) costs speed, never an app:
every failure is logged and loading goes on without it.

What a row can change is bounded: a card decides only what tools/list and search show; a guide
and every execution use the descriptor loaded from the file itself at that moment.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import sqlite3
import stat
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from .. import __version__
from .mcp_snapshots import private_directory

logger = logging.getLogger(__name__)

FORMAT: Final = 6  # of the tables: a gateway of another format uses a database of its own
DATABASE: Final = f"descriptor-cards-{FORMAT}.sqlite3"
DATABASE_NAMES: Final = ("descriptor-cards.sqlite3", "descriptor-cards-*.sqlite3")
"""What the databases of every format are called (before format 6: no number), for `clear`."""
UNUSED_BUILD_DAYS: Final = 30
_DAY: Final = 86_400
BUILDS_KEPT: Final = 4  # builds and hosts whose rows are kept (each may be a full copy of them)
RACY_NANOSECONDS: Final = 2_000_000_000
"""A file changed this recently may change again within the same time stamp; its row is not
written until it is older (the file is then checked at each start)."""
_SECOND: Final = 1_000_000_000
_LOCK_WAIT_SECONDS: Final = 2.0
SNAPSHOTS_KEPT: Final = 8  # the most recently stored; a start over other sources makes its own
_CHUNK: Final = 500  # paths per query (SQLite's limit on parameters is 999 on old builds)
_PACKAGE = Path(__file__).resolve().parent.parent


@dataclass(frozen=True, slots=True)
class StoredOutcome:
    """One file's row: `card` (JSON) when it held an app, else `reason`; `problems` (JSON): its
    warnings, or every problem of a skipped file."""

    stamp: str
    bundled: bool
    card: str | None
    reason: str | None
    problems: str


@dataclass(frozen=True, slots=True)
class NewOutcome:
    path: str
    stamp: str
    bundled: bool
    card: str | None
    reason: str | None
    problems: str
    texts: str | None


def file_stamp(info: os.stat_result) -> str:
    return f"{info.st_ino}:{info.st_size}:{info.st_mtime_ns}:{info.st_ctime_ns}"


def is_racy(info: os.stat_result, now_ns: int) -> bool:
    """Whether the file may still change without its stamp changing: it was modified less than
    `RACY_NANOSECONDS` ago, or, on a file system keeping whole seconds (its change time is one:
    HFS+, FAT, ext4 with small inodes, some network file systems), its times were set back that
    recently (`cp -p`, `rsync -t`, `tar x`, `touch -r`): a second such copy within the second, at
    the same size, would leave inode, size and both times as they were.

    A time further ahead than that (an archive made by a clock ahead, FAT's local times seen from
    another time zone) is no sign: a save sets it to now, and a copy keeping it changes the change
    time. Taken as racy, such a file would be read again at every rescan, forever."""
    if abs(now_ns - info.st_mtime_ns) < RACY_NANOSECONDS:
        return True
    return info.st_ctime_ns % _SECOND == 0 and abs(now_ns - info.st_ctime_ns) < RACY_NANOSECONDS


def build_stamp() -> str:
    """The gateway's build: its version, the row format, and the size and time of every module
    of the package, so an upgrade, or an edited checkout, never reads rows of another build."""
    digest = hashlib.sha256(f"{FORMAT}\n{__version__}\n".encode())
    for module in sorted(_PACKAGE.rglob("*.py")):
        with contextlib.suppress(OSError):
            info = module.stat()
            digest.update(f"{module.relative_to(_PACKAGE)}:{info.st_size}:{info.st_mtime_ns}\n".encode())
    return digest.hexdigest()[:32]


class CardCache:
    """The database of one cache folder, for one build and host. Never raises: a failure is
    logged once and the cache goes quiet (`usable` False). Thread-safe: the catalog is rebuilt in
    a worker thread and search reads texts in another; one connection serves them in turn."""

    def __init__(self, folder: Path, host: str, build: str | None = None) -> None:
        self.path = Path(folder) / DATABASE
        self.host = host
        self.build = build or build_stamp()
        self._connection: sqlite3.Connection | None = None
        self._lock = threading.Lock()
        self.usable = True
        self._busy = False  # another process kept its lock past our wait: until it is free, no waiting
        self._noted_at: float | None = None  # when this process last noted its build's use

    # ----------------------------------------------------------------- reading

    def outcomes(self) -> dict[str, StoredOutcome]:
        """Every row of this build and host, by path."""
        rows = self._query(
            "SELECT path, stamp, bundled, card, reason, problems FROM outcomes WHERE build = ? AND host = ?",
            (self.build, self.host),
        )
        found: dict[str, StoredOutcome] = {}
        for path, *row in rows:
            outcome = _outcome(*row)
            if isinstance(path, str) and outcome is not None:
                found[path] = outcome
        return found

    def outcome(self, path: str) -> StoredOutcome | None:
        """The row of one file, of this build and host."""
        rows = self._query(
            "SELECT stamp, bundled, card, reason, problems FROM outcomes "
            "WHERE path = ? AND build = ? AND host = ?",
            (path, self.build, self.host),
        )
        return _outcome(*rows[0]) if rows else None

    def texts(self, wanted: Iterable[tuple[str, str]]) -> dict[str, str]:
        """The texts (JSON) of the files `wanted` as (path, stamp), for those whose row is of
        that stamp."""
        stamps = dict(wanted)
        found: dict[str, str] = {}
        paths = list(stamps)
        for start in range(0, len(paths), _CHUNK):
            chunk = paths[start : start + _CHUNK]
            marks = ",".join("?" * len(chunk))
            rows = self._query(
                f"SELECT path, stamp, texts FROM outcomes WHERE build = ? AND host = ? AND path IN ({marks})",  # noqa: S608 (placeholders only)
                (self.build, self.host, *chunk),
            )
            for path, stamp, texts in rows:
                if stamps.get(path) == stamp and isinstance(texts, str):
                    found[path] = texts
        return found

    def snapshot(self, key: str) -> bytes | None:
        """The snapshot stored for `key` by this build and host, when its digest matches: its UTF-8
        text as SQLite holds it, hashed and parsed (`file_outcomes.outcomes_of_snapshot`) without
        being decoded. 10,000 apps' are 8.3 MB, which a first answer waits for; read as text and
        encoded again for the digest, the warm catalog build took 0.49-0.57 s against 0.41-0.42 s
        (docs/performance.md, "The snapshot read as bytes")."""
        rows = self._query(
            "SELECT digest, CAST(body AS BLOB) FROM snapshots WHERE key = ? AND build = ? AND host = ?",
            (key, self.build, self.host),
        )
        if not rows:
            return None
        digest, body = rows[0]
        if not isinstance(body, bytes) or digest != _digest(body):
            logger.info("descriptor cache snapshot does not match its digest; not used")
            return None
        return body

    def store_snapshot(self, key: str, body: str) -> None:
        """Store the snapshot of `key`, and drop all but the `SNAPSHOTS_KEPT` most recent."""
        self._note_use()
        self._change(
            "INSERT OR REPLACE INTO snapshots (key, host, build, digest, body, stored_at) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            [(key, self.host, self.build, _digest(body), body, time.time())],
        )
        self._change(
            "DELETE FROM snapshots WHERE rowid NOT IN "
            "(SELECT rowid FROM snapshots ORDER BY stored_at DESC, rowid DESC LIMIT ?)",
            [(SNAPSHOTS_KEPT,)],
        )

    def size(self) -> tuple[int, int]:
        """(rows of every build and host, bytes on disk); (0, 0) when there is no database."""
        if not self.path.exists():
            return 0, 0
        rows = self._query("SELECT COUNT(*) FROM outcomes", ())
        count = rows[0][0] if rows and isinstance(rows[0][0], int) else 0
        try:
            return count, self.path.stat().st_size
        except OSError:
            return count, 0

    # ----------------------------------------------------------------- writing

    def store(self, outcomes: Iterable[NewOutcome]) -> None:
        rows = [
            (o.path, o.stamp, o.bundled, self.host, self.build, o.card, o.reason, o.problems, o.texts)
            for o in outcomes
        ]
        if rows:
            self._note_use()
            self._change(
                "INSERT OR REPLACE INTO outcomes "
                "(path, stamp, bundled, host, build, card, reason, problems, texts) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                rows,
            )

    def _note_use(self) -> None:
        """This build and host wrote now (once a day per process: a gateway may run for months):
        rows and snapshots of builds not noted as used for `UNUSED_BUILD_DAYS` (an install removed
        or upgraded since, or whose note was not written: the database was busy) go."""
        now = time.time()
        if self._noted_at is not None and now - self._noted_at < _DAY:
            return
        self._noted_at = now
        self._change(
            "INSERT OR REPLACE INTO builds (host, build, used_at) VALUES (?, ?, ?)",
            [(self.host, self.build, now)],
        )
        # an edited checkout is a build per edit: only the most recently used few are kept
        self._change(
            "DELETE FROM builds WHERE rowid NOT IN (SELECT rowid FROM builds ORDER BY used_at DESC LIMIT ?)",
            [(BUILDS_KEPT,)],
        )
        unused = [(now - UNUSED_BUILD_DAYS * _DAY,)]
        for table in ("outcomes", "snapshots"):
            self._change(
                f"DELETE FROM {table} WHERE NOT EXISTS (SELECT 1 FROM builds WHERE builds.used_at >= ? "  # noqa: S608 (our table names)
                f"AND builds.host = {table}.host AND builds.build = {table}.build)",
                unused,
            )
        self._change("DELETE FROM builds WHERE used_at < ?", unused)

    def forget(self, paths: Iterable[str]) -> None:
        """Drop the rows of files that are gone."""
        rows = [(path,) for path in paths]
        if rows:
            self._change("DELETE FROM outcomes WHERE path = ?", rows)

    def clear(self) -> None:
        """Remove the database, and those of other formats in its folder (files and links: a
        folder of such a name is not a database, and is left as it is)."""
        self.close()
        try:
            found = {path for name in DATABASE_NAMES for path in self.path.parent.glob(name)}
        except OSError:
            found = set()
        others = sorted(p for p in found - {self.path} if p.is_symlink() or not p.is_dir())
        for path in (self.path, *others):
            for suffix in ("", "-journal"):
                with contextlib.suppress(FileNotFoundError, NotADirectoryError):  # no folder: no file
                    os.unlink(f"{path}{suffix}")

    def close(self) -> None:
        if self._connection is not None:
            with contextlib.suppress(sqlite3.Error):
                self._connection.close()
            self._connection = None
        self._busy = False  # a new connection waits as usual

    # ----------------------------------------------------------------- the database

    def _query(self, sql: str, parameters: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        with self._lock, self._guard("read") as connection:
            if connection is not None:
                return list(connection.execute(sql, parameters))
        return []

    def _change(self, sql: str, rows: list[tuple[Any, ...]]) -> None:
        with self._lock, self._guard("write") as connection:
            if connection is not None:
                with connection:
                    connection.executemany(sql, rows)

    @contextlib.contextmanager
    def _guard(self, doing: str) -> Iterator[sqlite3.Connection | None]:
        """The connection, or None when the cache is not usable; a database SQLite cannot read
        is made anew once, anything else turns the cache off for this process."""
        connection = self._connect()
        if connection is None:
            yield None
            return
        try:
            yield connection
            if self._busy:  # the lock is free again: wait for the next one as usual
                self._wait_for_locks(connection, seconds=_LOCK_WAIT_SECONDS)
        except UnicodeEncodeError:  # a path that is not UTF-8 (`file_outcomes.storable`): not kept
            logger.debug(
                "descriptor cache: a path that is not UTF-8 is not %s",
                "read" if doing == "read" else "written",
            )
        except sqlite3.DatabaseError as exc:
            if _is_locked(exc):
                # A lock kept this long is held by someone (a sqlite3 shell, a stuck process) who
                # may keep it: each query waiting for it again would cost a rescan two waits per
                # changed file. Until a query gets through, none waits.
                if not self._busy:
                    logger.info(
                        "descriptor cache %s is busy (another process has held it for %g s); it is "
                        "neither read nor written until it is free",
                        self.path,
                        _LOCK_WAIT_SECONDS,
                    )
                    self._busy = True
                    self._wait_for_locks(connection, seconds=0)
                return
            if not _is_damage(exc):
                # a full disk, a folder that cannot be written: what the database holds is sound
                self._stop_using(exc, doing)
                return
            logger.warning("descriptor cache %s is damaged (%s); making it anew", self.path, exc)
            try:
                self.clear()
            except OSError as error:
                self._stop_using(error, doing)
                return
            self._connection = self._open_or_none(fresh=True)

    def _wait_for_locks(self, connection: sqlite3.Connection, *, seconds: float) -> None:
        """How long a query waits for another process's lock (SQLite's busy timeout)."""
        try:
            connection.execute(f"PRAGMA busy_timeout = {int(seconds * 1000)}")
        except sqlite3.Error:  # the connection is going anyway: the next one starts waiting again
            return
        self._busy = seconds == 0

    def _stop_using(self, exc: Exception, doing: str) -> None:
        logger.warning(
            "descriptor cache %s could not be %s (%s); it is left as it is, and this process reads "
            "and checks every descriptor itself. %s",
            self.path,
            "read" if doing == "read" else "written",
            exc,
            _FIX,
        )
        self.close()
        self.usable = False

    def _connect(self) -> sqlite3.Connection | None:
        if self._connection is None and self.usable:
            self._connection = self._open_or_none(fresh=False)
        return self._connection

    def _open_or_none(self, *, fresh: bool) -> sqlite3.Connection | None:
        try:
            return self._open()
        except (OSError, sqlite3.Error, ValueError) as exc:
            if (
                not fresh
                and isinstance(exc, sqlite3.DatabaseError)
                and not isinstance(exc, sqlite3.OperationalError)
            ):
                logger.warning("descriptor cache %s is damaged (%s); making it anew", self.path, exc)
                try:
                    self.clear()
                except OSError as error:  # never raised: the cache costs speed, never an app
                    self._stop_using(error, "read")
                    return None
                return self._open_or_none(fresh=True)
            logger.warning(
                "descriptor cache %s cannot be used (%s); this process reads and checks every descriptor "
                "itself. %s",
                self.path,
                exc,
                "Another process holds it" if _is_locked(exc) else self._fix_for(exc),
            )
            self.usable = False
            return None

    def _fix_for(self, exc: Exception) -> str:
        if isinstance(exc, (FileExistsError, NotADirectoryError)):  # `private_directory` met a file
            in_the_way = next((p for p in (self.path.parent, *self.path.parent.parents) if p.exists()), None)
            return (
                f"{in_the_way} is a file where the cache folder {self.path.parent} needs a folder: move "
                "it away, or choose another cache folder (AAI_GATEWAY_CACHE_DIR)"
            )
        return _FIX

    def _open(self) -> sqlite3.Connection:
        private_directory(self.path.parent)
        _refuse_foreign(self.path)
        connection = sqlite3.connect(
            self.path, timeout=_LOCK_WAIT_SECONDS, isolation_level="DEFERRED", check_same_thread=False
        )
        try:
            if os.name == "posix":
                os.chmod(self.path, 0o600)
            if connection.execute("PRAGMA user_version").fetchone()[0] != FORMAT:
                _make_tables(connection)
        except BaseException:
            connection.close()
            raise
        return connection


def _make_tables(connection: sqlite3.Connection) -> None:
    """This format's tables, made anew, under the write lock: two processes that start on a new
    cache at once both see no tables, and the second then finds the first's made."""
    connection.execute("BEGIN IMMEDIATE")
    try:
        if connection.execute("PRAGMA user_version").fetchone()[0] != FORMAT:
            for table in ("outcomes", "snapshots", "builds"):
                connection.execute(f"DROP TABLE IF EXISTS {table}")
            connection.execute(
                "CREATE TABLE outcomes (path TEXT NOT NULL, stamp TEXT NOT NULL, "
                "bundled INTEGER NOT NULL, host TEXT NOT NULL, build TEXT NOT NULL, card TEXT, "
                "reason TEXT, problems TEXT NOT NULL, texts TEXT, PRIMARY KEY (path, host, build))"
            )
            connection.execute(
                "CREATE TABLE snapshots (key TEXT NOT NULL, host TEXT NOT NULL, "
                "build TEXT NOT NULL, digest TEXT NOT NULL, body TEXT NOT NULL, "
                "stored_at REAL NOT NULL, PRIMARY KEY (key, host, build))"
            )
            connection.execute(
                "CREATE TABLE builds (host TEXT NOT NULL, build TEXT NOT NULL, used_at REAL NOT NULL, "
                "PRIMARY KEY (host, build))"
            )
            connection.execute(f"PRAGMA user_version = {FORMAT}")
    except BaseException:
        connection.rollback()
        raise
    connection.commit()


_FIX = "Make room on its disk and its folder writable by you; aai-gateway cache clear removes it"


def _digest(body: str | bytes) -> str:
    data = body if isinstance(body, bytes) else body.encode("utf-8", "surrogatepass")
    return hashlib.blake2b(data, digest_size=32).hexdigest()


def _outcome(stamp: Any, bundled: Any, card: Any, reason: Any, problems: Any) -> StoredOutcome | None:
    """A row's outcome, when every column holds what `store` writes."""
    if not (
        isinstance(stamp, str)
        and bundled in (0, 1)
        and (card is None or isinstance(card, str))
        and (reason is None or isinstance(reason, str))
        and isinstance(problems, str)
    ):
        return None
    return StoredOutcome(stamp, bool(bundled), card, reason, problems)


def _is_locked(exc: Exception) -> bool:
    """Whether SQLite waited for another process's lock and gave up (the cache is sound)."""
    return isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc)


def _is_damage(exc: sqlite3.Error) -> bool:
    """Whether SQLite says the file is not a sound database (as opposed to busy, or a misuse)."""
    text = str(exc).lower()
    return type(exc) is sqlite3.DatabaseError or any(
        sign in text
        # the last two: a database of this format (`user_version`) whose tables are not its own
        for sign in (
            "not a database",
            "malformed",
            "disk image",
            "file is encrypted",
            "no such table",
            "no such column",
        )
    )


def _refuse_foreign(path: Path) -> None:
    """The database must be a regular file of ours, not a link someone left for us to follow."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISREG(info.st_mode):
        raise ValueError("not a regular file")
    if os.name == "posix" and info.st_uid != os.getuid():
        raise ValueError("owned by another user")
