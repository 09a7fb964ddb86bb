"""The descriptor cache: a start reads and checks only the files that changed since the last; an
edited, replaced, removed or just-written file, another build of the gateway, and a damaged or
foreign database never give a stale or wrong app."""

from __future__ import annotations

import logging
import multiprocessing
import os
import sqlite3
import stat
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from aai_gateway.discovery import build_catalog, card_cache
from aai_gateway.discovery.card_cache import (
    BUILDS_KEPT,
    DATABASE,
    SNAPSHOTS_KEPT,
    UNUSED_BUILD_DAYS,
    CardCache,
    is_racy,
)
from aai_gateway.discovery.loading import FileLoads
from aai_gateway.errors import AppChangedError
from tests.builders import c_descriptor, write_json
from tests.discovery.cache_support import HOUR_AGO, sources, start, write_app


def test_a_second_start_reads_and_checks_no_unchanged_file(apps: Path, tmp_path: Path) -> None:
    first, loads = start(apps, tmp_path / "cache")
    assert (loads.last_counts.checked, loads.last_counts.cached) == (5, 0)
    second, loads = start(apps, tmp_path / "cache")
    assert (loads.last_counts.checked, loads.last_counts.cached) == (0, 5)
    assert [e.card for e in second.entries] == [e.card for e in first.entries]
    assert second.entries[0].descriptor == first.entries[0].descriptor  # loaded from the file on demand


def test_an_edited_file_is_checked_again_and_its_new_content_is_used(apps: Path, tmp_path: Path) -> None:
    start(apps, tmp_path / "cache")
    edited = write_app(apps, "dev.test.app2", name="Renamed")
    second, loads = start(apps, tmp_path / "cache")
    assert loads.last_counts.checked == 1
    card = next(e.card for e in second.entries if e.path == str(edited))
    assert card.names.primary == "Renamed"


def test_a_file_replaced_by_another_with_the_same_size_and_time_is_checked_again(
    apps: Path, tmp_path: Path
) -> None:
    start(apps, tmp_path / "cache")
    target = apps / "dev.test.app1" / "aai.json"
    replacement = write_app(tmp_path / "elsewhere", "dev.test.app1", name="Other")  # same length as Notes
    assert replacement.stat().st_size == target.stat().st_size
    os.utime(replacement, ns=(target.stat().st_atime_ns, target.stat().st_mtime_ns))
    os.replace(replacement, target)  # a new inode at the same path
    second, loads = start(apps, tmp_path / "cache")
    assert loads.last_counts.checked == 1
    assert next(e.card for e in second.entries if e.path == str(target)).names.primary == "Other"


def test_a_removed_file_is_gone_from_the_catalog_and_from_the_cache(apps: Path, tmp_path: Path) -> None:
    start(apps, tmp_path / "cache")
    removed = apps / "dev.test.app3" / "aai.json"
    removed.unlink()
    second, _ = start(apps, tmp_path / "cache")
    assert "dev.test.app3" not in [e.card.id for e in second.entries]
    # the watcher of a running gateway forgets it in the cache too
    loads = FileLoads("linux", CardCache(tmp_path / "cache2", "linux", "build-1"))
    write_app(apps, "dev.test.app3")
    build_catalog(sources(apps), "linux", loads)
    (apps / "dev.test.app3" / "aai.json").unlink()
    build_catalog(sources(apps), "linux", loads)
    rows = CardCache(tmp_path / "cache2", "linux", "build-1").outcomes()
    assert str(apps / "dev.test.app3" / "aai.json") not in rows


def test_another_build_of_the_gateway_reads_no_row_of_the_last(apps: Path, tmp_path: Path) -> None:
    start(apps, tmp_path / "cache", build="0.1.0-a")
    _, loads = start(apps, tmp_path / "cache", build="0.1.1-b")
    assert (loads.last_counts.checked, loads.last_counts.cached) == (5, 0)


def test_a_file_written_within_the_last_two_seconds_is_checked_at_each_start_until_it_is_older(
    apps: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(card_cache, "RACY_NANOSECONDS", 600 * 10**9)  # however slow the machine
    fresh = write_app(apps, "dev.test.fresh", aged=False)
    now = time.time()
    os.utime(fresh, (now, now))  # just written
    start(apps, tmp_path / "cache")
    _, loads = start(apps, tmp_path / "cache")
    assert loads.last_counts.checked == 1  # it may still change within its time stamp
    os.utime(fresh, (HOUR_AGO, HOUR_AGO))
    start(apps, tmp_path / "cache")
    _, loads = start(apps, tmp_path / "cache")
    assert loads.last_counts.checked == 0


def test_an_invalid_file_is_remembered_as_skipped_with_its_problems(apps: Path, tmp_path: Path) -> None:
    bad = apps / "dev.test.bad" / "aai.json"
    bad.parent.mkdir()
    bad.write_text('{"schemaVersion": "1.0", "app": 3}')
    os.utime(bad, (HOUR_AGO, HOUR_AGO))
    first, _ = start(apps, tmp_path / "cache")
    second, loads = start(apps, tmp_path / "cache")
    assert loads.last_counts.checked == 0
    assert second.skipped == first.skipped
    assert second.skipped[0].problems and second.skipped[0].problems[0].file == str(bad)


def test_a_damaged_database_is_made_anew_and_every_app_still_loads(
    apps: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    start(apps, tmp_path / "cache")
    (tmp_path / "cache" / DATABASE).write_bytes(b"this is not a database at all" * 100)
    with caplog.at_level(logging.WARNING):
        catalog, loads = start(apps, tmp_path / "cache")
    assert len(catalog.entries) == 5 and loads.last_counts.checked == 5
    assert "damaged" in caplog.text
    _, loads = start(apps, tmp_path / "cache")
    assert loads.last_counts.cached == 5  # and it works again


def test_a_damaged_database_beside_a_folder_named_like_an_older_one_is_made_anew_and_the_folder_left(
    apps: Path, tmp_path: Path
) -> None:
    start(apps, tmp_path / "cache")
    folder = tmp_path / "cache" / "descriptor-cards-5.sqlite3"
    folder.mkdir()  # not a database: `clear` must neither remove it nor stop at it
    (tmp_path / "cache" / DATABASE).write_bytes(b"this is not a database at all" * 100)

    catalog, loads = start(apps, tmp_path / "cache")

    assert len(catalog.entries) == 5 and loads.last_counts.checked == 5
    _, loads = start(apps, tmp_path / "cache")
    assert loads.last_counts.cached == 5 and folder.is_dir()


def test_a_damaged_database_that_cannot_be_removed_turns_the_cache_off_and_every_app_loads(
    apps: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    start(apps, tmp_path / "cache")
    (tmp_path / "cache" / DATABASE).write_bytes(b"this is not a database at all" * 100)

    def refuse(path: object) -> None:
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(os, "unlink", refuse)
    with caplog.at_level(logging.WARNING):
        catalog, loads = start(apps, tmp_path / "cache")

    assert len(catalog.entries) == 5 and loads.last_counts.checked == 5
    assert "could not be read (" in caplog.text


def test_a_full_disk_leaves_the_cache_as_it_was_and_the_start_goes_on(
    apps: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    start(apps, tmp_path / "cache")
    for number in range(5, 40):
        write_app(apps, f"dev.test.app{number}")
    loads = FileLoads("linux", CardCache(tmp_path / "cache", "linux", "build-1"))
    connection = loads.cache._connect()  # type: ignore[union-attr]
    assert connection is not None
    pages = connection.execute("PRAGMA page_count").fetchone()[0]
    connection.execute(f"PRAGMA max_page_count = {pages}")  # SQLite's own "database or disk is full"
    with caplog.at_level(logging.WARNING):
        catalog = build_catalog(sources(apps), "linux", loads)
    assert len(catalog.entries) == 40
    assert "could not be written (database or disk is full); it is left as it is" in caplog.text
    assert "damaged" not in caplog.text
    _, loads = start(apps, tmp_path / "cache")
    assert loads.last_counts.cached == 5  # the rows of the first start are still there


def test_a_folder_where_sqlite_cannot_write_its_journal_leaves_the_cache_and_serves_every_app(
    apps: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    start(apps, tmp_path / "cache")
    write_app(apps, "dev.test.new")
    (tmp_path / "cache" / f"{DATABASE}-journal").mkdir()  # as a read-only folder: no journal file
    with caplog.at_level(logging.WARNING):
        catalog, _ = start(apps, tmp_path / "cache")
    assert len(catalog.entries) == 6
    assert "this process reads and checks every descriptor itself" in caplog.text
    assert "damaged" not in caplog.text
    (tmp_path / "cache" / f"{DATABASE}-journal").rmdir()
    _, loads = start(apps, tmp_path / "cache")
    assert loads.last_counts.cached == 5


def test_a_row_that_does_not_read_back_is_loaded_from_its_file(apps: Path, tmp_path: Path) -> None:
    start(apps, tmp_path / "cache")
    with sqlite3.connect(tmp_path / "cache" / DATABASE) as db:
        db.execute('UPDATE outcomes SET card = \'["not", "a", "card"]\' WHERE path LIKE \'%app0%\'')
        db.execute("UPDATE outcomes SET problems = 'garbage' WHERE path LIKE '%app1%'")
        db.execute("DELETE FROM snapshots")  # the rows alone: no snapshot of the sources
    catalog, loads = start(apps, tmp_path / "cache")
    assert (loads.last_counts.checked, loads.last_counts.cached) == (2, 3)
    assert sorted(e.card.id for e in catalog.entries) == [f"dev.test.app{n}" for n in range(5)]


def test_a_database_that_is_a_link_is_not_used(
    apps: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / "cache").mkdir()
    target = tmp_path / "somewhere-else.sqlite3"
    target.write_bytes(b"")
    (tmp_path / "cache" / DATABASE).symlink_to(target)
    with caplog.at_level(logging.WARNING):
        catalog, loads = start(apps, tmp_path / "cache")
    assert len(catalog.entries) == 5 and loads.last_counts.checked == 5
    assert "cannot be used" in caplog.text
    assert target.read_bytes() == b""


def test_the_database_is_readable_by_its_owner_only(apps: Path, tmp_path: Path) -> None:
    start(apps, tmp_path / "cache")
    assert (tmp_path / "cache" / DATABASE).stat().st_mode & 0o077 == 0
    assert (tmp_path / "cache").stat().st_mode & 0o077 == 0


def test_an_app_whose_file_changed_to_another_app_since_its_card_cannot_be_used_until_the_rescan(
    apps: Path, tmp_path: Path
) -> None:
    catalog, _ = start(apps, tmp_path / "cache")
    entry = next(e for e in catalog.entries if e.card.id == "dev.test.app4")
    write_json(Path(entry.path), c_descriptor("dev.test.impostor"))
    with pytest.raises(AppChangedError) as caught:
        _ = entry.descriptor
    assert "dev.test.impostor" in caught.value.message and entry.path in caught.value.message
    Path(entry.path).unlink()
    with pytest.raises(AppChangedError):
        _ = entry.descriptor


def test_search_texts_come_from_the_cache_for_the_stamp_the_card_was_made_of(
    apps: Path, tmp_path: Path
) -> None:
    start(apps, tmp_path / "cache")
    catalog, loads = start(apps, tmp_path / "cache")
    texts = loads.texts([(e.card, e.stamp) for e in catalog.entries])
    assert {name for found in texts.values() for name in (t.name for t in found)} == {"ping"}
    assert len(texts) == 5


def test_the_cache_serves_a_rescan_and_a_search_in_other_threads_without_harm(
    apps: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    _, loads = start(apps, tmp_path / "cache")  # this thread opens the database
    write_app(apps, "dev.test.later")
    results: list[object] = []

    def rescan_and_read_texts() -> None:
        rebuilt = build_catalog(sources(apps), "linux", loads)
        results.append(loads.texts([(e.card, e.stamp) for e in rebuilt.entries]))

    with caplog.at_level(logging.INFO):
        workers = [threading.Thread(target=rescan_and_read_texts) for _ in range(3)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
    assert [len(found) for found in results] == [6, 6, 6]  # type: ignore[arg-type]
    assert "damaged" not in caplog.text and "failed" not in caplog.text
    _, again = start(apps, tmp_path / "cache")
    assert again.last_counts.cached == 6


def test_only_the_most_recent_snapshots_are_kept(tmp_path: Path) -> None:
    cache = CardCache(tmp_path / "cache", "linux", "build-1")
    for number in range(SNAPSHOTS_KEPT + 3):
        cache.store_snapshot(f"sources {number}", "[]")
    kept = [key for key in (f"sources {n}" for n in range(SNAPSHOTS_KEPT + 3)) if cache.snapshot(key)]
    assert kept == [f"sources {n}" for n in range(3, SNAPSHOTS_KEPT + 3)]


def test_a_snapshot_reads_back_as_the_utf8_of_what_was_stored_and_not_once_its_body_changed(
    tmp_path: Path,
) -> None:
    cache = CardCache(tmp_path / "cache", "linux", "build-1")
    body = '[["/apps/zürich/aai.json", "1:2", false, null, "提醒事项 \\u0000", "[]"]]'
    cache.store_snapshot("sources", body)
    assert cache.snapshot("sources") == body.encode("utf-8")
    with sqlite3.connect(tmp_path / "cache" / DATABASE) as db:
        db.execute("UPDATE snapshots SET body = ?", (body.replace("zürich", "zurich"),))
    assert cache.snapshot("sources") is None  # its digest no longer matches


def _open_at_once(folder: str, barrier: Any, usable: Any) -> None:
    cache = CardCache(Path(folder), "linux", build="b")
    barrier.wait()
    cache.outcomes()
    usable.put(cache.usable)


def test_two_processes_starting_on_a_new_cache_at_once_both_use_it(tmp_path: Path) -> None:
    """Both saw no tables; the second to make them used to find the first's and give up the cache."""
    processes = multiprocessing.get_context("fork")
    kept = []
    for trial in range(12):
        barrier, usable = processes.Barrier(2), processes.Queue()
        pair = [
            processes.Process(target=_open_at_once, args=(str(tmp_path / str(trial)), barrier, usable))
            for _ in range(2)
        ]
        for process in pair:
            process.start()
        for process in pair:
            process.join(30)
        kept += [usable.get(timeout=5) for _ in pair]

    assert kept == [True] * 24


def test_a_cache_of_this_format_with_other_tables_is_made_anew(
    apps: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    start(apps, tmp_path / "cache")
    with sqlite3.connect(tmp_path / "cache" / DATABASE) as connection:
        connection.execute("DROP TABLE snapshots")
        connection.execute("CREATE TABLE snapshots (key TEXT PRIMARY KEY)")

    with caplog.at_level(logging.WARNING):
        start(apps, tmp_path / "cache")
    third, loads = start(apps, tmp_path / "cache")

    assert "is damaged (no such column" in caplog.text
    assert (loads.last_counts.checked, loads.last_counts.cached) == (0, 5)
    assert len(third.entries) == 5


def test_a_lock_another_process_keeps_costs_a_rescan_one_wait_not_one_per_changed_file(
    apps: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr("aai_gateway.discovery.card_cache._LOCK_WAIT_SECONDS", 0.25)
    loads = FileLoads("linux", CardCache(tmp_path / "cache", "linux", "build-1"))
    build_catalog(sources(apps), "linux", loads)
    for number in range(5, 25):
        write_app(apps, f"dev.test.app{number}")
    holder = sqlite3.connect(tmp_path / "cache" / DATABASE, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")  # a sqlite3 shell, a stuck process: it keeps the lock
    try:
        with caplog.at_level(logging.INFO):
            catalog = build_catalog(sources(apps), "linux", loads)
    finally:
        holder.rollback()
        holder.close()
    assert len(catalog.entries) == 25
    # one query waited and said so; each other one waited too before (two per changed file)
    assert caplog.text.count("is busy") == 1
    for number in range(25, 27):
        write_app(apps, f"dev.test.app{number}")
    build_catalog(sources(apps), "linux", loads)  # the lock is gone: the cache is used again
    rows = CardCache(tmp_path / "cache", "linux", "build-1").outcomes()
    assert str(apps / "dev.test.app26" / "aai.json") in rows


def stat_of(path: Path, *, mtime_ns: int, ctime_ns: int) -> os.stat_result:
    return os.stat_result(tuple(os.stat(path))[:10], {"st_mtime_ns": mtime_ns, "st_ctime_ns": ctime_ns})


def test_a_file_whose_times_were_set_back_just_now_on_a_file_system_of_whole_seconds_is_in_doubt(
    apps: Path,
) -> None:
    # `cp -p` or `rsync -t` into the file twice within one second, at one size: on a file system
    # keeping whole seconds, inode, size and both times stay as they were after the first copy
    now = time.time_ns()
    second = now - now % 1_000_000_000
    old = int(HOUR_AGO * 1_000_000_000) // 1_000_000_000 * 1_000_000_000
    path = apps / "dev.test.app0" / "aai.json"
    assert is_racy(stat_of(path, mtime_ns=old, ctime_ns=second), now)
    assert not is_racy(stat_of(path, mtime_ns=old, ctime_ns=second - 3_000_000_000), now)
    # a file system keeping nanoseconds tells two copies apart by their change times
    assert not is_racy(stat_of(path, mtime_ns=old, ctime_ns=now - 1), now)


def test_a_file_where_the_cache_folder_should_be_is_named_with_what_to_do_and_every_app_loads(
    apps: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / "cache").write_text("not a folder", encoding="utf-8")
    for folder in (tmp_path / "cache", tmp_path / "cache" / "inside"):
        caplog.clear()
        with caplog.at_level(logging.WARNING):
            catalog, _ = start(apps, folder)
        assert len(catalog.entries) == 5
        assert f"{tmp_path / 'cache'} is a file where the cache folder {folder} needs a folder" in caplog.text
        CardCache(folder, "linux").clear()  # what `aai-gateway cache clear` does: no traceback


def test_a_shared_folder_such_as_tmp_given_as_the_cache_is_left_as_it_is_and_not_used(
    apps: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    shared = tmp_path / "tmp"
    shared.mkdir()
    os.chmod(shared, 0o1777)  # noqa: S103 (what /tmp is)
    with caplog.at_level(logging.WARNING):
        catalog, loads = start(apps, shared)
    assert stat.S_IMODE(os.stat(shared).st_mode) == 0o1777
    assert len(catalog.entries) == 5 and loads.last_counts.checked == 5
    assert "shared with other users (such as /tmp): choose one of your own" in caplog.text
    assert not (shared / DATABASE).exists()


def test_two_builds_sharing_a_cache_keep_their_own_rows_and_each_start_stays_warm(
    apps: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    start(apps, cache, "build-1")
    start(apps, cache, "build-2")  # another install of the gateway, its first start

    for build in ("build-1", "build-2", "build-1"):
        catalog, loads = start(apps, cache, build)
        assert (loads.last_counts.checked, loads.last_counts.cached) == (0, 5)
        assert len(catalog.entries) == 5


def test_a_build_that_wrote_nothing_for_a_month_loses_its_rows_when_another_writes(
    apps: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    start(apps, cache, "old-build")
    month_ago = time.time() - (UNUSED_BUILD_DAYS + 1) * 86_400
    with sqlite3.connect(cache / DATABASE) as db:
        db.execute("UPDATE builds SET used_at = ?", (month_ago,))

    start(apps, cache, "new-build")

    with sqlite3.connect(cache / DATABASE) as db:
        builds = {build for (build,) in db.execute("SELECT DISTINCT build FROM outcomes")}
        snapshot_builds = {build for (build,) in db.execute("SELECT build FROM snapshots")}
        noted = {build for (build,) in db.execute("SELECT build FROM builds")}
    assert builds == snapshot_builds == noted == {"new-build"}


def test_a_gateway_running_for_months_keeps_its_rows_while_it_writes_and_none_outlives_its_build(
    apps: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = [time.time()]
    monkeypatch.setattr(time, "time", lambda: clock[0])  # the cache's clock
    running = FileLoads("linux", CardCache(tmp_path / "cache", "linux", "running"))
    build_catalog(sources(apps), "linux", running)
    for _ in range(3):  # a month and more later, the same process still writes (apps edited)
        clock[0] += (UNUSED_BUILD_DAYS // 2) * 86_400
        write_app(apps, f"dev.test.day{int(clock[0])}")
        build_catalog(sources(apps), "linux", running)

    start(apps, tmp_path / "cache", "other")  # another install writes: the running one is in use

    with sqlite3.connect(tmp_path / "cache" / DATABASE) as db:
        kept = {build for (build,) in db.execute("SELECT DISTINCT build FROM outcomes")}
    assert kept == {"running", "other"}

    clock[0] += (UNUSED_BUILD_DAYS + 1) * 86_400  # both gone for a month; a third writes
    start(apps, tmp_path / "cache", "third")
    with sqlite3.connect(tmp_path / "cache" / DATABASE) as db:
        kept = {build for (build,) in db.execute("SELECT DISTINCT build FROM outcomes")}
    assert kept == {"third"}


def test_a_checkout_edited_again_and_again_keeps_the_rows_of_its_latest_builds_only(
    apps: Path, tmp_path: Path
) -> None:
    builds = [f"edit-{number}" for number in range(BUILDS_KEPT + 3)]
    for build in builds:  # each edit of the gateway's code is a build of its own
        start(apps, tmp_path / "cache", build)

    with sqlite3.connect(tmp_path / "cache" / DATABASE) as db:
        kept = {build for (build,) in db.execute("SELECT DISTINCT build FROM outcomes")}
    assert kept == set(builds[-BUILDS_KEPT:])


def test_a_database_of_another_format_is_left_to_its_gateway_and_removed_by_clear(
    apps: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    other = cache / "descriptor-cards.sqlite3"  # the format before this one, of an older install
    with sqlite3.connect(other) as db:
        db.execute("CREATE TABLE outcomes (path TEXT PRIMARY KEY)")
        db.execute("PRAGMA user_version = 5")
    before = other.read_bytes()

    start(apps, cache)
    _, loads = start(apps, cache)

    assert loads.last_counts.cached == 5 and other.read_bytes() == before
    CardCache(cache, "linux").clear()
    assert sorted(path.name for path in cache.iterdir()) == []
