"""The catalog watcher rebuilds only when the sources changed, and never forgets a change whose
rebuild failed."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from aai_gateway.discovery import catalog as catalog_module
from aai_gateway.discovery import loading, watch
from aai_gateway.discovery.sources import Pattern, SourceSpec
from aai_gateway.discovery.watch import CatalogWatcher
from aai_gateway.errors import AppChangedError
from tests.builders import c_descriptor, write_json


def sources(folder: Path) -> list[SourceSpec]:
    return [SourceSpec("--path", folder, Pattern.FILES_AND_APP_DIRS, explicit=True)]


def test_a_poll_without_changes_builds_nothing_and_one_after_a_new_file_lists_its_app(tmp_path: Path) -> None:
    watcher = CatalogWatcher(sources(tmp_path), "linux")
    assert watcher.poll() is None

    write_json(tmp_path / "new.json", c_descriptor("dev.test.new", type="http", baseUrl="http://127.0.0.1:9"))
    catalog = watcher.poll()

    assert catalog is not None and catalog.get("dev.test.new") is not None
    assert watcher.poll() is None


def test_a_change_whose_rebuild_failed_is_rebuilt_by_the_next_poll(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    watcher = CatalogWatcher(sources(tmp_path), "linux")
    write_json(tmp_path / "new.json", c_descriptor("dev.test.new", type="http", baseUrl="http://127.0.0.1:9"))
    real_build = catalog_module.build_catalog

    def failing_build(*args: object, **kwargs: object) -> object:
        raise OSError("the disk went away for a moment")

    monkeypatch.setattr(watch, "build_catalog", failing_build)
    with pytest.raises(OSError):
        watcher.poll()
    monkeypatch.setattr(watch, "build_catalog", real_build)

    catalog = watcher.poll()
    assert catalog is not None and catalog.get("dev.test.new") is not None


def whole_seconds(info: os.stat_result) -> str:
    """`file_stamp` on a file system that keeps whole seconds (HFS+, FAT, ext4 with small inodes,
    some network file systems): two saves within one second, at one size, have one stamp."""
    return f"{info.st_ino}:{info.st_size}:{info.st_mtime_ns // 10**9}"


def test_a_file_saved_again_within_its_time_stamp_is_read_again_and_never_runs_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for module in (catalog_module, watch, loading):
        monkeypatch.setattr(module, "file_stamp", whole_seconds)
    path, now = tmp_path / "app.json", time.time_ns()

    def save(app_id: str) -> None:  # an editor saving twice within one second
        write_json(path, c_descriptor(app_id, type="http", baseUrl="http://127.0.0.1:9"))
        os.utime(path, ns=(now, now))

    watcher = CatalogWatcher(sources(tmp_path), "linux")
    save("dev.test.aaa")
    first = watcher.poll()
    assert first is not None and first.entries[0].descriptor.id == "dev.test.aaa"

    save("dev.test.bbb")
    with pytest.raises(AppChangedError):  # what runs is what the file holds now
        _ = first.entries[0].descriptor
    catalog = watcher.poll()  # the notice of the second save: the stamps are as they were
    assert catalog is not None and [entry.card.id for entry in catalog.entries] == ["dev.test.bbb"]
    assert catalog.entries[0].descriptor.id == "dev.test.bbb"


def test_a_file_dated_an_hour_ahead_is_read_once_and_idle_polls_read_nothing(tmp_path: Path) -> None:
    path = tmp_path / "app.json"
    write_json(path, c_descriptor("dev.test.ahead", type="http", baseUrl="http://127.0.0.1:9"))
    ahead = time.time_ns() + 3_600 * 10**9  # unzipped from an archive made by a clock an hour ahead
    os.utime(path, ns=(ahead, ahead))
    read: list[int] = []

    watcher = CatalogWatcher(sources(tmp_path), "linux", on_reading=read.append)
    assert watcher.catalog.get("dev.test.ahead") is not None
    for _ in range(3):
        assert watcher.poll() is None

    assert read == [1]
