"""`aai-gateway auth login`: OAuth 2.1 authorization code + PKCE with a loopback redirect, driven
by headless Chromium clicking the real consent page of the authlib authorization server."""

from __future__ import annotations

import asyncio
import re
import socket
from collections.abc import Callable, Coroutine, Iterator
from typing import Any
from urllib.parse import parse_qs, urlsplit

import anyio
import httpx
import pytest
from playwright.async_api import Page

from aai_gateway.auth.credentials import Credential
from aai_gateway.auth.oauth import PkcePair, authorization_url, login, s256_challenge
from aai_gateway.auth.token_flows import OAuth2Flow
from aai_gateway.descriptor import AppDescriptor
from aai_gateway.errors import AuthRequiredError, ErrorCode
from tests.auth.oauth_server import (
    PRE_CLIENT_ID,
    PRE_CLIENT_SECRET,
    OAuthTestServer,
    approve_over_http,
    c_app,
    oauth2_auth,
    oauth2_settings,
)
from tests.browser import browser_page

pytestmark = pytest.mark.anyio

CALLBACK = re.compile(r"^http://127\.0\.0\.1:\d+/callback\?")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def oauth() -> Iterator[OAuthTestServer]:
    server = OAuthTestServer().start()
    try:
        yield server
    finally:
        server.close()


def oauth_app(oauth: OAuthTestServer) -> AppDescriptor:
    return c_app(oauth.url, oauth2_auth(oauth), {"me": "/api/me", "whoami": "/api/me"})


def click(page: Page, button: str, seen: list[str]) -> Callable[[str], Coroutine[Any, Any, None]]:
    """The user: open the authorization URL, press `button`, land on the gateway's callback."""

    async def act(url: str) -> None:
        await page.goto(url)
        await page.click(f"#{button}")
        await page.wait_for_url(CALLBACK)
        seen.append(await page.inner_text("body"))

    return act


async def sign_in_with_browser(
    app: AppDescriptor,
    page: Page,
    *,
    button: str = "allow",
    client_id: str | None = PRE_CLIENT_ID,
    client_secret: str | None = PRE_CLIENT_SECRET,
    before: Callable[[str], Coroutine[Any, Any, None]] | None = None,
    timeout_seconds: float = 30,
) -> tuple[Credential, list[str]]:
    seen: list[str] = []
    user = click(page, button, seen)

    async def browse(url: str) -> None:
        if before is not None:
            await before(url)
        await user(url)

    credential = await login_with(
        browse,
        app,
        client_id=client_id,
        client_secret=client_secret,
        tool_names=[t.name for t in app.tools],
        timeout_seconds=timeout_seconds,
    )
    return credential, seen


async def login_with(
    browse: Callable[[str], Coroutine[Any, Any, None]], app: AppDescriptor, **options: Any
) -> Credential:
    """`login()` whose `open_url` starts `browse(url)` as a task; login's own error is raised as
    is (not inside the task group's exception group)."""
    outcome: list[Credential | AuthRequiredError] = []
    async with anyio.create_task_group() as tg:

        def open_url(url: str) -> None:
            tg.start_soon(browse, url)

        try:
            outcome.append(await login(app, oauth2_settings(app), open_url=open_url, **options))
        except AuthRequiredError as exc:
            outcome.append(exc)
    if isinstance(outcome[0], AuthRequiredError):
        raise outcome[0]
    return outcome[0]


async def test_signing_in_in_a_real_browser_returns_tokens_that_work(oauth: OAuthTestServer) -> None:
    app = oauth_app(oauth)

    async with browser_page() as page:
        credential, pages = await sign_in_with_browser(app, page)

    assert credential.kind == "oauth2"
    assert (credential.app_id, credential.binding) == (app.id, str(app.binding))
    assert (credential.client_id, credential.client_secret) == (PRE_CLIENT_ID, PRE_CLIENT_SECRET)
    assert credential.tokens is not None and credential.tokens.refresh_token
    assert credential.tokens.expires_at is not None
    assert "You can close this tab" in pages[0]
    authorize = oauth.authorize_requests[0]
    assert authorize["response_type"] == "code"
    assert authorize["scope"] == "read write"
    assert authorize["aaiTools"] == "me,whoami"
    assert authorize["code_challenge_method"] == "S256"
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+/callback", authorize["redirect_uri"])
    exchange = oauth.token_requests[0]
    assert exchange["grant_type"] == "authorization_code"
    assert exchange["redirect_uri"] == authorize["redirect_uri"]
    assert s256_challenge(exchange["code_verifier"]) == authorize["code_challenge"]
    async with httpx.AsyncClient() as client:
        flow = OAuth2Flow(oauth2_settings(app), credential, _keep, client)
        me = await client.get(f"{oauth.url}/api/me", auth=flow)
    assert me.json()["user"] == "alice"


async def _keep(credential: Credential) -> None:
    return None


async def test_denying_in_the_browser_ends_the_sign_in_with_the_servers_error(oauth: OAuthTestServer) -> None:
    app = oauth_app(oauth)

    async with browser_page() as page:
        with pytest.raises(AuthRequiredError) as caught:
            await sign_in_with_browser(app, page, button="deny")

    assert "access_denied" in caught.value.message
    assert caught.value.data["command"] == "aai-gateway auth login file:/tmp/aai-auth-tests/aai.json"
    assert oauth.token_requests == []


async def test_a_callback_with_a_forged_state_is_refused_and_the_sign_in_goes_on(
    oauth: OAuthTestServer,
) -> None:
    app = oauth_app(oauth)
    forged: list[httpx.Response] = []

    async def attacker(url: str) -> None:
        redirect_uri = parse_qs(urlsplit(url).query)["redirect_uri"][0]
        async with httpx.AsyncClient() as client:
            forged.append(await client.get(redirect_uri, params={"code": "attacker-code", "state": "forged"}))
            forged.append(await client.get(redirect_uri, params={"code": "attacker-code"}))

    async with browser_page() as page:
        credential, pages = await sign_in_with_browser(app, page, before=attacker)

    assert [r.status_code for r in forged] == [400, 400]
    assert "state does not match" in forged[0].text
    assert credential.tokens is not None
    assert [r["code"] for r in oauth.token_requests] != ["attacker-code"]
    assert all(r.get("code") != "attacker-code" for r in oauth.token_requests)
    assert oauth.grants == {"authorization_code": 1}
    assert "You can close this tab" in pages[0]


async def test_a_forged_callback_alone_never_completes_the_sign_in(oauth: OAuthTestServer) -> None:
    app = oauth_app(oauth)
    answers: list[int] = []

    async def forge(url: str) -> None:
        redirect_uri = parse_qs(urlsplit(url).query)["redirect_uri"][0]
        async with httpx.AsyncClient() as client:
            answers.append((await client.get(redirect_uri, params={"code": "x", "state": "y"})).status_code)

    with pytest.raises(AuthRequiredError) as caught:
        await login_with(forge, app, client_id=PRE_CLIENT_ID, timeout_seconds=1.5)

    assert answers == [400]
    assert "did not come back within 1.5 s" in caught.value.message
    assert oauth.token_requests == []


async def test_a_servers_error_that_repeats_the_client_secret_reaches_the_agent_without_it(
    oauth: OAuthTestServer,
) -> None:
    app = oauth_app(oauth)
    shown: list[str] = []

    async def careless_server(url: str) -> None:
        query = parse_qs(urlsplit(url).query)
        answer = {
            "state": query["state"][0],
            "error": "invalid_client",
            "error_description": f"client_secret {PRE_CLIENT_SECRET} is not allowed here",
        }
        async with httpx.AsyncClient() as client:
            shown.append((await client.get(query["redirect_uri"][0], params=answer)).text)

    with pytest.raises(AuthRequiredError) as caught:
        await login_with(careless_server, app, client_id=PRE_CLIENT_ID, client_secret=PRE_CLIENT_SECRET)

    assert "invalid_client" in caught.value.message and "is not allowed here" in caught.value.message
    assert PRE_CLIENT_SECRET not in caught.value.message
    assert PRE_CLIENT_SECRET not in str(caught.value.data)
    assert PRE_CLIENT_SECRET not in shown[0]


async def test_without_a_client_id_the_gateway_registers_itself(oauth: OAuthTestServer) -> None:
    app = oauth_app(oauth)

    async with browser_page() as page:
        credential, _ = await sign_in_with_browser(app, page, client_id=None, client_secret=None)

    registration = oauth.registrations[0]
    assert registration["client_name"] == "AAI Gateway"
    assert registration["token_endpoint_auth_method"] == "none"
    assert registration["redirect_uris"] == [oauth.authorize_requests[0]["redirect_uri"]]
    assert credential.client_id == oauth.authorize_requests[0]["client_id"] != PRE_CLIENT_ID
    assert credential.client_secret is None
    assert credential.tokens is not None
    oauth.revoke_access_tokens()  # the public client refreshes with its client id alone
    async with httpx.AsyncClient() as client:
        flow = OAuth2Flow(oauth2_settings(app), credential, _keep, client)
        me = await client.get(f"{oauth.url}/api/me", auth=flow)
    assert me.status_code == 200
    assert oauth.grants == {"authorization_code": 1, "refresh_token": 1}


async def test_without_registration_a_client_id_is_asked_for(oauth: OAuthTestServer) -> None:
    app = oauth_app(oauth)

    with pytest.raises(AuthRequiredError) as caught:
        await login(app, oauth2_settings(app), client_id=None, open_url=_never, registration=False)

    assert caught.value.code is ErrorCode.AUTH_REQUIRED
    assert (
        caught.value.data["command"]
        == "aai-gateway auth login file:/tmp/aai-auth-tests/aai.json --client-id <client id>"
    )
    assert "a client id is needed" in caught.value.message


async def test_a_server_without_dynamic_registration_asks_for_a_client_id(oauth: OAuthTestServer) -> None:
    oauth.offer_registration = False
    app = oauth_app(oauth)

    with pytest.raises(AuthRequiredError) as caught:
        await login(app, oauth2_settings(app), client_id=None, open_url=_never)

    assert "does not offer dynamic client registration" in caught.value.message
    assert "--client-id" in caught.value.data["command"]
    assert oauth.registrations == []


def _never(url: str) -> None:
    raise AssertionError("no browser should be opened")


async def test_the_server_verifies_the_pkce_code_verifier(oauth: OAuthTestServer) -> None:
    """The login tests rely on the server checking PKCE: a wrong verifier is refused, the right
    one accepted, and an authorization request without a challenge is refused outright."""
    app = oauth_app(oauth)
    pkce = PkcePair.create()
    redirect_uri = "http://127.0.0.1:9/callback"
    url = authorization_url(
        oauth2_settings(app),
        client_id=PRE_CLIENT_ID,
        redirect_uri=redirect_uri,
        state="s",
        code_challenge=pkce.challenge,
    )
    code = await _code_for(url)
    form = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": redirect_uri,
        "client_id": PRE_CLIENT_ID,
        "client_secret": PRE_CLIENT_SECRET,
    }

    async with httpx.AsyncClient() as client:
        wrong = await client.post(
            oauth.token_endpoint, data={**form, "code_verifier": PkcePair.create().verifier}
        )
        missing = await client.post(oauth.token_endpoint, data=form)
        other_uri = await client.post(
            oauth.token_endpoint,
            data={**form, "code_verifier": pkce.verifier, "redirect_uri": "http://127.0.0.1:10/callback"},
        )
        right = await client.post(oauth.token_endpoint, data={**form, "code_verifier": pkce.verifier})
        no_challenge = await client.get(url.replace(f"code_challenge={pkce.challenge}", "code_challenge="))

    assert (wrong.status_code, wrong.json()["error"]) == (400, "invalid_grant")
    assert (missing.status_code, missing.json()["error"]) == (400, "invalid_request")
    assert (other_uri.status_code, other_uri.json()["error"]) == (400, "invalid_grant")
    assert right.status_code == 200 and right.json()["access_token"]
    assert no_challenge.status_code == 400 and "PKCE is required" in no_challenge.text


async def _code_for(url: str) -> str:
    """Consent over plain HTTP; the callback (port 9, nobody listening) is not followed."""
    async with httpx.AsyncClient() as client:
        assert (await client.get(url)).status_code == 200
        consent = await client.post(url, data={"decision": "allow"})
    assert consent.status_code == 302
    return parse_qs(urlsplit(consent.headers["Location"]).query)["code"][0]


async def test_the_authorization_url_keeps_the_endpoints_own_query(oauth: OAuthTestServer) -> None:
    app = c_app(
        oauth.url,
        {
            "type": "oauth2",
            "oauth2": {
                "authorizationEndpoint": f"{oauth.authorization_endpoint}?tenant=acme",
                "tokenEndpoint": oauth.token_endpoint,
                "scopes": [],
            },
        },
        {"me": "/api/me"},
    )

    url = authorization_url(
        oauth2_settings(app),
        client_id="c",
        redirect_uri="http://127.0.0.1:1/callback",
        state="s",
        code_challenge="x",
    )

    query = parse_qs(urlsplit(url).query)
    assert query["tenant"] == ["acme"]
    assert "scope" not in query and "aaiTools" not in query


async def test_a_sign_in_without_a_browser_works_the_same(oauth: OAuthTestServer) -> None:
    """The HTTP-only consent the flow tests use: it exercises the same server path."""
    app = oauth_app(oauth)
    answers: list[int] = []

    async def consent(url: str) -> None:
        answers.append((await approve_over_http(url)).status)

    credential = await login_with(
        consent, app, client_id=PRE_CLIENT_ID, client_secret=PRE_CLIENT_SECRET, timeout_seconds=15
    )

    assert answers == [200]
    assert credential.tokens is not None


async def test_a_connection_landing_as_the_sign_in_stops_listening_breaks_nothing(
    oauth: OAuthTestServer,
) -> None:
    """The browser's late request (a favicon, a second tab) may land in the very loop pass that
    stops the sign-in. The listening socket is readable first and the sign-in is cancelled in the
    same pass, before its accept runs: asyncio's own accept then completed a future already
    cancelled (an `InvalidStateError` in a loop callback, which the test runner raises)."""
    app = oauth_app(oauth)
    loop = asyncio.get_running_loop()
    wake, waker = socket.socketpair()
    late: list[socket.socket] = []
    with anyio.CancelScope() as stop:

        async def land_late(port: int) -> None:
            await anyio.sleep(0.2)  # the listener waits for a connection
            loop.add_reader(wake.fileno(), stop.cancel)  # ready first in the next pass ...
            waker.send(b"x")
            late.append(socket.create_connection(("127.0.0.1", port)))  # ... the listener second

        async with anyio.create_task_group() as tg:

            def open_url(url: str) -> None:
                redirect_uri = parse_qs(urlsplit(url).query)["redirect_uri"][0]
                tg.start_soon(land_late, urlsplit(redirect_uri).port or 0)

            settings = oauth2_settings(app)
            await login(app, settings, open_url=open_url, client_id=PRE_CLIENT_ID, timeout_seconds=5)
    loop.remove_reader(wake.fileno())
    for sock in (wake, waker, *late):
        sock.close()

    assert stop.cancelled_caught
    assert len(late) == 1
