"""One prompt turn of an ACP agent, as the gateway follows it; and the permission policy.

A `Turn` is registered for its session while `session/prompt` runs. The agent's updates for
that session (`session/update`) are applied to it at once, in the order they arrive: message
chunks make up the reply, tool calls are summarised, and each update becomes an event with a
one-line progress message. The agent's `session/request_permission` becomes an event too, which
the calling task answers (it is the task that can ask the user); the agent waits meanwhile.

`choose_option` is the policy that turns the user's answer (or that nobody could be asked) into
one of the options the agent offered. It is pure, and never widens what the user allowed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, get_args

import anyio
from acp import schema

from .base import PermissionKind, PermissionOption, PermissionRequest

PROGRESS_TEXT_CHARS = 200
PERMISSION_KINDS: tuple[PermissionKind, ...] = get_args(PermissionKind)

# What to offer the agent for each answer, best first. An allow is never widened (once does not
# become always); a refusal may fall back to the other refusal, and in the end to "cancelled".
_PREFERENCE: dict[PermissionKind | None, tuple[PermissionKind, ...]] = {
    "allow_once": ("allow_once",),
    "allow_always": ("allow_always", "allow_once"),
    "reject_once": ("reject_once", "reject_always"),
    "reject_always": ("reject_always", "reject_once"),
    None: ("reject_once",),  # nobody could be asked: a refusal for now, never a lasting one
}


@dataclass(frozen=True)
class PermissionChoice:
    """What the agent is told: the option picked (None: the `cancelled` outcome), and why."""

    option_id: str | None
    kind: PermissionKind | None
    asked: bool


def choose_option(options: Sequence[PermissionOption], answer: PermissionKind | None) -> PermissionChoice:
    """The agent's option for the user's `answer` (None when nobody could be asked)."""
    for wanted in _PREFERENCE[answer]:
        for option in options:
            if option.kind == wanted:
                return PermissionChoice(option.option_id, option.kind, answer is not None)
    return PermissionChoice(None, None, answer is not None)


def permission_request(
    tool_call: schema.ToolCallUpdate, options: Sequence[schema.PermissionOption]
) -> PermissionRequest:
    """The agent's question in the gateway's terms (options of an unknown kind are left out)."""
    offered = tuple(
        PermissionOption(option.option_id, option.name, option.kind)
        for option in options
        if option.kind in PERMISSION_KINDS
    )
    title = tool_call.title or f"tool call {tool_call.tool_call_id}"
    return PermissionRequest(title=title, kind=tool_call.kind, arguments=tool_call.raw_input, options=offered)


def prompt_blocks(text: str, resources: Any) -> list[Any]:
    """The prompt's content: the text, then a resource link per `{uri, name?, mimeType?}`."""
    blocks: list[Any] = [schema.TextContentBlock(type="text", text=text)]
    for resource in resources if isinstance(resources, list) else []:
        if isinstance(resource, dict) and isinstance(resource.get("uri"), str):
            uri = resource["uri"]
            name = resource.get("name") or uri.rstrip("/").rsplit("/", 1)[-1] or uri
            blocks.append(
                schema.ResourceContentBlock(
                    type="resource_link", uri=uri, name=str(name), mime_type=resource.get("mimeType")
                )
            )
    return blocks


@dataclass
class PendingPermission:
    """A permission question the agent is waiting on; `settle` answers it exactly once."""

    tool_call_id: str
    request: PermissionRequest
    answered: anyio.Event = field(default_factory=anyio.Event)
    option_id: str | None = None

    def settle(self, option_id: str | None) -> None:
        if not self.answered.is_set():
            self.option_id = option_id
            self.answered.set()

    def response(self) -> schema.RequestPermissionResponse:
        if self.option_id is None:
            return schema.RequestPermissionResponse(outcome=schema.DeniedOutcome(outcome="cancelled"))
        return schema.RequestPermissionResponse(
            outcome=schema.AllowedOutcome(outcome="selected", option_id=self.option_id)
        )


@dataclass(frozen=True)
class Progress:
    message: str


@dataclass(frozen=True)
class Finished:
    """`session/prompt` returned (`response`) or failed (`error`)."""

    response: schema.PromptResponse | None = None
    error: BaseException | None = None


TurnEvent = Progress | PendingPermission | Finished


class Turn:
    """What one prompt turn produced so far, and the events the calling task still has to handle."""

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self.reply: list[str] = []
        self.tool_calls: dict[str, dict[str, Any]] = {}
        self.permissions: list[dict[str, Any]] = []
        self.notes: list[str] = []
        self._pending: list[PendingPermission] = []
        self.ended = False  # the agent answered the prompt (or failed to): nothing to cancel
        self._send, self.events = anyio.create_memory_object_stream[TurnEvent](math.inf)

    # ------------------------------------------------------------------ from the agent

    def on_update(self, update: Any) -> None:
        """Apply one `session/update` now (updates arrive in order) and queue its progress line."""
        message = self._apply(update)
        self._emit(Progress(message))

    async def on_permission(
        self, tool_call: schema.ToolCallUpdate, options: Sequence[schema.PermissionOption]
    ) -> schema.RequestPermissionResponse:
        pending = PendingPermission(tool_call.tool_call_id, permission_request(tool_call, options))
        self._pending.append(pending)
        self._emit(pending)
        try:
            await pending.answered.wait()
        finally:
            self._pending.remove(pending)
        return pending.response()

    def finished(self, event: Finished) -> None:
        self.ended = True
        self._emit(event)

    def drop_questions(self) -> None:
        """Answer every question still open `cancelled` (the turn is being cancelled)."""
        for pending in list(self._pending):
            pending.settle(None)

    def close(self) -> None:
        """The turn is over for the gateway: questions still open are answered `cancelled`."""
        self.drop_questions()
        self._send.close()

    def _emit(self, event: TurnEvent) -> None:
        try:
            self._send.send_nowait(event)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            if isinstance(event, PendingPermission):
                event.settle(None)

    # ------------------------------------------------------------------ the result

    def result(self, stop_reason: str) -> dict[str, Any]:
        result: dict[str, Any] = {
            "sessionId": self.session_id,
            "stopReason": stop_reason,
            "reply": "".join(self.reply),
            "toolCalls": list(self.tool_calls.values()),
        }
        if self.permissions:
            result["permissions"] = self.permissions
        if self.notes:
            result["notes"] = list(dict.fromkeys(self.notes))
        return result

    def _apply(self, update: Any) -> str:
        if isinstance(update, schema.AgentMessageChunk):
            text = _block_text(update.content)
            self.reply.append(text)
            return _short(text) or "(agent message)"
        if isinstance(update, schema.AgentThoughtChunk):
            return "thinking: " + _short(_block_text(update.content))
        if isinstance(update, schema.ToolCallStart | schema.ToolCallProgress):
            return self._tool_call(update)
        if isinstance(update, schema.AgentPlanUpdate):
            done = sum(1 for entry in update.entries if entry.status == "completed")
            current = next((e.content for e in update.entries if e.status == "in_progress"), None)
            now = f"; now: {_short(current)}" if current else ""
            return f"plan: {done}/{len(update.entries)} steps done{now}"
        kind = getattr(update, "session_update", None)
        return str(kind).replace("_", " ") if kind else "agent update"

    def _tool_call(self, update: schema.ToolCallStart | schema.ToolCallProgress) -> str:
        summary = self.tool_calls.setdefault(
            update.tool_call_id,
            {"id": update.tool_call_id, "title": None, "kind": None, "status": "pending"},
        )
        for key in ("title", "kind", "status"):
            value = getattr(update, key)
            if value is not None:
                summary[key] = value
        title = summary["title"] or update.tool_call_id
        kind = f" ({summary['kind']})" if summary["kind"] else ""
        return f"tool call {_short(title)}{kind}: {summary['status']}"


def _block_text(block: Any) -> str:
    if isinstance(block, schema.TextContentBlock):
        return block.text
    if isinstance(block, schema.ResourceContentBlock):
        return f"[{block.name}]({block.uri})"
    return ""


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= PROGRESS_TEXT_CHARS else text[: PROGRESS_TEXT_CHARS - 1] + "…"
