"""Consent decisions on a machine without an OS keyring: one owner-only JSON file that keeps
"always" answers across restarts, survives concurrent writers, and never trusts a file it cannot
trust (absence never allows)."""

from __future__ import annotations

import json
import logging
import multiprocessing
import os
import stat
from pathlib import Path

import pytest

from aai_gateway.auth.secrets import KeyringSecretStore, MemorySecretStore
from aai_gateway.consent.decision_file import DecisionFile, DecisionRecords
from aai_gateway.consent.policy import ConsentTarget, Decision
from aai_gateway.consent.store import ConsentStore
from aai_gateway.errors import DecisionFileError, SecretStoreUnavailableError
from tests.keyring_session import PrivateKeyring

TARGET = ConsentTarget("claude-code", "dev.test.notes", "file:/home/me/notes/aai.json", "create")


def decisions_at(path: Path) -> ConsentStore:
    return ConsentStore(DecisionRecords(_no_keyring, DecisionFile(path)))


def _no_keyring() -> KeyringSecretStore:
    raise SecretStoreUnavailableError("keyring backend keyring.backends.fail.Keyring")


def test_an_always_answer_is_still_there_for_a_new_process(tmp_path: Path) -> None:
    path = tmp_path / "state" / "aai-gateway" / "consent.json"
    decisions_at(path).decide(TARGET, Decision.ALLOW_TOOL, now=1.0)
    record = decisions_at(path).load(TARGET.caller, TARGET.app_id)  # another store: another process
    assert record is not None and record.grants(TARGET.binding).tools["create"].allowed


def test_the_file_and_its_folder_are_the_owners_alone(tmp_path: Path) -> None:
    path = tmp_path / "state" / "aai-gateway" / "consent.json"
    decisions_at(path).decide(TARGET, Decision.ALLOW_APP, now=1.0)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert not list(path.parent.glob(".consent.json.*"))  # no temporary file left behind


def test_where_names_the_file_and_why_the_keyring_was_not_used(tmp_path: Path) -> None:
    store = decisions_at(tmp_path / "consent.json")
    assert store.where.startswith(f"the file {tmp_path / 'consent.json'} (no usable OS keyring:")
    assert store.can_remember()


@pytest.mark.parametrize(
    "content",
    [b"{not json", b"[1, 2]", b'{"consent-x": 3}', b"\xff\xfe", b'{"a": "b"'],
    ids=["not-json", "a-list", "not-strings", "not-utf8", "truncated"],
)
def test_a_corrupt_file_holds_no_decisions_is_reported_and_moved_aside_by_the_next_one(
    tmp_path: Path, content: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "consent.json"
    path.write_bytes(content)
    path.chmod(0o600)
    store = decisions_at(path)
    with caplog.at_level(logging.WARNING):
        assert store.load(TARGET.caller, TARGET.app_id) is None
        assert store.list() == []
    assert "ignoring the consent decision file" in caplog.text
    store.decide(TARGET, Decision.ALLOW_TOOL, now=1.0)
    [aside] = tmp_path.glob("consent.json.corrupt-*")
    assert aside.read_bytes() == content  # nothing is lost
    assert store.load(TARGET.caller, TARGET.app_id) is not None


def test_a_file_others_can_write_is_not_trusted(tmp_path: Path) -> None:
    path = tmp_path / "consent.json"
    decisions_at(path).decide(TARGET, Decision.ALLOW_APP, now=1.0)
    path.chmod(0o666)  # anyone could have planted a grant
    assert decisions_at(path).load(TARGET.caller, TARGET.app_id) is None


def test_no_secret_ever_goes_to_the_file_only_decisions(tmp_path: Path) -> None:
    path = tmp_path / "consent.json"
    decisions_at(path).decide(TARGET, Decision.ALLOW_TOOL, now=1.0)
    stored = json.loads(path.read_text())
    assert list(stored) == ["consent-claude-code-dev.test.notes"]
    assert set(json.loads(stored["consent-claude-code-dev.test.notes"])) == {"caller", "app_id", "sources"}


def test_a_folder_that_cannot_be_written_is_an_error_and_no_lasting_answer_is_offered(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        locked = Path("/proc/aai-gateway-state")  # root writes everywhere but here
    else:
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
    store = decisions_at(locked / "consent.json")
    assert not store.can_remember()
    with pytest.raises(DecisionFileError, match="cannot be written"):
        store.decide(TARGET, Decision.ALLOW_TOOL, now=1.0)


def _grant_many(path: str, caller: str, count: int) -> None:
    store = decisions_at(Path(path))
    for n in range(count):
        store.decide(
            ConsentTarget(caller, f"dev.test.app{n}", TARGET.binding, "t"), Decision.ALLOW_TOOL, now=1.0
        )


def test_gateways_writing_at_the_same_time_keep_every_decision(tmp_path: Path) -> None:
    path = tmp_path / "consent.json"
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_grant_many, args=(str(path), f"c{n}", 15)) for n in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
        assert worker.exitcode == 0
    assert len(decisions_at(path).list()) == 4 * 15


def test_a_usable_keyring_is_preferred_and_the_file_stays_untouched(
    tmp_path: Path, private_keyring: PrivateKeyring
) -> None:
    path = tmp_path / "consent.json"
    store = ConsentStore(
        DecisionRecords(
            lambda: KeyringSecretStore("aai-gateway-test-decisions", private_keyring.backend()),
            DecisionFile(path),
        )
    )
    store.decide(TARGET, Decision.ALLOW_TOOL, now=1.0)
    assert store.where == "the OS keyring"
    assert not path.exists()
    store.revoke(TARGET.caller, TARGET.app_id)


def test_memory_stores_of_unit_tests_always_remember() -> None:
    assert ConsentStore(MemorySecretStore()).can_remember()
