"""Interactive OAuth sign-in: authorization code + PKCE (S256) with a loopback redirect.

`login()` is what `aai-gateway auth login <app>` runs for a web app (mcp_login.py does the same
for an MCP server, after discovering its authorization server); both go through `sign_in()`:

1. listen on `http://127.0.0.1:<random port>/callback` (RFC 8252 §7.3 loopback redirect);
2. without a client id, register one (RFC 8414 metadata → RFC 7591 dynamic registration);
3. open the authorization URL (`response_type=code`, `client_id`, `redirect_uri`, `scope`,
   a random `state`, `code_challenge` + `code_challenge_method=S256`, and for a web app
   `aaiTools`: the app's tool names, comma-separated, so a consent page can show what the
   gateway will call; for an MCP server the RFC 8707 `resource`);
4. wait for the browser to come back with `code` and the same `state`; a callback with another
   state gets an error page and the sign-in goes on waiting (a forged or stale link cannot end
   it); an `error` from the authorization server ends it;
5. exchange the code (with the verifier, authenticated as the client was registered) and return
   the tokens (the caller stores them).

The OAuth requests are authlib's (oauth_client.py). Nothing is logged but the step reached; the
code, verifier, tokens and secret never are. For a web app every request (metadata, registration,
token) obeys the web network rules (token_client.py); an endpoint they refuse is AUTH_INVALID
naming it, and nothing is sent to it. Registration is in oauth_registration.py, the loopback
callback in oauth_callback.py.
"""

from __future__ import annotations

import logging
import secrets
import socket
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Final

import anyio
import httpx

from ..descriptor import AppDescriptor
from ..descriptor.model_auth import OAuth2Auth
from ..discovery.web import WebFetchPolicy
from .auth_context import AuthContext
from .credentials import AuthorizationServer, Credential, OAuthTokens
from .oauth_callback import CALLBACK_PATH, LoopbackCallback, serve_connections
from .oauth_client import OAuthClient, PkcePair, exchange_code, s256_challenge
from .oauth_client import authorization_url as oauth_authorization_url
from .oauth_registration import authorization_server_metadata, needs_client_id, register_client
from .oauth_transport import Route
from .token_client import host_of, is_web, new_token_client

logger = logging.getLogger(__name__)

DEFAULT_TIMEOUT_SECONDS: Final = 300.0

OpenUrl = Callable[[str], None]
Register = Callable[[str], Awaitable[OAuthClient]]
"""Registers the gateway for a redirect URI (dynamic client registration) and says as whom."""

__all__ = [
    "LoopbackSignIn",
    "PkcePair",
    "SignIn",
    "authorization_url",
    "login",
    "s256_challenge",
    "sign_in",
    "signed_in_credential",
]


@dataclass(frozen=True)
class SignIn:
    """Where and how to sign in: the authorization server's endpoints, the scope to ask for,
    parameters for the authorization request only (`authorize_extra`) and for every request
    (`extra`: an RFC 8707 `resource`)."""

    authorization_endpoint: str
    token_endpoint: str
    scope: str | None = None
    authorize_extra: Mapping[str, str] = field(default_factory=dict)
    extra: Mapping[str, str] = field(default_factory=dict)


def authorization_url(
    settings: OAuth2Auth,
    *,
    client_id: str,
    redirect_uri: str,
    state: str,
    code_challenge: str,
    tool_names: Iterable[str] = (),
) -> str:
    """A web app's authorization request, its tool names in `aaiTools`."""
    return oauth_authorization_url(
        settings.authorization_endpoint,
        OAuthClient(client_id),
        redirect_uri=redirect_uri,
        state=state,
        code_challenge=code_challenge,
        scope=" ".join(settings.scopes) or None,
        extra={"aaiTools": ",".join(tool_names)},
    )


class LoopbackSignIn:
    """One sign-in in the user's browser, steps 1 to 5 of the module docstring: `serve()` listens
    for the loopback callback, registers the gateway when it has no client, and yields the
    authorization URL to show the user; `browser_returned()`, inside it, waits for the browser;
    `finish()`, after it, exchanges the code. `aai-gateway auth login` prints or opens the URL
    (`sign_in`); during a call the gateway sends it to the user by URL elicitation
    (sign_in_page.py)."""

    def __init__(
        self,
        context: AuthContext,
        route: Route,
        target: SignIn,
        *,
        client: OAuthClient | None,
        register: Register,
        timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
        port: int = 0,
    ) -> None:
        self.context = context
        self.target = target
        self.client = client
        self.timeout_seconds = timeout_seconds
        self._route = route
        self._register = register
        self._port = port
        self._pkce = PkcePair.create()
        self._redirect_uri = ""
        self._callback: LoopbackCallback | None = None

    @asynccontextmanager
    async def serve(self) -> AsyncIterator[str]:
        with socket.create_server(("127.0.0.1", self._port)) as listening:
            listening.setblocking(False)
            bound_port = listening.getsockname()[1]
            self._redirect_uri = f"http://127.0.0.1:{bound_port}{CALLBACK_PATH}"
            if self.client is None:
                self.client = await self._register(self._redirect_uri)
            state = secrets.token_urlsafe(32)
            url = oauth_authorization_url(
                self.target.authorization_endpoint,
                self.client,
                redirect_uri=self._redirect_uri,
                state=state,
                code_challenge=self._pkce.challenge,
                scope=self.target.scope,
                extra={**self.target.authorize_extra, **self.target.extra},
            )
            self._callback = LoopbackCallback(state, self.context.app_name, (self.client.client_secret,))
            async with anyio.create_task_group() as tg:
                tg.start_soon(serve_connections, listening, self._callback.handle)
                try:
                    yield url  # the socket listens already: a quick browser waits in the backlog
                finally:
                    tg.cancel_scope.cancel()

    async def browser_returned(self) -> None:
        """Inside `serve()`: until the browser came back (or the time is up). Never raises, so
        what went wrong comes out of `finish()`, after `serve()`, as the error it is."""
        if self._callback is None:
            raise RuntimeError("browser_returned() belongs inside serve()")
        logger.info("waiting for the browser to return from %s", host_of(self.target.authorization_endpoint))
        with anyio.move_on_after(self.timeout_seconds):
            await self._callback.done.wait()

    async def finish(self) -> tuple[OAuthClient, OAuthTokens]:
        """After `serve()`: the client signed in as, and its tokens. Raises `AuthRequiredError`
        when the sign-in was refused or timed out, or the code was not accepted."""
        callback, client = self._callback, self.client
        if callback is None or client is None:
            raise RuntimeError("finish() follows serve()")
        if callback.error is not None:
            raise self.context.error(callback.error)
        if callback.code is None:
            raise self.context.error(f"the browser did not come back within {self.timeout_seconds:g} s")
        tokens = await exchange_code(
            self._route,
            self.target.token_endpoint,
            client,
            code=callback.code,
            code_verifier=self._pkce.verifier,
            redirect_uri=self._redirect_uri,
            context=self.context,
            extra=self.target.extra,
        )
        logger.info("signed in to %s", self.context.app_id)
        return client, tokens


async def sign_in(
    context: AuthContext,
    route: Route,
    target: SignIn,
    *,
    client: OAuthClient | None,
    register: Register,
    open_url: OpenUrl,
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
    port: int = 0,
) -> tuple[OAuthClient, OAuthTokens]:
    """The sign-in of `auth login`: `open_url` shows the authorization URL (it must not block)."""
    signing_in = LoopbackSignIn(
        context, route, target, client=client, register=register, timeout_seconds=timeout_seconds, port=port
    )
    async with signing_in.serve() as url:
        open_url(url)
        await signing_in.browser_returned()
    return await signing_in.finish()


async def login(
    app: AppDescriptor,
    settings: OAuth2Auth,
    *,
    client_id: str | None,
    client_secret: str | None = None,
    tool_names: Sequence[str] = (),
    open_url: OpenUrl,
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
    registration: bool = True,
    http_client: httpx.AsyncClient | None = None,
    web_policy: WebFetchPolicy | None = None,
    locale: str | None = None,
    port: int = 0,
) -> Credential:
    """Sign in to the web app `app` in the user's browser and return its oauth2 credential (not
    stored).

    `open_url` shows the authorization URL (opens a browser, prints it); it must not block for
    long. `port` fixes the loopback port for servers that cannot accept any (0: a free one).
    `http_client` talks to the authorization server; without one, a client made for `app` under
    `web_policy` (token_client.py). Raises `AuthRequiredError` when the sign-in is refused,
    times out or cannot start.
    """
    context = AuthContext.for_app(app, settings, locale)
    owns_client = http_client is None
    http = http_client or new_token_client(web_policy or WebFetchPolicy(), web=is_web(app))
    scope = " ".join(settings.scopes) or None

    def route(url: str) -> httpx.AsyncClient:
        return http

    async def register(redirect_uri: str) -> OAuthClient:
        if not registration:
            raise needs_client_id(context, "dynamic client registration is turned off")
        metadata = await authorization_server_metadata(route, settings.authorization_endpoint)
        return await register_client(route, metadata, scope=scope, redirect_uri=redirect_uri, context=context)

    target = SignIn(
        settings.authorization_endpoint,
        settings.token_endpoint,
        scope,
        authorize_extra={"aaiTools": ",".join(tool_names)},
    )
    try:
        client, tokens = await sign_in(
            context,
            route,
            target,
            client=OAuthClient(client_id, client_secret) if client_id else None,
            register=register,
            open_url=open_url,
            timeout_seconds=timeout_seconds,
            port=port,
        )
    finally:
        if owns_client:
            await http.aclose()
    return signed_in_credential(app, client, tokens)


def signed_in_credential(
    app: AppDescriptor,
    client: OAuthClient,
    tokens: OAuthTokens,
    *,
    secrets: Mapping[str, str] | None = None,
    authorization_server: AuthorizationServer | None = None,
) -> Credential:
    """The oauth2 credential a sign-in to `app` ends with, bound to its binding: the client it
    signed in as and its tokens; for an MCP server, also the authorization server found and the
    named secrets the app's record already held."""
    return Credential(
        kind="oauth2",
        app_id=app.id,
        binding=str(app.binding),
        client_id=client.client_id,
        client_secret=client.client_secret,
        client_auth_method=client.auth_method,
        secrets=dict(secrets or {}),
        tokens=tokens,
        authorization_server=authorization_server,
    )
