"""`execution.type: "mcp"`: the tools of an MCP server the user already runs, called through the
gateway (docs/mcp-servers.md).

One session per server: per app (its binding and id), started on the first call and shared by
concurrent calls; a new one when the server died (the next call works), when the resolved launch
settings changed (a new secret, an edited descriptor: the old session stops once its calls are
done), and none after `idle_seconds` without a call or after `aclose` (stdio servers are stopped
with their whole process group). See `mcp_sessions` for how a session runs, `mcp_stdio` for the
stdio transport, `mcp_launch` for how env and headers are resolved, `mcp_results` for what
answers become.

Each call is bounded by the tool's timeout (`execution.timeout`, default 30 s; the clock stops
while the user answers a question of the server); on TIMEOUT the server is told to cancel the
request, and the session is stopped when the server no longer answers at all (a tools/list
within `probe_seconds`), so that the next call starts it again. A cancelled call is cancelled
upstream too. Progress of the server goes to `Invocation.progress` (bounded: mcp_progress.py);
its questions to `Invocation.ask_user`. Everything the server sends back is scrubbed of the
secrets it was started with.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable, Mapping
from functools import partial
from typing import TYPE_CHECKING, Final

import anyio

from ..descriptor import AppDescriptor, ExecutionType, Tool
from ..descriptor.mcp_tools import server_probe
from ..descriptor.model import McpChannel
from ..discovery.mcp_server_states import ServerStateRecorder, Transport, error_of
from ..discovery.mcp_snapshots import ServerInfo, Snapshot
from ..errors import AaiError, ExecutionTimeoutError, UsageError
from .base import (
    ExecutorBase,
    ExecutorSettings,
    Invocation,
    SnapshotListener,
    ToolResult,
    UpstreamAuth,
    timeout_error,
)
from .mcp_launch import Launch, SessionSettings, StdioLaunch, resolve_launch, with_program
from .mcp_progress import progress_forwarder
from .programs import missing_program
from .redaction import CallScrubber

if TYPE_CHECKING:  # the MCP client takes half a second to import: only on first use
    from mcp_types import Tool as McpTool

    from .mcp_sessions import UpstreamSession

logger = logging.getLogger(__name__)

MAX_MESSAGE_BYTES: Final = 4 * 1024 * 1024
LIST_TOOLS: Final = "tools/list"  # also in mcp_results, which this module imports only when needed
REREAD_SECONDS: Final = 1.0
"""Between two reads of a server's tools that its `tools/list_changed` asked for: the changes
said meanwhile are one read, after this (a server may say it every few milliseconds)."""
SessionKey = tuple[str, str]
"""An app's binding and id."""
ToolsChanged = Callable[[str, str], None]
"""Told `(binding, app id)` when that app's MCP server says its tools changed."""


class McpExecutor(ExecutorBase[McpChannel]):
    """Runs `mcp` tools. `environ`: the gateway's environment (PATH, the allow-listed variables a
    server gets, `{"env": VAR}` values); `ca_file`: extra CAs an HTTPS server may be signed by;
    `idle_seconds`: a session without a call for this long is stopped; `start_seconds`: starting
    a server and its handshake; `probe_seconds`: after a timeout, how long the server has to
    show it still answers; `ask_seconds`: how long a question of the server may wait for the
    user; `max_message_bytes`: the longest message read from a server; `states`: where it keeps
    whether each server runs and its last error, for `scan` (None: nowhere)."""

    channel_class = McpChannel
    label = "MCP"
    availability_from = ("command", "env")

    def __init__(
        self,
        *,
        environ: Mapping[str, str],
        ca_file: str | None = None,
        idle_seconds: float = 600.0,
        start_seconds: float = 60.0,
        kill_grace_seconds: float = 2.0,
        probe_seconds: float = 5.0,
        ask_seconds: float = 300.0,
        max_message_bytes: int = MAX_MESSAGE_BYTES,
        states: ServerStateRecorder | None = None,
    ) -> None:
        self.environ = environ
        self.states = states
        self.probe_seconds = probe_seconds
        self.settings = SessionSettings(
            start_seconds=start_seconds,
            idle_seconds=idle_seconds,
            grace=kill_grace_seconds,
            ask_seconds=ask_seconds,
            max_message_bytes=max_message_bytes,
            ca_file=ca_file,
        )
        self._sessions: dict[SessionKey, UpstreamSession] = {}
        self._running: set[UpstreamSession] = set()  # the current ones and those being replaced
        self._locks: dict[SessionKey, anyio.Lock] = {}
        self._listeners: list[ToolsChanged] = []
        self._snapshot_listeners: list[SnapshotListener] = []
        # Apps whose tools were read from their server, with the secrets of that read: a
        # tools/list_changed of theirs is answered by reading the tools again
        self._snapshotted: dict[SessionKey, tuple[AppDescriptor, dict[str, str], UpstreamAuth | None]] = {}
        self._background: set[asyncio.Task[None]] = set()
        self._rereading: set[SessionKey] = set()
        self._said_again: set[SessionKey] = set()  # said changed while being read: once more

    def unavailable(self, channel: McpChannel, tool: Tool) -> str | None:
        if channel.command is None:
            return None
        path = channel.env.get("PATH")
        missing = missing_program(
            channel.command, self.environ, path if isinstance(path, str) and path else None
        )
        if missing is None:
            return None
        return f"MCP server command {missing}; install the server or set execution.command to its full path"

    def on_tools_changed(self, listener: ToolsChanged) -> None:
        """Call `listener(binding, app id)` whenever an app's server says its tools changed."""
        self._listeners.append(listener)

    async def execute(self, invocation: Invocation) -> ToolResult:
        app, tool = invocation.app, invocation.tool
        launch = resolve_launch(app, tool.name, self.channel(invocation), invocation.secrets, self.environ)
        scrubber = CallScrubber(launch.secret_values, invocation.upstream_auth)
        try:
            session = await self._session(app, launch, scrubber, invocation.upstream_auth)
            scrubber.also(session.http_auth)  # the auth that carries the session's requests
            return await self._call(session, invocation, scrubber)
        except AaiError as error:
            raise self._failure(
                app, launch, scrubber.now().error(self._refusal(app, invocation.upstream_auth) or error)
            ) from None

    async def take_snapshot(
        self, app: AppDescriptor, secrets: Mapping[str, str], upstream_auth: UpstreamAuth | None = None
    ) -> Snapshot:
        """The app's server's tools (tools/list, every page), what it says it is and its
        instructions; the session is started if it is not running, and kept. `secrets`: the
        keyring secrets its launch settings refer to (as `Invocation.secrets`)."""
        probe = server_probe(app)
        if probe is None or not isinstance(probe.channel, McpChannel):
            raise UsageError(f"{app.id} has no MCP server on this computer", app=app.id)
        launch = resolve_launch(app, LIST_TOOLS, probe.channel, secrets, self.environ)
        scrubber = CallScrubber(launch.secret_values, upstream_auth)
        try:
            session = await self._session(app, launch, scrubber, upstream_auth)
            scrubber.also(session.http_auth)
            tools = await self._listed_tools(session, app, probe)
        except AaiError as error:
            raise self._failure(
                app, launch, scrubber.now().error(self._refusal(app, upstream_auth) or error)
            ) from None
        self._snapshotted[(str(app.binding), app.id)] = (app, dict(secrets), upstream_auth)
        client = session.client
        info = client.server_info if client is not None else None
        return Snapshot.taken(
            app,
            [t.model_dump(by_alias=True, mode="json", exclude_none=True) for t in tools],
            server=ServerInfo(info.name, info.version, info.title) if info is not None else None,
            instructions=client.instructions if client is not None else None,
        )

    async def _listed_tools(self, session: UpstreamSession, app: AppDescriptor, probe: Tool) -> list[McpTool]:
        """Every tool the server lists, within the app's timeout (`execution.timeout`); an error
        answer, a broken connection or no answer in time is the AAI error that names the app and
        tools/list. A server that did not answer in time is stopped: the next read starts it again."""
        from .mcp_results import call_failure  # noqa: PLC0415 (see TYPE_CHECKING above)

        try:
            with anyio.fail_after(probe.effective_timeout_ms / 1000):
                return await session.list_tools()
        except TimeoutError:
            await session.close()
            raise ExecutionTimeoutError(app.id, LIST_TOOLS, probe.effective_timeout_ms) from None
        except Exception as exc:
            error = await call_failure(exc, app.id, LIST_TOOLS, session)
            if error is None:
                raise
            raise error from exc

    def on_snapshot(self, listener: SnapshotListener) -> None:
        """`listener(app, snapshot)` after a server whose tools were read said they changed."""
        self._snapshot_listeners.append(listener)

    async def aclose(self) -> None:
        for task in list(self._background):
            task.cancel()
        sessions, self._sessions = list(self._running), {}
        with anyio.CancelScope(shield=True):
            async with anyio.create_task_group() as tasks:
                for session in sessions:
                    tasks.start_soon(session.close)
        if self.states is not None:
            self.states.close()

    # ------------------------------------------------------------------ sessions

    async def _session(
        self,
        app: AppDescriptor,
        launch: Launch,
        scrubber: CallScrubber,
        upstream_auth: UpstreamAuth | None = None,
    ) -> UpstreamSession:
        """The app's running session, started (again) when there is none, it ended, or the app is
        now reached another way."""
        from .mcp_results import start_failure  # noqa: PLC0415 (see TYPE_CHECKING above)
        from .mcp_sessions import SessionEndedError, UpstreamSession  # noqa: PLC0415

        key = (str(app.binding), app.id)
        async with self._locks.setdefault(key, anyio.Lock()):
            session = self._sessions.pop(key, None)
            if session is not None and session.alive and session.launch.fingerprint == launch.fingerprint:
                self._sessions[key] = session
                session.last_used = anyio.current_time()  # not idle: a call is about to use it
                return session
            if session is not None and session.alive:
                session.retire()
            launch = with_program(app.id, launch, self.environ)
            session = UpstreamSession(
                app.id,
                app.names.lookup(None),
                launch,
                self.settings,
                scrub=scrubber.text,
                on_end=partial(self._session_ended, key, app),
                on_tools_changed=partial(self._tools_changed, key),
                http_auth=upstream_auth,
            )
            self._running.add(session)
            try:
                await session.open()
            except TimeoutError as exc:
                raise start_failure(app.id, session, timed_out=True) from exc
            except SessionEndedError as exc:
                raise start_failure(app.id, session, timed_out=False) from exc
            self._sessions[key] = session
            if self.states is not None:
                self.states.started(app, _transport(launch), session.pid, session.protocol_version)
            return session

    def _session_ended(self, key: SessionKey, app: AppDescriptor, session: UpstreamSession) -> None:
        """Kept as stopped, unless a newer session of the app runs now; with the reason when the
        server ended on its own."""
        self._running.discard(session)
        if self.states is None or self._sessions.get(key, session) is not session:
            return
        error = None
        if session.ended_on_its_own:
            ended = session.scrub(session.describe_end())
            error = error_of("SERVICE_UNAVAILABLE", f"the MCP server of {app.id} ended: {ended}")
        self.states.stopped(app, _transport(session.launch), error)

    def _failure(self, app: AppDescriptor, launch: Launch, error: AaiError) -> AaiError:
        """`error` (already scrubbed), kept as the server's last error."""
        if self.states is not None:
            self.states.failed(app, _transport(launch), error_of(error.code.value, error.message))
        return error

    def _refusal(self, app: AppDescriptor, upstream_auth: UpstreamAuth | None) -> AaiError | None:
        """The AUTH_* error behind a failed call: what the server's sign-in kept when the server
        refused it (the session's own auth, or the one this call brought); taken, so it is
        raised once."""
        session = self._sessions.get((str(app.binding), app.id))
        for auth in (session.http_auth if session is not None else None, upstream_auth):
            failure: AaiError | None = auth.failure if auth is not None else None
            if auth is not None and failure is not None:
                auth.failure = None
                return failure
        return None

    def _tools_changed(self, key: SessionKey) -> None:
        for listener in self._listeners:
            try:
                listener(*key)
            except Exception:
                logger.exception("a tools-changed listener failed")
        if key in self._snapshotted and self._snapshot_listeners:
            if key in self._rereading:
                self._said_again.add(key)
                return
            self._rereading.add(key)
            task = asyncio.get_running_loop().create_task(self._read_tools_again(key))
            self._background.add(task)
            task.add_done_callback(self._background.discard)

    async def _read_tools_again(self, key: SessionKey) -> None:
        """Read the tools, and again (REREAD_SECONDS after the last read began) while the server
        said they changed meanwhile."""
        try:
            while key in self._snapshotted:
                began = anyio.current_time()
                self._said_again.discard(key)
                await self._read_tools_once(*self._snapshotted[key])
                if key not in self._said_again:
                    return
                await anyio.sleep(began + REREAD_SECONDS - anyio.current_time())
        finally:
            self._rereading.discard(key)
            self._said_again.discard(key)

    async def _read_tools_once(
        self, app: AppDescriptor, secrets: dict[str, str], upstream_auth: UpstreamAuth | None
    ) -> None:
        try:
            snapshot = await self.take_snapshot(app, secrets, upstream_auth)
        except AaiError as error:
            logger.warning("%s: its tools changed but could not be read again: %s", app.id, error)
            return
        for listener in self._snapshot_listeners:
            await listener(app, snapshot)  # the gateway's listener never raises

    # ------------------------------------------------------------------ calls

    async def _call(
        self, session: UpstreamSession, invocation: Invocation, scrubber: CallScrubber
    ) -> ToolResult:
        from .mcp_results import call_failure, passed_on  # noqa: PLC0415 (see TYPE_CHECKING above)
        from .mcp_sessions import Call  # noqa: PLC0415

        app_id, tool = invocation.app.id, invocation.tool.name
        call = Call(invocation.ask_user)
        progress = progress_forwarder(invocation.progress, scrubber.text)
        problems_before = session.stdio.problems_seen if session.stdio is not None else 0
        try:
            with anyio.CancelScope(deadline=anyio.current_time() + invocation.timeout_seconds) as scope:
                call.scope = scope
                result = await session.call_tool(call, tool, invocation.arguments, progress)
        except Exception as exc:
            error = await call_failure(exc, app_id, tool, session)
            if error is None:
                raise
            raise error from exc
        if scope.cancelled_caught:
            raise await self._timed_out(session, invocation, problems_before)
        return passed_on(result, scrubber.now())  # the tokens the call's requests carried

    async def _timed_out(
        self, session: UpstreamSession, invocation: Invocation, problems_before: int
    ) -> ExecutionTimeoutError:
        """TIMEOUT; the session is stopped when the server does not answer at all any more."""
        answers = await session.answers(self.probe_seconds)
        if not answers:
            logger.warning(
                "%s: the MCP server did not answer within %g s after a call timed out; stopping it",
                invocation.app.id,
                self.probe_seconds,
            )
            await session.close()
        error = timeout_error(invocation)
        error.data["server_restarts"] = not answers
        problems = session.stdio.problems_since(problems_before) if session.stdio is not None else []
        if problems:  # what it wrote instead of an answer, say
            error.message += f"; meanwhile {'; '.join(problems)}"
            error.args = (error.message,)
            error.data["server_problems"] = problems
        return error


def registration(settings: ExecutorSettings) -> tuple[tuple[ExecutionType, ...], McpExecutor]:
    """The entry point of `mcp` in the group `aai_gateway.executors` (pyproject.toml)."""
    states = None
    if settings.cache_dir is not None:
        states = ServerStateRecorder.in_cache(settings.cache_dir, gateway_pid=os.getpid())
    return (ExecutionType.MCP,), McpExecutor(
        environ=settings.environ, ca_file=settings.ca_file, states=states
    )


def _transport(launch: Launch) -> Transport:
    return "stdio" if isinstance(launch.transport, StdioLaunch) else "http"
