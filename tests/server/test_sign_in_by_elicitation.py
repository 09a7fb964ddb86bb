"""Signing in during a call: an OAuth app the user has not signed in to, called through the gateway
by a client that supports URL elicitation, gets the sign-in link (the authorization server's,
never in a result the model reads); the user signs in in a real browser, the tokens go to a real
(private) OS keyring and the call completes, in both protocol generations. A client that cannot
open links gets AUTH_REQUIRED with the command, as before."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.context import ClientRequestContext

from tests.auth.oauth_server import OAuthTestServer
from tests.browser import press_allow
from tests.builders import trusting_config, write_json
from tests.keyring_session import PrivateKeyring

pytestmark = pytest.mark.anyio

APP_ID = "dev.test.signin"


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


def setup(
    keyring: PrivateKeyring, oauth_server: OAuthTestServer, tmp_path: Path
) -> tuple[dict[str, str], Path]:
    apps = tmp_path / "apps"
    write_json(
        apps / "signin.json",
        {
            "schemaVersion": "1.0",
            "version": "1.0.0",
            "platform": "web",
            "app": {
                "id": APP_ID,
                "name": {"en": "Sign-in Test"},
                "defaultLang": "en",
                "description": "OAuth",
            },
            "execution": {"type": "http", "baseUrl": oauth_server.url},
            "auth": {
                "type": "oauth2",
                "oauth2": {
                    "authorizationEndpoint": oauth_server.authorization_endpoint,
                    "tokenEndpoint": oauth_server.token_endpoint,
                    "scopes": ["read"],
                },
            },
            "tools": [
                {
                    "name": "me",
                    "description": "GET /api/me",
                    "parameters": {"type": "object", "properties": {}},
                    "execution": {"path": "/api/me", "method": "GET"},
                }
            ],
        },
    )
    env = keyring.child_env()
    for desktop in ("DISPLAY", "WAYLAND_DISPLAY"):
        env.pop(desktop, None)
    env["AAI_GATEWAY_CONFIG"] = str(trusting_config(tmp_path / "config.toml", [APP_ID]))
    return env, apps


@asynccontextmanager
async def gateway(env: dict[str, str], apps: Path, mode: str, **options: Any) -> AsyncIterator[Client]:
    server = StdioServerParameters(
        command=sys.executable,
        args=["-m", "aai_gateway", "serve", "--no-default-paths", "--path", str(apps)],
        env=env,
    )
    info = types.Implementation(name="sign-in-agent", version="1")
    async with Client(server, mode=mode, client_info=info, **options) as client:
        yield client


def user_signs_in(asked: list[types.ElicitRequestURLParams]) -> Any:
    """An elicitation callback: the user opens the link and presses Allow on the consent page."""

    async def elicitation(
        context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult | types.ErrorData:
        assert isinstance(params, types.ElicitRequestURLParams), "a sign-in is never a form"
        asked.append(params)
        await press_allow(params.url)
        return types.ElicitResult(action="accept")

    return elicitation


def text_of(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_client_that_opens_links_gets_the_sign_in_and_the_call_completes(
    keyring: PrivateKeyring, oauth_server: OAuthTestServer, tmp_path: Path, mode: str
) -> None:
    env, apps = setup(keyring, oauth_server, tmp_path)
    asked: list[types.ElicitRequestURLParams] = []

    async with gateway(env, apps, mode, elicitation_callback=user_signs_in(asked)) as client:
        result = await client.call_tool("aai_exec", {"app": APP_ID, "tool": "me", "args": {}})

    assert not result.is_error, text_of(result)
    assert json.loads(text_of(result))["user"] == "alice"
    [question] = asked
    assert question.url.startswith(f"{oauth_server.authorization_endpoint}?")
    assert "sign in" in question.message
    [registration] = oauth_server.registrations  # no client id stored: the gateway registered one
    assert registration["redirect_uris"] == [oauth_server.authorize_requests[0]["redirect_uri"]]
    assert oauth_server.grants == {"authorization_code": 1}
    assert oauth_server.authorization_endpoint not in text_of(result)


async def test_a_client_that_cannot_open_links_gets_auth_required_with_the_command(
    keyring: PrivateKeyring, oauth_server: OAuthTestServer, tmp_path: Path
) -> None:
    env, apps = setup(keyring, oauth_server, tmp_path)

    async with gateway(env, apps, "legacy") as client:
        result = await client.call_tool("aai_exec", {"app": APP_ID, "tool": "me", "args": {}})

    assert result.is_error
    error = json.loads(text_of(result))["error"]
    assert error["code"] == "AUTH_REQUIRED"
    assert error["data"]["command"].startswith("aai-gateway auth login file:")
    assert oauth_server.authorize_requests == []
