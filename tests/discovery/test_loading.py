"""A start takes every unchanged file's outcome from the sources' snapshot in the card cache,
one document read at once; a file changed since, a snapshot that does not match its digest, or
one of other sources never gives a stale or wrong app."""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path

import pytest

from aai_gateway.discovery import build_catalog
from aai_gateway.discovery.card_cache import DATABASE, CardCache
from aai_gateway.discovery.catalog import snapshot_key
from aai_gateway.discovery.loading import FileLoads
from aai_gateway.discovery.sources import Pattern, SourceSpec
from tests.builders import c_descriptor, write_json
from tests.discovery.cache_support import sources, start, write_app


def snapshot_bodies(cache: Path) -> list[str]:
    with sqlite3.connect(cache / DATABASE) as db:
        return [body for (body,) in db.execute("SELECT body FROM snapshots")]


def test_a_start_after_a_change_writes_the_snapshot_again_and_the_next_reads_everything_from_it(
    apps: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    start(apps, cache)
    write_app(apps, "dev.test.app5")
    _, loads = start(apps, cache)
    assert (loads.last_counts.checked, loads.last_counts.cached) == (1, 5)
    [body] = snapshot_bodies(cache)
    assert "dev.test.app5" in body

    catalog, loads = start(apps, cache)
    assert (loads.last_counts.checked, loads.last_counts.cached) == (0, 6)
    assert sorted(e.card.id for e in catalog.entries) == [f"dev.test.app{n}" for n in range(6)]


def test_a_snapshot_changed_behind_its_digest_is_not_used(apps: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    start(apps, cache)
    with sqlite3.connect(cache / DATABASE) as db:
        db.execute("UPDATE snapshots SET body = replace(body, '\"Notes\"', '\"Forged\"')")
        db.execute("DELETE FROM outcomes")  # nor any row: every file is read again
    catalog, loads = start(apps, cache)
    assert loads.last_counts.checked == 5
    assert {e.card.names.primary for e in catalog.entries} == {"Notes"}


def test_a_file_edited_since_the_snapshot_is_read_again(apps: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    start(apps, cache)
    edited = write_app(apps, "dev.test.app2", name="Renamed")
    catalog, loads = start(apps, cache)
    assert (loads.last_counts.checked, loads.last_counts.cached) == (1, 4)
    assert next(e.card for e in catalog.entries if e.path == str(edited)).names.primary == "Renamed"


def test_a_file_removed_since_the_snapshot_is_not_in_the_catalog(apps: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    start(apps, cache)
    (apps / "dev.test.app4" / "aai.json").unlink()
    catalog, _ = start(apps, cache)
    assert sorted(e.card.id for e in catalog.entries) == [f"dev.test.app{n}" for n in range(4)]
    assert "dev.test.app4" not in snapshot_bodies(cache)[0]


def test_a_file_written_within_the_last_two_seconds_is_left_out_of_the_snapshot(
    apps: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    fresh = write_app(apps, "dev.test.fresh", aged=False)
    start(apps, cache)
    assert str(fresh) not in snapshot_bodies(cache)[0]
    _, loads = start(apps, cache)
    assert loads.last_counts.checked == 1  # still read at each start until it is older


def test_each_set_of_sources_has_its_own_snapshot(apps: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    other = tmp_path / "other"
    write_json(other / "solo.json", {"schemaVersion": "1.0"})  # skipped: a problem, not an app
    os.utime(other / "solo.json", (time.time() - 3600,) * 2)
    start(apps, cache)
    start(other, cache)
    assert len(snapshot_bodies(cache)) == 2
    _, loads = start(apps, cache)
    assert (loads.last_counts.checked, loads.last_counts.cached) == (0, 5)


def test_a_file_read_while_it_may_still_change_is_read_again_and_never_reaches_the_snapshot(
    apps: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    fresh = write_app(apps, "dev.test.fresh", aged=False)
    loads = FileLoads("linux", CardCache(cache, "linux", "build-1"))
    build_catalog(sources(apps), "linux", loads)
    build_catalog(sources(apps), "linux", loads)  # unchanged since, but read while racy: read again
    assert loads.last_counts.checked == 1
    assert str(fresh) not in snapshot_bodies(cache)[0]


def test_a_snapshot_whose_digest_matches_but_whose_cards_are_wrong_is_not_used(
    apps: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    start(apps, cache)
    [body] = snapshot_bodies(cache)
    store = CardCache(cache, "linux", "build-1")
    key = snapshot_key(sources(apps), "linux")
    for wrong in (
        body.replace('"dev.test.app0",{', "12345,{", 1),  # an id that is not a string
        body.replace('"dev.test.app1",{', '"dev.test.app1","names",{', 1),  # a field too many
        body.replace(',"[]"]', ",7]", 1),  # problems that are not JSON text
    ):
        assert wrong != body
        store.store_snapshot(key, wrong)
        catalog, loads = start(apps, cache)
        assert sorted(e.card.id for e in catalog.entries) == [f"dev.test.app{n}" for n in range(5)]
        assert loads.last_counts.checked == 0  # the rows stood in for it


def test_a_snapshot_is_named_by_where_its_folders_are_not_how_they_were_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    relative = [SourceSpec("--path", Path("apps"), Pattern.FILES_AND_APP_DIRS, explicit=True)]
    monkeypatch.chdir(tmp_path)
    here = snapshot_key(relative, "linux")
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    assert snapshot_key(relative, "linux") != here


def test_a_descriptor_whose_file_name_is_not_utf8_loads_and_the_cache_still_works(
    apps: Path, tmp_path: Path
) -> None:
    odd = os.fsdecode(bytes(apps) + b"/\xff.json")
    write_json(Path(odd), c_descriptor("dev.test.odd"))
    os.utime(odd, (time.time() - 3600,) * 2)
    catalog, _ = start(apps, tmp_path / "cache")
    assert "dev.test.odd" in {e.card.id for e in catalog.entries}
    catalog, loads = start(apps, tmp_path / "cache")
    assert "dev.test.odd" in {e.card.id for e in catalog.entries}
    assert (loads.last_counts.checked, loads.last_counts.cached) == (1, 5)  # it alone is read again


def test_a_build_tells_how_many_files_it_is_about_to_read_and_not_those_the_cache_holds(
    apps: Path, tmp_path: Path
) -> None:
    told: list[int] = []

    def start_telling(cache: Path) -> None:
        loads = FileLoads("linux", CardCache(cache, "linux", "build-1"), on_reading=told.append)
        build_catalog(sources(apps), "linux", loads)

    start_telling(tmp_path / "cache")
    write_app(apps, "dev.test.app5")
    start_telling(tmp_path / "cache")
    start_telling(tmp_path / "cache")

    assert told == [5, 1]  # the third start reads nothing, and says nothing
