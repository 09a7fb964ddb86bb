"""An MCP server behind the MCP authorization flow that echoes the bearer token it received:
the token never reaches the agent's result, on the first call of a gateway as on later ones."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import mcp_types as types
import pytest
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.context import ServerRequestContext

import tests.auth.mcp_oauth_servers as servers
from aai_gateway.auth.credentials import CredentialStore
from aai_gateway.descriptor import AppDescriptor
from aai_gateway.executors import ToolResult
from aai_gateway.service import Caller, Gateway
from tests.auth.mcp_oauth_servers import McpAuthorizationServer, ProtectedMcpServer
from tests.auth.mcp_sign_in_support import mcp_app, sign_in
from tests.executors.mcp_support import mcp_gateway

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def _echo_token(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> Any:
    token = get_access_token()
    answer = {"received": token.token if token else None}
    return types.CallToolResult(content=[types.TextContent(type="text", text=json.dumps(answer))])


@pytest.fixture
def echoing_mcp(
    authorization: McpAuthorizationServer, monkeypatch: pytest.MonkeyPatch
) -> Iterator[ProtectedMcpServer]:
    monkeypatch.setattr(servers, "_call_tool", _echo_token)
    server = ProtectedMcpServer(authorization).start()
    yield server
    server.close()


@pytest.fixture
async def service(
    echoing_mcp: ProtectedMcpServer,
) -> AsyncIterator[tuple[Gateway, CredentialStore, AppDescriptor]]:
    app = mcp_app(echoing_mcp.url)
    async with mcp_gateway(app) as (gateway, store):
        yield gateway, store, app


async def test_a_server_echoing_the_bearer_token_never_shows_it_to_the_agent(
    service: tuple[Gateway, CredentialStore, AppDescriptor],
) -> None:
    gateway, store, app = service
    credential = await sign_in(app)
    store.save(app, credential)
    assert credential.tokens is not None
    token = credential.tokens.access_token

    for _ in range(2):
        result = await gateway.execute(app.id, "whoami", {}, caller=Caller("agent"))
        assert isinstance(result, ToolResult) and not result.is_error
        assert token not in repr(result.content), result.content
