"""A start takes every unchanged file's outcome from the sources' snapshot in the card cache,
one document read at once; a file changed since, a snapshot that does not match its digest, or
one of other sources never gives a stale or wrong app."""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path

from aai_gateway.discovery.card_cache import DATABASE
from tests.builders import write_json
from tests.discovery.cache_support import start, write_app


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
