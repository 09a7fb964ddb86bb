"""An MCP server over stdio, started and stopped by the gateway: the `Transport` the SDK's
`Client` runs on (an async context manager yielding its read and write streams).

It differs from the SDK's `stdio_client` where the gateway has rules of its own:

- The server is started like every program the gateway runs (`process.spawn_options`: a process
  group of its own; the environment `mcp_launch` built; the program `find_program` found), and
  stopped with its whole group, grandchildren too: stdin closed, a moment to exit, then SIGTERM
  to the group, the grace period, SIGKILL (`process.stop_process_tree`).
- A line is at most `max_line_bytes` (`json_lines.LineSplitter`). An answer longer than that is
  skipped unread and the request it answers fails with an error saying so once the line ends,
  when its start or its end shows its id (Python's SDK writes `id` before `result`, the
  TypeScript SDK after it); otherwise the line is only recorded as a problem.
- A line that is not a JSON-RPC message is logged and recorded as a problem (never passed on);
  the last problems and the end of stderr go into the errors of the calls (`describe`). When it
  looks like the answer to a request (its start or end shows an `id`, and no `method`: JSON
  nested deeper than the parser reads, say), that request fails at once with an error saying so.
- Its exit is noticed even while something it started keeps stdout open: the read stream then
  ends, so every request still waiting fails at once instead of running into its timeout.

Everything the server wrote that ends up in a message is scrubbed of the secrets it was started
with (`Scrubber`) by the caller.
"""

from __future__ import annotations

import contextlib
import logging
import subprocess
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Final

import anyio
import anyio.abc
import mcp_types as types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from . import process as proc
from .json_lines import (
    END_KEPT_BYTES,
    ID_SEARCH_BYTES,
    LineSplitter,
    TooLong,
    leading_members,
    trailing_members,
)
from .mcp_launch import StdioLaunch

if TYPE_CHECKING:
    from mcp.client import Transport

logger = logging.getLogger(__name__)

READ_CHUNK_BYTES: Final = 64 * 1024
STDERR_KEPT_BYTES: Final = 64 * 1024
STDERR_SHOWN_CHARS: Final = 2000
PROBLEMS_KEPT: Final = 3
PROBLEMS_LOGGED: Final = 20
"""Per start of a server: a server writing garbage on every line must not flood the log."""
LINE_SHOWN_CHARS: Final = 200
SCRUBBED_BYTES: Final = 64 * 1024
"""Of a line that is not MCP, what is scrubbed of secrets before the start of it is shown."""
EXIT_POLL_SECONDS: Final = 0.1
CLOSE_STDIN_SECONDS: Final = 0.5  # how long a server may take to exit by itself once stdin is closed
TOO_LONG_MARK: Final = "aai_gateway_max_message_bytes"
"""Key of the `data` of the error the transport answers a too long line with."""
UNREADABLE_MARK: Final = "aai_gateway_unreadable_answer"
"""Key of the `data` of the error the transport answers an unreadable answer with (the reason)."""


class StdioServer:
    """One start of a server: its process, the end of its stderr, its protocol problems."""

    def __init__(
        self,
        launch: StdioLaunch,
        *,
        max_line_bytes: int,
        grace: float,
        log_as: str,
        scrub: Callable[[str], str] = str,
    ) -> None:
        """`scrub` removes the secrets the server was started with from what is logged."""
        self.launch = launch
        self.scrub = scrub
        self.max_line_bytes = max_line_bytes
        self.grace = grace
        self.log_as = log_as
        self.process: anyio.abc.Process | None = None
        self.ended = anyio.Event()
        """Set when the process has exited or closed its stdout."""
        self.problems: deque[str] = deque(maxlen=PROBLEMS_KEPT)
        self.problems_seen = 0
        self._stderr = bytearray()
        self._stderr_done = anyio.Event()

    def transport(self) -> Transport:
        return self._connected()

    @property
    def returncode(self) -> int | None:
        return self.process.returncode if self.process is not None else None

    def stderr_tail(self) -> str:
        """The end of stderr, scrubbed before it is cut: the cut may fall inside a secret."""
        text = self.scrub(self._stderr.decode("utf-8", "replace")).strip()
        if len(text) > STDERR_SHOWN_CHARS:
            text = "…" + text[-STDERR_SHOWN_CHARS:].lstrip()
        return text

    def problems_since(self, seen: int) -> list[str]:
        """The problems kept of those noted after `problems_seen` was `seen`."""
        return list(self.problems)[len(self.problems) - min(self.problems_seen - seen, len(self.problems)) :]

    def exit_status(self) -> str | None:
        """How the process ended (`exited with code 3`), or None while it runs."""
        code = self.returncode
        return None if code is None else proc.describe_exit(code)

    @asynccontextmanager
    async def _connected(
        self,
    ) -> AsyncIterator[
        tuple[MemoryObjectReceiveStream[SessionMessage | Exception], MemoryObjectSendStream[SessionMessage]]
    ]:
        with anyio.CancelScope(shield=True):  # once started, the process must be ours to stop
            process = self.process = await anyio.open_process(
                list(self.launch.command_line),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=self.launch.cwd,
                env=dict(self.launch.env),
                **proc.spawn_options(),
            )
        logger.info("%s: MCP server started, pid %d", self.log_as, process.pid)
        incoming_writer, incoming = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        outgoing, outgoing_reader = anyio.create_memory_object_stream[SessionMessage](0)
        try:
            async with anyio.create_task_group() as tasks:
                stdout_done = anyio.Event()
                tasks.start_soon(self._read_stdout, process, incoming_writer, stdout_done)
                assert process.stderr is not None
                tasks.start_soon(self._read_stderr, process.stderr)
                tasks.start_soon(self._write_stdin, process, outgoing_reader)
                tasks.start_soon(self._watch_exit, process, incoming_writer, stdout_done)
                try:
                    yield incoming, outgoing
                finally:
                    tasks.cancel_scope.cancel()
        finally:
            with anyio.CancelScope(shield=True):
                await self._stop(process)
                for stream in (incoming_writer, incoming, outgoing, outgoing_reader):
                    stream.close()

    async def settle(self, seconds: float = 1.0) -> None:
        """Wait (at most `seconds`) until the process has exited and its stderr was read to the
        end, so that what is said about its end is complete."""
        with anyio.move_on_after(seconds):
            while self.returncode is None:  # noqa: ASYNC110 (the status is all there is to wait on)
                await anyio.sleep(EXIT_POLL_SECONDS / 5)
            await self._stderr_done.wait()

    async def _read_stderr(self, stream: anyio.abc.ByteReceiveStream) -> None:
        try:
            await proc.read_tail(stream, self._stderr, STDERR_KEPT_BYTES)
        finally:
            self._stderr_done.set()

    async def _read_stdout(
        self,
        process: anyio.abc.Process,
        incoming: MemoryObjectSendStream[SessionMessage | Exception],
        done: anyio.Event,
    ) -> None:
        assert process.stdout is not None
        splitter = LineSplitter(self.max_line_bytes)
        try:
            while True:
                try:
                    chunk = await process.stdout.receive(READ_CHUNK_BYTES)
                except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
                    break
                for line in splitter.feed(chunk):
                    await self._deliver(line, incoming)
            for line in splitter.finish():
                await self._deliver(line, incoming)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass  # the session is gone
        finally:
            done.set()
            self.ended.set()
            incoming.close()  # end of the read stream: every request still waiting fails

    async def _deliver(
        self, line: bytes | TooLong, incoming: MemoryObjectSendStream[SessionMessage | Exception]
    ) -> None:
        if isinstance(line, TooLong):
            answer = self._too_long(line)
            if answer is not None:
                await incoming.send(SessionMessage(answer))
            return
        if not line.strip():
            return
        try:
            message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
        except (ValidationError, ValueError) as exc:
            # scrubbed before it is cut, which may fall inside a secret
            shown = self.scrub(line[:SCRUBBED_BYTES].decode("utf-8", "replace"))[:LINE_SHOWN_CHARS]
            what = (  # JSON the parser cannot descend into is no garbage: say which it was
                "a line to stdout nested more deeply than the JSON-RPC parser reads"
                if "recursion limit" in str(exc)
                else "a line that is not a JSON-RPC message to stdout"
            )
            self._problem(f"it wrote {what}: {shown!r}")
            answer = _unreadable_answer(line, exc)
            if answer is not None:
                await incoming.send(SessionMessage(answer))
            return
        await incoming.send(SessionMessage(message))

    def _too_long(self, line: TooLong) -> types.JSONRPCError | None:
        """The error that settles the request a too long answer was for, when its id shows."""
        limit = self.max_line_bytes
        request_id = _answered_id(line.start, line.end)
        self._problem(
            f"it wrote a message longer than {limit} bytes to stdout, the most the gateway reads from "
            "an MCP server; it was skipped unread"
        )
        if request_id is None:
            return None
        return types.JSONRPCError(
            jsonrpc="2.0",
            id=request_id,
            error=types.ErrorData(
                code=types.INTERNAL_ERROR,
                message=f"the server's answer is longer than {limit} bytes, the most the gateway reads "
                "from an MCP server, and was skipped unread",
                data={TOO_LONG_MARK: limit},
            ),
        )

    def _problem(self, problem: str) -> None:
        pid = self.process.pid if self.process else "?"
        if self.problems_seen < PROBLEMS_LOGGED:
            logger.warning("%s: MCP server pid %s: %s", self.log_as, pid, problem)
        elif self.problems_seen == PROBLEMS_LOGGED:
            logger.warning("%s: MCP server pid %s: more problems; the rest are not logged", self.log_as, pid)
        self.problems.append(problem)
        self.problems_seen += 1

    async def _write_stdin(
        self, process: anyio.abc.Process, outgoing: MemoryObjectReceiveStream[SessionMessage]
    ) -> None:
        assert process.stdin is not None
        try:
            async for message in outgoing:
                text = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                await process.stdin.send(text.encode("utf-8") + b"\n")
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            self.ended.set()  # it stopped reading: it has exited or is about to

    async def _watch_exit(
        self,
        process: anyio.abc.Process,
        incoming: MemoryObjectSendStream[SessionMessage | Exception],
        stdout_done: anyio.Event,
    ) -> None:
        """Polls the exit status (waiting on the process would also wait for the end of its
        output, which a grandchild may keep open), then ends the read stream."""
        while process.returncode is None:  # noqa: ASYNC110 (the status is all there is to wait on)
            await anyio.sleep(EXIT_POLL_SECONDS)
        with anyio.move_on_after(1.0):  # what it wrote last still reaches the session
            await stdout_done.wait()
        logger.info(
            "%s: MCP server pid %d %s", self.log_as, process.pid, proc.describe_exit(process.returncode)
        )
        self.ended.set()
        incoming.close()

    async def _stop(self, process: anyio.abc.Process) -> None:
        """Close stdin (MCP's way to ask a stdio server to exit), give it a moment, then stop
        the whole group. Call shielded."""
        if process.stdin is not None:
            with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
                await process.stdin.aclose()
        with anyio.move_on_after(CLOSE_STDIN_SECONDS):
            while process.returncode is None:  # noqa: ASYNC110
                await anyio.sleep(EXIT_POLL_SECONDS / 5)
        await proc.stop_process_tree(process, self.grace)
        with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            await process.aclose()
        logger.debug("%s: MCP server pid %d stopped", self.log_as, process.pid)


def _answered_id(start: bytes, end: bytes) -> types.RequestId | None:
    """The id of the request a line answers, as far as its start and end show: an `id` that is
    a string or an integer, and no `method` (which would make it a request of the server's)."""
    wanted = frozenset({"id", "method"})
    members = trailing_members(end, wanted) | leading_members(start, wanted)
    request_id = members.get("id")
    if "method" in members or isinstance(request_id, bool) or not isinstance(request_id, str | int):
        return None
    return request_id


def _unreadable_answer(line: bytes, refusal: Exception) -> types.JSONRPCError | None:
    """The error that settles the request an answer the parser refused was for, when its id shows."""
    request_id = _answered_id(line[:ID_SEARCH_BYTES], line[-END_KEPT_BYTES:])
    if request_id is None:
        return None
    errors = refusal.errors() if isinstance(refusal, ValidationError) else []
    reason = str(errors[0]["msg"]) if errors else str(refusal)
    return types.JSONRPCError(
        jsonrpc="2.0",
        id=request_id,
        error=types.ErrorData(
            code=types.INTERNAL_ERROR,
            message=f"the server's answer could not be read ({reason[:LINE_SHOWN_CHARS]}) and was skipped",
            data={UNREADABLE_MARK: reason[:LINE_SHOWN_CHARS]},
        ),
    )
