"""The HTTP clients the auth layer reaches token endpoints with.

Token requests carry the most valuable secrets the gateway holds (App Secrets, refresh tokens,
authorization codes), so for a web app they obey the web network rules like its API calls
(discovery/web_transport.py): https only, public addresses only unless the policy allows private
ones, checked when connecting. Apps from this machine may use any http(s) token endpoint (a
local test server on http://127.0.0.1). Both clients trust the policy's CA file on top of the
usual CAs, read no proxy or certificate settings from the environment and follow no redirects.
"""

from __future__ import annotations

from typing import Any, Final

import httpcore
import httpx

from .. import __version__
from ..descriptor import AppDescriptor
from ..discovery.web import NetworkRuleError, Resolver, WebFetchPolicy, ssl_context
from ..discovery.web_transport import WEB_RULES, GuardedTransport, public_url
from ..errors import AaiError, AuthInvalidError, ServiceUnavailableError

TOKEN_REQUEST_TIMEOUT_SECONDS: Final = 30.0


def new_token_client(
    policy: WebFetchPolicy,
    *,
    web: bool,
    resolver: Resolver | None = None,
    network_backend: httpcore.AsyncNetworkBackend | None = None,
) -> httpx.AsyncClient:
    """A client for the token endpoints of web apps (`web`) or of apps from this machine.
    `resolver` and `network_backend` replace name resolution and connections (tests)."""
    transport = GuardedTransport(policy, resolver=resolver, network_backend=network_backend) if web else None
    return httpx.AsyncClient(
        transport=transport,
        verify=ssl_context(policy),
        trust_env=False,
        follow_redirects=False,
        headers={"User-Agent": f"aai-gateway/{__version__}"},
    )


def is_web(app: AppDescriptor) -> bool:
    return app.source.kind == "web"


def endpoint_refused(app_id: str, what: str, url: str, exc: NetworkRuleError) -> AaiError:
    """AUTH_INVALID naming the endpoint and the rule: the descriptor's auth settings cannot be
    used as they are, and signing in again would not change that."""
    return AuthInvalidError(
        app_id,
        f"its {what} {public_url(url)} was refused ({exc}); {WEB_RULES}. Nothing was sent to it, "
        "no credential included",
        endpoint=public_url(url),
        reason=str(exc),
        rule=WEB_RULES,
    )


async def post_to_endpoint(
    client: httpx.AsyncClient, url: str, *, app_id: str, what: str, **kwargs: Any
) -> httpx.Response:
    """POST to an endpoint of the authorization server (`what`: "token endpoint"…), asking for
    JSON. Refused by the web network rules: AUTH_INVALID; unreachable: SERVICE_UNAVAILABLE."""
    try:
        return await client.post(
            url, timeout=TOKEN_REQUEST_TIMEOUT_SECONDS, headers={"Accept": "application/json"}, **kwargs
        )
    except NetworkRuleError as exc:
        raise endpoint_refused(app_id, what, url, exc) from None
    except httpx.TransportError as exc:
        host = host_of(url)
        raise ServiceUnavailableError(
            app_id, f"its {what} {host} could not be reached ({type(exc).__name__})", host=host
        ) from exc


def host_of(url: str) -> str:
    """`host` or `host:port` of a URL, for messages."""
    parsed = httpx.URL(url)
    return f"{parsed.host}:{parsed.port}" if parsed.port else parsed.host
