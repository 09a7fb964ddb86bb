"""Closing an MCP session whose server never finished opening: the opening is cancelled at once
and the server stopped, with no wait for the session to notice a stop it only watches once open.

Every close here may wait an hour (`close(wait=HOUR)`). A close is shielded, so nothing in the
test can cut it short: it runs in a task of its own, and should it not have returned after
`LIMIT` seconds (a close that waits for the opening to end by itself waits the hour), the test
ends the opening from outside, so that it fails instead of hanging for the hour.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Final

import anyio
import anyio.abc
import pytest

from aai_gateway.executors.mcp import MAX_MESSAGE_BYTES
from aai_gateway.executors.mcp_launch import HttpLaunch, Launch, SessionSettings, StdioLaunch
from aai_gateway.executors.mcp_sessions import SessionEndedError, UpstreamSession
from tests.executors.mcp_support import ENVIRON, process_alive

pytestmark = pytest.mark.anyio

HOUR: Final = 3600.0
LIMIT: Final = 60.0
"""Far below the hour the old close waited; only bounds how long a failing test takes."""
SETTINGS: Final = SessionSettings(
    start_seconds=HOUR, idle_seconds=HOUR, grace=0.5, ask_seconds=HOUR, max_message_bytes=MAX_MESSAGE_BYTES
)
SILENT_SERVER: Final = """\
import pathlib, signal, sys
sys.stdin.buffer.readline()  # the gateway's first request
pathlib.Path(sys.argv[1]).write_text("asked")
sys.stdin.buffer.read()  # no answer, ever; and a closed stdin does not end it either:
signal.pause()  # only a signal does
"""


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


def session_of(launch: Launch, ended: list[UpstreamSession]) -> UpstreamSession:
    return UpstreamSession("dev.test.silent", "Silent", launch, SETTINGS, scrub=str, on_end=ended.append)


@asynccontextmanager
async def opening(session: UpstreamSession) -> AsyncIterator[anyio.abc.TaskGroup]:
    """`session.open()` running in a task (it may wait the hour), which must fail: it never opens."""

    async def open_it() -> None:
        with pytest.raises(SessionEndedError):
            await session.open()

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(open_it)
        yield tasks


async def closes_unaided(session: UpstreamSession, end_the_opening: Callable[[], None]) -> bool:
    """Whether `session.close(wait=HOUR)` returned without help; if it had not after LIMIT s,
    `end_the_opening` lets it return, so that the test fails instead of waiting the hour."""
    closed = anyio.Event()

    async def close() -> None:
        await session.close(wait=HOUR)
        closed.set()

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(close)
        with anyio.move_on_after(LIMIT):
            await closed.wait()
        unaided = closed.is_set()
        if not unaided:
            end_the_opening()
    return unaided


async def test_closing_a_session_whose_stdio_server_never_answers_stops_the_server_at_once(
    tmp_path: Path,
) -> None:
    script, asked = tmp_path / "silent.py", tmp_path / "asked"
    script.write_text(SILENT_SERVER, encoding="utf-8")
    argv = (sys.executable, str(script), str(asked))
    launch = Launch(StdioLaunch(argv, tuple(ENVIRON.items()), tmp_path, program=sys.executable), ())
    ended: list[UpstreamSession] = []
    session = session_of(launch, ended)

    async with opening(session):
        with anyio.fail_after(LIMIT):
            while not asked.exists():  # noqa: ASYNC110 (the server's only sign is the file)
                await anyio.sleep(0.02)
        pid = session.pid
        assert pid is not None

        def kill_the_server() -> None:
            os.kill(pid, signal.SIGKILL)

        unaided = await closes_unaided(session, kill_the_server)

    assert unaided, "close waited for the opening session to notice the stop; the server had to be killed"
    assert ended == [session]
    assert session.stdio is not None
    assert session.stdio.returncode == -signal.SIGTERM  # stopped by the gateway's process runner
    assert not process_alive(pid)
    assert not session.alive


async def test_closing_a_session_whose_http_server_never_answers_hangs_up_at_once() -> None:
    asked, hung_up = anyio.Event(), anyio.Event()

    async def never_answer(connection: anyio.abc.SocketStream) -> None:
        async with connection:
            await connection.receive()  # the start of the gateway's first request
            asked.set()
            with contextlib.suppress(anyio.EndOfStream, anyio.BrokenResourceError):
                while True:  # the rest of it; no answer, ever
                    await connection.receive()
            hung_up.set()

    listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
    port = listener.extra(anyio.abc.SocketAttribute.local_port)  # noqa: S610 (anyio, not Django)
    launch = Launch(HttpLaunch(f"http://127.0.0.1:{port}/mcp", ()), ())
    ended: list[UpstreamSession] = []
    session = session_of(launch, ended)
    serving = anyio.CancelScope()

    async def serve() -> None:
        with serving:
            await listener.serve(never_answer)

    async with listener, anyio.create_task_group() as server:
        server.start_soon(serve)
        async with opening(session):
            with anyio.fail_after(LIMIT):
                await asked.wait()
            unaided = await closes_unaided(session, serving.cancel)
        if unaided:
            with anyio.fail_after(LIMIT):
                await hung_up.wait()
        serving.cancel()

    assert unaided, "close waited for the opening session to notice the stop; the server had to be stopped"
    assert hung_up.is_set()  # the gateway dropped the connection of the unanswered request
    assert ended == [session]
    assert not session.alive
