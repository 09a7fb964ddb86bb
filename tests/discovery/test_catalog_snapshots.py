"""Discovery of apps that leave their tools to their MCP server: the tools come from the snapshot
store, never from starting the server; without a (current) snapshot the app has none yet."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from aai_gateway.discovery import build_catalog
from aai_gateway.discovery.catalog import CatalogEntry, load_file
from aai_gateway.discovery.mcp_snapshots import ServerInfo, Snapshot, SnapshotStore
from aai_gateway.discovery.sources import Pattern, SourceSpec
from aai_gateway.discovery.watch import CatalogWatcher
from aai_gateway.guide import render_guide
from tests.builders import c_descriptor, mcp_descriptor, write_json

NEVER_STARTED = "/nonexistent/mcp-server-that-must-never-start"
TOOLS: list[Any] = [
    {"name": "get_time", "description": "Now", "inputSchema": {"type": "object"}},
    {"name": "bad name", "inputSchema": {"type": "object"}},
    {"name": "convert", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": True}},
]


@pytest.fixture
def apps(tmp_path: Path) -> Path:
    folder = tmp_path / "apps"
    write_json(folder / "time" / "aai.json", mcp_descriptor("dev.test.time", command=NEVER_STARTED))
    write_json(folder / "plain.json", c_descriptor("dev.test.plain"))
    return folder


@pytest.fixture
def store(tmp_path: Path) -> SnapshotStore:
    return SnapshotStore.in_cache(tmp_path / "cache")


def sources(folder: Path) -> list[SourceSpec]:
    return [SourceSpec("--path", folder, Pattern.FILES_AND_APP_DIRS, explicit=True)]


def take(store: SnapshotStore, descriptor: Path, tools: list[Any] = TOOLS) -> Snapshot:
    """A snapshot as the mcp executor would take it, written with the store."""
    entry = load_file(descriptor, "test", "linux")
    assert isinstance(entry, CatalogEntry)
    snapshot = Snapshot.taken(entry.descriptor, tools, server=ServerInfo("time-server", "2.0.1"))
    store.save(entry.descriptor, snapshot)
    return snapshot


def entry_of(folder: Path, store: SnapshotStore | None, app_id: str = "dev.test.time") -> CatalogEntry:
    found = build_catalog(sources(folder), "linux", snapshots=store).get(app_id)
    assert found is not None
    return found


def test_without_a_snapshot_the_app_is_in_the_catalog_without_tools_and_its_guide_says_why(
    apps: Path, store: SnapshotStore
) -> None:
    entry = entry_of(apps, store)

    assert entry.descriptor.tools == () and not entry.descriptor.server_tools_read
    assert entry.server_tools is not None and entry.server_tools.taken_at is None
    assert "they are listed here once the gateway has asked the server for them" in render_guide(
        entry.descriptor
    )


def test_a_snapshot_gives_the_app_the_tools_its_server_listed_and_reports_the_rest(
    apps: Path, store: SnapshotStore
) -> None:
    snapshot = take(store, apps / "time" / "aai.json")

    entry = entry_of(apps, store)

    assert [t.name for t in entry.descriptor.tools] == ["get_time", "convert"]
    assert entry.descriptor.server_tools_read
    assert entry.server_tools is not None
    assert (entry.server_tools.taken_at, entry.server_tools.stale, entry.server_tools.listed) == (
        snapshot.taken_at,
        False,
        3,
    )
    assert entry.server_tools.server == ServerInfo("time-server", "2.0.1")
    (problem,) = entry.server_problems
    assert problem.render().startswith(
        f"{apps / 'time' / 'aai.json'} (tools/list of its MCP server): /tools/1/name:"
    )
    assert entry.warnings == ()
    guide = render_guide(entry.descriptor)
    assert "### get_time" in guide and "### convert" in guide and "once the gateway has asked" not in guide


def test_a_server_that_lists_no_tools_is_said_to_list_none(apps: Path, store: SnapshotStore) -> None:
    take(store, apps / "time" / "aai.json", [])

    descriptor = entry_of(apps, store).descriptor

    assert "Its MCP server lists no operations." in render_guide(descriptor)


def test_a_snapshot_of_another_execution_section_is_stale_and_not_applied(
    apps: Path, store: SnapshotStore
) -> None:
    take(store, apps / "time" / "aai.json")
    write_json(
        apps / "time" / "aai.json", mcp_descriptor("dev.test.time", command=NEVER_STARTED, args=["--v2"])
    )

    entry = entry_of(apps, store)

    assert entry.descriptor.tools == () and not entry.descriptor.server_tools_read
    assert entry.server_tools is not None and entry.server_tools.stale
    assert entry.server_tools.taken_at is not None


def test_without_a_store_the_catalog_is_as_before_and_declared_apps_never_change(
    apps: Path, store: SnapshotStore
) -> None:
    take(store, apps / "time" / "aai.json")

    without = entry_of(apps, None)
    plain = entry_of(apps, store, "dev.test.plain")

    assert without.descriptor.tools == () and without.server_tools is None
    assert plain.server_tools is None and [t.name for t in plain.descriptor.tools] == ["ping"]


def test_a_snapshot_saved_while_the_gateway_runs_is_picked_up_by_the_next_poll(
    apps: Path, store: SnapshotStore
) -> None:
    watcher = CatalogWatcher(sources(apps), "linux", store)
    assert watcher.poll() is None

    take(store, apps / "time" / "aai.json")
    catalog = watcher.poll()

    assert catalog is not None
    entry = catalog.get("dev.test.time")
    assert entry is not None and [t.name for t in entry.descriptor.tools] == ["get_time", "convert"]
    assert watcher.poll() is None
