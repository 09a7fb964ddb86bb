"""Asking the user when an app asks permission in the middle of an operation (an ACP agent).

The question goes through the same prompters as the consent check of the call: the MCP client
(form elicitation, which only the 2025-11-25 generation can do mid-call), the terminal for the
CLI, then the native desktop dialog. It shows the caller, the app, what the agent wants to do
(the title and kind of its tool call), the agent's raw input as the arguments, and the answers
the agent offers. Answers are not stored by the gateway: an "always" answer is the agent's to
remember (its `allow_always` / `reject_always` option).

A consent prompter (`ask(ConsentQuestion)`) is used through `ConsentPrompterAdapter`: the
dialog's "Always allow this tool" stands for the agent's "allow always", "deny and remember"
for its "reject always".
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from ..consent.gate import Prompter
from ..consent.prompt_text import Answer, ConsentQuestion
from ..descriptor import AppDescriptor
from ..executors.base import PermissionAsker, PermissionKind, PermissionRequest

logger = logging.getLogger(__name__)

KIND_TITLES: dict[PermissionKind, str] = {
    "allow_once": "Allow once",
    "allow_always": "Always allow (the agent remembers)",
    "reject_once": "Reject",
    "reject_always": "Always reject (the agent remembers)",
}


@dataclass(frozen=True)
class PermissionQuestion:
    """Who is asking (the MCP client whose call is running), which app, and the app's request."""

    caller: str
    app_name: str
    app_id: str
    source: str
    request: PermissionRequest

    @property
    def offered(self) -> tuple[PermissionKind, ...]:
        """The kinds of answer the agent accepts, in a stable order (allows first)."""
        kinds = {option.kind for option in self.request.options}
        return tuple(kind for kind in KIND_TITLES if kind in kinds)

    def describe(self) -> str:
        options = ", ".join(f"{o.name} ({o.kind})" for o in self.request.options) or "none"
        return (
            f"The agent {self.app_name} ({self.app_id}), working on a request of {self.caller}, asks "
            f"permission for: {self.request.title}"
            + (f" (kind: {self.request.kind})" if self.request.kind else "")
            + f". The agent offers: {options}."
        )


class PermissionPrompter(Protocol):
    """One way to ask; None when it cannot ask now (no capability, no terminal, no desktop)."""

    async def ask_permission(self, question: PermissionQuestion) -> PermissionKind | None: ...


class ConsentPrompterAdapter:
    """Asks a permission question with a consent prompter (terminal, native dialog)."""

    def __init__(self, prompter: Prompter) -> None:
        self.prompter = prompter

    async def ask_permission(self, question: PermissionQuestion) -> PermissionKind | None:
        answer = await self.prompter.ask(consent_question(question))
        return None if answer is None else answer_kind(answer)


def permission_prompters_of(
    prompters: Sequence[Prompter],
    permission_prompters: Sequence[PermissionPrompter] | None,
    dialog: Prompter | None,
) -> list[PermissionPrompter]:
    """Who asks a permission question during a call: the caller's own permission prompters, else
    its consent prompters, then the desktop's dialog when there is one."""
    chosen: list[PermissionPrompter] = (
        [ConsentPrompterAdapter(p) for p in prompters]
        if permission_prompters is None
        else list(permission_prompters)
    )
    if dialog is not None:
        chosen.append(ConsentPrompterAdapter(dialog))
    return chosen


def consent_question(question: PermissionQuestion) -> ConsentQuestion:
    offered = question.offered
    decisions = ["allow_once"]
    if "allow_always" in offered:
        decisions.append("allow_tool")
    decisions.append("deny")
    arguments = question.request.arguments
    return ConsentQuestion(
        caller=f"{question.app_name} (an agent working for {question.caller})",
        app_name=question.app_name,
        app_id=question.app_id,
        source=question.source,
        tool=question.request.title + (f" [{question.request.kind}]" if question.request.kind else ""),
        tool_description=question.describe()
        + " 'Always allow this tool' answers with the agent's own 'allow always' option: the agent, "
        "not the gateway, remembers it.",
        arguments=arguments if isinstance(arguments, Mapping) else {"input": arguments},
        offered=tuple(decisions),
        offer_remember_deny="reject_always" in offered,
    )


def answer_kind(answer: Answer) -> PermissionKind:
    """A consent answer in permission terms: an allow of a tool or of the whole app is the
    agent's "allow always"; a remembered denial its "reject always"."""
    decision, remember = answer
    if decision == "allow_once":
        return "allow_once"
    if decision in ("allow_tool", "allow_app"):
        return "allow_always"
    return "reject_always" if remember else "reject_once"


def permission_asker(
    caller: str, app: AppDescriptor, prompters: Sequence[PermissionPrompter]
) -> PermissionAsker:
    """What an executor calls to ask the user: the first prompter that can ask decides."""

    async def ask(request: PermissionRequest) -> PermissionKind | None:
        question = PermissionQuestion(caller, app.names.primary, app.id, str(app.binding), request)
        for prompter in prompters:
            answer = await prompter.ask_permission(question)
            if answer is not None:
                logger.info("permission caller=%r app=%s %r: %s", caller, app.id, request.title, answer)
                return answer
        logger.info("permission caller=%r app=%s %r: nobody could be asked", caller, app.id, request.title)
        return None

    return ask
