"""Every auth type end to end: credentials stored with the CLI (`auth login` driven in a real
browser, `auth set` from stdin) into a private OS keyring, then used by the gateway for
`aai_exec` through the MCP client, including token refresh."""

from __future__ import annotations

import json
import re
import sys
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import anyio
import httpx
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.context import ClientRequestContext

from aai_gateway.executors.redaction import SECRET_MARKER
from tests.auth.oauth_server import (
    APP_ID,
    APP_SECRET,
    PRE_CLIENT_ID,
    PRE_CLIENT_SECRET,
    OAuthTestServer,
    ThreadedWsgiServer,
    echo_app,
)
from tests.browser import auth_login_in_browser
from tests.builders import trusting_config, write_json
from tests.http_handlers import QuietHandler
from tests.keyring_session import PrivateKeyring

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


def web_app(app_id: str, base_url: str, auth: dict[str, Any], path: str) -> dict[str, Any]:
    return {
        "schemaVersion": "1.0",
        "version": "1.0.0",
        "platform": "web",
        "app": {"id": app_id, "name": {"en": app_id}, "defaultLang": "en", "description": "Auth test app"},
        "execution": {"type": "http", "baseUrl": base_url},
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


def trusted_env(keyring: PrivateKeyring, apps: Path) -> dict[str, str]:
    """A private keyring, and a config that auto-allows the test apps (these tests are about auth)."""
    env = keyring.child_env()
    for desktop in ("DISPLAY", "WAYLAND_DISPLAY"):
        env.pop(desktop, None)
    config = trusting_config(
        apps.parent / "config.toml", ["dev.test.oauth", "dev.test.appcred", "dev.test.cookies"]
    )
    env["AAI_GATEWAY_CONFIG"] = str(config)
    return env


async def cli(env: dict[str, str], apps: Path, *argv: str, stdin: str = "") -> tuple[int, str, str]:
    done = await anyio.run_process(
        [sys.executable, "-m", "aai_gateway", *argv, "--no-default-paths", "--path", str(apps)],
        input=stdin.encode(),
        env=env,
        check=False,
    )
    return done.returncode, done.stdout.decode(), done.stderr.decode()


@asynccontextmanager
async def gateway(env: dict[str, str], apps: Path) -> AsyncIterator[Client]:
    server = StdioServerParameters(
        command=sys.executable,
        args=["-m", "aai_gateway", "serve", "--no-default-paths", "--path", str(apps)],
        env=env,
    )
    async with Client(server, client_info=types.Implementation(name="auth-e2e", version="1")) as client:
        yield client


async def me(client: Client, app_id: str) -> Any:
    result = await client.call_tool("aai_exec", {"app": app_id, "tool": "me", "args": {}})
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    assert not result.is_error, block.text
    return json.loads(block.text)


async def sign_in_in_browser(env: dict[str, str], apps: Path, app_id: str) -> None:
    """`aai-gateway auth login` prints the sign-in URL; the user opens it and presses Allow."""
    command = [
        sys.executable, "-m", "aai_gateway", "auth", "login", app_id, "--client-id", PRE_CLIENT_ID,
        "--client-secret-stdin", "--no-browser", "--no-default-paths", "--path", str(apps),
    ]  # fmt: skip
    await auth_login_in_browser(command, env, stdin=PRE_CLIENT_SECRET.encode() + b"\n")


async def test_oauth_signed_in_with_auth_login_runs_through_mcp_and_refreshes_before_expiry_and_after_a_401(
    keyring: PrivateKeyring, oauth_server: OAuthTestServer, tmp_path: Path
) -> None:
    auth = {
        "type": "oauth2",
        "oauth2": {
            "authorizationEndpoint": oauth_server.authorization_endpoint,
            "tokenEndpoint": oauth_server.token_endpoint,
            "scopes": ["read"],
            "pkce": {"method": "S256"},
        },
    }
    apps = tmp_path / "apps"
    write_json(apps / "oauth.json", web_app("dev.test.oauth", oauth_server.url, auth, "/api/me"))
    env = trusted_env(keyring, apps)
    oauth_server.access_token_lifetime = 30  # inside the gateway's 60 s refresh margin
    await sign_in_in_browser(env, apps, "dev.test.oauth")
    _, status, _ = await cli(env, apps, "auth", "status", "--json")
    assert json.loads(status)[0]["state"].startswith("signed in")

    oauth_server.access_token_lifetime = 3600  # tokens issued from now on are long-lived
    async with gateway(env, apps) as client:
        assert (await me(client, "dev.test.oauth"))["user"] == "alice"
        assert oauth_server.grants["refresh_token"] == 1  # refreshed before use: it expired within 60 s
        assert (await me(client, "dev.test.oauth"))["user"] == "alice"
        assert oauth_server.grants["refresh_token"] == 1  # the refreshed token is used as it is
        oauth_server.revoke_access_tokens()
        assert (await me(client, "dev.test.oauth"))["user"] == "alice"  # 401 → refresh → retried once
    assert oauth_server.grants["refresh_token"] == 2
    verifier_checked = [r for r in oauth_server.token_requests if r.get("grant_type") == "authorization_code"]
    assert verifier_checked and all(r.get("code_verifier") for r in verifier_checked)


async def test_app_credentials_set_from_stdin_are_exchanged_for_a_token_once_and_reused(
    keyring: PrivateKeyring, oauth_server: OAuthTestServer, tmp_path: Path
) -> None:
    auth = {
        "type": "appCredential",
        "appCredential": {"tokenEndpoint": oauth_server.app_token_endpoint, "tokenType": "tenantAccessToken"},
    }
    apps = tmp_path / "apps"
    write_json(apps / "feishu.json", web_app("dev.test.appcred", oauth_server.url, auth, "/app/api/me"))
    env = trusted_env(keyring, apps)
    code, _, err = await cli(env, apps, "auth", "set", "dev.test.appcred", stdin=f"{APP_ID}\n{APP_SECRET}\n")
    assert code == 0, err
    async with gateway(env, apps) as client:
        assert await me(client, "dev.test.appcred") == {"app": APP_ID}
        assert await me(client, "dev.test.appcred") == {"app": APP_ID}
    assert oauth_server.app_exchanges == 1


async def test_cookies_set_from_stdin_are_checked_and_sent_as_one_cookie_header(
    keyring: PrivateKeyring, tmp_path: Path
) -> None:
    echo = ThreadedWsgiServer(echo_app()).start()
    try:
        auth = {
            "type": "cookie",
            "cookie": {
                "loginUrl": f"{echo.url}/login",
                "requiredCookies": ["session"],
                "domain": "127.0.0.1",
            },
        }
        apps = tmp_path / "apps"
        write_json(apps / "cookies.json", web_app("dev.test.cookies", echo.url, auth, "/cookies"))
        env = trusted_env(keyring, apps)
        code, _, err = await cli(env, apps, "auth", "set", "dev.test.cookies", stdin="theme=dark\n")
        assert code == 2
        assert "cookie 'session' is missing" in err
        code, _, err = await cli(
            env, apps, "auth", "set", "dev.test.cookies", stdin="session=s3cr3t; theme=dark\n"
        )
        assert code == 0, err
        async with gateway(env, apps) as client:
            answer = await me(client, "dev.test.cookies")
        assert echo.received[-1].headers["Cookie"] == "session=s3cr3t; theme=dark"
        assert answer == {"cookies": {"session": SECRET_MARKER, "theme": "dark"}}  # echoed, scrubbed
    finally:
        echo.close()


async def test_a_key_too_short_to_be_removed_from_answers_is_stored_with_a_warning(
    keyring: PrivateKeyring, tmp_path: Path
) -> None:
    auth = {
        "type": "apiKey",
        "apiKey": {"location": "header", "name": "X-Key", "obtainUrl": "https://e.example"},
    }
    apps = tmp_path / "apps"
    write_json(apps / "short.json", web_app("dev.test.shortkey", "https://api.e.example", auth, "/me"))
    env = trusted_env(keyring, apps)

    code, out, err = await cli(env, apps, "auth", "set", "dev.test.shortkey", stdin="k3y\n")

    assert code == 0, err
    assert "Saved" in out
    assert "the API key of dev.test.shortkey is shorter than 6 characters" in err
    assert "k3y" not in out + err


KEY = "sk-stored-and-good-0123456789"


class _Redirecting(BaseHTTPRequestHandler):
    """The app: every call is sent on to `server.target`, another origin."""

    def do_GET(self) -> None:
        self.send_response(302)
        self.send_header("Location", self.server.target)  # type: ignore[attr-defined]
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


class _Refusing(QuietHandler):
    """The host the app sends calls to: 401 to whoever comes without its own credentials."""

    def do_GET(self) -> None:
        self.send_json(401, b'{"message": "sign in here first"}')


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_401_from_the_host_a_redirect_led_to_does_not_ask_the_user_for_a_key_never_sent_there(
    keyring: PrivateKeyring, tmp_path: Path, mode: str
) -> None:
    """The stored key is good, and never went to that host: a page asking the user to type it again
    could change nothing (nor would a sign-in), and would replace a good key on the user's word."""
    refusing = ThreadingHTTPServer(("127.0.0.1", 0), _Refusing)
    app = ThreadingHTTPServer(("127.0.0.1", 0), _Redirecting)
    app.target = f"http://127.0.0.1:{refusing.server_port}/me"  # type: ignore[attr-defined]
    for host in (refusing, app):
        threading.Thread(target=host.serve_forever, daemon=True).start()
    auth = {
        "type": "apiKey",
        "apiKey": {"location": "header", "name": "X-Key", "obtainUrl": "https://e.example"},
    }
    apps = tmp_path / "apps"
    write_json(
        apps / "redirected.json",
        web_app("dev.test.redirected", f"http://127.0.0.1:{app.server_port}", auth, "/me"),
    )
    env = keyring.child_env()
    for desktop in ("DISPLAY", "WAYLAND_DISPLAY"):
        env.pop(desktop, None)
    env["AAI_GATEWAY_CONFIG"] = str(trusting_config(tmp_path / "config.toml", ["dev.test.redirected"]))
    code, _, err = await cli(env, apps, "auth", "set", "dev.test.redirected", stdin=KEY + "\n")
    assert code == 0, err
    asked: list[str] = []

    async def user_saves_the_key_again(
        context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult | types.ErrorData:
        assert isinstance(params, types.ElicitRequestURLParams)
        asked.append(params.url)
        async with httpx.AsyncClient() as browser:
            page = await browser.get(params.url)
            csrf = re.search(r'name="csrf" value="([^"]+)"', page.text)
            assert csrf is not None
            await browser.post(params.url, data={"csrf": csrf.group(1), "api_key": KEY})
        return types.ElicitResult(action="accept")

    gateway_process = StdioServerParameters(
        command=sys.executable,
        args=["-m", "aai_gateway", "serve", "--no-default-paths", "--path", str(apps)],
        env=env,
    )
    info = types.Implementation(name="auth-e2e", version="1")
    try:
        async with Client(
            gateway_process, mode=mode, client_info=info, elicitation_callback=user_saves_the_key_again
        ) as c:
            result = await c.call_tool("aai_exec", {"app": "dev.test.redirected", "tool": "me", "args": {}})
    finally:
        for host in (refusing, app):
            host.shutdown()
            host.server_close()
    assert result.is_error
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    error = json.loads(block.text)["error"]
    assert error["code"] == "AUTH_REQUIRED" and error["data"]["credentials_sent"] is False
    assert asked == []
