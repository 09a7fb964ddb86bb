"""The permission policy of ACP apps: the user's answer → the agent's option (pure), and how a
question reaches the user's prompters (consent prompters, MCP elicitation) and comes back."""

from __future__ import annotations

from typing import Any

import pytest

from aai_gateway.consent.prompt_text import Answer, ConsentQuestion
from aai_gateway.executors.acp_turn import PermissionChoice, choose_option
from aai_gateway.executors.base import PermissionKind, PermissionOption, PermissionRequest
from aai_gateway.server.permission_prompt import permission_message, permission_schema
from aai_gateway.service.permissions import (
    ConsentPrompterAdapter,
    PermissionQuestion,
    answer_kind,
    consent_question,
    permission_asker,
)
from tests.executors.acp_support import acp_document, write_app

pytestmark = pytest.mark.anyio

EVERY = (
    PermissionOption("a1", "Allow", "allow_once"),
    PermissionOption("a2", "Always", "allow_always"),
    PermissionOption("r1", "Reject", "reject_once"),
    PermissionOption("r2", "Never", "reject_always"),
)


def only(*kinds: PermissionKind) -> tuple[PermissionOption, ...]:
    return tuple(option for option in EVERY if option.kind in kinds)


@pytest.mark.parametrize(
    ("options", "answer", "expected"),
    [
        (EVERY, "allow_once", PermissionChoice("a1", "allow_once", True)),
        (EVERY, "allow_always", PermissionChoice("a2", "allow_always", True)),
        (EVERY, "reject_once", PermissionChoice("r1", "reject_once", True)),
        (EVERY, "reject_always", PermissionChoice("r2", "reject_always", True)),
        # nobody could be asked: a refusal for now, never a lasting one, and never an allow
        (EVERY, None, PermissionChoice("r1", "reject_once", False)),
        (only("allow_once", "allow_always", "reject_always"), None, PermissionChoice(None, None, False)),
        # an allow is never widened: once does not become always
        (only("allow_always", "reject_once"), "allow_once", PermissionChoice(None, None, True)),
        (only("allow_once", "reject_once"), "allow_always", PermissionChoice("a1", "allow_once", True)),
        # a refusal falls back to the other refusal, then to "cancelled"
        (only("allow_once", "reject_always"), "reject_once", PermissionChoice("r2", "reject_always", True)),
        (only("allow_once", "reject_once"), "reject_always", PermissionChoice("r1", "reject_once", True)),
        (only("allow_once"), "reject_once", PermissionChoice(None, None, True)),
        ((), "allow_once", PermissionChoice(None, None, True)),
    ],
)
def test_the_users_answer_picks_the_agents_option_without_ever_widening_it(
    options: tuple[PermissionOption, ...], answer: PermissionKind | None, expected: PermissionChoice
) -> None:
    assert choose_option(options, answer) == expected


@pytest.mark.parametrize(
    ("answer", "kind"),
    [
        (("allow_once", False), "allow_once"),
        (("allow_tool", True), "allow_always"),
        (("allow_app", True), "allow_always"),
        (("deny", False), "reject_once"),
        (("deny", True), "reject_always"),
    ],
)
def test_a_consent_answer_means_the_matching_kind_of_permission(answer: Answer, kind: str) -> None:
    assert answer_kind(answer) == kind


def question(options: tuple[PermissionOption, ...] = EVERY, arguments: Any = None) -> PermissionQuestion:
    request = PermissionRequest(
        "Write file a.txt", "edit", {"path": "a.txt"} if arguments is None else arguments, options
    )
    return PermissionQuestion("claude-code", "Test Agent", "dev.test.acpagent", "/apps/aai.json", request)


def test_a_permission_question_shows_the_caller_app_action_input_and_the_agents_options() -> None:
    consent = consent_question(question())
    assert "claude-code" in consent.caller and "Test Agent" in consent.caller
    assert consent.tool == "Write file a.txt [edit]"
    assert consent.arguments == {"path": "a.txt"}
    assert (
        "Allow (allow_once)" in consent.tool_description
        and "Never (reject_always)" in consent.tool_description
    )
    assert consent.offered == ("allow_once", "allow_tool", "deny")
    assert consent.offer_remember_deny
    narrow = consent_question(question(only("allow_once", "reject_once"), arguments=["rm", "-rf", "x"]))
    assert narrow.offered == ("allow_once", "deny") and not narrow.offer_remember_deny
    assert narrow.arguments == {"input": ["rm", "-rf", "x"]}


def test_the_elicitation_form_offers_exactly_the_kinds_the_agent_offers_under_the_agents_names() -> None:
    form = permission_schema(question(only("allow_once", "reject_once")))
    choices = form["properties"]["decision"]["oneOf"]
    assert [c["const"] for c in choices] == ["allow_once", "reject_once"]
    assert "Allow" in choices[0]["title"] and "Reject" in choices[1]["title"]
    message = permission_message(question())
    assert "claude-code" in message and "Write file a.txt" in message and '"path": "a.txt"' in message


class Recorder:
    def __init__(self, answer: Answer | None) -> None:
        self.answer = answer
        self.asked: list[ConsentQuestion] = []

    async def ask(self, question: ConsentQuestion) -> Answer | None:
        self.asked.append(question)
        return self.answer


async def test_the_first_prompter_that_can_ask_decides_and_none_means_nobody_could_ask(tmp_path: Any) -> None:
    app = write_app(tmp_path / "app", acp_document())
    request = question().request
    cannot, denies, allows = Recorder(None), Recorder(("deny", True)), Recorder(("allow_once", False))
    adapters = [ConsentPrompterAdapter(p) for p in (cannot, denies, allows)]
    assert await permission_asker("agent-x", app, adapters)(request) == "reject_always"
    assert len(cannot.asked) == 1 and len(denies.asked) == 1 and not allows.asked
    assert "agent-x" in denies.asked[0].caller
    assert await permission_asker("agent-x", app, [ConsentPrompterAdapter(cannot)])(request) is None
    assert await permission_asker("agent-x", app, [])(request) is None
