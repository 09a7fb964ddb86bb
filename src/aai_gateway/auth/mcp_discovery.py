"""Finding where a Streamable HTTP MCP server's users sign in: the MCP authorization flow's
discovery (protected-resource metadata, RFC 9728; authorization-server metadata, RFC 8414 or
OpenID Connect discovery), run by `aai-gateway auth login` for an `mcp` app.

1. An MCP request without a token; a server that wants one answers 401, its `WWW-Authenticate`
   naming the resource metadata and perhaps the scope.
2. The protected-resource metadata, at the URL the server named or the well-known ones; its
   `resource` must be this server (or a parent of its URL), and it names the authorization server.
   Without it, the server's own origin is the authorization server (MCP 2025-03-26).
3. The authorization server's metadata at its well-known URLs; its `issuer` must be the server
   step 2 named (RFC 8414 §3.3).

The URL orders, the `WWW-Authenticate` parsing, the scope choice and the documents are the MCP
SDK's (`mcp.client.auth.utils`, `mcp.shared.auth`): the spec's rules as the SDK keeps them.

Everything found here comes from servers, so it is checked like a hostile answer: the endpoints
must be https, or loopback when the MCP server itself is on this machine (`acceptable`); every
request to a URL off the MCP server's origin obeys the web network rules (`mcp_route`); answers
are read up to token_client.MAX_ANSWER_BYTES; a refusal is AUTH_INVALID naming the document.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, TypeVar

import httpx
import httpx2
import mcp_types
from mcp.client.auth.utils import (
    build_oauth_authorization_server_metadata_discovery_urls,
    build_protected_resource_metadata_discovery_urls,
    extract_resource_metadata_from_www_auth,
    extract_scope_from_www_auth,
    get_client_metadata_scopes,
    issuers_match,
)
from mcp.shared.auth import OAuthMetadata, ProtectedResourceMetadata
from mcp.shared.auth_utils import check_resource_allowed, resource_url_from_server_url
from pydantic import BaseModel, ValidationError

from ..discovery.web_transport import public_url
from ..errors import AuthInvalidError
from .credentials import AuthorizationServer
from .oauth_registration import is_loopback_host
from .oauth_transport import HEADERS_ONLY, Route, oauth_http_client, reaching

GRANT_TYPES: Final = ["authorization_code", "refresh_token"]
_PROBE: Final = {
    "jsonrpc": "2.0",
    "id": "aai-gateway-sign-in",
    "method": "initialize",
    "params": {
        "protocolVersion": mcp_types.LATEST_PROTOCOL_VERSION,
        "capabilities": {},
        "clientInfo": {"name": "aai-gateway", "version": "sign-in"},
    },
}


@dataclass(frozen=True)
class Discovered:
    """Where to sign in: the record kept with the tokens, and the metadata registration needs."""

    server: AuthorizationServer
    metadata: OAuthMetadata


def mcp_route(server_url: str, local: httpx.AsyncClient, web: httpx.AsyncClient) -> Route:
    """The MCP server's own origin is reached like the server itself (`local`: its URL is the
    user's choice, as for the executor); so is a loopback address when the server is on this
    machine. Anything else an MCP server or its metadata names obeys the web network rules (`web`):
    a server on the internet cannot point the gateway at this machine or its network."""
    server = httpx.URL(server_url)
    server_is_local = is_loopback_host(server.host)

    def route(url: str) -> httpx.AsyncClient:
        target = httpx.URL(url)
        same_origin = (target.scheme, target.host, target.port) == (server.scheme, server.host, server.port)
        return local if same_origin or (server_is_local and is_loopback_host(target.host)) else web

    return route


def acceptable(url: str, server_url: str) -> bool:
    """https, or loopback http when the MCP server is on this machine too."""
    target = httpx.URL(url)
    if target.scheme == "https":
        return True
    return (
        target.scheme == "http"
        and is_loopback_host(target.host)
        and is_loopback_host(httpx.URL(server_url).host)
    )


async def discover(
    app_id: str, server_url: str, route: Route, *, headers: dict[str, str] | None = None
) -> Discovered | None:
    """Steps 1 to 3 of the module docstring; None when the server does not ask for a sign-in."""
    try:
        return await _discover(app_id, server_url, route, headers)
    except (httpx.InvalidURL, httpx2.InvalidURL):  # a URL in a document, past its model's checks
        raise _refused(
            app_id, "it names a URL the gateway cannot send to", "authorization metadata", server_url
        ) from None


async def _discover(
    app_id: str, server_url: str, route: Route, headers: dict[str, str] | None
) -> Discovered | None:
    async with oauth_http_client(route) as http:
        with reaching(app_id, "MCP server", server_url):
            probe = await http.post(
                server_url,
                json=_PROBE,
                headers={
                    **(headers or {}),
                    "Accept": "application/json, text/event-stream",
                    "MCP-Protocol-Version": mcp_types.LATEST_PROTOCOL_VERSION,
                },
                extensions={HEADERS_ONLY: True},  # its status and WWW-Authenticate say it all
            )
        if probe.status_code != 401:
            return None
        resource_metadata = await _resource_metadata(app_id, http, probe, server_url)
        issuer = str(resource_metadata.authorization_servers[0]) if resource_metadata else None
        metadata = await _server_metadata(app_id, http, issuer, server_url)
    resource = resource_url_from_server_url(server_url)
    if resource_metadata is not None:
        resource = str(resource_metadata.resource)
    for what, url in (
        ("authorization endpoint", str(metadata.authorization_endpoint)),
        ("token endpoint", str(metadata.token_endpoint)),
    ):
        if not acceptable(url, server_url):
            raise _refused(
                app_id, f"the {what} {public_url(url)} is not https", "authorization server metadata", url
            )
    scope = get_client_metadata_scopes(
        extract_scope_from_www_auth(probe), resource_metadata, metadata, GRANT_TYPES
    )
    record = AuthorizationServer(
        issuer=str(metadata.issuer),
        authorization_endpoint=str(metadata.authorization_endpoint),
        token_endpoint=str(metadata.token_endpoint),
        resource=resource,
        scope=scope,
    )
    return Discovered(record, metadata)


async def _resource_metadata(
    app_id: str, http: httpx2.AsyncClient, probe: httpx2.Response, server_url: str
) -> ProtectedResourceMetadata | None:
    named = extract_resource_metadata_from_www_auth(probe)
    if named is not None and not _parses(named):
        raise _refused(
            app_id, "its WWW-Authenticate header names something that is not a URL", "resource metadata",
            server_url,
        )  # fmt: skip
    if named is not None and not acceptable(named, server_url):
        raise _refused(
            app_id, f"it names {public_url(named)}, which is not https", "resource metadata", named
        )
    for url in build_protected_resource_metadata_discovery_urls(named, server_url):
        found = await _document(app_id, http, url, "protected resource metadata", ProtectedResourceMetadata)
        if found is None:
            continue
        expected = resource_url_from_server_url(server_url)
        if not check_resource_allowed(requested_resource=expected, configured_resource=str(found.resource)):
            raise _refused(
                app_id,
                f"it is for the resource {public_url(str(found.resource))}, not for this server "
                f"({public_url(expected)})",
                "protected resource metadata",
                url,
            )
        return found
    return None  # an older server: its own origin is the authorization server


async def _server_metadata(
    app_id: str, http: httpx2.AsyncClient, issuer: str | None, server_url: str
) -> OAuthMetadata:
    expected = issuer or str(httpx.URL(server_url).copy_with(path="/", query=None, fragment=None)).rstrip("/")
    if not acceptable(expected, server_url):
        raise _refused(
            app_id, f"it names the authorization server {public_url(expected)}, which is not https",
            "protected resource metadata", expected,
        )  # fmt: skip
    urls = build_oauth_authorization_server_metadata_discovery_urls(issuer, server_url)
    for url in urls:
        found = await _document(app_id, http, url, "authorization server metadata", OAuthMetadata)
        if found is None:
            continue
        if not issuers_match(str(found.issuer), expected):
            raise _refused(
                app_id,
                f"its issuer {public_url(str(found.issuer))} is not the authorization server it was "
                f"fetched for ({public_url(expected)})",
                "authorization server metadata",
                url,
            )
        return found
    raise _refused(
        app_id,
        f"none was found for {public_url(expected)} (tried {', '.join(public_url(u) for u in urls)})",
        "authorization server metadata",
        expected,
    )


M = TypeVar("M", bound=BaseModel)


async def _document(app_id: str, http: httpx2.AsyncClient, url: str, what: str, model: type[M]) -> M | None:
    """The document at `url`, or None when it is not there (any 4xx) or not such a document."""
    with reaching(app_id, what, url):
        response = await http.get(url, headers={"MCP-Protocol-Version": mcp_types.LATEST_PROTOCOL_VERSION})
    if response.status_code >= 500:
        raise _refused(app_id, f"{public_url(url)} answered HTTP {response.status_code}", what, url)
    if response.status_code != 200:
        return None
    try:
        return model.model_validate_json(response.content)
    except ValidationError:
        return None


def _parses(url: str) -> bool:
    """`url` is a URL the HTTP clients can send to (a server's header may hold anything)."""
    try:
        httpx.URL(url)
    except httpx.InvalidURL:
        return False
    return True


def _refused(app_id: str, problem: str, what: str, url: str) -> AuthInvalidError:
    return AuthInvalidError(
        app_id,
        f"its {what} cannot be used: {problem}. The MCP server cannot be signed in to as it is; "
        "tell whoever runs it",
        endpoint=public_url(url),
    )
