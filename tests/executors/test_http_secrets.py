"""Secrets never come back (DESIGN.md security rules): an app that echoes the request it got —
httpbin's `/anything` on success, an API quoting the refused request in its 401/403/500 — must not
hand the agent the credential the gateway added. Every auth flow's secret is looked for in the
result and in the error's message and data, raw, percent-encoded, JSON-escaped and base64-encoded
(also inside a longer base64 blob), and in the logs."""

from __future__ import annotations

import base64
import html
import json
import logging
import re
import time
from collections.abc import AsyncIterator, Callable, Generator, Iterator
from urllib.parse import quote, quote_plus, unquote

import httpx
import pytest

from aai_gateway.auth.credentials import AppToken, Credential, OAuthTokens
from aai_gateway.auth.flows import ApiKeyFlow, CookieFlow
from aai_gateway.auth.token_flows import AppCredentialFlow, OAuth2Flow
from aai_gateway.descriptor.model_auth import AppCredentialAuth, OAuth2Auth
from aai_gateway.errors import AaiError, ErrorCode
from aai_gateway.executors.http import HttpExecutor
from aai_gateway.executors.http_response import BODY_PREVIEW_CHARS
from aai_gateway.executors.redaction import SEARCH_WINDOW_CHARS, SECRET_MARKER, Scrubber
from tests.executors.conftest import c_http_app, c_tool, invocation
from tests.executors.echo_server import FORMS, EchoServer

pytestmark = pytest.mark.anyio

HEADER_KEY = "hk-Live/7f3a+9c1=e55 x"
QUERY_KEY = "qk/é+9 c1&e55=Zz"
OAUTH_TOKEN = "oa-Acc3ss/Tok+en_0123456789"
REFRESH_TOKEN = "rt-Refr3sh/Tok+en_9876543210"
APP_TOKEN = "t-AppTok3n/+xyz_0123456789"
APP_SECRET = "app-Secr3t/+0123456789"
SESSION = "sess/Tok+en=abc123XYZ"
BASIC_USER_PASSWORD = "alice:pa55/w+rd-0123"
FORM_KEY = "hk&Li've/7f3a+9c1=é55\"<x>"

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


# --------------------------------------------------------------------------- escaped echoes


def _backslash_unescaped(text: str) -> str:
    """`\\xXX` runs as UTF-8 bytes (Latin-1 when they are not), `\\uXXXX` runs as UTF-16,
    then any other escaped character as itself."""

    def as_bytes(match: re.Match[str]) -> str:
        data = bytes.fromhex(match.group().replace("\\x", ""))
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            return data.decode("latin-1")

    def as_utf16(match: re.Match[str]) -> str:
        units = b"".join(int(h, 16).to_bytes(2, "big") for h in re.findall(r"[0-9a-fA-F]{4}", match.group()))
        return units.decode("utf-16-be", "replace")

    text = re.sub(r"(?:\\x[0-9a-fA-F]{2})+", as_bytes, text)
    text = re.sub(r"(?:\\u[0-9a-fA-F]{4})+", as_utf16, text)
    return re.sub(r"\\(.)", r"\1", text)


def _mojibake_undone(text: str) -> str:
    """UTF-8 that was read as Latin-1, read again as UTF-8."""
    return re.sub(
        r"[\xc2-\xf4][\x80-\xbf]+",
        lambda m: m.group().encode("latin-1").decode("utf-8", "replace"),
        text,
    )


UNDO: list[Callable[[str], str]] = [html.unescape, unquote, _backslash_unescaped, _mojibake_undone]


def decoded_views(text: str, depth: int = 3) -> Generator[str, None, None]:
    """`text`, and what undoing HTML references, percent-encoding, backslash escapes and a wrong
    charset, in every order up to `depth` layers, makes of it: what an agent could decode."""
    seen = {text}
    layer = [text]
    yield text
    for _ in range(depth):
        layer = [undo(view) for view in layer for undo in UNDO]
        for view in layer:
            if view not in seen:
                seen.add(view)
                yield view


@pytest.mark.parametrize("form", FORMS)
async def test_an_error_quoting_the_credential_in_an_escaped_form_comes_back_without_it(
    echo: EchoServer, executor: HttpExecutor, form: str
) -> None:
    """.NET and Go escape `+ & ' < >` as `\\u002B`..., HTML pages use references, a login URL
    carries the request URL encoded twice, a JSON string holds another JSON document, a
    library quotes the bytes it refused: an agent can undo each of them."""
    flow = ApiKeyFlow(location="header", name="X-Api-Key", value=FORM_KEY)
    app = c_http_app(echo.url, [c_tool("refused", f"/form/401/{form}", "GET", params=[])])

    with pytest.raises(AaiError) as caught:
        await executor.execute(invocation(app, "refused", http_auth=flow))

    text = caught.value.message + json.dumps(caught.value.data, ensure_ascii=False)
    assert SECRET_MARKER in caught.value.data["body"]  # the echo was there, and was removed
    for view in decoded_views(text):
        assert FORM_KEY not in view
        assert "7f3a+9c1" not in view  # nor a recognisable part of it


async def test_a_numeric_key_echoed_as_a_json_number_is_removed(
    echo: EchoServer, executor: HttpExecutor
) -> None:
    flow = ApiKeyFlow(location="header", name="X-Api-Key", value="12345678")
    app = c_http_app(
        echo.url,
        [c_tool("echo", "/number/200", "GET", params=[]), c_tool("refused", "/number/401", "GET", params=[])],
    )

    echoed = await executor.execute(invocation(app, "echo", http_auth=flow))
    with pytest.raises(AaiError) as caught:
        await executor.execute(invocation(app, "refused", http_auth=flow))

    assert echoed == {"error": "bad key", "key": SECRET_MARKER}
    assert "12345678" not in caught.value.message + json.dumps(caught.value.data)
    assert SECRET_MARKER in caught.value.data["body"]


class _UncheckedHeader(httpx.Auth):
    """A credential put on the request without the flows' checks (as a bug would)."""

    def __init__(self, value: str) -> None:
        self.value = value

    def secret_values(self) -> list[str]:
        return [self.value]

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        request.headers["X-Api-Key"] = self.value
        yield request


async def test_a_header_http_cannot_carry_is_reported_without_the_librarys_words(
    echo: EchoServer, executor: HttpExecutor
) -> None:
    """h11's LocalProtocolError quotes the header it refused (`Illegal header value b'...\\x0b...'`):
    neither its text nor the value may reach the agent, and the app is not called 'unreachable'."""
    app = c_http_app(echo.url, [c_tool("me", "/status/200", "GET", params=[])])
    received = len(echo.received)

    with pytest.raises(AaiError) as caught:
        await executor.execute(invocation(app, "me", http_auth=_UncheckedHeader("Super\x0bSecret-0123")))

    assert caught.value.code == ErrorCode.INVALID_REQUEST
    assert "Super" not in caught.value.message + json.dumps(caught.value.data)
    assert "Illegal header" not in caught.value.message
    assert len(echo.received) == received


@pytest.mark.parametrize("placement", ["raw", "percent-encoded", "base64"])
@pytest.mark.parametrize(
    "offset", [3, SEARCH_WINDOW_CHARS - 7, SEARCH_WINDOW_CHARS, 2 * SEARCH_WINDOW_CHARS + 1]
)
def test_a_secret_in_a_long_text_is_removed_wherever_it_lies(placement: str, offset: int) -> None:
    """Long texts are searched a window at a time, after a cheap test of what they may hold:
    neither may miss a secret at a window's edge, in text with or without escapes."""
    secret = "s3cr3t/Tok+en_0123456789"
    form = {
        "raw": secret,
        "percent-encoded": quote(secret, safe=""),
        "base64": base64.b64encode(secret.encode()).decode(),
    }[placement]
    text = "a" * offset + form + "b" * SEARCH_WINDOW_CHARS

    scrubbed = Scrubber([secret]).text(text)

    assert scrubbed.replace("a", "").replace("b", "") == SECRET_MARKER
    assert scrubbed.startswith("a" * (offset - 3)) and scrubbed.endswith("b" * (SEARCH_WINDOW_CHARS - 3))


def test_a_json_answer_holding_a_secret_escaped_many_times_over_is_scrubbed() -> None:
    """A string of a JSON answer holding the secret escaped for JSON inside JSON inside JSON
    (15 backslashes before each `\\uXXXX`): the whole answer is searched at once before it is
    rebuilt, and that search must see every string as the rebuild does."""
    secret = "tok\\En0123/+x"
    escaped = "".join("\\" * 15 + f"u{ord(c):04x}" for c in secret)
    answer = {"items": [1, {"note": f"pre {escaped} post", "key": 12345678}]}

    scrubbed = Scrubber([secret, "12345678"]).value(answer)

    assert scrubbed == {"items": [1, {"note": f"pre {SECRET_MARKER} post", "key": SECRET_MARKER}]}
