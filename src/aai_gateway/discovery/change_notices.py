"""Wait until something has happened that could change the catalog: by the OS's file
notifications, or, where they cannot be used, by a timer.

Notifications come from `watchfiles` (the Rust `notify` crate: inotify on Linux, FSEvents on
macOS, ReadDirectoryChangesW on Windows) for the directories `watched_dirs` names, each watched on
its own, never a whole tree. A notice is only a hint: the caller then asks
`CatalogWatcher.poll()`, which compares fingerprints and rebuilds the catalog only if something
did change. So a spurious notice costs one rescan, and nothing is lost between notices, because
every notice comes after the watches it depends on are in place:

- on entering, the watches are set, and the first `wait()` returns at once (what changed while
  the catalog was being built is seen by that first rescan);
- after a relevant event, the watch set is computed again (folders come and go) and, when it
  differs or a watched folder itself changed (made again: the watch was of the folder that is
  gone), the watches are set anew before `wait()` returns;
- a batch watchfiles cannot give (a name in it is not UTF-8) is a notice, at most one per poll
  interval, and the watches are set anew.

A burst of writes is one notice: watchfiles returns once no new event came for `STEP_MS`, or
after `DEBOUNCE_MS` at the latest.

Polling at the poll interval takes over when notifications are refused (`force_polling`, for
network file systems, whose changes made on other machines send no notification), cannot start
(watchfiles missing, the inotify watch or instance limit reached, no notifications on this
system, a folder to watch whose name is not UTF-8) or fail later; one warning says why and how
to fix it, and polling lasts until restart.
"""

from __future__ import annotations

import errno
import logging
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import TracebackType
from typing import Final, Literal, Protocol

import anyio

from ..descriptor.quoting import shell_command
from .sources import SourceSpec
from .watched_dirs import DirLister, OsDirs, WatchSet, watched_dirs

logger = logging.getLogger(__name__)

STEP_MS: Final = 200
"""How often watchfiles' waiting thread wakes to look at what was collected: while nothing
happens this is the only work (≈ 0.02 % of a core here), and a burst has ended when no new event
came for this long."""
DEBOUNCE_MS: Final = 1_000
ARM_PAUSES: Final = (0.0, 0.05, 0.2, 0.5, 1.0, 2.0)
"""Seconds before each attempt to set the watches. A folder may vanish between being listed and
being watched (each attempt lists them again): `rm -rf` of a thousand app folders takes a second,
and an attempt made while it runs fails for a folder it has not reached yet."""
SUGGESTED_WATCHES: Final = 524_288
SUGGESTED_INSTANCES: Final = 1_024
INOTIFY_LIMITS: Final = Path("/proc/sys/fs/inotify")


class Notifier(Protocol):
    """What `watchfiles._rust_notify.RustNotify` offers (watchfiles' own documented backend)."""

    def watch(
        self, debounce_ms: int, step_ms: int, timeout_ms: int, stop_event: threading.Event | None
    ) -> set[tuple[int, str]] | Literal["signal", "stop", "timeout"]: ...

    def close(self) -> None: ...


Opener = Callable[[list[str]], Notifier]


def open_watchfiles(paths: list[str]) -> Notifier:
    """Watch each of `paths` (directories) without descending into it."""
    from watchfiles._rust_notify import RustNotify  # noqa: PLC0415 (28 ms: only when watching)

    notifier = RustNotify(paths, False, False, 1_000, False, False)  # not recursive; errors raise
    if repr(notifier).startswith("RustNotify(Poll"):
        # notify fell back to its own polling (no inotify: ENOSYS); our polling is the cheaper one
        notifier.close()
        raise OSError(errno.ENOSYS, "this system offers no file notifications")
    return notifier


def fallback_reason(exc: BaseException, folders: int, limit: Callable[[str], int | None]) -> str:
    """Why notifications cannot be used, and how to fix it (a command that works as printed).
    `limit(name)` reads `fs.inotify.<name>` (None when unknown)."""
    text = str(exc)
    if isinstance(exc, ImportError):
        return (
            f"the watchfiles package cannot be imported ({text}); reinstall aai-gateway, which "
            "depends on it, or run: pip install 'watchfiles>=1.0'"
        )
    if "MaxFilesWatch" in text or getattr(exc, "errno", None) == errno.ENOSPC:
        wanted = _raise_to(limit("max_user_watches"), SUGGESTED_WATCHES)
        return (
            f"the system's limit on watched folders (inotify) is reached; the gateway needs "
            f"{folders}, other programs use some too. Raise it: sudo sysctl "
            f"fs.inotify.max_user_watches={wanted} (and to keep it after a reboot: echo "
            f"fs.inotify.max_user_watches={wanted} | sudo tee /etc/sysctl.d/90-inotify.conf)"
        )
    if "os error 24" in text or getattr(exc, "errno", None) == errno.EMFILE:
        wanted = _raise_to(limit("max_user_instances"), SUGGESTED_INSTANCES)
        return (
            f"no file watcher could be opened ({text}): the limit on inotify instances or on open "
            f"files is reached. Raise it: sudo sysctl fs.inotify.max_user_instances={wanted} "
            f"(or, if `ulimit -n` is small, the open-files limit of the MCP client)"
        )
    return f"file notifications failed: {text or type(exc).__name__}"


class UnwatchableNamesError(Exception):
    """Folders to watch whose names are not UTF-8: the watcher cannot take them."""

    def __init__(self, folders: Sequence[Path]) -> None:
        # As a shell word: `$'/apps/caf\xe9'` names the byte the folder's name holds, pastes as
        # it is into `mv`, and shows no lone surrogate (`caf\udce9`, Python's stand-in for it).
        shown = ", ".join(shell_command([str(folder)]) for folder in folders[:3])
        more = f" and {len(folders) - 3} more" if len(folders) > 3 else ""
        super().__init__(
            f"the names of {len(folders)} folder(s) to watch are not UTF-8 ({shown}{more}), which "
            f"file notifications cannot take; rename them (mv {shell_command([str(folders[0])])} "
            "NEW-NAME, with a name in UTF-8) and restart the gateway"
        )


def undecodable_name(exc: BaseException) -> bool:
    """Whether watchfiles failed on a name that is not UTF-8 (one file's name, in any watched
    folder: watching goes on, with that batch of changes lost)."""
    return isinstance(exc, RuntimeError) and "Unable to decode path" in str(exc)


def _raise_to(current: int | None, suggested: int) -> int:
    return suggested if current is None or current < suggested else current * 2


def inotify_limit(name: str) -> int | None:
    try:
        return int((INOTIFY_LIMITS / name).read_text(encoding="ascii"))
    except (OSError, ValueError):
        return None


class ChangeNotices:
    """`async with ChangeNotices(...) as notices: while True: await notices.wait(); rescan()`."""

    def __init__(
        self,
        sources: Sequence[SourceSpec],
        snapshot_root: Path | None,
        *,
        poll_interval: float,
        force_polling: bool = False,
        opener: Opener = open_watchfiles,
        lister: DirLister | None = None,
    ) -> None:
        self.sources = list(sources)
        self.snapshot_root = snapshot_root
        self.poll_interval = poll_interval
        self.polling_because: str | None = "--force-polling" if force_polling else None
        self._open = opener
        self._lister: DirLister = lister if lister is not None else OsDirs()
        self._notifier: Notifier | None = None
        self._watching = WatchSet({})
        self._undecodable_at: float | None = None  # when a batch was last lost to a name
        self._armed_since_notice = False

    @classmethod
    def polling(cls, poll_interval: float, because: str = "no notifications asked for") -> ChangeNotices:
        notices = cls((), None, poll_interval=poll_interval, force_polling=True)
        notices.polling_because = because
        return notices

    @property
    def mode(self) -> Literal["notifications", "polling"]:
        return "notifications" if self._notifier is not None else "polling"

    @property
    def watching(self) -> WatchSet:
        return self._watching

    async def __aenter__(self) -> ChangeNotices:
        if self.polling_because is not None:  # asked for: no warning
            logger.info(
                "looking for descriptor changes every %g s (%s)", self.poll_interval, self.polling_because
            )
            return self
        try:
            await self._arm()
        except Exception as exc:  # e.g. a bug listing folders: polling still finds changes
            self._fall_back(exc)
        if self._notifier is not None:
            logger.info("watching %d folders for descriptor changes", len(self._watching.dirs))
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        notifier, self._notifier = self._notifier, None
        if notifier is not None:
            notifier.close()

    async def wait(self) -> None:
        """Return when something may have changed (notifications), or after the poll interval
        (polling). Never raises: a failing watcher is replaced by polling."""
        if self._armed_since_notice:
            self._armed_since_notice = False
            return
        while self._notifier is not None:
            try:
                try:
                    changes: set[tuple[int, str]] | None = await self._next_changes()
                except Exception as exc:
                    if not undecodable_name(exc):
                        raise
                    changes = None  # something changed, and what is lost with the batch
                    await self._not_sooner_than_polling()
                if changes is not None and not any(self._watching.relevant(path) for _, path in changes):
                    continue
                # folders may have come or gone; one that changed itself (removed, made again, a
                # link to it pointed elsewhere) is watched anew: its watch was of what is gone,
                # and the new folder may even have the old one's inode
                anew = changes is None or any(Path(path) in self._watching.dirs for _, path in changes)
                await self._arm(anew=anew)
            except Exception as exc:  # notifications died: what they missed is seen by polling
                self._fall_back(exc)
            self._armed_since_notice = False
            return
        await anyio.sleep(self.poll_interval)

    async def _next_changes(self) -> set[tuple[int, str]]:
        """The next batch of changes; cancelled, the waiting thread is stopped within `STEP_MS`."""
        notifier = self._notifier
        assert notifier is not None
        stop = threading.Event()
        outcome: list[set[tuple[int, str]] | str] = []
        failure: list[Exception] = []

        async def in_thread() -> None:
            try:
                outcome.append(await anyio.to_thread.run_sync(notifier.watch, DEBOUNCE_MS, STEP_MS, 0, stop))
            except Exception as exc:
                failure.append(exc)
            tasks.cancel_scope.cancel()

        # The thread cannot be cancelled, only told to stop; it must have returned before the
        # notifier is closed, so this waits for it even when cancelled.
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(in_thread)
            try:
                await anyio.sleep_forever()
            finally:
                stop.set()
        if failure:
            raise failure[0]
        changes = outcome[0] if outcome else "stop"
        return changes if isinstance(changes, set) else set()

    async def _arm(self, *, anew: bool = False) -> None:
        """Watch what the sources need now: unchanged watches are kept (unless `anew`), else all
        are set anew."""
        last: Exception | None = None
        folders = 0
        for pause in ARM_PAUSES:
            if isinstance(last, FileNotFoundError):  # folders going: give the removal time
                await anyio.sleep(pause)
            wanted = await anyio.to_thread.run_sync(
                watched_dirs, self.sources, self.snapshot_root, self._lister
            )
            if wanted.unwatchable:  # the watcher cannot take them, and reading them is an event
                self._fall_back(UnwatchableNamesError(wanted.unwatchable), folders)
                return
            if not anew and self._notifier is not None and wanted == self._watching:
                return
            self.close()
            folders = len(wanted.dirs)

            def open_now(paths: list[str] = wanted.paths) -> None:
                self._notifier = self._open(paths)  # kept even if cancelled meanwhile: closed on exit

            try:
                await anyio.to_thread.run_sync(open_now)
            except (FileNotFoundError, PermissionError) as exc:  # changed since listed: list again
                last = exc
                continue
            except Exception as exc:
                self._fall_back(exc, folders)
                return
            self._watching = wanted
            self._armed_since_notice = True
            logger.debug("watching %d folders anew", len(wanted.dirs))
            return
        assert last is not None
        self._fall_back(last, folders)

    async def _not_sooner_than_polling(self) -> None:
        """A batch lost to a name that is not UTF-8 costs a rescan, at most once per poll
        interval: the name may be one that keeps being read or written (a log; a folder a file
        manager lists: opening it is an event too), and each rescan could be one more event."""
        now = time.monotonic()
        if self._undecodable_at is not None:
            await anyio.sleep(max(0.0, self._undecodable_at + self.poll_interval - now))
        self._undecodable_at = time.monotonic()

    def _fall_back(self, exc: Exception, folders: int | None = None) -> None:
        self.close()
        self.polling_because = fallback_reason(exc, folders or len(self._watching.dirs), inotify_limit)
        self._watching = WatchSet({})
        logger.warning(
            "descriptor changes are looked for every %g s instead of by file notifications "
            "(until the gateway restarts): %s",
            self.poll_interval,
            self.polling_because,
        )
