"""A one-time local web page where the user enters a secret for an app, out of the agent's sight.

When a tool call needs an API key, an App ID + Secret or sign-in cookies that the user has not
stored yet, the MCP server sends the client a URL-mode elicitation pointing here instead of asking
in the chat (form-mode elicitation must never carry secrets). The user opens the link, pastes the
secret, submits; the page saves it in the credential store (the OS keyring) and shuts down.

    page = CredentialPage(app, auth, store, locale="en")
    async with page.serve() as url:        # http://127.0.0.1:<port>/c/<token>
        ...                                 # send `url` to the client as a URL elicitation
        credential = await page.wait()      # the saved Credential, or TimeoutError

Defences, each covered by a test:

- The URL carries an unguessable token (256 bits); any other path answers 404. After a
  successful save, on timeout and when the context exits, the token is dead (410 Gone) and the
  server stops.
- Every request must carry `Host: 127.0.0.1:<port>` (DNS rebinding); a POST must also carry the
  page's CSRF token, an `Origin` (when present) of `http://127.0.0.1:<port>`, no cross-site
  `Sec-Fetch-Site`, and a urlencoded form body of bounded size.
- Responses forbid caching, framing, sniffing, referrers to other sites (the token never leaves
  the page) and every script (strict CSP: only the page's own inline stylesheet, by hash).
- Descriptor strings are HTML-escaped; their URLs become links only when they are http(s).
- Submitted values never reach logs, error messages or re-rendered pages.
"""

from __future__ import annotations

import hmac
import logging
import math
import secrets
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Literal
from urllib.parse import parse_qs

import anyio
import uvicorn
from anyio.abc import TaskStatus
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.types import Receive, Scope, Send

from ..descriptor.model import ApiKeyAuth, AppCredentialAuth, AppDescriptor, CookieAuth
from ..descriptor.names import normalize_tag
from ..errors import AaiError
from . import page_templates as tpl
from .credentials import Credential, CredentialKind, CredentialStore

logger = logging.getLogger(__name__)

PageAuth = ApiKeyAuth | AppCredentialAuth | CookieAuth
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
    f"style-src '{tpl.STYLE_HASH}'; "
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


class CredentialPageClosedError(RuntimeError):
    """`wait()` found the page closed (its `serve()` context exited) before anything was saved."""


class _RejectedError(Exception):
    def __init__(self, status: int, title: str, text: str) -> None:
        super().__init__(title)
        self.status = status
        self.title = title
        self.text = text


def _kind(auth: PageAuth) -> CredentialKind:
    if isinstance(auth, ApiKeyAuth):
        return "apiKey"
    if isinstance(auth, AppCredentialAuth):
        return "appCredential"
    return "cookie"


def _has_control_chars(value: str) -> bool:
    return any(ord(c) < 0x20 or ord(c) == 0x7F for c in value)


_COOKIE_NAME_SEPARATORS = frozenset('()<>@,;:\\"/[]?={} \t')


def _valid_cookie_name(name: str) -> bool:
    return bool(name) and not _has_control_chars(name) and not (set(name) & _COOKIE_NAME_SEPARATORS)


def _valid_cookie_value(value: str) -> bool:
    return not _has_control_chars(value) and ";" not in value and "," not in value


def parse_cookie_header(text: str) -> tuple[dict[str, str], list[str]]:
    """`name=value; name2=value2` (optionally starting with `Cookie:`) → cookies and problems.

    Problems describe positions, never values: they are shown to the user and may be logged.
    """
    text = text.strip()
    if text[:7].lower() == "cookie:":
        text = text[7:]
    cookies: dict[str, str] = {}
    problems: list[str] = []
    for position, raw in enumerate(text.split(";"), start=1):
        part = raw.strip()
        if not part:
            continue
        name, sep, value = part.partition("=")
        name, value = name.strip(), value.strip()
        if not sep or not _valid_cookie_name(name):
            problems.append(f"Part {position} of the cookie header is not name=value.")
            continue
        if not _valid_cookie_value(value):
            problems.append(f"The value of part {position} of the cookie header has a forbidden character.")
            continue
        cookies[name] = value
    return cookies, problems


class CredentialPage:
    """Serve one page, once, that asks the user for one app's secret and stores it."""

    def __init__(
        self,
        app: AppDescriptor,
        auth: PageAuth,
        store: CredentialStore,
        *,
        locale: str | None = None,
        timeout_seconds: float = 600,
    ) -> None:
        if not isinstance(auth, ApiKeyAuth | AppCredentialAuth | CookieAuth):
            raise TypeError(f"a credential page cannot ask for {type(auth).__name__}")
        if not timeout_seconds > 0 or not math.isfinite(timeout_seconds):
            raise ValueError("timeout_seconds must be a positive number")
        self.app = app
        self.auth = auth
        self.store = store
        self.locale = locale
        self.timeout_seconds = timeout_seconds
        self.token = secrets.token_urlsafe(32)
        self._csrf = secrets.token_urlsafe(32)
        self._state: PageState = "new"
        self._port: int | None = None
        self._done: anyio.Event | None = None
        self._credential: Credential | None = None

    # ------------------------------------------------------------------ public API

    @property
    def state(self) -> PageState:
        return self._state

    @property
    def url(self) -> str:
        if self._port is None:
            raise RuntimeError("the credential page is not served yet")
        return f"http://{HOST}:{self._port}{self._path}"

    @property
    def _path(self) -> str:
        return f"/c/{self.token}"

    @asynccontextmanager
    async def serve(self) -> AsyncIterator[str]:
        """Serve the page on 127.0.0.1 (random port) for the life of the context; yields its URL."""
        if self._state != "new":
            raise RuntimeError("a credential page is served only once")
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
            logger.info("credential page for %s open on %s:%d", self.app.id, HOST, self._port)
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

    async def wait(self) -> Credential:
        """The credential the user saved; TimeoutError once `timeout_seconds` have passed."""
        if self._done is None:
            raise RuntimeError("call wait() inside `async with page.serve()`")
        await self._done.wait()
        if self._credential is not None:
            return self._credential
        if self._state == "expired":
            raise TimeoutError(
                f"the user did not enter the credential for {self.app.id} within {self.timeout_seconds:g} s"
            )
        raise CredentialPageClosedError(f"the credential page for {self.app.id} was closed")

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
            logger.debug("credential page for %s stopped", self.app.id)

    async def _stop_when_done(self, server: uvicorn.Server, deadline: float) -> None:
        assert self._done is not None
        with anyio.move_on_after(max(0.0, deadline - anyio.current_time())):
            await self._done.wait()
        if not self._done.is_set() and self._state == "saving":
            with anyio.move_on_after(SAVE_GRACE_SECONDS):
                await self._done.wait()
        if not self._done.is_set():
            self._finish("expired")
            logger.info("credential page for %s timed out", self.app.id)
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
        except _RejectedError as rejected:
            response = self._message(rejected.status, rejected.title, rejected.text)
        await response(scope, receive, send)

    async def _handle(self, request: Request) -> Response:
        expected_host = f"{HOST}:{self._port}"
        if request.headers.get("host") != expected_host:
            logger.warning("credential page: request with a foreign Host header refused")
            raise _RejectedError(400, "Wrong address", f"Open this page at http://{expected_host}/ only.")
        path: str = request.scope["path"]
        if not hmac.compare_digest(path.encode(), self._path.encode()):
            raise _RejectedError(404, "Not found", "There is no page here.")
        if self._state in ("saved", "expired", "closed"):
            raise _RejectedError(
                410, "This page is gone", "It worked once and is closed now. You can close this tab."
            )
        if request.method in ("GET", "HEAD"):
            return self._form(200)
        if request.method != "POST":
            response = self._message(405, "Method not allowed", "Use the form on this page.")
            response.headers["Allow"] = "GET, HEAD, POST"
            return response
        return await self._submit(request)

    async def _submit(self, request: Request) -> Response:
        origin = request.headers.get("origin")
        if origin is not None and origin != f"http://{HOST}:{self._port}":
            logger.warning("credential page: POST from a foreign origin refused")
            raise _RejectedError(403, "Refused", "The form was sent from another site.")
        if request.headers.get("sec-fetch-site", "same-origin") not in ALLOWED_FETCH_SITES:
            logger.warning("credential page: cross-site POST refused")
            raise _RejectedError(403, "Refused", "The form was sent from another site.")
        content_type = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
        if content_type != "application/x-www-form-urlencoded":
            raise _RejectedError(415, "Unsupported form", "Send the form from this page.")
        form = await self._read_form(request)
        if not hmac.compare_digest(form.get(tpl.CSRF_FIELD, "").encode(), self._csrf.encode()):
            logger.warning("credential page: POST without the page's CSRF token refused")
            raise _RejectedError(
                403, "Refused", "The form is stale or was not sent from this page. Reload it."
            )
        if self._state != "open":  # another submit is being saved right now
            raise _RejectedError(409, "Busy", "A credential is being saved. Reload this page in a moment.")

        credential, errors = self._validate(form)
        if credential is None:
            keep = {tpl.APP_ID_FIELD: form.get(tpl.APP_ID_FIELD, "").strip()}
            return self._form(400, errors, keep)

        self._state = "saving"
        try:
            await anyio.to_thread.run_sync(self.store.save, self.app, credential)
        except Exception as exc:
            if self._state == "saving":
                self._state = "open"
            logger.error(
                "credential page: saving the credential for %s failed (%s)", self.app.id, type(exc).__name__
            )
            reason = str(exc) if isinstance(exc, AaiError) else "the keyring refused it"
            error = tpl.FieldError(f"Could not save to the OS keyring: {reason}")
            return self._form(500, [error], {})
        self._credential = credential  # stored, even if the page was closed meanwhile
        self._finish("saved")
        logger.info("credential for %s saved to the keyring", self.app.id)
        return self._message(
            200,
            "Saved. You can close this tab.",
            f"The credential for {self._app_name} is in your OS keyring now. The agent can continue.",
            ok=True,
        )

    async def _read_form(self, request: Request) -> dict[str, str]:
        body = bytearray()
        async for chunk in request.stream():
            body += chunk
            if len(body) > MAX_BODY_BYTES:
                raise _RejectedError(413, "Too much data", "The form is larger than any credential.")
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
            raise _RejectedError(400, "Unreadable form", "Send the form from this page.") from None
        return {name: values[0] for name, values in parsed.items() if values}

    def _validate(self, form: dict[str, str]) -> tuple[Credential | None, list[tpl.FieldError]]:
        base = self.store.new(self.app, _kind(self.auth))
        errors: list[tpl.FieldError] = []
        auth = self.auth
        if isinstance(auth, ApiKeyAuth):
            key = form.get(tpl.API_KEY_FIELD, "").strip()
            if not key:
                errors.append(tpl.FieldError("Enter the API key.", tpl.API_KEY_FIELD))
            elif _has_control_chars(key):
                errors.append(
                    tpl.FieldError(
                        "The API key must be one line without control characters.", tpl.API_KEY_FIELD
                    )
                )
            return (None if errors else base.model_copy(update={"api_key": key})), errors
        if isinstance(auth, AppCredentialAuth):
            app_id = form.get(tpl.APP_ID_FIELD, "").strip()
            secret = form.get(tpl.APP_SECRET_FIELD, "").strip()
            for value, field_id, label in (
                (app_id, tpl.APP_ID_FIELD, "App ID"),
                (secret, tpl.APP_SECRET_FIELD, "App Secret"),
            ):
                if not value:
                    errors.append(tpl.FieldError(f"Enter the {label}.", field_id))
                elif _has_control_chars(value):
                    errors.append(tpl.FieldError(f"The {label} must be one line.", field_id))
            if errors:
                return None, errors
            return base.model_copy(update={"client_id": app_id, "client_secret": secret}), errors
        return self._validate_cookies(auth, form, base)

    def _validate_cookies(
        self, auth: CookieAuth, form: dict[str, str], base: Credential
    ) -> tuple[Credential | None, list[tpl.FieldError]]:
        errors: list[tpl.FieldError] = []
        cookies, problems = parse_cookie_header(form.get(tpl.COOKIE_HEADER_FIELD, ""))
        errors += [tpl.FieldError(p, tpl.COOKIE_HEADER_FIELD) for p in problems]
        for index, name in enumerate(auth.required_cookies):
            field_id = tpl.cookie_field_id(index)
            value = form.get(field_id, "").strip()
            if not value:
                continue
            if not _valid_cookie_value(value):
                errors.append(
                    tpl.FieldError(f"The value of cookie {name} has a forbidden character.", field_id)
                )
                continue
            cookies[name] = value  # a field filled in one by one wins over the pasted header
        for index, name in enumerate(auth.required_cookies):
            if not cookies.get(name) and not any(e.field == tpl.cookie_field_id(index) for e in errors):
                errors.append(tpl.FieldError(f"The cookie {name} is missing.", tpl.cookie_field_id(index)))
        if errors:
            return None, errors
        return base.model_copy(update={"cookies": cookies}), errors

    # ------------------------------------------------------------------ rendering

    @property
    def _app_name(self) -> str:
        return self.app.names.lookup(self.locale)

    @property
    def _lang(self) -> str:
        return normalize_tag(self.locale or self.app.names.default_lang or "en")

    def _form(
        self, status: int, errors: list[tpl.FieldError] | None = None, keep: dict[str, str] | None = None
    ) -> Response:
        source = self.app.source
        view = tpl.FormView(
            app_name=self._app_name,
            app_id=self.app.id,
            source=tpl.source_text(source.kind, source.location, source.origin),
            lang=self._lang,
            action=self._path,
            csrf=self._csrf,
            auth=self.auth,
            errors=errors or [],
            keep=keep or {},
        )
        return HTMLResponse(tpl.render_form(view), status_code=status, headers=SECURITY_HEADERS)

    def _message(self, status: int, title: str, text: str, *, ok: bool = False) -> Response:
        html = tpl.render_message(title, text, self._lang, ok=ok)
        return HTMLResponse(html, status_code=status, headers=SECURITY_HEADERS)
