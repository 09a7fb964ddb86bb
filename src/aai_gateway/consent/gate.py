"""The check every execution passes first: may this caller use this tool of this app?

Order: the stored decision and the user's config answer without asking; otherwise the user is
asked through the first prompter that can (the MCP client's elicitation — a form, or a one-time
page the client opens through URL elicitation —, or the terminal for the CLI), then a native
dialog when a desktop session is present. If nobody can ask, CONSENT_REQUIRED tells the agent
what to show the user and, where a lasting grant can help, the exact command that grants it.

Approval never passes through the model (docs/architecture.md, "Security rules"): no
error or result carries a link or a code that approves anything. A link to the consent page
reaches the user only through URL-mode elicitation, which the client shows to the user and the
model never reads; an agent able to fetch pages must not be able to answer for the user.
"""

from __future__ import annotations

import hashlib
import json
import logging
import shlex
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol

import anyio

from ..descriptor import AppDescriptor, Tool
from ..descriptor.annotations import annotation_hints
from ..errors import ConsentDeniedError, ConsentRequiredError, SecretStoreUnavailableError
from . import dialog
from .config import ConsentConfig
from .dialog_programs import DialogBackend
from .policy import (
    EVERY_DECISION,
    ONCE_ONLY,
    UNKNOWN_CALLER,
    ConsentRecord,
    ConsentTarget,
    Decision,
    Verdict,
    evaluate,
    is_local_binding,
)
from .prompt_text import Answer, ConsentQuestion
from .store import ConsentStore

logger = logging.getLogger(__name__)

RECORD_SECONDS = 5.0  # how stale a decision made in another process (the CLI) may be here


class Prompter(Protocol):
    """One way to ask the user; None when it cannot ask now (no capability, no terminal, or
    asking failed: the next prompter is tried). It raises only to end the call, e.g. to put the
    question to a 2026-07-28 client in the call's result, or `AskingFailedError`."""

    async def ask(self, question: ConsentQuestion) -> Answer | None: ...


class AskingFailedError(Exception):
    """The question reached the user and then asking broke (the consent page failed after it
    opened): nobody answered, so the call ends with CONSENT_REQUIRED saying so (`reason`) and
    how to grant it, never CONSENT_DENIED; no other prompter asks again what the user was shown."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class DialogPrompter:
    def __init__(
        self, backend: DialogBackend, timeout_seconds: float = dialog.DEFAULT_TIMEOUT_SECONDS
    ) -> None:
        self.backend = backend
        self.timeout_seconds = timeout_seconds

    async def ask(self, question: ConsentQuestion) -> Answer | None:
        return await dialog.ask(question, self.backend, self.timeout_seconds)


def _option(name: str, value: str) -> str:
    # `--name=value` in one word: a value starting with `-` cannot be taken for an option.
    return shlex.quote(f"--{name}={value}")


def consent_command(action: str, target: ConsentTarget, *, every_tool: bool = False) -> str:
    """`aai-gateway consent grant|revoke` for exactly this caller, app, binding and tool (or
    every tool: `every_tool`, or a revoke with no tool); it needs no discovery options, so it
    works whatever folders the gateway was started with."""
    words = [f"aai-gateway consent {action}", _option("caller", target.caller), _option("app", target.app_id)]
    if every_tool:
        words.append("--all")
    elif target.tool:
        words.append(_option("tool", target.tool))
    words.append(_option("source", target.binding))
    return " ".join(words)


def call_digest(arguments: Mapping[str, object]) -> str:
    encoded = json.dumps(arguments, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(encoded.encode("utf-8", "surrogatepass")).hexdigest()


CallKey = tuple[ConsentTarget, str]  # (who, which app as described where, which tool; arguments)


class ConsentGate:
    def __init__(
        self,
        store: ConsentStore,
        config: ConsentConfig | None = None,
        *,
        dialog_backend: DialogBackend | None = None,
        config_path: Path | None = None,
    ) -> None:
        """`config_path`: the user's config.toml, named in CONSENT_REQUIRED as a way out."""
        self.store = store
        self.config = config or ConsentConfig()
        self.config_path = config_path
        self.dialog = DialogPrompter(dialog_backend) if dialog_backend is not None else None
        self._records: dict[tuple[str, str], tuple[float, ConsentRecord | None]] = {}

    async def check(
        self,
        caller: str,
        app: AppDescriptor,
        tool: Tool,
        arguments: Mapping[str, object],
        *,
        prompters: Sequence[Prompter] = (),
    ) -> None:
        """Returns when the call may go ahead; raises CONSENT_DENIED or CONSENT_REQUIRED."""
        target = ConsentTarget.of(caller, app, tool.name)
        verdict = await self._verdict(target)
        if verdict.must_ask:
            # About to ask (or to say nobody can): the user may just have run the grant command.
            self._records.pop((caller, app.id), None)
            verdict = await self._verdict(target)
        if verdict.allowed:
            return
        if verdict.denied:
            raise _denied(target, remembered=verdict.remembered)
        question = self._question(target, app, tool, arguments, verdict)
        try:
            answer = await self._ask(question, [*prompters, *([self.dialog] if self.dialog else [])])
        except AskingFailedError as failed:
            raise self._required(target, app, tool, arguments, asking_failed=failed.reason) from None
        if answer is None:
            raise self._required(target, app, tool, arguments)
        await self._remember(target, answer)
        if answer[0] == "deny":
            raise _denied(target, remembered=answer[1])

    async def _ask(self, question: ConsentQuestion, prompters: Sequence[Prompter]) -> Answer | None:
        for prompter in prompters:
            answer = await prompter.ask(question)
            if answer is not None:
                return _offered(answer, question)
        return None

    async def _verdict(self, target: ConsentTarget) -> Verdict:
        return evaluate(await self._record(target.caller, target.app_id), target, self.config)

    async def _record(self, caller: str, app_id: str) -> ConsentRecord | None:
        """The stored record, read at most every RECORD_SECONDS (a keyring read is a DBus call)."""
        key = (caller, app_id)
        cached = self._records.get(key)
        if cached is not None and time.monotonic() - cached[0] < RECORD_SECONDS:
            return cached[1]
        try:
            record = await anyio.to_thread.run_sync(self.store.load, caller, app_id)
        except SecretStoreUnavailableError as exc:
            # No keyring: nothing can have been remembered, so decide from the config alone.
            logger.info("consent decisions cannot be read (%s)", exc.data.get("reason"))
            record = None
        self._records[key] = (time.monotonic(), record)
        return record

    def _question(
        self,
        target: ConsentTarget,
        app: AppDescriptor,
        tool: Tool,
        arguments: Mapping[str, object],
        verdict: Verdict,
    ) -> ConsentQuestion:
        offered = tuple(verdict.choices) or EVERY_DECISION
        lasting = self._no_lasting_grant(target)
        if lasting is not None:  # never offer an answer that would not be kept
            offered = ONCE_ONLY
        return ConsentQuestion(
            caller=target.caller,
            app_name=app.names.primary,
            app_id=app.id,
            source=target.binding,
            tool=tool.name,
            tool_description=tool.description,
            arguments=dict(arguments),
            offered=tuple(str(d) for d in offered),
            offer_remember_deny=lasting is None,
            tool_hints=tuple(annotation_hints(tool.annotations)) if tool.annotations is not None else (),
        )

    def _required(
        self,
        target: ConsentTarget,
        app: AppDescriptor,
        tool: Tool,
        arguments: Mapping[str, object],
        *,
        asking_failed: str | None = None,
    ) -> ConsentRequiredError:
        lasting = self._no_lasting_grant(target) or (
            "the user's config asks every time (consent.always_ask), so a lasting grant would not help"
            if self.config.always_ask
            else None
        )
        return ConsentRequiredError(
            caller=target.caller,
            app_id=app.id,
            app_name=app.names.primary,
            source=target.binding,
            tool=tool.name,
            tool_description=tool.description,
            tool_parameters=tool.parameters,
            arguments=dict(arguments),
            command=None if lasting else consent_command("grant", target),
            no_lasting_grant=lasting,
            config_file=str(self.config_path) if self.config_path is not None else None,
            auto_allow_entry=auto_allow_entry(target),
            asking_failed=asking_failed,
        )

    def _no_lasting_grant(self, target: ConsentTarget) -> str | None:
        """Why no "always" answer could be kept for this target, or None when one could."""
        if target.caller == UNKNOWN_CALLER:
            return "this client sends no name, so no lasting grant can be given to it"
        if not self.store.can_remember():
            return f"decisions cannot be kept on this machine now ({self.store.where} cannot be written)"
        return None

    async def _remember(self, target: ConsentTarget, answer: Answer) -> bool:
        """Keep a lasting answer in the store; False when it should have been kept and was not."""
        decision, remember = Decision(answer[0]), answer[1]
        if decision == Decision.ALLOW_ONCE or (decision == Decision.DENY and not remember):
            return True
        self._records.pop((target.caller, target.app_id), None)
        try:
            await anyio.to_thread.run_sync(
                lambda: self.store.decide(target, decision, remember_deny=remember, now=time.time())
            )
        except SecretStoreUnavailableError as exc:
            logger.warning("the consent decision applies to this call only: %s", exc.message)
            return False
        return True


def auto_allow_entry(target: ConsentTarget) -> str:
    """The `[consent.auto_allow]` tools entry that trusts this tool for every client: an app is
    named by its id when its descriptor is local, by its origin when it came from the web."""
    app = target.app_id if is_local_binding(target.binding) else target.binding
    return f"{app}/{target.tool}"


def _offered(answer: Answer, question: ConsentQuestion) -> Answer:
    """The answer if the question offered it; otherwise a denial for this call only."""
    decision, remember = answer
    if decision not in question.offered or (
        remember and decision == "deny" and not question.offer_remember_deny
    ):
        logger.warning("a consent prompter answered %r, which was not offered: treated as a denial", decision)
        return ("deny", False)
    return answer


def _denied(target: ConsentTarget, *, remembered: bool) -> ConsentDeniedError:
    return ConsentDeniedError(
        caller=target.caller,
        app_id=target.app_id,
        tool=target.tool,
        remembered=remembered,
        command=consent_command("revoke", target),
    )
