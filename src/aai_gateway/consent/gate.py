"""The check every execution passes first: may this caller use this tool of this app?

Order: the stored decision and the user's config answer without asking; otherwise the user is
asked through the first prompter that can (the MCP client's elicitation, or the terminal for the
CLI), then a native dialog when a desktop session is present; if nobody can ask,
CONSENT_REQUIRED tells the agent what to show the user and the command that grants it.
"""

from __future__ import annotations

import logging
import shlex
import time
from collections.abc import Mapping, Sequence
from typing import Protocol

import anyio

from ..auth.secrets import SecretStoreUnavailableError
from ..descriptor import AppDescriptor, Tool
from ..errors import ConsentDeniedError, ConsentRequiredError
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
)
from .prompt_text import ConsentQuestion
from .store import ConsentStore

logger = logging.getLogger(__name__)

Answer = tuple[str, bool]  # (decision, remember a denial)
RECORD_SECONDS = 5.0  # how stale a decision made in another process (the CLI) may be here


class Prompter(Protocol):
    """One way to ask the user; None when it cannot ask now (no capability, no terminal)."""

    async def ask(self, question: ConsentQuestion) -> Answer | None: ...


class DialogPrompter:
    def __init__(
        self, backend: DialogBackend, timeout_seconds: float = dialog.DEFAULT_TIMEOUT_SECONDS
    ) -> None:
        self.backend = backend
        self.timeout_seconds = timeout_seconds

    async def ask(self, question: ConsentQuestion) -> Answer | None:
        return await dialog.ask(question, self.backend, self.timeout_seconds)


def grant_command(caller: str, app_reference: str, tool: str) -> str:
    return (
        f"aai-gateway consent grant --caller {shlex.quote(caller)} --app {shlex.quote(app_reference)} "
        f"--tool {shlex.quote(tool)}"
    )


def revoke_command(caller: str, app_reference: str, tool: str) -> str:
    return (
        f"aai-gateway consent revoke --caller {shlex.quote(caller)} --app {shlex.quote(app_reference)} "
        f"--tool {shlex.quote(tool)}"
    )


class ConsentGate:
    def __init__(
        self,
        store: ConsentStore,
        config: ConsentConfig | None = None,
        *,
        dialog_backend: DialogBackend | None = None,
    ) -> None:
        self.store = store
        self.config = config or ConsentConfig()
        self.dialog = DialogPrompter(dialog_backend) if dialog_backend is not None else None
        self._records: dict[tuple[str, str], tuple[float, ConsentRecord | None]] = {}

    async def check(
        self,
        caller: str,
        app: AppDescriptor,
        tool: Tool,
        arguments: Mapping[str, object],
        *,
        app_reference: str,
        prompters: Sequence[Prompter] = (),
    ) -> None:
        """Returns when the call may go ahead; raises CONSENT_DENIED or CONSENT_REQUIRED."""
        verdict = await self._verdict(caller, app, tool)
        if verdict.must_ask:
            # About to ask (or to say nobody can): the user may just have run the grant command.
            self._records.pop((caller, app.id), None)
            verdict = await self._verdict(caller, app, tool)
        if verdict.allowed:
            return
        if verdict.denied:
            raise ConsentDeniedError(
                caller=caller,
                app_id=app.id,
                tool=tool.name,
                remembered=verdict.remembered,
                command=revoke_command(caller, app_reference, tool.name),
            )
        question = self._question(caller, app, tool, arguments, verdict)
        for prompter in [*prompters, *([self.dialog] if self.dialog else [])]:
            answer = await prompter.ask(question)
            if answer is not None:
                await self._remember(caller, app, tool, answer)
                decision, remember = answer
                if decision == Decision.DENY:
                    raise ConsentDeniedError(
                        caller=caller,
                        app_id=app.id,
                        tool=tool.name,
                        remembered=remember,
                        command=revoke_command(caller, app_reference, tool.name),
                    )
                return
        raise ConsentRequiredError(
            caller=caller,
            app_id=app.id,
            app_name=app.names.primary,
            tool=tool.name,
            tool_description=tool.description,
            tool_parameters=tool.parameters,
            command=grant_command(caller, app_reference, tool.name),
        )

    async def _verdict(self, caller: str, app: AppDescriptor, tool: Tool) -> Verdict:
        return evaluate(
            await self._record(caller, app.id), ConsentTarget.of(caller, app, tool.name), self.config
        )

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

    @staticmethod
    def _question(
        caller: str, app: AppDescriptor, tool: Tool, arguments: Mapping[str, object], verdict: Verdict
    ) -> ConsentQuestion:
        offered = tuple(verdict.choices) or EVERY_DECISION
        if caller == UNKNOWN_CALLER:  # every nameless client would share a lasting grant
            offered = ONCE_ONLY
        source = app.source.origin or ("bundled" if app.source.kind == "bundled" else app.source.location)
        return ConsentQuestion(
            caller=caller,
            app_name=app.names.primary,
            app_id=app.id,
            source=source,
            tool=tool.name,
            tool_description=tool.description,
            arguments=dict(arguments),
            offered=tuple(str(d) for d in offered),
            offer_remember_deny=caller != UNKNOWN_CALLER,
        )

    async def _remember(self, caller: str, app: AppDescriptor, tool: Tool, answer: Answer) -> None:
        decision, remember = Decision(answer[0]), answer[1]
        if decision == Decision.ALLOW_ONCE or (decision == Decision.DENY and not remember):
            return
        self._records.pop((caller, app.id), None)
        try:
            await anyio.to_thread.run_sync(
                lambda: self.store.record_decision(
                    caller, app, tool.name, decision, remember_deny=remember, now=time.time()
                )
            )
        except SecretStoreUnavailableError as exc:
            logger.warning("the consent decision applies to this call only: %s", exc.message)
