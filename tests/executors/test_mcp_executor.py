"""The `mcp` executor against a real MCP server process (tests/executors/mcp_upstream.py), without
the gateway's own MCP server: both protocol generations, results passed on as they are, one
shared session, the server's own errors."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from aai_gateway.descriptor import AppDescriptor, ExecutionType
from aai_gateway.errors import AaiError, ErrorCode
from aai_gateway.executors import ExecutorRegistry, ToolResult, mcp_launch, programs
from aai_gateway.executors.mcp import McpExecutor
from aai_gateway.executors.programs import find_program
from tests.executors.mcp_support import (
    ENVIRON,
    assert_every_kind_of_content,
    call,
    mcp_document,
    running_executor,
    write_app,
)

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
async def executor() -> AsyncIterator[McpExecutor]:
    async with running_executor() as executor:
        yield executor


@pytest.fixture(
    scope="module", params=["both", "legacy-only"], ids=["2026-07-28 server", "2025-11-25 server"]
)
def app(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> AppDescriptor:
    """The test server as it is (it negotiates 2026-07-28), or refusing `server/discover` like a
    server of before 2026-07-28 (the executor falls back to the handshake)."""
    legacy = request.param == "legacy-only"
    folder = tmp_path_factory.mktemp("legacy" if legacy else "modern")
    return write_app(folder, mcp_document(args=["--legacy-only"] if legacy else []))


async def run(executor: McpExecutor, app: AppDescriptor, tool: str, **arguments: object) -> ToolResult:
    result = await executor.execute(call(app, tool, dict(arguments)))
    assert isinstance(result, ToolResult)
    return result


async def test_each_server_is_spoken_to_in_the_newest_generation_it_knows(
    executor: McpExecutor, app: AppDescriptor
) -> None:
    result = await run(executor, app, "echo", text="hello")

    legacy_only = "--legacy-only" in getattr(app.tools[0].channel, "args", ())
    expected = "2025-11-25" if legacy_only else "2026-07-28"
    assert result.structured_content == {"text": "hello", "protocol": expected}
    assert result.content == [{"type": "text", "text": "hello"}]
    assert result.is_error is False


async def test_every_kind_of_content_and_the_structured_content_pass_through_unchanged(
    executor: McpExecutor, app: AppDescriptor
) -> None:
    result = await run(executor, app, "blocks")

    assert_every_kind_of_content(result)


async def test_a_tool_that_reports_its_own_failure_is_a_result_with_is_error_not_a_gateway_error(
    executor: McpExecutor, app: AppDescriptor
) -> None:
    result = await run(executor, app, "tool_error")

    assert result.is_error is True
    assert result.content == [{"type": "text", "text": "the disk is full"}]


async def test_an_error_response_of_the_server_names_the_app_the_tool_and_the_servers_code(
    executor: McpExecutor, app: AppDescriptor
) -> None:
    with pytest.raises(AaiError) as caught:
        await run(executor, app, "protocol_error")

    error = caught.value
    assert error.code is ErrorCode.EXECUTION_FAILED
    assert error.message.startswith(
        f"{app.id} protocol_error failed: the MCP server answered with error -32050"
    )
    assert "the upstream refuses this" in error.message
    assert error.data["app"] == app.id and error.data["tool"] == "protocol_error"
    assert error.data["mcp_error"] == {
        "code": -32050,
        "message": "the upstream refuses this",
        "data": {"why": "policy"},
    }


async def test_a_server_error_with_the_code_the_sdk_uses_for_a_closed_connection_is_the_servers_error(
    executor: McpExecutor, app: AppDescriptor
) -> None:
    before = (await run(executor, app, "pid")).content[0]["text"]

    with pytest.raises(AaiError) as caught:
        await run(executor, app, "protocol_error", code=-32000)

    error = caught.value
    assert error.message.startswith(
        f"{app.id} protocol_error failed: the MCP server answered with error -32000"
    )
    assert error.data["mcp_error"]["message"] == "the upstream refuses this"
    assert "exit_code" not in error.data
    assert (await run(executor, app, "pid")).content[0]["text"] == before  # the server was not stopped


async def test_an_error_response_of_any_size_is_cut_to_what_an_agent_can_read(
    executor: McpExecutor, app: AppDescriptor
) -> None:
    with pytest.raises(AaiError) as caught:
        await run(executor, app, "protocol_error", data_size=1_200_000, message_size=1_000_000)

    error = caught.value
    assert error.code is ErrorCode.EXECUTION_FAILED
    assert error.message.startswith(f"{app.id} protocol_error failed: the MCP server answered with error")
    assert len(json.dumps(error.to_payload())) < 10_000


async def test_a_tool_the_server_does_not_have_is_its_error_not_a_crash(
    executor: McpExecutor, app: AppDescriptor
) -> None:
    with pytest.raises(AaiError) as caught:
        await run(executor, app, "not_upstream")

    assert caught.value.code is ErrorCode.EXECUTION_FAILED
    assert "unknown tool not_upstream" in caught.value.message


async def test_structured_content_that_breaks_the_tools_output_schema_is_refused_naming_the_tool(
    executor: McpExecutor, app: AppDescriptor
) -> None:
    with pytest.raises(AaiError) as caught:
        await run(executor, app, "shaped")

    assert caught.value.code is ErrorCode.EXECUTION_FAILED
    assert caught.value.message.startswith(f"{app.id} shaped: the MCP server's result was refused")


async def test_structured_content_is_checked_by_the_gateway_not_by_the_sdks_backtracking_regexes(
    executor: McpExecutor, app: AppDescriptor
) -> None:
    """The SDK's check (Python's `re`) takes minutes on this content, the event loop blocked;
    the gateway's names where the content breaks the schema as a JSON pointer (`/s`)."""
    with pytest.raises(AaiError) as caught:
        await run(executor, app, "backtracking")

    assert caught.value.code is ErrorCode.EXECUTION_FAILED
    assert caught.value.message.startswith(
        f"{app.id} backtracking: the MCP server's result was refused: Invalid structured content "
        "returned by tool backtracking: /s: "
    )
    assert "does not match" in caught.value.message


async def test_concurrent_calls_share_one_server_process(executor: McpExecutor, app: AppDescriptor) -> None:
    answers: list[str] = []

    async def one() -> None:
        answers.append((await run(executor, app, "slow", seconds=0.2)).content[0]["text"])
        answers.append((await run(executor, app, "pid")).content[0]["text"])

    before = (await run(executor, app, "pid")).content[0]["text"]
    async with anyio.create_task_group() as tasks:
        for _ in range(8):
            tasks.start_soon(one)

    assert sorted(answers) == sorted(["slept"] * 8 + [before] * 8)


async def test_the_server_starts_in_the_descriptors_folder_with_only_the_allow_listed_environment(
    executor: McpExecutor, app: AppDescriptor
) -> None:
    cwd = await run(executor, app, "cwd")
    hidden = await run(executor, app, "env", name="AAI_TEST_GATEWAY_ONLY")
    home = await run(executor, app, "env", name="HOME")

    assert cwd.content[0]["text"] == str(Path(app.source.location).parent)
    assert hidden.content[0]["text"] == "<unset>"
    assert home.content[0]["text"] == "/tmp"


async def test_a_command_that_is_not_installed_makes_the_tool_unavailable_with_the_reason(
    executor: McpExecutor, tmp_path: Path
) -> None:
    app = write_app(tmp_path, mcp_document(app_id="dev.test.missing", command="no-such-mcp-server-xyz"))

    reason = executor.unavailable_reason(app.tools[0])

    assert reason == (
        "MCP server command 'no-such-mcp-server-xyz' was not found on PATH, or is not executable; "
        "install the server or set execution.command to its full path"
    )
    assert (
        executor.unavailable_reason(write_app(tmp_path / "ok", mcp_document(command=sys.executable)).tools[0])
        is None
    )


async def test_a_call_to_a_running_server_looks_its_program_up_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Dispatch checks the program can run (before consent is asked); the running session needs
    no second look. Only a session start looks it up again, to start it."""
    lookups: list[str] = []

    def counted(command: str, *args: Any, **options: Any) -> tuple[str | None, str]:
        lookups.append(command)
        return find_program(command, *args, **options)

    monkeypatch.setattr(programs, "find_program", counted)
    monkeypatch.setattr(mcp_launch, "find_program", counted)
    app = write_app(tmp_path, mcp_document(app_id="dev.test.lookups"))
    registry = ExecutorRegistry()
    registry.register(ExecutionType.MCP, McpExecutor(environ=ENVIRON, kill_grace_seconds=0.5))
    invocation = call(app, "echo", {"text": "hi"})
    try:
        await registry.executor_for(app, invocation.tool).execute(invocation)  # starts the server
        assert lookups == [sys.executable, sys.executable]
        lookups.clear()

        result = await registry.executor_for(app, invocation.tool).execute(invocation)
    finally:
        await registry.aclose()

    assert isinstance(result, ToolResult) and result.content[0]["text"] == "hi"
    assert lookups == [sys.executable]


async def test_a_relative_command_that_is_missing_is_service_unavailable_saying_where_it_was_looked_for(
    executor: McpExecutor, tmp_path: Path
) -> None:
    app = write_app(tmp_path, mcp_document(app_id="dev.test.relative", command="bin/no-such-server"))

    with pytest.raises(AaiError) as caught:
        await executor.execute(call(app, "echo", {"text": "hi"}))

    assert caught.value.code is ErrorCode.SERVICE_UNAVAILABLE
    assert caught.value.message.endswith(
        f"its MCP server command 'bin/no-such-server' was not found at {tmp_path}/bin/no-such-server "
        "(relative to the descriptor's folder), or is not executable; install the server or set "
        "execution.command in the app's aai.json to its full path"
    )
    assert caught.value.data["command"] == "bin/no-such-server"
