"""An app's own question to the user in the middle of a call (an MCP server behind the gateway
asks through elicitation), put to the user through the MCP client of that call.

Only the 2025-11-25 generation can do this: there the server sends `elicitation/create` while the
call runs and waits for the answer. In 2026-07-28 a question ends the call (`InputRequiredResult`),
and the app's own request cannot wait for the client's retry; nor can a client without the
elicitation mode the app asks for. Then the asker says so (None) and the app is answered with
an error saying nobody could be asked. The question names the app, so that the user knows who
asks: it is the app's text, not the gateway's.
"""

from __future__ import annotations

import secrets

from ..consent.prompt_text import BLOCK_INDENT
from ..executors import UserAnswer, UserQuestion
from .ask import Ask

EMPTY_FORM = {"type": "object", "properties": {}}


def question_text(question: UserQuestion) -> str:
    """`<app> asks: <message>`, every further line of the message indented: the app's words
    never start a line at the left edge, where the gateway's own labels stand (a consent
    question's `Agent:`, `App:`, `Tool:`), so an app cannot fake the gateway's question."""
    first, *rest = question.message.split("\n")
    return "\n".join([f"{question.app_name} asks: {first}", *(BLOCK_INDENT + line for line in rest)])


class ElicitationUserAsker:
    def __init__(self, channel: Ask) -> None:
        self.channel = channel

    async def __call__(self, question: UserQuestion) -> UserAnswer | None:
        channel = self.channel
        if channel.modern:
            return None
        key = "app-question-" + secrets.token_urlsafe(8)  # every question is answered on its own
        if question.url is not None:
            if not channel.can_ask_url:
                return None
            elicitation_id = question.elicitation_id or key
            answer = await channel.url(key, question_text(question), question.url, elicitation_id)
        else:
            if not channel.can_ask_form:
                return None
            answer = await channel.form(key, question_text(question), question.schema or EMPTY_FORM)
        return UserAnswer(answer.action, answer.content if answer.action == "accept" else None)
