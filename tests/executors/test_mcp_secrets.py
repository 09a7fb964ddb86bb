"""Secrets of an `mcp` app: keyring secrets and variables of the gateway's environment reach the
server (in its environment, or in headers over Streamable HTTP), and never come back: not in
results, errors, stderr tails, nor in the server's command line."""

from __future__ import annotations

import hashlib
import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import anyio
import pytest

from aai_gateway.descriptor import AppDescriptor, app_reference
from aai_gateway.errors import AaiError, ErrorCode
from aai_gateway.executors import ToolResult
from aai_gateway.executors.mcp import McpExecutor
from aai_gateway.executors.redaction import SECRET_MARKER
from tests.executors.mcp_support import (
    ENVIRON,
    call,
    http_upstream,
    mcp_document,
    running_executor,
    write_app,
)

pytestmark = pytest.mark.anyio

SECRET = "sk-live-0123456789abcdef"
ENV_SECRET = "env-secret-9876543210"
HEADER_SECRET = "Bearer hdr-5ecret-7777777"
SECRETS = {"api-token": SECRET}
GATEWAY_ENVIRON = {**ENVIRON, "AAI_TEST_FROM_ENV": ENV_SECRET}
STDIO_ENV = {
    "API_TOKEN": {"secret": "api-token"},
    "FROM_ENV": {"env": "AAI_TEST_FROM_ENV"},
    "PLAIN": "literal value",
}


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
async def executor() -> AsyncIterator[McpExecutor]:
    async with running_executor(GATEWAY_ENVIRON) as executor:
        yield executor


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> AppDescriptor:
    return write_app(
        tmp_path_factory.mktemp("secrets"), mcp_document(app_id="dev.test.secrets", env=STDIO_ENV)
    )


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    with http_upstream() as url:
        yield url


async def text_of(executor: McpExecutor, app: AppDescriptor, tool: str, **arguments: object) -> str:
    result = await executor.execute(call(app, tool, dict(arguments), secrets=SECRETS))
    assert isinstance(result, ToolResult)
    text: str = result.content[0]["text"]
    return text


def digest(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()


def assert_secret_free(text: str) -> None:
    for secret in (SECRET, ENV_SECRET, HEADER_SECRET, "hdr-5ecret-7777777"):
        assert secret not in text


async def test_the_server_gets_the_keyring_secret_the_variable_and_the_literal_in_its_environment(
    executor: McpExecutor, app: AppDescriptor
) -> None:
    assert await text_of(executor, app, "env_digest", name="API_TOKEN") == digest(SECRET)
    assert await text_of(executor, app, "env_digest", name="FROM_ENV") == digest(ENV_SECRET)
    assert await text_of(executor, app, "env", name="PLAIN") == "literal value"


async def test_a_secret_the_server_echoes_is_removed_from_the_result(
    executor: McpExecutor, app: AppDescriptor
) -> None:
    assert await text_of(executor, app, "env", name="API_TOKEN") == SECRET_MARKER
    assert await text_of(executor, app, "env", name="FROM_ENV") == SECRET_MARKER


async def test_no_secret_is_on_the_servers_command_line(executor: McpExecutor, app: AppDescriptor) -> None:
    pid = await text_of(executor, app, "pid")

    command_line = (await anyio.Path(f"/proc/{pid}/cmdline").read_bytes()).decode()

    assert_secret_free(command_line)


async def test_secrets_in_the_servers_error_and_in_its_stderr_are_removed(
    executor: McpExecutor, app: AppDescriptor
) -> None:
    errors: list[AaiError] = []
    for tool in ("protocol_error", "crash"):
        with pytest.raises(AaiError) as caught:
            await text_of(executor, app, tool, leak="API_TOKEN")
        errors.append(caught.value)

    for error in errors:
        shown = error.message + json.dumps(error.to_payload())
        assert_secret_free(shown)
        assert SECRET_MARKER in error.message
    assert "out of cheese" in errors[1].message and SECRET_MARKER in errors[1].data["stderr_tail"]


async def test_a_secret_where_the_server_s_words_are_cut_is_removed_before_the_cut(
    executor: McpExecutor, app: AppDescriptor, caplog: pytest.LogCaptureFixture
) -> None:
    """Each bound (2,000 characters of an error message and of stderr, 200 of a line that is not
    MCP) once fell inside the secret, and the half it kept was no longer the secret."""
    head, tail = SECRET[:12], SECRET[-12:]
    with pytest.raises(AaiError) as refused:  # the message is cut 12 characters into the secret
        await text_of(executor, app, "protocol_error", leak="API_TOKEN", message_size=1963)
    with pytest.raises(AaiError) as crashed:  # the stderr tail begins 12 characters before its end
        await text_of(executor, app, "crash", leak="API_TOKEN", pad=1987)
    with anyio.move_on_after(2):  # the line shown is cut 12 characters into the secret
        await text_of(executor, app, "garbage", leak="API_TOKEN", pad=188)

    for error in (refused.value, crashed.value):
        shown = json.dumps(error.to_payload())
        assert head not in shown and tail not in shown
    assert head not in caplog.text


async def test_a_secret_that_is_not_stored_is_auth_required_with_the_command_that_stores_it(
    executor: McpExecutor, app: AppDescriptor
) -> None:
    with pytest.raises(AaiError) as caught:
        await executor.execute(call(app, "pid", secrets={}))

    error = caught.value
    command = f"aai-gateway auth set {app_reference(app.binding, app.id)} --secret api-token"
    assert error.code is ErrorCode.AUTH_REQUIRED
    assert error.data["command"] == command and error.data["secrets"] == ["api-token"]
    assert f"`{command}`" in error.message


async def test_a_variable_the_gateways_environment_lacks_is_unavailable_naming_the_variable(
    tmp_path: Path,
) -> None:
    app = write_app(tmp_path, mcp_document(app_id="dev.test.novar", env={"X": {"env": "AAI_TEST_NOT_SET"}}))
    executor = McpExecutor(environ=ENVIRON)

    with pytest.raises(AaiError) as caught:
        await executor.execute(call(app, "pid"))

    assert caught.value.code is ErrorCode.SERVICE_UNAVAILABLE
    assert "needs the variable AAI_TEST_NOT_SET of the gateway's own environment" in caught.value.message
    assert caught.value.data["variable"] == "AAI_TEST_NOT_SET"


async def test_headers_carry_the_secret_and_the_variable_over_streamable_http(
    executor: McpExecutor, http_url: str, tmp_path: Path
) -> None:
    headers = {
        "Authorization": {"secret": "authorization"},
        "X-From-Env": {"env": "AAI_TEST_FROM_ENV"},
        "X-Plain": "p",
    }
    app = write_app(tmp_path, mcp_document(app_id="dev.test.httpsecrets", url=http_url, headers=headers))

    async def text(tool: str, **arguments: object) -> str:
        result = await executor.execute(
            call(app, tool, dict(arguments), secrets={"authorization": HEADER_SECRET})
        )
        assert isinstance(result, ToolResult)
        shown: str = result.content[0]["text"]
        return shown

    assert await text("header_digest", name="authorization") == digest(HEADER_SECRET)
    assert await text("header_digest", name="x-from-env") == digest(ENV_SECRET)
    assert await text("header", name="x-plain") == "p"
    assert await text("header", name="authorization") == SECRET_MARKER
    assert await text("header", name="cookie") == "<unset>"
    assert (
        await executor.execute(
            call(app, "echo", {"text": "over http"}, secrets={"authorization": HEADER_SECRET})
        )
    ).wire()["structuredContent"]["text"] == "over http"


@pytest.mark.parametrize("value", ["Bearer a\r\nX-Evil: 1", "token-with-\n-newline", "nul\x00-in-the-middle"])
async def test_a_secret_a_header_cannot_carry_is_refused_without_showing_it(
    executor: McpExecutor, http_url: str, tmp_path: Path, value: str
) -> None:
    app = write_app(
        tmp_path,
        mcp_document(
            app_id="dev.test.badheader", url=http_url, headers={"Authorization": {"secret": "authorization"}}
        ),
    )

    with pytest.raises(AaiError) as caught:
        await executor.execute(call(app, "pid", secrets={"authorization": value}))

    assert caught.value.code is ErrorCode.INVALID_REQUEST
    assert caught.value.message.startswith(
        "dev.test.badheader pid: the value of header 'Authorization' (the secret authorization) holds a "
        "line break or NUL"
    )
    assert value not in json.dumps(caught.value.to_payload())
