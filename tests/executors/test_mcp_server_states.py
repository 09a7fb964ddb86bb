"""The `mcp` executor keeps, for `scan`, whether each server runs and the last error it gave:
driven by the real executor against the test server of mcp_upstream.py."""

from __future__ import annotations

import os
import signal
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest

from aai_gateway.descriptor import AppDescriptor
from aai_gateway.discovery.mcp_server_states import ServerState, ServerStateRecorder, read_states
from aai_gateway.errors import AaiError
from aai_gateway.executors import ToolResult
from aai_gateway.executors.mcp import McpExecutor
from tests.executors.mcp_support import ENVIRON, call, mcp_document, wait_until_gone, write_app

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def states_root(tmp_path: Path) -> Path:
    return tmp_path / "states"


@pytest.fixture
async def executor(states_root: Path) -> AsyncIterator[McpExecutor]:
    recorder = ServerStateRecorder(states_root, gateway_pid=os.getpid())
    executor = McpExecutor(environ=ENVIRON, kill_grace_seconds=0.5, probe_seconds=1.0, states=recorder)
    try:
        yield executor
    finally:
        await executor.aclose()


def app_in(folder: Path, *args: str) -> AppDescriptor:
    return write_app(
        folder, mcp_document(args=list(args), timeout_ms=5_000, app_id=f"dev.test.{folder.name}")
    )


def state_of(root: Path, app: AppDescriptor) -> ServerState:
    return read_states(root)[(str(app.binding), app.id)]


async def pid_of(executor: McpExecutor, app: AppDescriptor) -> int:
    result = await executor.execute(call(app, "pid", {}))
    assert isinstance(result, ToolResult)
    return int(result.content[0]["text"])


async def test_a_started_server_is_kept_as_running_with_its_process_and_protocol_and_as_stopped_after_close(
    executor: McpExecutor, states_root: Path, tmp_path: Path
) -> None:
    app = app_in(tmp_path / "runs")
    pid = await pid_of(executor, app)

    state = state_of(states_root, app)
    assert (state.running, state.latest.transport, state.latest.pid) == (1, "stdio", pid)
    assert state.latest.protocol and state.last_error is None

    await executor.aclose()
    assert state_of(states_root, app).running == 0


async def test_a_server_that_exits_at_start_leaves_the_error_the_call_gave(
    executor: McpExecutor, states_root: Path, tmp_path: Path
) -> None:
    app = app_in(tmp_path / "broken", "--exit-at-start")
    with pytest.raises(AaiError) as caught:
        await executor.execute(call(app, "echo", {"text": "x"}))

    state = state_of(states_root, app)
    assert state.running == 0 and state.last_error is not None
    assert state.last_error.code == caught.value.code.value
    assert "the configuration file is missing" in state.last_error.message


async def test_a_crash_is_kept_as_the_last_error_after_the_server_runs_again(
    executor: McpExecutor, states_root: Path, tmp_path: Path
) -> None:
    app = app_in(tmp_path / "crashing")
    with pytest.raises(AaiError):
        await executor.execute(call(app, "crash", {}))

    pid = await pid_of(executor, app)

    state = state_of(states_root, app)
    assert (state.running, state.latest.pid) == (1, pid)
    assert state.last_error is not None and "the server exited with code 3" in state.last_error.message
    assert "out of cheese" in state.last_error.message


async def test_a_session_replaced_by_a_new_one_does_not_mark_the_server_stopped(
    executor: McpExecutor, states_root: Path, tmp_path: Path
) -> None:
    """A new secret or an edited descriptor starts a new session; the old one ends once its
    call in flight is done, after the new one has started."""
    app = app_in(tmp_path / "replaced")
    first = await pid_of(executor, app)
    edited = write_app(
        tmp_path / "replaced",
        mcp_document(args=[], timeout_ms=5_000, app_id=app.id, env={"EXTRA": "1"}),
    )
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(executor.execute, call(app, "slow", {"seconds": 1.5}))
        await anyio.sleep(0.3)  # the old session's call is in flight
        second = await pid_of(executor, edited)
    assert second != first
    await wait_until_gone(first)

    state = state_of(states_root, app)
    assert (state.running, state.latest.pid) == (1, second)


async def test_a_server_that_dies_between_calls_leaves_how_it_ended_as_the_last_error(
    executor: McpExecutor, states_root: Path, tmp_path: Path
) -> None:
    app = app_in(tmp_path / "killed")
    pid = await pid_of(executor, app)

    os.kill(pid, signal.SIGKILL)
    await wait_until_gone(pid)
    with anyio.fail_after(10):
        while state_of(states_root, app).running:  # noqa: ASYNC110 (the file is all there is)
            await anyio.sleep(0.05)

    error = state_of(states_root, app).last_error
    assert error is not None and error.code == "SERVICE_UNAVAILABLE"
    assert error.message.startswith(f"the MCP server of {app.id} ended: the server ")
    assert "signal" in error.message or "SIGKILL" in error.message
