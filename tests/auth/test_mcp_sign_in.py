"""Signing in to an authorization-protected Streamable HTTP MCP server and using its tokens: the
MCP authorization flow (protected-resource and authorization-server metadata, dynamic client
registration or a client id of the user's, PKCE, the RFC 8707 resource) against a real MCP server
and its own authorization server (mcp_oauth_servers.py), then `AuthProvider.mcp_http_auth` under
the SDK's Streamable HTTP client: the token sent, refreshed before expiry and after a 401, and what
the user must do kept as an AAI error when the server refuses."""

from __future__ import annotations

import logging

import pytest

from aai_gateway.auth.credentials import CredentialStore
from aai_gateway.auth.mcp_auth import McpOAuth
from aai_gateway.auth.mcp_login import NoSignInNeededError, login_mcp
from aai_gateway.auth.oauth import s256_challenge
from aai_gateway.auth.provider import AuthProvider
from aai_gateway.auth.secrets import MemorySecretStore
from aai_gateway.auth.sign_in_page import browser_sign_in
from aai_gateway.descriptor import AppDescriptor
from aai_gateway.errors import AuthRequiredError, ErrorCode
from tests.auth.mcp_oauth_servers import SCOPE, McpAuthorizationServer, ProtectedMcpServer
from tests.auth.mcp_sign_in_support import APP_FILE, consent, mcp_app, mcp_session, sign_in, whoami

pytestmark = pytest.mark.anyio

LOGIN = f"aai-gateway auth login file:{APP_FILE}"
PRE_CLIENT_ID = "pre-registered-mcp-client"
PRE_CLIENT_SECRET = "pre-registered-mcp-secret-5e8a1c"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def store() -> CredentialStore:
    return CredentialStore(MemorySecretStore())


async def signed_in(mcp: ProtectedMcpServer, store: CredentialStore) -> AppDescriptor:
    app = mcp_app(mcp.url)
    store.save(app, await sign_in(app))
    return app


async def auth_for(app: AppDescriptor, store: CredentialStore) -> McpOAuth:
    auth = await AuthProvider(store, environ={}).mcp_http_auth(app)
    assert auth is not None
    return auth


async def test_signing_in_discovers_registers_and_binds_the_token_to_the_mcp_server(
    mcp: ProtectedMcpServer, authorization: McpAuthorizationServer, store: CredentialStore
) -> None:
    app = await signed_in(mcp, store)

    credential = store.load(app)
    assert credential is not None and credential.tokens is not None
    assert credential.kind == "oauth2" and credential.tokens.refresh_token
    server = credential.authorization_server
    assert server is not None
    assert (server.resource, server.token_endpoint) == (mcp.url, f"{authorization.url}/token")
    [registration] = authorization.registrations
    assert registration["client_name"] == "AAI Gateway"
    assert registration["token_endpoint_auth_method"] == "none"
    assert credential.client_id == registration["client_id"] and credential.client_secret is None
    [authorize] = authorization.authorize_requests
    assert (authorize["resource"], authorize["scope"]) == (mcp.url, SCOPE)
    assert authorize["code_challenge_method"] == "S256"
    [exchange] = authorization.token_requests
    assert exchange["resource"] == mcp.url
    assert s256_challenge(exchange["code_verifier"]) == authorize["code_challenge"]

    auth = await auth_for(app, store)
    async with mcp_session(mcp.url, auth) as session:
        assert await whoami(session) == {"user": "alice", "scopes": [SCOPE]}
    assert auth.failure is None


async def test_a_token_about_to_expire_is_refreshed_with_the_resource_and_kept(
    mcp: ProtectedMcpServer, authorization: McpAuthorizationServer, store: CredentialStore
) -> None:
    authorization.lifetime = 30  # inside the gateway's 60 s refresh margin
    app = await signed_in(mcp, store)
    before = store.load(app)
    assert before is not None and before.tokens is not None
    authorization.lifetime = 3600

    async with mcp_session(mcp.url, await auth_for(app, store)) as session:
        assert (await whoami(session))["user"] == "alice"

    assert authorization.grants["refresh_token"] == 1
    [refresh] = [r for r in authorization.token_requests if r["grant_type"] == "refresh_token"]
    assert refresh["resource"] == mcp.url and refresh["client_id"] == before.client_id
    after = store.load(app)
    assert after is not None and after.tokens is not None
    assert after.tokens.access_token != before.tokens.access_token
    assert after.tokens.refresh_token != before.tokens.refresh_token  # the rotated one is kept


async def test_a_401_refreshes_once_and_the_request_goes_through(
    mcp: ProtectedMcpServer, authorization: McpAuthorizationServer, store: CredentialStore
) -> None:
    app = await signed_in(mcp, store)
    auth = await auth_for(app, store)

    async with mcp_session(mcp.url, auth) as session:
        assert (await whoami(session))["user"] == "alice"
        authorization.revoke_access_tokens()
        assert (await whoami(session))["user"] == "alice"

    assert authorization.grants["refresh_token"] == 1
    assert auth.failure is None


async def test_without_a_sign_in_the_server_s_401_becomes_auth_required_naming_auth_login(
    mcp: ProtectedMcpServer, store: CredentialStore
) -> None:
    app = mcp_app(mcp.url)
    auth = await auth_for(app, store)

    with pytest.raises(Exception):  # noqa: B017 (the SDK's own error for the refused handshake)
        async with mcp_session(mcp.url, auth):
            pass

    assert isinstance(auth.failure, AuthRequiredError)
    assert auth.failure.code is ErrorCode.AUTH_REQUIRED
    assert auth.failure.data["command"] == LOGIN
    assert "have not signed in" in auth.failure.message
    assert mcp.bearer_requests == 0


async def test_a_refused_refresh_is_auth_expired_saying_to_sign_in_again(
    mcp: ProtectedMcpServer, authorization: McpAuthorizationServer, store: CredentialStore
) -> None:
    app = await signed_in(mcp, store)
    auth = await auth_for(app, store)
    async with mcp_session(mcp.url, auth) as session:
        assert (await whoami(session))["user"] == "alice"
        authorization.revoke_access_tokens()
        authorization.refresh.clear()
        with pytest.raises(Exception):  # noqa: B017 (the SDK's error for the refused call)
            await whoami(session)

    assert isinstance(auth.failure, AuthRequiredError)
    assert auth.failure.code is ErrorCode.AUTH_EXPIRED
    assert auth.failure.data["command"] == LOGIN
    assert "could not be renewed" in auth.failure.message


@pytest.mark.parametrize("status", [403, 401])
async def test_insufficient_scope_asks_to_sign_in_again_for_the_scopes_the_server_names(
    mcp: ProtectedMcpServer, authorization: McpAuthorizationServer, store: CredentialStore, status: int
) -> None:
    app = await signed_in(mcp, store)
    auth = await auth_for(app, store)
    mcp.step_up, mcp.step_up_status = "mcp:admin", status

    with pytest.raises(Exception):  # noqa: B017 (the SDK's error for the refused handshake)
        async with mcp_session(mcp.url, auth):
            pass

    assert isinstance(auth.failure, AuthRequiredError)
    assert auth.failure.code is ErrorCode.AUTH_REQUIRED
    assert auth.failure.data["command"] == f"{LOGIN} --scope 'mcp:tools mcp:admin'"
    assert authorization.grants["refresh_token"] == 0  # a refresh cannot grant more scope

    store.save(app, await sign_in(app, scope="mcp:tools mcp:admin"))
    async with mcp_session(mcp.url, auth) as session:
        assert (await whoami(session))["scopes"] == ["mcp:tools", "mcp:admin"]
    assert auth.failure is None


async def test_a_client_id_of_the_users_is_used_instead_of_registering(
    mcp: ProtectedMcpServer, authorization: McpAuthorizationServer, store: CredentialStore
) -> None:
    authorization.pre_register(PRE_CLIENT_ID, PRE_CLIENT_SECRET)
    app = mcp_app(mcp.url)
    credential = await sign_in(app, client_id=PRE_CLIENT_ID, client_secret=PRE_CLIENT_SECRET)

    assert authorization.registrations == []
    assert (credential.client_id, credential.client_secret) == (PRE_CLIENT_ID, PRE_CLIENT_SECRET)
    [exchange] = authorization.token_requests
    assert (exchange["client_id"], exchange["client_secret"]) == (PRE_CLIENT_ID, PRE_CLIENT_SECRET)
    store.save(app, credential)
    async with mcp_session(mcp.url, await auth_for(app, store)) as session:
        assert (await whoami(session))["user"] == "alice"


async def test_denying_in_the_consent_page_ends_the_sign_in_with_the_servers_error(
    mcp: ProtectedMcpServer, authorization: McpAuthorizationServer
) -> None:
    app = mcp_app(mcp.url)

    with pytest.raises(AuthRequiredError) as refused:
        await sign_in(app, decision="deny")

    error = refused.value
    assert "access_denied" in error.message
    assert error.data["command"] == LOGIN
    assert authorization.token_requests == []


async def test_a_server_that_asks_for_no_sign_in_is_said_so(authorization: McpAuthorizationServer) -> None:
    app = mcp_app(f"{authorization.url}/.well-known/oauth-authorization-server")  # answers 405, not 401

    with pytest.raises(NoSignInNeededError):
        await login_mcp(app, existing=None, client_id=None, open_url=_never)

    assert authorization.registrations == []


def _never(url: str) -> None:
    raise AssertionError("no browser should be opened")


async def test_no_token_code_or_verifier_reaches_the_log(
    mcp: ProtectedMcpServer,
    authorization: McpAuthorizationServer,
    store: CredentialStore,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    authorization.lifetime = 30
    app = await signed_in(mcp, store)
    async with mcp_session(mcp.url, await auth_for(app, store)) as session:
        await whoami(session)

    credential = store.load(app)
    assert credential is not None and credential.tokens is not None
    exchange = authorization.token_requests[0]
    logged = caplog.text
    for secret in (
        credential.tokens.access_token,
        credential.tokens.refresh_token,
        exchange["code"],
        exchange["code_verifier"],
    ):
        assert secret and secret not in logged


async def test_during_a_call_the_sign_in_is_served_by_its_link_and_stores_the_tokens(
    mcp: ProtectedMcpServer, authorization: McpAuthorizationServer, store: CredentialStore
) -> None:
    """What the server sends by URL elicitation when an MCP server asks for a sign-in mid-call:
    the authorization server's link; once the user consents, the tokens are in the store."""
    app = mcp_app(mcp.url)
    page = await browser_sign_in(app, "whoami", AuthProvider(store, environ={}))
    assert page is not None

    async with page.serve() as url:
        assert url.startswith(f"{authorization.url}/authorize?")
        assert await consent(url) == 200
        credential = await page.wait()

    stored = store.load(app)
    assert credential is not None and stored is not None
    assert stored.tokens == credential.tokens
    assert credential.authorization_server is not None
    async with mcp_session(mcp.url, await auth_for(app, store)) as session:
        assert (await whoami(session))["user"] == "alice"
