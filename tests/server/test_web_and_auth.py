"""Web apps end to end through the MCP client: web_discover over HTTPS, AUTH_REQUIRED with the fix,
credentials stored with the CLI or on the one-time page in a real browser (URL elicitation), the
OS keyring (a private gnome-keyring), and the descriptor cache across a restart."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.context import ClientRequestContext

from tests.browser import browser_page
from tests.builders import trusting_config
from tests.discovery.web_support import LocalCa
from tests.keyring_session import PrivateKeyring
from tests.server.web_app import API_KEY, APP_ID, WebAppServer

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def ca(tmp_path_factory: pytest.TempPathFactory) -> LocalCa:
    return LocalCa.create(tmp_path_factory.mktemp("ca"))


@pytest.fixture
def web_app(ca: LocalCa) -> Iterator[WebAppServer]:
    server = WebAppServer(ca).start()
    yield server
    server.stop()


def gateway_env(
    keyring: PrivateKeyring, ca: LocalCa, cache: Path, *, allow_private: bool = True, web_app_port: int = 0
) -> dict[str, str]:
    """The gateway's environment: a private keyring, the test CA, a fresh cache, and a config that
    auto-allows the web app at `web_app_port` (these tests are about credentials, not consent)."""
    env = keyring.child_env()
    for desktop in ("DISPLAY", "WAYLAND_DISPLAY"):  # no consent dialogs popping up on a developer's screen
        env.pop(desktop, None)
    origin = f"https://127.0.0.1:{web_app_port}" if web_app_port else None
    config = trusting_config(cache.parent / "config.toml", [origin] if origin else [])
    env.update(
        {
            "AAI_GATEWAY_CA_FILE": ca.ca_file,
            "AAI_GATEWAY_CACHE_DIR": str(cache),
            "AAI_GATEWAY_CONFIG": str(config),
        }
    )
    if allow_private:
        env["AAI_GATEWAY_ALLOW_PRIVATE_WEB"] = "1"
    else:
        env.pop("AAI_GATEWAY_ALLOW_PRIVATE_WEB", None)
    return env


@asynccontextmanager
async def gateway(env: dict[str, str], mode: str, *extra: str, **options: Any) -> AsyncIterator[Client]:
    server = StdioServerParameters(
        command=sys.executable, args=["-m", "aai_gateway", "serve", "--no-default-paths", *extra], env=env
    )
    info = types.Implementation(name="web-test-agent", version="1.0")
    async with Client(server, mode=mode, client_info=info, **options) as client:
        yield client


def error_of(result: types.CallToolResult) -> dict[str, Any]:
    assert result.is_error, result
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    payload: dict[str, Any] = json.loads(block.text)["error"]
    return payload


async def cli(env: dict[str, str], *argv: str, stdin: str | None = None) -> tuple[int, str, str]:
    """`aai-gateway ARGV` as the user runs it: exit status, stdout, stderr."""
    done = await anyio.run_process(
        [sys.executable, "-m", "aai_gateway", *argv],
        input=stdin.encode() if stdin is not None else None,
        env=env,
        check=False,
    )
    return done.returncode, done.stdout.decode(), done.stderr.decode()


async def auth_set(env: dict[str, str], reference: str, secret: str) -> tuple[int, str, str]:
    return await cli(env, "auth", "set", reference, "--no-default-paths", stdin=secret + "\n")


def user_saves_the_key_on_the_page(asked: list[str]) -> Any:
    """An elicitation callback: the user opens the page in their browser, types the right key and
    saves it (the URL asked is appended to `asked`)."""

    async def elicitation(
        context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult | types.ErrorData:
        assert isinstance(params, types.ElicitRequestURLParams), "secrets must never be asked in a form"
        asked.append(params.url)
        async with browser_page() as page:
            await page.goto(params.url)
            await page.fill("input[type=password]", API_KEY)
            await page.click("button[type=submit]")
            await page.wait_for_selector("text=Saved")
        return types.ElicitResult(action="accept")

    return elicitation


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_web_app_asks_for_its_key_with_the_command_and_runs_once_the_user_stored_it(
    web_app: WebAppServer, keyring: PrivateKeyring, ca: LocalCa, tmp_path: Path, mode: str
) -> None:
    env = gateway_env(keyring, ca, tmp_path / "cache", web_app_port=web_app.server_address[1])
    log = tmp_path / "gateway.log"
    async with gateway(env, mode, "--log-level", "DEBUG", "--log-file", str(log)) as client:
        guide = await client.call_tool("web_discover", {"url": web_app.origin})
        assert not guide.is_error, guide
        call = {"app": web_app.origin, "tool": "whoami", "args": {}}
        error = error_of(await client.call_tool("aai_exec", call))
        assert error["code"] == "AUTH_REQUIRED"
        assert error["data"]["command"] == f"aai-gateway auth set {web_app.origin}"  # the binding
        assert error["data"]["obtainUrl"] == f"{web_app.origin}/settings/keys"
        assert error["data"]["auth_type"] == "apiKey"
        assert "auth set" in error["message"]

        code, out, err = await auth_set(env, APP_ID, API_KEY)
        assert code == 0, err
        assert f"bound to the web origin {web_app.origin}" in out
        result = await client.call_tool("aai_exec", call)
    assert result.structured_content == {"user": "alice"}
    assert ("/api/whoami", API_KEY) in web_app.requests
    assert API_KEY not in out + err
    assert "exec caller='web-test-agent 1.0'" in log.read_text()
    assert API_KEY not in log.read_text()


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_client_that_opens_urls_gets_a_one_time_page_and_the_call_completes_after_the_user_submits(
    web_app: WebAppServer, keyring: PrivateKeyring, ca: LocalCa, tmp_path: Path, mode: str
) -> None:
    asked: list[str] = []

    elicitation = user_saves_the_key_on_the_page(asked)
    env = gateway_env(keyring, ca, tmp_path / "cache", web_app_port=web_app.server_address[1])
    async with gateway(env, mode, elicitation_callback=elicitation) as client:
        await client.call_tool("web_discover", {"url": web_app.origin})
        result = await client.call_tool("aai_exec", {"app": APP_ID, "tool": "whoami", "args": {}})
    assert result.structured_content == {"user": "alice"}, result
    assert len(asked) == 1 and asked[0].startswith("http://127.0.0.1:")


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_stored_key_the_app_refuses_with_401_leads_to_the_same_one_time_page_and_the_call_completes(
    web_app: WebAppServer, keyring: PrivateKeyring, ca: LocalCa, tmp_path: Path, mode: str
) -> None:
    """Not a missing credential (the gateway's own AUTH_REQUIRED) but an upstream HTTP 401: the
    user is asked the same way, and the call runs again with the key they typed."""
    asked: list[str] = []

    elicitation = user_saves_the_key_on_the_page(asked)
    env = gateway_env(keyring, ca, tmp_path / "cache", web_app_port=web_app.server_address[1])
    async with gateway(env, mode, elicitation_callback=elicitation) as client:
        await client.call_tool("web_discover", {"url": web_app.origin})
        code, _, err = await auth_set(env, web_app.origin, "key-revoked-long-ago")
        assert code == 0, err
        result = await client.call_tool("aai_exec", {"app": APP_ID, "tool": "whoami", "args": {}})
    assert result.structured_content == {"user": "alice"}, result
    assert len(asked) == 1 and asked[0].startswith("http://127.0.0.1:")
    assert [key for path, key in web_app.requests if path == "/api/whoami"] == [
        "key-revoked-long-ago",
        API_KEY,
    ]


async def test_a_discovered_web_app_is_usable_after_a_restart_from_the_cache(
    web_app: WebAppServer, keyring: PrivateKeyring, ca: LocalCa, tmp_path: Path
) -> None:
    env = gateway_env(keyring, ca, tmp_path / "cache", web_app_port=web_app.server_address[1])
    async with gateway(env, "auto") as client:
        await client.call_tool("web_discover", {"url": web_app.origin})
    assert (await auth_set(env, web_app.origin, API_KEY))[0] == 0
    web_app.serve_descriptor = False  # the well-known file is gone: only the cache knows the app
    async with gateway(env, "auto") as client:
        host_and_port = web_app.origin.removeprefix("https://")
        result = await client.call_tool("aai_exec", {"app": host_and_port, "tool": "whoami", "args": {}})
    assert result.structured_content == {"user": "alice"}, result
    _, listed, _ = await cli(env, "cache", "list", "--json")
    assert [entry["origin"] for entry in json.loads(listed)["web"]] == [web_app.origin]


async def test_web_discover_refuses_a_loopback_address_unless_the_user_allows_private_addresses(
    web_app: WebAppServer, keyring: PrivateKeyring, ca: LocalCa, tmp_path: Path
) -> None:
    env = gateway_env(
        keyring, ca, tmp_path / "cache", allow_private=False, web_app_port=web_app.server_address[1]
    )
    async with gateway(env, "auto") as client:
        error = error_of(await client.call_tool("web_discover", {"url": web_app.origin}))
    assert error["code"] == "INVALID_REQUEST"
    assert "AAI_GATEWAY_ALLOW_PRIVATE_WEB" in error["message"]
    assert web_app.requests == []


async def test_auth_status_and_logout_show_and_forget_the_stored_key(
    web_app: WebAppServer, keyring: PrivateKeyring, ca: LocalCa, tmp_path: Path
) -> None:
    env = gateway_env(keyring, ca, tmp_path / "cache", web_app_port=web_app.server_address[1])
    async with gateway(env, "auto") as client:
        await client.call_tool("web_discover", {"url": web_app.origin})
    assert (await auth_set(env, APP_ID, API_KEY))[0] == 0
    [status] = json.loads((await cli(env, "auth", "status", "--json", "--no-default-paths"))[1])
    assert status == {"app": APP_ID, "auth_type": "apiKey", "source": web_app.origin, "state": "stored"}
    assert "Removed stored credentials" in (await cli(env, "auth", "logout", APP_ID, "--no-default-paths"))[1]
    assert (
        json.loads((await cli(env, "auth", "status", "--json", "--no-default-paths"))[1])[0]["state"]
        == "not set"
    )
