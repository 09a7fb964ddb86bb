"""ConsentStore over the in-memory secret store: keys, round trips, isolation, listing, bad records."""

from __future__ import annotations

import json
import logging

import pytest

from aai_gateway.auth import MemorySecretStore
from aai_gateway.consent import (
    UNKNOWN_CALLER,
    ConsentConfig,
    ConsentRecord,
    ConsentStore,
    Decision,
    SourceGrants,
    ToolGrant,
    consent_key,
    new_record,
    parse_config_text,
)
from tests.consent.apps import EVIL, NOTES_FILE, NOTES_ID, local_app, web_app

CALLER = "Claude Code"
OTHER_CALLER = "cursor-vscode"
LOCAL = f"file:{NOTES_FILE}"
NOW = 1_700_000_000.0
NO_CONFIG = ConsentConfig()


@pytest.fixture
def secrets() -> MemorySecretStore:
    return MemorySecretStore()


@pytest.fixture
def store(secrets: MemorySecretStore) -> ConsentStore:
    return ConsentStore(secrets)


def test_a_decision_is_stored_as_one_json_record_under_consent_caller_app(
    store: ConsentStore, secrets: MemorySecretStore
) -> None:
    record = store.record_decision(CALLER, local_app(), "create", Decision.ALLOW_TOOL, now=NOW)
    key = "consent-Claude Code-dev.aai.example.notes"
    assert consent_key(CALLER, NOTES_ID) == key
    assert secrets.keys("consent-") == [key]
    stored = secrets.get(key)
    assert stored is not None
    assert json.loads(stored) == {
        "caller": CALLER,
        "app_id": NOTES_ID,
        "sources": {
            LOCAL: {
                "all_tools": False,
                "all_tools_at": None,
                "tools": {"create": {"allowed": True, "decided_at": NOW}},
            }
        },
    }
    assert store.load(CALLER, NOTES_ID) == record


def test_each_remembered_decision_round_trips_and_changes_the_verdict(store: ConsentStore) -> None:
    app = local_app()
    assert store.check(CALLER, app, "create", NO_CONFIG).must_ask
    store.record_decision(CALLER, app, "create", Decision.ALLOW_TOOL, now=NOW)
    assert store.check(CALLER, app, "create", NO_CONFIG).allowed
    assert store.check(CALLER, app, "list", NO_CONFIG).must_ask
    store.record_decision(CALLER, app, "list", Decision.DENY, remember_deny=True, now=NOW)
    assert store.check(CALLER, app, "list", NO_CONFIG).denied
    store.record_decision(CALLER, app, "create", Decision.ALLOW_APP, now=NOW)
    assert store.check(CALLER, app, "list", NO_CONFIG).allowed
    assert store.check(CALLER, app, "anything", NO_CONFIG).allowed


@pytest.mark.parametrize(("decision", "remember"), [(Decision.ALLOW_ONCE, True), (Decision.DENY, False)])
def test_answers_that_are_not_remembered_write_nothing(
    store: ConsentStore, secrets: MemorySecretStore, decision: Decision, remember: bool
) -> None:
    returned = store.record_decision(CALLER, local_app(), "create", decision, remember_deny=remember, now=NOW)
    assert returned == new_record(CALLER, NOTES_ID)
    assert secrets.keys() == []


def test_the_decision_time_defaults_to_now(store: ConsentStore) -> None:
    record = store.record_decision(CALLER, local_app(), "create", Decision.ALLOW_TOOL)
    assert record.grants(LOCAL).tools["create"].decided_at > NOW


def test_a_grant_to_one_caller_is_invisible_to_another(store: ConsentStore) -> None:
    app = local_app()
    store.record_decision(CALLER, app, "create", Decision.ALLOW_APP, now=NOW)
    assert store.check(CALLER, app, "create", NO_CONFIG).allowed
    for other in (OTHER_CALLER, UNKNOWN_CALLER, "claude code"):
        assert store.load(other, NOTES_ID) is None
        assert store.check(other, app, "create", NO_CONFIG).must_ask
        assert store.list(other) == []


def test_a_web_claimant_shares_the_key_but_never_the_grants(
    store: ConsentStore, secrets: MemorySecretStore
) -> None:
    local, claimant = local_app(), web_app(EVIL)
    store.record_decision(CALLER, local, "create", Decision.ALLOW_APP, now=NOW)
    assert store.check(CALLER, claimant, "create", NO_CONFIG).must_ask
    store.record_decision(CALLER, claimant, "list", Decision.ALLOW_TOOL, now=NOW)
    store.record_decision(CALLER, local, "list", Decision.DENY, remember_deny=True, now=NOW)
    assert secrets.keys() == [consent_key(CALLER, NOTES_ID)]
    record = store.load(CALLER, NOTES_ID)
    assert record is not None and set(record.sources) == {LOCAL, EVIL}
    assert store.check(CALLER, claimant, "list", NO_CONFIG).allowed
    assert store.check(CALLER, claimant, "create", NO_CONFIG).must_ask
    assert store.check(CALLER, local, "list", NO_CONFIG).denied
    assert store.check(CALLER, local, "create", NO_CONFIG).allowed


def test_a_web_claimant_of_a_trusted_id_is_asked_through_the_store(store: ConsentStore) -> None:
    settings = parse_config_text(f'[consent.auto_allow]\napps = ["{NOTES_ID}"]\n').config
    assert store.check(CALLER, local_app(), "create", settings).allowed
    assert store.check(CALLER, web_app(EVIL), "create", settings).must_ask


def test_listing_reads_callers_from_the_records_and_filters_by_caller(store: ConsentStore) -> None:
    callers = ["a-b", "a", "Claude Code", "Zed Editor - preview", UNKNOWN_CALLER]
    for caller in callers:
        store.record_decision(caller, local_app(), "create", Decision.ALLOW_TOOL, now=NOW)
    store.record_decision("a", local_app("com.other.app"), "list", Decision.ALLOW_APP, now=NOW)
    everything = store.list()
    assert [(r.caller, r.app_id) for r in everything] == sorted(
        [(c, NOTES_ID) for c in callers] + [("a", "com.other.app")]
    )
    assert [(r.caller, r.app_id) for r in store.list("a")] == [("a", "com.other.app"), ("a", NOTES_ID)]
    assert [r.caller for r in store.list("Zed Editor - preview")] == ["Zed Editor - preview"]
    assert store.list("nobody") == []


def test_revoking_a_tool_a_binding_or_everything(store: ConsentStore, secrets: MemorySecretStore) -> None:
    local, claimant = local_app(), web_app(EVIL)
    store.record_decision(CALLER, local, "create", Decision.ALLOW_TOOL, now=NOW)
    store.record_decision(CALLER, local, "list", Decision.DENY, remember_deny=True, now=NOW)
    store.record_decision(CALLER, claimant, "list", Decision.ALLOW_APP, now=NOW)

    assert store.revoke(CALLER, NOTES_ID, "list", binding=LOCAL)
    assert store.check(CALLER, local, "list", NO_CONFIG).must_ask
    assert store.check(CALLER, claimant, "list", NO_CONFIG).allowed
    assert not store.revoke(CALLER, NOTES_ID, "list", binding=LOCAL)  # nothing left to forget

    assert store.revoke(CALLER, NOTES_ID, binding=EVIL)
    assert store.check(CALLER, claimant, "list", NO_CONFIG).must_ask
    assert store.check(CALLER, local, "create", NO_CONFIG).allowed

    assert store.revoke(CALLER, NOTES_ID)
    assert secrets.keys() == []  # an empty record is deleted, not stored
    assert not store.revoke(CALLER, NOTES_ID)
    assert not store.revoke(OTHER_CALLER, NOTES_ID)


def test_revoking_the_last_tool_deletes_the_entry(store: ConsentStore, secrets: MemorySecretStore) -> None:
    store.record_decision(CALLER, local_app(), "create", Decision.ALLOW_TOOL, now=NOW)
    assert store.revoke(CALLER, NOTES_ID, "create")
    assert secrets.keys() == []


def test_saving_an_empty_record_deletes_the_entry_and_saving_nothing_writes_nothing(
    store: ConsentStore, secrets: MemorySecretStore
) -> None:
    assert store.save(new_record(CALLER, NOTES_ID))
    assert secrets.keys() == []
    store.record_decision(CALLER, local_app(), "create", Decision.ALLOW_TOOL, now=NOW)
    assert store.save(new_record(CALLER, NOTES_ID))
    assert secrets.keys() == []


# --------------------------------------------------------------------------- bad records


@pytest.mark.parametrize(
    "raw",
    [
        "not json",
        "null",
        "[]",
        '{"caller": "Claude Code"}',
        '{"caller": "Claude Code", "app_id": "dev.aai.example.notes", "sources": {"bundled": {"tools": 3}}}',
    ],
)
def test_an_unreadable_record_counts_as_absent_is_logged_and_is_replaced_or_removed(
    store: ConsentStore, secrets: MemorySecretStore, caplog: pytest.LogCaptureFixture, raw: str
) -> None:
    key = consent_key(CALLER, NOTES_ID)
    secrets.set(key, raw)
    with caplog.at_level(logging.WARNING, logger="aai_gateway.consent.store"):
        assert store.load(CALLER, NOTES_ID) is None
        assert store.check(CALLER, local_app(), "create", NO_CONFIG).must_ask
        assert store.list() == []
    assert "unreadable" in caplog.text and key in caplog.text

    assert not store.revoke(CALLER, NOTES_ID, "create")  # a partial revoke leaves it alone
    assert store.revoke(CALLER, NOTES_ID)  # forgetting everything removes it
    assert secrets.keys() == []

    secrets.set(key, raw)
    store.record_decision(CALLER, local_app(), "create", Decision.ALLOW_TOOL, now=NOW)
    assert store.check(CALLER, local_app(), "create", NO_CONFIG).allowed


def test_a_record_naming_another_pair_is_not_used_for_the_pair_its_key_names(
    store: ConsentStore, secrets: MemorySecretStore, caplog: pytest.LogCaptureFixture
) -> None:
    """`a-b` + `c` and `a` + `b-c` share the key `consent-a-b-c`: each sees only its own record, and
    the second pair is not remembered rather than overwriting the first."""
    first = local_app("c")
    second = local_app("b-c")
    assert consent_key("a-b", "c") == consent_key("a", "b-c")
    store.record_decision("a-b", first, "create", Decision.ALLOW_APP, now=NOW)
    with caplog.at_level(logging.WARNING, logger="aai_gateway.consent.store"):
        assert store.load("a", "b-c") is None
        assert store.check("a", second, "create", NO_CONFIG).must_ask
        store.record_decision("a", second, "create", Decision.DENY, remember_deny=True, now=NOW)
    assert "not remembered" in caplog.text
    assert store.check("a-b", first, "create", NO_CONFIG).allowed
    assert store.check("a", second, "create", NO_CONFIG).must_ask
    assert not store.revoke("a", "b-c")
    assert store.check("a-b", first, "create", NO_CONFIG).allowed


def test_a_record_stored_under_a_key_it_does_not_name_is_not_listed(
    store: ConsentStore, secrets: MemorySecretStore
) -> None:
    moved = ConsentRecord(
        caller=OTHER_CALLER,
        app_id=NOTES_ID,
        sources={"bundled": SourceGrants(tools={"x": ToolGrant(allowed=True, decided_at=NOW)})},
    )
    secrets.set("consent-Claude Code-dev.aai.example.notes", moved.model_dump_json())
    assert store.list() == []
    assert store.load(CALLER, NOTES_ID) is None
    assert store.load(OTHER_CALLER, NOTES_ID) is None


def test_listing_skips_keys_whose_entry_has_gone(store: ConsentStore) -> None:
    class StaleIndex(MemorySecretStore):
        def keys(self, prefix: str = "") -> list[str]:
            return [*super().keys(prefix), "consent-gone-app"]

    stale = ConsentStore(StaleIndex())
    stale.record_decision(CALLER, local_app(), "create", Decision.ALLOW_TOOL, now=NOW)
    assert [r.caller for r in stale.list()] == [CALLER]


def test_fields_from_a_newer_gateway_are_ignored_rather_than_making_the_record_unreadable(
    store: ConsentStore, secrets: MemorySecretStore
) -> None:
    newer = {
        "caller": CALLER,
        "app_id": NOTES_ID,
        "format": 2,
        "sources": {LOCAL: {"all_tools": True, "all_tools_at": NOW, "scope": "x", "tools": {}}},
    }
    secrets.set(consent_key(CALLER, NOTES_ID), json.dumps(newer))
    assert store.check(CALLER, local_app(), "create", NO_CONFIG).allowed
