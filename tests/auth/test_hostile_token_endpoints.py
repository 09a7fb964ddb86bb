"""A token endpoint is a server like any other, for a web app one the descriptor's author chose:
whatever it answers (JSON nested past what the parser reads, numbers no float holds, lone
surrogates, tokens with control characters, the request's secrets echoed at length), the OAuth
refresh, the app-credential exchange and the sign-in end in an AUTH_* error that names the
endpoint, never in a traceback, never with a secret in it, and nothing unusable is kept or sent.
A real HTTP server on 127.0.0.1 plays the endpoint."""

from __future__ import annotations

import json
import threading
import time
import urllib.request
from collections.abc import AsyncIterator, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import anyio
import httpx
import pytest

from aai_gateway.auth import token_client as token_requests
from aai_gateway.auth.credentials import Credential, OAuthTokens
from aai_gateway.auth.oauth import login
from aai_gateway.auth.token_flows import AppCredentialFlow, OAuth2Flow
from aai_gateway.descriptor.model_auth import AppCredentialAuth, OAuth2Auth
from aai_gateway.errors import AaiError, ErrorCode
from aai_gateway.executors.http import HttpExecutor
from tests.auth.oauth_server import c_app, oauth2_settings
from tests.executors.conftest import c_http_app, c_tool, invocation

pytestmark = pytest.mark.anyio

REFRESH_TOKEN = "rt-Refr3sh-Tok-en-" + "9876543210ABCDEFGHIJ" * 2 + "-end"
CLIENT_SECRET = "cs-Client-Secret-0123456789"
APP_SECRET = "app-Secr3t-0123456789-XYZ"
CODE = "code-Auth0rization-" + "0123456789abcdefghij" * 2 + "-end"
NEW_TOKEN = "new-tok-123456789"


def token_answer(**fields: Any) -> bytes:
    """A success answer carrying the token under both the OAuth and the app-credential name."""
    answer = {"access_token": NEW_TOKEN, "tenant_access_token": NEW_TOKEN, "expires_in": 3600, "code": 0}
    answer.update(fields)
    return json.dumps(answer).encode()


HOSTILE = {
    "nested arrays": b"[" * 5000 + b"]" * 5000,
    "nested objects": b'{"error":' * 3000 + b"1" + b"}" * 3000,
    "400-digit lifetime": token_answer().replace(b"3600", b"9" * 400),
    "infinite lifetime": token_answer().replace(b"3600", b"1e999"),
    "token with a lone surrogate": token_answer().replace(NEW_TOKEN.encode(), b"new\\ud800tok-123456789"),
    "token with a vertical tab": token_answer().replace(NEW_TOKEN.encode(), b"new\\u000btok-123456789"),
}


class _Handler(BaseHTTPRequestHandler):
    server: TokenEndpoint

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_GET(self) -> None:  # the app's API (reached only with a usable token)
        self.server.api_calls.append(self.headers.get("Authorization", ""))
        self._send(200, b'{"ok": true}')

    def do_POST(self) -> None:  # the token endpoint
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode()
        status, answer = self.server.answer
        if answer is None:  # echo what was sent, its secrets right where a message is cut short
            answer = json.dumps(
                {"error": "invalid_grant", "error_description": "x" * 181 + " " + body}
            ).encode()
        self._send(status, answer)

    def _send(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        if self.server.content_encoding:
            self.send_header("Content-Encoding", self.server.content_encoding)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if not self.server.drip_seconds:
            self.wfile.write(body)
            return
        for byte in body:  # each read's timeout is met, the answer never ends in time
            try:
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
            except OSError:  # the gateway hung up
                return
            time.sleep(self.server.drip_seconds)


class TokenEndpoint(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.answer: tuple[int, bytes | None] = (200, b"{}")
        self.drip_seconds = 0.0
        self.content_encoding: str | None = None
        self.api_calls: list[str] = []
        threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def endpoint() -> Iterator[TokenEndpoint]:
    server = TokenEndpoint()
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture
async def executor() -> AsyncIterator[HttpExecutor]:
    executor = HttpExecutor()
    yield executor
    await executor.aclose()


@pytest.fixture
async def token_client() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient() as client:
        yield client


async def _keep(credential: Credential) -> None:
    return None


async def renew(
    kind: str, endpoint: TokenEndpoint, executor: HttpExecutor, client: httpx.AsyncClient
) -> None:
    """Call the app with a credential whose token must first be renewed at `endpoint`."""
    app = c_http_app(endpoint.url, [c_tool("me", "/api/me", "GET", params=[])])
    flow: httpx.Auth
    if kind == "oauth2 refresh":
        settings = OAuth2Auth(
            authorization_endpoint=f"{endpoint.url}/authorize", token_endpoint=f"{endpoint.url}/token"
        )
        expired = OAuthTokens(
            access_token="at-old-0123456789", refresh_token=REFRESH_TOKEN, expires_at=time.time() - 5
        )
        credential = Credential(
            kind="oauth2",
            app_id=app.id,
            binding="test",
            client_id="cid",
            client_secret=CLIENT_SECRET,
            tokens=expired,
        )
        flow = OAuth2Flow(settings, credential, _keep, client)
    else:
        app_settings = AppCredentialAuth(
            token_endpoint=f"{endpoint.url}/token", token_type="tenantAccessToken"
        )
        credential = Credential(
            kind="appCredential", app_id=app.id, binding="test", client_id="cli_a", client_secret=APP_SECRET
        )
        flow = AppCredentialFlow(app_settings, credential, _keep, client)
    await executor.execute(invocation(app, "me", http_auth=flow))


async def sign_in(endpoint: TokenEndpoint) -> None:
    """`auth login`, the browser coming back with a code at once; the code is exchanged at
    `endpoint`."""
    auth = {
        "type": "oauth2",
        "oauth2": {
            "authorizationEndpoint": f"{endpoint.url}/authorize",
            "tokenEndpoint": f"{endpoint.url}/token",
            "scopes": [],
        },
    }
    app = c_app(endpoint.url, auth, {"me": "/api/me"})

    def come_back(url: str) -> None:
        query = parse_qs(urlsplit(url).query)
        callback = f"{query['redirect_uri'][0]}?code={CODE}&state={query['state'][0]}"
        with urllib.request.urlopen(callback, timeout=10) as answer:  # noqa: S310 (loopback)
            answer.read()

    failed: list[AaiError] = []
    async with anyio.create_task_group() as tg:

        def open_url(url: str) -> None:
            tg.start_soon(anyio.to_thread.run_sync, come_back, url)

        try:
            await login(
                app,
                oauth2_settings(app),
                client_id="cid",
                client_secret=CLIENT_SECRET,
                open_url=open_url,
                timeout_seconds=30,
            )
        except AaiError as exc:
            failed.append(exc)
    if failed:
        raise failed[0]


KINDS = ["oauth2 refresh", "appCredential exchange"]


@pytest.mark.parametrize("answer", list(HOSTILE))
@pytest.mark.parametrize("kind", KINDS)
async def test_an_answer_the_gateway_cannot_use_ends_in_auth_expired_naming_the_endpoint(
    endpoint: TokenEndpoint, executor: HttpExecutor, token_client: httpx.AsyncClient, kind: str, answer: str
) -> None:
    endpoint.answer = (200, HOSTILE[answer])
    calls = len(endpoint.api_calls)

    with pytest.raises(AaiError) as caught:
        await renew(kind, endpoint, executor, token_client)

    assert caught.value.code == ErrorCode.AUTH_EXPIRED
    assert f"{endpoint.url}/token" in caught.value.message
    assert caught.value.data["endpoint"] == f"{endpoint.url}/token"
    assert "tok-123456789" not in caught.value.message
    assert len(endpoint.api_calls) == calls  # nothing unusable was sent on


async def test_a_refresh_token_that_is_not_valid_unicode_is_not_kept(
    endpoint: TokenEndpoint, executor: HttpExecutor, token_client: httpx.AsyncClient
) -> None:
    endpoint.answer = (200, token_answer(refresh_token="rt\udc00x-0123456"))

    with pytest.raises(AaiError) as caught:
        await renew("oauth2 refresh", endpoint, executor, token_client)

    assert caught.value.code == ErrorCode.AUTH_EXPIRED
    assert "refresh_token" in caught.value.message


@pytest.mark.parametrize("answer", list(HOSTILE))
async def test_signing_in_against_such_an_answer_fails_naming_the_endpoint(
    endpoint: TokenEndpoint, answer: str
) -> None:
    endpoint.answer = (200, HOSTILE[answer])

    with pytest.raises(AaiError) as caught:
        await sign_in(endpoint)

    assert caught.value.code == ErrorCode.AUTH_REQUIRED
    assert f"{endpoint.url}/token" in caught.value.message
    assert "tok-123456789" not in caught.value.message


def _prefixes(secret: str) -> list[str]:
    return [secret[:n] for n in range(8, len(secret) + 1)]


@pytest.mark.parametrize("kind", KINDS)
async def test_secrets_the_endpoint_echoes_at_length_are_removed_before_its_words_are_cut(
    endpoint: TokenEndpoint, executor: HttpExecutor, token_client: httpx.AsyncClient, kind: str
) -> None:
    """The endpoint quotes the request (refresh token, client secret, App Secret) right where
    its explanation is cut to 300 characters: no part of a secret may survive the cut."""
    endpoint.answer = (400, None)

    with pytest.raises(AaiError) as caught:
        await renew(kind, endpoint, executor, token_client)

    text = caught.value.message + json.dumps(caught.value.data)
    assert "xxxxxxxx" in text  # the endpoint's words are quoted...
    for secret in (REFRESH_TOKEN, CLIENT_SECRET, APP_SECRET):
        assert not any(prefix in text for prefix in _prefixes(secret)), secret  # ...its echo is not


async def test_signing_in_never_quotes_the_code_or_secret_the_endpoint_echoes(
    endpoint: TokenEndpoint,
) -> None:
    endpoint.answer = (400, None)

    with pytest.raises(AaiError) as caught:
        await sign_in(endpoint)

    text = caught.value.message + json.dumps(caught.value.data)
    assert "xxxxxxxx" in text
    for secret in (CODE, CLIENT_SECRET):
        assert not any(prefix in text for prefix in _prefixes(secret)), secret


@pytest.mark.parametrize("kind", [*KINDS, "sign-in"])
async def test_an_endpoint_that_drips_its_answer_is_given_up_on_after_the_request_deadline(
    endpoint: TokenEndpoint,
    executor: HttpExecutor,
    token_client: httpx.AsyncClient,
    kind: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A byte every 0.1 s meets every read's timeout; the whole answer would take ~10 s, and one
    that never ends would hold the sign-in, or the call waiting on a refresh, for ever."""
    monkeypatch.setattr(token_requests, "TOKEN_REQUEST_TIMEOUT_SECONDS", 1.0)
    endpoint.answer = (200, token_answer(padding="p" * 40))
    endpoint.drip_seconds = 0.1
    try:
        with pytest.raises(AaiError) as caught:
            await (sign_in(endpoint) if kind == "sign-in" else renew(kind, endpoint, executor, token_client))
    finally:
        endpoint.drip_seconds = 0.0
    assert caught.value.code == ErrorCode.SERVICE_UNAVAILABLE
    assert "did not answer in full within 1 s" in caught.value.message  # the deadline's, not the drip's end


@pytest.mark.parametrize("kind", KINDS)
async def test_an_endpoint_that_answers_megabytes_is_not_read_past_the_limit(
    endpoint: TokenEndpoint, executor: HttpExecutor, token_client: httpx.AsyncClient, kind: str
) -> None:
    endpoint.answer = (200, b'{"access_token": "' + b"t" * token_requests.MAX_ANSWER_BYTES + b'"}')

    with pytest.raises(AaiError) as caught:
        await renew(kind, endpoint, executor, token_client)

    assert caught.value.code == ErrorCode.AUTH_INVALID
    assert f"answered more than {token_requests.MAX_ANSWER_BYTES} bytes" in caught.value.message


@pytest.mark.parametrize("kind", [*KINDS, "sign-in"])
async def test_an_answer_that_does_not_decode_as_its_content_encoding_says_ends_in_service_unavailable(
    endpoint: TokenEndpoint, executor: HttpExecutor, token_client: httpx.AsyncClient, kind: str
) -> None:
    """Not a traceback out of `auth login` (nor out of the task serving a sign-in page, which is
    the gateway's), nor a failure blamed on the app's own host: the token endpoint's answer."""
    endpoint.answer = (200, token_answer())
    endpoint.content_encoding = "gzip"  # the body is plain JSON
    try:
        with pytest.raises(AaiError) as caught:
            await (sign_in(endpoint) if kind == "sign-in" else renew(kind, endpoint, executor, token_client))
    finally:
        endpoint.content_encoding = None
    assert caught.value.code == ErrorCode.SERVICE_UNAVAILABLE
    assert f"token endpoint 127.0.0.1:{endpoint.server_address[1]} did not answer in valid HTTP" in (
        caught.value.message
    )
