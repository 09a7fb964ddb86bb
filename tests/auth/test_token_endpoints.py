"""The token endpoints of web apps obey the web network rules (DESIGN.md, second round): an App
Secret, an authorization code or a refresh token goes only over https to a public address (a
private one only with the user's permission), checked when connecting. Refusals are AUTH_INVALID
naming the endpoint and the rule, and the token server receives nothing. Real servers: the
authlib authorization server of oauth_server.py, over HTTPS with a test CA where it must work."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import anyio
import pytest

from aai_gateway.auth.credentials import CredentialStore, OAuthTokens
from aai_gateway.auth.oauth import login
from aai_gateway.auth.provider import AuthProvider
from aai_gateway.auth.secrets import MemorySecretStore
from aai_gateway.descriptor import AppDescriptor
from aai_gateway.discovery.web import WebFetchPolicy
from aai_gateway.errors import AaiError, ErrorCode
from aai_gateway.executors import Invocation
from aai_gateway.executors.http import HttpExecutor
from tests.auth.oauth_server import (
    APP_ID,
    APP_SECRET,
    PRE_CLIENT_ID,
    PRE_CLIENT_SECRET,
    OAuthTestServer,
    approve_over_http,
    c_app,
    oauth2_auth,
    oauth2_settings,
)
from tests.discovery.web_support import LocalCa, fixed_resolver

pytestmark = pytest.mark.anyio

IDP_HOST = "idp.example"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def ca(tmp_path_factory: pytest.TempPathFactory) -> LocalCa:
    return LocalCa.create(tmp_path_factory.mktemp("ca"), IDP_HOST)


@pytest.fixture
def plain_oauth() -> Iterator[OAuthTestServer]:
    server = OAuthTestServer().start()
    yield server
    server.close()


@pytest.fixture
def https_oauth(ca: LocalCa) -> Iterator[OAuthTestServer]:
    server = OAuthTestServer().start(ssl_context=ca.server_context)
    yield server
    server.close()


@pytest.fixture
def store() -> CredentialStore:
    return CredentialStore(MemorySecretStore())


def app_credential_auth(token_endpoint: str) -> dict[str, Any]:
    return {
        "type": "appCredential",
        "appCredential": {"tokenEndpoint": token_endpoint, "tokenType": "tenantAccessToken"},
    }


def oauth_auth(server: OAuthTestServer, origin: str) -> dict[str, Any]:
    auth = oauth2_auth(server)
    auth["oauth2"]["tokenEndpoint"] = f"{origin}/token"
    auth["oauth2"]["authorizationEndpoint"] = f"{origin}/authorize"
    return auth


def store_credential(store: CredentialStore, app: AppDescriptor, kind: str) -> None:
    """App ID + Secret, or OAuth tokens that expired (so the next call must refresh them)."""
    credential = store.new(app, "appCredential" if kind == "appCredential" else "oauth2")
    if kind == "appCredential":
        credential = credential.model_copy(update={"client_id": APP_ID, "client_secret": APP_SECRET})
    else:
        expired = OAuthTokens(
            access_token="at-old-0123", refresh_token="rt-0123456789", expires_at=time.time() - 5
        )
        credential = credential.model_copy(
            update={"client_id": PRE_CLIENT_ID, "client_secret": PRE_CLIENT_SECRET, "tokens": expired}
        )
    store.save(app, credential)


def web_app(kind: str, server: OAuthTestServer, origin: str) -> AppDescriptor:
    """A web app fetched from `origin` whose API and token endpoint are on `origin`."""
    auth = (
        app_credential_auth(f"{origin}/auth/token") if kind == "appCredential" else oauth_auth(server, origin)
    )
    path = "/app/api/me" if kind == "appCredential" else "/api/me"
    return c_app(origin, auth, {"me": path}, web_origin=origin)


@pytest.fixture
async def running() -> AsyncIterator[list[Any]]:
    """Providers and executors a test made, closed after it."""
    made: list[Any] = []
    yield made
    for item in made:
        await item.aclose()


async def call(app: AppDescriptor, provider: AuthProvider, executor: HttpExecutor) -> Any:
    tool = app.tool("me")
    assert tool is not None
    auth = await provider.http_auth(app, tool)
    return await executor.execute(Invocation(app, tool, {}, request_id="t", http_auth=auth))


@pytest.mark.parametrize("kind", ["appCredential", "oauth2"])
async def test_a_web_apps_plain_http_token_endpoint_is_refused_and_receives_nothing(
    plain_oauth: OAuthTestServer, store: CredentialStore, running: list[Any], kind: str
) -> None:
    """A descriptor that slipped past acceptance (an old cached copy) still gets no secret."""
    app = web_app(kind, plain_oauth, plain_oauth.url)
    store_credential(store, app, kind)
    policy = WebFetchPolicy(allow_private=True)
    provider, executor = AuthProvider(store, environ={}, web_policy=policy), HttpExecutor(web_policy=policy)
    running += [provider, executor]

    with pytest.raises(AaiError) as caught:
        await call(app, provider, executor)

    assert caught.value.code == ErrorCode.AUTH_INVALID
    assert caught.value.data["endpoint"].startswith(f"{plain_oauth.url}/")
    assert "is not an https URL" in caught.value.message
    assert "https to public addresses only" in caught.value.message
    assert plain_oauth.received == []


@pytest.mark.parametrize("kind", ["appCredential", "oauth2"])
async def test_a_token_endpoint_whose_name_resolves_to_loopback_is_refused_without_the_permission(
    https_oauth: OAuthTestServer, ca: LocalCa, store: CredentialStore, running: list[Any], kind: str
) -> None:
    origin = f"https://{IDP_HOST}:{https_oauth.url.rsplit(':', 1)[1]}"
    app = web_app(kind, https_oauth, origin)
    store_credential(store, app, kind)
    policy = ca.policy(allow_private=False)
    resolver = fixed_resolver("127.0.0.1")
    provider = AuthProvider(store, environ={}, web_policy=policy, resolver=resolver)
    running.append(provider)

    with pytest.raises(AaiError) as caught:
        await call(app, provider, HttpExecutor(web_policy=policy, resolver=resolver))

    assert caught.value.code == ErrorCode.AUTH_INVALID
    assert f"{IDP_HOST} resolves to 127.0.0.1, a loopback address" in caught.value.message
    assert "AAI_GATEWAY_ALLOW_PRIVATE_WEB=1" in caught.value.message
    assert https_oauth.received == []


async def test_with_the_permission_the_token_client_reaches_an_https_endpoint_signed_by_the_ca_file(
    https_oauth: OAuthTestServer, ca: LocalCa, store: CredentialStore, running: list[Any]
) -> None:
    origin = f"https://{IDP_HOST}:{https_oauth.url.rsplit(':', 1)[1]}"
    app = web_app("appCredential", https_oauth, origin)
    store_credential(store, app, "appCredential")
    policy, resolver = ca.policy(allow_private=True), fixed_resolver("127.0.0.1")
    provider = AuthProvider(store, environ={}, web_policy=policy, resolver=resolver)
    executor = HttpExecutor(web_policy=policy, resolver=resolver)
    running += [provider, executor]

    assert await call(app, provider, executor) == {"app": APP_ID}
    assert https_oauth.app_exchanges == 1


async def test_signing_in_to_a_web_app_never_sends_the_code_to_a_plain_http_token_endpoint(
    plain_oauth: OAuthTestServer,
) -> None:
    app = c_app(plain_oauth.url, oauth2_auth(plain_oauth), {"me": "/api/me"}, web_origin=plain_oauth.url)
    caught: list[AaiError] = []
    async with anyio.create_task_group() as tg:

        def open_url(url: str) -> None:
            tg.start_soon(approve_over_http, url)  # the user presses Allow in the browser

        try:
            await login(
                app,
                oauth2_settings(app),
                client_id=PRE_CLIENT_ID,
                client_secret=PRE_CLIENT_SECRET,
                open_url=open_url,
                web_policy=WebFetchPolicy(allow_private=True),
                timeout_seconds=30,
            )
        except AaiError as exc:
            caught.append(exc)

    assert [e.code for e in caught] == [ErrorCode.AUTH_INVALID]
    assert "token endpoint" in caught[0].message
    assert plain_oauth.token_requests == []
