"""Asking the user something during one tools/call, in either protocol generation.

2025-11-25: the server sends `elicitation/create` and waits for the answer.
2026-07-28: there is no back-channel; the call returns `InputRequiredResult` naming what it
needs, the client asks the user and retries the same call carrying the answer
(`input_responses`) and our `request_state`. `NeedInput` carries that result out of the handler.
"""

from __future__ import annotations

from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp_types.version import MODERN_PROTOCOL_VERSIONS


class NeedInput(Exception):  # noqa: N818 (a control-flow signal, not an error)
    """Ends this round of a 2026-07-28 call: the client must ask the user and retry."""

    def __init__(self, result: types.InputRequiredResult) -> None:
        super().__init__("input required")
        self.result = result


class Ask:
    def __init__(self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams) -> None:
        self.ctx = ctx
        self.params = params

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

    @property
    def state(self) -> str | None:
        """The `request_state` this retry carries (2026-07-28), if any."""
        return self.params.request_state

    def answer(self, key: str) -> types.ElicitResult | None:
        """The user's answer to request `key`, when this call is a retry that carries one."""
        responses = self.params.input_responses or {}
        answer = responses.get(key)
        return answer if isinstance(answer, types.ElicitResult) else None

    async def url(
        self, key: str, message: str, url: str, elicitation_id: str, *, state: str
    ) -> types.ElicitResult:
        """Send the user to `url` (never used to carry a secret through the chat)."""
        previous = self.answer(key)
        if previous is not None:
            return previous
        request = types.ElicitRequestURLParams(message=message, url=url, elicitation_id=elicitation_id)
        if self.modern:
            raise NeedInput(
                types.InputRequiredResult(
                    input_requests={key: types.ElicitRequest(params=request)}, request_state=state
                )
            )
        return await self.ctx.session.elicit_url(
            message, url, elicitation_id, related_request_id=self.ctx.request_id
        )

    async def form(
        self, key: str, message: str, schema: types.ElicitRequestedSchema, *, state: str
    ) -> types.ElicitResult:
        """Ask for a few plain, non-secret values (MCP forbids form mode for secrets)."""
        previous = self.answer(key)
        if previous is not None:
            return previous
        if self.modern:
            request = types.ElicitRequestFormParams(message=message, requested_schema=schema)
            raise NeedInput(
                types.InputRequiredResult(
                    input_requests={key: types.ElicitRequest(params=request)}, request_state=state
                )
            )
        return await self.ctx.session.elicit_form(message, schema, related_request_id=self.ctx.request_id)
