"""The consent policy: every rule of `evaluate`, every decision of `apply`, `revoke`, isolation."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from aai_gateway.consent import (
    EVERY_DECISION,
    ONCE_ONLY,
    UNKNOWN_CALLER,
    ConsentConfig,
    ConsentRecord,
    ConsentTarget,
    Decision,
    Outcome,
    SourceGrants,
    ToolGrant,
    Verdict,
    apply,
    auto_allow_entry,
    caller_name,
    evaluate,
    is_local_binding,
    new_record,
    parse_config_text,
    revoke,
)
from tests.consent.apps import EVIL, NOTES_FILE, NOTES_ID, bundled_app, local_app, web_app

CALLER = "Claude Code"
OTHER_CALLER = "cursor-vscode"
LOCAL = f"file:{NOTES_FILE}"
WEB = EVIL
NOW = 1_700_000_000.0
NO_CONFIG = ConsentConfig()


def target(
    tool: str = "create", *, caller: str = CALLER, binding: str = LOCAL, app_id: str = NOTES_ID
) -> ConsentTarget:
    return ConsentTarget(caller, app_id, binding, tool)


def config(text: str) -> ConsentConfig:
    loaded = parse_config_text(text)
    assert loaded.problems == (), [p.render() for p in loaded.problems]
    return loaded.config


def decided(*steps: tuple[ConsentTarget, Decision, bool]) -> ConsentRecord | None:
    """The record after these answers, each (target, decision, remember_deny), in order."""
    record: ConsentRecord | None = None
    for step_target, decision, remember in steps:
        record = apply(record, step_target, decision, now=NOW, remember_deny=remember)
    return record


ALWAYS_ASK = config("[consent]\nalways_ask = true\n")
AUTO_APP = config(f'[consent.auto_allow]\napps = ["{NOTES_ID}"]\n')
AUTO_TOOL = config(f'[consent.auto_allow]\ntools = ["{NOTES_ID}/create"]\n')
AUTO_APP_ALWAYS_ASK = config(f'[consent]\nalways_ask = true\n[consent.auto_allow]\napps = ["{NOTES_ID}"]\n')


# --------------------------------------------------------------------------- evaluate


def test_without_a_record_the_user_is_asked_with_every_decision_offered() -> None:
    verdict = evaluate(None, target(), NO_CONFIG)
    assert verdict.outcome is Outcome.ASK
    assert verdict.choices == EVERY_DECISION
    assert "no decision" in verdict.reason and CALLER in verdict.reason


ALLOW_TOOL = (target(), Decision.ALLOW_TOOL, False)
ALLOW_APP = (target(), Decision.ALLOW_APP, False)
DENY_REMEMBERED = (target(), Decision.DENY, True)


@pytest.mark.parametrize(
    ("steps", "settings", "outcome", "reason_part"),
    [
        # rule 1: a remembered denial beats everything
        ((DENY_REMEMBERED,), NO_CONFIG, Outcome.DENY, "remembered denial"),
        ((DENY_REMEMBERED,), AUTO_APP, Outcome.DENY, "remembered denial"),
        ((DENY_REMEMBERED,), AUTO_TOOL, Outcome.DENY, "remembered denial"),
        ((DENY_REMEMBERED,), ALWAYS_ASK, Outcome.DENY, "remembered denial"),
        ((ALLOW_APP, DENY_REMEMBERED), NO_CONFIG, Outcome.DENY, "remembered denial"),
        # rule 2: auto_allow beats always_ask and needs no record
        ((), AUTO_APP, Outcome.ALLOW, "auto_allow"),
        ((), AUTO_TOOL, Outcome.ALLOW, "auto_allow"),
        ((), AUTO_APP_ALWAYS_ASK, Outcome.ALLOW, "auto_allow"),
        # rule 3: always_ask ignores remembered allows
        ((ALLOW_TOOL,), ALWAYS_ASK, Outcome.ASK, "always_ask"),
        ((ALLOW_APP,), ALWAYS_ASK, Outcome.ASK, "always_ask"),
        ((), ALWAYS_ASK, Outcome.ASK, "always_ask"),
        # rules 4 and 5: remembered allows
        ((ALLOW_APP,), NO_CONFIG, Outcome.ALLOW, "every tool"),
        ((ALLOW_TOOL,), NO_CONFIG, Outcome.ALLOW, "tool allowed"),
        ((ALLOW_TOOL, ALLOW_APP), NO_CONFIG, Outcome.ALLOW, "every tool"),
        # rule 6
        ((), NO_CONFIG, Outcome.ASK, "no decision"),
    ],
)
def test_evaluate_applies_the_rules_in_their_documented_order(
    steps: tuple[tuple[ConsentTarget, Decision, bool], ...],
    settings: ConsentConfig,
    outcome: Outcome,
    reason_part: str,
) -> None:
    verdict = evaluate(decided(*steps), target(), settings)
    assert verdict.outcome is outcome
    assert reason_part in verdict.reason


def test_always_ask_offers_only_allow_once_and_deny() -> None:
    verdict = evaluate(decided(ALLOW_TOOL), target(), ALWAYS_ASK)
    assert verdict.choices == ONCE_ONLY == (Decision.ALLOW_ONCE, Decision.DENY)


def test_a_remembered_denial_is_reported_as_remembered_and_an_allow_is_not() -> None:
    denied = evaluate(decided(DENY_REMEMBERED), target(), NO_CONFIG)
    allowed = evaluate(decided(ALLOW_TOOL), target(), NO_CONFIG)
    assert denied.remembered and denied.denied and not denied.allowed
    assert not allowed.remembered and allowed.allowed and not allowed.must_ask


def test_a_tool_grant_allows_that_tool_only() -> None:
    record = decided(ALLOW_TOOL)
    assert evaluate(record, target("create"), NO_CONFIG).allowed
    assert evaluate(record, target("list"), NO_CONFIG).must_ask


def test_an_app_grant_allows_every_tool_including_ones_the_app_adds_later() -> None:
    record = decided(ALLOW_APP)
    for tool in ("create", "list", "added-in-version-2"):
        assert evaluate(record, target(tool), NO_CONFIG).allowed


def test_a_tool_auto_allow_entry_covers_only_that_tool() -> None:
    assert evaluate(None, target("create"), AUTO_TOOL).allowed
    assert evaluate(None, target("list"), AUTO_TOOL).must_ask


def test_a_timestamp_out_of_range_still_gives_a_reason() -> None:
    record = ConsentRecord(
        caller=CALLER,
        app_id=NOTES_ID,
        sources={LOCAL: SourceGrants(tools={"create": ToolGrant(allowed=True, decided_at=1e300)})},
    )
    verdict = evaluate(record, target(), NO_CONFIG)
    assert verdict.allowed and "unknown time" in verdict.reason


# --------------------------------------------------------------------------- apply


@pytest.mark.parametrize("decision", [Decision.ALLOW_ONCE, Decision.DENY])
def test_allow_once_and_an_unremembered_denial_store_nothing(decision: Decision) -> None:
    empty = apply(None, target(), decision, now=NOW)
    assert empty == new_record(CALLER, NOTES_ID) and empty.empty
    existing = decided(ALLOW_TOOL)
    assert existing is not None
    assert apply(existing, target(), decision, now=NOW + 1) == existing


@pytest.mark.parametrize(
    ("decision", "remember_deny", "expected"),
    [
        (Decision.ALLOW_TOOL, False, SourceGrants(tools={"create": ToolGrant(allowed=True, decided_at=NOW)})),
        (Decision.ALLOW_TOOL, True, SourceGrants(tools={"create": ToolGrant(allowed=True, decided_at=NOW)})),
        (Decision.ALLOW_APP, False, SourceGrants(all_tools=True, all_tools_at=NOW)),
        (Decision.ALLOW_APP, True, SourceGrants(all_tools=True, all_tools_at=NOW)),
        (Decision.DENY, True, SourceGrants(tools={"create": ToolGrant(allowed=False, decided_at=NOW)})),
    ],
)
def test_each_remembered_decision_stores_exactly_its_grant(
    decision: Decision, remember_deny: bool, expected: SourceGrants
) -> None:
    record = apply(None, target(), decision, now=NOW, remember_deny=remember_deny)
    assert record == ConsentRecord(caller=CALLER, app_id=NOTES_ID, sources={LOCAL: expected})


def test_allow_app_after_a_remembered_denial_allows_the_denied_tool_too() -> None:
    record = decided(
        (target("list"), Decision.DENY, True), (target("create"), Decision.ALLOW_TOOL, False), ALLOW_APP
    )
    assert record is not None
    assert record.grants(LOCAL) == SourceGrants(all_tools=True, all_tools_at=NOW)
    assert evaluate(record, target("list"), NO_CONFIG).allowed


def test_a_remembered_denial_after_allow_app_makes_that_tool_the_one_exception() -> None:
    record = decided(ALLOW_APP, (target("list"), Decision.DENY, True))
    assert evaluate(record, target("list"), NO_CONFIG).denied
    assert evaluate(record, target("create"), NO_CONFIG).allowed


def test_allow_tool_replaces_a_remembered_denial_of_that_tool() -> None:
    record = decided(DENY_REMEMBERED, ALLOW_TOOL)
    assert evaluate(record, target(), NO_CONFIG).allowed


def test_apply_refuses_a_record_of_another_caller_or_app() -> None:
    record = decided(ALLOW_TOOL)
    with pytest.raises(ValueError, match="not for"):
        apply(record, target(caller=OTHER_CALLER), Decision.ALLOW_TOOL, now=NOW)
    with pytest.raises(ValueError, match="not for"):
        apply(record, target(app_id="com.other.app"), Decision.ALLOW_TOOL, now=NOW)


# --------------------------------------------------------------------------- revoke


def test_revoking_one_tool_forgets_its_grant_or_its_denial_and_nothing_else() -> None:
    record = decided(ALLOW_TOOL, (target("list"), Decision.DENY, True))
    assert record is not None
    after = revoke(record, binding=LOCAL, tool="list")
    assert evaluate(after, target("list"), NO_CONFIG).must_ask
    assert evaluate(after, target("create"), NO_CONFIG).allowed


def test_revoking_one_tool_leaves_an_app_wide_grant_which_needs_revoking_the_app() -> None:
    record = decided(ALLOW_APP)
    assert record is not None
    assert evaluate(revoke(record, tool="create"), target(), NO_CONFIG).allowed
    assert evaluate(revoke(record), target(), NO_CONFIG).must_ask


def test_revoking_one_binding_keeps_the_others_and_revoking_all_empties_the_record() -> None:
    record = decided(ALLOW_APP, (target(binding=WEB), Decision.ALLOW_APP, False))
    assert record is not None
    only_web = revoke(record, binding=LOCAL)
    assert set(only_web.sources) == {WEB}
    assert revoke(record) == new_record(CALLER, NOTES_ID)
    assert revoke(record).empty


def test_revoking_what_is_not_there_returns_the_same_record() -> None:
    record = decided(ALLOW_TOOL)
    assert record is not None
    assert revoke(record, binding=WEB) == record
    assert revoke(record, tool="never-decided") == record


# --------------------------------------------------------------------------- isolation


def test_a_grant_to_one_caller_is_invisible_to_another() -> None:
    record = decided(ALLOW_APP, DENY_REMEMBERED)
    for tool in ("create", "list"):
        verdict = evaluate(record, target(tool, caller=OTHER_CALLER), NO_CONFIG)
        assert verdict.must_ask and verdict.choices == EVERY_DECISION


def test_a_record_of_another_app_id_is_never_consulted() -> None:
    record = decided(ALLOW_APP)
    assert evaluate(record, target(app_id="com.other.app"), NO_CONFIG).must_ask


def test_a_web_app_claiming_a_local_apps_id_gets_none_of_its_grants() -> None:
    record = decided(ALLOW_APP, ALLOW_TOOL)
    assert evaluate(record, target(binding=WEB), NO_CONFIG).must_ask


def test_granting_the_web_claimant_does_not_grant_the_local_app() -> None:
    record = decided((target(binding=WEB), Decision.ALLOW_APP, False))
    assert evaluate(record, target(binding=WEB), NO_CONFIG).allowed
    assert evaluate(record, target(binding=LOCAL), NO_CONFIG).must_ask
    assert evaluate(record, target(binding="bundled"), NO_CONFIG).must_ask


def test_a_local_file_and_the_bundled_descriptor_of_one_id_keep_separate_grants() -> None:
    record = decided((target(binding="bundled"), Decision.ALLOW_APP, False))
    assert evaluate(record, target(binding="bundled"), NO_CONFIG).allowed
    assert evaluate(record, target(binding=LOCAL), NO_CONFIG).must_ask


def test_an_id_entry_trusts_local_and_bundled_descriptors_but_never_a_web_claimant() -> None:
    assert auto_allow_entry(AUTO_APP, ConsentTarget.of(CALLER, local_app(), "create")) is not None
    assert auto_allow_entry(AUTO_APP, ConsentTarget.of(CALLER, bundled_app(), "create")) is not None
    assert auto_allow_entry(AUTO_APP, ConsentTarget.of(CALLER, web_app(EVIL), "create")) is None
    assert evaluate(None, ConsentTarget.of(CALLER, web_app(EVIL), "create"), AUTO_APP).must_ask


def test_an_origin_entry_trusts_only_the_web_app_from_that_origin() -> None:
    trusted = config('[consent.auto_allow]\napps = ["https://api.example.com"]\n')
    good = web_app("https://api.example.com")
    assert evaluate(None, ConsentTarget.of(CALLER, good, "list"), trusted).allowed
    assert evaluate(None, ConsentTarget.of(CALLER, web_app(EVIL), "list"), trusted).must_ask
    assert evaluate(None, ConsentTarget.of(CALLER, web_app("https://example.com"), "list"), trusted).must_ask
    assert evaluate(None, ConsentTarget.of(CALLER, local_app(), "list"), trusted).must_ask


def test_an_auto_allow_entry_applies_to_every_caller() -> None:
    for caller in (CALLER, OTHER_CALLER, UNKNOWN_CALLER):
        assert evaluate(None, target(caller=caller), AUTO_APP).allowed


# --------------------------------------------------------------------------- names and bindings


@pytest.mark.parametrize(
    ("given_name", "expected"),
    [(None, UNKNOWN_CALLER), ("", UNKNOWN_CALLER), ("   ", UNKNOWN_CALLER), (" Claude Code ", "Claude Code")],
)
def test_the_caller_is_the_client_info_name_or_unknown_client(given_name: str | None, expected: str) -> None:
    assert caller_name(given_name) == expected


def test_a_target_binds_to_the_same_source_as_credentials() -> None:
    for app in (local_app(), bundled_app(), web_app(EVIL)):
        made = ConsentTarget.of(CALLER, app, "list")
        assert made == ConsentTarget(CALLER, app.id, str(app.binding), "list")
    assert ConsentTarget.of(CALLER, web_app(EVIL), "list").binding == EVIL


@pytest.mark.parametrize(
    ("binding", "local"),
    [
        ("bundled", True),
        (LOCAL, True),
        ("file:C:\\apps\\aai.json", True),
        (WEB, False),
        ("https://x/y", False),
    ],
)
def test_only_file_and_bundled_bindings_count_as_local(binding: str, local: bool) -> None:
    assert is_local_binding(binding) is local


# --------------------------------------------------------------------------- properties

CALLERS = st.sampled_from([CALLER, OTHER_CALLER, UNKNOWN_CALLER, "a-b", "a"]) | st.text(
    min_size=1, max_size=8
)
BINDINGS = st.sampled_from([LOCAL, "bundled", WEB, "https://api.example.com"])
TOOLS = st.sampled_from(["create", "list", "delete"]) | st.text(min_size=1, max_size=6)
TARGETS = st.builds(ConsentTarget, CALLERS, st.sampled_from([NOTES_ID, "b-c"]), BINDINGS, TOOLS)
ANSWERS = st.tuples(st.sampled_from(list(Decision)), st.booleans())


@st.composite
def histories(draw: st.DrawFn) -> tuple[ConsentRecord, ConsentTarget]:
    """A record built by a random run of answers and revocations for one caller and app id, and a
    target of that caller and app (in any binding, for any tool)."""
    focus = draw(TARGETS)
    record = new_record(focus.caller, focus.app_id)
    for _ in range(draw(st.integers(0, 8))):
        step = ConsentTarget(focus.caller, focus.app_id, draw(BINDINGS), draw(TOOLS))
        if draw(st.integers(0, 5)) == 0:
            record = revoke(
                record,
                binding=draw(st.none() | st.just(step.binding)),
                tool=draw(st.none() | st.just(step.tool)),
            )
        else:
            decision, remember = draw(ANSWERS)
            record = apply(record, step, decision, now=draw(st.floats(0, 2e9)), remember_deny=remember)
    return record, focus


def outcomes(record: ConsentRecord, probes: list[ConsentTarget]) -> list[Verdict]:
    return [evaluate(record, probe, NO_CONFIG) for probe in probes]


@given(histories(), TOOLS, BINDINGS)
def test_after_allow_tool_that_tool_is_allowed_and_every_other_verdict_is_unchanged(
    history: tuple[ConsentRecord, ConsentTarget], other_tool: str, other_binding: str
) -> None:
    record, focus = history
    after = apply(record, focus, Decision.ALLOW_TOOL, now=NOW)
    grants = after.grants(focus.binding)
    assert evaluate(after, focus, NO_CONFIG).allowed
    others = [
        ConsentTarget(focus.caller, focus.app_id, focus.binding, other_tool),
        ConsentTarget(focus.caller, focus.app_id, other_binding, focus.tool),
    ]
    others = [o for o in others if o != focus]
    assert [v.outcome for v in outcomes(after, others)] == [v.outcome for v in outcomes(record, others)]
    assert grants.tools[focus.tool].allowed


@given(TARGETS, TOOLS)
def test_from_nothing_allow_tool_allows_that_tool_and_asks_for_another(
    focus: ConsentTarget, other_tool: str
) -> None:
    after = apply(None, focus, Decision.ALLOW_TOOL, now=NOW)
    other = ConsentTarget(focus.caller, focus.app_id, focus.binding, other_tool)
    assert evaluate(after, focus, NO_CONFIG).allowed
    if other_tool != focus.tool:
        assert evaluate(after, other, NO_CONFIG).must_ask


@given(histories(), st.lists(TOOLS, max_size=4))
def test_after_allow_app_every_tool_of_that_binding_is_allowed(
    history: tuple[ConsentRecord, ConsentTarget], tools: list[str]
) -> None:
    record, focus = history
    after = apply(record, focus, Decision.ALLOW_APP, now=NOW)
    for tool in [focus.tool, *tools]:
        assert evaluate(
            after, ConsentTarget(focus.caller, focus.app_id, focus.binding, tool), NO_CONFIG
        ).allowed


@given(histories(), TOOLS)
def test_after_a_remembered_denial_that_tool_is_denied_and_other_tools_are_unchanged(
    history: tuple[ConsentRecord, ConsentTarget], other_tool: str
) -> None:
    record, focus = history
    after = apply(record, focus, Decision.DENY, now=NOW, remember_deny=True)
    verdict = evaluate(after, focus, NO_CONFIG)
    assert verdict.denied and verdict.remembered
    assert evaluate(after, focus, ALWAYS_ASK).denied
    assert evaluate(after, focus, AUTO_APP).denied
    if other_tool != focus.tool:
        other = ConsentTarget(focus.caller, focus.app_id, focus.binding, other_tool)
        assert evaluate(after, other, NO_CONFIG).outcome is evaluate(record, other, NO_CONFIG).outcome


@given(histories(), st.booleans())
def test_answers_that_are_not_remembered_never_change_the_record(
    history: tuple[ConsentRecord, ConsentTarget], remember: bool
) -> None:
    record, focus = history
    assert apply(record, focus, Decision.ALLOW_ONCE, now=NOW, remember_deny=remember) == record
    assert apply(record, focus, Decision.DENY, now=NOW, remember_deny=False) == record


@given(histories(), CALLERS, ANSWERS)
def test_no_answer_of_one_caller_changes_what_another_caller_is_told(
    history: tuple[ConsentRecord, ConsentTarget], other_caller: str, answer: tuple[Decision, bool]
) -> None:
    record, focus = history
    decision, remember = answer
    after = apply(record, focus, decision, now=NOW, remember_deny=remember)
    if other_caller != focus.caller:
        other = ConsentTarget(other_caller, focus.app_id, focus.binding, focus.tool)
        assert evaluate(after, other, NO_CONFIG).must_ask


@given(histories())
def test_with_always_ask_nothing_is_allowed_without_an_auto_allow_entry(
    history: tuple[ConsentRecord, ConsentTarget],
) -> None:
    record, focus = history
    verdict = evaluate(record, focus, ALWAYS_ASK)
    assert not verdict.allowed
    stored = record.grants(focus.binding).tools.get(focus.tool)
    assert verdict.denied is (stored is not None and not stored.allowed)


@given(histories())
def test_a_record_survives_its_json_round_trip_and_never_keeps_empty_bindings(
    history: tuple[ConsentRecord, ConsentTarget],
) -> None:
    record, _ = history
    assert ConsentRecord.model_validate_json(record.model_dump_json()) == record
    assert all(not grants.empty for grants in record.sources.values())
