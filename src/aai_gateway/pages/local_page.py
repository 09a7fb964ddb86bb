"""A one-time page the gateway serves on 127.0.0.1 for the user's browser, out of the agent's sight.

Two pages build on it: the credential page (a secret goes straight to the keyring) and the
consent page (the user answers whether an agent may use a tool). A page serves one form, once:

    async with page.serve() as url:        # http://127.0.0.1:<port>/<prefix>/<token>
        ...                                 # hand `url` to the user
        value = await page.wait()           # what the form produced, or TimeoutError

Defences, each covered by a test:

- The URL carries an unguessable token (256 bits); any other path answers 404. After a
  successful submit, on timeout and when the context exits, the token is dead (410 Gone) and
  the server stops.
- Every request must carry `Host: 127.0.0.1:<port>` (DNS rebinding); a POST must also carry the
  page's CSRF token, an `Origin` (when present) of `http://127.0.0.1:<port>`, no cross-site
  `Sec-Fetch-Site`, and a urlencoded form body of bounded size.
- Responses forbid caching, framing, sniffing, referrers to other sites (the token never leaves
  the page) and every script (strict CSP: only the page's own inline stylesheet, by hash).
- Submitted values never reach logs or error messages.
"""

from __future__ import annotations

import hmac
import logging
import math
import secrets
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import ClassVar, Generic, Literal, TypeVar
from urllib.parse import parse_qs

import anyio
import uvicorn
from anyio.abc import TaskStatus
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.types import Receive, Scope, Send

from .html import CSRF_FIELD, STYLE_HASH, FieldError, render_message

logger = logging.getLogger(__name__)

T = TypeVar("T")
PageState = Literal["new", "open", "saving", "saved", "expired", "closed"]

HOST = "127.0.0.1"
MAX_BODY_BYTES = 64 * 1024
MAX_FIELDS = 64
SHUTDOWN_GRACE_SECONDS = 0.2  # lets the "Saved" page reach the browser before the server stops
SAVE_GRACE_SECONDS = 30.0  # a save under way when the time is up may finish (keyring unlock prompt)
GRACEFUL_SHUTDOWN_SECONDS = 2
ALLOWED_FETCH_SITES = frozenset({"same-origin", "none"})

CSP = (
    "default-src 'none'; "
    f"style-src '{STYLE_HASH}'; "
    "form-action 'self'; "
    "base-uri 'none'; "
    "frame-ancestors 'none'"
)
SECURITY_HEADERS = {
    "Cache-Control": "no-store",
    "Pragma": "no-cache",
    # Not `no-referrer`: under it browsers send `Origin: null` with the form's own POST, which would
    # defeat the Origin check. `same-origin` still sends nothing (so not the token) to other sites.
    "Referrer-Policy": "same-origin",
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": CSP,
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
}


class PageClosedError(RuntimeError):
    """`wait()` found the page closed (its `serve()` context exited) before anything was submitted."""


class RejectedError(Exception):
    """A request the page refuses: answered with `status` and a short page saying why."""

    def __init__(self, status: int, title: str, text: str) -> None:
        super().__init__(title)
        self.status = status
        self.title = title
        self.text = text


class LocalPage(Generic[T]):
    """Serve one form, once. Subclasses render it (`render_form`) and turn a submitted form into
    their value (`accept`), or into the form again with errors."""

    path_prefix: ClassVar[str]  # e.g. "/c/"
    kind: ClassVar[str]  # for logs, e.g. "credential page"

    def __init__(self, *, subject: str, lang: str, timeout_seconds: float) -> None:
        if not timeout_seconds > 0 or not math.isfinite(timeout_seconds):
            raise ValueError("timeout_seconds must be a positive number")
        self.subject = subject  # what the page is about, for logs (an app id)
        self.lang = lang
        self.timeout_seconds = timeout_seconds
        self.token = secrets.token_urlsafe(32)
        self.csrf = secrets.token_urlsafe(32)
        self._state: PageState = "new"
        self._port: int | None = None
        self._done: anyio.Event | None = None
        self._value: T | None = None
        self._has_value = False

    # ------------------------------------------------------------------ what subclasses provide

    def render_form(self, status: int, errors: list[FieldError], keep: dict[str, str]) -> Response:
        raise NotImplementedError

    async def accept(self, form: dict[str, str]) -> T | Response:
        """The value the submitted form stands for (its side effects done), or a response showing
        the form again with what is wrong."""
        raise NotImplementedError

    def accepted(self, value: T) -> Response:
        """What the browser sees after `accept` produced `value`."""
        raise NotImplementedError

    def timeout_message(self) -> str:
        return f"nobody answered the {self.kind} for {self.subject} within {self.timeout_seconds:g} s"

    # ------------------------------------------------------------------ public API

    @property
    def state(self) -> PageState:
        return self._state

    @property
    def url(self) -> str:
        if self._port is None:
            raise RuntimeError(f"the {self.kind} is not served yet")
        return f"http://{HOST}:{self._port}{self.path}"

    @property
    def path(self) -> str:
        return f"{self.path_prefix}{self.token}"

    @asynccontextmanager
    async def serve(self) -> AsyncIterator[str]:
        """Serve the page on 127.0.0.1 (random port) for the life of the context; yields its URL."""
        if self._state != "new":
            raise RuntimeError(f"a {self.kind} is served only once")
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            sock.bind((HOST, 0))
            sock.listen(16)
            sock.setblocking(False)
        except OSError:
            sock.close()
            raise
        self._port = sock.getsockname()[1]
        config = uvicorn.Config(
            self,
            log_config=None,  # never touch the application's logging setup
            access_log=False,  # the URL holds the token
            lifespan="off",
            http="h11",
            ws="none",
            proxy_headers=False,
            server_header=False,
            limit_concurrency=32,
            timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_SECONDS,
        )
        server = uvicorn.Server(config)
        self._done = anyio.Event()
        deadline = anyio.current_time() + self.timeout_seconds
        failure: Exception | None = None
        async with anyio.create_task_group() as group:
            await group.start(self._run_server, server, sock)
            self._state = "open"
            logger.info("%s for %s open on %s:%d", self.kind, self.subject, HOST, self._port)
            group.start_soon(self._stop_when_done, server, deadline)
            try:
                yield self.url
            except Exception as exc:  # re-raised below, as itself rather than in an ExceptionGroup
                failure = exc
            finally:
                self._finish("closed")
                server.should_exit = True
        if failure is not None:
            raise failure

    async def wait(self) -> T:
        """What the user submitted; TimeoutError once `timeout_seconds` have passed."""
        if self._done is None:
            raise RuntimeError("call wait() inside `async with page.serve()`")
        await self._done.wait()
        if self._has_value:
            return self._value  # type: ignore[return-value]  # set together with _has_value
        if self._state == "expired":
            raise TimeoutError(self.timeout_message())
        raise PageClosedError(f"the {self.kind} for {self.subject} was closed")

    # ------------------------------------------------------------------ lifecycle

    async def _run_server(
        self, server: uvicorn.Server, sock: socket.socket, *, task_status: TaskStatus[None]
    ) -> None:
        # startup/main_loop/shutdown rather than serve(): serve() would take over SIGINT/SIGTERM
        # of the whole gateway while the page is open.
        config = server.config
        try:
            if not config.loaded:
                config.load()
            server.lifespan = config.lifespan_class(config)
            await server.startup(sockets=[sock])
        except BaseException:
            sock.close()
            raise
        task_status.started()
        try:
            await server.main_loop()
        finally:
            with anyio.move_on_after(GRACEFUL_SHUTDOWN_SECONDS + 1, shield=True):
                await server.shutdown(sockets=[sock])
            sock.close()
            logger.debug("%s for %s stopped", self.kind, self.subject)

    async def _stop_when_done(self, server: uvicorn.Server, deadline: float) -> None:
        assert self._done is not None
        with anyio.move_on_after(max(0.0, deadline - anyio.current_time())):
            await self._done.wait()
        if not self._done.is_set() and self._state == "saving":
            with anyio.move_on_after(SAVE_GRACE_SECONDS):
                await self._done.wait()
        if not self._done.is_set():
            self._finish("expired")
            logger.info("%s for %s timed out", self.kind, self.subject)
        elif self._state == "saved":
            await anyio.sleep(SHUTDOWN_GRACE_SECONDS)
        server.should_exit = True

    def _finish(self, state: PageState) -> None:
        if self._state in ("new", "open", "saving"):
            self._state = state
        if self._done is not None:
            self._done.set()

    # ------------------------------------------------------------------ HTTP

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        request = Request(scope, receive)
        try:
            response = await self._handle(request)
        except RejectedError as rejected:
            response = self.message(rejected.status, rejected.title, rejected.text)
        await response(scope, receive, send)

    async def _handle(self, request: Request) -> Response:
        expected_host = f"{HOST}:{self._port}"
        if request.headers.get("host") != expected_host:
            logger.warning("%s: request with a foreign Host header refused", self.kind)
            raise RejectedError(400, "Wrong address", f"Open this page at http://{expected_host}/ only.")
        path: str = request.scope["path"]
        if not hmac.compare_digest(path.encode(), self.path.encode()):
            raise RejectedError(404, "Not found", "There is no page here.")
        if self._state in ("saved", "expired", "closed"):
            raise RejectedError(
                410, "This page is gone", "It worked once and is closed now. You can close this tab."
            )
        if request.method in ("GET", "HEAD"):
            return self.render_form(200, [], {})
        if request.method != "POST":
            response = self.message(405, "Method not allowed", "Use the form on this page.")
            response.headers["Allow"] = "GET, HEAD, POST"
            return response
        return await self._submit(request)

    async def _submit(self, request: Request) -> Response:
        origin = request.headers.get("origin")
        if origin is not None and origin != f"http://{HOST}:{self._port}":
            logger.warning("%s: POST from a foreign origin refused", self.kind)
            raise RejectedError(403, "Refused", "The form was sent from another site.")
        if request.headers.get("sec-fetch-site", "same-origin") not in ALLOWED_FETCH_SITES:
            logger.warning("%s: cross-site POST refused", self.kind)
            raise RejectedError(403, "Refused", "The form was sent from another site.")
        content_type = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
        if content_type != "application/x-www-form-urlencoded":
            raise RejectedError(415, "Unsupported form", "Send the form from this page.")
        form = await self._read_form(request)
        if not hmac.compare_digest(form.get(CSRF_FIELD, "").encode(), self.csrf.encode()):
            logger.warning("%s: POST without the page's CSRF token refused", self.kind)
            raise RejectedError(
                403, "Refused", "The form is stale or was not sent from this page. Reload it."
            )
        if self._state != "open":  # another submit is being handled right now
            raise RejectedError(409, "Busy", "An answer is being saved. Reload this page in a moment.")
        self._state = "saving"
        try:
            outcome = await self.accept(form)
        finally:
            if self._state == "saving":
                self._state = "open"
        if isinstance(outcome, Response):
            return outcome
        self._value, self._has_value = outcome, True  # kept, even if the page was closed meanwhile
        self._finish("saved")
        return self.accepted(outcome)

    async def _read_form(self, request: Request) -> dict[str, str]:
        body = bytearray()
        async for chunk in request.stream():
            body += chunk
            if len(body) > MAX_BODY_BYTES:
                raise RejectedError(413, "Too much data", "The form is larger than this page sends.")
        try:
            parsed = parse_qs(
                body.decode("ascii"),
                keep_blank_values=True,
                strict_parsing=False,
                encoding="utf-8",
                errors="strict",
                max_num_fields=MAX_FIELDS,
            )
        except (UnicodeDecodeError, ValueError):
            raise RejectedError(400, "Unreadable form", "Send the form from this page.") from None
        return {name: values[0] for name, values in parsed.items() if values}

    def message(self, status: int, title: str, text: str, *, ok: bool = False) -> Response:
        html = render_message(title, text, self.lang, ok=ok)
        return HTMLResponse(html, status_code=status, headers=SECURITY_HEADERS)

    def html(self, status: int, html: str) -> HTMLResponse:
        return HTMLResponse(html, status_code=status, headers=SECURITY_HEADERS)
