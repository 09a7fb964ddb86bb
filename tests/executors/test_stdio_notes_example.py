"""The shipped notes example, end to end: its aai.json, StdioExecutor and the real notes_adapter.py."""

from __future__ import annotations

import copy
import json
import os
import shutil
import uuid
from pathlib import Path
from typing import Any

import anyio
import jsonschema_rs
import pytest

from aai_gateway.descriptor import AppDescriptor, Source, load_document
from aai_gateway.errors import AppReportedError, ErrorCode
from aai_gateway.executors import Invocation
from aai_gateway.executors.stdio import StdioExecutor

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "dev.aai.example.notes"
DESCRIPTOR = EXAMPLE / "aai.json"

pytestmark = pytest.mark.skipif(
    shutil.which("python3") is None, reason="the example runs `python3 notes_adapter.py`"
)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def example_app(env: dict[str, str] | None = None) -> AppDescriptor:
    """The example descriptor, read from its own folder; `env` is added to its execution."""
    document = json.loads(DESCRIPTOR.read_text(encoding="utf-8"))
    if env is not None:
        document = copy.deepcopy(document)
        document["execution"]["env"] = env
    result = load_document(document, Source(kind="file", location=str(DESCRIPTOR)))
    assert result.descriptor is not None, result.problems
    assert result.warnings == []
    return result.descriptor


def stored_ids(notes_file: Path) -> list[str]:
    return sorted(note["id"] for note in json.loads(notes_file.read_text(encoding="utf-8"))["notes"])


@pytest.fixture
def notes_file(tmp_path: Path) -> Path:
    return tmp_path / "data" / "notes.json"


@pytest.fixture
def app(notes_file: Path) -> AppDescriptor:
    return example_app({"AAI_NOTES_FILE": str(notes_file)})


async def call(app: AppDescriptor, tool_name: str, executor: StdioExecutor | None = None, **args: Any) -> Any:
    """Run one tool and check the result against the tool's `returns` schema."""
    tool = app.tool(tool_name)
    assert tool is not None
    invocation = Invocation(app=app, tool=tool, arguments=args, request_id=uuid.uuid4().hex)
    result = await (executor or StdioExecutor(environ=os.environ)).execute(invocation)
    assert tool.returns is not None
    jsonschema_rs.Draft7Validator(tool.returns, validate_formats=True).validate(result)
    return result


@pytest.mark.anyio
async def test_add_list_search_and_delete_notes_through_the_real_adapter(
    app: AppDescriptor, notes_file: Path
) -> None:
    dentist = await call(
        app, "add_note", title="Dentist", body="Appointment on Friday at 9, bring the X-ray", tags=["health"]
    )
    groceries = await call(app, "add_note", title="Groceries", body="milk, eggs, bread", tags=["home"])
    idea = await call(app, "add_note", title="App idea", body="A notebook for agents", pinned=True)

    assert dentist["title"] == "Dentist" and dentist["tags"] == ["health"] and dentist["pinned"] is False
    assert dentist["created"] == dentist["updated"]
    assert len({dentist["id"], groceries["id"], idea["id"]}) == 3
    assert stored_ids(notes_file) == sorted([dentist["id"], groceries["id"], idea["id"]])

    listed = await call(app, "list_notes")
    assert listed["total"] == 3
    assert [n["id"] for n in listed["notes"]] == [idea["id"], groceries["id"], dentist["id"]]  # pinned first
    assert listed["notes"][1]["snippet"] == "milk, eggs, bread"

    by_title = await call(app, "list_notes", sort="title", limit=2)
    assert [n["title"] for n in by_title["notes"]] == ["App idea", "Dentist"]
    assert by_title["total"] == 3
    assert [n["id"] for n in (await call(app, "list_notes", tag="home"))["notes"]] == [groceries["id"]]
    assert (await call(app, "list_notes", pinned_only=True))["total"] == 1

    found = await call(app, "search_notes", query="FRIDAY x-ray")
    assert [n["id"] for n in found["notes"]] == [dentist["id"]]
    assert "Friday" in found["notes"][0]["snippet"]
    assert (await call(app, "search_notes", query="health", fields=["tags"]))["notes"][0]["id"] == dentist[
        "id"
    ]
    assert (await call(app, "search_notes", query="health", fields=["title", "body"]))["notes"] == []
    assert (await call(app, "search_notes", query="friday milk"))["notes"] == []  # every word must match

    assert await call(app, "delete_note", id=groceries["id"]) == {"deleted": True, "id": groceries["id"]}
    assert await call(app, "delete_note", id=groceries["id"]) == {"deleted": False, "id": groceries["id"]}
    assert (await call(app, "list_notes"))["total"] == 2
    assert stored_ids(notes_file) == sorted([dentist["id"], idea["id"]])
    stray = [
        p.name for p in EXAMPLE.iterdir() if p.suffix in (".json", ".lock", ".tmp") and p.name != "aai.json"
    ]
    assert stray == []  # nothing was written next to the adapter


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("tool", "args", "code", "words"),
    [
        ("add_note", {"title": ""}, ErrorCode.INVALID_PARAMS, "title"),
        ("add_note", {"title": "x", "tags": ["two words"]}, ErrorCode.INVALID_PARAMS, "tags"),
        ("add_note", {"title": "x", "colour": "red"}, ErrorCode.INVALID_PARAMS, "colour"),
        ("list_notes", {"limit": 0}, ErrorCode.INVALID_PARAMS, "limit"),
        ("search_notes", {"query": "x", "fields": ["author"]}, ErrorCode.INVALID_PARAMS, "fields"),
        ("delete_note", {}, ErrorCode.INVALID_PARAMS, "id"),
    ],
)
async def test_bad_parameters_come_back_as_a_clear_invalid_params_error(
    app: AppDescriptor, tool: str, args: dict[str, Any], code: ErrorCode, words: str
) -> None:
    with pytest.raises(AppReportedError) as caught:
        await call(app, tool, **args)

    assert caught.value.code is code
    assert words in caught.value.message


@pytest.mark.anyio
async def test_an_unknown_tool_is_reported_with_the_tools_the_adapter_has(app: AppDescriptor) -> None:
    tool = app.tool("list_notes")
    assert tool is not None
    renamed = tool.model_copy(update={"name": "archive_note"})
    invocation = Invocation(app=app, tool=renamed, arguments={}, request_id="r-1")

    with pytest.raises(AppReportedError) as caught:
        await StdioExecutor(environ=os.environ).execute(invocation)

    assert caught.value.code is ErrorCode.UNKNOWN_TOOL
    assert "archive_note" in caught.value.message and "add_note" in caught.value.message


@pytest.fixture
def corrupt_notes_file(notes_file: Path) -> Path:
    notes_file.parent.mkdir(parents=True)
    notes_file.write_bytes(b"{not json")
    return notes_file


@pytest.mark.anyio
async def test_a_corrupt_notes_file_is_reported_and_left_untouched(
    app: AppDescriptor, corrupt_notes_file: Path
) -> None:
    with pytest.raises(AppReportedError) as caught:
        await call(app, "add_note", title="x")

    assert caught.value.code is ErrorCode.EXECUTION_FAILED
    assert "not valid JSON" in caught.value.message
    assert await anyio.Path(corrupt_notes_file).read_bytes() == b"{not json"


@pytest.mark.skipif(os.name == "nt", reason="the adapter locks with fcntl")
@pytest.mark.anyio
async def test_concurrent_adds_lose_no_note(app: AppDescriptor) -> None:
    executor = StdioExecutor(environ=os.environ)

    async def add(i: int) -> None:
        await call(app, "add_note", executor, title=f"note {i}")

    async with anyio.create_task_group() as tasks:
        for i in range(12):
            tasks.start_soon(add, i)

    listed = await call(app, "list_notes", executor, limit=200)
    assert listed["total"] == 12
    assert sorted(n["title"] for n in listed["notes"]) == sorted(f"note {i}" for i in range(12))


@pytest.mark.anyio
async def test_the_shipped_descriptor_as_is_keeps_notes_under_xdg_data_home(tmp_path: Path) -> None:
    app = example_app()
    gateway_env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path / "home"), "XDG_DATA_HOME": str(tmp_path)}
    executor = StdioExecutor(environ=gateway_env)

    note = await call(app, "add_note", executor, title="Where am I stored?")

    assert stored_ids(tmp_path / "aai-example-notes" / "notes.json") == [note["id"]]
