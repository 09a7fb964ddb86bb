"""What agents are shown of the apps, for one catalog version: the app entries and what
tools/list lists of them (`app_entries.py`), guides and operations' details (`guide/`), and
search (`search.py`). The gateway owns one and tells it when the apps change (`update`).

An app is *listable* when it has an operation that can run here, or when its operations are
its MCP server's, not read yet, and that server can run here (they are read on first use).
Listable are the catalog's apps and the web apps pinned in `[listing]`; the search index holds
every listable app with the operations that can run here. All of it is worked out from the apps'
cards (`descriptor/card.py`): executors are asked once per distinct way of running operations
(`OperationRun`) per catalog version, not once per operation.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable, Sequence

from ..consent.listing_config import ListingConfig
from ..descriptor import AppDescriptor, ExecutionType, Tool
from ..descriptor.card import AppCard, AppIdentity, OperationRun
from ..descriptor.quoting import shortened
from ..errors import UnknownOperationError
from ..executors import ExecutorRegistry
from ..guide import GuideOptions, guide_with, render_operations
from .app_entries import AppEntries, Listing, pin_of
from .naming import AAI_EXEC, AAI_SEARCH, ToolNameStyle
from .rendered_guides import RenderedGuides
from .resolve import close_names
from .search import Asked, SearchAnswer, Searcher, TextsOf, answer_across, answer_in_app

logger = logging.getLogger(__name__)
MAX_CLOSE_MATCHES_FOR = 5  # unknown operation names an error names, with their closest names


class Disclosure:
    def __init__(
        self,
        registry: ExecutorRegistry,
        *,
        tool_names: ToolNameStyle,
        locale: str | None,
        settings: ListingConfig,
        reference_for: Callable[[AppIdentity], str],
        texts_of: TextsOf,
        log_pins: bool = True,
    ) -> None:
        self.registry = registry
        self.log_pins = log_pins
        self.tool_names: ToolNameStyle = tool_names
        self.locale = locale
        self.settings = settings
        self.reference_for = reference_for
        self.app_entries = AppEntries([], tool_names, settings)
        self.searcher = Searcher(texts_of)
        self.rendered = RenderedGuides()
        self._pin_problems: list[str] = []
        self._unread: list[AppCard] = []

    @property
    def listing(self) -> Listing:
        return self.app_entries.listing

    @property
    def unread(self) -> tuple[AppCard, ...]:
        """The apps whose MCP server can run here and whose tools were never read."""
        return tuple(self._unread)

    @property
    def exec_tool(self) -> str:
        return AAI_EXEC[self.tool_names]

    @property
    def search_tool(self) -> str:
        return AAI_SEARCH[self.tool_names]

    def update(self, apps: Iterable[AppCard], web_apps: Iterable[AppCard]) -> bool:
        """The entries, the listing and the search index of the catalog's `apps` and the pinned
        ones of `web_apps`. True when what tools/list shows has changed."""
        before = self.listing
        pins = set(self.settings.pinned)
        runs = RunsHere(self.registry)
        found = [(app, runs.operations(app)) for app in [*apps, *(a for a in web_apps if pin_of(a) in pins)]]
        listable = [(app, names) for app, names in found if names or runs.server_runs(app)]
        self._unread = [app for app, names in listable if not names and app.server_run is not None]
        why: dict[str, str] = {}
        if pins:  # a pinned app that cannot run here is reported with why (`Listing.summary`)
            listed = {id(app) for app, _ in listable}
            unlisted = [app for app, _ in found if id(app) not in listed]
            why = {pin: runs.why_not(app) for app in unlisted if (pin := pin_of(app)) in pins}
        self.app_entries = AppEntries([app for app, _ in listable], self.tool_names, self.settings, why)
        self.searcher.reset(listable)
        after = self.listing
        problems = after.summary()[2:]  # pins that are not listed, and why
        if self.log_pins and problems and problems != self._pin_problems:
            for problem in problems:
                logger.warning("config [listing]: %s", problem)
        self._pin_problems = problems
        return (before.mode, before.shown()) != (after.mode, after.shown())

    def runnable_tools(self, app: AppDescriptor) -> list[Tool]:
        unavailable = self.unavailable(app)
        return [t for t in app.tools if t.name not in unavailable]

    def unavailable(self, app: AppDescriptor) -> dict[str, str]:
        """Why operations of `app` cannot run here, by name. Asked at every read (a program may
        have been installed since), once per channel object and kind of call: an executor's
        answer depends on nothing else (`RunsHere`), and a section's operations share a channel."""
        answers: dict[tuple[int, str | None], str | None] = {}
        unavailable: dict[str, str] = {}
        for tool in app.tools:
            key = (id(tool.channel), tool.call.kind if tool.call is not None else None)
            if key not in answers:
                answers[key] = self.registry.unavailable_reason(tool)
            reason = answers[key]
            if reason is not None:
                unavailable[tool.name] = reason
        return unavailable

    # ----------------------------------------------------------------- guides

    def options(self, app: AppDescriptor, locale: str | None = None) -> GuideOptions:
        """How `app`'s guides are written. They name only tools that tools/list lists: the app's
        entry when listed, else the search tool (clients may refuse to call a tool not listed)."""
        entry = self.app_entries.for_app(app)
        return GuideOptions(
            locale=locale or self.locale,
            exec_tool=self.exec_tool,
            unavailable=self.unavailable(app),
            reference=self.reference_for(app),
            entry_tool=entry.tool_name if entry is not None and self.app_entries.is_listed(app) else None,
            search_tool=self.search_tool,
        )

    def render(self, app: AppDescriptor, locale: str | None = None) -> str:
        """The guide of `app`: an index when it would be longer than the bound (`guide/`)."""
        options = self.options(app, locale)
        return self.rendered.text(app, options, lambda: guide_with(app, options))

    def operations(self, app: AppDescriptor, names: Sequence[str], locale: str | None = None) -> str:
        """The full details of the operations `names` of `app` (exact names, or unique ignoring
        case), bounded like a guide. UNKNOWN_TOOL, with the closest names, for names it lacks."""
        found = [_operation_named(app, name) for name in names]
        unknown = list(dict.fromkeys(name for name, tool in zip(names, found, strict=True) if tool is None))
        if unknown:
            known = [t.name for t in app.tools]
            listed = unknown[:MAX_CLOSE_MATCHES_FOR]  # a client may send 50 names of a megabyte each
            close = {shortened(name): close_names(name, known) for name in listed}
            raise UnknownOperationError(
                app.id, [shortened(name) for name in listed], close, len(known), len(unknown) - len(listed)
            )
        chosen = [t.name for t in found if t is not None]
        options = self.options(app, locale)
        return self.rendered.text(app, options, lambda: render_operations(app, chosen, options), chosen)

    # ----------------------------------------------------------------- search

    async def search(self, asked: Asked) -> SearchAnswer:
        """The best-matching apps and operations among every listable app, listed or not."""
        page = await self.searcher.search(asked.query, asked.limit, asked.offset)
        return answer_across(
            asked,
            page,
            reference_of=self._reference_of_listable,
            listed_entry=self._listed_entry_name,
            search_tool=self.search_tool,
            exec_tool=self.exec_tool,
            unread=[self._reference_of_listable(app) for app in self._unread],
        )

    async def search_in(self, app: AppDescriptor, asked: Asked) -> SearchAnswer:
        """`app`'s operations matching the query with their full details (those it names first);
        all of them, in order, for a blank query."""
        tools = self.runnable_tools(app)
        page = await self.searcher.search_app(asked.query, asked.limit, asked.offset, app, tools)
        return answer_in_app(asked, app, page, self.options(app), len(tools))

    def _reference_of_listable(self, app: AppCard) -> str:
        """The reference of an app of the index (which may hold a copy with fewer tools)."""
        entry = self.app_entries.for_app(app)
        return self.reference_for(entry.app if entry is not None else app)

    def _listed_entry_name(self, app: AppCard) -> str | None:
        entry = self.app_entries.for_app(app)
        return entry.tool_name if entry is not None and self.app_entries.is_listed(app) else None


def listing_of(
    registry: ExecutorRegistry,
    settings: ListingConfig,
    apps: Iterable[AppCard],
    web_apps: Iterable[AppCard] = (),
) -> Listing:
    """What tools/list would show of `apps` and the pinned ones of `web_apps` (for `scan`)."""
    shown = Disclosure(
        registry,
        tool_names="portable",
        locale=None,
        settings=settings,
        reference_for=lambda app: app.id,
        texts_of=lambda cards: {},
        log_pins=False,
    )
    shown.update(apps, web_apps)
    return shown.listing


class RunsHere:
    """Which operations of apps can run here, asking the executors once per `OperationRun` (its
    channel and call kind: all an executor's answer depends on), or once per what the
    executor says it reads (`ExecutorBase.availability_from`: the HTTP executor reads nothing of
    a channel, so thousands of web APIs are one question). One per catalog version: a program
    installed since is found at the next."""

    def __init__(self, registry: ExecutorRegistry) -> None:
        self.registry = registry
        self._answers: dict[tuple[str | None, ...], str | None] = {}
        self._by_run: dict[tuple[str, str | None], str | None] = {}

    def reason(self, run: OperationRun, name: str) -> str | None:
        """Why the operations of `run` cannot run here (None: they can); `name`, one of them."""
        run_key = run.key
        try:
            return self._by_run[run_key]
        except KeyError:
            pass
        key = self._key(run)
        if key not in self._answers:
            self._answers[key] = self.registry.unavailable_reason(run.stand_in(name))
        answer = self._by_run[run_key] = self._answers[key]
        return answer

    def _key(self, run: OperationRun) -> tuple[str | None, ...]:
        try:
            executor = self.registry.registered(ExecutionType(run.execution))
        except ValueError:
            executor = None
        fields: tuple[str, ...] | None = getattr(executor, "availability_from", None)
        if fields is None:
            return run.key
        if not fields:
            return (run.execution, run.call_kind)
        channel = json.loads(run.channel)
        return (run.execution, run.call_kind, json.dumps([channel.get(f) for f in fields]))

    def operations(self, app: AppCard) -> tuple[str, ...]:
        """The names of `app`'s operations that can run here."""
        runs = app.runs
        if not runs:
            return ()
        if len(runs) == 1:  # most apps: one way of running for all their operations
            return app.operations if self.reason(runs[0], app.operations[0]) is None else ()
        can = [
            self.reason(run, app.operations[app.operation_runs.index(n)]) is None
            for n, run in enumerate(runs)
        ]
        if all(can):
            return app.operations
        return tuple(name for name, n in zip(app.operations, app.operation_runs, strict=True) if can[n])

    def why_not(self, app: AppCard) -> str:
        """Why none of `app`'s operations can run here: the first of its runs' reasons."""
        for number, run in enumerate(app.runs):
            reason = self.reason(run, app.operations[app.operation_runs.index(number)])
            if reason:
                return reason
        if app.server_run is not None:
            return self.reason(app.server_run, "server") or "its MCP server cannot run here"
        return "it has no operations"

    def server_runs(self, app: AppCard) -> bool:
        """Whether `app`'s MCP server can run here, for an app whose operations are the server's
        and not read yet (its executor is asked about a stand-in: none of its own is known)."""
        return app.server_run is not None and self.reason(app.server_run, "server") is None


def _operation_named(app: AppDescriptor, name: str) -> Tool | None:
    """The operation called `name`, else the one whose name differs only in case."""
    tool = app.tool(name)
    if tool is not None:
        return tool
    matches = [t for t in app.tools if t.name.casefold() == name.strip().casefold()]
    return matches[0] if len(matches) == 1 else None
