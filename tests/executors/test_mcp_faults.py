"""An MCP server that misbehaves: each fault is a clear AAI error naming the app and the tool, and
the next call works. Also: cancellation reaches the server, and no process outlives the gateway."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest

from aai_gateway.descriptor import AppDescriptor
from aai_gateway.errors import AaiError, ErrorCode
from aai_gateway.executors import ToolResult
from aai_gateway.executors.mcp import MAX_MESSAGE_BYTES, McpExecutor
from aai_gateway.executors.mcp_stdio import PROBLEMS_LOGGED
from tests.executors.mcp_support import (
    ENVIRON,
    call,
    http_upstream,
    mcp_document,
    process_alive,
    wait_until_gone,
    write_app,
)
from tests.server.conftest import unused_port

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
async def executor() -> AsyncIterator[McpExecutor]:
    executor = McpExecutor(environ=ENVIRON, kill_grace_seconds=0.5, probe_seconds=1.0)
    try:
        yield executor
    finally:
        await executor.aclose()


@pytest.fixture
def markers(tmp_path: Path) -> Path:
    folder = tmp_path / "markers"
    folder.mkdir()
    return folder


def app_in(
    folder: Path, *args: str, timeout_ms: int | None = 1500, app_id: str | None = None
) -> AppDescriptor:
    return write_app(
        folder,
        mcp_document(args=list(args), timeout_ms=timeout_ms, app_id=app_id or f"dev.test.{folder.name}"),
    )


async def text_of(executor: McpExecutor, app: AppDescriptor, tool: str, **arguments: object) -> str:
    result = await executor.execute(call(app, tool, dict(arguments)))
    assert isinstance(result, ToolResult)
    text: str = result.content[0]["text"]
    return text


async def failure(executor: McpExecutor, app: AppDescriptor, tool: str, **arguments: object) -> AaiError:
    with pytest.raises(AaiError) as caught:
        await executor.execute(call(app, tool, dict(arguments)))
    return caught.value


async def test_a_server_that_dies_during_the_call_is_reported_with_its_exit_and_stderr_and_started_again(
    executor: McpExecutor, tmp_path: Path
) -> None:
    app = app_in(tmp_path / "crashing")
    first_pid = int(await text_of(executor, app, "pid"))

    error = await failure(executor, app, "crash")

    assert error.code is ErrorCode.EXECUTION_FAILED
    assert error.message.startswith(
        f"{app.id} crash: the MCP server ended during the call (the server exited with code 3"
    )
    assert "about to crash: out of cheese" in error.message
    assert "the next call starts it again" in error.message
    assert error.data["exit_code"] == 3 and error.data["transport"] == "stdio"
    assert int(await text_of(executor, app, "pid")) != first_pid


async def test_a_server_that_dies_while_its_child_keeps_its_output_open_is_noticed_at_once(
    executor: McpExecutor, tmp_path: Path, markers: Path
) -> None:
    app = app_in(tmp_path / "orphaning", "--marker-dir", str(markers), timeout_ms=20_000)

    error = await failure(executor, app, "crash_leaving_child")

    assert error.code is ErrorCode.EXECUTION_FAILED  # not a TIMEOUT after 20 s
    assert "the server exited with code 4" in error.message
    await wait_until_gone(int((markers / "grandchild.pid").read_text()))
    assert await text_of(executor, app, "echo", text="after") == "after"


@pytest.mark.parametrize("legacy", [False, True], ids=["2026-07-28", "2025-11-25"])
async def test_a_call_the_server_never_answers_times_out_the_server_is_told_to_cancel_and_it_stays(
    executor: McpExecutor, tmp_path: Path, markers: Path, legacy: bool
) -> None:
    args = ["--marker-dir", str(markers), *(["--legacy-only"] if legacy else [])]
    app = app_in(tmp_path / f"hanging{int(legacy)}", *args, timeout_ms=800)
    pid = int(await text_of(executor, app, "pid"))

    error = await failure(executor, app, "hang")

    assert error.code is ErrorCode.TIMEOUT
    assert error.message == f"{app.id} hang did not finish within 800 ms and was stopped"
    assert error.data["server_restarts"] is False
    with anyio.fail_after(5):
        while not (markers / f"cancelled-{pid}").exists():  # noqa: ASYNC110
            await anyio.sleep(0.02)
    assert int(await text_of(executor, app, "pid")) == pid  # still answering: the same server


async def test_a_server_that_stops_answering_altogether_is_stopped_after_the_timeout_and_the_next_call_works(
    executor: McpExecutor, tmp_path: Path
) -> None:
    app = app_in(tmp_path / "freezing", timeout_ms=800)
    pid = int(await text_of(executor, app, "pid"))

    error = await failure(executor, app, "freeze")

    assert error.code is ErrorCode.TIMEOUT
    assert error.data["server_restarts"] is True
    await wait_until_gone(pid)
    assert int(await text_of(executor, app, "pid")) != pid


async def test_an_answer_longer_than_four_mebibytes_is_refused_for_that_call_only(
    executor: McpExecutor, tmp_path: Path
) -> None:
    app = app_in(tmp_path / "flooding", timeout_ms=20_000)
    pid = int(await text_of(executor, app, "pid"))

    error = await failure(executor, app, "flood", size=MAX_MESSAGE_BYTES + 1024)

    assert MAX_MESSAGE_BYTES == 4 * 1024 * 1024
    assert error.code is ErrorCode.EXECUTION_FAILED
    assert error.message == (
        f"{app.id} flood: the server's answer is longer than {MAX_MESSAGE_BYTES} bytes, the most the "
        "gateway reads from an MCP server, and was skipped unread"
    )
    assert error.data["max_message_bytes"] == MAX_MESSAGE_BYTES
    assert await text_of(executor, app, "echo", text="after") == "after"
    assert int(await text_of(executor, app, "pid")) == pid
    small = await text_of(executor, app, "flood", size=1024 * 1024)
    assert len(small) == 1024 * 1024


async def test_a_too_long_answer_with_its_id_last_fails_its_call_at_once_and_not_by_timeout(
    executor: McpExecutor, tmp_path: Path
) -> None:
    """The TypeScript SDK writes `{"result": …, "jsonrpc": "2.0", "id": 7}`: the id only shows at
    the end of the line (server-filesystem reading a 4 MB file)."""
    app = app_in(tmp_path / "flooding_ts", timeout_ms=20_000)

    error = await failure(executor, app, "flood_id_last", size=MAX_MESSAGE_BYTES + 1024)

    assert error.code is ErrorCode.EXECUTION_FAILED
    assert "the server's answer is longer than 4194304 bytes" in error.message
    assert await text_of(executor, app, "echo", text="after") == "after"


async def test_a_line_that_is_not_json_rpc_is_named_in_the_timeout_of_the_call_it_stood_for(
    executor: McpExecutor, tmp_path: Path
) -> None:
    app = app_in(tmp_path / "garbage", timeout_ms=800)

    error = await failure(executor, app, "garbage")

    assert error.code is ErrorCode.TIMEOUT
    assert (
        "meanwhile it wrote a line that is not a JSON-RPC message to stdout: 'this is not json at all"
        in error.message
    )
    assert await text_of(executor, app, "echo", text="after") == "after"


async def test_a_server_writing_garbage_on_every_line_does_not_flood_the_log(
    executor: McpExecutor, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    app = app_in(tmp_path / "garbage_flood", timeout_ms=1500)

    with caplog.at_level(logging.WARNING, logger="aai_gateway.executors.mcp_stdio"):
        error = await failure(executor, app, "garbage", lines=2_000)

    assert error.code is ErrorCode.TIMEOUT
    logged = [r.getMessage() for r in caplog.records if r.name == "aai_gateway.executors.mcp_stdio"]
    assert len(logged) == PROBLEMS_LOGGED + 1
    assert logged[-1].endswith("more problems; the rest are not logged")


async def test_an_answer_nested_deeper_than_the_parser_reads_fails_its_call_at_once_and_the_next_works(
    executor: McpExecutor, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    app = app_in(tmp_path / "deep", timeout_ms=20_000)

    with caplog.at_level(logging.WARNING, logger="aai_gateway.executors.mcp_stdio"):
        error = await failure(executor, app, "too_deep")

    assert error.code is ErrorCode.EXECUTION_FAILED
    assert error.message.startswith(f"{app.id} too_deep: the server's answer could not be read (")
    assert "recursion limit" in error.data["reason"]
    assert "it wrote a line to stdout nested more deeply than the JSON-RPC parser reads" in caplog.text
    assert await text_of(executor, app, "echo", text="after") == "after"


async def test_an_answer_that_is_not_a_tool_result_is_refused_and_the_next_call_works(
    executor: McpExecutor, tmp_path: Path
) -> None:
    app = app_in(tmp_path / "badresult")

    error = await failure(executor, app, "bad_result")

    assert error.code is ErrorCode.EXECUTION_FAILED
    assert error.message.startswith(
        f"{app.id} bad_result: the MCP server answered tools/call with something that is not a "
        "valid tool result"
    )
    assert await text_of(executor, app, "echo", text="after") == "after"


async def test_a_banner_before_the_protocol_does_not_stop_the_session(
    executor: McpExecutor, tmp_path: Path
) -> None:
    app = app_in(tmp_path / "banner", "--banner")

    assert await text_of(executor, app, "echo", text="fine") == "fine"


async def test_a_server_that_exits_at_start_is_unavailable_with_its_exit_and_stderr_each_time(
    executor: McpExecutor, tmp_path: Path
) -> None:
    app = app_in(tmp_path / "nostart", "--exit-at-start")

    for _ in range(2):  # not remembered: every call tries again
        error = await failure(executor, app, "echo", text="x")
        assert error.code is ErrorCode.SERVICE_UNAVAILABLE
        assert error.message.startswith(f"{app.id} is not reachable: its MCP server could not be started (")
        assert "exited with code 3" in error.message
        assert "cannot start: the configuration file is missing" in error.message
        assert error.data["exit_code"] == 3


async def test_a_cancelled_call_is_cancelled_at_the_server(
    executor: McpExecutor, tmp_path: Path, markers: Path
) -> None:
    app = app_in(tmp_path / "cancelling", "--marker-dir", str(markers), timeout_ms=30_000)
    pid = int(await text_of(executor, app, "pid"))

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(executor.execute, call(app, "hang"))
        with anyio.fail_after(10):  # the call has reached the server
            while not (markers / f"hanging-{pid}").exists():  # noqa: ASYNC110
                await anyio.sleep(0.02)
        tasks.cancel_scope.cancel()

    with anyio.fail_after(5):
        while not (markers / f"cancelled-{pid}").exists():  # noqa: ASYNC110
            await anyio.sleep(0.02)


async def test_an_idle_session_is_stopped_and_the_next_call_starts_the_server_again(tmp_path: Path) -> None:
    executor = McpExecutor(environ=ENVIRON, kill_grace_seconds=0.5, idle_seconds=0.5)
    app = app_in(tmp_path / "idle")
    try:
        pid = int(await text_of(executor, app, "pid"))
        await wait_until_gone(pid)
        assert int(await text_of(executor, app, "pid")) != pid
    finally:
        await executor.aclose()


async def test_closing_the_executor_stops_every_server_and_what_it_started(
    tmp_path: Path, markers: Path
) -> None:
    executor = McpExecutor(environ=ENVIRON, kill_grace_seconds=0.5)
    app = app_in(tmp_path / "closing", "--marker-dir", str(markers))
    other = app_in(tmp_path / "other", "--legacy-only")
    try:
        pid = int(await text_of(executor, app, "pid"))
        other_pid = int(await text_of(executor, other, "pid"))
        grandchild = int(await text_of(executor, app, "grandchild"))
        assert process_alive(grandchild)
    finally:
        await executor.aclose()

    for gone in (pid, other_pid, grandchild):
        await wait_until_gone(gone, seconds=5)


async def test_an_edited_descriptor_gets_a_new_server_and_the_old_one_stops(
    executor: McpExecutor, tmp_path: Path
) -> None:
    app = app_in(tmp_path / "edited")
    pid = int(await text_of(executor, app, "pid"))
    edited = write_app(tmp_path / "edited", mcp_document(app_id=app.id, env={"EXTRA": "1"}, timeout_ms=1500))

    assert int(await text_of(executor, edited, "pid")) != pid
    await wait_until_gone(pid)


async def test_a_streamable_http_server_that_goes_away_is_unreachable_and_found_again_when_back(
    executor: McpExecutor, tmp_path: Path
) -> None:
    port = unused_port()
    app = write_app(tmp_path, mcp_document(app_id="dev.test.httpfaults", url=f"http://127.0.0.1:{port}/mcp"))

    unreachable = await failure(executor, app, "pid")
    with http_upstream(port=port):
        first = int(await text_of(executor, app, "pid"))
        died = await failure(executor, app, "crash")
    with http_upstream(port=port):
        again = int(await text_of(executor, app, "pid"))

    assert unreachable.code is ErrorCode.SERVICE_UNAVAILABLE
    assert unreachable.message.startswith(
        f"{app.id} is not reachable: its MCP server at 127.0.0.1:{port} could not be reached (ConnectError"
    )
    assert (
        unreachable.data["host"] == f"127.0.0.1:{port}" and unreachable.data["transport"] == "streamable-http"
    )
    assert died.code is ErrorCode.EXECUTION_FAILED
    assert died.message.startswith(
        f"{app.id} crash: the connection to the MCP server at 127.0.0.1:{port} ended"
    )
    assert again != first
