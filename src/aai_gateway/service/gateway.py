"""The gateway's operations, independent of MCP: what to list, guides, and running one operation.

The MCP server and the CLI both call this, so `aai-gateway exec` behaves exactly like `aai_exec`.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import anyio

from ..auth.provider import AuthProvider
from ..bulk import without_cyclic_gc
from ..consent.gate import ConsentGate, Prompter
from ..consent.listing_config import ListingConfig
from ..consent.policy import UNKNOWN_CALLER
from ..descriptor import AppDescriptor
from ..descriptor.card import AppCard, AppIdentity, OperationText, card_of, texts_of
from ..descriptor.mcp_tools import server_probe
from ..descriptor.model import McpChannel
from ..discovery import Catalog, CatalogEntry
from ..discovery.catalog import catalog_with_snapshot, with_snapshot
from ..discovery.mcp_snapshots import Snapshot, SnapshotStore
from ..discovery.web_discovery import WebDiscovery
from ..errors import AaiError, FeatureOffError, UnknownAppError, UsageError
from ..executors import ExecutorRegistry, Invocation, ProgressReporter, ToolResult, UserAsker
from ..executors.answer_json import check_answer
from ..executors.base import UpstreamAuth
from ..search import DEFAULT_LIMIT
from .app_entries import AppEntry, Listing, pin_of
from .arguments import ArgumentValidator
from .disclosure import Disclosure
from .naming import AAI_EXEC, ToolNameStyle
from .permissions import PermissionPrompter, permission_asker, permission_prompters_of
from .resolve import AppDirectory, resolve_tool
from .search import Asked, SearchAnswer

logger = logging.getLogger(__name__)

ListChanged = Callable[[], Awaitable[None]]


@dataclass(frozen=True)
class Caller:
    """Who is asking: the MCP client's name and version from its client info."""

    name: str = UNKNOWN_CALLER
    version: str | None = None

    def __str__(self) -> str:
        return f"{self.name} {self.version}" if self.version else self.name


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
        snapshots: SnapshotStore | None = None,
        listing: ListingConfig | None = None,
        log_pins: bool = True,
    ) -> None:
        """`log_pins`: warn of pinned apps tools/list cannot show (a serving gateway's log; a
        command that only uses the gateway has them in `scan`'s listing section)."""
        self.registry = registry
        self.snapshots = snapshots
        self.on_list_changed: ListChanged | None = None
        """Called when what tools/list shows changed other than by `set_catalog` (the server
        sets it to tell its client; see `apply_snapshot`)."""
        self._snapshot_locks: dict[tuple[str, str], anyio.Lock] = {}
        self.tool_names: ToolNameStyle = tool_names
        self.locale = locale
        self.auth = auth
        self.web = web
        self.consent = consent
        self._arguments = ArgumentValidator()
        self.listing_settings = listing or ListingConfig()
        self._shown = Disclosure(
            registry,
            tool_names=tool_names,
            locale=locale,
            settings=self.listing_settings,
            reference_for=self.reference_for,
            texts_of=self._texts_of,
            log_pins=log_pins,
        )
        # Web apps by origin: fetched by web_discover, or cached by an earlier run.
        self._web_apps: dict[str, tuple[AppDescriptor, AppCard]] = {}
        if web is not None:
            for app in web.cached_apps():
                self._web_apps[str(app.binding)] = (app, card_of(app))
        self.catalog = catalog
        self.directory = AppDirectory([])
        self.set_catalog(catalog)
        taker = registry.snapshot_taker()
        if taker is not None:
            taker.on_snapshot(self._snapshot_reported)

    # ----------------------------------------------------------------- what agents see

    def set_catalog(self, catalog: Catalog) -> bool:
        """Install a new catalog; True when what tools/list shows has changed."""
        with without_cyclic_gc():
            self.catalog = catalog
            self.directory = AppDirectory((e.card for e in catalog.entries), self._web_cards())
            self._arguments.clear()
            return self._shown.update(catalog.cards, self._web_cards())

    def _web_cards(self) -> list[AppCard]:
        return [card for _, card in self._web_apps.values()]

    @property
    def entries(self) -> list[AppEntry]:
        """The app entries tools/list shows (all listable apps, or the pinned ones when bounded)."""
        return list(self._shown.listing.entries)

    @property
    def listing(self) -> Listing:
        """What tools/list shows of the apps, computed once per catalog version."""
        return self._shown.listing

    def entry_for_tool_name(self, name: str) -> AppEntry | None:
        """The app behind an `app_<id>` entry, listed or not; the other naming style is accepted
        too. A dictionary read."""
        return self._shown.app_entries.for_tool_name(name)

    @property
    def exec_tool_name(self) -> str:
        return AAI_EXEC[self.tool_names]

    # ----------------------------------------------------------------- guides and search

    def resolve(self, reference: str) -> AppDescriptor:
        """The app a reference names, among local, bundled and web apps (see `resolve.py`),
        loaded in full."""
        return self.descriptor_of(self.directory.resolve(reference))

    def descriptor_of(self, app: AppCard | AppDescriptor) -> AppDescriptor:
        """The full descriptor of the app `app` stands for: held for web apps and apps with their
        MCP server's tools, else loaded from its file (the most recently used are kept)."""
        if isinstance(app, AppDescriptor):
            return app
        if not app.binding.is_local:
            held = self._web_apps.get(str(app.binding))
            if held is not None and held[0].id == app.id:
                return held[0]
        entry = self.catalog.entry(app.key)
        if entry is None:
            raise UnknownAppError(app.id, [c.id for c in self.directory.apps])
        return entry.descriptor

    def all_apps(self) -> list[AppDescriptor]:
        """Every app the gateway knows, loaded in full: discovered and bundled, then web apps
        (not all listed). For commands that show them all: each is read from its file."""
        return [self.descriptor_of(card) for card in self.directory.apps]

    def reference_for(self, app: AppIdentity) -> str:
        """What names exactly `app`: its id, unless another app claims that id too."""
        return self.directory.reference_for(app)

    def _texts_of(self, cards: Sequence[AppCard]) -> dict[tuple[str, str], Sequence[OperationText]]:
        """What search indexes of each app of `cards`: from the card cache, else the descriptor."""
        found: dict[tuple[str, str], Sequence[OperationText]] = {}
        from_files: list[tuple[AppCard, str]] = []
        for card in cards:
            entry = self.catalog.entry(card.key) if card.binding.is_local else None
            if entry is not None and entry.held is None and self.catalog.loads is not None:
                from_files.append((card, entry.stamp))
                continue
            try:
                found[card.key] = texts_of(self.descriptor_of(card))
            except AaiError:
                continue
        if from_files and self.catalog.loads is not None:
            by_path = self.catalog.loads.texts(from_files)
            for card, _ in from_files:
                texts = by_path.get(card.location)
                if texts is not None:
                    found[card.key] = texts
        return found

    def guide(self, reference: str, locale: str | None = None) -> str:
        return self.render(self.resolve(reference), locale)

    def render(self, app: AppDescriptor, locale: str | None = None) -> str:
        """The guide of `app`: an index when it would be longer than the bound (`guide/`)."""
        return self._shown.render(app, locale)

    async def guide_of(self, app: AppCard | AppDescriptor, locale: str | None = None) -> str:
        """The guide of `app`; an app whose tools are its MCP server's has them read first, when
        they are not known yet (`ensure_tools`)."""
        return self.render(await self.ensure_tools(self.descriptor_of(app)), locale)

    async def operations_of(
        self, app: AppCard | AppDescriptor, names: Sequence[str], locale: str | None = None
    ) -> str:
        """The full details of the operations `names` of `app` (what `app_<id>` answers when
        given `operations`); UNKNOWN_TOOL naming the closest names for names it lacks."""
        return self._shown.operations(await self.ensure_tools(self.descriptor_of(app)), names, locale)

    async def search(
        self, query: str, limit: int = DEFAULT_LIMIT, app: str | None = None, offset: int = 0
    ) -> SearchAnswer:
        """`aai_search`: the best-matching apps and operations among every app tools/list could
        list (listed or not); with `app` (any reference `aai_exec` accepts), that app's
        operations with their full details, all of them in order for a blank query. `offset`:
        the page's first result, counted from 0."""
        asked = Asked(query, limit, offset)
        if app is None:
            return await self._shown.search(asked)
        return await self._shown.search_in(await self.ensure_tools(self.resolve(app)), asked)

    async def prepare_search(self) -> int | None:
        """When tools/list is bounded (agents then reach apps through `aai_search`), builds the
        search index now, so that the first search does not wait for it, and the indexes that
        find an app by reference, which the first search, guide or call would build: how many
        apps the search index holds. None, and nothing built, when every app is listed."""
        if self.listing.mode != "bounded":
            return None
        await self._shown.searcher.prepare()
        self.directory.prepare()
        return self._shown.searcher.size

    # ----------------------------------------------------------------- MCP servers' own tools

    def unread_servers(self) -> list[AppDescriptor]:
        """The apps whose MCP server can run here and whose tools were never read: until they
        are, search finds them by name and description only."""
        return [self.descriptor_of(card) for card in self._shown.unread]

    async def ensure_tools(self, app: AppDescriptor) -> AppDescriptor:
        """`app` with its tools. An app that leaves them to its MCP server and has no usable
        snapshot has its server asked now (started if need be), once however many callers ask
        at the same time; without an `mcp` executor that can, it stays without tools."""
        if app.tools_declared or app.server_tools_read or app.platform is None:
            return app
        taker = self.registry.snapshot_taker()
        if taker is None:
            return app
        lock = self._snapshot_locks.setdefault((str(app.binding), app.id), anyio.Lock())
        async with lock:
            current = self._current(app)
            if current.tools_declared or current.server_tools_read:
                return current
            snapshot = await taker.take_snapshot(current, *await self._server_access(current))
            return (await self.apply_snapshot(current, snapshot)).descriptor

    async def refresh_snapshot(self, app: AppDescriptor) -> CatalogEntry:
        """Ask `app`'s MCP server for its tools again, keep and apply them (the explicit
        request: `aai-gateway cache refresh`). NOT_IMPLEMENTED without an `mcp` executor that
        can; INVALID_REQUEST for an app that declares its tools itself."""
        if app.tools_declared or not any(isinstance(s.channel, McpChannel) for s in app.sections):
            raise UsageError(
                f"{app.id} declares its tools in its descriptor ({app.source.location}); only an "
                "'mcp' descriptor without 'tools' takes them from its server",
                app=app.id,
            )
        taker = self.registry.require_snapshot_taker()
        return await self.apply_snapshot(app, await taker.take_snapshot(app, *await self._server_access(app)))

    async def _server_access(self, app: AppDescriptor) -> tuple[dict[str, str], UpstreamAuth | None]:
        """The keyring secrets `app`'s MCP server is started or reached with, and its sign-in."""
        probe = server_probe(app)
        if probe is None or self.auth is None:
            return {}, None
        return await self.auth.mcp_secrets(app, probe), await self.auth.mcp_http_auth(app)

    async def apply_snapshot(self, app: AppDescriptor, snapshot: Snapshot) -> CatalogEntry:
        """Keep `snapshot` (in the snapshot store, when there is one) and give `app` its tools.
        When what tools/list shows changed, `on_list_changed` is awaited. A snapshot taken for
        another execution section than `app`'s (the descriptor changed meanwhile) is not
        applied. Saving is best effort: a snapshot that cannot be written is still applied."""
        if snapshot.is_stale_for(app):
            logger.info("%s: a tool snapshot of an earlier version of its descriptor is not applied", app.id)
            return with_snapshot(CatalogEntry.of(app, "named"), None)
        if self.snapshots is not None:
            try:
                await anyio.to_thread.run_sync(self.snapshots.save, app, snapshot)
            except OSError as exc:
                logger.warning("%s: cannot keep the tool snapshot of its MCP server: %s", app.id, exc)
        changed = self.set_catalog(catalog_with_snapshot(self.catalog, app, snapshot))
        if changed and self.on_list_changed is not None:
            await self.on_list_changed()
        entry = self.catalog.entry((str(app.binding), app.id))
        return entry if entry is not None else with_snapshot(CatalogEntry.of(app, "named"), snapshot)

    async def _snapshot_reported(self, app: AppDescriptor, snapshot: Snapshot) -> None:
        """The `SnapshotListener` of the mcp executor: never raises into it."""
        try:
            await self.apply_snapshot(self._current(app), snapshot)
        except Exception:
            logger.exception("%s: applying the tools its MCP server listed failed", app.id)

    def _current(self, app: AppDescriptor) -> AppDescriptor:
        """The catalog's version of `app` (it may have tools since), or `app` itself."""
        entry = self.catalog.entry((str(app.binding), app.id))
        if entry is None:
            return app
        try:
            return entry.descriptor
        except AaiError:
            return app

    async def web_discover(self, reference: str, locale: str | None = None) -> str:
        """The guide of a web app: one already known here (local or bundled, found by URL, domain
        or name: no network, and trusted over anything fetched), else fetched or from the cache."""
        try:
            known_app = self.directory.resolve(reference, include_web=False)
        except AaiError:
            known_app = None
        if known_app is not None:
            return self.render(self.descriptor_of(known_app), locale)
        if self.web is None:
            raise FeatureOffError("web discovery")
        result = await self.web.discover(reference, known_apps=[app for app, _ in self._web_apps.values()])
        app = result.app
        self._web_apps[str(app.binding)] = (app, card_of(app))
        self.directory = AppDirectory(self.directory.local, self._web_cards())
        pinned = pin_of(app) in self.listing_settings.pinned  # listed once it is known
        if pinned and self._shown.update(self.catalog.cards, self._web_cards()) and self.on_list_changed:
            await self.on_list_changed()
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
        app = await self.ensure_tools(self.resolve(app_reference))
        tool = resolve_tool(app, tool_name)
        prepared = self._arguments.prepare(app, tool, arguments)
        executor = self.registry.executor_for(app, tool)
        await self.consent.check(caller.name, app, tool, prepared, prompters=prompters)
        http_auth = await self.auth.http_auth(app, tool) if self.auth is not None else None
        secrets = await self.auth.mcp_secrets(app, tool) if self.auth is not None else {}
        upstream_auth = await self.auth.mcp_http_auth(app) if self.auth is not None else None
        invocation = Invocation(
            app,
            tool,
            prepared,
            request_id or uuid.uuid4().hex,
            progress,
            http_auth,
            ask_permission=permission_asker(
                caller.name,
                app,
                permission_prompters_of(prompters, permission_prompters, self.consent.dialog),
            ),
            secrets=secrets,
            upstream_auth=upstream_auth,
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

    async def aclose(self) -> None:
        await self.registry.aclose()
        if self.auth is not None:
            await self.auth.aclose()
