"""The mcp executor reads a server's own tools for descriptors that leave them out: a snapshot
of every tool the server lists, what it says it is, and a fresh snapshot whenever the server
says its tools changed — against the test server, in both protocol generations."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from aai_gateway.descriptor import AppDescriptor
from aai_gateway.discovery.mcp_snapshots import Snapshot
from aai_gateway.errors import AaiError, ErrorCode
from aai_gateway.executors import ToolResult
from aai_gateway.executors.mcp import REREAD_SECONDS, McpExecutor
from tests.builders import mcp_descriptor
from tests.executors.mcp_support import ENVIRON, TOOL_NAMES, call, mcp_document, running_executor, write_app
from tests.snapshot_upstream import ReadCountingMcpExecutor, UpstreamTools

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def executor() -> AsyncIterator[McpExecutor]:
    async with running_executor() as executor:
        yield executor


def server_document(legacy: bool) -> dict[str, Any]:
    return mcp_document(app_id=f"dev.test.snapshots{int(legacy)}", args=["--legacy-only"] if legacy else [])


def undeclared_app(tmp_path_factory: pytest.TempPathFactory, legacy: bool) -> AppDescriptor:
    document = server_document(legacy)
    del document["tools"]
    return write_app(tmp_path_factory.mktemp("snapshots"), document)


@pytest.mark.parametrize("legacy", [False, True], ids=["2026-07-28", "2025-11-25"])
async def test_a_snapshot_holds_every_tool_the_server_lists_and_what_the_server_says_it_is(
    executor: McpExecutor, tmp_path_factory: pytest.TempPathFactory, legacy: bool
) -> None:
    app = undeclared_app(tmp_path_factory, legacy)
    assert not app.tools_declared
    snapshot = await executor.take_snapshot(app, {})
    assert not snapshot.is_stale_for(app)
    assert {tool["name"] for tool in snapshot.tools} >= set(TOOL_NAMES) - {"not_upstream"}
    assert snapshot.server is not None and snapshot.server.name


@pytest.mark.parametrize("legacy", [False, True], ids=["2026-07-28", "2025-11-25"])
async def test_when_the_server_says_its_tools_changed_a_new_snapshot_reaches_the_listener(
    executor: McpExecutor, tmp_path_factory: pytest.TempPathFactory, legacy: bool
) -> None:
    app = undeclared_app(tmp_path_factory, legacy)
    first = await executor.take_snapshot(app, {})
    heard: list[tuple[AppDescriptor, Snapshot]] = []
    arrived = anyio.Event()

    async def listener(changed: AppDescriptor, snapshot: Snapshot) -> None:
        heard.append((changed, snapshot))
        arrived.set()

    executor.on_snapshot(listener)
    declared = write_app(tmp_path_factory.mktemp("declared"), server_document(legacy))
    tool = declared.tool("change_tools")
    assert tool is not None
    result = await executor.execute(call(app.model_copy(update={"tools": (tool,)}), "change_tools"))
    assert isinstance(result, ToolResult)
    with anyio.fail_after(10):
        await arrived.wait()
    changed, snapshot = heard[0]
    assert (changed.id, changed.binding) == (app.id, app.binding)
    assert snapshot.taken_at >= first.taken_at
    assert {tool["name"] for tool in snapshot.tools} >= set(TOOL_NAMES) - {"not_upstream"}


@pytest.mark.parametrize(
    ("answer", "code", "message"),
    [
        (
            "error",
            ErrorCode.EXECUTION_FAILED,
            "tools/list failed: the MCP server answered with error -32601: Method not found",
        ),
        ("hang", ErrorCode.TIMEOUT, "tools/list did not finish within 1500 ms and was stopped"),
        (
            "invalid",
            ErrorCode.EXECUTION_FAILED,
            "tools/list: the MCP server answered tools/list with a listing the MCP client refuses (tools/",
        ),
    ],
)
async def test_a_server_that_does_not_list_its_tools_is_an_error_naming_the_app_and_tools_list(
    executor: McpExecutor,
    tmp_path_factory: pytest.TempPathFactory,
    answer: str,
    code: ErrorCode,
    message: str,
) -> None:
    arguments = ["--tools-list", answer, "--legacy-only"]  # its raw answer is a 2025-11-25 one
    document = mcp_document(app_id=f"dev.test.list_{answer}", args=arguments, timeout_ms=1500)
    del document["tools"]
    app = write_app(tmp_path_factory.mktemp("unlisted"), document)

    with pytest.raises(AaiError) as caught:
        await executor.take_snapshot(app, {})

    assert caught.value.code is code
    assert caught.value.message.startswith(f"{app.id} {message}")


async def test_each_time_a_2026_server_says_its_tools_changed_they_are_read_once(tmp_path: Path) -> None:
    """The SDK hands an event of the `subscriptions/listen` stream to the message handler too:
    one announcement must be one read, not two racing ones (the later of which could apply an
    older list after a newer one)."""
    upstream = UpstreamTools(tmp_path / "tools.json", [_tool("first")])
    document = {**mcp_descriptor("dev.test.announces", **upstream.execution()), "platform": "linux"}
    app = write_app(tmp_path / "app", document)
    executor = ReadCountingMcpExecutor()
    expected: list[str] = []
    arrived = anyio.Event()

    async def listener(changed: AppDescriptor, snapshot: Snapshot) -> None:
        if [tool["name"] for tool in snapshot.tools] == expected:
            arrived.set()

    executor.on_snapshot(listener)
    try:
        assert (await executor.take_snapshot(app, {})).tools[0]["name"] == "first"
        for name in ("second", "third"):
            expected[:], arrived = [name], anyio.Event()
            upstream.serve([_tool(name)], announce=True)
            with anyio.fail_after(20):
                await arrived.wait()
    finally:
        await executor.aclose()

    assert executor.taken == [app.id] * 3


async def test_a_server_that_says_its_tools_changed_many_times_at_once_is_read_again_once_or_twice(
    tmp_path: Path,
) -> None:
    upstream = UpstreamTools(tmp_path / "tools.json", [_tool("first")])
    document = {**mcp_descriptor("dev.test.chatty", **upstream.execution()), "platform": "linux"}
    app = write_app(tmp_path / "app", document)
    executor = ReadCountingMcpExecutor()
    arrived = anyio.Event()

    async def listener(changed: AppDescriptor, snapshot: Snapshot) -> None:
        if [tool["name"] for tool in snapshot.tools] == ["second"]:
            arrived.set()

    executor.on_snapshot(listener)
    try:
        await executor.take_snapshot(app, {})
        upstream.serve([_tool("second")], announce=True, times=50)
        with anyio.fail_after(20):
            await arrived.wait()
        await anyio.sleep(REREAD_SECONDS * 1.5)  # a second read, for what was said meanwhile
    finally:
        await executor.aclose()

    assert 2 <= len(executor.taken) <= 3  # the first read, then one or two for the 50 changes


def _tool(name: str) -> dict[str, Any]:
    return {"name": name, "description": name, "inputSchema": {"type": "object"}}


async def snapshot_of_server_listing(tmp_path: Path, tools: list[dict[str, Any]]) -> Snapshot:
    """The snapshot of a test server that lists `tools`, two a page."""
    upstream = UpstreamTools(tmp_path / "tools.json", tools)
    document = {**mcp_descriptor("dev.test.listing", **upstream.execution()), "platform": "linux"}
    app = write_app(tmp_path / "app", document)
    executor = McpExecutor(environ=ENVIRON, kill_grace_seconds=0.5)
    try:
        return await executor.take_snapshot(app, {})
    finally:
        await executor.aclose()


async def test_a_snapshot_follows_every_page_of_a_long_tool_list(tmp_path: Path) -> None:
    """The test server lists two tools a page: 250 tools are 125 pages (a bound of 100 pages once
    left 50 out without a word)."""
    snapshot = await snapshot_of_server_listing(tmp_path, [_tool(f"tool_{number}") for number in range(250)])

    assert len(snapshot.tools) == 250


async def test_a_tool_list_of_more_bytes_than_a_snapshot_keeps_is_read_no_further(tmp_path: Path) -> None:
    """Pages of tools too large to keep (300 KiB each, two a page) once went on until the 1,000th
    tool: gigabytes of memory when each page is 4 MiB."""
    small = [_tool(f"tool_{number}") for number in range(3)]
    large = [{**_tool(f"large_{number}"), "description": "x" * 300_000} for number in range(60)]

    snapshot = await snapshot_of_server_listing(tmp_path, [*small, *large])

    assert snapshot.listed < 40  # 8 MiB of tool JSON, and the page it ended on
    assert [tool["name"] for tool in snapshot.tools[:3]] == ["tool_0", "tool_1", "tool_2"]
