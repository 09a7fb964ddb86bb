"""`Gateway.execute` with an MCP server behind the MCP authorization flow, through the real mcp
executor: without a sign-in the call is AUTH_REQUIRED naming `aai-gateway auth login`; once signed
in, the server's tools are read and run with the stored token (a real protected server and its
own authorization server, tests/auth/mcp_oauth_servers.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from aai_gateway.auth.credentials import CredentialStore
from aai_gateway.descriptor import AppDescriptor
from aai_gateway.errors import AaiError, ErrorCode
from aai_gateway.executors import ToolResult
from aai_gateway.service import Caller, Gateway
from tests.auth.mcp_oauth_servers import ProtectedMcpServer
from tests.auth.mcp_sign_in_support import APP_FILE, mcp_app, sign_in
from tests.executors.mcp_support import mcp_gateway

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def service(mcp: ProtectedMcpServer) -> AsyncIterator[tuple[Gateway, CredentialStore, AppDescriptor]]:
    app = mcp_app(mcp.url)
    async with mcp_gateway(app) as (gateway, store):
        yield gateway, store, app


async def test_without_a_sign_in_a_call_is_auth_required_naming_auth_login(
    service: tuple[Gateway, CredentialStore, AppDescriptor], mcp: ProtectedMcpServer
) -> None:
    gateway, _, app = service
    with pytest.raises(AaiError) as caught:
        await gateway.execute(app.id, "whoami", {}, caller=Caller("agent"))
    assert caught.value.code is ErrorCode.AUTH_REQUIRED
    assert caught.value.data["command"] == f"aai-gateway auth login file:{APP_FILE}"
    assert mcp.bearer_requests == 0


async def test_once_signed_in_the_servers_tools_are_read_and_run_with_the_stored_token(
    service: tuple[Gateway, CredentialStore, AppDescriptor], mcp: ProtectedMcpServer
) -> None:
    gateway, store, app = service
    credential = await sign_in(app)
    store.save(app, credential)
    result = await gateway.execute(app.id, "whoami", {}, caller=Caller("agent"))
    assert isinstance(result, ToolResult) and not result.is_error
    assert mcp.bearer_requests > 0
    tokens = credential.tokens
    assert tokens is not None
    assert tokens.access_token not in repr(result.content)
