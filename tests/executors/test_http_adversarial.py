"""Parameter values are data: hostile strings in the path, query, body and headers reach a real
httpbin byte-exact, or are refused before anything is sent (DESIGN.md, security rules).

How exactness is observed on the server side:
- path: `/basic-auth/u/{x}` with HTTP Basic credentials `u:<x>`: httpbin answers 200 only when
  the path segment it decoded equals the password exactly. WSGI servers decode `%2F` to `/`
  before routing, so values holding `/` are checked through `/anything/{x}`'s echoed URL, and
  every value is also checked on the wire (the request line httpx sent).
- query and body: httpbin echoes the decoded `args` and `json`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import unquote, urlsplit

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aai_gateway.descriptor import AppDescriptor
from aai_gateway.errors import AaiError, ErrorCode
from aai_gateway.executors.http import HttpExecutor
from tests.executors.conftest import c_http_app, c_tool, invocation

pytestmark = pytest.mark.anyio

ADVERSARIAL = [
    "../",
    "..",
    ".",
    "../../../etc/passwd",
    "..%2F..%2F",
    "%2F",
    "%252F",
    "%",
    "%zz",
    "?",
    "?admin=1",
    "#",
    "#frag",
    "&",
    "a&b=c",
    "=",
    "k=v;x=y",
    "'",
    '"',
    "'\"`",
    " ",
    " leading and trailing ",
    "a+b",
    "😀",
    "中文字符",
    "👩‍👩‍👧 café",
    "\\",
    "\\..\\..\\",
    "\r\n",
    "line\r\nX-Injected: yes",
    "\t",
    "\x00",
    "\x7f\x01",
    "${x}",
    "{x}",
    "<script>",
    "@evil.example:80",
    "//evil.example/",
]


class Wire:
    """Records the request target of every request the client sends."""

    def __init__(self) -> None:
        self.targets: list[bytes] = []

    async def __call__(self, request: httpx.Request) -> None:
        self.targets.append(request.url.raw_path)


@pytest.fixture
async def wire() -> AsyncIterator[Wire]:
    yield Wire()


@pytest.fixture
async def executor(wire: Wire) -> AsyncIterator[HttpExecutor]:
    async with httpx.AsyncClient(event_hooks={"request": [wire]}) as client:
        yield HttpExecutor(client=client)


def hostile_app(httpbin_url: str) -> AppDescriptor:
    return c_http_app(
        httpbin_url,
        [
            c_tool("auth_path", "/basic-auth/u/{x}", "GET"),
            c_tool("echo_path", "/anything/{x}", "GET"),
            c_tool("echo_query", "/anything", "GET", params=["x", "list"]),
            c_tool("echo_body", "/anything", "POST", params=["x", "nested"]),
            c_tool("echo_header", "/anything", "GET", headers={"X-Value": "${x}"}),
            c_tool("bearer", "/anything", "GET", headers={"Authorization": "Bearer ${x}"}),
        ],
    )


async def assert_path_round_trips(executor: HttpExecutor, wire: Wire, app: AppDescriptor, value: str) -> None:
    """Server side: the exact comparison of `/basic-auth/u/{x}`, or for a value holding `/` the
    URL `/anything/{x}` echoes (WSGI decodes `%2F` before routing and merges `//`, also where the
    value starts or ends with `/`; the echo
    leaves `%` unencoded and the router stops at a newline, so those values are left to the
    wire check). Client side: the request line carries one segment that decodes to the value."""
    target_count = len(wire.targets)
    if "/" not in value:
        auth = httpx.BasicAuth("u", value)
        result = await executor.execute(invocation(app, "auth_path", {"x": value}, http_auth=auth))
        assert result == {"authenticated": True, "user": "u"}, value
    elif (
        not any(part in value for part in ("%", "\n", "//"))
        and not value.startswith("/")
        and not value.endswith("/")
    ):
        # (a leading or trailing `/` meets the route's own `/` and is merged or re-routed by WSGI)
        echo = await executor.execute(invocation(app, "echo_path", {"x": value}))
        assert unquote(urlsplit(echo["url"]).path) == "/anything/" + value
    for target in wire.targets[target_count:]:
        prefix, _, segment = target.decode("ascii").rpartition("/")
        assert prefix in ("/basic-auth/u", "/anything")
        assert "?" not in segment
        assert "#" not in segment
        assert segment not in (".", "..")
        assert unquote(segment) == value


@pytest.mark.parametrize("value", ADVERSARIAL)
async def test_hostile_path_values_arrive_byte_exact(
    executor: HttpExecutor, wire: Wire, httpbin_url: str, value: str
) -> None:
    await assert_path_round_trips(executor, wire, hostile_app(httpbin_url), value)


@pytest.mark.parametrize("value", ADVERSARIAL)
async def test_hostile_query_values_arrive_byte_exact(
    executor: HttpExecutor, httpbin_url: str, value: str
) -> None:
    app = hostile_app(httpbin_url)

    echo = await executor.execute(invocation(app, "echo_query", {"x": value, "list": [value, "second"]}))

    assert echo["args"] == {"x": value, "list": [value, "second"]}


async def test_hostile_query_keys_arrive_byte_exact(executor: HttpExecutor, httpbin_url: str) -> None:
    keys = [v for v in ADVERSARIAL if v.strip()]
    app = c_http_app(httpbin_url, [c_tool("echo", "/anything", "GET", params=keys)])

    echo = await executor.execute(invocation(app, "echo", dict.fromkeys(keys, "v")))

    assert echo["args"] == dict.fromkeys(keys, "v")


@pytest.mark.parametrize("value", ADVERSARIAL)
async def test_hostile_body_values_arrive_byte_exact(
    executor: HttpExecutor, httpbin_url: str, value: str
) -> None:
    app = hostile_app(httpbin_url)
    arguments: dict[str, Any] = {"x": value, "nested": {value: [value, {"k": value}]}}

    echo = await executor.execute(invocation(app, "echo_body", arguments))

    assert echo["json"] == arguments


@pytest.mark.parametrize("value", [v for v in ADVERSARIAL if any(c in v for c in "\r\n\x00\x01\x7f")])
@pytest.mark.parametrize("tool", ["echo_header", "bearer"])
async def test_control_characters_in_a_header_value_are_refused_and_nothing_is_sent(
    executor: HttpExecutor, wire: Wire, httpbin_url: str, value: str, tool: str
) -> None:
    with pytest.raises(AaiError) as caught:
        await executor.execute(invocation(hostile_app(httpbin_url), tool, {"x": value}))

    assert caught.value.code == ErrorCode.INVALID_PARAMS
    assert caught.value.data["violations"][0]["path"] == "/x"
    assert wire.targets == []


@pytest.mark.parametrize("value", [v for v in ADVERSARIAL if not any(c in v for c in "\r\n\x00\x01\x7f")])
async def test_other_hostile_header_values_arrive_as_their_utf8_bytes(
    executor: HttpExecutor, httpbin_url: str, value: str
) -> None:
    echo = await executor.execute(invocation(hostile_app(httpbin_url), "echo_header", {"x": value}))

    received = echo["headers"].get("X-Value", "")
    # WSGI hands header bytes over as latin-1 text; blanks around a value are not part of it.
    assert received.encode("latin-1") == value.strip(" \t").encode("utf-8")


# --------------------------------------------------------------------------- properties

FAST = settings(
    max_examples=50, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)


@FAST
@given(value=st.text(min_size=1, max_size=30))
async def test_random_path_values_round_trip_through_real_httpbin(httpbin_url: str, value: str) -> None:
    wire = Wire()
    async with httpx.AsyncClient(event_hooks={"request": [wire]}) as client:
        await assert_path_round_trips(HttpExecutor(client=client), wire, hostile_app(httpbin_url), value)


@FAST
@given(value=st.text(max_size=30), key=st.text(min_size=1, max_size=10).filter(lambda k: k != "list"))
async def test_random_query_and_body_values_round_trip_through_real_httpbin(
    httpbin_url: str, value: str, key: str
) -> None:
    async with httpx.AsyncClient() as client:
        executor = HttpExecutor(client=client)
        app = c_http_app(
            httpbin_url,
            [c_tool("q", "/anything", "GET", params=[key]), c_tool("b", "/anything", "PATCH", params=[key])],
        )
        query = await executor.execute(invocation(app, "q", {key: value}))
        body = await executor.execute(invocation(app, "b", {key: value}))

    assert query["args"] == {key: value}
    assert body["json"] == {key: value}
