"""One session with one MCP server: started on first use, shared by concurrent calls, ended when
idle, when told to stop, or when the server dies.

The SDK's `Client` enters and leaves its context managers (the transport, the session's task
group) in one task, so every session runs in a task of its own (`loop.create_task`, as the ACP
executor does), which holds `async with Client(...)` until the session ends. Calls talk to the
client from their own tasks; the SDK sends `notifications/cancelled` when a call is cancelled or
times out. The client negotiates the protocol generation (`mode="auto"`: `server/discover`, else
the 2025-11-25 handshake), advertises form and URL elicitation, and no sampling and no roots, so
the SDK refuses those with an error.

An upstream elicitation goes to the user through the call it belongs to (`Call.ask_user`). In
2026-07-28 the question comes back as the call's own result and is asked in the call's task,
which names the call (a context variable); over Streamable HTTP the SDK carries that context to
a 2025-11-25 question too. Over stdio a 2025-11-25 question arrives with nothing naming the call:
it goes to the oldest call in flight on the session that can ask (the gateway serves one client,
so it reaches the same user). The call's clock stops while the user answers (at most
`ask_seconds`). Nobody to ask: the server is answered with an error.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

import anyio
import mcp_types as types
from mcp import Client
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from .. import __version__
from ..descriptor.shown_text import visible_text
from .base import UpstreamAuth, UserAsker, UserQuestion
from .mcp_http import http_transport
from .mcp_launch import HttpLaunch, Launch, SessionSettings, StdioLaunch
from .mcp_stdio import StdioServer
from .mcp_tool_lists import ServerTools

if TYPE_CHECKING:
    from mcp.client import ClientRequestContext, IncomingMessage, Transport

logger = logging.getLogger(__name__)

CLIENT_INFO: Final = types.Implementation(name="aai-gateway", title="AAI Gateway", version=__version__)
NOBODY_ASKED: Final = (
    "the AAI gateway could not put this question to the user: its MCP client cannot answer "
    "questions during a call (no elicitation of this kind, or the 2026-07-28 protocol, where a "
    "server cannot ask in the middle of a call)"
)
QUESTION_CHARS: Final = 2_000
"""Of a server's question, what is put to the user."""

_CURRENT_CALL: ContextVar[Call | None] = ContextVar("aai_gateway_mcp_call", default=None)


@dataclass(eq=False)
class Call:
    """One tools/call in flight: who can be asked on its behalf, and its deadline."""

    ask_user: UserAsker | None
    scope: anyio.CancelScope | None = None
    _paused: int = field(default=0, repr=False)
    _remaining: float = field(default=0.0, repr=False)

    @contextmanager
    def paused(self) -> Iterator[None]:
        """The call's clock stands still while the user is asked."""
        scope = self.scope
        if scope is not None and self._paused == 0:
            self._remaining = scope.deadline - anyio.current_time()
            scope.deadline = math.inf
        self._paused += 1
        try:
            yield
        finally:
            self._paused -= 1
            if scope is not None and self._paused == 0:
                scope.deadline = anyio.current_time() + self._remaining


class SessionEndedError(Exception):
    """The session ended before or while it was used."""


class UpstreamSession:
    """`on_end` is called once the session has ended (whatever the reason); `on_tools_changed`
    when the server says its tools changed."""

    def __init__(
        self,
        app_id: str,
        app_name: str,
        launch: Launch,
        settings: SessionSettings,
        *,
        scrub: Callable[[str], str],
        on_end: Callable[[UpstreamSession], None],
        on_tools_changed: Callable[[], None] | None = None,
        http_auth: UpstreamAuth | None = None,
    ) -> None:
        self.app_id = app_id
        self.http_auth = http_auth
        self.app_name = app_name
        self.launch = launch
        self.settings = settings
        self.scrub = scrub
        self._on_end = on_end
        self._on_tools_changed = on_tools_changed
        self.stdio: StdioServer | None = None
        if isinstance(launch.transport, StdioLaunch):
            self.stdio = StdioServer(
                launch.transport,
                max_line_bytes=settings.max_message_bytes,
                grace=settings.grace,
                log_as=app_id,
                scrub=scrub,
            )
        self.client: Client | None = None
        self.failure: BaseException | None = None
        self.calls: list[Call] = []
        self.last_used = anyio.current_time()
        self.retiring = False
        self._ready = anyio.Event()
        self._stop = anyio.Event()
        self._opening = anyio.CancelScope()  # what a stop cancels before `_serve` watches `_stop`
        self._ended = anyio.Event()
        self._nudge = anyio.Event()
        self._task: asyncio.Task[None] | None = None
        self._tools = ServerTools(app_id)
        self._opened = False
        self._expired = False

    # ------------------------------------------------------------------ life

    @property
    def alive(self) -> bool:
        ended = self._ended.is_set() or self._stop.is_set()
        return self.client is not None and not ended and not (self.stdio and self.stdio.ended.is_set())

    @property
    def ended_on_its_own(self) -> bool:
        """The session was open and ended without being stopped or left idle: the server exited
        or broke the connection."""
        return self._opened and self._ended.is_set() and not (self._stop.is_set() or self._expired)

    @property
    def pid(self) -> int | None:
        """The stdio server's process."""
        process = self.stdio.process if self.stdio is not None else None
        return process.pid if process is not None else None

    @property
    def protocol_version(self) -> str | None:
        return self.client.protocol_version if self.client is not None else None

    async def open(self) -> None:
        """Start the server and the session; SessionEndedError when it could not (the reason in
        `failure` and `describe_end`), TimeoutError when it took longer than `start_seconds`."""
        self._task = asyncio.get_running_loop().create_task(self._run(), name=f"MCP session {self.app_id}")
        try:
            with anyio.fail_after(self.settings.start_seconds):
                await self._ready.wait()
        except BaseException:
            with anyio.CancelScope(shield=True):
                await self.close()
            raise
        if self.client is None:
            raise SessionEndedError(self.describe_end())

    def stop(self) -> None:
        """End the session (its task stops the server); the next call starts a new one. A
        session still opening stops opening at once (a server that never answers the handshake)."""
        self._stop.set()
        if not self._opened:
            self._opening.cancel()

    def retire(self) -> None:
        """Stop once no call is in flight (the app is now reached another way)."""
        self.retiring = True
        self._nudge.set()

    async def close(self, wait: float = 10.0) -> None:
        """Stop the session and its server, and wait (at most `wait` s) until they are gone."""
        self.stop()
        task = self._task
        if task is None or task.done():
            return
        with anyio.CancelScope(shield=True):
            with anyio.move_on_after(wait):
                await self._ended.wait()
            if not task.done():
                task.cancel()
                with anyio.move_on_after(wait):
                    await self._ended.wait()

    async def _run(self) -> None:
        try:
            with self._opening:  # a stop cancels it while opening; the transport still stops the server
                async with Client(
                    self._transport(),
                    mode="auto",
                    client_info=CLIENT_INFO,
                    elicitation_callback=self._elicit,
                    message_handler=self._on_message,
                    cache=None,
                ) as client:
                    # the SDK's check runs Python's `re` on the event loop (mcp_tool_lists)
                    client.session.validate_tool_result = self._check_result  # type: ignore[method-assign]
                    self.client = client
                    self._opened = True
                    logger.info("%s: MCP session open (protocol %s)", self.app_id, client.protocol_version)
                    self._ready.set()
                    await self._serve(client)
        except Exception as exc:
            self.failure = exc
            logger.log(
                logging.WARNING if self._ready.is_set() else logging.DEBUG,
                "%s: MCP session ended: %s",
                self.app_id,
                self.scrub(describe_exception(exc)),
            )
        finally:
            self.client = None
            self._ended.set()
            self._ready.set()
            self._on_end(self)

    def _transport(self) -> Transport:
        if self.stdio is not None:
            return self.stdio.transport()
        assert isinstance(self.launch.transport, HttpLaunch)
        return http_transport(
            self.launch.transport,
            ca_file=self.settings.ca_file,
            max_event_bytes=self.settings.max_message_bytes,
            auth=self.http_auth,
        )

    async def _serve(self, client: Client) -> None:
        """Until told to stop, the server ends, or the session has been idle long enough."""
        async with anyio.create_task_group() as tasks:

            async def end_on(event: anyio.Event) -> None:
                await event.wait()
                tasks.cancel_scope.cancel()

            tasks.start_soon(end_on, self._stop)
            if self.stdio is not None:
                tasks.start_soon(end_on, self.stdio.ended)
            tasks.start_soon(self._expire, tasks.cancel_scope)
            tasks.start_soon(self._listen, client)

    async def _expire(self, serving: anyio.CancelScope) -> None:
        while True:
            self._nudge = anyio.Event()  # before looking: a call ending from now on wakes us
            remaining = math.inf
            if not self.calls:
                idle = 0.0 if self.retiring else self.settings.idle_seconds
                remaining = self.last_used + idle - anyio.current_time()
                if remaining <= 0:
                    reason = "replaced" if self.retiring else "idle"
                    logger.info("%s: MCP session %s; stopping it", self.app_id, reason)
                    self._expired = True
                    serving.cancel()
                    return
            with anyio.move_on_after(remaining):
                await self._nudge.wait()

    async def _listen(self, client: Client) -> None:
        """2026-07-28 servers announce tool changes on a `subscriptions/listen` stream (the
        2025-11-25 notification arrives through `_on_message`, where the SDK hands the stream's
        events too: there they are ignored, so that one announcement is one read)."""
        tools = client.server_capabilities.tools
        if client.protocol_version not in MODERN_PROTOCOL_VERSIONS or tools is None or not tools.list_changed:
            return
        try:
            async with client.listen(tools_list_changed=True) as subscription:
                async for _event in subscription:
                    self._tools_changed()
        except Exception as exc:
            logger.debug("%s: no tool-change events: %s", self.app_id, self.scrub(describe_exception(exc)))

    # ------------------------------------------------------------------ use

    async def call_tool(
        self, call: Call, name: str, arguments: dict[str, Any], progress: Any
    ) -> types.CallToolResult:
        client = self.client
        if client is None or not self.alive:
            raise SessionEndedError(self.describe_end())
        self.calls.append(call)
        token = _CURRENT_CALL.set(call)
        try:
            return await client.call_tool(name, arguments, progress_callback=progress)
        finally:
            _CURRENT_CALL.reset(token)
            self.calls.remove(call)
            self.last_used = anyio.current_time()
            self._nudge.set()

    async def answers(self, seconds: float) -> bool:
        """Whether the server still answers a request (tools/list) within `seconds`."""
        client = self.client
        if client is None:
            return False
        with anyio.move_on_after(seconds):
            try:
                self._tools.noted(await client.list_tools())
            except Exception:
                return False
            return True
        return False

    async def list_tools(self) -> list[types.Tool]:
        """Every tool the server lists, within bounds (`mcp_tool_lists.ServerTools.read`)."""
        client = self.client
        if client is None or not self.alive:
            raise SessionEndedError(self.describe_end())
        return await self._tools.read(client)

    async def _check_result(self, name: str, result: types.CallToolResult) -> None:
        await self._tools.check(name, result, relist=self.list_tools)

    def describe_end(self) -> str:
        """Why the session ended or could not start: the server's exit, the end of its stderr,
        what it wrote that was not MCP, or the error of the connection (not yet scrubbed)."""
        parts: list[str] = []
        if self.failure is not None and (self.stdio is None or not self._opened):
            parts.append(describe_exception(self.failure))
        if self.stdio is not None and self.stdio.process is not None:
            status = self.stdio.exit_status()
            parts.append(f"the server {status}" if status else "the server closed its output")
            parts += list(self.stdio.problems)
            tail = self.stdio.stderr_tail()
            parts.append(f"its stderr ends with: {tail}" if tail else "it wrote nothing to stderr")
        return "; ".join(parts) or "the session ended"

    # ------------------------------------------------------------------ the server's requests

    async def _elicit(
        self, context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult | types.ErrorData:
        # The call's own context: a 2026-07-28 question is asked in the call's task, and over
        # Streamable HTTP the SDK carries the context of the request a question came with
        call = _CURRENT_CALL.get() or next((c for c in self.calls if c.ask_user is not None), None)
        modern = self.protocol_version in MODERN_PROTOCOL_VERSIONS
        if call is None or call.ask_user is None:
            return _nobody_asked(modern)
        # The server's words reach the user as the gateway's own do: nothing hidden (a bidi
        # override, escape sequences), none of its secrets, and a bounded length
        message = visible_text(self.scrub(params.message), max_chars=QUESTION_CHARS)[0]
        if isinstance(params, types.ElicitRequestURLParams):
            question = UserQuestion(
                self.app_name, message, url=params.url, elicitation_id=params.elicitation_id
            )
        else:
            question = UserQuestion(self.app_name, message, schema=dict(params.requested_schema))
        answer = None
        with call.paused(), anyio.move_on_after(self.settings.ask_seconds):
            try:
                answer = await call.ask_user(question)
            except Exception:
                logger.warning("%s: asking the user the server's question failed", self.app_id, exc_info=True)
        if answer is None:
            return _nobody_asked(modern)
        return types.ElicitResult(action=answer.action, content=answer.content)

    async def _on_message(self, message: IncomingMessage) -> None:
        if isinstance(message, Exception):
            logger.debug("%s: MCP transport: %s", self.app_id, self.scrub(describe_exception(message)))
        elif (
            isinstance(message, types.ToolListChangedNotification)
            and self.protocol_version not in MODERN_PROTOCOL_VERSIONS  # `_listen` has it
        ):
            self._tools_changed()

    def _tools_changed(self) -> None:
        logger.info("%s: the MCP server says its tools changed", self.app_id)
        if self._on_tools_changed is not None:
            self._on_tools_changed()


def _nobody_asked(modern: bool) -> types.ElicitResult | types.ErrorData:
    """A question nobody could put to the user. In 2025-11-25 the server gets an error saying
    so, and its tool decides what to do. In 2026-07-28 an error would end the gateway's own
    call without the server hearing of it, so the server's retry carries a decline instead."""
    if modern:
        return types.ElicitResult(action="decline")
    return types.ErrorData(code=types.INVALID_REQUEST, message=NOBODY_ASKED)


def describe_exception(exc: BaseException) -> str:
    """The first real error inside `exc` (task groups wrap errors in groups), as text."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
