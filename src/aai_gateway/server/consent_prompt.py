"""Asking the user for consent through the MCP client (form-mode elicitation, both generations).

The form shows what the native dialog and the terminal show (`prompt_text.build_prompt`): who
asks (the client's name), which app and tool, what the tool does and the actual arguments of
this call, with control and bidi characters in names shown as escapes, so that a client name or
an app name cannot fake a line of the question.
"""

from __future__ import annotations

import hashlib
import json
import logging
from typing import Any

from anyio.abc import TaskGroup

from ..consent.gate import AskingFailedError, call_digest
from ..consent.page import ConsentPage
from ..consent.prompt_text import (
    DENY,
    EVERY_DECISION,
    Answer,
    ConsentQuestion,
    build_prompt,
    shown_line,
)
from .ask import Ask, NeedInput, choice_property
from .pages import PAGE_TIMEOUT_SECONDS, PageFailedError, Pages, TooManyPagesError

logger = logging.getLogger(__name__)

PAGE_FAILED = "the consent page failed (a gateway error: its log says why)"
CHOICE_TITLES = {
    "allow_once": "Allow once",
    "allow_tool": "Always allow this tool",
    "allow_app": "Always allow all tools of this app",
    "deny": "Deny",
}


def consent_message(question: ConsentQuestion) -> str:
    return build_prompt(question).text


def consent_schema(question: ConsentQuestion, protocol_version: str | None = None) -> dict[str, Any]:
    choices = [(c, CHOICE_TITLES[c]) for c in CHOICE_TITLES if c in question.offered]
    properties: dict[str, Any] = {"decision": choice_property("Allow this?", choices, protocol_version)}
    if question.offer_remember_deny:
        properties["remember"] = {
            "type": "boolean",
            "title": "If you deny: remember it for this tool",
            "default": False,
        }
    return {"type": "object", "properties": properties, "required": ["decision"]}


def question_key(question: ConsentQuestion) -> str:
    """What one consent question is about (caller, app id, binding, tool, arguments): an answer
    is kept and taken under this key only, so it can never stand for another question."""
    what = [question.caller, question.app_id, question.source, question.tool, call_digest(question.arguments)]
    return hashlib.sha256(json.dumps(what, ensure_ascii=False).encode("utf-8", "surrogatepass")).hexdigest()[
        :32
    ]


class ElicitationPrompter:
    def __init__(self, channel: Ask) -> None:
        self.channel = channel

    async def ask(self, question: ConsentQuestion) -> Answer | None:
        if not self.channel.can_ask_form:
            return None
        try:
            key = f"consent:{question_key(question)}"
            schema = consent_schema(question, self.channel.protocol_version)
            answer = await self.channel.form(key, consent_message(question), schema)
        except NeedInput:
            raise
        except Exception:  # the client failed to ask: not an answer; the next way of asking is tried
            logger.warning("consent elicitation failed", exc_info=True)
            return None
        content = answer.content or {}
        decision = next((d for d in EVERY_DECISION if d == content.get("decision")), None)
        if answer.action != "accept" or decision is None or decision not in question.offered:
            return DENY  # declined or dismissed: no, this time
        remember = bool(content.get("remember")) and decision == "deny" and question.offer_remember_deny
        return (decision, remember)


class UrlConsentPrompter:
    """For a client that supports URL-mode elicitation but not forms: the question on a one-time
    local page, which the client opens for the user; the call goes on once they answered."""

    def __init__(self, channel: Ask, pages: Pages[Answer], tasks: TaskGroup | None) -> None:
        self.channel = channel
        self.pages = pages
        self.tasks = tasks

    async def ask(self, question: ConsentQuestion) -> Answer | None:
        if self.tasks is None or self.channel.can_ask_form or not self.channel.can_ask_url:
            return None
        key = question_key(question)
        # Asked again in this call (it ran once the user saved a credential): the page's answer
        # holds, as a form's does; the page itself is gone once its answer was collected.
        answered: Answer | None = self.channel.memory.values.get(f"consent_answer:{key}")
        if answered is not None:
            return answered
        page_id: str | None = self.channel.memory.values.get(f"consent_page:{key}")
        if page_id is None or self.pages.url(page_id) is None:
            page = ConsentPage(question, timeout_seconds=PAGE_TIMEOUT_SECONDS)
            try:
                page_id = await self.pages.open(self.tasks, page)
            except TooManyPagesError as exc:  # the call is refused the way a client that cannot ask is
                logger.warning("no consent page for %s: %s", question.tool, exc)
                return None
            self.channel.memory.values[f"consent_page:{key}"] = page_id
        url = self.pages.url(page_id)
        if url is None:
            return None
        message = (
            f"{shown_line(question.caller)} asks to use {shown_line(question.tool)} of "
            f"{shown_line(question.app_name)}. Open the page to allow or deny it."
        )
        try:
            reply = await self.channel.url(f"consent-page:{key}", message, url, page_id)
        except NeedInput:
            raise
        except Exception:
            logger.warning("consent URL elicitation failed", exc_info=True)
            return None
        if reply.action != "accept":
            return DENY
        try:
            answer = await self.pages.result(page_id)
        except PageFailedError:  # a bug, not the user: no answer, and no denial either
            raise AskingFailedError(PAGE_FAILED) from None
        if not self.channel.modern:
            await self.channel.ctx.session.send_elicit_complete(page_id)
        answered = answer if answer is not None else DENY
        self.channel.memory.values[f"consent_answer:{key}"] = answered
        return answered
