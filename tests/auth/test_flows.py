"""Auth flows end to end: the provider builds a flow from the stored credential, the HTTP
executor sends the request, and a real server (httpbin, or the authlib authorization server in
`oauth_server.py`) says what arrived. No mocks between the gateway and the servers."""

from __future__ import annotations

import json
import logging
import socket
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import anyio
import httpx
import pytest

from aai_gateway.auth.credentials import AppToken, Credential, CredentialStore, OAuthTokens
from aai_gateway.auth.flows import ApiKeyFlow, CookieFlow
from aai_gateway.auth.oauth import login
from aai_gateway.auth.provider import AuthProvider
from aai_gateway.auth.secrets import MemorySecretStore
from aai_gateway.auth.token_flows import OAuth2Flow
from aai_gateway.descriptor import AppDescriptor
from aai_gateway.errors import AaiError, AuthRequiredError, ErrorCode
from aai_gateway.executors import Invocation
from aai_gateway.executors.http import HttpExecutor
from aai_gateway.executors.redaction import SECRET_MARKER
from tests.auth.oauth_server import (
    APP_ID,
    APP_SECRET,
    PRE_CLIENT_ID,
    PRE_CLIENT_SECRET,
    OAuthTestServer,
    ThreadedWsgiServer,
    approve_over_http,
    b_app,
    c_app,
    httpbin_or_echo_app,
    oauth2_auth,
    oauth2_settings,
)

pytestmark = pytest.mark.anyio

SERVER_LOGGERS = ("authlib", "werkzeug", "flask", "tests.")
API_KEY = "k-live-7f3a9c1e55"
ENV_TOKEN = "env-token-2b8d4e"
SESSION_COOKIE = "sess-0a9b8c7d"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def httpbin_server() -> Iterator[ThreadedWsgiServer]:
    server = ThreadedWsgiServer(httpbin_or_echo_app()).start()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture(scope="module")
def httpbin(httpbin_server: ThreadedWsgiServer) -> str:
    return httpbin_server.url


@pytest.fixture
def oauth() -> Iterator[OAuthTestServer]:
    server = OAuthTestServer().start()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def store() -> CredentialStore:
    return CredentialStore(MemorySecretStore())


@pytest.fixture
async def executor() -> AsyncIterator[HttpExecutor]:
    executor = HttpExecutor()
    try:
        yield executor
    finally:
        await executor.aclose()


@pytest.fixture
async def provider(store: CredentialStore) -> AsyncIterator[AuthProvider]:
    provider = AuthProvider(store, environ={"TEST_TOKEN": ENV_TOKEN})
    try:
        yield provider
    finally:
        await provider.aclose()


async def call(
    executor: HttpExecutor, provider: AuthProvider, app: AppDescriptor, tool_name: str = "me"
) -> Any:
    tool = app.tool(tool_name)
    assert tool is not None
    auth = await provider.http_auth(app, tool)
    return await executor.execute(Invocation(app, tool, {}, request_id="t", http_auth=auth))


def save(store: CredentialStore, app: AppDescriptor, **fields: Any) -> Credential:
    kind = fields.pop("kind")
    credential = store.new(app, kind).model_copy(update=fields)
    store.save(app, credential)
    return credential


def gateway_log(caplog: pytest.LogCaptureFixture) -> str:
    """Everything the gateway's side logged (the test servers' own loggers left out)."""
    return "\n".join(
        f"{r.name} {r.getMessage()}" for r in caplog.records if not r.name.startswith(SERVER_LOGGERS)
    )


def assert_secret_free(text: str, secrets: list[str]) -> None:
    for secret in secrets:
        assert secret not in text, "a secret reached the text"


# --------------------------------------------------------------------------- apiKey, bearer


async def test_an_api_key_goes_in_the_named_header_after_its_prefix(
    httpbin: str,
    httpbin_server: ThreadedWsgiServer,
    store: CredentialStore,
    provider: AuthProvider,
    executor: HttpExecutor,
) -> None:
    auth = {
        "type": "apiKey",
        "apiKey": {
            "location": "header",
            "name": "X-Api-Key",
            "prefix": "Token",
            "obtainUrl": "https://example.com/keys",
        },
    }
    app = c_app(httpbin, auth, {"me": "/headers"})
    save(store, app, kind="apiKey", api_key=API_KEY)

    answer = await call(executor, provider, app)

    assert httpbin_server.received[-1].headers["X-Api-Key"] == f"Token {API_KEY}"
    assert answer["headers"]["X-Api-Key"] == f"Token {SECRET_MARKER}"  # the echo comes back scrubbed


async def test_an_api_key_without_prefix_is_sent_as_stored(
    httpbin: str,
    httpbin_server: ThreadedWsgiServer,
    store: CredentialStore,
    provider: AuthProvider,
    executor: HttpExecutor,
) -> None:
    app = c_app(
        httpbin,
        {
            "type": "apiKey",
            "apiKey": {"location": "header", "name": "X-Auth-Token", "obtainUrl": "https://example.com"},
        },
        {"me": "/headers"},
    )
    save(store, app, kind="apiKey", api_key=API_KEY)

    answer = await call(executor, provider, app)

    assert httpbin_server.received[-1].headers["X-Auth-Token"] == API_KEY
    assert answer["headers"]["X-Auth-Token"] == SECRET_MARKER


async def test_an_api_key_in_the_query_reaches_the_app_but_not_the_logs(
    httpbin_server: ThreadedWsgiServer,
    store: CredentialStore,
    provider: AuthProvider,
    executor: HttpExecutor,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    caplog.set_level(logging.INFO, logger="httpx")  # a CLI test run before may have quieted it
    auth = {
        "type": "apiKey",
        "apiKey": {"location": "query", "name": "key", "obtainUrl": "https://example.com"},
    }
    app = c_app(httpbin_server.url, auth, {"me": "/get"})
    save(store, app, kind="apiKey", api_key=API_KEY)

    answer = await call(executor, provider, app)

    assert httpbin_server.received[-1].query == {"key": API_KEY}
    assert answer["args"] == {"key": SECRET_MARKER}
    assert "HTTP Request" in caplog.text  # httpx did log the request line...
    assert_secret_free(gateway_log(caplog), [API_KEY])  # ...without the query string


async def test_a_dialect_b_api_key_uses_key_name_and_key_placement(
    httpbin: str,
    httpbin_server: ThreadedWsgiServer,
    store: CredentialStore,
    provider: AuthProvider,
    executor: HttpExecutor,
) -> None:
    auth = {"type": "api_key", "key_name": "api_key", "key_placement": "query"}
    app = b_app(httpbin, auth, {"me": "/get"})
    save(store, app, kind="apiKey", api_key=API_KEY)

    answer = await call(executor, provider, app)

    assert httpbin_server.received[-1].query == {"api_key": API_KEY}
    assert answer["args"] == {"api_key": SECRET_MARKER}


async def test_a_bearer_token_comes_from_its_environment_variable(
    httpbin: str, httpbin_server: ThreadedWsgiServer, provider: AuthProvider, executor: HttpExecutor
) -> None:
    app = b_app(httpbin, {"type": "bearer", "env_var": "TEST_TOKEN"}, {"me": "/bearer"})

    answer = await call(executor, provider, app)

    assert httpbin_server.received[-1].headers["Authorization"] == f"Bearer {ENV_TOKEN}"
    assert answer == {"authenticated": True, "token": SECRET_MARKER}


async def test_a_bearer_token_in_the_query_is_the_access_token_parameter(
    httpbin: str, httpbin_server: ThreadedWsgiServer, provider: AuthProvider, executor: HttpExecutor
) -> None:
    auth = {"type": "bearer", "env_var": "TEST_TOKEN", "token_placement": "query"}
    app = b_app(httpbin, auth, {"me": "/get"})

    answer = await call(executor, provider, app)

    assert httpbin_server.received[-1].query == {"access_token": ENV_TOKEN}
    assert "Authorization" not in httpbin_server.received[-1].headers
    assert answer["args"] == {"access_token": SECRET_MARKER}
    assert "Authorization" not in answer["headers"]


async def test_a_missing_environment_variable_says_which_variable_to_set(
    httpbin: str, store: CredentialStore
) -> None:
    app = b_app(httpbin, {"type": "bearer", "env_var": "MISSING_TOKEN"}, {"me": "/bearer"})
    provider = AuthProvider(store, environ={})
    tool = app.tool("me")
    assert tool is not None

    with pytest.raises(AuthRequiredError) as caught:
        await provider.http_auth(app, tool)

    assert caught.value.code is ErrorCode.AUTH_REQUIRED
    assert caught.value.data["command"] == "export MISSING_TOKEN=<token>"
    assert caught.value.data["env_var"] == "MISSING_TOKEN"
    assert "MISSING_TOKEN is not set" in caught.value.message


async def test_a_web_descriptor_never_receives_an_environment_variable(
    httpbin: str, store: CredentialStore, provider: AuthProvider
) -> None:
    """A descriptor fetched from some origin could name any variable (OPENAI_API_KEY...)."""
    app = b_app(httpbin, {"type": "bearer", "env_var": "TEST_TOKEN"}, {"me": "/bearer"}, web_origin=httpbin)
    tool = app.tool("me")
    assert tool is not None

    with pytest.raises(AuthRequiredError) as caught:
        await provider.http_auth(app, tool)

    assert caught.value.data["command"] == f"aai-gateway auth set {httpbin}"
    assert_secret_free(str(caught.value) + json.dumps(caught.value.data), [ENV_TOKEN])


async def test_a_missing_api_key_names_the_command_the_url_and_the_instructions(
    httpbin: str, store: CredentialStore
) -> None:
    auth = {
        "type": "apiKey",
        "apiKey": {
            "location": "header",
            "name": "X-Auth-Token",
            "obtainUrl": "https://example.com/settings/tokens",
            "instructions": {"short": "Settings > Tokens", "helpUrl": "https://example.com/docs"},
        },
    }
    app = c_app(httpbin, auth, {"me": "/headers"})
    provider = AuthProvider(store, environ={}, locale="zh-CN")
    tool = app.tool("me")
    assert tool is not None

    with pytest.raises(AuthRequiredError) as caught:
        await provider.http_auth(app, tool)

    data = caught.value.data
    assert data["command"] == "aai-gateway auth set file:/tmp/aai-auth-tests/aai.json"
    assert data["obtainUrl"] == "https://example.com/settings/tokens"
    assert data["instructions"] == {"short": "Settings > Tokens", "help_url": "https://example.com/docs"}
    assert data["locale"] == "zh-CN"
    assert data["app_name"] == "认证测试"
    assert "no API key is stored" in caught.value.message


async def test_a_tool_without_auth_gets_no_flow(httpbin: str, provider: AuthProvider) -> None:
    app = c_app(
        httpbin,
        {"type": "apiKey", "apiKey": {"location": "header", "name": "X", "obtainUrl": "https://e.com"}},
        {"me": "/get"},
    )
    tool = app.tool("me")
    assert tool is not None
    unauthenticated = tool.model_copy(update={"channel": tool.channel.model_copy(update={"auth": None})})

    assert await provider.http_auth(app, unauthenticated) is None


def test_api_key_values_with_line_breaks_are_refused() -> None:
    with pytest.raises(ValueError, match="line break") as caught:
        ApiKeyFlow(location="header", name="X-Api-Key", value="abc\r\nX-Evil: 1")
    assert "abc" not in str(caught.value)


async def test_a_stored_key_too_short_to_be_scrubbed_is_warned_about_once_by_name_not_value(
    httpbin: str,
    store: CredentialStore,
    provider: AuthProvider,
    executor: HttpExecutor,
    caplog: pytest.LogCaptureFixture,
) -> None:
    auth = {"type": "apiKey", "apiKey": {"location": "header", "name": "X-Key", "obtainUrl": "https://e.com"}}
    app = c_app(httpbin, auth, {"me": "/headers"})
    save(store, app, kind="apiKey", api_key="k3y")

    await call(executor, provider, app)
    await call(executor, provider, app)

    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings == [
        "the API key of dev.test.auth is shorter than 6 characters: the gateway cannot remove so short "
        "a value from what the app answers, so an app that echoes it would show it to the agent"
    ]


# --------------------------------------------------------------------------- cookies


async def test_cookies_travel_in_one_cookie_header_with_the_apps_own(
    httpbin: str,
    httpbin_server: ThreadedWsgiServer,
    store: CredentialStore,
    provider: AuthProvider,
    executor: HttpExecutor,
) -> None:
    auth = {
        "type": "cookie",
        "cookie": {
            "loginUrl": "https://example.com/login",
            "requiredCookies": ["session", "csrf"],
            "domain": "127.0.0.1",
        },
    }
    app = c_app(httpbin, auth, {"me": "/cookies"}, default_headers={"Cookie": "theme=dark"})
    save(store, app, kind="cookie", cookies={"session": SESSION_COOKIE, "csrf": "c1"})

    answer = await call(executor, provider, app)

    assert httpbin_server.received[-1].headers["Cookie"] == f"theme=dark; session={SESSION_COOKIE}; csrf=c1"
    # The session cookie comes back scrubbed; `c1` is too short to be told from ordinary text.
    assert answer == {"cookies": {"theme": "dark", "session": SECRET_MARKER, "csrf": "c1"}}


async def test_cookies_never_leave_their_domain(httpbin: str) -> None:
    async with httpx.AsyncClient() as client:
        outside = await client.get(f"{httpbin}/cookies", auth=CookieFlow({"s": "v"}, domain=".example.com"))
        inside = await client.get(f"{httpbin}/cookies", auth=CookieFlow({"s": "v"}, domain="127.0.0.1"))

    assert outside.json() == {"cookies": {}}
    assert inside.json() == {"cookies": {"s": "v"}}


def test_a_dotted_cookie_domain_covers_its_subdomains_only() -> None:
    flow = CookieFlow({"s": "v"}, domain=".example.com")

    assert flow.covers("example.com")
    assert flow.covers("api.example.com")
    assert not flow.covers("evilexample.com")
    assert not flow.covers("example.com.evil.test")


async def test_missing_required_cookies_are_named_with_the_login_url(
    httpbin: str, store: CredentialStore, provider: AuthProvider
) -> None:
    auth = {
        "type": "cookie",
        "cookie": {
            "loginUrl": "https://example.com/login",
            "requiredCookies": ["session", "csrf"],
            "domain": "127.0.0.1",
            "instructions": "Copy them from DevTools",
        },
    }
    app = c_app(httpbin, auth, {"me": "/cookies"})
    save(store, app, kind="cookie", cookies={"session": SESSION_COOKIE})
    tool = app.tool("me")
    assert tool is not None

    with pytest.raises(AuthRequiredError) as caught:
        await provider.http_auth(app, tool)

    assert "csrf" in caught.value.message
    assert caught.value.data["obtainUrl"] == "https://example.com/login"
    assert caught.value.data["instructions"] == {"short": "Copy them from DevTools"}
    assert_secret_free(caught.value.message, [SESSION_COOKIE])


# --------------------------------------------------------------------------- appCredential


def app_credential_app(oauth: OAuthTestServer, token_type: str = "tenantAccessToken") -> AppDescriptor:  # noqa: S107
    auth = {
        "type": "appCredential",
        "appCredential": {
            "tokenEndpoint": oauth.app_token_endpoint,
            "tokenType": token_type,
            "expiresIn": 7200,
            "instructions": {"short": "App ID and Secret", "helpUrl": "https://open.example.com/app"},
        },
    }
    return c_app(oauth.url, auth, {"me": "/app/api/me"})


async def test_an_app_token_is_exchanged_once_then_cached_and_stored(
    oauth: OAuthTestServer, store: CredentialStore, provider: AuthProvider, executor: HttpExecutor
) -> None:
    app = app_credential_app(oauth)
    save(store, app, kind="appCredential", client_id=APP_ID, client_secret=APP_SECRET)

    first = await call(executor, provider, app)
    second = await call(executor, provider, app)

    assert first == second == {"app": APP_ID}
    assert oauth.app_exchanges == 1
    stored = store.load(app)
    assert stored is not None and stored.app_token is not None
    assert oauth.app_resource_tokens == [stored.app_token.token] * 2


async def test_the_lifetime_in_the_token_answer_wins_over_the_descriptors(
    oauth: OAuthTestServer, store: CredentialStore, provider: AuthProvider, executor: HttpExecutor
) -> None:
    oauth.app_token_lifetime = 900  # the descriptor says 7200
    app = app_credential_app(oauth)
    save(store, app, kind="appCredential", client_id=APP_ID, client_secret=APP_SECRET)

    started = time.time()
    await call(executor, provider, app)

    stored = store.load(app)
    assert stored is not None and stored.app_token is not None
    assert started + 890 < stored.app_token.expires_at < time.time() + 910


async def test_without_a_lifetime_in_the_answer_the_descriptors_is_used(
    oauth: OAuthTestServer, store: CredentialStore, provider: AuthProvider, executor: HttpExecutor
) -> None:
    oauth.app_token_omit_expiry = True
    oauth.app_token_field = "app_access_token"
    app = app_credential_app(oauth, token_type="appAccessToken")
    save(store, app, kind="appCredential", client_id=APP_ID, client_secret=APP_SECRET)

    await call(executor, provider, app)

    stored = store.load(app)
    assert stored is not None and stored.app_token is not None
    assert stored.app_token.expires_at == pytest.approx(time.time() + 7200, abs=10)


async def test_an_expiring_app_token_is_exchanged_again_with_the_stored_id_and_secret(
    oauth: OAuthTestServer, store: CredentialStore, provider: AuthProvider, executor: HttpExecutor
) -> None:
    app = app_credential_app(oauth)
    old = AppToken(token="t-old", expires_at=time.time() + 30)  # inside the 60 s margin
    save(store, app, kind="appCredential", client_id=APP_ID, client_secret=APP_SECRET, app_token=old)

    await call(executor, provider, app)

    stored = store.load(app)
    assert oauth.app_exchanges == 1
    assert stored is not None and stored.app_token is not None and stored.app_token.token != "t-old"
    assert oauth.app_resource_tokens == [stored.app_token.token]


async def test_an_app_token_refused_with_401_is_exchanged_again_and_the_call_retried_once(
    oauth: OAuthTestServer, store: CredentialStore, provider: AuthProvider, executor: HttpExecutor
) -> None:
    app = app_credential_app(oauth)
    save(store, app, kind="appCredential", client_id=APP_ID, client_secret=APP_SECRET)
    await call(executor, provider, app)
    oauth.revoke_app_tokens()  # the app forgets the token long before it expires

    answer = await call(executor, provider, app)

    assert answer == {"app": APP_ID}
    assert oauth.app_exchanges == 2
    assert len(oauth.app_resource_tokens) == 2


async def test_a_refused_app_secret_is_auth_required_with_the_endpoints_words(
    oauth: OAuthTestServer, store: CredentialStore, provider: AuthProvider, executor: HttpExecutor
) -> None:
    app = app_credential_app(oauth)
    save(store, app, kind="appCredential", client_id=APP_ID, client_secret="wrong-secret-123")

    with pytest.raises(AuthRequiredError) as caught:
        await call(executor, provider, app)

    error = caught.value
    assert error.code is ErrorCode.AUTH_REQUIRED
    assert "app secret invalid" in error.message
    assert error.data["command"] == "aai-gateway auth set file:/tmp/aai-auth-tests/aai.json"
    assert error.data["obtainUrl"] == "https://open.example.com/app"
    assert_secret_free(error.message + json.dumps(error.data), ["wrong-secret-123"])


async def test_a_refused_exchange_after_a_working_one_is_auth_expired(
    oauth: OAuthTestServer, store: CredentialStore, provider: AuthProvider, executor: HttpExecutor
) -> None:
    app = app_credential_app(oauth)
    expired = AppToken(token="t-was-good", expires_at=time.time() - 5)
    save(
        store, app, kind="appCredential", client_id=APP_ID, client_secret="rotated-away-1", app_token=expired
    )

    with pytest.raises(AuthRequiredError) as caught:
        await call(executor, provider, app)

    assert caught.value.code is ErrorCode.AUTH_EXPIRED


async def test_app_credentials_without_a_secret_are_auth_required(
    oauth: OAuthTestServer, store: CredentialStore, provider: AuthProvider
) -> None:
    app = app_credential_app(oauth)
    tool = app.tool("me")
    assert tool is not None

    with pytest.raises(AuthRequiredError) as caught:
        await provider.http_auth(app, tool)

    assert "no App ID and App Secret" in caught.value.message
    assert caught.value.data["obtainUrl"] == "https://open.example.com/app"


# --------------------------------------------------------------------------- oauth2


async def signed_in(oauth: OAuthTestServer, store: CredentialStore, app: AppDescriptor) -> Credential:
    """`aai-gateway auth login` with the consent given over HTTP (the browser tests are in
    test_oauth_login.py); the credential is stored as the CLI stores it."""
    async with anyio.create_task_group() as tg:

        def open_url(url: str) -> None:
            tg.start_soon(approve_over_http, url)

        credential = await login(
            app,
            oauth2_settings(app),
            client_id=PRE_CLIENT_ID,
            client_secret=PRE_CLIENT_SECRET,
            tool_names=[t.name for t in app.tools],
            open_url=open_url,
            timeout_seconds=15,
        )
    store.save(app, credential)
    return credential


def oauth_app(oauth: OAuthTestServer) -> AppDescriptor:
    return c_app(oauth.url, oauth2_auth(oauth), {"me": "/api/me"})


def tokens_of(store: CredentialStore, app: AppDescriptor) -> OAuthTokens:
    stored = store.load(app)
    assert stored is not None and stored.tokens is not None
    return stored.tokens


async def test_an_oauth_token_is_sent_in_the_authorization_header(
    oauth: OAuthTestServer, store: CredentialStore, provider: AuthProvider, executor: HttpExecutor
) -> None:
    app = oauth_app(oauth)
    credential = await signed_in(oauth, store, app)
    assert credential.tokens is not None

    answer = await call(executor, provider, app)

    assert answer == {"user": "alice", "client_id": PRE_CLIENT_ID, "scope": "read write"}
    assert oauth.resource_tokens == [credential.tokens.access_token]
    assert oauth.grants == {"authorization_code": 1}


async def test_an_oauth_token_in_the_query_is_the_access_token_parameter(
    oauth: OAuthTestServer,
    store: CredentialStore,
    provider: AuthProvider,
    executor: HttpExecutor,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    auth = {
        "type": "oauth2",
        "auth_url": oauth.authorization_endpoint,
        "token_url": oauth.token_endpoint,
        "scopes": ["read"],
        "token_placement": "query",
    }
    app = b_app(oauth.url, auth, {"me": "/api/me"})
    credential = await signed_in(oauth, store, app)
    assert credential.tokens is not None

    answer = await call(executor, provider, app)

    assert answer["user"] == "alice"
    assert oauth.resource_tokens == [credential.tokens.access_token]
    assert_secret_free(gateway_log(caplog), [credential.tokens.access_token])


async def test_a_custom_token_prefix_is_used_in_the_header(httpbin: str) -> None:
    auth = {
        "type": "oauth2",
        "auth_url": "https://a.example/authorize",
        "token_url": "https://a.example/token",
        "scopes": ["read"],
        "token_prefix": "token",
    }
    app = b_app(httpbin, auth, {"me": "/headers"})
    credential = Credential(
        kind="oauth2", app_id=app.id, binding="x", tokens=OAuthTokens(access_token="at-1", expires_at=None)
    )
    flow = OAuth2Flow(oauth2_settings(app), credential, _no_persist, httpx.AsyncClient())

    async with httpx.AsyncClient() as client:
        answer = (await client.get(f"{httpbin}/headers", auth=flow)).json()

    assert answer["headers"]["Authorization"] == "token at-1"


async def _no_persist(credential: Credential) -> None:
    return None


async def test_a_token_about_to_expire_is_refreshed_before_the_request(
    oauth: OAuthTestServer, store: CredentialStore, provider: AuthProvider, executor: HttpExecutor
) -> None:
    oauth.access_token_lifetime = 30  # inside the 60 s refresh margin from the start
    app = oauth_app(oauth)
    credential = await signed_in(oauth, store, app)
    assert credential.tokens is not None
    oauth.access_token_lifetime = 3600

    await call(executor, provider, app)

    fresh = tokens_of(store, app)
    assert oauth.grants == {"authorization_code": 1, "refresh_token": 1}
    assert oauth.resource_tokens == [fresh.access_token]  # the old token was never sent
    assert fresh.access_token != credential.tokens.access_token
    assert fresh.expires_at == pytest.approx(time.time() + 3600, abs=10)


async def test_a_refreshed_flow_still_names_the_token_it_replaced_for_scrubbing(
    oauth: OAuthTestServer, store: CredentialStore, provider: AuthProvider, executor: HttpExecutor
) -> None:
    """An app may echo the token it saw first (a 401 body quoting it) after the retry."""
    oauth.access_token_lifetime = 30  # refreshed before the first request
    app = oauth_app(oauth)
    old = (await signed_in(oauth, store, app)).tokens
    assert old is not None
    tool = app.tool("me")
    assert tool is not None
    flow = await provider.http_auth(app, tool)
    assert isinstance(flow, OAuth2Flow)

    await executor.execute(Invocation(app, tool, {}, request_id="t", http_auth=flow))

    new = tokens_of(store, app)
    assert new.access_token != old.access_token
    assert {old.access_token, new.access_token, PRE_CLIENT_SECRET} <= set(flow.secret_values())


async def test_a_401_refreshes_once_and_retries_the_call(
    oauth: OAuthTestServer, store: CredentialStore, provider: AuthProvider, executor: HttpExecutor
) -> None:
    app = oauth_app(oauth)
    await signed_in(oauth, store, app)
    oauth.revoke_access_tokens()  # revoked long before it expires

    answer = await call(executor, provider, app)

    assert answer["user"] == "alice"
    assert oauth.grants["refresh_token"] == 1
    assert oauth.resource_tokens == [tokens_of(store, app).access_token]


async def test_a_401_after_the_refresh_is_auth_expired_without_a_second_refresh(
    oauth: OAuthTestServer, store: CredentialStore, provider: AuthProvider, executor: HttpExecutor
) -> None:
    app = oauth_app(oauth)
    await signed_in(oauth, store, app)
    oauth.refuse_all_tokens = True

    with pytest.raises(AuthRequiredError) as caught:
        await call(executor, provider, app)

    assert caught.value.code is ErrorCode.AUTH_EXPIRED
    assert "aai-gateway auth login file:/tmp/aai-auth-tests/aai.json" in caught.value.message
    assert oauth.grants["refresh_token"] == 1


async def test_a_refresh_without_a_new_refresh_token_keeps_the_old_one(
    oauth: OAuthTestServer, store: CredentialStore, provider: AuthProvider, executor: HttpExecutor
) -> None:
    oauth.rotate_refresh_tokens = False
    app = oauth_app(oauth)
    credential = await signed_in(oauth, store, app)
    assert credential.tokens is not None and credential.tokens.refresh_token

    for _ in range(2):  # twice: the kept refresh token must still work
        oauth.revoke_access_tokens()
        await call(executor, provider, app)

    assert oauth.grants["refresh_token"] == 2
    assert tokens_of(store, app).refresh_token == credential.tokens.refresh_token
    assert tokens_of(store, app).access_token != credential.tokens.access_token


async def test_a_rotated_refresh_token_replaces_the_old_one(
    oauth: OAuthTestServer, store: CredentialStore, provider: AuthProvider, executor: HttpExecutor
) -> None:
    app = oauth_app(oauth)
    credential = await signed_in(oauth, store, app)
    assert credential.tokens is not None

    for _ in range(2):  # the second refresh only works with the rotated token
        oauth.revoke_access_tokens()
        await call(executor, provider, app)

    assert oauth.grants["refresh_token"] == 2
    assert tokens_of(store, app).refresh_token not in (None, credential.tokens.refresh_token)


async def test_a_failed_refresh_is_auth_expired_and_says_to_sign_in_again(
    oauth: OAuthTestServer, store: CredentialStore, provider: AuthProvider, executor: HttpExecutor
) -> None:
    app = oauth_app(oauth)
    credential = await signed_in(oauth, store, app)
    assert credential.tokens is not None
    oauth.revoke_access_tokens()
    oauth.fail_refresh = True

    with pytest.raises(AaiError) as caught:
        await call(executor, provider, app)

    error = caught.value
    assert error.code is ErrorCode.AUTH_EXPIRED
    assert "`aai-gateway auth login file:/tmp/aai-auth-tests/aai.json`" in error.message
    assert "invalid_grant" in error.message
    text = error.message + json.dumps(error.to_payload())
    assert_secret_free(
        text, [credential.tokens.access_token, str(credential.tokens.refresh_token), PRE_CLIENT_SECRET]
    )


async def test_an_expired_token_without_a_refresh_token_is_auth_expired_before_any_request(
    oauth: OAuthTestServer, store: CredentialStore, provider: AuthProvider, executor: HttpExecutor
) -> None:
    app = oauth_app(oauth)
    tokens = OAuthTokens(access_token="at-old", expires_at=time.time() - 1)
    save(store, app, kind="oauth2", client_id=PRE_CLIENT_ID, tokens=tokens)

    with pytest.raises(AuthRequiredError) as caught:
        await call(executor, provider, app)

    assert caught.value.code is ErrorCode.AUTH_EXPIRED
    assert caught.value.data["command"] == "aai-gateway auth login file:/tmp/aai-auth-tests/aai.json"
    assert oauth.resource_tokens == []


async def test_an_app_that_was_never_signed_in_says_to_run_auth_login(
    oauth: OAuthTestServer, provider: AuthProvider
) -> None:
    app = oauth_app(oauth)
    tool = app.tool("me")
    assert tool is not None

    with pytest.raises(AuthRequiredError) as caught:
        await provider.http_auth(app, tool)

    assert caught.value.code is ErrorCode.AUTH_REQUIRED
    assert caught.value.data["command"] == "aai-gateway auth login file:/tmp/aai-auth-tests/aai.json"
    assert caught.value.data["auth_type"] == "oauth2"


async def test_concurrent_calls_share_one_refresh(
    oauth: OAuthTestServer, store: CredentialStore, provider: AuthProvider, executor: HttpExecutor
) -> None:
    oauth.access_token_lifetime = 30
    app = oauth_app(oauth)
    await signed_in(oauth, store, app)
    oauth.access_token_lifetime = 3600
    answers: list[Any] = []

    async def one() -> None:
        answers.append(await call(executor, provider, app))

    async with anyio.create_task_group() as tg:
        for _ in range(8):
            tg.start_soon(one)

    assert len(answers) == 8
    assert oauth.grants["refresh_token"] == 1
    assert set(oauth.resource_tokens) == {tokens_of(store, app).access_token}


async def test_refreshed_tokens_are_used_by_the_next_gateway_process(
    oauth: OAuthTestServer, store: CredentialStore, provider: AuthProvider, executor: HttpExecutor
) -> None:
    app = oauth_app(oauth)
    await signed_in(oauth, store, app)
    oauth.revoke_access_tokens()
    await call(executor, provider, app)
    later = AuthProvider(store, environ={})

    try:
        await call(executor, later, app)
    finally:
        await later.aclose()

    assert oauth.grants["refresh_token"] == 1
    assert len(set(oauth.resource_tokens)) == 1


async def test_a_new_sign_in_stored_by_the_cli_replaces_the_cached_flow(
    oauth: OAuthTestServer, store: CredentialStore, provider: AuthProvider, executor: HttpExecutor
) -> None:
    app = oauth_app(oauth)
    await signed_in(oauth, store, app)
    await call(executor, provider, app)
    again = await signed_in(oauth, store, app)  # another process signs in again
    assert again.tokens is not None

    await call(executor, provider, app)

    assert oauth.resource_tokens[-1] == again.tokens.access_token


async def test_a_credential_of_another_kind_is_not_used(
    oauth: OAuthTestServer, store: CredentialStore, provider: AuthProvider
) -> None:
    app = oauth_app(oauth)
    save(store, app, kind="apiKey", api_key=API_KEY)
    tool = app.tool("me")
    assert tool is not None

    with pytest.raises(AuthRequiredError) as caught:
        await provider.http_auth(app, tool)

    assert "of type apiKey" in caught.value.message
    assert_secret_free(caught.value.message, [API_KEY])


# --------------------------------------------------------------------------- secrets and logs


async def test_no_flow_logs_a_secret(
    *,
    httpbin: str,
    oauth: OAuthTestServer,
    store: CredentialStore,
    provider: AuthProvider,
    executor: HttpExecutor,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    key_app = c_app(
        httpbin,
        {"type": "apiKey", "apiKey": {"location": "query", "name": "k", "obtainUrl": "https://e.com"}},
        {"me": "/get"},
        app_id="dev.test.key",
    )
    save(store, key_app, kind="apiKey", api_key=API_KEY)
    cookie_app = c_app(
        httpbin,
        {
            "type": "cookie",
            "cookie": {
                "loginUrl": "https://e.com/login",
                "requiredCookies": ["session"],
                "domain": "127.0.0.1",
            },
        },
        {"me": "/cookies"},
        app_id="dev.test.cookie",
    )
    save(store, cookie_app, kind="cookie", cookies={"session": SESSION_COOKIE})
    bearer_app = b_app(
        httpbin, {"type": "bearer", "env_var": "TEST_TOKEN", "token_placement": "query"}, {"me": "/get"}
    )
    exchange_app = c_app(
        oauth.url,
        {
            "type": "appCredential",
            "appCredential": {"tokenEndpoint": oauth.app_token_endpoint, "tokenType": "tenantAccessToken"},
        },
        {"me": "/app/api/me"},
        app_id="dev.test.exchange",
    )
    save(store, exchange_app, kind="appCredential", client_id=APP_ID, client_secret=APP_SECRET)
    oauth_application = oauth_app(oauth)

    for app in (key_app, cookie_app, bearer_app, exchange_app):
        await call(executor, provider, app)
    oauth.revoke_app_tokens()
    await call(executor, provider, exchange_app)  # 401 → exchange again
    await signed_in(oauth, store, oauth_application)
    oauth.revoke_access_tokens()
    await call(executor, provider, oauth_application)  # 401 → refresh → retry
    oauth.revoke_access_tokens()
    oauth.fail_refresh = True
    with pytest.raises(AuthRequiredError):
        await call(executor, provider, oauth_application)

    secrets = [API_KEY, SESSION_COOKIE, ENV_TOKEN, APP_SECRET, PRE_CLIENT_SECRET, *oauth.app_resource_tokens]
    secrets += list(oauth.by_access) + list(oauth.by_refresh)
    secrets += [r["code"] for r in oauth.token_requests if "code" in r]
    secrets += [r["code_verifier"] for r in oauth.token_requests if "code_verifier" in r]
    assert len(secrets) > 12
    assert gateway_log(caplog)  # the flows did log (steps, statuses)
    assert_secret_free(gateway_log(caplog), secrets)


async def test_an_unreachable_token_endpoint_is_service_unavailable_not_a_sign_in_problem(
    store: CredentialStore, provider: AuthProvider, executor: HttpExecutor
) -> None:
    with socket.socket() as sock:  # a port that was free a moment ago: nobody listens there
        sock.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{sock.getsockname()[1]}"
    auth = {
        "type": "appCredential",
        "appCredential": {"tokenEndpoint": f"{closed}/auth/token", "tokenType": "tenantAccessToken"},
    }
    app = c_app(closed, auth, {"me": "/app/api/me"})
    save(store, app, kind="appCredential", client_id=APP_ID, client_secret=APP_SECRET)

    with pytest.raises(AaiError) as caught:
        await call(executor, provider, app)

    assert caught.value.code is ErrorCode.SERVICE_UNAVAILABLE
    assert_secret_free(caught.value.message + json.dumps(caught.value.data), [APP_SECRET])


async def test_a_refused_api_key_is_auth_required_not_expired(
    oauth: OAuthTestServer, store: CredentialStore, provider: AuthProvider, executor: HttpExecutor
) -> None:
    auth = {
        "type": "apiKey",
        "apiKey": {
            "location": "header",
            "name": "Authorization",
            "prefix": "Bearer",
            "obtainUrl": "https://example.com",
        },
    }
    app = c_app(oauth.url, auth, {"me": "/api/me"})
    save(store, app, kind="apiKey", api_key=API_KEY)

    with pytest.raises(AaiError) as caught:
        await call(executor, provider, app)

    assert caught.value.code is ErrorCode.AUTH_REQUIRED


async def test_a_descriptor_from_another_source_claiming_the_same_id_gets_no_key(
    httpbin: str, store: CredentialStore, provider: AuthProvider
) -> None:
    auth = {"type": "apiKey", "apiKey": {"location": "header", "name": "X-Key", "obtainUrl": "https://e.com"}}
    local = c_app(httpbin, auth, {"me": "/headers"})
    save(store, local, kind="apiKey", api_key=API_KEY)
    impostor = c_app(httpbin, auth, {"me": "/headers"}, web_origin="https://evil.example")
    tool = impostor.tool("me")
    assert tool is not None

    with pytest.raises(AuthRequiredError):
        await provider.http_auth(impostor, tool)
