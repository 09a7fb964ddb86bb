"""HttpExecutor against a real httpbin (gunicorn on 127.0.0.1): methods, templates, status
mapping, timeouts, output parsing, size cap, logging. Connections and redirects:
test_http_connections.py; hostile values: test_http_adversarial.py."""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from aai_gateway.errors import AaiError, ErrorCode, ServiceUnavailableError
from aai_gateway.executors.http import HttpExecutor
from aai_gateway.executors.http_response import error_code_for_status
from tests.discovery.web_support import HttpsServer, LocalCa
from tests.executors.conftest import HeaderAuth, b_web_app, c_http_app, c_tool, free_port, invocation

pytestmark = pytest.mark.anyio


@pytest.fixture
async def executor() -> AsyncIterator[HttpExecutor]:
    executor = HttpExecutor()
    yield executor
    await executor.aclose()


# --------------------------------------------------------------------------- methods and templates


@pytest.mark.parametrize("method", ["GET", "POST", "PUT", "PATCH", "DELETE"])
async def test_every_method_reaches_httpbin_with_path_and_arguments(
    executor: HttpExecutor, httpbin_url: str, method: str
) -> None:
    app = c_http_app(httpbin_url, [c_tool("op", "/anything/{id}", method, params=["id", "note", "n"])])

    echo = await executor.execute(invocation(app, "op", {"id": "item-7", "note": "hi there", "n": 3}))

    assert echo["method"] == method
    assert httpx.URL(echo["url"]).path == "/anything/item-7"
    if method in ("GET", "DELETE"):
        assert echo["args"] == {"note": "hi there", "n": "3"}
        assert echo["json"] is None
    else:
        assert echo["args"] == {}
        assert echo["json"] == {"note": "hi there", "n": 3}
        assert echo["headers"]["Content-Type"] == "application/json"


async def test_head_and_an_empty_body_give_none(executor: HttpExecutor, httpbin_url: str) -> None:
    app = c_http_app(
        httpbin_url,
        [c_tool("head", "/anything", "HEAD", params=[]), c_tool("empty", "/status/{x}", "GET")],
    )

    assert await executor.execute(invocation(app, "head")) is None
    assert await executor.execute(invocation(app, "empty", {"x": 200})) is None
    assert await executor.execute(invocation(app, "empty", {"x": 204})) is None


async def test_default_and_tool_headers_arrive_with_placeholders_substituted(
    executor: HttpExecutor, httpbin_url: str
) -> None:
    tool = c_tool(
        "h", "/headers", "GET", params=["trace"], headers={"X-Trace": "t-${trace}", "Accept": "text/x"}
    )
    app = c_http_app(httpbin_url, [tool], default_headers={"Accept": "application/json", "X-App": "demo"})

    echo = await executor.execute(invocation(app, "h", {"trace": 42}))

    headers = echo["headers"]
    assert (headers["X-Trace"], headers["Accept"], headers["X-App"]) == ("t-42", "text/x", "demo")
    assert headers["User-Agent"].startswith("aai-gateway/")


async def test_dialect_b_endpoint_query_body_and_header_templates(
    executor: HttpExecutor, httpbin_url: str
) -> None:
    tool = {
        "name": "search",
        "description": "search",
        "parameters": {
            "type": "object",
            "properties": {"space": {}, "query": {}, "limit": {}, "filters": {}, "trace": {}},
        },
        "endpoint": "/anything/spaces/${space}/search",
        "method": "POST",
        "query_params": {"limit": "${limit}", "v": "2"},
        "body": {"q": "${query}", "filters": "${filters}", "label": "space ${space}", "missing": "${trace}"},
        "headers": {"X-Space": "${space}"},
        "output_parser": "json",
    }
    app = b_web_app(httpbin_url, [tool], default_headers={"Notion-Version": "2022-06-28"})
    arguments = {"space": "team a", "query": "cats", "limit": 5, "filters": {"tags": ["x"], "open": True}}

    echo = await executor.execute(invocation(app, "search", arguments))

    assert httpx.URL(echo["url"]).path == "/anything/spaces/team a/search"
    assert echo["args"] == {"limit": "5", "v": "2"}
    assert echo["json"] == {"q": "cats", "filters": {"tags": ["x"], "open": True}, "label": "space team a"}
    assert echo["headers"]["X-Space"] == "team a"
    assert echo["headers"]["Notion-Version"] == "2022-06-28"


async def test_http_auth_is_applied_to_the_request(executor: HttpExecutor, httpbin_url: str) -> None:
    app = c_http_app(httpbin_url, [c_tool("login", "/basic-auth/ada/pw", "GET", params=[])])

    result = await executor.execute(invocation(app, "login", http_auth=httpx.BasicAuth("ada", "pw")))

    assert result == {"authenticated": True, "user": "ada"}


# --------------------------------------------------------------------------- status mapping


@pytest.mark.parametrize(
    ("status", "code"),
    [
        (400, ErrorCode.INVALID_REQUEST),
        (401, ErrorCode.AUTH_REQUIRED),
        (403, ErrorCode.AUTH_DENIED),
        (404, ErrorCode.NOT_FOUND),
        (409, ErrorCode.INVALID_REQUEST),
        (418, ErrorCode.INVALID_REQUEST),
        (429, ErrorCode.RATE_LIMITED),
        (500, ErrorCode.INTERNAL_ERROR),
        (501, ErrorCode.NOT_IMPLEMENTED),
        (502, ErrorCode.SERVICE_UNAVAILABLE),
        (503, ErrorCode.SERVICE_UNAVAILABLE),
    ],
)
async def test_http_status_codes_map_to_aai_codes_with_status_and_url_without_query(
    executor: HttpExecutor, httpbin_url: str, status: int, code: ErrorCode
) -> None:
    app = c_http_app(httpbin_url, [c_tool("status", "/status/{code}", "GET", params=["code", "token"])])

    with pytest.raises(AaiError) as caught:
        await executor.execute(invocation(app, "status", {"code": status, "token": "query-secret"}))

    error = caught.value
    assert error.code == code
    assert error.data["status"] == status
    assert error.data["url"] == f"{httpbin_url}/status/{status}"
    assert f"HTTP {status}" in error.message
    assert "query-secret" not in str(error.to_payload())


async def test_a_401_with_refreshable_credentials_is_auth_expired(
    executor: HttpExecutor, httpbin_url: str
) -> None:
    app = c_http_app(httpbin_url, [c_tool("status", "/status/401", "GET", params=[])])

    with pytest.raises(AaiError) as caught:
        await executor.execute(invocation(app, "status", http_auth=HeaderAuth(refreshable=True)))

    assert caught.value.code == ErrorCode.AUTH_EXPIRED
    assert "secret" not in str(caught.value.to_payload())


def test_statuses_outside_the_table_follow_the_documented_ranges() -> None:
    assert error_code_for_status(422) == ErrorCode.INVALID_REQUEST
    assert error_code_for_status(599) == ErrorCode.SERVICE_UNAVAILABLE
    assert error_code_for_status(304) == ErrorCode.EXECUTION_FAILED


async def test_the_apps_own_error_message_is_taken_from_a_json_body() -> None:
    bodies = {
        "/message": {"message": "title is required"},
        "/error": {"error": {"code": "bad", "message": "nested message"}},
        "/oauth": {"error": "invalid_token", "error_description": "token revoked"},
        "/detail": {"detail": [{"loc": ["body", "x"], "msg": "field required"}]},
    }

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(422, json=bodies[request.url.path])

    executor = HttpExecutor(transport=httpx.MockTransport(answer))
    app = c_http_app("http://app.test", [c_tool(name.strip("/"), name, "GET", params=[]) for name in bodies])
    messages = []
    for name in bodies:
        with pytest.raises(AaiError) as caught:
            await executor.execute(invocation(app, name.strip("/")))
        assert caught.value.code == ErrorCode.INVALID_REQUEST
        assert caught.value.data["body"].startswith("{")
        messages.append(caught.value.message)
    await executor.aclose()

    assert messages[0].endswith("HTTP 422 Unprocessable Entity: title is required")
    assert messages[1].endswith(": nested message")
    assert messages[2].endswith(": invalid_token: token revoked")
    assert messages[3].endswith(': [{"loc":["body","x"],"msg":"field required"}]')


# --------------------------------------------------------------------------- timeouts, failures


async def test_a_slow_answer_is_a_timeout_after_the_tools_timeout(
    executor: HttpExecutor, httpbin_url: str
) -> None:
    app = c_http_app(httpbin_url, [c_tool("slow", "/delay/{x}", "GET")], timeout_ms=1000)
    started = time.monotonic()

    with pytest.raises(AaiError) as caught:
        await executor.execute(invocation(app, "slow", {"x": 3}))

    assert caught.value.code == ErrorCode.TIMEOUT
    assert caught.value.data["timeout_ms"] == 1000
    assert time.monotonic() - started < 2.5


async def test_connection_refused_is_service_unavailable_naming_the_host(executor: HttpExecutor) -> None:
    port = free_port()
    app = c_http_app(f"http://127.0.0.1:{port}", [c_tool("op", "/x", "GET", params=["token"])])

    with pytest.raises(ServiceUnavailableError) as caught:
        await executor.execute(invocation(app, "op", {"token": "query-secret"}))

    assert caught.value.code == ErrorCode.SERVICE_UNAVAILABLE
    assert f"127.0.0.1:{port}" in caught.value.message
    assert caught.value.data["host"] == f"127.0.0.1:{port}"
    assert "query-secret" not in str(caught.value.to_payload())


# --------------------------------------------------------------------------- output


async def test_output_is_json_or_text_by_content_type_when_no_parser_is_declared(
    executor: HttpExecutor, httpbin_url: str
) -> None:
    app = c_http_app(
        httpbin_url, [c_tool(n, f"/{n}", "GET", params=[]) for n in ("json", "html", "robots.txt")]
    )

    as_json = await executor.execute(invocation(app, "json"))
    html = await executor.execute(invocation(app, "html"))
    robots = await executor.execute(invocation(app, "robots.txt"))

    assert as_json["slideshow"]["author"] == "Yours Truly"
    assert isinstance(html, str)
    assert html.startswith("<!DOCTYPE html>")
    assert robots == "User-agent: *\nDisallow: /deny\n"


async def test_declared_output_parsers_are_obeyed(executor: HttpExecutor, httpbin_url: str) -> None:
    def tool(name: str, endpoint: str, parser: str) -> dict[str, Any]:
        return {
            "name": name,
            "description": name,
            "parameters": {"type": "object"},
            "endpoint": endpoint,
            "method": "GET",
            "output_parser": parser,
        }

    app = b_web_app(
        httpbin_url, [tool("json_as_text", "/json", "text"), tool("html_as_json", "/html", "json")]
    )

    text = await executor.execute(invocation(app, "json_as_text"))
    with pytest.raises(AaiError) as caught:
        await executor.execute(invocation(app, "html_as_json"))

    assert isinstance(text, str)
    assert '"slideshow"' in text
    assert caught.value.code == ErrorCode.EXECUTION_FAILED
    assert "not JSON" in caught.value.message
    assert caught.value.data["body"].startswith("<!DOCTYPE html>")


@pytest.mark.parametrize("endpoint", ["/bytes/{x}", "/stream-bytes/{x}"])
async def test_a_response_over_the_size_limit_is_refused_naming_the_limit(
    httpbin_url: str, endpoint: str
) -> None:
    executor = HttpExecutor(max_response_bytes=1000)
    app = c_http_app(httpbin_url, [c_tool("bytes", endpoint, "GET")])
    try:
        small = await executor.execute(invocation(app, "bytes", {"x": 1000}))
        with pytest.raises(AaiError) as caught:
            await executor.execute(invocation(app, "bytes", {"x": 5000}))
    finally:
        await executor.aclose()

    assert isinstance(small, str)
    assert caught.value.code == ErrorCode.EXECUTION_FAILED
    assert "1000 bytes" in caught.value.message
    assert caught.value.data["max_response_bytes"] == 1000


async def test_json_nested_too_deeply_to_parse_is_execution_failed_and_an_error_body_still_maps(
    tmp_path: Path,
) -> None:
    deep = b"[" * 100_000 + b"]" * 100_000
    ca = LocalCa.create(tmp_path)
    upstream = HttpsServer(ca).start()
    upstream.serve("/deep", deep)
    upstream.serve("/deep-error", b'{"message": ' + deep + b"}", status=503)
    executor = HttpExecutor(ca_file=ca.ca_file)
    tools = [c_tool("deep", "/deep", "GET", params=[]), c_tool("deep_error", "/deep-error", "GET", params=[])]
    app = c_http_app(upstream.origin, tools)
    try:
        with pytest.raises(AaiError) as answer:
            await executor.execute(invocation(app, "deep"))
        with pytest.raises(AaiError) as error_body:
            await executor.execute(invocation(app, "deep_error"))
    finally:
        await executor.aclose()
        upstream.stop()

    assert answer.value.code == ErrorCode.EXECUTION_FAILED
    assert answer.value.message.startswith(
        "dev.test.http deep: the app's answer is nested deeper than 100 levels"
    )
    assert answer.value.data == {"app": "dev.test.http", "tool": "deep", "max_depth": 100}
    assert error_body.value.code == ErrorCode.SERVICE_UNAVAILABLE
    assert error_body.value.message.startswith("dev.test.http deep_error: 127.0.0.1 answered HTTP 503")


# --------------------------------------------------------------------------- logging


async def test_debug_logs_name_method_host_path_template_and_status_but_no_values(
    executor: HttpExecutor, httpbin_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    tool = c_tool("op", "/anything/{x}", "POST", params=["x", "q"], headers={"X-Secret": "${q}"})
    app = c_http_app(httpbin_url, [tool])

    with caplog.at_level(logging.DEBUG, logger="aai_gateway.executors.http"):
        await executor.execute(
            invocation(app, "op", {"x": "path-secret", "q": "header-secret"}, http_auth=HeaderAuth())
        )

    logged = "\n".join(r.getMessage() for r in caplog.records)
    host = httpbin_url.removeprefix("http://")
    assert f"POST {host} /anything/{{x}} -> 200" in logged
    for secret in ("path-secret", "header-secret", "secret-token", "secret-key"):
        assert secret not in logged
