"""The gateway's one OAuth 2 client, for web apps and MCP servers alike: authlib's
`AsyncOAuth2Client` (docs/decisions.md, "One OAuth client").

authlib builds the protocol's requests: the authorization URL (PKCE S256 challenge, scope, state,
extra parameters such as an RFC 8707 `resource`), the authorization-code exchange and the
refresh, each authenticated as the client was registered (`client_secret_post`,
`client_secret_basic` or `none`). Its requests go through `BridgeTransport` (oauth_transport.py)
to the httpx client the caller's route picks, so the web network rules apply to them.

What the token endpoint answers is read by token_answers.py before authlib sees it (a compliance
hook): anything the gateway cannot use or keep ends here as AUTH_* naming the endpoint, an answer
of 500 or more as SERVICE_UNAVAILABLE, always scrubbed of what the request carried.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

import httpx2

from ..discovery.web_transport import public_url
from ..errors import ServiceUnavailableError
from .auth_context import AuthContext
from .credentials import OAuthTokens
from .oauth_transport import BridgeTransport, Route, reaching
from .token_answers import endpoint_message, parse_token_response, scrub
from .token_client import TOKEN_REQUEST_TIMEOUT_SECONDS, host_of

PKCE_VERIFIER_CHARS: Final = 86  # RFC 7636: 43 to 128 characters of [A-Za-z0-9-._~]


@dataclass(frozen=True)
class OAuthClient:
    """Who the gateway is at an authorization server. `auth_method` is how it authenticates at
    the token endpoint; without one, the secret goes in the form (`client_secret_post`, what
    RFC 6749 §2.3.1 lets every server accept) or there is none to send (`none`)."""

    client_id: str
    client_secret: str | None = None
    auth_method: str | None = None

    @property
    def method(self) -> str:
        if self.auth_method:
            return self.auth_method
        return "client_secret_post" if self.client_secret else "none"


@dataclass(frozen=True)
class PkcePair:
    verifier: str
    challenge: str

    @classmethod
    def create(cls) -> PkcePair:
        from authlib.common.security import generate_token  # type: ignore[import-untyped]  # noqa: PLC0415

        verifier: str = generate_token(PKCE_VERIFIER_CHARS)
        return cls(verifier, s256_challenge(verifier))


# authlib (and the JOSE and X.509 code it brings) is imported when a sign-in or a refresh needs
# it, not when the gateway starts: ~0.1 s of every start otherwise.


def s256_challenge(verifier: str) -> str:
    from authlib.oauth2.rfc7636 import create_s256_code_challenge  # type: ignore[import-untyped]  # noqa: PLC0415

    challenge: str = create_s256_code_challenge(verifier)
    return challenge


def _authlib_error() -> type[Exception]:
    """authlib's base error, to catch (imported at that moment, like the rest of authlib)."""
    from authlib.common.errors import AuthlibBaseError  # type: ignore[import-untyped]  # noqa: PLC0415

    error: type[Exception] = AuthlibBaseError
    return error


def _session(client: OAuthClient, route: Route | None = None) -> Any:
    """An authlib client for one exchange; its requests go through `route`."""
    from authlib.integrations.httpx_client import AsyncOAuth2Client  # type: ignore[import-untyped]  # noqa: PLC0415

    options: dict[str, Any] = {}
    if route is not None:
        options["transport"] = BridgeTransport(route)
    return AsyncOAuth2Client(
        client_id=client.client_id,
        client_secret=client.client_secret,
        token_endpoint_auth_method=client.method,
        code_challenge_method="S256",
        trust_env=False,
        follow_redirects=False,
        timeout=TOKEN_REQUEST_TIMEOUT_SECONDS,
        **options,
    )


def authorization_url(
    endpoint: str,
    client: OAuthClient,
    *,
    redirect_uri: str,
    state: str,
    code_challenge: str,
    scope: str | None,
    extra: Mapping[str, str] = {},
) -> str:
    """The authorization request (RFC 6749 §4.1.1 with PKCE): the endpoint's own query is kept,
    `scope` only when there is one, `extra` parameters (RFC 8707 `resource`…) as given."""
    session = _session(client)
    url, _ = session.create_authorization_url(
        endpoint,
        state=state,
        redirect_uri=redirect_uri,
        scope=scope or None,
        code_challenge=code_challenge,
        code_challenge_method="S256",
        **{k: v for k, v in extra.items() if v},
    )
    return str(url)


class _ReadAnswer:
    """authlib's compliance hook: the answer as token_answers.py reads it, before authlib does."""

    def __init__(self, app_id: str, sent: Iterable[str | None]) -> None:
        self.app_id = app_id
        self.sent = list(sent)
        self.started = time.time()
        self.tokens: OAuthTokens | None = None

    def __call__(self, response: httpx2.Response) -> httpx2.Response:
        if response.status_code >= 500:
            raise ServiceUnavailableError(
                self.app_id,
                f"its token endpoint answered {endpoint_message(response, self.sent)}",
                host=host_of(str(response.request.url)),
            )
        self.tokens = parse_token_response(response, self.started, self.sent)  # ValueError if unusable
        return response


async def exchange_code(
    route: Route,
    token_endpoint: str,
    client: OAuthClient,
    *,
    code: str,
    code_verifier: str,
    redirect_uri: str,
    context: AuthContext,
    extra: Mapping[str, str] = {},
) -> OAuthTokens:
    """RFC 6749 §4.1.3 with the PKCE verifier. A refusal or an unusable answer: AUTH_REQUIRED."""
    answer = _ReadAnswer(context.app_id, (client.client_secret, code, code_verifier))
    try:
        async with _session(client, route) as session:
            session.register_compliance_hook("access_token_response", answer)
            with reaching(context.app_id, "token endpoint", token_endpoint):
                await session.fetch_token(
                    token_endpoint,
                    grant_type="authorization_code",
                    code=code,
                    code_verifier=code_verifier,
                    redirect_uri=redirect_uri,
                    **{k: v for k, v in extra.items() if v},
                )
    except (ValueError, _authlib_error()) as exc:
        raise context.error(
            f"the authorization code was not accepted ({scrub(str(exc), answer.sent)})",
            endpoint=public_url(token_endpoint),
        ) from None
    assert answer.tokens is not None
    return answer.tokens


async def refresh(
    route: Route,
    token_endpoint: str,
    client: OAuthClient | None,
    *,
    refresh_token: str,
    context: AuthContext,
    extra: Mapping[str, str] = {},
) -> OAuthTokens:
    """RFC 6749 §6. An answer without a refresh token or scope keeps the old ones; a refusal or
    an unusable answer: AUTH_EXPIRED (sign in again)."""
    answer = _ReadAnswer(context.app_id, (client.client_secret if client else None, refresh_token))
    # Without a client id (tokens stored by hand, or by an older version) nothing identifies it.
    anonymous = {} if client is not None else {"auth": httpx2.Auth()}
    try:
        async with _session(client or OAuthClient(""), route) as session:
            session.register_compliance_hook("refresh_token_response", answer)
            with reaching(context.app_id, "token endpoint", token_endpoint):
                await session.refresh_token(
                    token_endpoint,
                    refresh_token=refresh_token,
                    **anonymous,
                    **{k: v for k, v in extra.items() if v},
                )
    except (ValueError, _authlib_error()) as exc:
        raise context.error(
            f"the sign-in could not be renewed ({scrub(str(exc), answer.sent)})",
            expired=True,
            endpoint=public_url(token_endpoint),
        ) from None
    assert answer.tokens is not None
    return answer.tokens
