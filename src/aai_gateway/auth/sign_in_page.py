"""Signing in during a call: the OAuth sign-in of a web app (`auth.oauth2`) or of an MCP server
that requires the MCP authorization flow, started by the gateway when a call needs it and sent to
the user by URL elicitation, the way a missing API key gets the credential page.

`browser_sign_in` prepares it as `aai-gateway auth login` would (the stored confidential client
or dynamic registration; for an MCP server, discovery first) and returns a `SignInPage`, which
the server's page machinery (server/pages.py) serves like a one-time page: `serve()` yields the
authorization URL (the authorization server's, with the loopback redirect), `wait()` waits for
the browser, exchanges the code and stores the credential, bound to the app's binding. The link
reaches the user only through URL elicitation, never a result or error the model reads; a
sign-in that does not complete ends as None, its reason logged without any secret.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import ClassVar

import anyio

from ..descriptor import AppDescriptor
from ..descriptor.model import HttpChannel
from ..descriptor.model_auth import OAuth2Auth
from ..errors import AaiError
from .auth_context import AuthContext
from .credentials import Credential, CredentialStore, OAuthTokens
from .mcp_discovery import discover
from .oauth import LoopbackSignIn, SignIn, signed_in_credential
from .oauth_client import OAuthClient
from .oauth_registration import authorization_server_metadata, register_client
from .oauth_transport import Route
from .provider import AuthProvider
from .token_flows import oauth_client_of

logger = logging.getLogger(__name__)

SIGN_IN_SECONDS = 600.0

MakeCredential = Callable[[OAuthClient, OAuthTokens], Credential]


class SignInPage:
    """One sign-in, served like a one-time page (see the module docstring)."""

    kind: ClassVar[str] = "sign-in"

    def __init__(
        self, app: AppDescriptor, store: CredentialStore, signing_in: LoopbackSignIn, make: MakeCredential
    ) -> None:
        self.subject = app.id
        self._app = app
        self._store = store
        self._signing_in = signing_in
        self._make = make

    @asynccontextmanager
    async def serve(self) -> AsyncIterator[str]:
        async with self._signing_in.serve() as url:
            yield url

    async def wait(self) -> Credential | None:
        await self._signing_in.browser_returned()
        try:
            client, tokens = await self._signing_in.finish()
        except AaiError as exc:
            logger.info("the sign-in to %s did not complete (%s)", self.subject, exc.code.value)
            return None
        credential = self._make(client, tokens)
        try:
            await anyio.to_thread.run_sync(self._store.save, self._app, credential)
        except AaiError as exc:
            logger.warning("the sign-in to %s could not be stored (%s)", self.subject, exc.code.value)
            return None
        return credential


async def browser_sign_in(app: AppDescriptor, tool_name: str, provider: AuthProvider) -> SignInPage | None:
    """The sign-in a call of `tool_name` needs, or None when the app does not sign in with OAuth
    (or its MCP server does not ask for it). Raises the AAI error of a discovery that fails."""
    store, locale = provider.store, provider.locale
    existing = await anyio.to_thread.run_sync(store.load, app)
    tool = app.tool(tool_name)
    auth = tool.channel.auth if tool is not None and isinstance(tool.channel, HttpChannel) else None
    if isinstance(auth, OAuth2Auth):
        token_client = provider.token_client(app)
        return _web_sign_in(app, auth, provider, existing, lambda url: token_client)
    url = app.mcp_server_url
    if url is None:
        return None
    mcp_route = provider.mcp_route(url)
    found = await discover(app.id, url, mcp_route)
    if found is None:
        return None
    context = AuthContext.for_mcp_server(app, locale)
    server = found.server

    async def register(redirect_uri: str) -> OAuthClient:
        return await register_client(
            mcp_route, found.metadata, scope=server.scope, redirect_uri=redirect_uri, context=context
        )

    target = SignIn(
        server.authorization_endpoint,
        server.token_endpoint,
        server.scope,
        extra={"resource": server.resource},
    )
    signing_in = LoopbackSignIn(
        context, mcp_route, target, client=None, register=register, timeout_seconds=SIGN_IN_SECONDS
    )
    secrets = existing.secrets if existing is not None else {}

    def make(client: OAuthClient, tokens: OAuthTokens) -> Credential:
        return signed_in_credential(app, client, tokens, secrets=secrets, authorization_server=server)

    return SignInPage(app, store, signing_in, make)


def _web_sign_in(
    app: AppDescriptor, auth: OAuth2Auth, provider: AuthProvider, existing: Credential | None, route: Route
) -> SignInPage:
    context = AuthContext.for_app(app, auth, provider.locale)
    scope = " ".join(auth.scopes) or None
    # A confidential client the user registered (id + secret) is reused; a public one came from
    # dynamic registration for another loopback port, and registering again is what works.
    client = oauth_client_of(existing) if existing is not None and existing.client_secret else None

    async def register(redirect_uri: str) -> OAuthClient:
        metadata = await authorization_server_metadata(route, auth.authorization_endpoint)
        return await register_client(route, metadata, scope=scope, redirect_uri=redirect_uri, context=context)

    target = SignIn(
        auth.authorization_endpoint,
        auth.token_endpoint,
        scope,
        authorize_extra={"aaiTools": ",".join(t.name for t in app.tools)},
    )
    signing_in = LoopbackSignIn(
        context, route, target, client=client, register=register, timeout_seconds=SIGN_IN_SECONDS
    )
    return SignInPage(app, provider.store, signing_in, lambda c, t: signed_in_credential(app, c, t))
