"""HttpExecutor's client and connections against a real httpbin: one shared client, connection
reuse, concurrency, no cookie jar, and redirects (limit, method, credentials per origin)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx
import pytest

from aai_gateway.errors import AaiError, ErrorCode
from aai_gateway.executors.http import HttpExecutor
from tests.executors.conftest import HeaderAuth, c_http_app, c_tool, invocation

pytestmark = pytest.mark.anyio


@pytest.fixture
async def executor() -> AsyncIterator[HttpExecutor]:
    executor = HttpExecutor()
    yield executor
    await executor.aclose()


class CountingTransport(httpx.AsyncHTTPTransport):
    """Counts TCP connections opened, through httpcore's documented `trace` extension."""

    def __init__(self) -> None:
        super().__init__()
        self.connections = 0
        self.requests = 0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.requests += 1

        async def trace(event: str, info: dict[str, Any]) -> None:
            if event == "connection.connect_tcp.complete":
                self.connections += 1

        request.extensions["trace"] = trace
        return await super().handle_async_request(request)


# --------------------------------------------------------------------------- connections


async def test_calls_share_one_client_and_reuse_one_connection(httpbin_url: str) -> None:
    transport = CountingTransport()
    executor = HttpExecutor(transport=transport)
    app = c_http_app(httpbin_url, [c_tool("op", "/anything/{x}", "GET")])
    try:
        for number in range(5):
            await executor.execute(invocation(app, "op", {"x": number}))
        client = executor.client()
        await executor.execute(invocation(app, "op", {"x": "again"}))
        assert executor.client() is client
    finally:
        await executor.aclose()

    assert transport.requests == 6
    assert transport.connections == 1


async def test_concurrent_calls_each_get_their_own_answer(executor: HttpExecutor, httpbin_url: str) -> None:
    app = c_http_app(httpbin_url, [c_tool("op", "/anything/{x}", "GET")])
    answers: dict[int, str] = {}

    async def call(number: int) -> None:
        echo = await executor.execute(invocation(app, "op", {"x": number}))
        answers[number] = httpx.URL(echo["url"]).path

    async with anyio.create_task_group() as group:
        for number in range(20):
            group.start_soon(call, number)

    assert answers == {number: f"/anything/{number}" for number in range(20)}


async def test_aclose_closes_its_own_client_but_not_an_injected_one(httpbin_url: str) -> None:
    own = HttpExecutor()
    own_client = own.client()
    await own.aclose()
    assert own_client.is_closed

    async with httpx.AsyncClient() as injected:
        executor = HttpExecutor(client=injected)
        app = c_http_app(httpbin_url, [c_tool("op", "/get", "GET", params=[])])
        await executor.execute(invocation(app, "op"))
        await executor.aclose()
        assert not injected.is_closed
        assert executor.client() is injected


async def test_cookies_set_by_one_call_are_not_sent_by_the_next(
    executor: HttpExecutor, httpbin_url: str
) -> None:
    app = c_http_app(
        httpbin_url,
        [
            c_tool("set", "/cookies/set", "GET", params=["session"]),
            c_tool("show", "/cookies", "GET", params=[]),
        ],
    )

    after_set = await executor.execute(invocation(app, "set", {"session": "abc"}))
    later = await executor.execute(invocation(app, "show"))

    assert after_set == {"cookies": {}}
    assert later == {"cookies": {}}


def test_http_runs_everywhere() -> None:
    app = c_http_app("http://127.0.0.1:1", [c_tool("op", "/x", "GET")])
    assert HttpExecutor().unavailable_reason(app.tools[0]) is None


# --------------------------------------------------------------------------- redirects


async def test_redirects_are_followed_up_to_five_times(executor: HttpExecutor, httpbin_url: str) -> None:
    app = c_http_app(
        httpbin_url,
        [c_tool("relative", "/redirect/{x}", "GET"), c_tool("absolute", "/absolute-redirect/{x}", "GET")],
    )

    assert (await executor.execute(invocation(app, "relative", {"x": 5})))["url"] == f"{httpbin_url}/get"
    assert (await executor.execute(invocation(app, "absolute", {"x": 2})))["url"] == f"{httpbin_url}/get"
    with pytest.raises(AaiError) as caught:
        await executor.execute(invocation(app, "relative", {"x": 6}))

    assert caught.value.code == ErrorCode.EXECUTION_FAILED
    assert caught.value.data["max_redirects"] == 5


async def test_a_307_redirect_keeps_method_and_body(executor: HttpExecutor, httpbin_url: str) -> None:
    app = c_http_app(
        httpbin_url, [c_tool("post", "/redirect-to?url=/anything&status_code=307", "POST", params=["a"])]
    )

    echo = await executor.execute(invocation(app, "post", {"a": "b"}))

    assert (echo["method"], echo["json"]) == ("POST", {"a": "b"})


async def test_credentials_follow_same_origin_redirects_only(
    executor: HttpExecutor, httpbin_url: str
) -> None:
    other_origin = httpbin_url.replace("127.0.0.1", "localhost")
    tool = c_tool("go", "/redirect-to", "GET", params=["url", "status_code"], headers={"X-Descriptor": "d"})
    app = c_http_app(httpbin_url, [tool])

    same = await executor.execute(invocation(app, "go", {"url": "/headers"}, http_auth=HeaderAuth()))
    cross = await executor.execute(
        invocation(app, "go", {"url": f"{other_origin}/headers", "status_code": 307}, http_auth=HeaderAuth())
    )

    assert same["headers"]["Authorization"] == "Bearer secret-token"
    assert same["headers"]["X-Api-Key"] == "secret-key"
    assert same["headers"]["X-Descriptor"] == "d"
    assert cross["headers"]["Host"] == other_origin.removeprefix("http://")
    assert {"Authorization", "X-Api-Key", "X-Descriptor"}.isdisjoint(cross["headers"])


async def test_httpx_alone_would_forward_a_custom_credential_header_across_origins(httpbin_url: str) -> None:
    """Why the executor follows redirects itself: httpx strips only `Authorization`."""
    other_origin = httpbin_url.replace("127.0.0.1", "localhost")
    async with httpx.AsyncClient(follow_redirects=True) as client:
        response = await client.get(
            f"{httpbin_url}/redirect-to", params={"url": f"{other_origin}/headers"}, auth=HeaderAuth()
        )

    headers = response.json()["headers"]
    assert "Authorization" not in headers
    assert headers["X-Api-Key"] == "secret-key"
