"""The authorization-protected MCP server and its own authorization server
(tests/auth/mcp_oauth_servers.py) as fixtures, for every test that signs in to one:
`authorization`, the authorization server, and `mcp`, the Streamable HTTP MCP server it protects,
both on 127.0.0.1 for one test. The root conftest names this module in `pytest_plugins`, so a test
anywhere under tests/ asks for them by name; the servers' module (the SDK's server pieces, slow to
import) is imported only when a test does."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from tests.auth.mcp_oauth_servers import McpAuthorizationServer, ProtectedMcpServer


@pytest.fixture
def authorization() -> Iterator[McpAuthorizationServer]:
    from tests.auth.mcp_oauth_servers import McpAuthorizationServer

    server = McpAuthorizationServer().start()
    yield server
    server.close()


@pytest.fixture
def mcp(authorization: McpAuthorizationServer) -> Iterator[ProtectedMcpServer]:
    from tests.auth.mcp_oauth_servers import ProtectedMcpServer

    server = ProtectedMcpServer(authorization).start()
    yield server
    server.close()
