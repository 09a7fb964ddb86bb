"""The bundled `dev.aai.example.httpbin` descriptor's three tools, run through HttpExecutor
against its own stdlib echo server (examples/dev.aai.example.httpbin/server.py)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from aai_gateway.descriptor import AppDescriptor
from aai_gateway.errors import AaiError, ErrorCode
from aai_gateway.executors.http import HttpExecutor
from tests.executors.conftest import invocation, load, stop, wait_until_answers

pytestmark = pytest.mark.anyio

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "dev.aai.example.httpbin"
POSIX_ONLY = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")


def start_server() -> tuple[subprocess.Popen[bytes], str]:
    process = subprocess.Popen(
        [sys.executable, str(EXAMPLE / "server.py"), "--port", "0", "--quiet"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    assert process.stderr is not None
    first_line = process.stderr.readline().decode().strip()
    assert first_line.startswith("listening on http://127.0.0.1:"), first_line
    url = first_line.removeprefix("listening on ")
    wait_until_answers(f"{url}/anything", process, "the example echo server")
    return process, url


@pytest.fixture(scope="module")
def echo_server() -> Iterator[str]:
    process, url = start_server()
    try:
        yield url
    finally:
        stop(process)


@pytest.fixture
def app(echo_server: str) -> AppDescriptor:
    document = json.loads((EXAMPLE / "aai.json").read_text(encoding="utf-8"))
    assert document["execution"]["baseUrl"] == "http://127.0.0.1:8765"
    document["execution"]["baseUrl"] = echo_server
    return load(document)


@pytest.fixture
async def executor() -> AsyncIterator[HttpExecutor]:
    executor = HttpExecutor()
    yield executor
    await executor.aclose()


async def test_echo_message_posts_the_arguments_and_gets_them_back(
    executor: HttpExecutor, app: AppDescriptor, echo_server: str
) -> None:
    arguments = {
        "message": "héllo / ?#& 😀",
        "metadata": {"sender": "ada", "priority": "high", "labels": ["a", "b"]},
        "repeat": 2,
    }

    echo = await executor.execute(invocation(app, "echo_message", arguments))

    assert echo["method"] == "POST"
    assert echo["url"] == f"{echo_server}/anything"
    assert echo["json"] == arguments
    assert echo["headers"]["Accept"] == "application/json"
    assert echo["headers"]["Content-Type"] == "application/json"


async def test_get_status_maps_the_chosen_status_to_an_aai_code(
    executor: HttpExecutor, app: AppDescriptor
) -> None:
    assert await executor.execute(invocation(app, "get_status", {"code": 200})) is None
    redirected = await executor.execute(invocation(app, "get_status", {"code": 302}))
    assert redirected["url"].endswith("/anything")

    for status, code in [
        (404, ErrorCode.NOT_FOUND),
        (429, ErrorCode.RATE_LIMITED),
        (503, ErrorCode.SERVICE_UNAVAILABLE),
    ]:
        with pytest.raises(AaiError) as caught:
            await executor.execute(invocation(app, "get_status", {"code": status}))
        assert caught.value.code == code
        assert f"HTTP {status} " in caught.value.message
        assert f": you asked for status {status}" in caught.value.message
        assert caught.value.data["status"] == status


async def test_delayed_reply_answers_after_the_delay(
    executor: HttpExecutor, app: AppDescriptor, echo_server: str
) -> None:
    echo = await executor.execute(invocation(app, "delayed_reply", {"seconds": 0}))

    assert echo["method"] == "GET"
    assert echo["url"] == f"{echo_server}/delay/0"


async def test_the_app_timeout_from_the_descriptor_applies(app: AppDescriptor) -> None:
    tool = app.tool("delayed_reply")
    assert tool is not None
    assert tool.effective_timeout_ms == 15_000


@POSIX_ONLY
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_the_server_stops_cleanly_on_sigint_and_sigterm(signum: signal.Signals) -> None:
    process, _url = start_server()
    process.send_signal(signum)
    try:
        assert process.wait(timeout=5) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.stderr is not None
    assert process.stderr.read().decode().strip() == "stopped"
