"""The consent page: a one-time local page where the user answers a consent question.

Used when the MCP client cannot show a form but supports URL elicitation: the client opens it
for the user. Its link never reaches the model (no error or result carries it), so an agent that
can fetch pages cannot answer it for the user. It
shows what every consent prompt shows (`prompt_text`: caller, app, id, source, tool, what the
tool does, the call's arguments; control and bidi characters as visible escapes), HTML-escaped,
and one button per offered choice. The defences of every local page (unguessable token, Host,
CSRF, Origin, strict CSP, no scripts) are in `pages/local_page.py`.
"""

from __future__ import annotations

import logging
import re
from typing import ClassVar

from starlette.responses import Response

from ..pages import html as tpl
from ..pages.local_page import LocalPage
from .prompt_text import (
    FIELD_LIMIT,
    LONG_FIELD_LIMIT,
    SOURCE_LIMIT,
    Answer,
    Choice,
    ConsentQuestion,
    arguments_json,
    build_prompt,
    shown_block,
    shown_line,
)

logger = logging.getLogger(__name__)

CHOICE_FIELD = "choice"
PAGE_DESCRIPTION_LINES = 40
PAGE_ARGUMENT_LINES = 200
PAGE_WRAP_WIDTH = 100
_WORD = re.compile(r"[^\s<>]+")  # escaped text has no `<` or `>` of its own
_WIDE = re.compile(r"[\u1100-\u115f\u2e80-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef]")

_DONE_TEXT = {
    "allow_once": "Allowed for this call. The agent can go ahead now.",
    "allow_tool": "Allowed: this agent may use this tool from now on. The agent can go ahead now.",
    "allow_app": "Allowed: this agent may use every tool of this app from now on. The agent can go ahead.",
    "deny": "Denied. The agent is told that you said no.",
}


class ConsentPage(LocalPage[Answer]):
    path_prefix: ClassVar[str] = "/consent/"
    kind: ClassVar[str] = "consent page"

    def __init__(
        self,
        question: ConsentQuestion,
        *,
        timeout_seconds: float = 600,
    ) -> None:
        super().__init__(subject=question.app_id, lang="en", timeout_seconds=timeout_seconds)
        self.question = question
        self.prompt = build_prompt(question)  # the choices offered, with their labels

    async def accept(self, form: dict[str, str]) -> Answer | Response:
        choice = self.prompt.choice(form.get(CHOICE_FIELD, ""))
        if choice is None:
            return self.render_form(400, [tpl.FieldError("Choose one of the buttons.")], {})
        logger.info("consent page for %s answered: %s", self.question.app_id, choice.key)
        return choice.answer

    def accepted(self, value: Answer) -> Response:
        decision, remembered = value
        text = _DONE_TEXT[decision]
        if decision == "deny" and remembered:
            text = "Denied, and remembered: this agent will not be asked again for this tool."
        return self.message(200, "Your answer was recorded. You can close this tab.", text, ok=True)

    def render_form(self, status: int, errors: list[tpl.FieldError], keep: dict[str, str]) -> Response:
        return self.html(
            status, render_consent_page(self.question, self.prompt.listed, self.path, self.csrf, errors)
        )


def _block(value: str, max_lines: int) -> str:
    lines, hidden = shown_block(value, max_lines, PAGE_WRAP_WIDTH)
    text = "\n".join(line.removeprefix("  ") for line in lines)
    if hidden:
        text += f"\n… ({hidden} more line{'s' if hidden != 1 else ''} not shown)"
    return _words_whole(tpl.escape_html(text))


def _words_whole(html: str) -> str:
    """Escaped text whose words the browser may not break (not even after a hyphen or a slash,
    which it otherwise does in a narrow window): lines break at spaces only. Words with
    Chinese or Japanese characters are left to the browser, which breaks them between
    characters as those languages are written."""
    return _WORD.sub(lambda m: m[0] if _WIDE.search(m[0]) else f'<span class="word">{m[0]}</span>', html)


def _button_class(choice: Choice) -> str:
    return ' class="deny"' if choice.key.startswith("deny") else ""


def render_consent_page(
    question: ConsentQuestion,
    choices: tuple[Choice, ...],
    action: str,
    csrf: str,
    errors: list[tpl.FieldError],
) -> str:
    e = tpl.escape_html
    caller = e(shown_line(question.caller, FIELD_LIMIT))
    app = e(shown_line(question.app_name, FIELD_LIMIT))
    tool = e(shown_line(question.tool, FIELD_LIMIT))
    facts = [
        ("Agent", caller),
        ("App", app),
        ("App id", f'<code class="whole">{e(shown_line(question.app_id, LONG_FIELD_LIMIT))}</code>'),
        ("Described by", f'<span class="whole">{e(shown_line(question.source, SOURCE_LIMIT))}</span>'),
        ("Tool", f'<code class="whole">{tool}</code>'),
    ]
    fact_list = "\n".join(f"<dt>{name}</dt><dd>{value}</dd>" for name, value in facts)
    buttons = "\n".join(
        f'<button type="submit" name="{CHOICE_FIELD}" value="{choice.key}"{_button_class(choice)}>'
        f"{e(choice.label)}</button>"
        for choice in choices
    )
    description = _block(question.tool_description or "(no description)", PAGE_DESCRIPTION_LINES)
    arguments = _block(arguments_json(question.arguments), PAGE_ARGUMENT_LINES)
    problems = "".join(f'<p class="errors" role="alert">{e(error.message)}</p>' for error in errors)
    body = "\n".join(
        [
            f"<h1>Allow {caller} to use {tool} of {app}?</h1>",
            "<p>An AI agent asks to use a tool through AAI Gateway. Nothing runs until you answer.</p>",
            f'<dl class="facts">\n{fact_list}\n</dl>',
            "<h2>What the tool does</h2>",
            f'<pre class="block">{description}</pre>',
            "<h2>Arguments of this call</h2>",
            f'<pre class="block">{arguments}</pre>',
            problems,
            f'<form method="post" action="{e(action)}" enctype="application/x-www-form-urlencoded">',
            f'<input type="hidden" name="{tpl.CSRF_FIELD}" value="{e(csrf)}">',
            f'<div class="choices">\n{buttons}\n</div>',
            "</form>",
            '<p class="note">"Always" answers are kept for this agent and this app as described by that '
            "source; <code>aai-gateway consent list</code> shows them and where they are kept, and "
            "<code>aai-gateway consent revoke</code> forgets them. This page works once.</p>",
        ]
    )
    return tpl.document(f"Allow {shown_line(question.tool, 40)}? — AAI Gateway", "en", body)
