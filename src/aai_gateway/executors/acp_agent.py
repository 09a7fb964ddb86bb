"""One running ACP agent: its process, its ACP client connection, and what it wrote to stderr.

The agent is started in a process group of its own with a minimal environment (see
`programs.child_environment`), speaks newline-delimited JSON-RPC on stdin/stdout (read here with
anyio, bounded per message) and is initialized as protocol version 1 by a client that offers no
file system and no terminal. Its `session/update` notifications and `session/request_permission`
requests are routed to the `Turn` registered for their session; an update or a question for a
session with no turn running is ignored, or answered `cancelled`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass
from pathlib import Path
from subprocess import PIPE
from typing import Any, cast

import anyio
import anyio.abc
from acp import PROTOCOL_VERSION, Client, RequestError, connect_to_agent, schema
from acp.client.connection import ClientSideConnection

from .. import __version__
from ..errors import AaiError, AppReportedError, ExecutionFailedError, ServiceUnavailableError
from . import process as proc
from .acp_turn import Turn
from .answer_json import strict_loads
from .wire import json_line

logger = logging.getLogger(__name__)

MAX_MESSAGE_BYTES = 50 * 1024 * 1024
STDERR_KEPT_BYTES = 64 * 1024
STDERR_SHOWN_CHARS = 2000


@dataclass(frozen=True)
class Launch:
    """How an agent is started; a different launch for the same app means a new process."""

    argv: tuple[str, ...]
    cwd: Path | None
    env: tuple[tuple[str, str], ...]


class _JsonLines:
    """The ACP `Transport` (send/receive/close of JSON-RPC messages) over the child's pipes."""

    def __init__(self, process: anyio.abc.Process) -> None:
        assert process.stdin is not None and process.stdout is not None
        self._stdin, self._stdout = process.stdin, process.stdout
        self._buffer = bytearray()
        self._lock = anyio.Lock()
        self.ended = False

    async def send(self, message: dict[str, Any]) -> None:
        data = json_line(message).encode() + b"\n"
        try:
            async with self._lock:
                await self._stdin.send(data)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError) as exc:
            raise ConnectionError(f"the agent's stdin is closed: {exc}") from exc

    async def receive(self) -> dict[str, Any] | None:
        while True:
            end = self._buffer.find(b"\n")
            if end >= 0:
                line = bytes(self._buffer[:end]).strip()
                del self._buffer[: end + 1]
                message = _decode(line)
                if message is not None:
                    return message
                continue
            if len(self._buffer) > MAX_MESSAGE_BYTES:
                logger.warning("an ACP agent sent a message over %d bytes; closing", MAX_MESSAGE_BYTES)
                self.ended = True
                return None
            try:
                self._buffer += await self._stdout.receive(65536)
            except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
                self.ended = True
                return None

    async def close(self) -> None:
        with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            await self._stdin.aclose()


def _decode(line: bytes) -> dict[str, Any] | None:
    if not line:
        return None
    try:
        message = strict_loads(line)
    except (ValueError, RecursionError):
        logger.warning("an ACP agent wrote a line that is not usable JSON to stdout: %.200r", line)
        return None
    return message if isinstance(message, dict) else None


class _Client:
    """The gateway's side of ACP: session updates and permission questions, routed to turns."""

    def __init__(self) -> None:
        self.turns: dict[str, Turn] = {}

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        turn = self.turns.get(session_id)
        if turn is not None:
            turn.on_update(update)

    async def request_permission(
        self,
        session_id: str,
        tool_call: schema.ToolCallUpdate,
        options: list[schema.PermissionOption],
        **kwargs: Any,
    ) -> schema.RequestPermissionResponse:
        turn = self.turns.get(session_id)
        if turn is None:  # no call of this session is running: nobody to ask
            return schema.RequestPermissionResponse(outcome=schema.DeniedOutcome(outcome="cancelled"))
        return await turn.on_permission(tool_call, options)

    def on_connect(self, conn: Any) -> None:
        pass


class AgentProcess:
    """A started and initialized agent. `connection` is safe to use from concurrent calls."""

    def __init__(self, app_id: str, launch: Launch, process: anyio.abc.Process) -> None:
        self.app_id = app_id
        self.launch = launch
        self.process = process
        self.client = _Client()
        self.transport = _JsonLines(process)
        self.connection: ClientSideConnection = connect_to_agent(cast(Client, self.client), self.transport)
        self.sessions: set[str] = set()
        self.info: schema.InitializeResponse | None = None
        self._stderr = bytearray()
        assert process.stderr is not None
        self._stderr_done = asyncio.get_running_loop().create_task(
            proc.read_tail(process.stderr, self._stderr, STDERR_KEPT_BYTES)
        )

    @property
    def command(self) -> str:
        return self.launch.argv[0]

    @property
    def alive(self) -> bool:
        return self.process.returncode is None and not self.transport.ended

    @classmethod
    async def start(cls, app_id: str, launch: Launch, *, start_seconds: float, grace: float) -> AgentProcess:
        try:
            process = await anyio.open_process(
                list(launch.argv),
                stdin=PIPE,
                stdout=PIPE,
                stderr=PIPE,
                cwd=launch.cwd,
                env=dict(launch.env),
                **proc.spawn_options(),
            )
        except OSError as exc:
            raise ServiceUnavailableError(
                app_id,
                f"its ACP agent {launch.argv[0]!r} could not be started ({exc.strerror or exc}); install "
                "the agent, or fix execution.start.command in the app's aai.json",
                command=launch.argv[0],
            ) from exc
        agent = cls(app_id, launch, process)
        try:
            with anyio.fail_after(start_seconds):
                agent.info = await agent.connection.initialize(
                    protocol_version=PROTOCOL_VERSION,
                    client_capabilities=schema.ClientCapabilities(),
                    client_info=schema.Implementation(
                        name="aai-gateway", title="AAI Gateway", version=__version__
                    ),
                )
        except BaseException as exc:
            with anyio.CancelScope(shield=True):
                await agent.stop(grace)
            if isinstance(exc, TimeoutError):
                raise agent.unavailable(f"it did not answer `initialize` within {start_seconds:g} s") from exc
            if isinstance(exc, Exception):
                raise agent.unavailable(f"`initialize` failed: {exc}") from exc
            raise
        if agent.info.protocol_version != PROTOCOL_VERSION:
            await agent.stop(grace)
            raise agent.unavailable(
                f"it speaks ACP protocol version {agent.info.protocol_version}; the gateway speaks "
                f"version {PROTOCOL_VERSION}"
            )
        logger.info("%s: ACP agent started, pid %d: %s", app_id, process.pid, list(launch.argv))
        return agent

    async def exit_status(self, wait: float = 2.0) -> str:
        """How the process ended ("still running" if it has not within `wait` s); its stderr is read
        to the end meanwhile."""
        with anyio.move_on_after(wait):
            await self.process.wait()
            await asyncio.shield(self._stderr_done)
        code = self.process.returncode
        return "is still running" if code is None else proc.describe_exit(code)

    def stderr_tail(self) -> str:
        text = self._stderr.decode("utf-8", "replace").strip()
        if len(text) > STDERR_SHOWN_CHARS:
            text = "…" + text[-STDERR_SHOWN_CHARS:].lstrip()
        return text

    def unavailable(self, reason: str) -> ServiceUnavailableError:
        tail = self.stderr_tail()
        error = ServiceUnavailableError(
            self.app_id,
            f"its ACP agent {self.command!r}: {reason}" + (f"; its stderr ends with: {tail}" if tail else ""),
            command=self.command,
        )
        if tail:
            error.data["stderr_tail"] = tail
        if self.process.returncode is not None:
            error.data["exit_code"] = self.process.returncode
        return error

    async def failure(self, app_id: str, tool: str, session: str | None, exc: BaseException) -> AaiError:
        """What a failed request means for the caller: the agent's own error, or its death."""
        if isinstance(exc, AaiError):
            return exc
        if isinstance(exc, RequestError):
            data: dict[str, Any] = {"acp_error_code": exc.code}
            if exc.data is not None:
                data["acp_error_data"] = exc.data
            message = str(exc)
            if session is not None and session not in self.sessions:
                message += (
                    f" (session {session} was not started by the agent now running: it may have been "
                    "restarted since; start a new session with new_session)"
                )
            return AppReportedError(app_id, tool, message, **data)
        status = await self.exit_status()
        tail = self.stderr_tail()
        error = ExecutionFailedError(
            app_id,
            tool,
            f"the ACP agent {self.command!r} {status} during the call"
            + (f"; its stderr ends with: {tail}" if tail else "; it wrote nothing to stderr")
            + ". The next call starts it again (sessions of the old process are gone)",
            command=self.command,
            exit_status=status,
        )
        if self.process.returncode is not None:
            error.data["exit_code"] = self.process.returncode
        if tail:
            error.data["stderr_tail"] = tail
        return error

    async def stop(self, grace: float) -> None:
        """Close the connection, stop the whole process group, and reap it. Call shielded."""
        for turn in list(self.client.turns.values()):
            turn.close()
        with contextlib.suppress(Exception):
            await self.connection.close()
        await proc.stop_process_tree(self.process, grace)
        with anyio.move_on_after(1.0):
            await asyncio.shield(self._stderr_done)
        self._stderr_done.cancel()
        with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            await self.process.aclose()
        logger.info("%s: ACP agent pid %d stopped", self.app_id, self.process.pid)
