"""The MCP stdio transport: newline-delimited JSON-RPC on this process's stdin and stdout.

It hands `Server.run` the same pair of streams as the SDK's `stdio_server()` (SessionMessage
items in, SessionMessage items out) and differs where the SDK's is fragile:

- One message is at most `max_message_bytes` long. stdin is read in chunks of READ_CHUNK_BYTES
  and a line is never held beyond the limit: a longer one is skipped up to its newline, unread,
  and answered with Invalid Request (with the request's id when its first bytes show it), so
  memory stays bounded whatever a client sends.
- Every line gets an answer or reaches the server, as JSON-RPC 2.0 says (see
  `jsonrpc_lines`): the SDK's answers nothing for a line it cannot read. Blank lines are
  ignored. Either way the server keeps serving.
- The client's requests are tracked until their answers are written. At end of input the
  requests already read (the last one may lack its newline) are answered before the read
  stream ends, which makes the SDK cancel every handler still running; the wait is at most
  `end_of_input_seconds`, and a signal still stops everything at once.
- Waiting for input happens in the event loop where the OS can say when a descriptor is ready
  (pipes, sockets and terminals on POSIX), so cancelling on SIGTERM or at end of input never
  waits for a thread blocked in read(). Only files, /dev/null and Windows pipes are read in a
  worker thread, which cancellation abandons. To a pipe or socket an answer is written at once
  when a poll that does not wait says there is room (nearly always), else after waiting for
  room in the event loop: no round of the loop per answer.
- While it serves, descriptors 0 and 1 point at the null device and at stderr (as the SDK's do),
  so child processes and stray prints can neither read the client's messages nor write into
  the protocol stream; the protocol uses private duplicates, and 0 and 1 are restored after.
"""

from __future__ import annotations

import contextlib
import logging
import os
import select
import stat
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from typing import Any, Final

import anyio
import mcp_types as types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.os.win32.utilities import rebind_std_handle_to_fd
from mcp.shared.dispatcher import coerce_request_id
from mcp.shared.message import SessionMessage

from ..executors.json_lines import LineSplitter, TooLong
from .jsonrpc_lines import encode_message, read_message, too_long_error
from .limits import DEFAULT_MAX_MESSAGE_BYTES

if sys.platform != "win32":
    import fcntl

logger = logging.getLogger(__name__)

READ_CHUNK_BYTES: Final = 64 * 1024
# A write of at most PIPE_BUF bytes to a pipe that polls writable does not block.
WRITE_CHUNK_BYTES: Final = getattr(select, "PIPE_BUF", 4096)
# At end of input, how long requests already read may take to be answered: a call with the
# default execution timeout (30 s) finishes. A client that will not wait sends SIGTERM.
END_OF_INPUT_SECONDS: Final = 60.0
# Requests that are answered only when the client ends them: nothing to wait for at end of input.
UNENDING_METHODS: Final = frozenset({"subscriptions/listen"})

Incoming = MemoryObjectReceiveStream[SessionMessage | Exception]
Outgoing = MemoryObjectSendStream[SessionMessage]


# ---------------------------------------------------------------------------- the descriptors


class _Descriptor:
    """stdin or stdout: waited on in the event loop when the OS can poll it, else (regular
    files, /dev/null, Windows) read and written in a worker thread that cancellation abandons."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._pollable = sys.platform != "win32"
        self.thread_may_hold_it = False
        self._writable_now = _room_check(fd) if self._pollable else None

    def _ready_to_write(self) -> bool:
        """Whether a write to a pipe or socket would go through at once (or fail at once: the
        client is gone), asked with a poll that does not wait. An answer is then written
        without a round of the event loop, which is nearly always."""
        return self._writable_now is not None and self._writable_now()

    async def read(self, size: int) -> bytes:
        while self._pollable:
            try:
                await anyio.wait_readable(self.fd)
            except PermissionError:  # epoll refuses files and /dev/null, which never block
                self._pollable = False
                break
            with contextlib.suppress(BlockingIOError):
                return os.read(self.fd, size)
        self.thread_may_hold_it = True
        return await anyio.to_thread.run_sync(os.read, self.fd, size, abandon_on_cancel=True)

    async def write_all(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            written = 0
            if self._pollable:
                if not self._ready_to_write():
                    try:
                        await anyio.wait_writable(self.fd)
                    except PermissionError:
                        self._pollable = False
                        continue
                with contextlib.suppress(BlockingIOError):
                    written = os.write(self.fd, view[:WRITE_CHUNK_BYTES])
            else:
                self.thread_may_hold_it = True
                written = await anyio.to_thread.run_sync(os.write, self.fd, view, abandon_on_cancel=True)
            view = view[written:]


def _room_check(fd: int) -> Callable[[], bool] | None:
    """A poll of `fd` for room to write that does not wait, for pipes and sockets only (files
    and devices keep to the event loop or a worker thread, as for reading)."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return None
    if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)):
        return None
    poller = select.poll()
    poller.register(fd, select.POLLOUT)
    return lambda: bool(poller.poll(0))


@contextlib.contextmanager
def _claimed(fd: int, substitute: Callable[[], int]) -> Iterator[_Descriptor]:
    """A private duplicate of standard descriptor `fd`, which meanwhile points at `substitute()`."""
    if sys.platform == "win32":  # pragma: no cover - Windows
        private = os.dup(fd)
    else:
        private = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)  # never 0-2, not inherited
    descriptor = _Descriptor(private)
    try:
        replacement = substitute()
        try:
            os.dup2(replacement, fd)
        finally:
            os.close(replacement)
        rebind_std_handle_to_fd(fd)
        yield descriptor
    finally:
        os.dup2(private, fd)
        rebind_std_handle_to_fd(fd)
        if not descriptor.thread_may_hold_it:  # else an abandoned read could get a reused number
            os.close(private)


def _null_input() -> int:
    return os.open(os.devnull, os.O_RDONLY)


def _stderr_copy() -> int:
    try:
        return os.dup(2)
    except OSError:
        return os.open(os.devnull, os.O_WRONLY)


# ---------------------------------------------------------------------------- the transport


class InFlight:
    """The client's requests read and not yet answered, by id (as the SDK correlates them: "7"
    and 7 are one id), with their methods."""

    def __init__(self) -> None:
        self._methods: dict[types.RequestId, str] = {}
        self._none_left = anyio.Event()
        self._none_left.set()

    def __len__(self) -> int:
        return len(self._methods)

    def started(self, request: types.JSONRPCRequest) -> None:
        if request.method in UNENDING_METHODS:
            return
        if not self._methods:
            self._none_left = anyio.Event()
        self._methods[coerce_request_id(request.id)] = request.method

    def method_of(self, request_id: types.RequestId | None) -> str | None:
        return None if request_id is None else self._methods.get(coerce_request_id(request_id))

    def ended(self, request_id: types.RequestId | None) -> None:
        """Answered, or cancelled by the client (then the SDK answers nothing)."""
        if request_id is None or self._methods.pop(coerce_request_id(request_id), None) is None:
            return
        if not self._methods:
            self._none_left.set()

    async def none_left(self) -> None:
        await self._none_left.wait()


@contextlib.asynccontextmanager
async def stdio_transport(
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    *,
    stdin_fd: int | None = None,
    stdout_fd: int | None = None,
    end_of_input_seconds: float = END_OF_INPUT_SECONDS,
) -> AsyncIterator[tuple[Incoming, Outgoing]]:
    """Streams for `Server.run` over this process's stdin and stdout (or the descriptors given,
    which are then left alone). Ends reading at end of input, once the requests read are
    answered (or `end_of_input_seconds` have passed), or when the caller is done."""
    with contextlib.ExitStack() as claims:
        source = (
            _Descriptor(stdin_fd) if stdin_fd is not None else claims.enter_context(_claimed(0, _null_input))
        )
        sink = (
            _Descriptor(stdout_fd)
            if stdout_fd is not None
            else claims.enter_context(_claimed(1, _stderr_copy))
        )
        incoming_writer, incoming = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        outgoing, outgoing_reader = anyio.create_memory_object_stream[SessionMessage](0)
        reading = anyio.CancelScope()
        in_flight = InFlight()
        reader = _Reader(source, max_message_bytes, in_flight, end_of_input_seconds)
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(reader.run, incoming_writer, outgoing.clone(), reading)
            tasks.start_soon(_write, sink, outgoing_reader, reading, in_flight)
            try:
                yield incoming, outgoing
            finally:
                reading.cancel()
                incoming.close()
                outgoing.close()


@dataclass
class _Reader:
    source: _Descriptor
    limit: int
    in_flight: InFlight
    end_of_input_seconds: float

    async def run(
        self,
        incoming: MemoryObjectSendStream[SessionMessage | Exception],
        answers: Outgoing,
        scope: anyio.CancelScope,
    ) -> None:
        splitter = LineSplitter(self.limit)
        with scope, contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
            async with incoming, answers:
                while True:
                    try:
                        chunk = await self.source.read(READ_CHUNK_BYTES)
                    except OSError as exc:
                        logger.warning("reading stdin failed (%s): taking it as the end of input", exc)
                        chunk = b""
                    for line in splitter.feed(chunk) if chunk else splitter.finish():
                        await self._deliver(line, incoming, answers)
                    if not chunk:
                        await self._answer_the_rest()
                        return

    async def _deliver(
        self,
        line: bytes | TooLong,
        incoming: MemoryObjectSendStream[SessionMessage | Exception],
        answers: Outgoing,
    ) -> None:
        if isinstance(line, TooLong):
            message: SessionMessage | types.JSONRPCError = too_long_error(line, self.limit)
        elif line.strip():
            message = read_message(line)
        else:
            return
        if isinstance(message, types.JSONRPCError):
            logger.warning("refused a message from the client: %s", message.error.message)
            await answers.send(SessionMessage(message))
            return
        received = message.message
        if isinstance(received, types.JSONRPCRequest):
            self.in_flight.started(received)  # before the server can answer it
        elif isinstance(received, types.JSONRPCNotification) and received.method == "notifications/cancelled":
            self.in_flight.ended(_cancelled_id(received.params))
        await incoming.send(message)

    async def _answer_the_rest(self) -> None:
        """At end of input: the requests read are answered before the read stream ends (which
        makes the SDK cancel every handler still running)."""
        if not self.in_flight:
            return
        logger.info(
            "end of input: answering the %d requests still running first (at most %g s)",
            len(self.in_flight),
            self.end_of_input_seconds,
        )
        with anyio.move_on_after(self.end_of_input_seconds) as waited:
            await self.in_flight.none_left()
        if waited.cancelled_caught:
            logger.warning(
                "end of input: %d requests still running after %g s are cancelled",
                len(self.in_flight),
                self.end_of_input_seconds,
            )


def _cancelled_id(params: dict[str, Any] | None) -> types.RequestId | None:
    found = (params or {}).get("requestId")
    return found if isinstance(found, str | int) and not isinstance(found, bool) else None


async def _write(
    sink: _Descriptor,
    outgoing: MemoryObjectReceiveStream[SessionMessage],
    reading: anyio.CancelScope,
    in_flight: InFlight,
) -> None:
    client_gone = False
    async with outgoing:
        async for item in outgoing:
            message = item.message
            answered = message.id if isinstance(message, types.JSONRPCResponse | types.JSONRPCError) else None
            try:
                if client_gone:
                    continue  # keep taking messages so that nobody waits on a dead connection
                data = encode_message(message, in_flight.method_of(answered))
                if data is not None:
                    await sink.write_all(data)
            except OSError as exc:
                logger.warning("writing to stdout failed (%s): the client is gone", exc)
                client_gone = True
                reading.cancel()  # as at end of input: the server winds down
            finally:
                in_flight.ended(answered)
