"""The consent gate: stored decisions and config first, then prompters in order, else
CONSENT_REQUIRED with every way out the user has (and never an approval link)."""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from aai_gateway.auth import MemorySecretStore
from aai_gateway.cli.main import build_parser
from aai_gateway.consent import ConsentStore, Decision, parse_config_text
from aai_gateway.consent.gate import ConsentGate, consent_command
from aai_gateway.consent.policy import UNKNOWN_CALLER, ConsentTarget
from aai_gateway.consent.prompt_text import Answer, ConsentQuestion, build_prompt
from aai_gateway.descriptor import AppDescriptor, Source, load_document
from aai_gateway.errors import AaiError, ErrorCode, SecretStoreUnavailableError
from tests.builders import c_descriptor
from tests.consent.apps import NOTES_FILE, NOTES_ID, local_app, web_app

pytestmark = pytest.mark.anyio

CALLER = "Claude Code"
ARGS: dict[str, Any] = {"title": "x"}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Asker:
    """A prompter that answers `answer` (None: cannot ask) and counts the questions."""

    def __init__(self, answer: Answer | None) -> None:
        self.answer = answer
        self.questions: list[ConsentQuestion] = []

    async def ask(self, question: ConsentQuestion) -> Answer | None:
        self.questions.append(question)
        return self.answer


class NoKeyring:
    def _fail(self, *_: object) -> Any:
        raise SecretStoreUnavailableError("no Secret Service")

    get = set = delete = keys = _fail


def gate(config: str = "", secrets: Any = None) -> ConsentGate:
    return ConsentGate(ConsentStore(secrets or MemorySecretStore()), parse_config_text(config).config)


async def check(
    consent: ConsentGate,
    *prompters: Asker,
    app: AppDescriptor | None = None,
    tool: str = "create",
    arguments: Mapping[str, object] = ARGS,
    caller: str = CALLER,
) -> AaiError | None:
    app = app or local_app()
    found = app.tool(tool)
    assert found is not None
    try:
        await consent.check(caller, app, found, arguments, prompters=prompters)
    except AaiError as exc:
        return exc
    return None


async def test_a_stored_grant_allows_without_asking() -> None:
    consent, asker = gate(), Asker(("deny", False))
    consent.store.record_decision(CALLER, local_app(), "create", Decision.ALLOW_TOOL)
    assert await check(consent, asker) is None
    assert asker.questions == []


async def test_prompters_are_asked_in_order_and_the_first_that_can_ask_decides() -> None:
    cannot, allows, never = Asker(None), Asker(("allow_once", False)), Asker(("deny", False))
    assert await check(gate(), cannot, allows, never) is None
    assert (len(cannot.questions), len(allows.questions), len(never.questions)) == (1, 1, 0)
    [question] = allows.questions
    assert (question.caller, question.app_id, question.tool, question.source) == (
        CALLER,
        NOTES_ID,
        "create",
        f"file:{NOTES_FILE}",  # the binding, as the grant command's --source writes it
    )
    assert question.arguments == ARGS


async def test_a_lasting_answer_is_kept_and_the_next_call_is_not_asked() -> None:
    consent, asker = gate(), Asker(("allow_tool", True))
    assert await check(consent, asker) is None
    assert await check(consent, asker) is None
    assert len(asker.questions) == 1


async def test_an_answer_that_was_not_offered_is_a_denial_for_this_call_only() -> None:
    consent = gate("[consent]\nalways_ask = true\n")  # offers allow once and deny only
    error = await check(consent, Asker(("allow_app", True)))
    assert error is not None and error.code is ErrorCode.CONSENT_DENIED
    assert error.data["remembered"] is False
    assert consent.store.load(CALLER, NOTES_ID) is None


async def test_without_a_keyring_the_config_still_decides_and_an_answer_covers_this_call() -> None:
    trusted = gate(f'[consent.auto_allow]\napps = ["{NOTES_ID}"]\n', NoKeyring())
    assert await check(trusted) is None
    consent, asker = gate(secrets=NoKeyring()), Asker(("allow_tool", True))
    assert await check(consent, asker) is None
    assert await check(consent, asker) is None
    assert len(asker.questions) == 2  # nothing could be remembered: asked again


async def test_nobody_to_ask_is_consent_required_with_the_exact_grant_command() -> None:
    error = await check(gate(), Asker(None))
    assert error is not None and error.code is ErrorCode.CONSENT_REQUIRED
    assert error.data["command"] == (
        f"aai-gateway consent grant '--caller={CALLER}' --app={NOTES_ID} --tool=create "
        f"--source=file:{NOTES_FILE}"
    )
    assert error.data["arguments"] == ARGS and error.data["source"] == f"file:{NOTES_FILE}"


@pytest.mark.parametrize(
    "caller",
    [CALLER, "-x", "--caller=evil", "a'b\"c", "$(touch PWNED) `id`", "tab\tand\nnewline", "ünï 名前"],
)
def test_the_printed_commands_parse_back_to_exactly_the_caller_app_tool_and_source(caller: str) -> None:
    target = ConsentTarget(caller, NOTES_ID, f"file:{NOTES_FILE}", "create")
    for action in ("grant", "revoke"):
        argv = shlex.split(consent_command(action, target))
        assert argv[:3] == ["aai-gateway", "consent", action]
        args = build_parser().parse_args(argv[1:])
        assert (args.caller, args.app, args.tool, args.source) == (
            caller,
            NOTES_ID,
            "create",
            f"file:{NOTES_FILE}",
        )


async def test_consent_required_carries_no_link_or_code_that_could_approve_the_call() -> None:
    # The agent reads this error: an approval link in it could be fetched and answered by the
    # agent itself. Only the command (for the user to run) and what to show the user remain.
    error = await check(gate(), Asker(None))
    assert error is not None and error.code is ErrorCode.CONSENT_REQUIRED
    assert "consent_url" not in error.data
    seen = error.message + json.dumps(error.data)
    assert "http://" not in seen and "https://" not in seen and "/consent/" not in seen


async def test_with_always_ask_or_a_nameless_client_no_grant_command_is_offered() -> None:
    for consent, caller, why in (
        (gate("[consent]\nalways_ask = true\n"), CALLER, "always_ask"),
        (gate(), UNKNOWN_CALLER, "sends no name"),
    ):
        error = await check(consent, caller=caller)
        assert error is not None and error.code is ErrorCode.CONSENT_REQUIRED
        assert error.data["command"] is None
        assert why in error.data["no_lasting_grant"]
        assert "aai-gateway consent grant" not in error.message


@pytest.mark.parametrize("where", ["local", "web"])
async def test_consent_required_names_the_config_lines_that_trust_the_tool_and_they_work(
    where: str, tmp_path: Path
) -> None:
    app = local_app() if where == "local" else web_app("https://notes.example:8443")
    consent = ConsentGate(ConsentStore(MemorySecretStore()), config_path=tmp_path / "config.toml")
    error = await check(consent, app=app)
    assert error is not None and error.code is ErrorCode.CONSENT_REQUIRED
    assert error.data["config_file"] == str(tmp_path / "config.toml")
    lines = error.data["auto_allow"]
    named = NOTES_ID if where == "local" else "https://notes.example:8443"
    assert lines == ["[consent.auto_allow]", f'tools = ["{named}/create"]']
    assert str(tmp_path / "config.toml") in error.message and lines[1].partition("= ")[2] in error.message
    trusted = ConsentGate(
        ConsentStore(MemorySecretStore()), parse_config_text("\n".join(lines) + "\n").config
    )
    assert await check(trusted, app=app) is None  # the lines do what the error says


async def test_when_nothing_can_be_remembered_only_once_is_offered_and_no_grant_command_printed() -> None:
    class Forgetful(ConsentStore):
        def can_remember(self) -> bool:
            return False

    consent, asker = ConsentGate(Forgetful(MemorySecretStore())), Asker(None)
    error = await check(consent, asker)
    [question] = asker.questions
    assert question.offered == ("allow_once", "deny") and not question.offer_remember_deny
    assert error is not None and error.data["command"] is None
    assert "cannot be kept" in error.data["no_lasting_grant"]
    assert error.data["auto_allow"]  # the config still works


async def test_a_denial_for_this_call_only_suggests_nothing_to_revoke() -> None:
    error = await check(gate(), Asker(("deny", False)))
    assert error is not None and error.code is ErrorCode.CONSENT_DENIED
    assert error.data["command"] is None and "revoke" not in error.message
    remembered = await check(gate(), Asker(("deny", True)))
    assert remembered is not None and "consent revoke" in remembered.data["command"]


async def test_the_question_shows_what_the_app_declares_about_the_tool_in_fixed_words() -> None:
    document = c_descriptor(NOTES_ID)
    document["tools"][0]["annotations"] = {
        "title": "Delete ALL notes\nAllow: yes",
        "readOnlyHint": False,
        "destructiveHint": True,
        "openWorldHint": False,
    }
    app = load_document(document, Source(kind="file", location=NOTES_FILE), "linux").descriptor
    assert app is not None
    consent, asker = gate(), Asker(("allow_once", False))
    assert await check(consent, asker, app=app, tool=app.tools[0].name) is None
    [question] = asker.questions
    assert question.tool_hints == (
        "changes data",
        "destructive: may delete or overwrite data",
        "closed world: works only on its own data",
    )
    text = build_prompt(question).text
    assert "The app declares (hints, not guarantees):\n  changes data\n  destructive:" in text
    assert "Allow: yes" not in text  # the app's own title is not shown as a hint


async def test_a_tool_without_annotations_is_asked_about_without_hints() -> None:
    consent, asker = gate(), Asker(("allow_once", False))
    assert await check(consent, asker) is None
    assert asker.questions[0].tool_hints == ()
    assert "hints, not guarantees" not in build_prompt(asker.questions[0]).text
