"""Notices of what could change the catalog, from real file notifications (watchfiles), and the
fall-back to polling when they cannot be used.

The poll interval is an hour wherever notifications are meant to work, so a notice that arrives
in time came from a notification, not from the timer."""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Literal

import anyio
import pytest

from aai_gateway.discovery.change_notices import (
    STEP_MS,
    ChangeNotices,
    Notifier,
    fallback_reason,
    open_watchfiles,
)
from aai_gateway.discovery.sources import Pattern, SourceSpec

pytestmark = pytest.mark.anyio
HOUR = 3600.0
NOTICE_SECONDS = 10  # a notice comes within a second; this bound only keeps a failure from hanging


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def path_source(folder: Path) -> SourceSpec:
    return SourceSpec("--path", folder, Pattern.FILES_AND_APP_DIRS, explicit=True)


def app_dirs_source(folder: Path) -> SourceSpec:
    return SourceSpec("~/.aai", folder, Pattern.APP_DIRS)


@asynccontextmanager
async def watching(*sources: SourceSpec, snapshots: Path | None = None) -> AsyncIterator[ChangeNotices]:
    async with ChangeNotices(list(sources), snapshots, poll_interval=HOUR) as notices:
        assert notices.mode == "notifications", notices.polling_because
        with anyio.fail_after(1):
            await notices.wait()  # the first notice comes at once: the caller rescans after arming
        yield notices


async def noticed(notices: ChangeNotices) -> None:
    with anyio.fail_after(NOTICE_SECONDS):
        await notices.wait()


def write(path: Path, text: str = '{"app": 1}') -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def watched_paths(notices: ChangeNotices) -> set[Path]:
    return set(notices.watching.dirs)


async def test_a_new_descriptor_file_is_noticed(tmp_path: Path) -> None:
    async with watching(path_source(tmp_path)) as notices:
        write(tmp_path / "new.json")
        await noticed(notices)


async def test_an_edited_descriptor_file_is_noticed(tmp_path: Path) -> None:
    write(tmp_path / "app.json")
    async with watching(path_source(tmp_path)) as notices:
        with (tmp_path / "app.json").open("a", encoding="utf-8") as handle:
            handle.write(" ")
        await noticed(notices)


async def test_a_removed_descriptor_file_is_noticed(tmp_path: Path) -> None:
    write(tmp_path / "app.json")
    async with watching(path_source(tmp_path)) as notices:
        (tmp_path / "app.json").unlink()
        await noticed(notices)


async def test_a_descriptor_renamed_into_place_is_noticed(tmp_path: Path) -> None:
    write(tmp_path / ".app.json.tmp")
    async with watching(path_source(tmp_path)) as notices:
        (tmp_path / ".app.json.tmp").rename(tmp_path / "app.json")
        await noticed(notices)


async def test_a_new_app_folder_is_noticed_and_then_its_descriptor(tmp_path: Path) -> None:
    async with watching(app_dirs_source(tmp_path)) as notices:
        (tmp_path / "newapp").mkdir()
        await noticed(notices)
        assert tmp_path / "newapp" in watched_paths(notices)
        write(tmp_path / "newapp" / "aai.json")
        await noticed(notices)


async def test_a_removed_app_folder_is_noticed(tmp_path: Path) -> None:
    write(tmp_path / "oldapp" / "aai.json")
    async with watching(app_dirs_source(tmp_path)) as notices:
        assert tmp_path / "oldapp" in watched_paths(notices)
        (tmp_path / "oldapp" / "aai.json").unlink()
        (tmp_path / "oldapp").rmdir()
        await noticed(notices)
        assert tmp_path / "oldapp" not in watched_paths(notices)


async def test_an_app_folder_made_again_in_one_go_is_watched_again_and_its_edits_noticed(
    tmp_path: Path,
) -> None:
    write(tmp_path / "app" / "aai.json")
    async with watching(app_dirs_source(tmp_path)) as notices:
        (tmp_path / "app").rename(tmp_path / ".old")  # an editor's or a tool's replace: a new folder
        write(tmp_path / ".new" / "aai.json")
        (tmp_path / ".new").rename(tmp_path / "app")
        await noticed(notices)
        write(tmp_path / ".old" / "aai.json", "{}")  # the old folder, watched before: no notice due

        write(tmp_path / "app" / "aai.json", '{"edited": true}')
        await noticed(notices)


async def test_an_app_folder_deleted_and_made_again_is_watched_again_even_with_its_old_inode(
    tmp_path: Path,
) -> None:
    write(tmp_path / "app" / "aai.json")
    async with watching(app_dirs_source(tmp_path)) as notices:
        shutil.rmtree(tmp_path / "app")  # the file system may give the new folder the same inode
        write(tmp_path / "app" / "aai.json")
        await noticed(notices)

        write(tmp_path / "app" / "aai.json", '{"edited": true}')
        await noticed(notices)


async def test_a_descriptor_that_is_a_link_is_noticed_when_its_target_is_saved_by_rename(
    tmp_path: Path,
) -> None:
    write(tmp_path / "project" / "aai.json")
    (tmp_path / "apps" / "app").mkdir(parents=True)
    (tmp_path / "apps" / "app" / "aai.json").symlink_to(tmp_path / "project" / "aai.json")
    async with watching(app_dirs_source(tmp_path / "apps")) as notices:
        write(tmp_path / "project" / ".aai.json.swp", '{"edited": true}')
        (tmp_path / "project" / ".aai.json.swp").rename(tmp_path / "project" / "aai.json")
        await noticed(notices)


async def test_a_link_whose_target_is_deleted_and_made_again_is_noticed_when_it_comes_back(
    tmp_path: Path,
) -> None:
    write(tmp_path / "project" / "aai.json")
    (tmp_path / "apps").mkdir()
    (tmp_path / "apps" / "app.json").symlink_to(tmp_path / "project" / "aai.json")
    async with watching(path_source(tmp_path / "apps")) as notices:
        shutil.rmtree(tmp_path / "project")
        await noticed(notices)

        write(tmp_path / "project" / "aai.json")
        await noticed(notices)


async def test_a_name_that_is_not_utf8_appearing_leaves_notifications_on(tmp_path: Path) -> None:
    async with watching(path_source(tmp_path)) as notices:
        write(Path(os.fsdecode(os.fsencode(tmp_path) + b"/caf\xe9.json")), "{}")
        await noticed(notices)
        assert notices.mode == "notifications"

        write(tmp_path / "next.json")
        await noticed(notices)


async def test_a_folder_to_watch_whose_name_is_not_utf8_makes_the_gateway_poll_saying_which(
    tmp_path: Path,
) -> None:
    """The watcher cannot take its name, and reading the folder (each rescan does) is an event
    on that name in its parent: watching it from there would rescan for ever."""
    os.makedirs(os.fsencode(tmp_path) + b"/caf\xe9")
    async with ChangeNotices([app_dirs_source(tmp_path)], None, poll_interval=HOUR) as notices:
        assert notices.mode == "polling"
        assert notices.polling_because is not None
        assert "the names of 1 folder(s) to watch are not UTF-8" in notices.polling_because
        assert f"(mv $'{tmp_path}/caf\\xe9' NEW-NAME, with a name in UTF-8)" in notices.polling_because
        assert "\udce9" not in notices.polling_because


async def test_names_that_are_not_utf8_and_keep_changing_cost_a_rescan_once_per_poll_interval(
    tmp_path: Path,
) -> None:
    bad = Path(os.fsdecode(os.fsencode(tmp_path) + b"/caf\xe9.log"))
    async with ChangeNotices([path_source(tmp_path)], None, poll_interval=HOUR) as notices:
        assert notices.mode == "notifications"
        await noticed(notices)  # the first notice, at once after arming
        write(bad, "one")
        await noticed(notices)  # the first batch lost to such a name is a notice at once

        write(bad, "two")
        with anyio.move_on_after(1.5) as waited:
            await notices.wait()
        assert waited.cancelled_caught  # the next waits for the poll interval (an hour here)
        assert notices.mode == "notifications"


async def test_a_root_created_after_start_is_noticed_and_then_watched(tmp_path: Path) -> None:
    root = tmp_path / "home" / ".aai"
    (tmp_path / "home").mkdir()
    async with watching(app_dirs_source(root)) as notices:
        assert watched_paths(notices) == {tmp_path / "home"}
        root.mkdir()
        await noticed(notices)
        (root / "app").mkdir()
        await noticed(notices)
        write(root / "app" / "aai.json")
        await noticed(notices)
        assert {root, root / "app"} <= watched_paths(notices)


async def test_a_snapshot_written_by_another_process_is_noticed(tmp_path: Path) -> None:
    store = tmp_path / "cache" / "mcp-snapshots"  # not there yet: made by the first snapshot
    writer = (  # what SnapshotStore.save does: the folder made owner-only, the file written atomically
        "import sys; from pathlib import Path; "
        "from aai_gateway.discovery.mcp_snapshots import private_directory; "
        "from aai_gateway.discovery.web_cache import write_atomic; "
        "private_directory(Path(sys.argv[1])); write_atomic(Path(sys.argv[1]) / sys.argv[2], b'{}')"
    )
    async with watching(path_source(tmp_path / "apps"), snapshots=store) as notices:
        await anyio.run_process([sys.executable, "-c", writer, str(store), "abc.json"])
        await noticed(notices)
        if store not in watched_paths(notices):  # the folder was seen before the file was in it
            await noticed(notices)
        assert store in watched_paths(notices)
        await anyio.run_process([sys.executable, "-c", writer, str(store), "def.json"])
        await noticed(notices)


async def test_a_burst_of_writes_is_one_notice(tmp_path: Path) -> None:
    async with watching(path_source(tmp_path)) as notices:
        started = time.monotonic()
        for number in range(30):
            write(tmp_path / f"app{number}.json")
        burst = time.monotonic() - started
        await noticed(notices)
        if burst > STEP_MS / 1000 / 2:  # the machine stalled mid-burst: two notices are right then
            return
        with anyio.move_on_after(1.0) as quiet:
            await notices.wait()
        assert quiet.cancelled_caught, "a second notice for the same burst"


async def test_cancelling_a_wait_stops_the_watcher_and_closes_it(tmp_path: Path) -> None:
    async with watching(path_source(tmp_path)) as notices:
        with anyio.fail_after(5):  # the waiting thread looks for the stop every 200 ms
            with anyio.move_on_after(0.1):
                await notices.wait()
    assert notices.mode == "polling"  # closed


# ------------------------------------------------------------------- falling back to polling


@contextlib.contextmanager
def no_watchfiles(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Importing watchfiles' backend fails as when the package is missing (ImportError)."""
    monkeypatch.setitem(sys.modules, "watchfiles._rust_notify", None)
    yield


async def test_without_watchfiles_changes_are_polled_for_and_a_warning_says_how_to_fix_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    with no_watchfiles(monkeypatch), caplog.at_level(logging.WARNING):
        async with ChangeNotices([path_source(tmp_path)], None, poll_interval=0.05) as notices:
            assert notices.mode == "polling"
            with anyio.fail_after(5):
                await notices.wait()  # the poll interval passed
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert "every 0.05 s" in warnings[0] and "pip install 'watchfiles>=1.0'" in warnings[0]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify: Linux")
async def test_when_no_watcher_can_be_opened_changes_are_polled_for(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    in_use = len(os.listdir("/proc/self/fd")) - 1
    resource.setrlimit(resource.RLIMIT_NOFILE, (in_use, hard))  # no new file descriptor: EMFILE
    notices = ChangeNotices([path_source(tmp_path)], None, poll_interval=0.05)
    with caplog.at_level(logging.WARNING):
        try:
            await notices.__aenter__()
        finally:
            resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
        try:
            assert notices.mode == "polling"
            assert "sudo sysctl fs.inotify.max_user_instances=" in (notices.polling_because or "")
            with anyio.fail_after(5):
                await notices.wait()
        finally:
            await notices.__aexit__(None, None, None)
    assert [r.levelno for r in caplog.records].count(logging.WARNING) == 1


class DyingNotifier:
    """Watches for real, then fails as watchfiles does when its watcher breaks down."""

    def __init__(self, paths: list[str]) -> None:
        self.real = open_watchfiles(paths)

    def watch(self, *args: Any) -> set[tuple[int, str]] | Literal["signal", "stop", "timeout"]:
        raise RuntimeError("error in underlying watcher: the event queue overflowed")

    def close(self) -> None:
        self.real.close()


async def test_a_watcher_that_dies_gives_way_to_polling_after_one_last_notice(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        async with ChangeNotices(
            [path_source(tmp_path)], None, poll_interval=0.05, opener=DyingNotifier
        ) as notices:
            assert notices.mode == "notifications"
            with anyio.fail_after(5):
                await notices.wait()  # armed
                await notices.wait()  # the watcher died: rescan now, what it saw is lost
            assert "the event queue overflowed" in (notices.polling_because or "")
            with anyio.fail_after(5):
                await notices.wait()  # and from now on, every poll interval
    assert [r.levelno for r in caplog.records].count(logging.WARNING) == 1


async def test_a_folder_vanishing_while_watches_are_set_is_listed_again(tmp_path: Path) -> None:
    attempts: list[list[str]] = []

    def racing(paths: list[str]) -> Notifier:
        attempts.append(paths)
        if len(attempts) == 1:
            raise FileNotFoundError("No such file or directory (os error 2)")
        return open_watchfiles(paths)

    async with ChangeNotices([path_source(tmp_path)], None, poll_interval=HOUR, opener=racing) as notices:
        assert notices.mode == "notifications"
    assert len(attempts) == 2


async def test_app_folders_removed_while_the_watches_are_set_again_leave_notifications_on(
    tmp_path: Path,
) -> None:
    """An `rm -rf` of many app folders runs on while the gateway sets its watches again: each
    attempt listed a folder that is gone by the time it is watched (here, three in a row: as many
    attempts as there were before they paused)."""
    apps = tmp_path / "apps"
    for index in range(8):
        write(apps / f"app{index}" / "aai.json")
    racing = [0]

    def removing_one_first(paths: list[str]) -> Notifier:
        if racing[0]:
            racing[0] -= 1
            shutil.rmtree(next(path for path in paths if Path(path).parent == apps))
        return open_watchfiles(paths)  # the real watcher, which refuses a folder that is gone

    async with ChangeNotices(
        [app_dirs_source(apps)], None, poll_interval=HOUR, opener=removing_one_first
    ) as notices:
        with anyio.fail_after(1):
            await notices.wait()  # armed
        racing[0] = 3
        shutil.rmtree(apps / "app7")
        await noticed(notices)

        assert notices.mode == "notifications", notices.polling_because
        assert racing[0] == 0
        write(apps / "again" / "aai.json")  # and what changes next is still noticed
        await noticed(notices)


async def test_forced_polling_watches_nothing_and_warns_of_nothing(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    def refused(paths: list[str]) -> Notifier:
        raise AssertionError("no watcher may be opened")

    with caplog.at_level(logging.INFO, logger="aai_gateway"):
        async with ChangeNotices(
            [path_source(tmp_path)], None, poll_interval=0.05, force_polling=True, opener=refused
        ) as notices:
            assert notices.mode == "polling"
            with anyio.fail_after(5):
                await notices.wait()
    assert "every 0.05 s (--force-polling)" in caplog.text
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


def test_the_watch_limit_message_names_the_command_that_raises_it() -> None:
    reached = OSError(
        'OS file watch limit reached. about ["/opt/x"] (Error { kind: MaxFilesWatch, paths: [] })'
    )
    text = fallback_reason(reached, 9000, lambda name: 8192)
    assert "needs 9000" in text
    assert "sudo sysctl fs.inotify.max_user_watches=524288 " in text
    assert "echo fs.inotify.max_user_watches=524288 | sudo tee /etc/sysctl.d/90-inotify.conf" in text
    assert "max_user_watches=1200000 " in fallback_reason(reached, 9000, lambda name: 600_000)


def test_a_failure_without_known_remedy_is_reported_as_it_is() -> None:
    assert fallback_reason(RuntimeError("boom"), 3, lambda name: None) == "file notifications failed: boom"


# ----------------------------------------------------------------- the watchfiles backend we use


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="paths as given: inotify")
def test_watchfiles_backend_still_has_the_shape_change_notices_relies_on(tmp_path: Path) -> None:
    """`watchfiles._rust_notify.RustNotify` (documented by watchfiles as its Rust backend, but in a
    private module): its constructor's positional arguments, `watch` returning "stop" when told,
    and changes as (1 = added, the path joined to the watched folder as given)."""
    (tmp_path / "sub").mkdir()
    notifier = open_watchfiles([str(tmp_path)])
    try:
        assert repr(notifier).startswith("RustNotify(Recommended"), "not inotify: adapt open_watchfiles"
        stop = threading.Event()
        stop.set()
        assert notifier.watch(100, 10, 0, stop) == "stop"
        write(tmp_path / "sub" / "deep.json")  # not recursive: not reported
        write(tmp_path / "app.json")
        changes = notifier.watch(1_000, 50, 5_000, None)
        assert isinstance(changes, set)
        assert (1, str(tmp_path / "app.json")) in changes
        assert not [path for _, path in changes if path.startswith(str(tmp_path / "sub") + os.sep)]
    finally:
        notifier.close()
