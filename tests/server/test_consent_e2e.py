"""Consent end to end: two MCP clients of different names against one private OS keyring, each
answer of the elicitation form behaving as named, in both protocol generations, and a client that
cannot ask getting CONSENT_REQUIRED with the command that grants it."""

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

from tests.builders import write_json
from tests.keyring_session import PrivateKeyring
from tests.server.conftest import adapter_app

pytestmark = pytest.mark.anyio

HOSTILE_NAME = 'Mail "x" \\ $(touch PWNED) `touch PWNED` " & do shell script "touch PWNED" & "'
HOSTILE_TEXT = 'line one\nline two "quoted" $(touch PWNED) `id` \\\\ " & do shell script "touch PWNED" & "'


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def keyring() -> Iterator[PrivateKeyring]:
    with PrivateKeyring() as private:
        yield private


@pytest.fixture
def apps(tmp_path: Path) -> Path:
    document = adapter_app()
    document["app"]["name"] = {"en": HOSTILE_NAME}
    document["tools"][0]["description"] = HOSTILE_TEXT
    write_json(tmp_path / "apps" / "adapter.json", document)
    return tmp_path / "apps"


def env_for(keyring: PrivateKeyring, apps: Path) -> dict[str, str]:
    env = keyring.child_env()
    for desktop in ("DISPLAY", "WAYLAND_DISPLAY"):  # no native dialog: the elicitation path is under test
        env.pop(desktop, None)
    env["AAI_GATEWAY_CONFIG"] = str(apps.parent / "no-config.toml")
    return env


class User:
    """Answers consent forms the way it is told to, and remembers what it was shown."""

    def __init__(self, decision: str, remember: bool = False) -> None:
        self.decision, self.remember = decision, remember
        self.shown: list[types.ElicitRequestFormParams] = []

    async def __call__(
        self, context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult | types.ErrorData:
        assert isinstance(params, types.ElicitRequestFormParams)
        self.shown.append(params)
        return types.ElicitResult(
            action="accept", content={"decision": self.decision, "remember": self.remember}
        )


@asynccontextmanager
async def client(
    env: dict[str, str], apps: Path, name: str, mode: str = "legacy", user: User | None = None
) -> AsyncIterator[Client]:
    server = StdioServerParameters(
        command=sys.executable,
        args=["-m", "aai_gateway", "serve", "--no-default-paths", "--path", str(apps)],
        env=env,
    )
    options: dict[str, Any] = {"elicitation_callback": user} if user else {}
    async with Client(
        server, mode=mode, client_info=types.Implementation(name=name, version="1"), **options
    ) as c:
        yield c


async def call(c: Client, tool: str = "echo") -> tuple[str | None, Any]:
    """(error code or None, payload)."""
    arguments = {"text": 'hi "there" $(touch PWNED)'} if tool == "echo" else {}
    result = await c.call_tool("aai_exec", {"app": "dev.test.adapter", "tool": tool, "args": arguments})
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    payload = json.loads(block.text)
    return (payload["error"]["code"], payload["error"]) if result.is_error else (None, payload)


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_the_form_shows_the_caller_app_tool_description_and_arguments_literally(
    keyring: PrivateKeyring, apps: Path, mode: str
) -> None:
    user = User("allow_once")
    async with client(env_for(keyring, apps), apps, "agent-a", mode, user) as c:
        assert (await call(c))[0] is None
    [form] = user.shown
    assert "agent-a" in form.message and "echo" in form.message
    assert HOSTILE_NAME in form.message
    assert HOSTILE_TEXT in form.message
    assert json.dumps({"text": 'hi "there" $(touch PWNED)', "count": 1}, indent=2) in form.message
    choices = [c["const"] for c in form.requested_schema["properties"]["decision"]["oneOf"]]
    assert choices == ["allow_once", "allow_tool", "allow_app", "deny"]
    assert not await anyio.Path(apps / "PWNED").exists()  # where the adapter runs
    assert not await anyio.Path("PWNED").exists()


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_allow_once_asks_again_next_time(keyring: PrivateKeyring, apps: Path, mode: str) -> None:
    user = User("allow_once")
    async with client(env_for(keyring, apps), apps, "agent-a", mode, user) as c:
        assert (await call(c))[0] is None
        assert (await call(c))[0] is None
    assert len(user.shown) == 2


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_always_allow_this_tool_covers_that_tool_only(
    keyring: PrivateKeyring, apps: Path, mode: str
) -> None:
    user = User("allow_tool")
    async with client(env_for(keyring, apps), apps, "agent-a", mode, user) as c:
        assert (await call(c))[0] is None
        assert (await call(c))[0] is None
        assert len(user.shown) == 1
        assert (await call(c, "fail"))[0] == "NOT_FOUND"  # asked, allowed, and the app answered
    assert len(user.shown) == 2


async def test_always_allow_all_tools_covers_every_tool_of_the_app(
    keyring: PrivateKeyring, apps: Path
) -> None:
    user = User("allow_app")
    async with client(env_for(keyring, apps), apps, "agent-a", "auto", user) as c:
        assert (await call(c))[0] is None
        assert (await call(c, "fail"))[0] == "NOT_FOUND"
    assert len(user.shown) == 1


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_deny_is_respected_and_asked_again_unless_remembered(
    keyring: PrivateKeyring, apps: Path, mode: str
) -> None:
    env = env_for(keyring, apps)
    once = User("deny")
    async with client(env, apps, "agent-a", mode, once) as c:
        code, error = await call(c)
        assert code == "CONSENT_DENIED" and error["data"]["remembered"] is False
        assert (await call(c))[0] == "CONSENT_DENIED"
    assert len(once.shown) == 2

    remembered = User("deny", remember=True)
    async with client(env, apps, "agent-a", mode, remembered) as c:
        code, error = await call(c)
        assert code == "CONSENT_DENIED" and error["data"]["remembered"] is True
        assert "aai-gateway consent revoke" in error["message"]
        assert (await call(c))[0] == "CONSENT_DENIED"
    assert len(remembered.shown) == 1


async def test_a_grant_to_one_client_is_invisible_to_another_and_survives_a_restart(
    keyring: PrivateKeyring, apps: Path
) -> None:
    env = env_for(keyring, apps)
    async with client(env, apps, "agent-a", "legacy", User("allow_tool")) as a:
        assert (await call(a))[0] is None
    async with client(env, apps, "agent-b", "auto") as b:  # no elicitation: cannot be asked
        code, error = await call(b)
    assert code == "CONSENT_REQUIRED"
    assert error["data"]["caller"] == "agent-b"
    assert error["data"]["consent_url"] == "aai://consent?app=dev.test.adapter&tool=echo"
    assert error["data"]["tool_description"] == HOSTILE_TEXT
    assert (
        error["data"]["command"]
        == "aai-gateway consent grant --caller agent-b --app dev.test.adapter --tool echo"
    )
    async with client(env, apps, "agent-a", "auto") as a_again:  # a new gateway process
        assert (await call(a_again))[0] is None


async def test_the_grant_command_from_consent_required_lets_the_client_run(
    keyring: PrivateKeyring, apps: Path
) -> None:
    env = env_for(keyring, apps)
    async with client(env, apps, "agent-b", "auto") as b:
        code, error = await call(b)
        assert code == "CONSENT_REQUIRED"
        argv = error["data"]["command"].split()[1:]  # "aai-gateway consent grant --caller agent-b ..."
        done = await anyio.run_process(
            [sys.executable, "-m", "aai_gateway", *argv, "--no-default-paths", "--path", str(apps)], env=env
        )
        assert b"agent-b may now use echo" in done.stdout
        assert (await call(b))[0] is None
    listed = await anyio.run_process(
        [sys.executable, "-m", "aai_gateway", "consent", "list", "--json"], env=env
    )
    assert json.loads(listed.stdout) == [
        {
            "caller": "agent-b",
            "app": "dev.test.adapter",
            "tool": "echo",
            "decision": "allow",
            "source": f"file:{apps / 'adapter.json'}",
        }
    ]
    revoke = ["consent", "revoke", "--caller", "agent-b", "--app", "dev.test.adapter", "--tool", "echo"]
    await anyio.run_process(
        [sys.executable, "-m", "aai_gateway", *revoke, "--no-default-paths", "--path", str(apps)], env=env
    )
    listed = await anyio.run_process(
        [sys.executable, "-m", "aai_gateway", "consent", "list", "--json"], env=env
    )
    assert json.loads(listed.stdout) == []
