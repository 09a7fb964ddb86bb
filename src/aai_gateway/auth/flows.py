"""httpx `Auth` flows: how a stored credential reaches an app's HTTP API.

- `ApiKeyFlow`: a static key in a header (`Name: Prefix value`) or a query parameter. Dialect B's
  `api_key` and `bearer` (`Authorization: Bearer <token>` or `?access_token=`) are this flow.
- `CookieFlow`: browser session cookies in one `Cookie` header, only for hosts inside the
  descriptor's cookie domain.
- `AppCredentialFlow`: an App ID + App Secret exchanged (Feishu style) for a short-lived token,
  cached until shortly before it expires, exchanged again when it nears expiry or is refused.
- `OAuth2Flow`: OAuth 2 tokens from `aai-gateway auth login`, refreshed before they expire and
  once when the app answers 401.

The token flows are async only (`httpx.AsyncClient`): they do network I/O and share one refresh
between concurrent requests through an `anyio.Lock`. New tokens are kept through the `persist`
callback (the provider saves them in the OS keyring). Nothing here logs a credential value, and
error messages carry only the token endpoint's own words with any secret scrubbed out; what a
token endpoint answers is read by token_answers.py, which keeps nothing HTTP cannot carry. A key,
cookie or token that a header cannot carry (descriptor/http_headers.py) is refused before it is
put on a request, naming the header, never the value.

Every flow says which secret values it puts on requests (`secret_values`): the HTTP executor
removes them from whatever the app answers (executors/redaction.py). The token flows also name
the tokens they replaced, so an old token an app echoes is removed too.
"""

from __future__ import annotations

import base64
import binascii
import logging
import shlex
import time
from collections import deque
from collections.abc import AsyncGenerator, Awaitable, Callable, Generator
from dataclasses import dataclass
from typing import Any, Final, Literal

import anyio
import httpx

from ..descriptor import AppDescriptor, app_reference, parse_binding
from ..descriptor.http_headers import header_name_problem, header_value_problem
from ..descriptor.model import ApiKeyAuth, AppCredentialAuth, Auth, CookieAuth, OAuth2Auth
from ..discovery.web import NetworkRuleError
from ..discovery.web_transport import public_url
from ..errors import AaiError, AuthRequiredError, ErrorCode, ServiceUnavailableError
from .credentials import AppToken, Credential, OAuthTokens
from .token_answers import (
    UnusableAnswerError,
    answer_document,
    endpoint_message,
    lifetime_field,
    parse_token_response,
    scrub,
    token_field,
)
from .token_client import endpoint_refused

logger = logging.getLogger(__name__)

Persist = Callable[[Credential], Awaitable[None]]
"""Keeps a credential whose tokens changed (the provider saves it in the secret store)."""

REFRESH_MARGIN_SECONDS: Final = 60.0
TOKEN_REQUEST_TIMEOUT_SECONDS: Final = 30.0
_APP_TOKEN_FIELDS: Final = {
    "tenantAccessToken": "tenant_access_token",
    "appAccessToken": "app_access_token",
    "userAccessToken": "user_access_token",
}


# --------------------------------------------------------------------------- errors


def login_command(reference: str) -> str:
    return f"aai-gateway auth login {shlex.quote(reference)}"


def set_command(reference: str) -> str:
    return f"aai-gateway auth set {shlex.quote(reference)}"


def auth_command(reference: str, auth_type: str) -> str:
    """The command that stores the credential of the app named by `reference`: its binding's
    reference (a web app's origin, `file:/…`, `bundled:<id>`), which names exactly the app the
    credential is bound to, whatever other apps claim the same id."""
    return login_command(reference) if auth_type == "oauth2" else set_command(reference)


@dataclass(frozen=True)
class AuthContext:
    """What an AUTH_REQUIRED / AUTH_EXPIRED error says about the app and how to fix it."""

    app_id: str
    app_name: str
    auth_type: str
    command: str
    obtain_url: str | None = None
    instructions: dict[str, Any] | None = None
    locale: str | None = None

    @classmethod
    def for_app(cls, app: AppDescriptor, auth: Auth, locale: str | None = None) -> AuthContext:
        instructions = auth.instructions
        help_url = instructions.help_url if instructions is not None else None
        obtain_url: str | None
        if isinstance(auth, ApiKeyAuth):
            obtain_url = auth.obtain_url or help_url
        elif isinstance(auth, CookieAuth):
            obtain_url = auth.login_url
        else:
            obtain_url = help_url
        return cls(
            app_id=app.id,
            app_name=app.names.lookup(locale),
            auth_type=auth.declared_type if isinstance(auth, ApiKeyAuth) else auth.type,
            command=auth_command(app_reference(app.binding, app.id), auth.type),
            obtain_url=obtain_url,
            instructions=instructions.model_dump(exclude_none=True) if instructions is not None else None,
            locale=locale,
        )

    @classmethod
    def for_credential(cls, credential: Credential, auth_type: str) -> AuthContext:
        """A plain context when a flow is built without one (the app id is all it knows)."""
        try:
            reference = app_reference(parse_binding(credential.binding), credential.app_id)
        except AaiError:
            reference = credential.app_id
        return cls(credential.app_id, credential.app_id, auth_type, auth_command(reference, auth_type))

    def error(
        self,
        reason: str,
        *,
        expired: bool = False,
        invalid: bool = False,
        command: str | None = None,
        **data: Any,
    ) -> AuthRequiredError:
        """AUTH_REQUIRED; AUTH_EXPIRED when `expired`, AUTH_INVALID when `invalid` (a stored
        credential that cannot be used as it is)."""
        error = AuthRequiredError(
            self.app_id,
            self.app_name,
            self.auth_type,
            reason=reason,
            command=command or self.command,
            obtain_url=self.obtain_url,
            instructions=self.instructions,
            locale=self.locale,
            expired=expired,
            **data,
        )
        if invalid:
            error.code = ErrorCode.AUTH_INVALID
        return error


def _check_header_value(value: str, what: str) -> None:
    problem = header_value_problem(value)
    if problem:
        raise ValueError(f"the {what} {problem}")


def _host_of(url: str) -> str:
    parsed = httpx.URL(url)
    return f"{parsed.host}:{parsed.port}" if parsed.port else parsed.host


# --------------------------------------------------------------------------- log redaction


class RedactQueryFilter(logging.Filter):
    """Drops query strings from the URLs httpx logs (`HTTP Request: GET https://…?key=…`):
    a credential placed in the query must not reach a log file at INFO level."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple) and any(isinstance(a, httpx.URL) for a in record.args):
            record.args = tuple(_without_query(a) if isinstance(a, httpx.URL) else a for a in record.args)
        return True


def _without_query(url: httpx.URL) -> str:
    if not url.query:
        return str(url)
    return str(url.copy_with(query=None, fragment=None)) + "?[query redacted]"


def install_query_redaction() -> None:
    """Idempotent: one `RedactQueryFilter` on the `httpx` logger."""
    httpx_logger = logging.getLogger("httpx")
    if not any(isinstance(f, RedactQueryFilter) for f in httpx_logger.filters):
        httpx_logger.addFilter(RedactQueryFilter())


# --------------------------------------------------------------------------- static flows


class ApiKeyFlow(httpx.Auth):
    """A static key: header `name: prefix value` (prefix optional) or query parameter `name`."""

    refreshable = False

    def __init__(
        self, *, location: Literal["header", "query"], name: str, value: str, prefix: str | None = None
    ) -> None:
        if not value:
            raise ValueError("the API key is empty")
        where = f"header {name!r}" if location == "header" else f"query parameter {name!r}"
        _check_header_value(value, f"API key for {where}")  # in a query too: one rule for a key
        if prefix:
            _check_header_value(prefix, f"prefix of {where}")
        if location == "header":
            problem = header_name_problem(name)
            if problem:
                raise ValueError(f"the API key's header name {name!r} {problem}")
        self.location = location
        self.name = name
        self.prefix = prefix.strip() if prefix else None
        self._value = value
        if location == "query":
            install_query_redaction()

    @classmethod
    def for_settings(cls, settings: ApiKeyAuth, value: str) -> ApiKeyFlow:
        return cls(location=settings.location, name=settings.name, value=value, prefix=settings.prefix)

    def __repr__(self) -> str:  # never the value
        return f"ApiKeyFlow(location={self.location!r}, name={self.name!r})"

    def secret_values(self) -> list[str]:
        """The key; for a `Basic` key also the `user:password` it encodes, and the password."""
        found = [self._value]
        if self.prefix and self.prefix.lower() == "basic":
            try:
                decoded = base64.b64decode(self._value, validate=True).decode("utf-8")
            except (binascii.Error, UnicodeDecodeError):
                return found
            found += [decoded, decoded.partition(":")[2]]
        return found

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        if self.location == "query":
            request.url = request.url.copy_set_param(self.name, self._value)
        else:
            request.headers[self.name] = f"{self.prefix} {self._value}" if self.prefix else self._value
        yield request


class CookieFlow(httpx.Auth):
    """Session cookies in one `Cookie` header, merged after any cookie the request already has.
    With a `domain`, only hosts inside it receive them (`.example.com` covers `example.com` and
    its subdomains; `example.com` exactly that host)."""

    refreshable = False

    def __init__(self, cookies: dict[str, str], *, domain: str | None = None) -> None:
        for name, value in cookies.items():
            if not name or any(c in name for c in "=;, \t") or any(c in value for c in ";"):
                raise ValueError(f"cookie {name!r} has a name or value that a Cookie header cannot carry")
            _check_header_value(name + value, f"cookie {name!r}")
        self._cookies = dict(cookies)
        self.domain = domain.lower() if domain else None

    def __repr__(self) -> str:
        return f"CookieFlow(names={sorted(self._cookies)!r}, domain={self.domain!r})"

    def secret_values(self) -> list[str]:
        return list(self._cookies.values())

    def covers(self, host: str) -> bool:
        if self.domain is None:
            return True
        host = host.lower().rstrip(".")
        bare = self.domain.lstrip(".")
        if self.domain.startswith("."):
            return host == bare or host.endswith("." + bare)
        return host == bare

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        if self._cookies and self.covers(request.url.host):
            ours = "; ".join(f"{name}={value}" for name, value in self._cookies.items())
            existing = request.headers.get("Cookie")
            request.headers["Cookie"] = f"{existing}; {ours}" if existing else ours
        yield request


# --------------------------------------------------------------------------- token flows


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

    async def _post(self, url: str, **kwargs: Any) -> httpx.Response:
        try:
            return await self._client.post(url, timeout=TOKEN_REQUEST_TIMEOUT_SECONDS, **kwargs)
        except NetworkRuleError as exc:
            raise endpoint_refused(self.context.app_id, "token endpoint", url, exc) from None
        except httpx.TransportError as exc:
            host = _host_of(url)
            raise ServiceUnavailableError(
                self.context.app_id,
                f"its token endpoint {host} could not be reached ({type(exc).__name__})",
                host=host,
            ) from exc


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
        response = await self._post(
            settings.token_endpoint,
            json={"app_id": credential.client_id, "app_secret": credential.client_secret},
            headers={"Accept": "application/json"},
        )
        logger.debug("app token exchange for %s -> %s", credential.app_id, response.status_code)
        if response.status_code >= 500:
            raise ServiceUnavailableError(
                credential.app_id,
                f"its token endpoint answered {endpoint_message(response, self._secrets())}",
                host=_host_of(settings.token_endpoint),
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
    ) -> None:
        context = context or AuthContext.for_credential(credential, "oauth2")
        super().__init__(credential, persist, token_client, context, refresh_margin)
        self.settings = settings
        self.query_parameter = query_parameter
        if settings.token_placement == "query":  # noqa: S105 (a location, not a secret)
            install_query_redaction()

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
        tokens = await self._usable_tokens()
        self._apply(request, tokens.access_token)
        response = yield request
        if response.status_code != 401:
            return
        if not tokens.refresh_token:
            raise self.context.error(
                "the app refused the stored access token (HTTP 401) and there is no refresh token",
                expired=True,
            )
        tokens = await self._refreshed(refused=tokens.access_token)
        self._apply(request, tokens.access_token)
        response = yield request
        if response.status_code == 401:
            raise self.context.error(
                "the app refused the access token even after it was refreshed (HTTP 401)", expired=True
            )

    async def _usable_tokens(self) -> OAuthTokens:
        tokens = self.credential.tokens
        if tokens is None:
            raise self.context.error("you have not signed in yet")
        if not tokens.expires_within(self.refresh_margin):
            return tokens
        if tokens.refresh_token:
            return await self._refreshed(refused=tokens.access_token)
        if tokens.expires_within(0):
            raise self.context.error("the access token expired and there is no refresh token", expired=True)
        return tokens  # close to expiry, cannot be refreshed: use it while it lasts

    async def _refreshed(self, *, refused: str) -> OAuthTokens:
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
        credential = self.credential
        if not current.refresh_token:
            raise self.context.error("the access token expired and there is no refresh token", expired=True)
        form = {"grant_type": "refresh_token", "refresh_token": current.refresh_token}
        if credential.client_id:
            form["client_id"] = credential.client_id
        if credential.client_secret:
            form["client_secret"] = credential.client_secret
        started = time.time()
        response = await self._post(
            self.settings.token_endpoint, data=form, headers={"Accept": "application/json"}
        )
        logger.debug("oauth2 refresh for %s -> %s", credential.app_id, response.status_code)
        if response.status_code >= 500:
            raise ServiceUnavailableError(
                credential.app_id,
                f"its token endpoint answered {endpoint_message(response, self._secrets())}",
                host=_host_of(self.settings.token_endpoint),
            )
        try:
            fresh = parse_token_response(response, started, self._secrets())
        except ValueError as exc:
            raise self.context.error(
                f"the sign-in could not be renewed ({scrub(str(exc), self._secrets())})",
                expired=True,
                endpoint=public_url(self.settings.token_endpoint),
            ) from None
        return fresh.model_copy(
            update={
                "refresh_token": fresh.refresh_token or current.refresh_token,
                "scope": fresh.scope or current.scope,
            }
        )


def _credential_secrets(credential: Credential) -> list[str | None]:
    found: list[str | None] = [credential.client_secret, credential.api_key]
    if credential.tokens is not None:
        found += [credential.tokens.access_token, credential.tokens.refresh_token]
    if credential.app_token is not None:
        found.append(credential.app_token.token)
    return found
