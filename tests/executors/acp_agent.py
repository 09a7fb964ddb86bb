"""A small, offline ACP agent for the tests, run as `python acp_agent.py` (stdio).

What a prompt does depends on its first word:

- anything else: streams "Echo: <text>" in several chunks with small delays, with a plan and a
  "Reading notes" tool call (pending → completed) in between;
- `write NAME`: starts a "Write file NAME" tool call (kind edit), asks permission for it, writes
  NAME in the session's folder only when allowed, and says in its reply what it was answered;
- `slow`: sends one update, then waits up to 60 s for `session/cancel` (stop reason `cancelled`);
- `silent`: sends nothing for 30 s;
- `tick N`: sends a thought every 0.1 s, N times;
- `crash`: writes to stderr and exits with status 3 at once;
- `env`: replies with a JSON object: its environment, working directory and process id;
- `spawn`: starts `sleep 300` (in the agent's process group) and replies with its process id.

With `ACP_TEST_LOG` set, every cancel is appended to that file as `cancel <sessionId>`.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import uuid
from pathlib import Path
from typing import Any, cast

from acp import (
    PROTOCOL_VERSION,
    Agent,
    Client,
    run_agent,
    start_tool_call,
    update_agent_message_text,
    update_agent_thought_text,
    update_plan,
    update_tool_call,
)
from acp.helpers import plan_entry
from acp.schema import (
    AgentCapabilities,
    AllowedOutcome,
    Implementation,
    InitializeResponse,
    NewSessionResponse,
    PermissionOption,
    PromptResponse,
    TextContentBlock,
    ToolCallUpdate,
)


class EchoAgent:
    def __init__(self) -> None:
        self.client: Client | None = None
        self.sessions: dict[str, Path] = {}
        self.cancelled: dict[str, asyncio.Event] = {}

    def on_connect(self, conn: Client) -> None:
        self.client = conn

    async def initialize(self, protocol_version: int, **kwargs: Any) -> InitializeResponse:
        return InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(),
            agent_info=Implementation(name="test-echo-agent", version="1.0"),
        )

    async def new_session(self, cwd: str, **kwargs: Any) -> NewSessionResponse:
        session_id = "s-" + uuid.uuid4().hex[:12]
        self.sessions[session_id] = Path(cwd)
        return NewSessionResponse(session_id=session_id)

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        log = os.environ.get("ACP_TEST_LOG")
        if log:
            with Path(log).open("a", encoding="utf-8") as handle:  # noqa: ASYNC230 (a test log line)
                handle.write(f"cancel {session_id}\n")
        self.cancelled.setdefault(session_id, asyncio.Event()).set()

    async def say(self, session_id: str, update: Any) -> None:
        assert self.client is not None
        await self.client.session_update(session_id=session_id, update=update)

    async def prompt(self, prompt: list[Any], session_id: str, **kwargs: Any) -> PromptResponse:
        text = " ".join(block.text for block in prompt if isinstance(block, TextContentBlock)).strip()
        word, _, rest = text.partition(" ")
        self.cancelled[session_id] = asyncio.Event()
        if word == "crash":
            print("test agent: crashing on purpose", file=sys.stderr, flush=True)
            os._exit(3)
        if word == "slow":
            await self.say(session_id, update_agent_message_text("working slowly…"))
            try:
                await asyncio.wait_for(self.cancelled[session_id].wait(), 60)
            except TimeoutError:
                return PromptResponse(stop_reason="end_turn")
            return PromptResponse(stop_reason="cancelled")
        if word == "silent":
            await asyncio.sleep(30)
            return PromptResponse(stop_reason="end_turn")
        if word == "tick":
            for index in range(int(rest or "10")):
                await asyncio.sleep(0.1)
                await self.say(session_id, update_agent_thought_text(f"tick {index}"))
            await self.say(session_id, update_agent_message_text("ticked"))
            return PromptResponse(stop_reason="end_turn")
        if word == "env":
            reply = {"env": dict(os.environ), "cwd": os.getcwd(), "pid": os.getpid()}
            await self.say(session_id, update_agent_message_text(json.dumps(reply)))
            return PromptResponse(stop_reason="end_turn")
        if word == "spawn":
            helper = await asyncio.create_subprocess_exec("sleep", "300")
            await self.say(session_id, update_agent_message_text(json.dumps({"pid": helper.pid})))
            return PromptResponse(stop_reason="end_turn")
        if word == "write":
            return await self.write(session_id, rest or "out.txt")
        return await self.echo(session_id, text)

    async def echo(self, session_id: str, text: str) -> PromptResponse:
        await self.say(session_id, update_plan([plan_entry("Read the notes", status="in_progress")]))
        await self.say(session_id, start_tool_call("read-1", "Reading notes", kind="read", status="pending"))
        words = text.split()
        for chunk in ["Echo: ", *(f"{word} " for word in words[:-1]), *words[-1:]]:
            await asyncio.sleep(0.02)
            await self.say(session_id, update_agent_message_text(chunk))
        await self.say(session_id, update_tool_call("read-1", status="completed"))
        return PromptResponse(stop_reason="end_turn")

    async def write(self, session_id: str, name: str) -> PromptResponse:
        assert self.client is not None
        title = f"Write file {name}"
        await self.say(session_id, start_tool_call("write-1", title, kind="edit", status="pending"))
        options = [
            PermissionOption(option_id="yes", name="Allow", kind="allow_once"),
            PermissionOption(option_id="always", name="Always allow", kind="allow_always"),
            PermissionOption(option_id="no", name="Reject", kind="reject_once"),
            PermissionOption(option_id="never", name="Never", kind="reject_always"),
        ]
        answer = await self.client.request_permission(
            session_id=session_id,
            tool_call=ToolCallUpdate(
                tool_call_id="write-1", title=title, kind="edit", raw_input={"path": name, "content": "hello"}
            ),
            options=options,
        )
        outcome = answer.outcome
        chosen = outcome.option_id if isinstance(outcome, AllowedOutcome) else "cancelled"
        if chosen in ("yes", "always"):
            (self.sessions[session_id] / name).write_text("hello", encoding="utf-8")
            await self.say(session_id, update_tool_call("write-1", status="completed"))
        else:
            await self.say(session_id, update_tool_call("write-1", status="failed"))
        await self.say(session_id, update_agent_message_text(f"permission: {chosen}"))
        return PromptResponse(stop_reason="end_turn")


def main() -> None:
    asyncio.run(run_agent(cast(Agent, EchoAgent())))


if __name__ == "__main__":
    main()
