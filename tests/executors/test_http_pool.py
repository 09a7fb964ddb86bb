"""The HTTP executor's connection pool (http_pool.py) against a real HTTP server on 127.0.0.1:
kept-alive connections are reused, and a connection the app closed while it sat idle is
replaced, not written into."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import anyio
import httpcore
import httpx
import pytest

from aai_gateway.executors.http import HttpExecutor
from aai_gateway.executors.http_pool import CheapChecksBackend, pooled_transport
from tests.executors.conftest import c_http_app, c_tool, invocation

pytestmark = pytest.mark.anyio


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # connections stay open after an answer unless closed below
    server: CountingServer

    def log_message(self, format: str, *args: Any) -> None:
        return

    def setup(self) -> None:
        super().setup()
        self.server.connections += 1

    def do_GET(self) -> None:
        body = json.dumps({"path": self.path}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()  # no `Connection: close`: the client takes the connection as reusable
        self.wfile.write(body)
        self.close_connection = self.server.close_after_answer


class CountingServer(ThreadingHTTPServer):
    """Counts the connections clients open; with `close_after_answer` it closes each one right
    after answering (as a server whose keep-alive time is up), then sets `closed`."""

    daemon_threads = True

    def __init__(self, *, close_after_answer: bool) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.connections = 0
        self.close_after_answer = close_after_answer
        self.closed = threading.Semaphore(0)

    def shutdown_request(self, request: Any) -> None:
        super().shutdown_request(request)
        self.closed.release()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


def serving(close_after_answer: bool) -> Iterator[CountingServer]:
    server = CountingServer(close_after_answer=close_after_answer)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def keeping_server() -> Iterator[CountingServer]:
    yield from serving(close_after_answer=False)


@pytest.fixture
def closing_server() -> Iterator[CountingServer]:
    yield from serving(close_after_answer=True)


async def test_calls_in_a_row_reuse_one_kept_alive_connection(keeping_server: CountingServer) -> None:
    executor = HttpExecutor()  # its own client, on the pool of http_pool.py
    app = c_http_app(keeping_server.url, [c_tool("op", "/item/{x}", "GET")])
    try:
        answers = [await executor.execute(invocation(app, "op", {"x": n})) for n in range(5)]
    finally:
        await executor.aclose()

    assert answers == [{"path": f"/item/{n}"} for n in range(5)]
    assert keeping_server.connections == 1


async def test_a_connection_the_app_closed_while_idle_is_replaced_not_written_into(
    closing_server: CountingServer,
) -> None:
    executor = HttpExecutor()
    app = c_http_app(closing_server.url, [c_tool("op", "/item/{x}", "GET")])
    try:
        first = await executor.execute(invocation(app, "op", {"x": 1}))
        # The server has closed the connection the first call left idle in the pool.
        assert await anyio.to_thread.run_sync(closing_server.closed.acquire, True, 10)
        second = await executor.execute(invocation(app, "op", {"x": 2}))
    finally:
        await executor.aclose()

    assert (first, second) == ({"path": "/item/1"}, {"path": "/item/2"})
    assert closing_server.connections == 2


class CountingBackend(CheapChecksBackend):
    def __init__(self) -> None:
        super().__init__()
        self.connects = 0

    async def connect_tcp(self, *args: Any, **kwargs: Any) -> httpcore.AsyncNetworkStream:
        self.connects += 1
        return await super().connect_tcp(*args, **kwargs)


async def test_httpx_sends_through_the_pool_that_pooled_transport_puts_under_it(
    keeping_server: CountingServer,
) -> None:
    backend = CountingBackend()
    verify = httpx.create_ssl_context(trust_env=False)
    transport = pooled_transport(verify, httpx.Limits(max_connections=4), backend)
    async with httpx.AsyncClient(transport=transport) as client:
        answers = [(await client.get(f"{keeping_server.url}/n/{n}")).json() for n in range(3)]

    assert answers == [{"path": f"/n/{n}"} for n in range(3)]
    assert backend.connects == 1, (
        "httpx did not send through the pool pooled_transport (executors/http_pool.py) put in "
        "httpx.AsyncHTTPTransport._pool: httpx keeps its pool elsewhere now"
    )
