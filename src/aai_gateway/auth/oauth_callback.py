"""The loopback end of an OAuth sign-in: `http://127.0.0.1:<port>/callback` (RFC 8252 §7.3).

`LoopbackCallback.handle` serves each connection of the sign-in's listener: it reads one request
head (at most MAX_REQUEST_HEAD_BYTES, within CONNECTION_READ_SECONDS), answers with a small page,
and keeps the first valid outcome: a `code` with the sign-in's `state`, or the authorization
server's `error` (scrubbed of the client's secret, which a careless server may repeat). A
callback with another state gets an error page and changes nothing (a forged
or stale link cannot end the sign-in); anything after the outcome is told it is finished. The code
is never logged, and what the pages show is HTML-escaped.

`serve_connections` is the listener's accept loop (not anyio's `SocketListener.serve`; see there).
"""

from __future__ import annotations

import html
import logging
import secrets
import socket
from collections.abc import Callable, Coroutine
from typing import Any, Final
from urllib.parse import parse_qs, urlsplit

import anyio
from anyio.abc import SocketStream

from .token_answers import scrub

logger = logging.getLogger(__name__)

CALLBACK_PATH: Final = "/callback"
MAX_REQUEST_HEAD_BYTES: Final = 16 * 1024
CONNECTION_READ_SECONDS: Final = 10.0


class LoopbackCallback:
    """Answers the browser on the loopback listener and keeps the first valid outcome."""

    def __init__(self, state: str, app_name: str, secrets: tuple[str | None, ...] = ()) -> None:
        self._state = state
        self._app_name = app_name
        self._secrets = secrets  # what an answer's error must not repeat (the client's secret)
        self.code: str | None = None
        self.error: str | None = None
        self.done = anyio.Event()

    @property
    def finished(self) -> bool:
        return self.code is not None or self.error is not None

    async def handle(self, stream: SocketStream) -> None:
        try:
            async with stream:
                head = b""
                with anyio.move_on_after(CONNECTION_READ_SECONDS):
                    head = await _read_head(stream)
                if not head:
                    return
                finished_before = self.finished
                status, title, text = self._route(head)
                try:
                    await stream.send(_page(status, title, text))
                finally:  # the page is sent before the sign-in moves on (and stops listening)
                    if self.finished and not finished_before:
                        self.done.set()
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, anyio.EndOfStream, OSError):
            return

    def _route(self, head: bytes) -> tuple[int, str, str]:
        request_line = head.split(b"\r\n", 1)[0].decode("latin-1")
        parts = request_line.split(" ")
        if len(parts) != 3 or parts[0] != "GET":
            return 405, "Not supported", "This address only receives sign-in answers."
        target = urlsplit(parts[1])
        if target.path != CALLBACK_PATH:
            return 404, "Not found", "This address only receives sign-in answers."
        query = {k: v[0] for k, v in parse_qs(target.query, keep_blank_values=True).items()}
        if self.finished:
            return 409, "Already answered", "This sign-in is already finished. You can close this tab."
        if not secrets.compare_digest(query.get("state", "").encode(), self._state.encode()):
            logger.warning("ignored a sign-in answer whose state does not match the sign-in in progress")
            return (
                400,
                "Sign-in not accepted",
                "This answer does not belong to the sign-in the gateway started (its state does not "
                "match), so it was ignored. Close this tab and use the browser window the gateway opened.",
            )
        if "error" in query:
            error = scrub(query["error"], self._secrets)
            description = scrub(query.get("error_description", ""), self._secrets)
            self.error = f"the authorization server answered {error}" + (
                f": {description}" if description else ""
            )
            return 400, "Sign-in failed", f"{self._app_name}: {self.error}. You can close this tab."
        code = query.get("code")
        if not code:
            self.error = "the authorization server answered without a code"
            return 400, "Sign-in failed", f"{self._app_name}: {self.error}. You can close this tab."
        self.code = code
        return (
            200,
            "Signed in",
            f"The AAI Gateway is now signed in to {self._app_name}. You can close this tab.",
        )


ConnectionHandler = Callable[[SocketStream], Coroutine[Any, Any, None]]


async def serve_connections(listening: socket.socket, handle: ConnectionHandler) -> None:
    """Accepts each connection of the non-blocking `listening` socket and serves it with `handle`
    in a task of its own, until cancelled.

    It waits for the socket to be readable and then accepts. asyncio's own accept (under anyio's
    `SocketListener.serve`) cannot be cancelled safely on CPython 3.11: when the browser's late
    request lands in the loop pass that stops the sign-in, the accept completes a future already
    cancelled (an `InvalidStateError` out of the event loop) and the connection is left open.
    Here a wake-up that comes too late sets an event nobody waits for, and a connection not yet
    accepted closes with the listening socket."""
    async with anyio.create_task_group() as tg:
        while True:
            await anyio.wait_readable(listening)
            try:
                connection, _address = listening.accept()
            except (BlockingIOError, InterruptedError, ConnectionAbortedError):
                continue  # taken back before it was accepted: wait for the next one
            try:
                stream = await SocketStream.from_socket(connection)
            except BaseException:
                connection.close()
                raise
            tg.start_soon(handle, stream)


async def _read_head(stream: SocketStream) -> bytes:
    head = b""
    while b"\r\n\r\n" not in head:
        try:
            chunk = await stream.receive(4096)
        except anyio.EndOfStream:
            return head
        head += chunk
        if len(head) > MAX_REQUEST_HEAD_BYTES:
            return b""
    return head


def _page(status: int, title: str, text: str) -> bytes:
    reason = {200: "OK", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed", 409: "Conflict"}
    body = (
        "<!doctype html><html><head><meta charset='utf-8'>"
        f"<title>{html.escape(title)} - AAI Gateway</title></head>"
        f"<body><h1>{html.escape(title)}</h1><p>{html.escape(text)}</p></body></html>"
    ).encode()
    head = (
        f"HTTP/1.1 {status} {reason.get(status, 'Error')}\r\n"
        "Content-Type: text/html; charset=utf-8\r\n"
        f"Content-Length: {len(body)}\r\n"
        "Cache-Control: no-store\r\n"
        "Referrer-Policy: no-referrer\r\n"
        "Connection: close\r\n\r\n"
    ).encode()
    return head + body
