"""ConsentStore against a real gnome-keyring-daemon on a private DBus bus (tests/keyring_session.py).

Each test uses a keyring service name of its own and removes what it stored, so tests never see
each other's records and the shared daemon is left as found.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from aai_gateway.auth import KeyringSecretStore
from aai_gateway.consent import ConsentConfig, ConsentStore, Decision, consent_key
from tests.consent.apps import EVIL, NOTES_FILE, NOTES_ID, local_app, web_app
from tests.keyring_session import PrivateKeyring

CALLER = "Claude Code"
OTHER_CALLER = "cursor-vscode"
LOCAL = f"file:{NOTES_FILE}"
NOW = 1_700_000_000.0
NO_CONFIG = ConsentConfig()


@pytest.fixture
def service() -> str:
    return f"aai-consent-test-{uuid.uuid4().hex[:12]}"


@pytest.fixture
def secrets(private_keyring: PrivateKeyring, service: str) -> Iterator[KeyringSecretStore]:
    store = KeyringSecretStore(service=service, backend=private_keyring.backend())
    yield store
    for key in store.keys(""):
        store.delete(key)


def test_decisions_survive_in_the_keyring_and_a_new_store_lists_them_by_caller(
    private_keyring: PrivateKeyring, secrets: KeyringSecretStore, service: str
) -> None:
    store = ConsentStore(secrets)
    store.record_decision(CALLER, local_app(), "create", Decision.ALLOW_TOOL, now=NOW)
    store.record_decision(CALLER, local_app(), "list", Decision.DENY, remember_deny=True, now=NOW)
    store.record_decision(OTHER_CALLER, local_app(), "create", Decision.ALLOW_APP, now=NOW)

    again = ConsentStore(KeyringSecretStore(service=service, backend=private_keyring.backend()))
    assert [(r.caller, r.app_id) for r in again.list()] == [(CALLER, NOTES_ID), (OTHER_CALLER, NOTES_ID)]
    assert [r.caller for r in again.list(OTHER_CALLER)] == [OTHER_CALLER]
    assert again.load(CALLER, NOTES_ID) == store.load(CALLER, NOTES_ID)
    assert again.check(CALLER, local_app(), "create", NO_CONFIG).allowed
    assert again.check(CALLER, local_app(), "list", NO_CONFIG).denied
    assert again.check(OTHER_CALLER, local_app(), "list", NO_CONFIG).allowed
    assert secrets.keys("consent-") == sorted(
        [consent_key(CALLER, NOTES_ID), consent_key(OTHER_CALLER, NOTES_ID)]
    )


def test_a_web_claimant_in_the_keyring_shares_the_entry_but_not_the_grants(
    secrets: KeyringSecretStore,
) -> None:
    store = ConsentStore(secrets)
    store.record_decision(CALLER, local_app(), "create", Decision.ALLOW_APP, now=NOW)
    assert store.check(CALLER, web_app(EVIL), "create", NO_CONFIG).must_ask
    store.record_decision(CALLER, web_app(EVIL), "list", Decision.ALLOW_TOOL, now=NOW)
    record = store.load(CALLER, NOTES_ID)
    assert record is not None and set(record.sources) == {LOCAL, EVIL}
    assert store.check(CALLER, web_app(EVIL), "create", NO_CONFIG).must_ask


def test_revoking_everything_removes_the_keyring_entry_and_its_index_line(
    secrets: KeyringSecretStore,
) -> None:
    store = ConsentStore(secrets)
    store.record_decision(CALLER, local_app(), "create", Decision.ALLOW_TOOL, now=NOW)
    assert store.revoke(CALLER, NOTES_ID)
    assert secrets.get(consent_key(CALLER, NOTES_ID)) is None
    assert secrets.keys("consent-") == []
    assert store.list() == []


def test_an_unreadable_keyring_entry_counts_as_absent(secrets: KeyringSecretStore) -> None:
    secrets.set(consent_key(CALLER, NOTES_ID), "{not json")
    store = ConsentStore(secrets)
    assert store.load(CALLER, NOTES_ID) is None
    assert store.list() == []
    assert store.check(CALLER, local_app(), "create", NO_CONFIG).must_ask
    store.record_decision(CALLER, local_app(), "create", Decision.ALLOW_TOOL, now=NOW)
    assert store.check(CALLER, local_app(), "create", NO_CONFIG).allowed
