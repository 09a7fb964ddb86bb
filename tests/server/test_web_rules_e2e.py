"""Token endpoints through the real command paths: the gateway's token client and
`aai-gateway auth login` trust `AAI_GATEWAY_CA_FILE` like web discovery and the HTTP executor do
(an authorization server signed by a test CA works), and a web app's token exchange runs under the
web network rules (here with the private-address permission, since the test server is on
127.0.0.1)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.auth.oauth_server import (
    APP_ID,
    APP_SECRET,
    PRE_CLIENT_ID,
    PRE_CLIENT_SECRET,
    OAuthTestServer,
    approve_over_http,
)
from tests.builders import trusting_config, write_json
from tests.discovery.web_support import LocalCa
from tests.keyring_session import PrivateKeyring
from tests.server.test_web_and_auth import cli, gateway, gateway_env

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def ca(tmp_path_factory: pytest.TempPathFactory) -> LocalCa:
    return LocalCa.create(tmp_path_factory.mktemp("ca"))


@pytest.fixture
def https_oauth(ca: LocalCa) -> Iterator[OAuthTestServer]:
    server = OAuthTestServer().start(ssl_context=ca.server_context)
    yield server
    server.close()


def descriptor(app_id: str, origin: str, auth: dict[str, Any], path: str) -> dict[str, Any]:
    return {
        "schemaVersion": "1.0",
        "version": "1.0.0",
        "platform": "web",
        "app": {"id": app_id, "name": {"en": app_id}, "defaultLang": "en", "description": "Token tests"},
        "execution": {"type": "http", "baseUrl": origin},
        "auth": auth,
        "tools": [
            {
                "name": "me",
                "description": f"GET {path}",
                "parameters": {"type": "object", "properties": {}},
                "execution": {"path": path, "method": "GET"},
            }
        ],
    }


async def test_a_discovered_web_apps_app_token_is_exchanged_at_an_https_endpoint_signed_by_the_ca_file(
    https_oauth: OAuthTestServer, keyring: PrivateKeyring, ca: LocalCa, tmp_path: Path
) -> None:
    origin = https_oauth.url
    auth = {
        "type": "appCredential",
        "appCredential": {"tokenEndpoint": f"{origin}/auth/token", "tokenType": "tenantAccessToken"},
    }
    https_oauth.well_known = descriptor("dev.test.feishu", origin, auth, "/app/api/me")
    env = gateway_env(keyring, ca, tmp_path / "cache", web_app_port=int(origin.rsplit(":", 1)[1]))
    async with gateway(env, "auto") as client:
        guide = await client.call_tool("web_discover", {"url": origin})
        assert not guide.is_error, guide
        code, _, err = await cli(
            env, "auth", "set", origin, "--no-default-paths", stdin=f"{APP_ID}\n{APP_SECRET}\n"
        )
        assert code == 0, err
        result = await client.call_tool("aai_exec", {"app": origin, "tool": "me", "args": {}})

    assert not result.is_error, result
    assert result.structured_content == {"app": APP_ID}
    assert https_oauth.app_exchanges == 1


async def test_auth_login_exchanges_the_code_at_an_https_token_endpoint_signed_by_the_ca_file(
    https_oauth: OAuthTestServer, keyring: PrivateKeyring, ca: LocalCa, tmp_path: Path
) -> None:
    origin = https_oauth.url
    auth = {
        "type": "oauth2",
        "oauth2": {
            "authorizationEndpoint": f"{origin}/authorize",
            "tokenEndpoint": f"{origin}/token",
            "scopes": ["read"],
            "pkce": {"method": "S256"},
        },
    }
    apps = tmp_path / "apps"
    write_json(apps / "oauth.json", descriptor("dev.test.oauth", origin, auth, "/api/me"))
    env = keyring.child_env()
    env["AAI_GATEWAY_CA_FILE"] = ca.ca_file
    env["AAI_GATEWAY_CONFIG"] = str(trusting_config(tmp_path / "config.toml", ["dev.test.oauth"]))
    command = [
        sys.executable, "-m", "aai_gateway", "auth", "login", "dev.test.oauth", "--client-id", PRE_CLIENT_ID,
        "--client-secret-stdin", "--no-browser", "--no-default-paths", "--path", str(apps),
    ]  # fmt: skip
    async with await anyio.open_process(command, env=env) as process:
        assert process.stdin is not None and process.stderr is not None
        await process.stdin.send(PRE_CLIENT_SECRET.encode() + b"\n")
        printed = b""
        with anyio.fail_after(30):
            while b"/authorize?" not in printed or not printed.endswith(b"\n"):
                printed += await process.stderr.receive()
        url = next(line.strip() for line in printed.decode().splitlines() if "/authorize?" in line)
        answer = await approve_over_http(url, ca_file=ca.ca_file)  # the user presses Allow
        with anyio.fail_after(30):
            status = await process.wait()
        rest = b"".join([chunk async for chunk in process.stderr])

    assert answer.status == 200, answer.text
    assert status == 0, rest.decode()
    assert https_oauth.grants["authorization_code"] == 1
    _, listed, _ = await cli(env, "auth", "status", "--json", "--no-default-paths", "--path", str(apps))
    assert json.loads(listed)[0]["state"].startswith("signed in")
