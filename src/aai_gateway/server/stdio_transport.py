"""The MCP stdio transport: newline-delimited JSON-RPC on this process's stdin and stdout.

It hands `Server.run` the same pair of streams as the SDK's `stdio_server()` (SessionMessage
items in, SessionMessage items out) and differs where the SDK's is fragile:

- One message is at most `max_message_bytes` long. stdin is read in chunks of READ_CHUNK_BYTES
  and a line is never held beyond the limit: a longer one is skipped up to its newline, unread,
  and answered with Invalid Request (with the request's id when its first bytes show it), so
  memory stays bounded whatever a client sends.
- A line that is not JSON is answered with Parse error (-32700) and one that is JSON but not a
  JSON-RPC message with Invalid Request (-32600), as JSON-RPC 2.0 says; the SDK answers
  nothing. Blank lines are ignored. Either way the server keeps serving.
- Waiting for input happens in the event loop where the OS can say when a descriptor is ready
  (pipes, sockets and terminals on POSIX), so cancelling on SIGTERM or at end of input never
  waits for a thread blocked in read(). Only files, /dev/null and Windows pipes are read in a
  worker thread, which cancellation abandons.
- While it serves, descriptors 0 and 1 point at the null device and at stderr (as the SDK's do),
  so child processes and stray prints can neither read the client's messages nor write into
  the protocol stream; the protocol uses private duplicates, and 0 and 1 are restored after.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import select
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from typing import Any, Final

import anyio
import mcp_types as types
import pydantic_core
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.os.win32.utilities import rebind_std_handle_to_fd
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from .limits import DEFAULT_MAX_MESSAGE_BYTES

if sys.platform != "win32":
    import fcntl

logger = logging.getLogger(__name__)

READ_CHUNK_BYTES: Final = 64 * 1024
# A write of at most PIPE_BUF bytes to a pipe that polls writable does not block.
WRITE_CHUNK_BYTES: Final = getattr(select, "PIPE_BUF", 4096)
ID_SEARCH_BYTES: Final = 64 * 1024  # how much of a skipped line is searched for its request id

Incoming = MemoryObjectReceiveStream[SessionMessage | Exception]
Outgoing = MemoryObjectSendStream[SessionMessage]


# ---------------------------------------------------------------------------- framing


@dataclass(frozen=True)
class TooLong:
    """A line longer than the limit, of which only the start was kept."""

    start: bytes


class LineSplitter:
    """Cuts a byte stream into lines of at most `limit` bytes; holds at most `limit` bytes plus
    one chunk. A longer line comes out as `TooLong` once, and the rest of it is dropped unread."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._pending = bytearray()
        self._searched = 0  # how much of _pending is known to hold no newline
        self._skipping = False

    def feed(self, chunk: bytes) -> list[bytes | TooLong]:
        if self._skipping:
            end = chunk.find(b"\n")
            if end < 0:
                return []
            self._skipping = False
            chunk = chunk[end + 1 :]
        pending = self._pending
        pending += chunk
        lines: list[bytes | TooLong] = []
        start = 0
        while (end := pending.find(b"\n", max(start, self._searched))) >= 0:
            lines.append(self._line(start, end))
            start = end + 1
        del pending[:start]
        self._searched = len(pending)
        if len(pending) > self.limit:
            lines.append(TooLong(bytes(pending[:ID_SEARCH_BYTES])))
            pending.clear()
            self._searched = 0
            self._skipping = True
        return lines

    def finish(self) -> list[bytes | TooLong]:
        """At end of input: the last line, when it had no newline."""
        rest, self._pending = bytes(self._pending), bytearray()
        return [rest] if rest and not self._skipping else []

    def _line(self, start: int, end: int) -> bytes | TooLong:
        if end - start > self.limit:
            return TooLong(bytes(self._pending[start : start + ID_SEARCH_BYTES]))
        return bytes(self._pending[start:end])


# ---------------------------------------------------------------------------- reading messages


def read_message(line: bytes) -> SessionMessage | types.JSONRPCError:
    """The JSON-RPC message on one line, or the error to answer it with. NaN and Infinity are
    not JSON; neither is nesting beyond 200 levels (the parser's limit)."""
    try:
        document = pydantic_core.from_json(line, allow_inf_nan=False)
    except ValueError as exc:
        return _error(None, types.PARSE_ERROR, f"Parse error: the line is not JSON ({exc})")
    try:
        return SessionMessage(types.jsonrpc_message_adapter.validate_python(document, by_name=False))
    except ValidationError:
        return _error(_request_id(document), types.INVALID_REQUEST, f"Invalid Request: {_fault(document)}")


def too_long_error(line: TooLong, limit: int) -> types.JSONRPCError:
    return _error(
        _request_id_at_start(line.start),
        types.INVALID_REQUEST,
        f"Invalid Request: the message is longer than {limit} bytes, the most this gateway reads "
        "(its --max-message-bytes option); it was skipped unread",
        {"max_message_bytes": limit},
    )


def _error(
    request_id: types.RequestId | None, code: int, message: str, data: Any = None
) -> types.JSONRPCError:
    fields: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        fields["data"] = data
    return types.JSONRPCError(jsonrpc="2.0", id=request_id, error=types.ErrorData(**fields))


def _fault(document: Any) -> str:
    if isinstance(document, list):
        return "a JSON array (a batch); send one JSON-RPC message per line"
    if not isinstance(document, dict):
        return "a JSON-RPC message is a JSON object"
    if document.get("jsonrpc") != "2.0":
        return 'a JSON-RPC 2.0 message needs "jsonrpc": "2.0"'
    return 'not a JSON-RPC request (string "method", string or integer "id"), notification or response'


def _request_id(document: Any) -> types.RequestId | None:
    """The id of what looks like a request; None for anything else (answering a malformed
    response with its id would fail the client's own request of that id)."""
    if not isinstance(document, dict) or "method" not in document:
        return None
    found = document.get("id")
    if isinstance(found, bool) or not isinstance(found, str | int):
        return None
    return found


_TOKEN: Final = re.compile(
    rb'\s*("(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null|[{}\[\]:,])'
)


def _request_id_at_start(start: bytes) -> types.RequestId | None:
    """The id of a request from the first bytes of its line, when both its `id` and its
    `method` are members of the top-level object there (clients write them before `params`)."""
    found: dict[str, Any] = {}
    depth, key, expecting_key = 0, None, False
    position = 0
    while (match := _TOKEN.match(start, position)) is not None:
        token, position = match.group(1), match.end()
        if token in (b"{", b"["):
            depth += 1
            expecting_key, key = depth == 1 and token == b"{", None
        elif token in (b"}", b"]"):
            depth -= 1
        elif depth == 0:
            return None  # the line is not an object
        elif depth == 1 and token == b",":
            expecting_key = True
        elif depth == 1 and token != b":":
            try:
                value = pydantic_core.from_json(token)
            except ValueError:
                return None
            if expecting_key:
                key, expecting_key = value, False
            elif key is not None:
                found[key] = value
                key = None
            if "method" in found and "id" in found:
                return _request_id(found)
    return None


# ---------------------------------------------------------------------------- the descriptors


class _Descriptor:
    """stdin or stdout: waited on in the event loop when the OS can poll it, else (regular
    files, /dev/null, Windows) read and written in a worker thread that cancellation abandons."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._pollable = sys.platform != "win32"
        self.thread_may_hold_it = False

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


@contextlib.asynccontextmanager
async def stdio_transport(
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    *,
    stdin_fd: int | None = None,
    stdout_fd: int | None = None,
) -> AsyncIterator[tuple[Incoming, Outgoing]]:
    """Streams for `Server.run` over this process's stdin and stdout (or the descriptors given,
    which are then left alone). Ends reading at end of input or when the caller is done."""
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
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(_read, source, max_message_bytes, incoming_writer, outgoing.clone(), reading)
            tasks.start_soon(_write, sink, outgoing_reader, reading)
            try:
                yield incoming, outgoing
            finally:
                reading.cancel()
                incoming.close()
                outgoing.close()


async def _read(
    source: _Descriptor,
    limit: int,
    incoming: MemoryObjectSendStream[SessionMessage | Exception],
    answers: Outgoing,
    scope: anyio.CancelScope,
) -> None:
    splitter = LineSplitter(limit)
    with scope, contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
        async with incoming, answers:
            while True:
                try:
                    chunk = await source.read(READ_CHUNK_BYTES)
                except OSError as exc:
                    logger.warning("reading stdin failed (%s): taking it as the end of input", exc)
                    chunk = b""
                for line in splitter.feed(chunk) if chunk else splitter.finish():
                    if isinstance(line, TooLong):
                        message: SessionMessage | types.JSONRPCError = too_long_error(line, limit)
                    elif line.strip():
                        message = read_message(line)
                    else:
                        continue
                    if isinstance(message, SessionMessage):
                        await incoming.send(message)
                    else:
                        logger.warning("refused a message from the client: %s", message.error.message)
                        await answers.send(SessionMessage(message))
                if not chunk:
                    return


async def _write(
    sink: _Descriptor, outgoing: MemoryObjectReceiveStream[SessionMessage], reading: anyio.CancelScope
) -> None:
    client_gone = False
    async with outgoing:
        async for item in outgoing:
            if client_gone:
                continue  # keep taking messages so that nobody waits on a dead connection
            data = encode_message(item.message)
            try:
                if data is not None:
                    await sink.write_all(data)
            except OSError as exc:
                logger.warning("writing to stdout failed (%s): the client is gone", exc)
                client_gone = True
                reading.cancel()  # as at end of input: the server winds down


def encode_message(message: types.JSONRPCMessage) -> bytes | None:
    """The message as one line; a response that cannot be written (pydantic gives up on very
    deep values) becomes an error response, so the client is not left waiting."""
    try:
        text = message.model_dump_json(by_alias=True, exclude_unset=True)
    except (ValueError, RecursionError) as exc:
        logger.error("a %s could not be written as JSON: %s", type(message).__name__, exc)
        if not isinstance(message, types.JSONRPCResponse):
            return None
        failed = _error(
            message.id, types.INTERNAL_ERROR, f"Internal error: the result is not writable as JSON ({exc})"
        )
        text = failed.model_dump_json(by_alias=True, exclude_unset=True)
    return text.encode("utf-8") + b"\n"
