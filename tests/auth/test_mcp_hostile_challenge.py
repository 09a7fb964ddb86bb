"""An MCP server's 401 challenge is read like any hostile answer: a `resource_metadata` that is
not a URL at all ends the sign-in with AUTH_INVALID naming the problem, never with an exception
of the URL parser (a traceback in `auth login`, INTERNAL_ERROR during a call). A real server on
127.0.0.1 answers the probe with the challenge."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from aai_gateway.auth.mcp_discovery import discover, mcp_route
from aai_gateway.auth.token_client import new_token_client
from aai_gateway.discovery.web import WebFetchPolicy
from aai_gateway.errors import AaiError, ErrorCode

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class _Challenging(BaseHTTPRequestHandler):
    challenge = ""
    resource_metadata: bytes | None = None

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(401)
        self.send_header("WWW-Authenticate", self.challenge)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self) -> None:
        if self.resource_metadata is not None and "oauth-protected-resource" in self.path:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(self.resource_metadata)))
            self.end_headers()
            self.wfile.write(self.resource_metadata)
            return
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()


@pytest.fixture
def challenging_server() -> Iterator[type[_Challenging]]:
    handler = type("Handler", (_Challenging,), {})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    handler.url = f"http://127.0.0.1:{server.server_port}/mcp"  # type: ignore[attr-defined]
    yield handler
    server.shutdown()
    server.server_close()


async def discovery_refusal(url: str) -> AaiError:
    """What discovering the authorization of the MCP server at `url` raises."""
    policy = WebFetchPolicy()
    local, web = new_token_client(policy, web=False), new_token_client(policy, web=True)
    try:
        with pytest.raises(AaiError) as caught:
            await discover("app", url, mcp_route(url, local, web))
    finally:
        await local.aclose()
        await web.aclose()
    return caught.value


@pytest.mark.parametrize(
    "named",
    ["http://[::1", "https://host\x7f.example/", "https://as.example/" + "x" * 70_000],
    ids=["unclosed-bracket", "control-character", "too-long"],
)
async def test_a_resource_metadata_url_that_cannot_be_parsed_is_auth_invalid(
    challenging_server: type[_Challenging], named: str
) -> None:
    challenging_server.challenge = f'Bearer resource_metadata="{named}"'
    url: str = challenging_server.url  # type: ignore[attr-defined]
    caught = await discovery_refusal(url)

    assert caught.code is ErrorCode.AUTH_INVALID
    assert "resource metadata" in caught.message


async def test_resource_metadata_naming_an_authorization_server_url_too_long_to_send_is_auth_invalid(
    challenging_server: type[_Challenging],
) -> None:
    url: str = challenging_server.url  # type: ignore[attr-defined]
    challenging_server.challenge = "Bearer"
    challenging_server.resource_metadata = json.dumps(
        {"resource": url, "authorization_servers": ["https://as.example/" + "x" * 70_000]}
    ).encode()
    caught = await discovery_refusal(url)

    assert caught.code is ErrorCode.AUTH_INVALID
