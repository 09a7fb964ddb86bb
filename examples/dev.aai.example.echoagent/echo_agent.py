"""Echo Agent: the smallest useful ACP agent, written with `agent-client-protocol` (Python).

It shows what AAI Gateway does with an agent behind `execution.type: "acp"` (see docs/acp.md),
offline and without a model:

- a prompt is answered "Echo: <your text>", streamed word by word, with a plan and a "Reading
  the prompt" tool call: the gateway forwards each of these updates as MCP progress;
- `write NAME [TEXT]` asks permission ("Write file NAME", kind edit) before it writes NAME in
  the session's folder: the gateway puts the question to the user and answers with the option
  that matches the user's answer; the reply says which one;
- `slow` keeps working (a thought every second, up to 60 s) until the turn is cancelled: by the
  `cancel` tool, by the MCP client cancelling its request, or by the gateway's inactivity timeout.

Run by the gateway as `run-agent` (next to this file), which picks a Python that has
`agent-client-protocol`; by hand: `python3 echo_agent.py` and type JSON-RPC lines on stdin.
"""

from __future__ import annotations

import asyncio
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
    AllowedOutcome,
    Implementation,
    InitializeResponse,
    NewSessionResponse,
    PermissionOption,
    PromptResponse,
    TextContentBlock,
    ToolCallUpdate,
)

PERMISSION_OPTIONS = [
    PermissionOption(option_id="allow", name="Allow", kind="allow_once"),
    PermissionOption(option_id="allow-always", name="Always allow writing files", kind="allow_always"),
    PermissionOption(option_id="reject", name="Reject", kind="reject_once"),
]


class EchoAgent:
    """The methods an ACP agent answers; `run_agent` routes each request to one of them."""

    def __init__(self) -> None:
        self.client: Client | None = None
        self.folders: dict[str, Path] = {}  # session id → the folder it works in
        self.cancelled: dict[str, asyncio.Event] = {}

    def on_connect(self, conn: Client) -> None:
        self.client = conn  # how the agent talks back: session updates, permission requests

    async def initialize(self, protocol_version: int, **kwargs: Any) -> InitializeResponse:
        return InitializeResponse(
            protocol_version=PROTOCOL_VERSION, agent_info=Implementation(name="echo-agent", version="1.0.0")
        )

    async def new_session(self, cwd: str, **kwargs: Any) -> NewSessionResponse:
        session_id = uuid.uuid4().hex
        self.folders[session_id] = Path(cwd)
        return NewSessionResponse(session_id=session_id)

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        self.cancelled.setdefault(session_id, asyncio.Event()).set()

    async def prompt(self, prompt: list[Any], session_id: str, **kwargs: Any) -> PromptResponse:
        text = " ".join(block.text for block in prompt if isinstance(block, TextContentBlock)).strip()
        self.cancelled[session_id] = asyncio.Event()
        command, _, rest = text.partition(" ")
        if command == "write" and rest:
            return await self.write(session_id, *rest.partition(" ")[::2])
        if command == "slow":
            return await self.slow(session_id)
        return await self.echo(session_id, text)

    async def send(self, session_id: str, update: Any) -> None:
        assert self.client is not None
        await self.client.session_update(session_id=session_id, update=update)

    async def echo(self, session_id: str, text: str) -> PromptResponse:
        await self.send(session_id, update_plan([plan_entry("Echo the prompt", status="in_progress")]))
        reading = start_tool_call("read", "Reading the prompt", kind="read", status="completed")
        await self.send(session_id, reading)
        words = ["Echo:", *text.split()]
        for index, word in enumerate(words):
            await asyncio.sleep(0.05)  # so that the updates arrive one by one
            chunk = word if index == len(words) - 1 else word + " "
            await self.send(session_id, update_agent_message_text(chunk))
        await self.send(session_id, update_plan([plan_entry("Echo the prompt", status="completed")]))
        return PromptResponse(stop_reason="end_turn")

    async def write(self, session_id: str, name: str, content: str) -> PromptResponse:
        assert self.client is not None
        title = f"Write file {name}"
        await self.send(session_id, start_tool_call("write", title, kind="edit", status="pending"))
        answer = await self.client.request_permission(
            session_id=session_id,
            tool_call=ToolCallUpdate(
                tool_call_id="write", title=title, kind="edit", raw_input={"path": name, "content": content}
            ),
            options=PERMISSION_OPTIONS,
        )
        chosen = answer.outcome.option_id if isinstance(answer.outcome, AllowedOutcome) else "cancelled"
        if chosen.startswith("allow"):
            target = self.folders[session_id] / Path(name).name  # never outside the session's folder
            target.write_text(content or "written by the echo agent\n", encoding="utf-8")
            await self.send(session_id, update_tool_call("write", status="completed"))
            await self.send(session_id, update_agent_message_text(f"Wrote {target} ({chosen})."))
        else:
            await self.send(session_id, update_tool_call("write", status="failed"))
            refused = f"Did not write {name}: permission {chosen}."
            await self.send(session_id, update_agent_message_text(refused))
        return PromptResponse(stop_reason="end_turn")

    async def slow(self, session_id: str) -> PromptResponse:
        for second in range(60):
            await self.send(session_id, update_agent_thought_text(f"still working ({second} s)"))
            try:
                await asyncio.wait_for(self.cancelled[session_id].wait(), 1.0)
            except TimeoutError:
                continue
            return PromptResponse(stop_reason="cancelled")
        await self.send(session_id, update_agent_message_text("Done after a minute."))
        return PromptResponse(stop_reason="end_turn")


def main() -> None:
    asyncio.run(run_agent(cast(Agent, EchoAgent())))


if __name__ == "__main__":
    main()
