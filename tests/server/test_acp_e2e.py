"""An ACP agent app end to end: the SDK's MCP client → the gateway process → the offline agent
(tests/executors/acp_agent.py), in both protocol generations: replies, streamed progress,
cancellation, a crash and the restart after it, and permission requests answered through the
client's elicitation, or refused when the client cannot be asked."""

from __future__ import annotations

import json
import os
import signal
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.context import ClientRequestContext

from tests.builders import trusting_config, write_json
from tests.executors.acp_support import APP_ID, acp_document
from tests.server.conftest import connected

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def acp_apps(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("acp")
    write_json(root / "apps" / "agent" / "aai.json", acp_document(log=root / "agent.log"))
    trusting_config(root / "config.toml", [APP_ID])
    (root / "work").mkdir()
    return root / "apps"


@pytest.fixture(scope="module")
async def client(acp_apps: Path, mode: str) -> AsyncIterator[Client]:
    async with connected(acp_apps, mode) as client:
        yield client


def work_dir(apps: Path) -> str:
    return str(apps.parent / "work")


async def prompt(client: Client, apps: Path, text: str, **options: Any) -> tuple[bool, Any]:
    """(is_error, payload) of `aai_exec` running the agent's `prompt` in a new session."""
    arguments = {"app": APP_ID, "tool": "prompt", "args": {"prompt": text, "cwd": work_dir(apps)}}
    result = await client.call_tool("aai_exec", arguments, **options)
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return bool(result.is_error), json.loads(block.text)


async def test_a_prompt_returns_the_agents_reply_and_streams_its_updates_as_progress(
    client: Client, acp_apps: Path
) -> None:
    seen: list[tuple[float, str | None]] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        seen.append((done, message))

    failed, payload = await prompt(client, acp_apps, "hello over mcp", progress_callback=progress)
    assert not failed, payload
    assert payload["reply"] == "Echo: hello over mcp"
    assert payload["stopReason"] == "end_turn"
    assert payload["toolCalls"][0]["status"] == "completed"
    messages = [message for _, message in seen]
    assert {"Echo:", "hello", "over", "mcp"} <= set(messages)
    assert "tool call Reading notes (read): pending" in messages
    assert [done for done, _ in seen] == sorted(done for done, _ in seen)


async def test_cancelling_the_mcp_request_sends_session_cancel_to_the_agent(
    client: Client, acp_apps: Path
) -> None:
    log = acp_apps.parent / "agent.log"
    before = log.read_text(encoding="utf-8").count("cancel ") if log.exists() else 0
    started = anyio.Event()

    async def progress(done: float, total: float | None, message: str | None) -> None:
        started.set()

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(lambda: prompt(client, acp_apps, "slow", progress_callback=progress))
        with anyio.fail_after(10):
            await started.wait()
        tasks.cancel_scope.cancel()
    with anyio.fail_after(10):
        while not log.exists() or log.read_text(encoding="utf-8").count("cancel ") == before:  # noqa: ASYNC110
            await anyio.sleep(0.05)
    failed, payload = await prompt(client, acp_apps, "still there")
    assert not failed and payload["reply"] == "Echo: still there"


async def test_an_agent_crash_fails_the_call_with_its_exit_and_stderr_and_the_next_call_restarts_it(
    client: Client, acp_apps: Path
) -> None:
    failed, payload = await prompt(client, acp_apps, "crash")
    assert failed
    error = payload["error"]
    assert error["code"] == "EXECUTION_FAILED"
    assert APP_ID in error["message"] and "exited with code 3" in error["message"]
    assert error["data"]["stderr_tail"] == "test agent: crashing on purpose"
    failed, payload = await prompt(client, acp_apps, "back again")
    assert not failed and payload["reply"] == "Echo: back again"


class User:
    """Answers the gateway's permission forms with `decision`, and remembers what it was shown."""

    def __init__(self, decision: str) -> None:
        self.decision = decision
        self.shown: list[types.ElicitRequestFormParams] = []

    async def __call__(
        self, context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult | types.ErrorData:
        assert isinstance(params, types.ElicitRequestFormParams)
        self.shown.append(params)
        return types.ElicitResult(action="accept", content={"decision": self.decision})


@pytest.mark.parametrize("mode", ["legacy"], ids=["2025-11-25 handshake"])
async def test_a_permission_request_is_put_to_the_user_through_elicitation_granted_and_denied(
    acp_apps: Path, mode: str
) -> None:
    user = User("allow_once")
    target = acp_apps.parent / "work" / "granted.txt"
    async with connected(acp_apps, mode, name="agent-y", elicitation_callback=user) as client:
        failed, payload = await prompt(client, acp_apps, "write granted.txt")
        assert not failed and payload["reply"] == "permission: yes"
        assert target.read_text(encoding="utf-8") == "hello"
        [form] = user.shown
        assert "agent-y" in form.message and "Write file granted.txt" in form.message
        assert '"path": "granted.txt"' in form.message
        choices = [c["const"] for c in form.requested_schema["properties"]["decision"]["oneOf"]]
        assert choices == ["allow_once", "allow_always", "reject_once", "reject_always"]
        user.decision = "reject_once"
        failed, payload = await prompt(client, acp_apps, "write denied.txt")
        assert not failed and payload["reply"] == "permission: no"
        assert payload["permissions"][0]["decidedBy"] == "user"
        assert not (acp_apps.parent / "work" / "denied.txt").exists()


@pytest.mark.parametrize(
    ("mode", "with_callback"),
    [("legacy", False), ("auto", True)],
    ids=["2025-11-25 client without elicitation", "2026-07-28 client (no mid-call questions)"],
)
async def test_a_permission_request_is_refused_when_the_client_cannot_be_asked(
    acp_apps: Path, mode: str, with_callback: bool
) -> None:
    user = User("allow_once")
    options: dict[str, Any] = {"elicitation_callback": user} if with_callback else {}
    async with connected(acp_apps, mode, **options) as client:
        failed, payload = await prompt(client, acp_apps, "write refused.txt")
    assert not failed and payload["reply"] == "permission: no"
    assert not user.shown
    assert payload["permissions"][0]["decidedBy"] == "gateway"
    assert "use an MCP client that supports elicitation" in payload["notes"][0]
    assert not (acp_apps.parent / "work" / "refused.txt").exists()


def alive(pid: int) -> bool:
    """Running, and not a zombie waiting for a parent that does not reap it."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8")
    except FileNotFoundError:
        return False
    return stat[stat.rfind(")") + 2] not in "ZX"


async def test_stopping_the_gateway_with_sigterm_stops_its_agents_and_their_children(
    acp_apps: Path, mode: str
) -> None:
    async with connected(acp_apps, mode) as client:
        failed, payload = await prompt(client, acp_apps, "spawn")
        assert not failed, payload
        helper = json.loads(payload["reply"])["pid"]  # a child of the agent, in its process group
        _, payload = await prompt(client, acp_apps, "env")
        agent = json.loads(payload["reply"])["pid"]
        stat = await anyio.Path(f"/proc/{agent}/stat").read_text(encoding="utf-8")
        gateway = int(stat[stat.rfind(")") + 2 :].split()[1])  # the agent's parent
        assert alive(helper) and alive(agent) and alive(gateway)
        os.kill(gateway, signal.SIGTERM)  # what an MCP client does to stop a stdio server
        with anyio.move_on_after(15):
            while alive(gateway) or alive(agent) or alive(helper):  # noqa: ASYNC110
                await anyio.sleep(0.05)
        assert (alive(gateway), alive(agent), alive(helper)) == (False, False, False)
