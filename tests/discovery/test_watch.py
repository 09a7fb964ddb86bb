"""The catalog watcher rebuilds only when the sources changed, and never forgets a change whose
rebuild failed."""

from __future__ import annotations

from pathlib import Path

import pytest

from aai_gateway.discovery import catalog as catalog_module
from aai_gateway.discovery import watch
from aai_gateway.discovery.sources import Pattern, SourceSpec
from aai_gateway.discovery.watch import CatalogWatcher
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
