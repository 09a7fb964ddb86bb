"""Secrets never come back (DESIGN.md security rules): an app that echoes the request it got —
httpbin's `/anything` on success, an API quoting the refused request in its 401/403/500 — must not
hand the agent the credential the gateway added. Every auth flow's secret is looked for in the
result and in the error's message and data, raw, percent-encoded, JSON-escaped and base64-encoded
(also inside a longer base64 blob), and in the logs."""

from __future__ import annotations

import base64
import json
import logging
import re
import time
from collections.abc import AsyncIterator, Iterator
from urllib.parse import quote, quote_plus

import httpx
import pytest

from aai_gateway.auth.credentials import AppToken, Credential, OAuthTokens
from aai_gateway.auth.flows import ApiKeyFlow, AppCredentialFlow, CookieFlow, OAuth2Flow
from aai_gateway.descriptor.model import AppCredentialAuth, OAuth2Auth
from aai_gateway.errors import AaiError
from aai_gateway.executors.http import HttpExecutor
from aai_gateway.executors.http_response import BODY_PREVIEW_CHARS
from aai_gateway.executors.redaction import SECRET_MARKER, Scrubber
from tests.executors.conftest import c_http_app, c_tool, invocation
from tests.executors.echo_server import EchoServer

pytestmark = pytest.mark.anyio

HEADER_KEY = "hk-Live/7f3a+9c1=e55 x"
QUERY_KEY = "qk/é+9 c1&e55=Zz"
OAUTH_TOKEN = "oa-Acc3ss/Tok+en_0123456789"
REFRESH_TOKEN = "rt-Refr3sh/Tok+en_9876543210"
APP_TOKEN = "t-AppTok3n/+xyz_0123456789"
APP_SECRET = "app-Secr3t/+0123456789"
SESSION = "sess/Tok+en=abc123XYZ"
BASIC_USER_PASSWORD = "alice:pa55/w+rd-0123"

KINDS = ["header_key", "query_key", "oauth_bearer", "app_token", "cookie", "basic"]


async def _keep(credential: Credential) -> None:
    return None


def flow_of(kind: str, token_client: httpx.AsyncClient) -> tuple[httpx.Auth, list[str]]:
    """The auth flow of `kind` as the provider builds it, and the secrets it carries."""
    if kind == "header_key":
        return ApiKeyFlow(location="header", name="X-Api-Key", value=HEADER_KEY), [HEADER_KEY]
    if kind == "query_key":
        return ApiKeyFlow(location="query", name="key", value=QUERY_KEY), [QUERY_KEY]
    if kind == "cookie":
        return CookieFlow({"session": SESSION, "lang": "en"}, domain="127.0.0.1"), [SESSION]
    if kind == "basic":
        encoded = base64.b64encode(BASIC_USER_PASSWORD.encode()).decode()
        flow = ApiKeyFlow(location="header", name="Authorization", value=encoded, prefix="Basic")
        return flow, [encoded, BASIC_USER_PASSWORD, BASIC_USER_PASSWORD.partition(":")[2]]
    if kind == "oauth_bearer":
        settings = OAuth2Auth(
            authorization_endpoint="https://a.example/authorize", token_endpoint="https://a.example/token"
        )
        tokens = OAuthTokens(
            access_token=OAUTH_TOKEN, refresh_token=REFRESH_TOKEN, expires_at=time.time() + 3600
        )
        credential = Credential(kind="oauth2", app_id="dev.test.http", binding="test", tokens=tokens)
        return OAuth2Flow(settings, credential, _keep, token_client), [OAUTH_TOKEN]
    settings_app = AppCredentialAuth(token_endpoint="https://a.example/token", token_type="tenantAccessToken")
    credential = Credential(
        kind="appCredential",
        app_id="dev.test.http",
        binding="test",
        client_id="cli_app",
        client_secret=APP_SECRET,
        app_token=AppToken(token=APP_TOKEN, expires_at=time.time() + 3600),
    )
    return AppCredentialFlow(settings_app, credential, _keep, token_client), [APP_TOKEN]


def forms(secret: str) -> list[str]:
    """The ways an echo can carry `secret` as a plain substring."""
    b64 = base64.b64encode(secret.encode()).decode()
    return [
        secret,
        quote(secret, safe=""),
        quote(secret),
        quote_plus(secret),
        quote(secret, safe="").lower(),
        b64.rstrip("="),
        base64.urlsafe_b64encode(secret.encode()).decode().rstrip("="),
        json.dumps(secret)[1:-1],
        json.dumps(secret, ensure_ascii=False)[1:-1],
    ]


def base64_decodings(text: str) -> Iterator[bytes]:
    """Every run of base64 characters in `text`, decoded at each of the four alignments it can
    have (a secret inside a longer encoded value does not start on a group boundary)."""
    for run in re.findall(r"[A-Za-z0-9+/_-]{8,}", text):
        normal = run.replace("-", "+").replace("_", "/")
        for shift in range(4):
            piece = normal[shift:]
            piece = piece[: len(piece) // 4 * 4]
            yield base64.b64decode(piece)


def assert_no_secret(text: str, secrets: list[str]) -> None:
    for secret in secrets:
        for form in forms(secret):
            assert form not in text, f"{secret!r} came back as {form!r}"
        assert not any(secret.encode() in decoded for decoded in base64_decodings(text)), (
            f"{secret!r} came back base64-encoded"
        )


@pytest.fixture(scope="module")
def echo() -> Iterator[EchoServer]:
    server = EchoServer().start()
    yield server
    server.stop()


@pytest.fixture
async def token_client() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient() as client:
        yield client


@pytest.fixture(params=KINDS)
def carried(request: pytest.FixtureRequest, token_client: httpx.AsyncClient) -> tuple[httpx.Auth, list[str]]:
    """Each kind of credential in turn: its flow and the secrets it carries."""
    kind: str = request.param
    return flow_of(kind, token_client)


@pytest.fixture
async def executor() -> AsyncIterator[HttpExecutor]:
    executor = HttpExecutor()
    yield executor
    await executor.aclose()


async def test_a_success_body_echoing_the_request_comes_back_without_the_credential(
    httpbin_url: str,
    executor: HttpExecutor,
    carried: tuple[httpx.Auth, list[str]],
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    flow, secrets = carried
    app = c_http_app(httpbin_url, [c_tool("anything", "/anything", "GET", params=[])])

    echoed = await executor.execute(invocation(app, "anything", http_auth=flow))

    text = json.dumps(echoed) + json.dumps(echoed, ensure_ascii=False)
    assert SECRET_MARKER in text  # httpbin did echo the credential: here is where it was
    assert_no_secret(text, secrets)
    assert_no_secret(caplog.text, secrets)


@pytest.mark.parametrize("path", ["/status/401", "/status/403", "/status/500", "/text/500"])
async def test_an_error_echoing_the_request_comes_back_without_the_credential(
    echo: EchoServer,
    executor: HttpExecutor,
    carried: tuple[httpx.Auth, list[str]],
    path: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    flow, secrets = carried
    app = c_http_app(echo.url, [c_tool("refused", path, "GET", params=[])])

    with pytest.raises(AaiError) as caught:
        await executor.execute(invocation(app, "refused", http_auth=flow))

    text = (
        caught.value.message
        + json.dumps(caught.value.data)
        + json.dumps(caught.value.data, ensure_ascii=False)
    )
    if path != "/status/401" or not getattr(flow, "refreshable", False):
        assert SECRET_MARKER in text  # (a token flow answers a 401 by renewing its token instead)
    assert_no_secret(text + str(caught.value), secrets)
    assert_no_secret(caplog.text, secrets)


async def test_a_secret_across_the_end_of_the_error_preview_is_removed_before_the_preview_is_cut(
    echo: EchoServer, executor: HttpExecutor, token_client: httpx.AsyncClient
) -> None:
    flow, _ = flow_of("header_key", token_client)
    app = c_http_app(echo.url, [c_tool("refused", "/straddle/401", "GET", params=[])])

    with pytest.raises(AaiError) as caught:
        await executor.execute(invocation(app, "refused", http_auth=flow))

    preview = caught.value.data["body"]
    assert preview.startswith("x" * (BODY_PREVIEW_CHARS - 8) + SECRET_MARKER[:8])
    assert HEADER_KEY[:4] not in preview


async def test_a_text_success_body_is_scrubbed_too(
    echo: EchoServer, executor: HttpExecutor, token_client: httpx.AsyncClient
) -> None:
    flow, secrets = flow_of("cookie", token_client)
    app = c_http_app(echo.url, [c_tool("head", "/text/200", "GET", params=[])])

    echoed = await executor.execute(invocation(app, "head", http_auth=flow))

    assert isinstance(echoed, str)
    assert f"session={SECRET_MARKER}" in echoed
    assert "lang=en" in echoed  # a value too short to be a secret stays: scrubbing it would wreck text
    assert_no_secret(echoed, secrets)


def test_values_shorter_than_the_minimum_are_left_alone_and_longer_ones_go_in_every_form() -> None:
    scrubber = Scrubber(["en", "s3cr3t"])

    assert scrubber.text("lang=en; session=s3cr3t") == f"lang=en; session={SECRET_MARKER}"
    assert scrubber.text("s%33cr%33t and czNjcjN0") == f"{SECRET_MARKER} and {SECRET_MARKER}"
    assert scrubber.value({"s3cr3t": ["x s3cr3t"]}) == {SECRET_MARKER: [f"x {SECRET_MARKER}"]}
