"""`aai-gateway auth login <app>` for an authorization-protected Streamable HTTP MCP server, as the
user runs it: the command discovers the server's authorization server, registers itself, prints
the sign-in URL; headless Chromium opens it and presses Allow on the real consent page; the tokens
land in a real (private) OS keyring, bound to the descriptor, and nowhere on disk. The gateway's
`McpOAuth`, reading that keyring, then reaches the server over the SDK's Streamable HTTP client
and refreshes the short-lived token, keeping the new one in the keyring."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from aai_gateway.auth.credentials import CredentialStore
from aai_gateway.auth.provider import AuthProvider
from aai_gateway.auth.secrets import KeyringSecretStore
from aai_gateway.descriptor import Source, load_text
from tests.auth.mcp_oauth_servers import SCOPE, McpAuthorizationServer, ProtectedMcpServer
from tests.auth.mcp_sign_in_support import mcp_session, whoami
from tests.browser import auth_login_in_browser
from tests.builders import write_json
from tests.cli.processes import run_cli, user_env
from tests.keyring_session import PrivateKeyring

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def descriptor(url: str) -> dict[str, object]:
    return {
        "schemaVersion": "1.0",
        "version": "1.0.0",
        "app": {
            "id": "protected",
            "name": {"en": "Protected"},
            "defaultLang": "en",
            "description": "A server",
        },
        "execution": {"type": "mcp", "url": url},
    }


async def login_in_browser(env: dict[str, str], apps: Path) -> str:
    """Runs `auth login protected --no-browser`, signs in at the URL it prints; its stdout."""
    command = [
        sys.executable, "-m", "aai_gateway", "auth", "login", "protected", "--no-browser",
        "--no-default-paths", "--path", str(apps),
    ]  # fmt: skip
    return await auth_login_in_browser(command, env)


async def test_auth_login_signs_in_in_a_browser_and_the_keyring_token_reaches_and_refreshes_at_the_server(
    private_keyring: PrivateKeyring,
    mcp: ProtectedMcpServer,
    authorization: McpAuthorizationServer,
    tmp_path: Path,
) -> None:
    apps, home = tmp_path / "apps", tmp_path / "home"
    path = write_json(apps / "protected" / "aai.json", descriptor(mcp.url))
    env = user_env(home, private_keyring)
    where = ("--no-default-paths", "--path", str(apps))
    authorization.lifetime = 30  # inside the gateway's 60 s refresh margin

    printed = await login_in_browser(env, apps)

    assert "Signed in to Protected (protected); the tokens are in the OS keyring" in printed
    [registration] = authorization.registrations
    [authorize] = authorization.authorize_requests
    assert authorize["client_id"] == registration["client_id"]
    assert (authorize["resource"], authorize["scope"], authorize["code_challenge_method"]) == (
        mcp.url,
        SCOPE,
        "S256",
    )
    status = json.loads(run_cli(env, "auth", "status", "--json", *where).out)
    assert [(row["app"], row["auth_type"]) for row in status] == [("protected", "oauth2")]
    assert status[0]["state"].startswith("signed in, expires in")
    assert "descriptor is not found" not in status[0]["state"]

    loaded = load_text(path.read_text(), Source(kind="file", location=str(path)), "linux").descriptor
    assert loaded is not None
    store = CredentialStore(KeyringSecretStore(backend=private_keyring.backend()))
    signed_in = store.load(loaded)
    assert signed_in is not None and signed_in.tokens is not None and signed_in.tokens.refresh_token
    on_disk = b"".join(p.read_bytes() for p in home.rglob("*") if p.is_file())
    assert signed_in.tokens.access_token.encode() not in on_disk
    assert signed_in.tokens.refresh_token.encode() not in on_disk

    authorization.lifetime = 3600
    auth = await AuthProvider(store, environ={}).mcp_http_auth(loaded)
    async with mcp_session(mcp.url, auth) as session:
        assert await whoami(session) == {"user": "alice", "scopes": [SCOPE]}
    assert authorization.grants["refresh_token"] == 1
    renewed = store.load(loaded)
    assert renewed is not None and renewed.tokens is not None
    assert renewed.tokens.access_token != signed_in.tokens.access_token

    assert run_cli(env, "auth", "logout", "protected", *where).code == 0
    assert store.load(loaded) is None
