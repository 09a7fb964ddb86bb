"""An MCP server behind the gateway, end to end: the SDK's client (both protocol generations)
talks to a gateway process over stdio, which talks to the test MCP server
(tests/executors/mcp_upstream.py) it started. Results arrive as the server gave them; progress,
questions and cancellation cross the gateway."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.client import ClientRequestContext

from aai_gateway.executors.mcp_progress import BURST, MESSAGE_CHARS, PER_SECOND
from tests.builders import trusting_config, write_json
from tests.executors.mcp_support import PNG_DATA, mcp_document, process_alive
from tests.server.conftest import connected

pytestmark = pytest.mark.anyio

APP = "dev.test.upstream"


@pytest.fixture(scope="module")
def apps(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("mcp-e2e") / "apps"
    markers = folder.parent / "markers"
    markers.mkdir()
    write_json(
        folder / "upstream" / "aai.json",
        mcp_document(app_id=APP, name="Paint Shop", args=["--marker-dir", str(markers)], timeout_ms=20_000),
    )
    trusting_config(folder.parent / "config.toml", [APP])
    return folder


class Questions:
    """The client's side of elicitation: records each question, accepts with a color."""

    def __init__(self) -> None:
        self.asked: list[types.ElicitRequestParams] = []

    async def __call__(
        self, context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult | types.ErrorData:
        self.asked.append(params)
        return types.ElicitResult(action="accept", content={"color": "teal"})


@pytest.fixture(scope="module")
def questions() -> Questions:
    return Questions()


@pytest.fixture(scope="module")
async def gateway(apps: Path, mode: str, questions: Questions) -> AsyncIterator[Client]:
    async with connected(apps, mode, name="agent-mcp", elicitation_callback=questions) as client:
        yield client


async def exec_tool(
    client: Client, tool: str, args: dict[str, Any] | None = None, **options: Any
) -> types.CallToolResult:
    return await client.call_tool("aai_exec", {"app": APP, "tool": tool, "args": args or {}}, **options)


async def test_every_kind_of_content_reaches_the_client_as_the_server_gave_it(gateway: Client) -> None:
    result = await exec_tool(gateway, "blocks")

    assert result.is_error is False
    assert [block.type for block in result.content] == [
        "text",
        "image",
        "audio",
        "resource_link",
        "resource",
        "resource",
    ]
    image = result.content[1]
    assert isinstance(image, types.ImageContent) and image.data == PNG_DATA and image.mime_type == "image/png"
    link = result.content[3]
    assert isinstance(link, types.ResourceLink) and str(link.uri) == "file:///tmp/report.txt"
    embedded = result.content[4]
    assert isinstance(embedded, types.EmbeddedResource)
    assert (
        isinstance(embedded.resource, types.TextResourceContents)
        and embedded.resource.text == "embedded text"
    )
    assert result.structured_content == {"kinds": 6, "nested": {"list": [1, 2, 3]}}


async def test_a_tools_own_failure_reaches_the_client_as_is_error_with_the_servers_words(
    gateway: Client,
) -> None:
    result = await exec_tool(gateway, "tool_error")

    assert result.is_error is True
    assert [block.model_dump(exclude_none=True) for block in result.content] == [
        {"type": "text", "text": "the disk is full"}
    ]


async def test_an_error_of_the_server_is_an_aai_error_naming_the_app_and_the_tool(gateway: Client) -> None:
    result = await exec_tool(gateway, "protocol_error")

    assert result.is_error is True
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    error = json.loads(block.text)["error"]
    assert error["code"] == "EXECUTION_FAILED"
    assert error["data"]["app"] == APP and error["data"]["tool"] == "protocol_error"


async def test_progress_of_the_server_reaches_the_client(gateway: Client) -> None:
    seen: list[tuple[float, float | None, str | None]] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        seen.append((done, total, message))

    result = await exec_tool(gateway, "progress", progress_callback=progress)

    assert result.is_error is False
    assert seen == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]


async def test_a_server_that_floods_progress_reaches_the_client_as_a_bounded_trickle(gateway: Client) -> None:
    seen: list[tuple[float, float | None, str | None]] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        seen.append((done, total, message))

    started = anyio.current_time()
    result = await exec_tool(
        gateway, "progress", {"count": 5000, "message_size": 100_000}, progress_callback=progress
    )
    elapsed = anyio.current_time() - started

    assert result.is_error is False
    assert seen[-1:] == [(5000, 5000, "step 5000")]  # the report that completes the work always passes
    assert len(seen) <= BURST + PER_SECOND * elapsed + 1
    assert [done for done, _, _ in seen] == sorted({done for done, _, _ in seen})
    first = seen[0][2]
    assert first is not None and first.startswith("step 1") and len(first) <= MESSAGE_CHARS
    assert "\n" not in first and "\u202e" not in first


async def test_a_question_of_the_server_reaches_the_user_naming_the_app_or_is_declined_when_it_cannot(
    gateway: Client, mode: str, questions: Questions
) -> None:
    questions.asked.clear()

    result = await exec_tool(gateway, "ask")

    if mode == "legacy":  # 2025-11-25: the gateway asks during the call
        assert len(questions.asked) == 1
        assert questions.asked[0].message == "Paint Shop asks: Which color?"
        assert result.structured_content == {"action": "accept", "content": {"color": "teal"}}
    else:  # 2026-07-28: nobody can be asked in the middle of the gateway's call
        assert questions.asked == []
        assert result.structured_content == {"action": "decline", "content": None}


async def test_a_call_the_client_cancels_is_cancelled_at_the_server(gateway: Client, apps: Path) -> None:
    markers = apps.parent / "markers"
    pid_result = await exec_tool(gateway, "pid")
    pid_block = pid_result.content[0]
    assert isinstance(pid_block, types.TextContent)
    hanging, marker = markers / f"hanging-{pid_block.text}", markers / f"cancelled-{pid_block.text}"

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(exec_tool, gateway, "hang")
        with anyio.fail_after(10):  # the call has reached the server
            while not hanging.exists():  # noqa: ASYNC110
                await anyio.sleep(0.02)
        tasks.cancel_scope.cancel()

    with anyio.fail_after(10):
        while not marker.exists():  # noqa: ASYNC110
            await anyio.sleep(0.05)
    hanging.unlink()
    marker.unlink()
    echoed = await exec_tool(gateway, "echo", {"text": "still here"})
    assert echoed.structured_content is not None and echoed.structured_content["text"] == "still here"


async def test_when_the_gateway_exits_no_server_nor_what_it_started_is_left(apps: Path, mode: str) -> None:
    markers = apps.parent / "markers"
    async with connected(apps, mode, name="agent-exit") as client:
        server_pid = int(_text(await exec_tool(client, "pid")))
        grandchild = int(_text(await exec_tool(client, "grandchild")))
        assert process_alive(server_pid) and process_alive(grandchild)

    with anyio.fail_after(10):  # the client closed the gateway's stdin: it stops what it started
        while process_alive(server_pid) or process_alive(grandchild):  # noqa: ASYNC110
            await anyio.sleep(0.05)
    assert (markers / "grandchild.pid").exists()


def _text(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text
