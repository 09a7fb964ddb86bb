"""`aai-gateway cache` and `scan` with MCP servers' tool snapshots: what is kept, how old, whether
it still fits its descriptor, and what `cache refresh` does while no mcp executor is installed."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from aai_gateway.cli.main import main
from aai_gateway.descriptor.mcp_wire import MAX_TOOLS
from aai_gateway.discovery.card_cache import DATABASE
from aai_gateway.discovery.catalog import CatalogEntry, load_file
from aai_gateway.discovery.mcp_snapshots import ServerInfo, Snapshot, SnapshotStore
from aai_gateway.discovery.web_cache import WebCache
from tests.builders import mcp_descriptor, write_json
from tests.snapshot_upstream import UpstreamTools

TOOLS: list[Any] = [
    {"name": "get_time", "inputSchema": {"type": "object"}},
    {"name": "bad name", "inputSchema": {"type": "object"}},
]
DISCOVERY = ("--no-default-paths", "--path")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("AAI_GATEWAY_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("COLUMNS", "300")  # tables fit the terminal: room for whole cells
    return tmp_path / "cache"


def add_app(apps: Path, app_id: str, cache: Path, *, taken_minutes_ago: float | None = 90) -> Path:
    """An mcp descriptor in `apps`, and (unless None) a snapshot of its server taken then."""
    path = write_json(apps / app_id / "aai.json", mcp_descriptor(app_id, command="/nonexistent/server"))
    if taken_minutes_ago is not None:
        entry = load_file(path, "test", "linux")
        assert isinstance(entry, CatalogEntry)
        taken_at = time.time() - taken_minutes_ago * 60
        snapshot = Snapshot.taken(
            entry.descriptor, TOOLS, server=ServerInfo("clock", "3.1.0"), taken_at=taken_at
        )
        SnapshotStore.in_cache(cache).save(entry.descriptor, snapshot)
    return path


def test_cache_shows_each_snapshot_with_its_tools_age_and_state(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, cache: Path
) -> None:
    apps = tmp_path / "apps"
    add_app(apps, "dev.test.current", cache)
    stale = add_app(apps, "dev.test.stale", cache, taken_minutes_ago=5)
    write_json(stale, mcp_descriptor("dev.test.stale", command="/nonexistent/server", args=["--v2"]))
    gone = add_app(apps, "dev.test.gone", cache)
    gone.unlink()

    code, out, _ = run(capsys, "cache", *DISCOVERY, str(apps))
    _, listed, _ = run(capsys, "cache", "list", "--json", *DISCOVERY, str(apps))

    assert code == 0
    rows = {line.split()[0]: line for line in out.splitlines() if line.startswith("dev.test.")}
    assert rows["dev.test.current"].split()[1:6] == ["clock", "3.1.0", "2", "1.5", "h"]
    assert "current" in rows["dev.test.current"]
    assert "5 min ago" in rows["dev.test.stale"] and "stale: the descriptor changed" in rows["dev.test.stale"]
    assert "no descriptor found" in rows["dev.test.gone"]
    assert f"Tool snapshots of MCP servers (3, {cache / 'mcp-snapshots'})" in out
    states = {s["app"]: (s["state"], s["tools"], s["listed"]) for s in json.loads(listed)["mcp_snapshots"]}
    assert states == {
        "dev.test.current": ("current", ["get_time", "bad name"], 2),
        "dev.test.stale": ("stale", ["get_time", "bad name"], 2),
        "dev.test.gone": ("no descriptor found", ["get_time", "bad name"], 2),
    }


def test_a_snapshot_cut_at_the_most_tools_kept_says_more_than_that_not_how_many_were_read(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, cache: Path
) -> None:
    path = write_json(tmp_path / "apps" / "big" / "aai.json", mcp_descriptor("dev.test.big", command="/x"))
    entry = load_file(path, "test", "linux")
    assert isinstance(entry, CatalogEntry)
    read = [{"name": f"t{i}", "inputSchema": {"type": "object"}} for i in range(MAX_TOOLS + 5)]
    SnapshotStore.in_cache(cache).save(entry.descriptor, Snapshot.taken(entry.descriptor, read))

    code, out, _ = run(capsys, "cache", *DISCOVERY, str(tmp_path / "apps"))

    (row,) = [line for line in out.splitlines() if line.startswith("dev.test.big")]
    assert code == 0 and f"> {MAX_TOOLS}" in row and str(MAX_TOOLS + 5) not in row


def test_an_empty_cache_says_so_for_both_kinds(capsys: pytest.CaptureFixture[str], cache: Path) -> None:
    code, out, _ = run(capsys, "cache")

    assert code == 0
    assert f"No web descriptors are cached ({cache})." in out
    assert f"No tool snapshots of MCP servers are kept ({cache / 'mcp-snapshots'})." in out


def test_cache_clear_removes_snapshots_too_and_one_apps_alone(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, cache: Path
) -> None:
    apps = tmp_path / "apps"
    for app_id in ("dev.test.a", "dev.test.b", "dev.test.c"):
        add_app(apps, app_id, cache)
    WebCache(cache).put("https://example.com", "https://example.com/.well-known/aai.json", b"{}")

    _, one, _ = run(capsys, "cache", "clear", "dev.test.a")
    left = [s.app_id for s in SnapshotStore.in_cache(cache).list()]
    _, everything, _ = run(capsys, "cache", "clear")

    assert one.startswith("removed 0 cached descriptors and 1 tool snapshot (dev.test.a)")
    assert left == ["dev.test.b", "dev.test.c"]
    assert everything.startswith("removed 1 cached descriptor and 2 tool snapshots (everything)")
    assert SnapshotStore.in_cache(cache).list() == [] and WebCache(cache).entries() == []


def test_cache_refresh_of_a_server_that_cannot_start_says_why_and_keeps_no_snapshot(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, cache: Path
) -> None:
    apps = tmp_path / "apps"
    add_app(apps, "dev.test.time", cache, taken_minutes_ago=None)

    code, _, err = run(capsys, "cache", "refresh", "dev.test.time", *DISCOVERY, str(apps))

    assert code == 2
    assert "dev.test.time is not reachable" in err and "'/nonexistent/server' was not found" in err
    assert SnapshotStore.in_cache(cache).list() == []


def test_scan_shows_where_an_mcp_apps_tools_come_from_and_the_tools_left_out(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, cache: Path
) -> None:
    apps = tmp_path / "apps"
    taken = add_app(apps, "dev.test.taken", cache)
    add_app(apps, "dev.test.waiting", cache, taken_minutes_ago=None)

    code, out, _ = run(capsys, "scan", *DISCOVERY, str(apps))
    _, listed, _ = run(capsys, "scan", "--json", *DISCOVERY, str(apps))

    assert code == 0
    rows = {line.split()[0]: line for line in out.splitlines() if line.startswith("dev.test.")}
    assert " mcp " in rows["dev.test.taken"] and "1 (snapshot 1.5 h)" in rows["dev.test.taken"]
    assert "- (read on first use)  no: MCP server command '/nonexistent/serve" in rows["dev.test.waiting"]
    assert "Tools of MCP servers (1 problem)" in out
    assert f"{taken} (tools/list of its MCP server): /tools/1/name: tool name 'bad name'" in out
    by_id = {app["id"]: app for app in json.loads(listed)["apps"]}
    assert by_id["dev.test.taken"]["tools"] == ["get_time"]
    assert by_id["dev.test.taken"]["server_tools"]["server"] == {
        "name": "clock",
        "version": "3.1.0",
        "title": None,
    }
    assert [p["pointer"] for p in by_id["dev.test.taken"]["server_problems"]] == ["/tools/1/name"]
    assert by_id["dev.test.waiting"]["server_tools"]["snapshot_taken_at"] is None
    assert by_id["dev.test.waiting"]["execution"] == ["mcp"]
    assert "were never read" not in out  # its server cannot run here: reading it would fail


def test_options_given_before_the_action_keep_their_value(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, cache: Path
) -> None:
    """`cache --cache-dir DIR --json --path APPS list` is `cache list --cache-dir DIR ...`."""
    apps, elsewhere = tmp_path / "apps", tmp_path / "elsewhere"
    add_app(apps, "dev.test.before", elsewhere)

    code, out, _ = run(
        capsys, "cache", "--cache-dir", str(elsewhere), "--json", *DISCOVERY, str(apps), "list"
    )
    refreshed, _, refused = run(capsys, "cache", *DISCOVERY, str(apps), "refresh", "dev.test.before")

    assert code == 0
    [snapshot] = json.loads(out)["mcp_snapshots"]
    assert (snapshot["app"], snapshot["state"]) == ("dev.test.before", "current")
    assert refreshed == 2 and "no app" not in refused and "'/nonexistent/server' was not found" in refused


def test_cache_refresh_unread_reads_every_server_never_read_that_can_run_here_one_after_the_other(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, cache: Path
) -> None:
    apps = tmp_path / "apps"
    notes = [{"name": "add_note", "inputSchema": {"type": "object"}}]
    for name, tools in (("clock", TOOLS[:1]), ("notes", notes)):
        upstream = UpstreamTools(tmp_path / f"{name}.json", tools)
        write_json(apps / name / "aai.json", mcp_descriptor(f"dev.test.{name}", **upstream.execution()))
    add_app(apps, "dev.test.broken", cache, taken_minutes_ago=None)  # its command does not exist
    add_app(apps, "dev.test.read", cache)  # read 90 minutes ago: not unread

    _, scanned, _ = run(capsys, "scan", *DISCOVERY, str(apps))
    code, out, err = run(capsys, "cache", "refresh", "--unread", *DISCOVERY, str(apps))
    again, out_again, _ = run(capsys, "cache", "refresh", "--unread", *DISCOVERY, str(apps))

    assert "were never read (dev.test.clock, dev.test.notes)" in scanned
    assert f"Read them now: aai-gateway cache refresh --unread --path={apps}" in scanned
    assert code == 0
    assert "dev.test.clock: 1 tool from" in out and "dev.test.notes: 1 tool from" in out
    assert "[1/2] dev.test.clock…" in err and "[2/2] dev.test.notes…" in err
    assert "Not read, as their servers cannot run here (dev.test.broken)" in err
    taken = {s.app_id for s in SnapshotStore.in_cache(cache).list()}
    assert taken == {"dev.test.clock", "dev.test.notes", "dev.test.read"}
    assert (again, out_again) == (0, "Every MCP server's tools have been read: none to refresh.\n")


def test_cache_refresh_of_several_apps_reports_one_that_cannot_start_and_reads_the_others(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, cache: Path
) -> None:
    apps = tmp_path / "apps"
    upstream = UpstreamTools(tmp_path / "clock.json", TOOLS[:1])
    write_json(apps / "clock" / "aai.json", mcp_descriptor("dev.test.clock", **upstream.execution()))
    add_app(apps, "dev.test.broken", cache, taken_minutes_ago=None)

    code, out, err = run(
        capsys, "cache", "refresh", "dev.test.broken", "dev.test.clock", *DISCOVERY, str(apps)
    )

    assert code == 2
    assert "dev.test.broken is not reachable" in err and "1 of 2 MCP servers could not be read" in err
    assert "dev.test.clock: 1 tool from" in out


def test_cache_refresh_without_an_app_or_unread_says_how_to_ask(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, cache: Path
) -> None:
    code, _, err = run(capsys, "cache", "refresh", *DISCOVERY, str(tmp_path))

    assert code == 2 and "aai-gateway cache refresh --unread" in err


def test_cache_clear_of_a_file_it_cannot_remove_says_which_and_why_without_a_traceback(
    capsys: pytest.CaptureFixture[str], cache: Path
) -> None:
    in_its_place = cache / DATABASE  # a folder where the cache file goes
    in_its_place.mkdir(parents=True)
    (in_its_place / "notes.txt").write_text("someone's")

    code, out, err = run(capsys, "cache", "clear")

    assert (code, out) == (2, "")
    assert err.startswith(
        f"error: could not clear the cache in {cache}: {cache / DATABASE} cannot be removed"
    )


def test_cache_clear_when_the_cache_folder_is_a_file_has_nothing_to_remove(
    capsys: pytest.CaptureFixture[str], cache: Path
) -> None:
    cache.write_text("not a folder")

    code, out, _ = run(capsys, "cache", "clear")

    assert code == 0
    assert out.startswith("removed 0 cached descriptors and 0 tool snapshots (everything)")
