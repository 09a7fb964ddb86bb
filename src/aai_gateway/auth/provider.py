"""Which credential an HTTP tool call carries: `AuthProvider.http_auth(app, tool)`; which keyring
secrets an `mcp` app's server is started or reached with: `AuthProvider.mcp_secrets(app, tool)`;
and the auth of an `mcp` app's Streamable HTTP transport: `AuthProvider.mcp_http_auth(app)`
(mcp_auth.py).

- No `auth` on the tool's channel (or not an HTTP tool): None.
- Dialect B `env_var`: the token comes from that environment variable, but only for descriptors
  read from this machine (a web descriptor could otherwise name any variable, say
  `OPENAI_API_KEY`, and receive it at its own origin); without it, a stored key is used.
- Otherwise the app's stored credential (bound to the descriptor's source, see credentials.py)
  becomes a flow; missing or incomplete → `AuthRequiredError` naming the command that fixes it.

Token flows (appCredential, oauth2) are cached per app and source so concurrent calls share one
token and one refresh. The stored record is read on every call (the CLI may have signed in again
in another process): a record the cached flow does not know replaces the flow. Token requests of
web apps go through a client that enforces the web network rules (token_client.py); those of an
MCP server's authorization through the clients `mcp_route` picks (mcp_discovery.py).

A secret shorter than the scrubber's minimum (executors/redaction.py) cannot be removed from what
an app echoes back; the first call that uses one logs a warning naming the app and the field.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial

import anyio
import httpcore
import httpx

from ..descriptor import AppDescriptor, Tool, app_reference
from ..descriptor.model import (
    HttpChannel,
    McpChannel,
)
from ..descriptor.model_auth import ApiKeyAuth, AppCredentialAuth, Auth, CookieAuth, OAuth2Auth
from ..discovery.web import Resolver, WebFetchPolicy
from ..errors import AuthRequiredError, SecretMissingError
from ..executors.redaction import MIN_SECRET_CHARS, too_short_to_scrub
from .auth_context import AuthContext
from .credentials import Credential, CredentialKind, CredentialStore, credential_key
from .flows import ApiKeyFlow, CookieFlow
from .mcp_auth import McpOAuth
from .oauth_transport import Route
from .token_client import is_web, new_token_client
from .token_flows import AppCredentialFlow, OAuth2Flow, Persist

logger = logging.getLogger(__name__)

_KIND: dict[str, CredentialKind] = {
    "apiKey": "apiKey",
    "appCredential": "appCredential",
    "cookie": "cookie",
    "oauth2": "oauth2",
}


def fingerprint(credential: Credential) -> str:
    """Identifies a record's content (not when it was saved); kept in memory only."""
    return hashlib.sha256(credential.model_dump_json(exclude={"updated_at"}).encode()).hexdigest()


def short_secrets(auth: Auth, credential: Credential) -> list[str]:
    """The stored secrets of `credential` too short for the scrubber to remove from what an app
    answers, by name. Cookies other than the required ones (`lang=en`) are not secrets."""
    secret_name = "App Secret" if isinstance(auth, AppCredentialAuth) else "client secret"
    fields: list[tuple[str, str | None]] = [
        ("API key", credential.api_key),
        (secret_name, credential.client_secret),
    ]
    if isinstance(auth, CookieAuth):
        fields += [(f"cookie {name}", credential.cookies.get(name)) for name in auth.required_cookies]
    return [field for field, value in fields if too_short_to_scrub(value)]


def short_secret_warning(app_id: str, field: str) -> str:
    return (
        f"the {field} of {app_id} is shorter than {MIN_SECRET_CHARS} characters: the gateway cannot "
        "remove so short a value from what the app answers, so an app that echoes it would show it "
        "to the agent"
    )


@dataclass
class _Entry:
    flow: AppCredentialFlow | OAuth2Flow
    known: set[str]  # fingerprints of the records this flow started from or saved


class AuthProvider:
    def __init__(
        self,
        store: CredentialStore,
        *,
        environ: Mapping[str, str],
        web_policy: WebFetchPolicy | None = None,
        locale: str | None = None,
        resolver: Resolver | None = None,
        network_backend: httpcore.AsyncNetworkBackend | None = None,
    ) -> None:
        """`environ`: the variables dialect-B `env_var` tokens are read from (the CLI passes
        `os.environ`). `web_policy`: the web network rules and the extra CA file for token
        endpoints (default: no private addresses, no extra CA). `resolver` and
        `network_backend` replace name resolution and connections for web apps (tests)."""
        self.store = store
        self.environ = environ
        self.locale = locale
        self.web_policy = web_policy or WebFetchPolicy()
        self._resolver = resolver
        self._network_backend = network_backend
        self._clients: dict[bool, httpx.AsyncClient] = {}
        self._flows: dict[str, _Entry] = {}
        self._lock = anyio.Lock()
        self._warned: set[tuple[str, str]] = set()

    def token_client(self, app: AppDescriptor) -> httpx.AsyncClient:
        """The client for `app`'s token endpoints (guarded for a web app), created on first use."""
        return self._client(web=is_web(app))

    def _client(self, *, web: bool) -> httpx.AsyncClient:
        if web not in self._clients:
            self._clients[web] = new_token_client(
                self.web_policy, web=web, resolver=self._resolver, network_backend=self._network_backend
            )
        return self._clients[web]

    async def aclose(self) -> None:
        clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            await client.aclose()

    def forget(self, app: AppDescriptor) -> None:
        """Drop the cached flow of `app` (after its credential was deleted or replaced)."""
        for key in [k for k in self._flows if k.startswith(credential_key(app) + "\n")]:
            del self._flows[key]

    async def http_auth(self, app: AppDescriptor, tool: Tool) -> httpx.Auth | None:
        channel = tool.channel
        if not isinstance(channel, HttpChannel) or channel.auth is None:
            return None
        auth = channel.auth
        context = AuthContext.for_app(app, auth, self.locale)
        env_value = self._from_environment(app, auth)
        if isinstance(auth, ApiKeyAuth) and env_value:
            if too_short_to_scrub(env_value):
                self._warn_once(app, f"environment variable {auth.env_var}")
            return self._api_key_flow(auth, env_value, context, from_environment=True)
        credential = await anyio.to_thread.run_sync(self.store.load, app)
        if credential is not None:
            self._warn_about_short_secrets(app, auth, credential)
        if credential is not None and credential.kind != _KIND[auth.type]:
            raise context.error(
                f"the stored credential is of type {credential.kind}, but the app now uses {auth.type}"
            )
        if isinstance(auth, ApiKeyAuth):
            if credential is None or not credential.api_key:
                raise self._missing_api_key(app, auth, context)
            return self._api_key_flow(auth, credential.api_key, context)
        if isinstance(auth, CookieAuth):
            return self._cookie_flow(auth, credential, context)
        if credential is None:
            if isinstance(auth, OAuth2Auth):
                raise context.error("you have not signed in yet")
            raise context.error("no App ID and App Secret are stored")
        if isinstance(auth, AppCredentialAuth) and not (credential.client_id and credential.client_secret):
            raise context.error("the stored credential lacks the App ID or the App Secret")
        if isinstance(auth, OAuth2Auth) and credential.tokens is None:
            raise context.error("you have not signed in yet")
        return await self._token_flow(app, auth, credential, context)

    async def mcp_secrets(self, app: AppDescriptor, tool: Tool) -> dict[str, str]:
        """The keyring secrets an `mcp` tool's channel refers to (`{"secret": NAME}` in its `env`
        or `headers`), by NAME, from the credential bound to the app; only those names. A name
        with no stored value: SecretMissingError listing every missing one, with the command
        that stores the first."""
        channel = tool.channel
        if not isinstance(channel, McpChannel) or not channel.secret_names:
            return {}
        credential = await anyio.to_thread.run_sync(self.store.load, app)
        stored = credential.secrets if credential is not None else {}
        missing = [name for name in channel.secret_names if not stored.get(name)]
        if missing:
            raise SecretMissingError(
                app.id, app.names.lookup(self.locale), missing, app_reference(app.binding, app.id)
            )
        for name in channel.secret_names:
            if too_short_to_scrub(stored[name]):
                self._warn_once(app, f"secret {name}")
        return {name: stored[name] for name in channel.secret_names}

    def _warn_about_short_secrets(self, app: AppDescriptor, auth: Auth, credential: Credential) -> None:
        for field in short_secrets(auth, credential):
            self._warn_once(app, field)

    def _warn_once(self, app: AppDescriptor, field: str) -> None:
        if (app.id, field) not in self._warned:
            self._warned.add((app.id, field))
            logger.warning("%s", short_secret_warning(app.id, field))

    # ----------------------------------------------------------------------- static credentials

    def _from_environment(self, app: AppDescriptor, auth: Auth) -> str | None:
        if not isinstance(auth, ApiKeyAuth) or not auth.env_var:
            return None
        if app.source.kind == "web":
            logger.debug(
                "%s names the environment variable %s; ignored for a descriptor fetched from the web",
                app.id,
                auth.env_var,
            )
            return None
        value = self.environ.get(auth.env_var, "").strip()
        return value or None

    def _missing_api_key(
        self, app: AppDescriptor, auth: ApiKeyAuth, context: AuthContext
    ) -> AuthRequiredError:
        if auth.env_var and app.source.kind != "web":
            return context.error(
                f"the environment variable {auth.env_var} is not set where the gateway runs and no key "
                f"is stored; set it in the MCP client's configuration of the gateway (its `env`) and "
                f"restart the gateway, or store the key with `{context.command}`",
                command=f"export {auth.env_var}=<token>",
                env_var=auth.env_var,
            )
        return context.error("no API key is stored")

    def _api_key_flow(
        self, auth: ApiKeyAuth, value: str, context: AuthContext, *, from_environment: bool = False
    ) -> ApiKeyFlow:
        try:
            return ApiKeyFlow.for_settings(auth, value.strip())
        except ValueError as exc:  # its message names the header, never the value
            if from_environment:
                raise context.error(
                    f"the API key in the environment variable {auth.env_var} cannot be used ({exc})",
                    invalid=True,
                    command=f"export {auth.env_var}=<token>",
                    env_var=auth.env_var,
                ) from None
            raise context.error(
                f"the stored API key cannot be used ({exc}); store it again", invalid=True
            ) from None

    def _cookie_flow(
        self, auth: CookieAuth, credential: Credential | None, context: AuthContext
    ) -> CookieFlow:
        cookies = credential.cookies if credential is not None else {}
        missing = [name for name in auth.required_cookies if not cookies.get(name)]
        if credential is None or missing:
            which = ", ".join(missing or auth.required_cookies)
            raise context.error(f"the cookies {which} (domain {auth.domain}) are not stored")
        try:
            return CookieFlow(cookies, domain=auth.domain)
        except ValueError as exc:
            raise context.error(
                f"the stored cookies cannot be used ({exc}); store them again", invalid=True
            ) from None

    # ----------------------------------------------------------------------- token flows

    async def _token_flow(
        self,
        app: AppDescriptor,
        auth: AppCredentialAuth | OAuth2Auth,
        credential: Credential,
        context: AuthContext,
    ) -> AppCredentialFlow | OAuth2Flow:
        def build(persist: Persist) -> AppCredentialFlow | OAuth2Flow:
            if isinstance(auth, AppCredentialAuth):
                return AppCredentialFlow(auth, credential, persist, self.token_client(app), context=context)
            return OAuth2Flow(auth, credential, persist, self.token_client(app), context=context)

        return await self._cached(app, f"{auth.model_dump_json()}\n{context.locale}", credential, build)

    async def _cached(
        self,
        app: AppDescriptor,
        variant: str,
        credential: Credential,
        build: Callable[[Persist], AppCredentialFlow | OAuth2Flow],
    ) -> AppCredentialFlow | OAuth2Flow:
        """The cached flow of `app` (and `variant`) while the store holds what it started from or
        saved since; else a new one from `build`."""
        key = f"{credential_key(app)}\n{variant}"
        stored = fingerprint(credential)
        async with self._lock:
            entry = self._flows.get(key)
            if entry is not None and stored in entry.known:
                return entry.flow
            known = {stored}
            flow = build(partial(self._persist, app, known))
            self._flows[key] = _Entry(flow, known)
            return flow

    # ----------------------------------------------------------------------- MCP servers

    async def mcp_http_auth(self, app: AppDescriptor) -> McpOAuth | None:
        """The `httpx2.Auth` of the client an `mcp` app's Streamable HTTP transport runs on
        (mcp_auth.py: its sign-in's bearer token, refreshed; none when not signed in, and a 401
        then kept in `McpOAuth.failure` as AUTH_REQUIRED naming `aai-gateway auth login
        <reference>`). None for an MCP server started over stdio."""
        url = app.mcp_server_url
        if url is None:
            return None
        return McpOAuth(partial(self._mcp_tokens, app, url), AuthContext.for_mcp_server(app, self.locale))

    def mcp_route(self, server_url: str) -> Route:
        """Which client reaches each URL of the MCP server at `server_url`'s authorization
        (mcp_discovery.mcp_route): the server's origin as the server, the rest under the web rules."""
        # Imported when an MCP server's sign-in is used: mcp_discovery imports the MCP SDK's
        # auth modules, and with them the whole `mcp` package (~0.8 s), which the commands that
        # only read descriptors and the keyring (`scan`, `consent`, `auth status`) never need.
        from .mcp_discovery import mcp_route  # noqa: PLC0415

        return mcp_route(server_url, self._client(web=False), self._client(web=True))

    async def _mcp_tokens(self, app: AppDescriptor, url: str) -> OAuth2Flow | None:
        """The token flow of the app's stored sign-in (read on every request), or None."""
        credential = await anyio.to_thread.run_sync(self.store.load, app)
        if credential is None or credential.tokens is None or credential.authorization_server is None:
            return None
        server = credential.authorization_server
        context = AuthContext.for_mcp_server(app, self.locale)
        settings = OAuth2Auth(
            authorization_endpoint=server.authorization_endpoint, token_endpoint=server.token_endpoint
        )

        def build(persist: Persist) -> OAuth2Flow:
            return OAuth2Flow(
                settings,
                credential,
                persist,
                self._client(web=True),
                context=context,
                route=self.mcp_route(url),
                extra={"resource": server.resource},
            )

        flow = await self._cached(app, f"mcp\n{url}\n{context.locale}", credential, build)
        assert isinstance(flow, OAuth2Flow)
        return flow

    async def _persist(self, app: AppDescriptor, known: set[str], credential: Credential) -> None:
        known.add(fingerprint(credential))  # before saving: a concurrent call may load it already
        await anyio.to_thread.run_sync(self.store.save, app, credential)
