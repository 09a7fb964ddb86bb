"""The `mcp` executor against Streamable HTTP servers run the ways hosted servers are: stateless (no
session kept between requests, as behind a load balancer), answering each request with one JSON
body instead of an event stream, and both. The server is the SDK's, in its own process
(tests/executors/mcp_upstream.py --http); the session-keeping server is tested in
test_mcp_faults.py and test_mcp_secrets.py."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import anyio
import httpx
import pytest

from aai_gateway.descriptor import AppDescriptor
from aai_gateway.errors import AaiError, ErrorCode
from aai_gateway.executors import ToolResult, UserAnswer
from aai_gateway.executors.mcp import McpExecutor
from tests.executors.mcp_support import (
    TOOL_NAMES,
    Progress,
    User,
    assert_every_kind_of_content,
    call,
    http_upstream,
    mcp_document,
    running_executor,
    write_app,
)

pytestmark = pytest.mark.anyio

MODES = {
    "stateless": ("--stateless",),
    "JSON answers": ("--json-response",),
    "stateless, JSON answers": ("--stateless", "--json-response"),
}


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module", params=list(MODES), ids=list(MODES))
def server_mode(request: pytest.FixtureRequest) -> str:
    mode: str = request.param
    return mode


@pytest.fixture(scope="module")
def server_url(server_mode: str) -> Iterator[str]:
    with http_upstream(*MODES[server_mode]) as url:
        yield url


@pytest.fixture(scope="module")
def app(server_url: str, tmp_path_factory: pytest.TempPathFactory) -> AppDescriptor:
    folder: Path = tmp_path_factory.mktemp("http-modes")
    return write_app(folder, mcp_document(app_id="dev.test.httpmodes", url=server_url, timeout_ms=20_000))


@pytest.fixture(scope="module")
async def executor() -> AsyncIterator[McpExecutor]:
    async with running_executor() as executor:
        yield executor


async def run(executor: McpExecutor, app: AppDescriptor, tool: str, **arguments: object) -> ToolResult:
    with anyio.fail_after(60):  # a call that never ends fails here, saying so
        result = await executor.execute(call(app, tool, dict(arguments)))
    assert isinstance(result, ToolResult)
    return result


async def test_a_call_is_answered_in_the_newest_protocol_generation(
    executor: McpExecutor, app: AppDescriptor
) -> None:
    result = await run(executor, app, "echo", text="hello")

    assert result.content == [{"type": "text", "text": "hello"}]
    assert result.structured_content == {"text": "hello", "protocol": "2026-07-28"}
    assert result.is_error is False


async def test_every_kind_of_content_passes_through_unchanged(
    executor: McpExecutor, app: AppDescriptor
) -> None:
    result = await run(executor, app, "blocks")

    assert_every_kind_of_content(result)


async def test_the_tools_own_failure_is_a_result_with_is_error(
    executor: McpExecutor, app: AppDescriptor
) -> None:
    result = await run(executor, app, "tool_error")

    assert result.is_error is True
    assert result.content == [{"type": "text", "text": "the disk is full"}]


async def test_an_error_response_names_the_app_the_tool_and_the_servers_code(
    executor: McpExecutor, app: AppDescriptor
) -> None:
    with pytest.raises(AaiError) as caught, anyio.fail_after(60):
        await executor.execute(call(app, "protocol_error"))

    assert caught.value.code is ErrorCode.EXECUTION_FAILED
    assert caught.value.message.startswith(
        f"{app.id} protocol_error failed: the MCP server answered with error -32050"
    )
    assert caught.value.data["mcp_error"]["code"] == -32050


async def test_many_calls_in_flight_each_get_their_own_answer(
    executor: McpExecutor, app: AppDescriptor
) -> None:
    answers: dict[int, object] = {}

    async def one(number: int) -> None:
        answers[number] = (await run(executor, app, "echo", text=f"call {number}")).structured_content

    async with anyio.create_task_group() as calls:
        for number in range(16):
            calls.start_soon(one, number)

    assert answers == {n: {"text": f"call {n}", "protocol": "2026-07-28"} for n in range(16)}


async def test_a_question_of_the_server_reaches_the_user_and_the_answer_comes_back(
    executor: McpExecutor, app: AppDescriptor
) -> None:
    user = User(UserAnswer("accept", {"color": "blue"}))

    with anyio.fail_after(60):
        result = await executor.execute(call(app, "ask", ask_user=user))

    assert isinstance(result, ToolResult)
    assert result.structured_content == {"action": "accept", "content": {"color": "blue"}}
    assert [question.message for question in user.questions] == ["Which color?"]


async def test_a_call_that_reports_progress_ends_with_its_result(
    executor: McpExecutor, app: AppDescriptor, server_mode: str
) -> None:
    progress = Progress()

    with anyio.fail_after(60):
        result = await executor.execute(call(app, "progress", progress=progress))

    assert isinstance(result, ToolResult)
    assert result.content == [{"type": "text", "text": "done"}]
    # A server answering with one JSON body has nowhere to send progress before it.
    streamed = "JSON answers" not in server_mode
    assert progress.seen == ([(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")] if streamed else [])


async def test_the_tools_of_an_app_that_leaves_them_to_its_server_are_read_from_it(
    executor: McpExecutor, server_url: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    document = mcp_document(app_id="dev.test.httpmodeslisted", url=server_url, timeout_ms=20_000)
    del document["tools"]
    app = write_app(tmp_path_factory.mktemp("http-modes-listed"), document)

    with anyio.fail_after(60):
        snapshot = await executor.take_snapshot(app, {})

    assert {tool["name"] for tool in snapshot.tools} >= set(TOOL_NAMES) - {"not_upstream"}
    assert snapshot.server is not None and snapshot.server.name


def test_the_server_really_runs_so(server_url: str, server_mode: str) -> None:
    """What the other tests stand on: the server keeps no session when stateless (it names none),
    and answers with a JSON body, not an event stream, when asked to."""
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "probe", "version": "1"},
        },
    }
    answer = httpx.post(
        server_url,
        json=initialize,
        headers={"Accept": "application/json, text/event-stream"},
        timeout=20,
    )

    assert answer.status_code == 200
    assert ("mcp-session-id" in answer.headers) is ("stateless" not in server_mode)
    json_body = answer.headers["content-type"].startswith("application/json")
    assert json_body is ("JSON answers" in server_mode)
