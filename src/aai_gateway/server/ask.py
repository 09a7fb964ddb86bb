"""Asking the user something during one tools/call, in either protocol generation.

2025-11-25: the server sends `elicitation/create` and waits for the answer.
2026-07-28: there is no back-channel; the call returns `InputRequiredResult` naming what it
needs, the client asks the user and retries the same call carrying the answers
(`input_responses`) and our `request_state`. One call may need several rounds (consent, then a
credential), so what earlier rounds learned is kept here, server-side, under an unguessable id
bound to the call; the client only carries the id and can neither forge nor swap an answer.
`NeedInput` carries the InputRequiredResult out of the handler.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.shared.message import ServerMessageMetadata
from mcp_types.version import MODERN_PROTOCOL_VERSIONS, is_version_at_least

MEMORY_SECONDS = 30 * 60
MEMORIES_KEPT = 1000
"""Calls waiting for their client's retry at most: past it, the longest waiting is forgotten (its
retry starts over), so a client that never retries cannot make the gateway keep more."""
TITLED_CHOICES_SINCE = "2025-11-25"  # the protocol version that brought titled `oneOf` choices


class NeedInput(Exception):  # noqa: N818 (a control-flow signal, not an error)
    """Ends this round of a 2026-07-28 call: the client must ask the user and retry."""

    def __init__(self, result: types.InputRequiredResult) -> None:
        super().__init__("input required")
        self.result = result


@dataclass
class CallMemory:
    """What one call learned across rounds: the user's answers and anything the server opened."""

    binding: tuple[str, str]  # (caller, what the call is about): a state id works for its own call only
    created: float = field(default_factory=time.monotonic)
    asked: set[str] = field(default_factory=set)  # requests put to the client, awaiting its retry
    answers: dict[str, types.ElicitResult] = field(default_factory=dict)
    values: dict[str, Any] = field(default_factory=dict)


class CallMemories:
    """The memories of calls waiting for their client's retry. A retry takes its call's memory out
    until its round ends (`keep` puts it back when the round asks again): a second retry carrying
    the same state while the first runs finds none and asks the user again, so one answer (an
    "Allow once") serves one round, never two."""

    def __init__(self) -> None:
        self._memories: dict[str, CallMemory] = {}

    def for_call(self, state: str | None, binding: tuple[str, str]) -> tuple[str, CallMemory]:
        self._forget_old()
        known = self._memories.get(state) if state else None
        if state is not None and known is not None and known.binding == binding:
            del self._memories[state]
            return state, known
        # another call's state: that call's retry still finds it, in its place among the waiting
        state_id = "call-" + secrets.token_urlsafe(18)
        return state_id, CallMemory(binding)

    def keep(self, state_id: str, memory: CallMemory) -> None:
        """`memory` waits for the retry of its call, whose round asked the client something."""
        self._memories[state_id] = memory
        while len(self._memories) > MEMORIES_KEPT:  # the oldest kept first: a dict keeps that order
            del self._memories[next(iter(self._memories))]

    def _forget_old(self) -> None:
        cutoff = time.monotonic() - MEMORY_SECONDS
        for state_id, memory in list(self._memories.items()):
            if memory.created < cutoff:
                del self._memories[state_id]


class Ask:
    def __init__(
        self,
        ctx: ServerRequestContext[Any, Any],
        params: types.CallToolRequestParams,
        memories: CallMemories,
        caller: str,
    ) -> None:
        self.ctx = ctx
        self.params = params
        topic = f"{params.name} {sorted((params.arguments or {}).items())!r}"
        self.state_id, self.memory = memories.for_call(params.request_state, (caller, topic))
        for key, answer in (params.input_responses or {}).items():
            # Only answers to what this call asked: a first round (or a forged state) brings none.
            if key in self.memory.asked and isinstance(answer, types.ElicitResult):
                self.memory.asked.discard(key)
                self.memory.answers[key] = answer

    @property
    def modern(self) -> bool:
        return self.ctx.protocol_version in MODERN_PROTOCOL_VERSIONS

    def _elicitation(self) -> types.ElicitationCapability | None:
        capabilities = self.ctx.session.client_capabilities
        return capabilities.elicitation if capabilities is not None else None

    @property
    def can_ask_url(self) -> bool:
        elicitation = self._elicitation()
        return elicitation is not None and elicitation.url is not None

    @property
    def can_ask_form(self) -> bool:
        elicitation = self._elicitation()
        # A client declaring `elicitation: {}` supports form mode (the 2025-06-18 meaning).
        return elicitation is not None and (elicitation.form is not None or elicitation.url is None)

    def answer(self, key: str) -> types.ElicitResult | None:
        """The user's answer to request `key` in this call, if an earlier round got one."""
        return self.memory.answers.get(key)

    async def url(self, key: str, message: str, url: str, elicitation_id: str) -> types.ElicitResult:
        """Send the user to `url` (used for secrets: they never travel through the chat)."""
        request = types.ElicitRequestURLParams(message=message, url=url, elicitation_id=elicitation_id)
        return await self._ask(key, request)

    @property
    def protocol_version(self) -> str | None:
        return self.ctx.protocol_version

    async def form(self, key: str, message: str, schema: types.ElicitRequestedSchema) -> types.ElicitResult:
        """Ask for a few plain, non-secret values (MCP forbids form mode for secrets)."""
        return await self._ask(key, types.ElicitRequestFormParams(message=message, requested_schema=schema))

    async def _ask(
        self, key: str, request: types.ElicitRequestURLParams | types.ElicitRequestFormParams
    ) -> types.ElicitResult:
        previous = self.answer(key)
        if previous is not None:
            return previous
        if self.modern:
            self.memory.asked.add(key)
            raise NeedInput(
                types.InputRequiredResult(
                    input_requests={key: types.ElicitRequest(params=request)}, request_state=self.state_id
                )
            )
        answer = await self.ctx.session.send_request(
            types.ElicitRequest(params=request),
            types.ElicitResult,
            metadata=ServerMessageMetadata(related_request_id=self.ctx.request_id),
        )
        self.memory.answers[key] = answer
        return answer


def choice_property(
    title: str, options: Sequence[tuple[str, str]], protocol_version: str | None
) -> dict[str, Any]:
    """An elicitation property offering `options` (value, label). Titled choices are `oneOf`
    with `const` and `title` from protocol 2025-11-25 on; older clients (2025-06-18 and before)
    know only `enum` with `enumNames` for the labels, and would show bare values otherwise."""
    if protocol_version is not None and not is_version_at_least(protocol_version, TITLED_CHOICES_SINCE):
        return {
            "type": "string",
            "title": title,
            "enum": [value for value, _ in options],
            "enumNames": [label for _, label in options],
        }
    return {"type": "string", "title": title, "oneOf": [{"const": v, "title": label} for v, label in options]}
