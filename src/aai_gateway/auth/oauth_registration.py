"""OAuth client registration for a sign-in that has no client id: RFC 8414 authorization server
metadata, then RFC 7591 dynamic registration of a public client for the loopback redirect URI.

The registration endpoint must be https (or loopback http, for a server on this machine); for a
web app every request also obeys the web network rules (token_client.py). Without a way to
register, the error says how to register the gateway by hand and pass `--client-id`.
"""

from __future__ import annotations

import ipaddress
import logging
from typing import Any, Final

import httpx

from ..descriptor.http_headers import header_value_problem
from ..descriptor.model import OAuth2Auth
from ..discovery.web import NetworkRuleError
from ..errors import AuthRequiredError
from .auth_context import AuthContext
from .oauth_callback import CALLBACK_PATH
from .token_answers import answer_document, endpoint_message
from .token_client import TOKEN_REQUEST_TIMEOUT_SECONDS, host_of, post_to_endpoint

logger = logging.getLogger(__name__)

METADATA_PATHS: Final = ("/.well-known/oauth-authorization-server", "/.well-known/openid-configuration")
CLIENT_NAME: Final = "AAI Gateway"


async def register_client(
    client: httpx.AsyncClient, settings: OAuth2Auth, *, redirect_uri: str, context: AuthContext
) -> tuple[str, str | None]:
    """RFC 7591: a public client (`token_endpoint_auth_method: none`) for this redirect URI,
    at the `registration_endpoint` of the authorization server's RFC 8414 metadata."""
    metadata = await authorization_server_metadata(client, settings.authorization_endpoint)
    endpoint = metadata.get("registration_endpoint") if metadata else None
    if not isinstance(endpoint, str) or not endpoint:
        raise needs_client_id(context, "the authorization server does not offer dynamic client registration")
    if not _is_secure_or_loopback(endpoint):
        raise needs_client_id(context, f"its registration endpoint {endpoint} is not https")
    body: dict[str, Any] = {
        "client_name": CLIENT_NAME,
        "redirect_uris": [redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
    }
    if settings.scopes:
        body["scope"] = " ".join(settings.scopes)
    response = await post_to_endpoint(
        client, endpoint, app_id=context.app_id, what="registration endpoint", json=body
    )
    answer = answer_document(response) or {}
    client_id = answer.get("client_id")
    if not response.is_success or not _usable_text(client_id):
        raise needs_client_id(
            context, f"dynamic client registration failed ({endpoint_message(response, ())})"
        )
    assert isinstance(client_id, str)
    secret = answer.get("client_secret")
    method = answer.get("token_endpoint_auth_method")
    if method == "none" or not _usable_text(secret):
        secret = None
    logger.info("registered a client at %s", host_of(endpoint))
    return client_id, secret


async def authorization_server_metadata(
    client: httpx.AsyncClient, authorization_endpoint: str
) -> dict[str, Any] | None:
    """RFC 8414 metadata from the authorization endpoint's origin, or None."""
    origin = httpx.URL(authorization_endpoint).copy_with(path="/", query=None, fragment=None)
    for path in METADATA_PATHS:
        url = origin.copy_with(path=path)
        try:
            response = await client.get(url, timeout=TOKEN_REQUEST_TIMEOUT_SECONDS)
        except (httpx.TransportError, NetworkRuleError):
            return None
        if response.status_code != 200:
            continue
        document = answer_document(response)
        if document is not None:
            return document
    return None


def needs_client_id(context: AuthContext, why: str) -> AuthRequiredError:
    return context.error(
        f"a client id is needed ({why}); register the gateway as an OAuth client with redirect URI "
        f"http://127.0.0.1/{CALLBACK_PATH.lstrip('/')} (any port)",
        command=f"{context.command} --client-id <client id>",
    )


def _usable_text(value: Any) -> bool:
    """A non-empty string that can be stored and sent (a form body, a header): no lone
    surrogate, no control character."""
    return isinstance(value, str) and bool(value) and header_value_problem(value) is None


def _is_secure_or_loopback(url: str) -> bool:
    parsed = httpx.URL(url)
    if parsed.scheme == "https":
        return True
    if parsed.scheme != "http":
        return False
    if parsed.host == "localhost":
        return True
    try:
        return ipaddress.ip_address(parsed.host).is_loopback
    except ValueError:
        return False
