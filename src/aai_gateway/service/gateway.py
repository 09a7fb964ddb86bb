"""The gateway's operations, independent of MCP: what to list, guides, and running one operation.

The MCP server and the CLI both call this, so `aai-gateway exec` behaves exactly like `aai_exec`.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..auth.provider import AuthProvider
from ..consent.gate import ConsentGate, Prompter
from ..consent.policy import UNKNOWN_CALLER
from ..descriptor import AppDescriptor, Tool
from ..discovery import Catalog
from ..discovery.web_discovery import WebDiscovery
from ..errors import AaiError, FeatureOffError
from ..executors import ExecutorRegistry, Invocation, ProgressReporter, ToolResult, UserAsker
from ..executors.answer_json import check_answer
from ..guide import render_guide
from .arguments import ArgumentValidator
from .naming import AAI_EXEC, ToolNameStyle, app_entry_description, app_tool_names
from .permissions import ConsentPrompterAdapter, PermissionPrompter, permission_asker
from .resolve import AppDirectory, resolve_tool

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Caller:
    """Who is asking: the MCP client's name and version from its client info."""

    name: str = UNKNOWN_CALLER
    version: str | None = None

    def __str__(self) -> str:
        return f"{self.name} {self.version}" if self.version else self.name


@dataclass(frozen=True)
class AppEntry:
    tool_name: str
    description: str
    app: AppDescriptor


class Gateway:
    def __init__(
        self,
        catalog: Catalog,
        registry: ExecutorRegistry,
        *,
        consent: ConsentGate,
        tool_names: ToolNameStyle = "portable",
        locale: str | None = None,
        auth: AuthProvider | None = None,
        web: WebDiscovery | None = None,
    ) -> None:
        self.registry = registry
        self.tool_names: ToolNameStyle = tool_names
        self.locale = locale
        self.auth = auth
        self.web = web
        self.consent = consent
        self._arguments = ArgumentValidator()
        self._entries: list[AppEntry] = []
        # Web apps by origin: fetched by web_discover, or cached by an earlier run.
        self._web_apps: dict[str, AppDescriptor] = {}
        if web is not None:
            for app in web.cached_apps():
                self._web_apps[str(app.binding)] = app
        self.catalog = catalog
        self.directory = AppDirectory([])
        self.set_catalog(catalog)

    # ----------------------------------------------------------------- what agents see

    def set_catalog(self, catalog: Catalog) -> bool:
        """Install a new catalog; True when what tools/list shows has changed."""
        before = [(e.tool_name, e.description) for e in self._entries]
        self.catalog = catalog
        self.directory = AppDirectory((e.descriptor for e in catalog.entries), self._web_apps.values())
        self._arguments.clear()
        listed = [app for app in catalog.apps if self._runnable_tools(app)]
        names = app_tool_names((app.id for app in listed), self.tool_names)
        self._entries = [AppEntry(names[app.id], app_entry_description(app), app) for app in listed]
        return before != [(e.tool_name, e.description) for e in self._entries]

    @property
    def entries(self) -> list[AppEntry]:
        return list(self._entries)

    def entry_for_tool_name(self, name: str) -> AppEntry | None:
        """The app behind an `app_<id>` entry; the other naming style is accepted too."""
        for entry in self._entries:
            if name in (entry.tool_name, f"app:{entry.app.id}", f"app_{entry.app.id}"):
                return entry
        return None

    def _runnable_tools(self, app: AppDescriptor) -> list[Tool]:
        return [t for t in app.tools if self.registry.unavailable_reason(t) is None]

    @property
    def exec_tool_name(self) -> str:
        return AAI_EXEC[self.tool_names]

    # ----------------------------------------------------------------- guides

    def resolve(self, reference: str) -> AppDescriptor:
        """The app a reference names, among local, bundled and web apps (see `resolve.py`)."""
        return self.directory.resolve(reference)

    def all_apps(self) -> list[AppDescriptor]:
        """Every app the gateway knows: discovered and bundled, then web apps (not all listed)."""
        return self.directory.apps

    def reference_for(self, app: AppDescriptor) -> str:
        """What names exactly `app`: its id, unless another app claims that id too."""
        return self.directory.reference_for(app)

    def guide(self, reference: str, locale: str | None = None) -> str:
        return self.render(self.resolve(reference), locale)

    def render(self, app: AppDescriptor, locale: str | None = None) -> str:
        unavailable = {
            t.name: reason for t in app.tools if (reason := self.registry.unavailable_reason(t)) is not None
        }
        return render_guide(
            app,
            locale=locale or self.locale,
            exec_tool=self.exec_tool_name,
            unavailable=unavailable,
            reference=self.reference_for(app),
        )

    async def web_discover(self, reference: str, locale: str | None = None) -> str:
        """The guide of a web app: one already known here (local or bundled, found by URL, domain
        or name: no network, and trusted over anything fetched), else fetched or from the cache."""
        try:
            known_app = self.directory.resolve(reference, include_web=False)
        except AaiError:
            known_app = None
        if known_app is not None:
            return self.render(known_app, locale)
        if self.web is None:
            raise FeatureOffError("web discovery")
        result = await self.web.discover(reference, known_apps=self.directory.apps)
        app = result.app
        self._web_apps[str(app.binding)] = app
        self.directory = AppDirectory(self.directory.local, self._web_apps.values())
        guide = self.render(app, locale)
        if result.note:
            guide = f"> Note: {result.note}\n\n{guide}"
        return guide

    # ----------------------------------------------------------------- execution

    async def execute(
        self,
        app_reference: str,
        tool_name: str,
        arguments: Any,
        *,
        caller: Caller,
        request_id: str | None = None,
        progress: ProgressReporter | None = None,
        prompters: Sequence[Prompter] = (),
        permission_prompters: Sequence[PermissionPrompter] | None = None,
        ask_user: UserAsker | None = None,
    ) -> Any:
        """Every execution path goes through here: resolve, validate, consent, credentials, run.

        `prompters` ask for consent before the call; `permission_prompters` ask, during the call,
        when the app asks permission for something (default: `prompters`; a prompter that can
        only ask before a call, like 2026-07-28 elicitation, must not be among them). The native
        dialog of the consent gate, when there is one, is tried last for both. `ask_user` puts
        an app's own questions (an MCP server's elicitation) to the user during the call.

        The result is a JSON value, or a `ToolResult` an MCP server gave, passed on as it is."""
        app = self.resolve(app_reference)
        tool = resolve_tool(app, tool_name)
        prepared = self._arguments.prepare(app, tool, arguments)
        executor = self.registry.executor_for(app, tool)
        await self.consent.check(caller.name, app, tool, prepared, prompters=prompters)
        http_auth = await self.auth.http_auth(app, tool) if self.auth is not None else None
        secrets = await self.auth.mcp_secrets(app, tool) if self.auth is not None else {}
        invocation = Invocation(
            app,
            tool,
            prepared,
            request_id or uuid.uuid4().hex,
            progress,
            http_auth,
            ask_permission=permission_asker(
                caller.name, app, self._permission_prompters(prompters, permission_prompters)
            ),
            secrets=secrets,
            ask_user=ask_user,
        )
        started = time.perf_counter()
        outcome = "ok"
        try:
            result = await executor.execute(invocation)
            # Whatever the executor: an answer too deep, with a lone surrogate or an infinite
            # number could not travel back to the client as JSON (see answer_json)
            passed_on = isinstance(result, ToolResult)
            check_answer(result.wire() if passed_on else result, app_id=app.id, tool=tool.name)
            if passed_on and result.is_error:
                outcome = "tool_error"
            return result
        except AaiError as exc:
            outcome = exc.code.value
            raise
        except Exception:
            outcome = "crash"
            raise
        finally:
            logger.info(
                "exec caller=%r app=%s tool=%s outcome=%s %.1f ms",
                str(caller),
                app.id,
                tool.name,
                outcome,
                (time.perf_counter() - started) * 1000,
            )

    def _permission_prompters(
        self, prompters: Sequence[Prompter], permission_prompters: Sequence[PermissionPrompter] | None
    ) -> list[PermissionPrompter]:
        chosen: list[PermissionPrompter] = (
            [ConsentPrompterAdapter(p) for p in prompters]
            if permission_prompters is None
            else list(permission_prompters)
        )
        if self.consent.dialog is not None:
            chosen.append(ConsentPrompterAdapter(self.consent.dialog))
        return chosen

    async def aclose(self) -> None:
        await self.registry.aclose()
        if self.auth is not None:
            await self.auth.aclose()
