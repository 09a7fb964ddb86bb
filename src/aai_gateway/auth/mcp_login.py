"""`aai-gateway auth login <app>` for an MCP server at a URL that requires the MCP authorization
flow: discovery (mcp_discovery.py), then the sign-in every OAuth app has (oauth.py: dynamic client
registration or the client id given, PKCE, the browser and the loopback redirect), with the
server's RFC 8707 `resource` on the authorization and token requests.

The credential returned (the caller stores it, bound to the descriptor's binding) keeps the
authorization server found (`Credential.authorization_server`), so a refresh needs no discovery,
and any named secrets the app's record already held (`{"secret": NAME}` values of its headers).
"""

from __future__ import annotations

import logging

import httpcore

from ..descriptor import AppDescriptor
from ..discovery.web import Resolver, WebFetchPolicy
from .auth_context import AuthContext
from .credentials import Credential
from .mcp_discovery import discover, mcp_route
from .oauth import DEFAULT_TIMEOUT_SECONDS, OpenUrl, SignIn, sign_in, signed_in_credential
from .oauth_client import OAuthClient
from .oauth_registration import register_client
from .token_client import new_token_client

logger = logging.getLogger(__name__)


class NoSignInNeededError(Exception):
    """The MCP server answered without asking for a token."""


async def login_mcp(
    app: AppDescriptor,
    *,
    existing: Credential | None,
    client_id: str | None,
    client_secret: str | None = None,
    scope: str | None = None,
    open_url: OpenUrl,
    headers: dict[str, str] | None = None,
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
    web_policy: WebFetchPolicy | None = None,
    locale: str | None = None,
    port: int = 0,
    resolver: Resolver | None = None,
    network_backend: httpcore.AsyncNetworkBackend | None = None,
) -> Credential:
    """Sign in to the MCP server of `app` and return its credential (not stored). `headers` go with
    the first request (the app's own headers, its secrets resolved); `scope` replaces the scopes
    the server names. Raises NoSignInNeededError
    when the server does not ask for a sign-in, AUTH_INVALID when what it names cannot be used,
    AUTH_REQUIRED when the sign-in is refused, times out or cannot start."""
    url = app.mcp_server_url
    if url is None:
        raise ValueError(f"{app.id} is not an MCP server at a URL")
    context = AuthContext.for_mcp_server(app, locale)
    policy = web_policy or WebFetchPolicy()
    local = new_token_client(policy, web=False)
    web = new_token_client(policy, web=True, resolver=resolver, network_backend=network_backend)
    route = mcp_route(url, local, web)
    try:
        found = await discover(app.id, url, route, headers=headers)
        if found is None:
            raise NoSignInNeededError(app.id)
        server = found.server if scope is None else found.server.model_copy(update={"scope": scope or None})

        async def register(redirect_uri: str) -> OAuthClient:
            return await register_client(
                route, found.metadata, scope=server.scope, redirect_uri=redirect_uri, context=context
            )

        client, tokens = await sign_in(
            context,
            route,
            SignIn(
                server.authorization_endpoint,
                server.token_endpoint,
                server.scope,
                extra={"resource": server.resource},
            ),
            client=OAuthClient(client_id, client_secret) if client_id else None,
            register=register,
            open_url=open_url,
            timeout_seconds=timeout_seconds,
            port=port,
        )
    finally:
        for client_to_close in (local, web):
            await client_to_close.aclose()
    kept = existing if existing is not None and existing.binding == str(app.binding) else None
    return signed_in_credential(
        app, client, tokens, secrets=kept.secrets if kept is not None else {}, authorization_server=server
    )
