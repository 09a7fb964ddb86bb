"""`Gateway.execute` with an `mcp` app: the secrets its server needs come from the credential
bound to the app, its questions go to the caller's asker, and its own result is passed on (and
still checked) as it is."""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from aai_gateway.auth.credentials import Credential, CredentialStore
from aai_gateway.descriptor import ExecutionType
from aai_gateway.errors import AaiError, ErrorCode
from aai_gateway.executors import ToolResult, UserAnswer
from aai_gateway.executors.mcp import McpExecutor
from aai_gateway.service import Caller, Gateway
from tests.executors.mcp_support import User, mcp_document, mcp_gateway, write_app

pytestmark = pytest.mark.anyio

APP = "dev.test.gatewaymcp"
TOKEN = "ghp_gateway0123456789"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def gateway(tmp_path: Path) -> AsyncIterator[tuple[Gateway, CredentialStore]]:
    app = write_app(
        tmp_path, mcp_document(app_id=APP, name="Keyed", env={"GITHUB_TOKEN": {"secret": "github-token"}})
    )
    async with mcp_gateway(app) as (gateway, store):
        yield gateway, store


async def test_the_server_is_started_with_the_secret_stored_for_the_app(
    gateway: tuple[Gateway, CredentialStore],
) -> None:
    service, store = gateway
    app = service.resolve(APP)
    store.save(
        app,
        Credential(kind="secrets", app_id=app.id, binding=str(app.binding), secrets={"github-token": TOKEN}),
    )

    result = await service.execute(APP, "env_digest", {"name": "GITHUB_TOKEN"}, caller=Caller("agent"))

    assert isinstance(result, ToolResult)
    assert result.content == [{"type": "text", "text": hashlib.sha256(TOKEN.encode()).hexdigest()}]


async def test_without_the_secret_the_call_is_auth_required_and_no_server_starts(
    gateway: tuple[Gateway, CredentialStore],
) -> None:
    service, _ = gateway

    with pytest.raises(AaiError) as caught:
        await service.execute(APP, "pid", {}, caller=Caller("agent"))

    assert caught.value.code is ErrorCode.AUTH_REQUIRED
    assert caught.value.data["command"].endswith(" --secret github-token")
    executor = service.registry.registered(ExecutionType.MCP)
    assert isinstance(executor, McpExecutor) and not executor._running


async def test_a_question_of_the_server_goes_to_the_callers_asker(
    gateway: tuple[Gateway, CredentialStore],
) -> None:
    service, store = gateway
    app = service.resolve(APP)
    store.save(
        app,
        Credential(kind="secrets", app_id=app.id, binding=str(app.binding), secrets={"github-token": TOKEN}),
    )
    user = User(UserAnswer("accept", {"color": "red"}))

    result = await service.execute(APP, "ask", {}, caller=Caller("agent"), ask_user=user)

    assert isinstance(result, ToolResult)
    assert result.structured_content == {"action": "accept", "content": {"color": "red"}}
    assert [q.app_name for q in user.questions] == ["Keyed"]
