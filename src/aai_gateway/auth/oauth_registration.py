"""OAuth client registration for a sign-in that has no client id: RFC 8414 authorization server
metadata, then RFC 7591 dynamic registration of a public client for the loopback redirect URI.

The documents are the MCP SDK's models (`OAuthMetadata`, `OAuthClientMetadata`,
`OAuthClientInformationFull`), the metadata URLs its discovery order, the registration request and
the check that the server registered a client the gateway can use its helpers
(`create_client_registration_request`, `handle_registration_response`,
`check_registration_usable`). Requests go through the caller's route (oauth_transport.py), so for
a web app or an authorization server found on the network they obey the web network rules.

The registration endpoint must be https (or loopback http, for a server on this machine). Without
a way to register, the error says how to register the gateway by hand and pass `--client-id`.
"""

from __future__ import annotations

import ipaddress
import logging
from typing import Final

import httpx
import httpx2
from mcp.client.auth import OAuthRegistrationError
from mcp.client.auth.oauth2 import check_registration_usable
from mcp.client.auth.utils import (
    build_oauth_authorization_server_metadata_discovery_urls,
    create_client_registration_request,
    handle_registration_response,
)
from mcp.shared.auth import OAuthClientMetadata, OAuthMetadata
from pydantic import AnyUrl, ValidationError

from ..descriptor.http_headers import header_value_problem
from ..discovery.web import NetworkRuleError
from ..errors import AuthRequiredError
from .auth_context import AuthContext
from .oauth_callback import CALLBACK_PATH
from .oauth_client import OAuthClient
from .oauth_transport import Route, oauth_http_client, reaching
from .token_answers import endpoint_message
from .token_client import OversizedAnswerError, host_of

logger = logging.getLogger(__name__)

CLIENT_NAME: Final = "AAI Gateway"


async def register_client(
    route: Route,
    metadata: OAuthMetadata | None,
    *,
    scope: str | None,
    redirect_uri: str,
    context: AuthContext,
) -> OAuthClient:
    """RFC 7591: a public client (`token_endpoint_auth_method: none`) for this redirect URI, at
    the `registration_endpoint` of the authorization server's metadata."""
    endpoint = str(metadata.registration_endpoint) if metadata and metadata.registration_endpoint else None
    if metadata is None or endpoint is None:
        raise needs_client_id(context, "the authorization server does not offer dynamic client registration")
    if not is_secure_or_loopback(endpoint):
        raise needs_client_id(context, f"its registration endpoint {endpoint} is not https")
    wanted = OAuthClientMetadata(
        client_name=CLIENT_NAME,
        redirect_uris=[AnyUrl(redirect_uri)],
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method="none",  # noqa: S106 (a method name, not a secret)
        scope=scope or None,
    )
    request = create_client_registration_request(metadata, wanted, endpoint)
    async with oauth_http_client(route) as http:
        with reaching(context.app_id, "registration endpoint", endpoint):
            response = await http.send(request)
    try:
        registered = await handle_registration_response(response)
        check_registration_usable(registered)
    except OAuthRegistrationError:  # its message quotes the whole answer: only the server's own words
        raise needs_client_id(
            context, f"dynamic client registration failed ({endpoint_message(response, ())})"
        ) from None
    if not _usable_text(registered.client_id):
        raise needs_client_id(context, "dynamic client registration answered an unusable client id")
    secret = registered.client_secret
    method = registered.token_endpoint_auth_method
    if method == "none" or not _usable_text(secret):
        secret, method = None, "none"
    logger.info("registered a client at %s", host_of(endpoint))
    return OAuthClient(registered.client_id, secret, method)


async def authorization_server_metadata(route: Route, authorization_endpoint: str) -> OAuthMetadata | None:
    """RFC 8414 metadata from the authorization endpoint's origin, or None (a web app's descriptor
    names its endpoints: the metadata only offers registration, so it may be missing)."""
    origin = str(httpx.URL(authorization_endpoint).copy_with(path="/", query=None, fragment=None))
    async with oauth_http_client(route) as http:
        for url in build_oauth_authorization_server_metadata_discovery_urls(origin.rstrip("/"), origin):
            try:
                response = await http.get(url)
            except (httpx.TransportError, httpx2.TransportError, NetworkRuleError, OversizedAnswerError):
                return None
            if response.status_code != 200:
                continue
            try:
                return OAuthMetadata.model_validate_json(response.content)
            except ValidationError:
                continue
    return None


def needs_client_id(context: AuthContext, why: str) -> AuthRequiredError:
    return context.error(
        f"a client id is needed ({why}); register the gateway as an OAuth client with redirect URI "
        f"http://127.0.0.1/{CALLBACK_PATH.lstrip('/')} (any port)",
        command=f"{context.command} --client-id <client id>",
    )


def _usable_text(value: str | None) -> bool:
    """A non-empty string that can be stored and sent (a form body, a header): no lone
    surrogate, no control character."""
    return isinstance(value, str) and bool(value) and header_value_problem(value) is None


def is_secure_or_loopback(url: str) -> bool:
    parsed = httpx.URL(url)
    if parsed.scheme == "https":
        return True
    if parsed.scheme != "http":
        return False
    return is_loopback_host(parsed.host)


def is_loopback_host(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
