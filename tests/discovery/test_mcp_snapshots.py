"""The store of MCP servers' tool snapshots: one private file per app, written whole or not at all,
stale once the descriptor's execution section changes, and whatever a file holds, never a crash."""

from __future__ import annotations

import json
import logging
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from aai_gateway.descriptor import AppDescriptor
from aai_gateway.descriptor.mcp_wire import MAX_TOOLS
from aai_gateway.discovery.catalog import CatalogEntry, load_file
from aai_gateway.discovery.mcp_snapshots import (
    MAX_INSTRUCTIONS_CHARS,
    MAX_SNAPSHOT_BYTES,
    ServerInfo,
    Snapshot,
    SnapshotStore,
)
from aai_gateway.discovery.web_cache import WebCache
from tests.builders import mcp_descriptor, write_json

TOOLS: list[Any] = [
    {"name": "get_time", "description": "Now", "inputSchema": {"type": "object"}},
    {"name": "convert_time", "inputSchema": {"type": "object", "properties": {"tz": {"type": "string"}}}},
]
posix_only = pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions and FIFOs")


def app_at(path: Path, app_id: str = "dev.test.time", **execution: Any) -> AppDescriptor:
    write_json(path, mcp_descriptor(app_id, **execution))
    entry = load_file(path, "test", "linux")
    assert isinstance(entry, CatalogEntry), entry
    return entry.descriptor


@pytest.fixture
def app(tmp_path: Path) -> AppDescriptor:
    return app_at(tmp_path / "apps" / "time" / "aai.json")


@pytest.fixture
def store(tmp_path: Path) -> SnapshotStore:
    return SnapshotStore.in_cache(tmp_path / "cache")


def snapshot_of(app: AppDescriptor, tools: list[Any] | None = None, **extra: Any) -> Snapshot:
    return Snapshot.taken(
        app,
        TOOLS if tools is None else tools,
        server=ServerInfo("time", "1.2.0", "Time"),
        taken_at=1_000.0,
        **extra,
    )


# --------------------------------------------------------------------------- round trip


def test_a_saved_snapshot_loads_back_as_it_was_and_is_listed(
    store: SnapshotStore, app: AppDescriptor
) -> None:
    snapshot = snapshot_of(app, instructions="Ask for times in IANA zones")

    path = store.save(app, snapshot)

    assert store.load(app) == snapshot
    assert store.list() == [snapshot]
    assert path.parent == store.root and path.name.endswith(".json") and len(path.stem) == 32
    assert (snapshot.listed, snapshot.server, snapshot.fingerprint) == (
        2,
        ServerInfo("time", "1.2.0", "Time"),
        snapshot.fingerprint,
    )


def test_forget_and_clear_remove_snapshots_and_nothing_else(store: SnapshotStore, tmp_path: Path) -> None:
    first = app_at(tmp_path / "a" / "aai.json", "dev.test.a")
    second = app_at(tmp_path / "b" / "aai.json", "dev.test.b")
    store.save(first, snapshot_of(first))
    store.save(second, snapshot_of(second))
    (store.root / "notes.txt").write_text("the user's own file")

    assert store.forget(first) and not store.forget(first)
    assert [s.app_id for s in store.list()] == ["dev.test.b"]
    assert store.clear() == 1
    assert store.list() == [] and sorted(p.name for p in store.root.iterdir()) == ["notes.txt"]


def test_one_app_id_from_two_files_has_two_snapshots(store: SnapshotStore, tmp_path: Path) -> None:
    here = app_at(tmp_path / "here" / "aai.json")
    there = app_at(tmp_path / "there" / "aai.json")
    store.save(here, snapshot_of(here, TOOLS[:1]))
    store.save(there, snapshot_of(there))

    loaded_here, loaded_there = store.load(here), store.load(there)

    assert loaded_here is not None and loaded_there is not None
    assert (loaded_here.listed, loaded_there.listed) == (1, 2)


def test_a_snapshot_of_one_app_cannot_be_saved_as_anothers(store: SnapshotStore, tmp_path: Path) -> None:
    first = app_at(tmp_path / "a" / "aai.json", "dev.test.a")
    second = app_at(tmp_path / "b" / "aai.json", "dev.test.b")

    with pytest.raises(ValueError, match=r"dev\.test\.a"):
        store.save(second, snapshot_of(first))


@posix_only
def test_files_are_the_owners_alone_in_a_folder_only_the_owner_enters(
    store: SnapshotStore, app: AppDescriptor
) -> None:
    store.root.mkdir(parents=True, mode=0o755)
    os.chmod(store.root, 0o755)  # noqa: S103 (a folder someone made readable by all, before)

    path = store.save(app, snapshot_of(app))

    assert stat.S_IMODE(os.stat(store.root).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert sorted(p.name for p in store.root.iterdir()) == [path.name]  # no temporary file left


def test_the_server_list_is_bounded_and_its_text_cleaned_when_taken(app: AppDescriptor) -> None:
    tools = [{"name": f"t{i}", "inputSchema": {"type": "object"}} for i in range(10_000)]
    server = ServerInfo("evil\u202e\x1b[2J", "1.0\nfake line", "x" * 1_000)

    snapshot = Snapshot.taken(app, tools, server=server, instructions="i" * 100_000 + "\u2066")

    assert (len(snapshot.tools), snapshot.listed) == (MAX_TOOLS, 10_000)
    assert snapshot.server is not None
    assert (snapshot.server.name, snapshot.server.version) == ("evil", "1.0 fake line")
    assert snapshot.server.title is not None and len(snapshot.server.title) == 200
    assert snapshot.instructions is not None and len(snapshot.instructions) == MAX_INSTRUCTIONS_CHARS


# --------------------------------------------------------------------------- stale


def test_a_snapshot_is_stale_once_the_execution_section_changes_and_not_for_its_timeout(
    tmp_path: Path,
) -> None:
    path = tmp_path / "apps" / "time" / "aai.json"
    before = app_at(path, command="uvx", args=["mcp-server-time"])
    snapshot = snapshot_of(before)

    retimed = app_at(path, command="uvx", args=["mcp-server-time"], timeout=90_000)
    renamed = mcp_descriptor("dev.test.time", name="Another name", command="uvx", args=["mcp-server-time"])
    write_json(path, renamed)
    renamed_app = load_file(path, "test", "linux")
    other_args = app_at(path, command="uvx", args=["mcp-server-time", "--local-timezone=UTC"])
    other_env = app_at(path, command="uvx", args=["mcp-server-time"], env={"TZ": {"env": "MY_TZ"}})
    elsewhere = app_at(tmp_path / "elsewhere" / "aai.json", command="uvx", args=["mcp-server-time"])

    assert isinstance(renamed_app, CatalogEntry)
    assert not snapshot.is_stale_for(retimed) and not snapshot.is_stale_for(renamed_app.descriptor)
    assert snapshot.is_stale_for(other_args) and snapshot.is_stale_for(other_env)
    assert snapshot.is_stale_for(elsewhere)  # another file: another binding


# --------------------------------------------------------------------------- hostile files


def saved_document(store: SnapshotStore, app: AppDescriptor) -> tuple[Path, dict[str, Any]]:
    path = store.save(app, snapshot_of(app))
    document: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return path, document


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"{not json", "it is not a snapshot the gateway wrote (JSONDecodeError)"),
        (b"\xff\xfe", "it is not a snapshot the gateway wrote (UnicodeDecodeError)"),
        (b"[" * 100_000 + b"]" * 100_000, "nested too deep"),
        (b'{"format": 1, "taken_at": NaN}', "it is not a snapshot the gateway wrote (ValueError)"),
        (b"1" * 5_000, "it is not a snapshot the gateway wrote (ValueError)"),
        (b"null", "the top level"),
        (b"", "JSONDecodeError"),
    ],
    ids=["not JSON", "not UTF-8", "deep", "NaN", "huge integer", "null", "empty"],
)
def test_a_file_that_is_not_a_snapshot_counts_as_absent_and_is_logged(
    store: SnapshotStore, app: AppDescriptor, caplog: pytest.LogCaptureFixture, content: bytes, reason: str
) -> None:
    path, _ = saved_document(store, app)
    path.write_bytes(content)

    with caplog.at_level(logging.WARNING):
        assert store.load(app) is None
        assert store.list() == []

    assert f"ignoring the MCP tool snapshot {path}" in caplog.text
    assert reason in caplog.text


@pytest.mark.parametrize(
    ("change", "where"),
    [
        ({"format": 2}, "format"),
        ({"taken_at": "yesterday"}, "taken_at"),
        ({"taken_at": -5}, "taken_at"),
        ({"fingerprint": "x"}, "fingerprint"),
        ({"app_id": 7}, "app_id"),
        ({"tools": {"name": "t"}}, "tools"),
        ({"tools": [{}] * (MAX_TOOLS + 1)}, "tools"),
        ({"listed": True}, "listed"),
        ({"instructions": "i" * (MAX_INSTRUCTIONS_CHARS + 1)}, "instructions"),
        ({"server": {"name": "x"}}, "server/version"),
    ],
    ids=lambda v: str(v)[:40],
)
def test_a_snapshot_with_a_field_of_the_wrong_shape_counts_as_absent(
    store: SnapshotStore,
    app: AppDescriptor,
    caplog: pytest.LogCaptureFixture,
    change: dict[str, Any],
    where: str,
) -> None:
    path, document = saved_document(store, app)
    path.write_text(json.dumps({**document, **change}), encoding="utf-8")

    with caplog.at_level(logging.WARNING):
        assert store.load(app) is None

    assert f"({where}: " in caplog.text


def test_a_file_larger_than_the_limit_is_not_read(
    store: SnapshotStore, app: AppDescriptor, caplog: pytest.LogCaptureFixture
) -> None:
    path, document = saved_document(store, app)
    path.write_text(json.dumps({**document, "padding": "x" * MAX_SNAPSHOT_BYTES}), encoding="utf-8")

    with caplog.at_level(logging.WARNING):
        assert store.load(app) is None

    assert f"it is not a regular file of at most {MAX_SNAPSHOT_BYTES} bytes" in caplog.text


def test_a_snapshot_copied_under_another_apps_name_is_not_that_apps(
    store: SnapshotStore, app: AppDescriptor, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    other = app_at(tmp_path / "other" / "aai.json", "dev.test.other")
    path, _ = saved_document(store, app)
    os.replace(path, store.path_for(other))

    with caplog.at_level(logging.WARNING):
        assert store.load(other) is None
        assert store.list() == []

    assert "it was written for another app" in caplog.text
    assert "its name does not match the app it holds" in caplog.text


LOAD_IN_A_CHILD = """
import sys
from pathlib import Path
from aai_gateway.discovery.catalog import load_file
from aai_gateway.discovery.mcp_snapshots import SnapshotStore
entry = load_file(Path(sys.argv[1]), "test", "linux")
print(SnapshotStore(Path(sys.argv[2])).load(entry.descriptor), SnapshotStore(Path(sys.argv[2])).list())
"""


@posix_only
def test_a_fifo_a_folder_or_a_symlink_in_place_of_a_snapshot_never_blocks_or_is_followed(
    store: SnapshotStore, app: AppDescriptor, tmp_path: Path
) -> None:
    _, document = saved_document(store, app)
    path = store.path_for(app)
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text(json.dumps(document), encoding="utf-8")

    path.unlink()
    os.mkfifo(path)  # opened blocking, reading it would wait for a writer forever: in a child
    child = [sys.executable, "-c", LOAD_IN_A_CHILD, app.source.location, str(store.root)]
    done = subprocess.run(child, capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.split() == ["None", "[]"]
    path.unlink()
    path.mkdir()
    assert store.load(app) is None
    path.rmdir()
    path.symlink_to(elsewhere)
    assert store.load(app) is None


def test_clearing_the_web_cache_leaves_snapshots_alone(
    store: SnapshotStore, app: AppDescriptor, tmp_path: Path
) -> None:
    web = WebCache(tmp_path / "cache")
    web.put("https://example.com", "https://example.com/.well-known/aai.json", b"{}")
    store.save(app, snapshot_of(app))

    assert [e.origin for e in web.entries()] == ["https://example.com"]
    assert web.clear() == 1

    assert store.load(app) is not None
