"""What an MCP server and its authorization server publish is read like any hostile answer: an
issuer that is not the server it was fetched for, endpoints that are not https, endpoints on
private or loopback addresses a remote server has no business pointing at, documents far too
large, metadata for another resource. Each ends the sign-in with AUTH_INVALID naming the document
or endpoint, before any browser opens and before anything is sent where it should not go. Real
servers: the protected MCP server and its authorization server of mcp_oauth_servers.py, and an
HTTPS server with a test CA for an authorization server reached by name."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest

from aai_gateway.auth import token_client
from aai_gateway.auth.mcp_discovery import discover, mcp_route
from aai_gateway.auth.mcp_login import login_mcp
from aai_gateway.auth.token_client import MAX_ANSWER_BYTES, new_token_client
from aai_gateway.discovery.web import NetworkRuleError, WebFetchPolicy
from aai_gateway.errors import AaiError, ErrorCode
from tests.auth.mcp_oauth_servers import McpAuthorizationServer, ProtectedMcpServer
from tests.auth.mcp_sign_in_support import mcp_app
from tests.discovery.web_support import HttpsServer, LocalCa, RecordingBackend, fixed_resolver

pytestmark = pytest.mark.anyio

IDP_HOST = "idp.example"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def ca(tmp_path_factory: pytest.TempPathFactory) -> LocalCa:
    return LocalCa.create(tmp_path_factory.mktemp("ca"), IDP_HOST)


@pytest.fixture
def idp(ca: LocalCa) -> Iterator[HttpsServer]:
    server = HttpsServer(ca).start()
    yield server
    server.stop()


def metadata(issuer: str, **endpoints: str) -> bytes:
    document: dict[str, Any] = {
        "issuer": issuer,
        "authorization_endpoint": f"{issuer}/authorize",
        "token_endpoint": f"{issuer}/token",
        "registration_endpoint": f"{issuer}/register",
        "response_types_supported": ["code"],
        "code_challenge_methods_supported": ["S256"],
    }
    document.update(endpoints)
    return json.dumps(document).encode()


def never(url: str) -> None:
    raise AssertionError("no browser may open for metadata the gateway refuses")


async def refused_sign_in(mcp: ProtectedMcpServer, **options: Any) -> AaiError:
    with pytest.raises(AaiError) as caught:
        await login_mcp(mcp_app(mcp.url), existing=None, client_id=None, open_url=never, **options)
    assert caught.value.code is ErrorCode.AUTH_INVALID, caught.value.message
    return caught.value


async def test_authorization_server_metadata_naming_another_issuer_is_refused(
    mcp: ProtectedMcpServer, authorization: McpAuthorizationServer
) -> None:
    authorization.metadata_override = metadata(
        "https://evil.example", registration_endpoint=f"{authorization.url}/register"
    )

    error = await refused_sign_in(mcp)

    assert (
        "its issuer https://evil.example is not the authorization server it was fetched for" in error.message
    )
    assert error.data["endpoint"] == f"{authorization.url}/.well-known/oauth-authorization-server"
    assert authorization.registrations == [] and authorization.token_requests == []


@pytest.mark.parametrize("endpoint", ["authorization_endpoint", "token_endpoint"])
async def test_an_endpoint_that_is_not_https_is_refused_before_the_browser_opens(
    mcp: ProtectedMcpServer, authorization: McpAuthorizationServer, endpoint: str
) -> None:
    plain = f"http://as.example.test/{endpoint}"
    authorization.metadata_override = metadata(authorization.url, **{endpoint: plain})

    error = await refused_sign_in(mcp)

    assert f"{plain} is not https" in error.message
    assert error.data["endpoint"] == plain
    assert authorization.registrations == []


async def test_a_registration_endpoint_on_a_private_address_is_refused_without_connecting(
    mcp: ProtectedMcpServer, authorization: McpAuthorizationServer
) -> None:
    private = "https://10.20.30.40/register"
    authorization.metadata_override = metadata(authorization.url, registration_endpoint=private)
    backend = RecordingBackend()

    error = await refused_sign_in(mcp, network_backend=backend)

    assert f"its registration endpoint {private} was refused" in error.message
    assert "10.20.30.40" in error.data["reason"]
    assert backend.attempts == []  # refused before any connection


async def test_an_authorization_server_whose_name_resolves_to_this_machine_needs_the_users_permission(
    mcp: ProtectedMcpServer, idp: HttpsServer, ca: LocalCa
) -> None:
    issuer = f"https://{IDP_HOST}:{idp.port}"
    mcp.resource_metadata_override = json.dumps(
        {"resource": mcp.url, "authorization_servers": [issuer], "scopes_supported": ["mcp:tools"]}
    ).encode()
    idp.serve("/.well-known/oauth-authorization-server", json.loads(metadata(issuer)))
    resolver = fixed_resolver("127.0.0.1")

    error = await refused_sign_in(mcp, web_policy=ca.policy(allow_private=False), resolver=resolver)

    assert f"{issuer}/.well-known/oauth-authorization-server was refused" in error.message
    assert idp.requests == []
    allowed = ca.policy()  # AAI_GATEWAY_ALLOW_PRIVATE_WEB=1, and the test CA
    async with (
        new_token_client(allowed, web=False) as local,
        new_token_client(allowed, web=True, resolver=resolver) as web,
    ):
        found = await discover("protected", mcp.url, mcp_route(mcp.url, local, web))
    assert found is not None
    assert (found.server.issuer, found.server.token_endpoint) == (issuer, f"{issuer}/token")
    assert found.server.resource == mcp.url


@pytest.mark.parametrize("document", ["authorization server metadata", "protected resource metadata"])
async def test_a_metadata_document_larger_than_the_limit_is_not_read(
    mcp: ProtectedMcpServer, authorization: McpAuthorizationServer, document: str
) -> None:
    huge = b'{"issuer": "' + b"x" * (MAX_ANSWER_BYTES + 1) + b'"}'
    if document == "authorization server metadata":
        authorization.metadata_override = huge
    else:
        mcp.resource_metadata_override = huge

    error = await refused_sign_in(mcp)

    assert f"answered more than {MAX_ANSWER_BYTES} bytes" in error.message
    assert document in error.message
    assert authorization.registrations == []


async def test_resource_metadata_for_another_server_is_refused(
    mcp: ProtectedMcpServer, authorization: McpAuthorizationServer
) -> None:
    other = "http://127.0.0.1:1/elsewhere"
    mcp.resource_metadata_override = json.dumps(
        {"resource": other, "authorization_servers": [authorization.url]}
    ).encode()

    error = await refused_sign_in(mcp)

    assert f"it is for the resource {other}, not for this server ({mcp.url})" in error.message
    assert authorization.metadata_requests == 0


async def test_a_remote_servers_metadata_cannot_point_the_gateway_at_this_machine(
    ca: LocalCa, idp: HttpsServer
) -> None:
    """For an MCP server on the internet, only its own origin is reached as the server is; an
    authorization server its metadata names on a loopback address is refused, even over https."""
    async with (
        httpx.AsyncClient() as local,
        new_token_client(WebFetchPolicy(ca_file=ca.ca_file), web=True) as web,
    ):
        route = mcp_route("https://mcp.example.com/mcp", local, web)
        assert route("https://mcp.example.com/.well-known/oauth-protected-resource/mcp") is local
        with pytest.raises(NetworkRuleError):
            await route(idp.origin).get(f"{idp.origin}/.well-known/oauth-authorization-server")

    assert idp.requests == [] and idp.connections == 0


class _EndlessEvents(BaseHTTPRequestHandler):
    """An MCP server that needs no sign-in and answers the probe with an event stream it keeps
    open (a comment now and then), as a server may while it has more to say."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        try:
            for _ in range(200):
                self.wfile.write(b": still here\n\n")
                self.wfile.flush()
                time.sleep(0.1)
        except OSError:  # the gateway hung up: it had what it needed
            return

    def log_message(self, *args: Any) -> None:
        pass


async def test_a_server_that_answers_the_probe_with_an_open_event_stream_needs_no_sign_in(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(token_client, "TOKEN_REQUEST_TIMEOUT_SECONDS", 2.0)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _EndlessEvents)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_port}/mcp"
    try:
        async with (
            new_token_client(WebFetchPolicy(), web=False) as local,
            new_token_client(WebFetchPolicy(), web=True) as web,
        ):
            found = await discover("open-stream", url, mcp_route(url, local, web))
    finally:
        server.shutdown()
        server.server_close()
    assert found is None
