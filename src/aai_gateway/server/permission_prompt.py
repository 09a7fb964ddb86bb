"""Asking the user, through the MCP client, whether an app may do what it asks in the middle of
a call (an ACP agent's permission request): form-mode elicitation.

Only the 2025-11-25 generation can do this: there the server sends `elicitation/create` while
the call runs. In 2026-07-28 a question is a result (`InputRequiredResult`) that ends the call,
and the agent's turn cannot wait for the client's retry, so this prompter says it cannot ask and
the next one (the desktop dialog) is tried.
"""

from __future__ import annotations

import logging
import secrets
from typing import Any

from ..consent.prompt_text import build_prompt
from ..executors.base import PermissionKind
from ..service.permissions import KIND_TITLES, PermissionQuestion, consent_question
from .ask import Ask, choice_property

logger = logging.getLogger(__name__)


def permission_message(question: PermissionQuestion) -> str:
    """What every prompt shows (`prompt_text`): names that cannot fake lines, the agent's input."""
    return build_prompt(consent_question(question)).text


def permission_schema(question: PermissionQuestion, protocol_version: str | None = None) -> dict[str, Any]:
    names = {option.kind: option.name for option in question.request.options}
    choices = [
        (kind, f"{KIND_TITLES[kind]} (the agent's option: {names[kind]})") for kind in question.offered
    ]
    return {
        "type": "object",
        "properties": {"decision": choice_property("Allow this?", choices, protocol_version)},
        "required": ["decision"],
    }


class ElicitationPermissionPrompter:
    def __init__(self, channel: Ask) -> None:
        self.channel = channel

    async def ask_permission(self, question: PermissionQuestion) -> PermissionKind | None:
        if self.channel.modern or not self.channel.can_ask_form or not question.offered:
            return None
        key = "permission-" + secrets.token_urlsafe(8)  # every question is answered on its own
        try:
            answer = await self.channel.form(
                key, permission_message(question), permission_schema(question, self.channel.protocol_version)
            )
        except Exception:  # the client failed to ask: not an answer; the next way of asking is tried
            logger.warning("permission elicitation failed", exc_info=True)
            return None
        decision = (answer.content or {}).get("decision")
        for kind in question.offered:
            if answer.action == "accept" and decision == kind:
                return kind
        return "reject_once"  # declined or dismissed: no, this time
