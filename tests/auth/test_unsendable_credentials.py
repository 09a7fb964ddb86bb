"""A credential that an HTTP header cannot carry (a control character other than tab, DEL) is
refused before anything is sent: AUTH_INVALID naming the header, never the value. h11 refuses
VT and FF with a message that quotes the whole header, credential included, and lets ESC and DEL
through to the server."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator

import pytest

from aai_gateway.auth.credentials import CredentialStore
from aai_gateway.auth.provider import AuthProvider
from aai_gateway.auth.secrets import MemorySecretStore
from aai_gateway.errors import AaiError, ErrorCode
from aai_gateway.executors import Invocation
from aai_gateway.executors.http import HttpExecutor
from tests.auth.oauth_server import b_app
from tests.executors.echo_server import EchoServer

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def echo() -> Iterator[EchoServer]:
    server = EchoServer().start()
    yield server
    server.stop()


@pytest.fixture
async def executor() -> AsyncIterator[HttpExecutor]:
    executor = HttpExecutor()
    yield executor
    await executor.aclose()


@pytest.mark.parametrize("control", ["\x0b", "\x0c", "\x1b", "\x7f"])
@pytest.mark.parametrize("source", ["environment", "store"])
async def test_a_bearer_token_with_a_control_character_is_refused_naming_the_header_not_the_token(
    echo: EchoServer, executor: HttpExecutor, control: str, source: str
) -> None:
    token = f"SuperSecretToken{control}0123456789"
    app = b_app(echo.url, {"type": "bearer", "env_var": "TOK"}, {"me": "/status/200"})
    store = CredentialStore(MemorySecretStore())
    if source == "store":
        store.save(app, store.new(app, "apiKey").model_copy(update={"api_key": token}))
    provider = AuthProvider(store, environ={"TOK": token} if source == "environment" else {})
    tool = app.tool("me")
    assert tool is not None
    received = len(echo.received)

    with pytest.raises(AaiError) as caught:
        auth = await provider.http_auth(app, tool)
        await executor.execute(Invocation(app, tool, {}, request_id="t", http_auth=auth))
    await provider.aclose()

    assert caught.value.code == ErrorCode.AUTH_INVALID
    assert "'Authorization'" in caught.value.message
    assert "control character" in caught.value.message
    assert "SuperSecretToken" not in caught.value.message + json.dumps(caught.value.data)
    assert len(echo.received) == received
