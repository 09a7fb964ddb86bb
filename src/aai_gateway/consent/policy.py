"""Consent policy: pure functions from what is stored and configured to allow / deny / ask.

Who is asking is the MCP client's self-declared name (`Unknown Client` without one); a decision
made for one caller is never visible to another. What is asked about is one tool of one app, and
the app is its self-declared id *and* where its descriptor came from (its binding, the same as
for credentials: the web origin, `bundled`, or `file:<path>`). A record holds one caller's
decisions about one app id, kept apart per binding, so a web descriptor claiming a local app's
id shares the record's storage key but none of its grants.

Rules, first match wins (`evaluate`):

1. a remembered denial of the tool (this caller, this binding) → deny. The most specific and
   most restrictive decision the user made; not even `auto_allow` overrides it;
2. a `consent.auto_allow` entry for the tool or the app (matching the binding) → allow;
3. `consent.always_ask` → ask, offering allow once and deny only (stored allows are ignored);
4. a remembered "all tools of this app" → allow;
5. a remembered "this tool" → allow;
6. otherwise → ask, offering every decision.

Decisions (`apply`): allow once and deny-not-remembered store nothing; a remembered deny stores
the tool as denied (an app-wide grant stays, with this tool as its exception); always-allow-tool
stores the tool as allowed (replacing a denial); always-allow-app grants every tool and drops
the app's per-tool entries in that binding, remembered denials included: the newer decision
covers every tool, so it wins for every tool.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from enum import StrEnum

from pydantic import BaseModel, ConfigDict

from ..descriptor import AppDescriptor
from ..descriptor.binding import BUNDLED, FILE_PREFIX
from .config import AutoAllow, ConsentConfig

UNKNOWN_CALLER = "Unknown Client"


class Decision(StrEnum):
    """What the user answered. A denial is remembered or not separately (`remember_deny`)."""

    ALLOW_ONCE = "allow_once"
    ALLOW_TOOL = "allow_tool"
    ALLOW_APP = "allow_app"
    DENY = "deny"


class Outcome(StrEnum):
    ALLOW = "allow"
    DENY = "deny"
    ASK = "ask"


EVERY_DECISION: tuple[Decision, ...] = tuple(Decision)
ONCE_ONLY: tuple[Decision, ...] = (Decision.ALLOW_ONCE, Decision.DENY)


@dataclass(frozen=True, slots=True)
class Verdict:
    outcome: Outcome
    reason: str  # for logs: which rule decided
    choices: tuple[Decision, ...] = ()  # ask: what the prompt offers (a denial may always be remembered)
    remembered: bool = False  # deny: from a remembered denial, not this call's answer

    @property
    def allowed(self) -> bool:
        return self.outcome is Outcome.ALLOW

    @property
    def denied(self) -> bool:
        return self.outcome is Outcome.DENY

    @property
    def must_ask(self) -> bool:
        return self.outcome is Outcome.ASK


# --------------------------------------------------------------------------- the stored record


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")


class ToolGrant(_Record):
    allowed: bool
    decided_at: float


class SourceGrants(_Record):
    """One caller's decisions about one app as described by one source (binding)."""

    all_tools: bool = False
    all_tools_at: float | None = None
    tools: dict[str, ToolGrant] = {}

    @property
    def empty(self) -> bool:
        return not self.all_tools and not self.tools


class ConsentRecord(_Record):
    """Everything one caller decided about one app id, per binding. One keyring entry."""

    caller: str
    app_id: str
    sources: dict[str, SourceGrants] = {}

    @property
    def empty(self) -> bool:
        return all(grants.empty for grants in self.sources.values())

    def grants(self, binding: str) -> SourceGrants:
        return self.sources.get(binding) or SourceGrants()


@dataclass(frozen=True, slots=True)
class ConsentTarget:
    """One question: may `caller` run `tool` of the app `app_id` described at `binding`?"""

    caller: str
    app_id: str
    binding: str
    tool: str

    @classmethod
    def of(cls, caller: str, app: AppDescriptor, tool: str) -> ConsentTarget:
        return cls(caller, app.id, str(app.binding), tool)

    def describe(self) -> str:
        return f"{self.caller!r} → {self.app_id} ({self.binding}) {self.tool}"


def caller_name(name: str | None) -> str:
    """The caller as consent knows it: the client info name, `Unknown Client` when absent/blank."""
    stripped = (name or "").strip()
    return stripped or UNKNOWN_CALLER


def is_local_binding(binding: str) -> bool:
    """A descriptor from this machine (a file, or bundled with the gateway), not from the web."""
    return binding == BUNDLED or binding.startswith(FILE_PREFIX)


def new_record(caller: str, app_id: str) -> ConsentRecord:
    return ConsentRecord(caller=caller, app_id=app_id)


# --------------------------------------------------------------------------- rules


def auto_allow_entry(config: ConsentConfig, target: ConsentTarget) -> AutoAllow | None:
    """The config entry that trusts this app (or this tool of it) as described at this binding.

    An id entry matches local descriptors only; an origin entry matches the web descriptor from
    exactly that origin. A web descriptor claiming a trusted id is never auto-allowed."""
    for entry in config.auto_allow:
        if entry.tool is not None and entry.tool != target.tool:
            continue
        if entry.is_origin:
            if target.binding == entry.app:
                return entry
        elif entry.app == target.app_id and is_local_binding(target.binding):
            return entry
    return None


def evaluate(record: ConsentRecord | None, target: ConsentTarget, config: ConsentConfig) -> Verdict:
    """Allow, deny or ask; see the module docstring for the order of rules."""
    if record is not None and (record.caller != target.caller or record.app_id != target.app_id):
        record = None  # another caller's or app's record is never consulted
    grants = record.grants(target.binding) if record is not None else SourceGrants()
    tool_grant = grants.tools.get(target.tool)
    if tool_grant is not None and not tool_grant.allowed:
        return Verdict(
            Outcome.DENY,
            f"remembered denial ({_when(tool_grant.decided_at)}) for {target.describe()}",
            remembered=True,
        )
    entry = auto_allow_entry(config, target)
    if entry is not None:
        return Verdict(Outcome.ALLOW, f"config consent.auto_allow {entry.entry!r} for {target.describe()}")
    if config.always_ask:
        return Verdict(Outcome.ASK, f"config consent.always_ask for {target.describe()}", ONCE_ONLY)
    if grants.all_tools:
        when = _when(grants.all_tools_at) if grants.all_tools_at is not None else "earlier"
        return Verdict(Outcome.ALLOW, f"every tool of the app allowed ({when}) for {target.describe()}")
    if tool_grant is not None:
        return Verdict(
            Outcome.ALLOW, f"tool allowed ({_when(tool_grant.decided_at)}) for {target.describe()}"
        )
    return Verdict(Outcome.ASK, f"no decision yet for {target.describe()}", EVERY_DECISION)


def apply(
    record: ConsentRecord | None,
    target: ConsentTarget,
    decision: Decision,
    *,
    now: float,
    remember_deny: bool = False,
) -> ConsentRecord:
    """The record after the user's answer. `remember_deny` matters only with `Decision.DENY`."""
    if record is None:
        record = new_record(target.caller, target.app_id)
    elif record.caller != target.caller or record.app_id != target.app_id:
        raise ValueError(f"the record of {record.caller!r}/{record.app_id} is not for {target.describe()}")
    grants = record.grants(target.binding)
    if decision is Decision.ALLOW_ONCE or (decision is Decision.DENY and not remember_deny):
        return record
    if decision is Decision.ALLOW_APP:
        changed = SourceGrants(all_tools=True, all_tools_at=now)
    else:
        allowed = decision is Decision.ALLOW_TOOL
        tools = {**grants.tools, target.tool: ToolGrant(allowed=allowed, decided_at=now)}
        changed = grants.model_copy(update={"tools": tools})
    return _with_grants(record, target.binding, changed)


def revoke(record: ConsentRecord, *, binding: str | None = None, tool: str | None = None) -> ConsentRecord:
    """Forget decisions: of one binding or all (`binding=None`); of one tool (its grant or its
    denial) or everything including the app-wide grant (`tool=None`). Revoking one tool does not
    end an app-wide grant: that takes `tool=None`."""
    sources: dict[str, SourceGrants] = {}
    for source, grants in record.sources.items():
        if binding is not None and source != binding:
            sources[source] = grants
        elif tool is not None:
            tools = {name: grant for name, grant in grants.tools.items() if name != tool}
            sources[source] = grants.model_copy(update={"tools": tools})
    return _pruned(record.model_copy(update={"sources": sources}))


def _with_grants(record: ConsentRecord, binding: str, grants: SourceGrants) -> ConsentRecord:
    return _pruned(record.model_copy(update={"sources": {**record.sources, binding: grants}}))


def _pruned(record: ConsentRecord) -> ConsentRecord:
    sources = {binding: grants for binding, grants in record.sources.items() if not grants.empty}
    if sources == record.sources:
        return record
    return record.model_copy(update={"sources": sources})


def _when(timestamp: float) -> str:
    try:
        return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(timestamp))
    except (OverflowError, OSError, ValueError):
        return "at an unknown time"
