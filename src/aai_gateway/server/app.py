"""The MCP server: tools/list, tools/call, and telling clients when the app list changes.

Built on the SDK's low-level `Server`, which serves both protocol generations on one stdio
connection: the 2025-11-25 handshake and the 2026-07-28 per-request envelope.
"""

from __future__ import annotations

import logging
import math
import signal
import sys
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import mcp_types as types
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.lowlevel.server import NotificationOptions
from mcp.server.session import ServerSession
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ToolsListChanged
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from .. import __version__
from ..auth.credentials import Credential
from ..consent.policy import caller_name
from ..consent.prompt_text import Answer
from ..descriptor import app_reference
from ..discovery.change_notices import ChangeNotices
from ..discovery.watch import CatalogWatcher
from ..errors import AaiError, ErrorCode, InvalidArgumentError, UnknownGatewayToolError
from ..service import Caller, Gateway
from ..service.naming import AAI_EXEC, AAI_SEARCH, WEB_DISCOVER
from . import credentials, results
from .app_questions import ElicitationUserAsker
from .arguments import operations_argument, search_arguments
from .ask import Ask, CallMemories, NeedInput
from .consent_prompt import ElicitationPrompter, UrlConsentPrompter
from .limits import DEFAULT_MAX_MESSAGE_BYTES
from .listing import INSTRUCTIONS, ToolList, search_result
from .pages import Pages
from .permission_prompt import ElicitationPermissionPrompter
from .stdio_transport import stdio_transport

logger = logging.getLogger(__name__)

CLOSE_SECONDS = 20.0  # how long a signalled shutdown waits for agents and adapters to stop
MAX_RETRY_SECONDS = 300.0  # the longest wait before a failed rescan is tried again
SETTLE_SECONDS = 2.0
"""Background work of a start (watching the sources, asking the OS keyring) waits for the
client's first tools/list answer, or this long, so as not to slow the answers a client waits for."""


def caller_of(ctx: ServerRequestContext[Any, Any]) -> Caller:
    """The MCP client's name from its client info: the handshake's, or this request's `_meta`
    (`Unknown Client` when it sends none, or a blank one)."""
    params = ctx.session.client_params
    info = params.client_info if params is not None else None
    if info is None:
        return Caller()
    return Caller(caller_name(info.name), info.version or None)


def retry_delay(poll_interval: float, failures: int) -> float:
    """When to rescan again after `failures` failed rescans in a row: the poll interval, doubled
    after each, at most `MAX_RETRY_SECONDS`."""
    return float(min(poll_interval * 2 ** (failures - 1), MAX_RETRY_SECONDS))


class ListChangedNotifier:
    """`notifications/tools/list_changed` to both generations: over the handshake session's
    standalone channel (2025-11-25) and on `subscriptions/listen` streams (2026-07-28)."""

    def __init__(self) -> None:
        self.bus = InMemorySubscriptionBus()
        self.listen = ListenHandler(self.bus)
        self._legacy_session: ServerSession | None = None

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        """Server middleware: remembers the handshake-era session to notify later, from the
        moment its `initialize` is answered (a change seen before the client's next message
        must still reach it)."""
        if ctx.method != "initialize":
            if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
                self._legacy_session = ctx.session
            return await call_next(ctx)
        result = await call_next(ctx)
        if isinstance(result, dict) and result.get("protocolVersion") not in MODERN_PROTOCOL_VERSIONS:
            self._legacy_session = ctx.session
        return result

    async def tools_changed(self) -> None:
        if self._legacy_session is not None:
            try:
                await self._legacy_session.send_tool_list_changed()
            except Exception:  # the client may have gone; the next change tries again
                logger.warning("could not send tools/list_changed to the client", exc_info=True)
        await self.bus.publish(ToolsListChanged())

    def close(self) -> None:
        self.listen.close()


class GatewayServer:
    def __init__(
        self,
        gateway: Gateway,
        watcher: CatalogWatcher | None = None,
        poll_interval: float = 2.0,
        notices: ChangeNotices | None = None,
    ) -> None:
        """`watcher` rescans when `notices` says something may have changed (without notices:
        every `poll_interval` seconds); `poll_interval` 0: never."""
        self.gateway = gateway
        self.tool_list = ToolList(gateway)
        self.watcher = watcher
        self.poll_interval = poll_interval
        self.notices = notices if notices is not None else ChangeNotices.polling(poll_interval)
        self.notifier = ListChangedNotifier()
        # Tools an MCP server listed (a first use, its list_changed) may change the app list too.
        gateway.on_list_changed = self.notifier.tools_changed
        self.memories = CallMemories()
        self.credential_pages: Pages[Credential] = Pages("credentials")
        self.sign_ins: Pages[Credential | None] = Pages("sign-in")
        self.consent_pages: Pages[Answer] = Pages("consent")
        self._tasks: anyio.abc.TaskGroup | None = None
        self._listed = anyio.Event()  # the first tools/list is answered
        self._rescanned = anyio.Event()  # the first rescan after it is done (or none will run)
        self.closed = anyio.Event()  # set once everything the gateway started is stopped

    def build(self) -> Server[dict[str, Any]]:
        server: Server[dict[str, Any]] = Server(
            "aai-gateway",
            version=__version__,
            title="AAI Gateway",
            instructions=INSTRUCTIONS,
            lifespan=self._lifespan,
            on_list_tools=self.on_list_tools,
            on_call_tool=self.on_call_tool,
            on_subscriptions_listen=self.notifier.listen,
        )
        server.middleware.append(self.notifier)
        return server

    @asynccontextmanager
    async def _lifespan(self, _server: Server[dict[str, Any]]) -> AsyncIterator[dict[str, Any]]:
        async with anyio.create_task_group() as tasks:
            self._tasks = tasks
            if self.watcher is not None and self.poll_interval > 0:
                tasks.start_soon(self._watch)
            else:
                self._rescanned.set()
            tasks.start_soon(self._say_where_decisions_are_kept)
            tasks.start_soon(self._prepare_search)
            try:
                yield {}
            finally:
                tasks.cancel_scope.cancel()
                self.notifier.close()
                with anyio.CancelScope(shield=True):
                    await self.gateway.aclose()
                self.closed.set()

    async def _settled(self) -> None:
        with anyio.move_on_after(SETTLE_SECONDS):
            await self._listed.wait()

    async def _say_where_decisions_are_kept(self) -> None:
        await self._settled()
        store = self.gateway.consent.store  # finding out may ask the OS keyring: not on the start path
        logger.info("consent decisions are kept in %s", await anyio.to_thread.run_sync(lambda: store.where))

    async def _prepare_search(self) -> None:
        """The search index, built once the client has its first answer (never on the start
        path) and the first rescan is done (both at once would slow each other down, and the
        exit of a client leaving meanwhile waits for a rescan). A build that fails is logged;
        the first `aai_search` tries again and says why."""
        await self._settled()
        await self._rescanned.wait()
        started = time.perf_counter()
        try:
            apps = await self.gateway.prepare_search()
        except Exception:  # the server goes on: a search builds the index itself
            logger.warning("building the search index ahead of the first search failed", exc_info=True)
            return
        if apps is not None:
            logger.info("search index of %d apps ready in %.1f s", apps, time.perf_counter() - started)

    async def _watch(self) -> None:
        """Rescan whenever the notices say something may have changed; the rescan decides. A
        failed rescan is tried again after the poll interval even if no further notice comes."""
        assert self.watcher is not None
        await self._settled()  # what changes meanwhile, the first rescan sees
        async with self.notices:  # never raises: notifications that fail give way to polling
            failures = 0
            while True:
                with anyio.move_on_after(retry_delay(self.poll_interval, failures) if failures else math.inf):
                    await self.notices.wait()
                try:
                    catalog = await anyio.to_thread.run_sync(self.watcher.poll)
                except Exception:  # a scan failure must not stop the server
                    self._rescanned.set()
                    failures += 1
                    delay = retry_delay(self.poll_interval, failures)
                    if failures == 1:
                        logger.exception("rescanning descriptors failed; trying again in %g s", delay)
                    else:  # the same failure again: its traceback once is enough
                        logger.debug("rescanning failed again; next try in %g s", delay, exc_info=True)
                    continue
                failures = 0
                self._rescanned.set()
                if catalog is not None and self.gateway.set_catalog(catalog):
                    logger.info("app list changed: %d apps", len(self.gateway.entries))
                    await self.notifier.tools_changed()

    async def on_list_tools(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        self._listed.set()
        return self.tool_list.answer()

    async def on_call_tool(
        self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        ask = Ask(ctx, params, self.memories, str(caller_of(ctx)))
        try:
            result = await self._call(ctx, ask, params.arguments or {})
        except NeedInput as need:
            self.memories.keep(ask.state_id, ask.memory)  # for the client's retry
            return need.result
        except AaiError as exc:
            return results.failure(exc)
        except Exception as exc:  # a bug must reach the agent as INTERNAL_ERROR, never kill the server
            return results.crash(exc, f"tools/call {params.name}")
        return result

    async def _call(
        self, ctx: ServerRequestContext[Any, Any], ask: Ask, arguments: dict[str, Any]
    ) -> types.CallToolResult:
        name = ask.params.name
        if name in AAI_EXEC.values():
            return results.success(await self._exec(ctx, ask, arguments))
        if name in AAI_SEARCH.values():
            return search_result(await self.gateway.search(*search_arguments(arguments)))
        if name in WEB_DISCOVER.values():
            return results.markdown(await self.gateway.web_discover(_text_argument(arguments, "url")))
        entry = self.gateway.entry_for_tool_name(name)
        if entry is not None:  # the app of that entry itself (listed or not), never re-resolved
            operations = operations_argument(arguments)
            if operations is not None:
                return results.markdown(await self.gateway.operations_of(entry.app, operations))
            return results.markdown(await self.gateway.guide_of(entry.app))
        raise UnknownGatewayToolError(name, self.tool_list.names())

    async def _exec(self, ctx: ServerRequestContext[Any, Any], ask: Ask, arguments: dict[str, Any]) -> Any:
        tool = _text_argument(arguments, "tool")
        app = self._pinned_app(ask, _text_argument(arguments, "app"))

        async def progress(done: float, total: float | None, message: str | None) -> None:
            await ctx.session.report_progress(done, total, message)

        async def run() -> Any:
            return await self.gateway.execute(
                app,
                tool,
                arguments.get("args"),
                caller=caller_of(ctx),
                request_id=str(ctx.request_id) if ctx.request_id is not None else None,
                progress=progress,
                prompters=[
                    ElicitationPrompter(ask),
                    UrlConsentPrompter(ask, self.consent_pages, self._tasks),
                ],
                permission_prompters=[ElicitationPermissionPrompter(ask)],
                ask_user=ElicitationUserAsker(ask),
            )

        try:
            return await run()
        except AaiError as error:
            # On the code, not the class: a credential the gateway lacks (AuthRequiredError) and
            # one the app refused (HTTP 401, an HttpStatusError) both mean "ask the user for it";
            # an expired sign-in means "sign in again" (typed secrets: see _collect_credentials)
            if error.code not in (ErrorCode.AUTH_REQUIRED, ErrorCode.AUTH_EXPIRED):
                raise
            if error.data.get("credentials_sent") is False:
                raise  # refused by the host a redirect led to, where no credential of the app goes
            await self._collect_credentials(ask, app, tool, error)
            return await run()

    def _pinned_app(self, ask: Ask, reference: str) -> str:
        """The exact reference of the app this call is about, resolved in its first round and
        kept for every later one (a retry with the user's answers, a run after credentials were
        stored): an app discovered meanwhile can never receive a call, nor an answer, meant for
        another."""
        pinned: str | None = ask.memory.values.get("app")
        if pinned is None:
            found = self.gateway.resolve(reference)
            pinned = ask.memory.values["app"] = app_reference(found.binding, found.id)
        return pinned

    async def _collect_credentials(self, ask: Ask, app_reference: str, tool: str, missing: AaiError) -> None:
        """Ask for the secret on a one-time local page via URL elicitation, or for an app that
        signs in with OAuth send the user to sign in; else re-raise `missing` (also when there is
        no keyring to keep what the user would type or the tokens)."""
        if self.gateway.auth is None or self._tasks is None or not ask.can_ask_url:
            raise missing
        try:
            self.gateway.auth.store.stored()
        except AaiError:
            raise missing from None
        app = self.gateway.resolve(app_reference)
        auth = credentials.typed_secret_auth(app, tool)
        if auth is None:
            await credentials.sign_in(
                ask,
                self.sign_ins,
                self.gateway.auth,
                self._tasks,
                app=app,
                tool=tool,
                error=missing,
                locale=self.gateway.locale,
            )
            return
        if missing.code != ErrorCode.AUTH_REQUIRED:
            raise missing
        await credentials.collect(
            ask,
            self.credential_pages,
            self.gateway.auth.store,
            self._tasks,
            app=app,
            auth=auth,
            error=missing,
            locale=self.gateway.locale,
        )


def _text_argument(arguments: dict[str, Any], key: str) -> str:
    value = arguments.get(key)
    if not isinstance(value, str) or not value.strip():
        raise InvalidArgumentError(f"argument {key!r} must be a non-empty string", path=f"/{key}")
    return value


async def serve_stdio(
    server: GatewayServer,
    exit_process: Callable[[int], None],
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
) -> None:
    """Serve one MCP client over this process's stdin/stdout until it disconnects.

    A client may instead stop the gateway with SIGTERM (SIGHUP, SIGINT): the server then shuts
    down the way it does at end of input, stopping the agents and adapters it started, and
    calls `exit_process(128 + signal)`, which must not return (a worker thread may still be
    blocked reading stdin when it is a file or a Windows pipe). A message longer than
    `max_message_bytes` is skipped and answered with an error (see `stdio_transport`)."""
    mcp_server = server.build()
    options = mcp_server.create_initialization_options(NotificationOptions(tools_changed=True))
    async with anyio.create_task_group() as tasks:
        if sys.platform != "win32":  # Windows has no such signals; clients end the process there
            tasks.start_soon(_stop_on_signal, server, tasks.cancel_scope, exit_process)
        async with stdio_transport(max_message_bytes) as (read_stream, write_stream):
            await mcp_server.run(read_stream, write_stream, options)
        tasks.cancel_scope.cancel()


async def _stop_on_signal(
    server: GatewayServer, serving: anyio.CancelScope, exit_process: Callable[[int], None]
) -> None:
    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGHUP, signal.SIGINT) as signals:
        async for signum in signals:
            logger.info("%s received: shutting down", signal.Signals(signum).name)
            serving.cancel()
            with anyio.CancelScope(shield=True), anyio.move_on_after(CLOSE_SECONDS):
                await server.closed.wait()
            exit_process(128 + signum)
