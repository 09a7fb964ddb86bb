"""Asking the user for consent through the MCP client (form-mode elicitation, both generations).

The form shows who asks (the client's name), which app and tool, what the tool does and the
actual arguments of this call; the strings are the descriptor's and the agent's, shown as text.
"""

from __future__ import annotations

import json
from typing import Any

from ..consent.gate import Answer
from ..consent.prompt_text import ConsentQuestion
from .ask import Ask

CHOICE_TITLES = {
    "allow_once": "Allow once",
    "allow_tool": "Always allow this tool",
    "allow_app": "Always allow all tools of this app",
    "deny": "Deny",
}


def consent_message(question: ConsentQuestion) -> str:
    arguments = json.dumps(question.arguments, ensure_ascii=False, indent=2)
    return (
        f"{question.caller} wants to use the tool {question.tool} of {question.app_name} "
        f"({question.app_id}, from {question.source}).\n\n"
        f"What the tool does: {question.tool_description or '(no description)'}\n\n"
        f"Arguments of this call:\n{arguments}"
    )


def consent_schema(question: ConsentQuestion) -> dict[str, Any]:
    choices = [c for c in CHOICE_TITLES if c in question.offered]
    properties: dict[str, Any] = {
        "decision": {
            "type": "string",
            "title": "Allow this?",
            "oneOf": [{"const": c, "title": CHOICE_TITLES[c]} for c in choices],
        }
    }
    if question.offer_remember_deny:
        properties["remember"] = {
            "type": "boolean",
            "title": "If you deny: remember it for this tool",
            "default": False,
        }
    return {"type": "object", "properties": properties, "required": ["decision"]}


class ElicitationPrompter:
    def __init__(self, channel: Ask) -> None:
        self.channel = channel

    async def ask(self, question: ConsentQuestion) -> Answer | None:
        if not self.channel.can_ask_form:
            return None
        answer = await self.channel.form("consent", consent_message(question), consent_schema(question))
        content = answer.content or {}
        decision = content.get("decision")
        if answer.action != "accept" or decision not in question.offered:
            return ("deny", False)  # declined or dismissed: no, this time
        remember = bool(content.get("remember")) and decision == "deny" and question.offer_remember_deny
        return (str(decision), remember)
