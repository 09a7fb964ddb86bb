"""Through the MCP client: an app that echoes the request (on success and in a 401) never hands the
agent the token the gateway added, neither in the result text, nor in `structuredContent`, nor
in the error's message and data."""

from __future__ import annotations

import base64
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote, quote_plus

import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters

from aai_gateway.executors.redaction import SECRET_MARKER
from tests.builders import trusting_config, write_json
from tests.executors.echo_server import EchoServer

pytestmark = pytest.mark.anyio

APP = "dev.test.echoing"
TOKEN = "tok/En+with=Specials_0123456789"


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def echo() -> Iterator[EchoServer]:
    server = EchoServer().start()
    yield server
    server.stop()


def descriptor(base_url: str) -> dict[str, object]:
    """Dialect B: a bearer token from the environment (`env_var`), two echoing operations."""

    def tool(name: str, endpoint: str) -> dict[str, object]:
        return {
            "name": name,
            "description": name,
            "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
            "endpoint": endpoint,
            "method": "GET",
        }

    return {
        "schema_version": "1.0",
        "appId": APP,
        "name": "Echoing",
        "description": "An API that echoes requests",
        "version": "1.0",
        "platforms": {
            "web": {
                "automation": "restapi",
                "base_url": base_url,
                "auth": {"type": "bearer", "env_var": "ECHO_TOKEN", "token_placement": "header"},
                "tools": [tool("echo", "/status/200"), tool("refused", "/status/401")],
            }
        },
    }


def leaked(text: str) -> list[str]:
    forms = [
        TOKEN,
        quote(TOKEN, safe=""),
        quote_plus(TOKEN),
        base64.b64encode(TOKEN.encode()).decode().rstrip("="),
    ]
    return [form for form in forms if form in text]


async def test_echoed_tokens_are_removed_from_results_structured_content_and_errors(
    echo: EchoServer, tmp_path: Path
) -> None:
    apps = tmp_path / "apps"
    write_json(apps / "echoing.json", descriptor(echo.url))
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    env["ECHO_TOKEN"] = TOKEN
    env["AAI_GATEWAY_CONFIG"] = str(trusting_config(tmp_path / "config.toml", [APP]))
    server = StdioServerParameters(
        command=sys.executable,
        args=["-m", "aai_gateway", "serve", "--no-default-paths", "--path", str(apps)],
        env=env,
    )
    async with Client(server, client_info=types.Implementation(name="echo-test", version="1")) as client:
        result = await client.call_tool("aai_exec", {"app": APP, "tool": "echo", "args": {"q": "x"}})
        refused = await client.call_tool("aai_exec", {"app": APP, "tool": "refused", "args": {}})

    assert echo.received and all("/status/" in path for path in echo.received)
    assert not result.is_error
    text = result.content[0].text if isinstance(result.content[0], types.TextContent) else ""
    structured = json.dumps(result.structured_content)
    assert result.structured_content is not None
    assert result.structured_content["headers"]["Authorization"] == f"Bearer {SECRET_MARKER}"
    assert leaked(text) == [] and leaked(structured) == []
    assert refused.is_error
    error_text = refused.content[0].text if isinstance(refused.content[0], types.TextContent) else ""
    error = json.loads(error_text)["error"]
    assert error["code"] == "AUTH_REQUIRED"
    assert SECRET_MARKER in error["data"]["body"]
    assert leaked(error_text) == []
