"""Remembered consent decisions in the secret store: the OS keyring, or where there is none the
owner-only decision file (`decision_file.DecisionRecords`); memory in unit tests.

One JSON `ConsentRecord` per (caller, app id) under `consent-<caller>-<app id>`; the secret
store's index lists them (`keys("consent-")`). The key is only an address: who and what a record
is about is read from the record itself, and a record is used only for the caller and app id it
names. Caller names may contain `-`, so two (caller, app) pairs can in principle share a key
(`a-b` + `c` and `a` + `b-c`): the second is then not remembered (logged) rather than
overwriting the first. Unreadable records count as absent (logged): absence never allows.

Blocking, like the secret store: async code calls it through `anyio.to_thread`. Read-change-write
is serialized within the process; across processes (the CLI while the server runs) the last
writer wins.
"""

from __future__ import annotations

import builtins
import logging
import threading
import time

from pydantic import ValidationError

from ..auth.secrets import SecretStore
from ..descriptor import AppDescriptor
from .config import ConsentConfig
from .decision_file import DecisionRecords
from .policy import ConsentRecord, ConsentTarget, Decision, Verdict, apply, evaluate, new_record, revoke

logger = logging.getLogger(__name__)

KEY_PREFIX = "consent-"


def consent_key(caller: str, app_id: str) -> str:
    return f"{KEY_PREFIX}{caller}-{app_id}"


class ConsentStore:
    def __init__(self, secrets: SecretStore) -> None:
        self.secrets = secrets
        self._lock = threading.RLock()

    @property
    def where(self) -> str:
        """Where decisions are kept, for people (`consent list`, the start-up log)."""
        return self.secrets.where if isinstance(self.secrets, DecisionRecords) else "memory"

    def can_remember(self) -> bool:
        """Whether a lasting answer given now would be kept (never offer one that would not)."""
        return self.secrets.can_remember() if isinstance(self.secrets, DecisionRecords) else True

    # ----------------------------------------------------------------- reading

    def load(self, caller: str, app_id: str) -> ConsentRecord | None:
        """The caller's record for the app id (every binding); None when none is usable."""
        key = consent_key(caller, app_id)
        record = self._read(key)
        if record is None:
            return None
        if record.caller != caller or record.app_id != app_id:
            logger.warning(
                "consent record %r belongs to caller %r and app %s, not %r and %s: not used",
                key, record.caller, record.app_id, caller, app_id,
            )  # fmt: skip
            return None
        return record

    def check(self, caller: str, app: AppDescriptor, tool: str, config: ConsentConfig) -> Verdict:
        """Load and evaluate in one step."""
        target = ConsentTarget.of(caller, app, tool)
        return evaluate(self.load(caller, app.id), target, config)

    def list(self, caller: str | None = None) -> builtins.list[ConsentRecord]:
        """Every usable record (of one caller, if given), by caller then app id."""
        found: builtins.list[ConsentRecord] = []
        for key in self.secrets.keys(KEY_PREFIX):
            record = self._read(key)
            if record is None:
                continue
            if consent_key(record.caller, record.app_id) != key:
                logger.warning("consent record %r names another key: not listed", key)
                continue
            if caller is None or record.caller == caller:
                found.append(record)
        return sorted(found, key=lambda r: (r.caller, r.app_id))

    # ----------------------------------------------------------------- writing

    def save(self, record: ConsentRecord) -> bool:
        """Store the record (an empty one deletes the entry). False, and nothing written, when the
        key already holds another (caller, app) pair's record."""
        key = consent_key(record.caller, record.app_id)
        with self._lock:
            raw = self.secrets.get(key)
            existing = _parse(key, raw) if raw is not None else None
            if existing is not None and (existing.caller, existing.app_id) != (record.caller, record.app_id):
                logger.warning(
                    "consent for caller %r and app %s not remembered: key %r holds caller %r and app %s",
                    record.caller, record.app_id, key, existing.caller, existing.app_id,
                )  # fmt: skip
                return False
            if record.empty:
                if raw is not None:
                    self.secrets.delete(key)
            else:
                self.secrets.set(key, record.model_dump_json())
            return True

    def record_decision(
        self,
        caller: str,
        app: AppDescriptor,
        tool: str,
        decision: Decision,
        *,
        remember_deny: bool = False,
        now: float | None = None,
    ) -> ConsentRecord:
        """Apply the user's answer and remember it if it is to be remembered; the new record."""
        return self.decide(
            ConsentTarget.of(caller, app, tool), decision, remember_deny=remember_deny, now=now
        )

    def decide(
        self,
        target: ConsentTarget,
        decision: Decision,
        *,
        remember_deny: bool = False,
        now: float | None = None,
    ) -> ConsentRecord:
        """`record_decision` for a target given by its binding (`consent grant --source`: the
        descriptor need not be at hand)."""
        caller = target.caller
        with self._lock:
            before = self.load(caller, target.app_id)
            after = apply(
                before,
                target,
                decision,
                now=time.time() if now is None else now,
                remember_deny=remember_deny,
            )
            if after != (before or new_record(caller, target.app_id)):
                self.save(after)
            return after

    def revoke(
        self, caller: str, app_id: str, tool: str | None = None, *, binding: str | None = None
    ) -> bool:
        """Forget decisions (see `policy.revoke`); True when something was forgotten. Forgetting
        everything (`tool` and `binding` None) also removes an unreadable record at the key."""
        key = consent_key(caller, app_id)
        with self._lock:
            raw = self.secrets.get(key)
            if raw is None:
                return False
            record = _parse(key, raw)
            if record is None:
                if tool is None and binding is None:
                    self.secrets.delete(key)
                    return True
                return False
            if (record.caller, record.app_id) != (caller, app_id):
                return False
            after = revoke(record, binding=binding, tool=tool)
            if after == record:
                return False
            self.save(after)
            return True

    # ----------------------------------------------------------------- helpers

    def _read(self, key: str) -> ConsentRecord | None:
        raw = self.secrets.get(key)
        return _parse(key, raw) if raw is not None else None


def _parse(key: str, raw: str) -> ConsentRecord | None:
    try:
        return ConsentRecord.model_validate_json(raw)
    except ValidationError as exc:
        logger.warning(
            "consent record %r is unreadable (%d problems): treated as absent", key, exc.error_count()
        )
        return None
