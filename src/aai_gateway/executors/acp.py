"""`execution.type: "acp"`: operations run by a coding agent over the Agent Client Protocol.

The agent (`execution.start`: command, args, env) is started on first use and kept, one process
and one ACP connection per app, shared by concurrent calls; a dead agent is started again by
the next call, and `aclose` stops them all. Tools map onto ACP by name (docs/acp.md):

- `new_session {cwd}` → `session/new`; returns `{sessionId}`.
- `prompt {sessionId | cwd, prompt | text, resources?}` → `session/prompt`; returns the reply
  collected from the agent's message chunks, `stopReason`, a summary of its tool calls and the
  permission questions it asked.
- `cancel {sessionId}` → `session/cancel`.

While a prompt runs, every update from the agent is forwarded as progress and restarts the
inactivity timer (the tool's timeout; ten minutes when the descriptor sets none). On expiry, or
when the caller cancels, the gateway sends `session/cancel` and gives up on the turn. A
permission question of the agent goes to the user through the call's `ask_permission`; when
nobody can be asked it is refused, and the result says so.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import anyio

from ..descriptor import ExecutionType, Tool
from ..descriptor.model import AcpChannel
from ..errors import (
    AaiError,
    AgentInactiveError,
    InvalidArgumentError,
    UnsendableRequestError,
    UnsupportedOperationError,
)
from .acp_pool import AgentPool
from .base import ExecutorBase, ExecutorSettings, Invocation

if TYPE_CHECKING:  # the `acp` package takes half a second to import: only on first use
    from .acp_agent import AgentProcess
    from .acp_turn import PendingPermission, Turn

logger = logging.getLogger(__name__)

OPERATIONS: dict[str, str] = {
    "new_session": "new_session",
    "newsession": "new_session",
    "session_new": "new_session",
    "prompt": "prompt",
    "session_prompt": "prompt",
    "cancel": "cancel",
    "session_cancel": "cancel",
}
"""Tool names (lower case, `/` and `-` read as `_`) and the ACP operation each runs."""
SUPPORTED = "new_session {cwd}, prompt {sessionId or cwd, prompt or text, resources}, cancel {sessionId}"
NOBODY_ASKED = (
    "The agent asked for permission ({title}) and was refused because nobody could be asked: this "
    "MCP client cannot answer questions during a call (it lacks form elicitation, or it speaks the "
    "2026-07-28 protocol, where a server cannot ask in the middle of a call), and no desktop dialog "
    "is available. To let the user decide, use an MCP client that supports elicitation "
    "(2025-11-25 protocol) or run the gateway in a desktop session"
)


class AcpExecutor(ExecutorBase[AcpChannel]):
    """Runs ACP tools. `environ`: the gateway's environment, where agents are found (PATH) and
    the allow-listed variables they get come from; `start_timeout_seconds`: spawn +
    `initialize`; `cancel_seconds`: the most time spent telling the agent to stop;
    `permission_seconds`: how long a question to the user may stay open before it counts as
    refused."""

    channel_class = AcpChannel
    label = "ACP"
    availability_from = ("command", "env")

    def __init__(
        self,
        *,
        environ: Mapping[str, str],
        start_timeout_seconds: float = 60.0,
        kill_grace_seconds: float = 2.0,
        cancel_seconds: float = 5.0,
        permission_seconds: float = 300.0,
    ) -> None:
        self.cancel_seconds = cancel_seconds
        self.permission_seconds = permission_seconds
        self._agents = AgentPool(environ, start_seconds=start_timeout_seconds, grace=kill_grace_seconds)

    def unavailable(self, channel: AcpChannel, tool: Tool) -> str | None:
        missing = self._agents.missing(channel)
        if missing is None:
            return None
        return (
            f"ACP agent command {missing}; install the agent or set execution.start.command to its full path"
        )

    async def execute(self, invocation: Invocation) -> Any:
        app_id, name = invocation.app.id, invocation.tool.name
        operation = OPERATIONS.get(name.lower().replace("/", "_").replace("-", "_"))
        if operation is None:
            raise UnsupportedOperationError(
                app_id,
                name,
                f"the tool {name!r} is not an operation the gateway can run over ACP; supported: "
                f"{SUPPORTED} (see docs/acp.md)",
                supported_operations=sorted(set(OPERATIONS.values())),
            )
        if operation == "cancel":
            return await self._cancel(invocation)
        agent = await self._agents.agent(invocation, self.channel(invocation))
        if operation == "new_session":
            return {"sessionId": await self._new_session(agent, invocation, _cwd(invocation))}
        return await self._prompt(agent, invocation)

    async def aclose(self) -> None:
        await self._agents.stop_all()

    # ------------------------------------------------------------------ operations

    async def _new_session(self, agent: AgentProcess, invocation: Invocation, cwd: str) -> str:
        try:
            with anyio.fail_after(invocation.timeout_seconds):
                response = await agent.connection.new_session(cwd=cwd, mcp_servers=[])
        except TimeoutError as exc:
            raise AgentInactiveError(
                invocation.app.id, invocation.tool.name, invocation.tool.effective_timeout_ms
            ) from exc
        except Exception as exc:
            raise await agent.failure(
                invocation.app.id, invocation.tool.name, _text(invocation, "sessionId", required=False), exc
            ) from exc
        agent.sessions.add(response.session_id)
        return response.session_id

    async def _cancel(self, invocation: Invocation) -> dict[str, Any]:
        session_id = _required_text(invocation, "sessionId")
        agent = self._agents.running(invocation)
        if agent is None:
            return {"sessionId": session_id, "cancelled": False, "reason": "the agent is not running"}
        turn = agent.client.turns.get(session_id)
        await self._send_cancel(agent, session_id)
        if turn is not None:
            turn.drop_questions()  # open permission questions of that turn are answered `cancelled`
        return {"sessionId": session_id, "cancelled": True, "turnWasRunning": turn is not None}

    async def _prompt(self, agent: AgentProcess, invocation: Invocation) -> dict[str, Any]:
        from .acp_turn import Turn, prompt_blocks  # noqa: PLC0415 (see TYPE_CHECKING above)

        session_id = _text(invocation, "sessionId", required=False)
        if session_id is None:
            session_id = await self._new_session(agent, invocation, _cwd(invocation))
        if session_id in agent.client.turns:
            raise UnsendableRequestError(
                invocation.app.id,
                invocation.tool.name,
                f"a prompt is already running in session {session_id}; wait for it or cancel it first",
                sessionId=session_id,
            )
        blocks = prompt_blocks(_prompt_text(invocation), invocation.arguments.get("resources"))
        turn = agent.client.turns[session_id] = Turn(session_id)
        try:
            return await self._follow(agent, invocation, turn, blocks)
        except BaseException:  # cancelled, timed out, or failed while asking the user
            if not turn.ended:  # the agent may still be working on the turn: stop it
                await self._send_cancel(agent, session_id)
            raise
        finally:
            turn.close()
            if agent.client.turns.get(session_id) is turn:
                del agent.client.turns[session_id]

    async def _follow(
        self, agent: AgentProcess, invocation: Invocation, turn: Turn, blocks: list[Any]
    ) -> dict[str, Any]:
        """Send the prompt and handle what the agent sends until it ends its turn."""
        from .acp_turn import Finished, PendingPermission  # noqa: PLC0415 (see TYPE_CHECKING above)

        idle_seconds = invocation.timeout_seconds
        finished: Finished | None = None
        count = 0
        async with anyio.create_task_group() as tasks:

            async def send() -> None:
                try:
                    turn.finished(
                        Finished(
                            response=await agent.connection.prompt(session_id=turn.session_id, prompt=blocks)
                        )
                    )
                except Exception as exc:
                    turn.finished(Finished(error=exc))

            tasks.start_soon(send)
            while finished is None:
                event = None
                with anyio.move_on_after(idle_seconds):
                    event = await turn.events.receive()
                if event is None:
                    break  # nothing from the agent for idle_seconds
                if isinstance(event, Finished):
                    finished = event
                    continue
                if isinstance(event, PendingPermission):
                    message = await self._settle(invocation, turn, event)
                else:
                    message = event.message
                count += 1
                await _report(invocation, count, message)
            tasks.cancel_scope.cancel()
        if finished is None:
            raise AgentInactiveError(
                invocation.app.id, invocation.tool.name, invocation.tool.effective_timeout_ms
            )
        if finished.error is not None:
            raise await agent.failure(
                invocation.app.id, invocation.tool.name, turn.session_id, finished.error
            )
        assert finished.response is not None
        return turn.result(finished.response.stop_reason)

    async def _send_cancel(self, agent: AgentProcess, session_id: str) -> None:
        """`session/cancel`, shielded and bounded: also sent while the call itself is cancelled."""
        with anyio.move_on_after(self.cancel_seconds, shield=True):
            try:
                await agent.connection.cancel(session_id=session_id)
            except Exception:  # the agent is gone: nothing left to cancel
                logger.debug("%s: session/cancel could not be sent", agent.app_id, exc_info=True)

    async def _settle(self, invocation: Invocation, turn: Turn, pending: PendingPermission) -> str:
        """Ask the user (the inactivity timer does not run meanwhile) and answer the agent."""
        from .acp_turn import choose_option  # noqa: PLC0415 (see TYPE_CHECKING above)

        request = pending.request
        answer = None
        late = failed = False
        if invocation.ask_permission is not None:
            try:
                with anyio.move_on_after(self.permission_seconds) as waiting:
                    answer = await invocation.ask_permission(request)
                late = waiting.cancelled_caught
            except Exception:  # refused below, like a question nobody could be asked
                logger.warning(
                    "%s: asking the user about %r failed", invocation.app.id, request.title, exc_info=True
                )
                failed = True
        choice = choose_option(request.options, answer)
        pending.settle(choice.option_id)
        outcome = choice.kind or "cancelled"
        if late:
            decided_by, reason = "gateway", f"the user did not answer within {self.permission_seconds:g} s"
        elif failed:
            decided_by, reason = "gateway", "asking the user failed"
        elif choice.asked:
            decided_by, reason = "user", f"the user answered {answer}"
        else:
            decided_by, reason = "gateway", "nobody could be asked"
            turn.notes.append(NOBODY_ASKED.format(title=request.title))
        turn.permissions.append(
            {
                "toolCallId": pending.tool_call_id,
                "title": request.title,
                "kind": request.kind,
                "outcome": outcome,
                "optionId": choice.option_id,
                "decidedBy": decided_by,
                "reason": reason,
            }
        )
        return f"permission for {request.title}: {outcome} ({reason})"


async def _report(invocation: Invocation, count: int, message: str) -> None:
    if invocation.progress is None:
        return
    try:
        await invocation.progress(float(count), None, message)
    except Exception:  # the caller may be gone; the turn goes on
        logger.debug("progress could not be forwarded", exc_info=True)


def _text(invocation: Invocation, key: str, *, required: bool) -> str | None:
    value = invocation.arguments.get(key)
    if isinstance(value, str) and value:
        return value
    if required:
        raise _invalid(invocation, key, "a non-empty string is required")
    return None


def _required_text(invocation: Invocation, key: str) -> str:
    value = _text(invocation, key, required=True)
    assert value is not None
    return value


def _cwd(invocation: Invocation) -> str:
    cwd = _required_text(invocation, "cwd")
    if not os.path.isabs(cwd):
        raise _invalid(invocation, "cwd", "an absolute path of the directory the agent works in is required")
    return cwd


def _prompt_text(invocation: Invocation) -> str:
    text = _text(invocation, "prompt", required=False) or _text(invocation, "text", required=False)
    if text is None:
        raise _invalid(invocation, "prompt", "the prompt text is required (as `prompt` or `text`)")
    return text


def _invalid(invocation: Invocation, key: str, message: str) -> AaiError:
    return InvalidArgumentError(message, path=f"/{key}", app_id=invocation.app.id, tool=invocation.tool.name)


def registration(settings: ExecutorSettings) -> tuple[tuple[ExecutionType, ...], AcpExecutor]:
    """The entry point of `acp` in the group `aai_gateway.executors` (pyproject.toml)."""
    return (ExecutionType.ACP,), AcpExecutor(environ=settings.environ)
