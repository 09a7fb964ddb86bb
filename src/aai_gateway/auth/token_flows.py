"""httpx `Auth` flows that obtain tokens: how app credentials and OAuth sign-ins reach an app.

- `AppCredentialFlow`: an App ID + App Secret exchanged (Feishu style) for a short-lived token,
  cached until shortly before it expires, exchanged again when it nears expiry or is refused.
- `OAuth2Flow`: OAuth 2 tokens from `aai-gateway auth login`, refreshed before they expire and
  once when the app answers 401. The refresh request is the OAuth client's (oauth_client.py,
  authlib); an MCP server's tokens use the same flow, its `resource` sent with every refresh,
  under the `httpx2.Auth` of mcp_auth.py.

They are async only (`httpx.AsyncClient`): they do network I/O and share one refresh between
concurrent requests through an `anyio.Lock`. New tokens are kept through the `persist` callback
(the provider saves them in the OS keyring). Nothing here logs a credential value, and error
messages carry only the token endpoint's own words with any secret scrubbed out; what a token
endpoint answers is read by token_answers.py, which keeps nothing HTTP cannot carry. A token that
a header cannot carry is refused before it is put on a request.

Besides the secrets they put on requests (`secret_values`, removed from answers by the HTTP
executor), the flows name the tokens they replaced, so an old token an app echoes is removed too.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import AsyncGenerator, Awaitable, Callable, Generator, Mapping
from typing import Any, Final

import anyio
import httpx

from ..descriptor.http_headers import header_value_problem
from ..descriptor.model_auth import AppCredentialAuth, OAuth2Auth
from ..discovery.web_transport import public_url
from ..errors import ServiceUnavailableError
from .auth_context import AuthContext
from .credentials import AppToken, Credential, OAuthTokens
from .flows import install_query_redaction
from .oauth_client import OAuthClient, refresh
from .oauth_transport import Route
from .token_answers import (
    UnusableAnswerError,
    answer_document,
    endpoint_message,
    lifetime_field,
    scrub,
    token_field,
)
from .token_client import host_of, post_to_endpoint

logger = logging.getLogger(__name__)

Persist = Callable[[Credential], Awaitable[None]]
"""Keeps a credential whose tokens changed (the provider saves it in the secret store)."""

REFRESH_MARGIN_SECONDS: Final = 60.0
_APP_TOKEN_FIELDS: Final = {
    "tenantAccessToken": "tenant_access_token",
    "appAccessToken": "app_access_token",
    "userAccessToken": "user_access_token",
}


class _TokenFlow(httpx.Auth):
    """Shared by the flows that obtain tokens: async only, retry-safe request bodies."""

    requires_request_body = True  # a request refused with 401 is sent again with the new token

    def __init__(
        self,
        credential: Credential,
        persist: Persist,
        token_client: httpx.AsyncClient,
        context: AuthContext,
        refresh_margin: float,
    ) -> None:
        self.credential = credential
        self._persist = persist
        self._client = token_client
        self.context = context
        self.refresh_margin = refresh_margin
        self._lock = anyio.Lock()
        self._replaced: deque[str] = deque(maxlen=8)  # tokens this flow used before its current ones

    def sync_auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        raise RuntimeError(f"{type(self).__name__} works with httpx.AsyncClient only")

    def __repr__(self) -> str:
        return f"{type(self).__name__}(app={self.credential.app_id!r})"

    def _secrets(self) -> list[str | None]:
        return _credential_secrets(self.credential)

    def _header_value(self, value: str) -> str:
        """`value` when HTTP can carry it. Tokens are checked when obtained; one stored by an
        older version, or changed in the keyring, is checked here before it is sent."""
        problem = header_value_problem(value)
        if problem:
            raise self.context.error(
                f"the stored token cannot be sent: it {problem}; sign in again", expired=True
            )
        return value

    def secret_values(self) -> list[str]:
        """The secret, the tokens in use and those replaced lately (an app may echo them)."""
        return [s for s in (*self._secrets(), *self._replaced) if s]

    async def _keep(self, credential: Credential) -> None:
        self._replaced.extend(s for s in self._secrets() if s and s not in _credential_secrets(credential))
        self.credential = credential
        try:
            await self._persist(credential)
        except Exception as exc:  # the new token still works for this process
            logger.warning(
                "could not store the renewed token of %s (%s); it is used until the gateway stops",
                credential.app_id,
                type(exc).__name__,
            )


class AppCredentialFlow(_TokenFlow):
    """App ID + App Secret → app token (`Authorization: Bearer <token>`).

    The exchange is a JSON POST `{"app_id", "app_secret"}` to the token endpoint. The token is
    read from the field the descriptor's `token_type` names (`tenant_access_token`, ...) or
    `access_token`; its lifetime from the answer's `expire`/`expires_in`, else the descriptor's
    `expires_in`. A JSON `code` other than 0 is a refusal (Feishu answers errors with HTTP 200).
    """

    refreshable = True

    def __init__(
        self,
        settings: AppCredentialAuth,
        credential: Credential,
        persist: Persist,
        token_client: httpx.AsyncClient,
        *,
        context: AuthContext | None = None,
        refresh_margin: float = REFRESH_MARGIN_SECONDS,
    ) -> None:
        context = context or AuthContext.for_credential(credential, "appCredential")
        super().__init__(credential, persist, token_client, context, refresh_margin)
        self.settings = settings

    async def async_auth_flow(self, request: httpx.Request) -> AsyncGenerator[httpx.Request, httpx.Response]:
        await request.aread()
        token = await self._token()
        request.headers["Authorization"] = self._header_value(f"Bearer {token}")
        response = yield request
        if response.status_code != 401:
            return
        token = await self._token(refused=token)
        request.headers["Authorization"] = self._header_value(f"Bearer {token}")
        response = yield request
        if response.status_code == 401:
            raise self.context.error(
                "the app refused a freshly exchanged token (HTTP 401); the App ID may lack access",
                expired=True,
            )

    async def _token(self, refused: str | None = None) -> str:
        cached = self.credential.app_token
        if cached is not None and cached.token != refused and not cached.expires_within(self.refresh_margin):
            return cached.token
        async with self._lock:  # one exchange for every request waiting here
            cached = self.credential.app_token
            if (
                cached is not None
                and cached.token != refused
                and not cached.expires_within(self.refresh_margin)
            ):
                return cached.token
            fresh = await self._exchange(had_token=cached is not None)
            await self._keep(self.credential.model_copy(update={"app_token": fresh}))
            return fresh.token

    async def _exchange(self, *, had_token: bool) -> AppToken:
        credential, settings = self.credential, self.settings
        if not credential.client_id or not credential.client_secret:
            raise self.context.error("no App ID and App Secret are stored")
        started = time.time()
        response = await post_to_endpoint(
            self._client,
            settings.token_endpoint,
            app_id=self.context.app_id,
            what="token endpoint",
            json={"app_id": credential.client_id, "app_secret": credential.client_secret},
        )
        logger.debug("app token exchange for %s -> %s", credential.app_id, response.status_code)
        if response.status_code >= 500:
            raise ServiceUnavailableError(
                credential.app_id,
                f"its token endpoint answered {endpoint_message(response, self._secrets())}",
                host=host_of(settings.token_endpoint),
            )
        document = answer_document(response) or {}
        if not response.is_success or document.get("code", 0) not in (0, "0", None):
            reason = endpoint_message(response, self._secrets())
            raise self.context.error(
                f"the token endpoint refused the App ID and App Secret ({reason})", expired=had_token
            )
        try:
            return self._app_token(response, document, started)
        except UnusableAnswerError as exc:
            raise self.context.error(
                scrub(str(exc), self._secrets()), expired=True, endpoint=public_url(settings.token_endpoint)
            ) from None

    def _app_token(self, response: httpx.Response, document: dict[str, Any], started: float) -> AppToken:
        """The token and its lifetime from a successful exchange (Feishu nests them in `data`)."""
        where = public_url(self.settings.token_endpoint)
        if not document:
            raise UnusableAnswerError(
                f"the token endpoint {where} answered HTTP {response.status_code} with something "
                "that is not a JSON object the gateway can read"
            )
        nested = document.get("data")
        data: dict[str, Any] = nested if isinstance(nested, dict) else {}
        field = _APP_TOKEN_FIELDS[self.settings.token_type]
        token = token_field(document, data, where, field, "access_token")
        if token is None:
            raise UnusableAnswerError(f"the token endpoint {where} answered without {field} or access_token")
        lifetime = lifetime_field(document, data, where, "expire", "expires_in")
        if lifetime is None:
            lifetime = float(self.settings.expires_in)  # the answer's own lifetime wins over the descriptor's
        return AppToken(token=token, expires_at=started + lifetime)


class OAuth2Flow(_TokenFlow):
    """OAuth 2 access token in a header (`Authorization: <prefix> <token>`) or in the query
    (`access_token`, RFC 6750 §2.3); refreshed within `refresh_margin` seconds of expiry and once
    after a 401. A refresh answer without a refresh token keeps the old one."""

    def __init__(
        self,
        settings: OAuth2Auth,
        credential: Credential,
        persist: Persist,
        token_client: httpx.AsyncClient,
        *,
        context: AuthContext | None = None,
        refresh_margin: float = REFRESH_MARGIN_SECONDS,
        query_parameter: str = "access_token",
        route: Route | None = None,
        extra: Mapping[str, str] | None = None,
    ) -> None:
        """`route` picks the client for each endpoint (default: `token_client` for all); `extra`
        goes with every refresh (an MCP server's RFC 8707 `resource`)."""
        context = context or AuthContext.for_credential(credential, "oauth2")
        super().__init__(credential, persist, token_client, context, refresh_margin)
        self.settings = settings
        self.query_parameter = query_parameter
        self._route = route or self._token_client
        self._extra = dict(extra or {})
        if settings.token_placement == "query":  # noqa: S105 (a location, not a secret)
            install_query_redaction()

    def _token_client(self, url: str) -> httpx.AsyncClient:
        return self._client

    @property
    def refreshable(self) -> bool:
        tokens = self.credential.tokens
        return tokens is not None and bool(tokens.refresh_token)

    def _apply(self, request: httpx.Request, token: str) -> None:
        if self.settings.token_placement == "query":  # noqa: S105 (a location, not a secret)
            request.url = request.url.copy_set_param(self.query_parameter, self._header_value(token))
        else:
            prefix = self.settings.token_prefix.strip()
            request.headers["Authorization"] = self._header_value(f"{prefix} {token}" if prefix else token)

    async def async_auth_flow(self, request: httpx.Request) -> AsyncGenerator[httpx.Request, httpx.Response]:
        await request.aread()
        tokens = await self.usable_tokens()
        self._apply(request, tokens.access_token)
        response = yield request
        if response.status_code != 401:
            return
        if not tokens.refresh_token:
            raise self.context.error(
                "the app refused the stored access token (HTTP 401) and there is no refresh token",
                expired=True,
            )
        tokens = await self.refreshed(refused=tokens.access_token)
        self._apply(request, tokens.access_token)
        response = yield request
        if response.status_code == 401:
            raise self.context.error(
                "the app refused the access token even after it was refreshed (HTTP 401)", expired=True
            )

    async def usable_tokens(self) -> OAuthTokens:
        """The stored tokens, refreshed first when they expire within the margin."""
        tokens = self.credential.tokens
        if tokens is None:
            raise self.context.error("you have not signed in yet")
        if not tokens.expires_within(self.refresh_margin):
            return tokens
        if tokens.refresh_token:
            return await self.refreshed(refused=tokens.access_token)
        if tokens.expires_within(0):
            raise self.context.error("the access token expired and there is no refresh token", expired=True)
        return tokens  # close to expiry, cannot be refreshed: use it while it lasts

    async def refreshed(self, *, refused: str) -> OAuthTokens:
        """New tokens, unless another request already replaced `refused` (one refresh for all)."""
        async with self._lock:
            current = self.credential.tokens
            assert current is not None
            if current.access_token != refused and not current.expires_within(self.refresh_margin):
                return current
            fresh = await self._refresh(current)
            await self._keep(self.credential.model_copy(update={"tokens": fresh}))
            return fresh

    async def _refresh(self, current: OAuthTokens) -> OAuthTokens:
        if not current.refresh_token:
            raise self.context.error("the access token expired and there is no refresh token", expired=True)
        fresh = await refresh(
            self._route,
            self.settings.token_endpoint,
            oauth_client_of(self.credential),
            refresh_token=current.refresh_token,
            context=self.context,
            extra=self._extra,
        )
        logger.debug("oauth2 refresh for %s done", self.credential.app_id)
        return fresh.model_copy(
            update={
                "refresh_token": fresh.refresh_token or current.refresh_token,
                "scope": fresh.scope or current.scope,
            }
        )


def oauth_client_of(credential: Credential) -> OAuthClient | None:
    """The OAuth client a stored sign-in was made with, if it names one."""
    if not credential.client_id:
        return None
    return OAuthClient(credential.client_id, credential.client_secret, credential.client_auth_method)


def _credential_secrets(credential: Credential) -> list[str | None]:
    found: list[str | None] = [credential.client_secret, credential.api_key]
    if credential.tokens is not None:
        found += [credential.tokens.access_token, credential.tokens.refresh_token]
    if credential.app_token is not None:
        found.append(credential.app_token.token)
    return found
