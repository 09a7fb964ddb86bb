"""Interactive OAuth sign-in: authorization code + PKCE (S256) with a loopback redirect.

`login()` is what `aai-gateway auth login <app>` runs:

1. listen on `http://127.0.0.1:<random port>/callback` (RFC 8252 §7.3 loopback redirect);
2. without a client id, register one (RFC 8414 metadata → RFC 7591 dynamic registration);
3. open the authorization URL (`response_type=code`, `client_id`, `redirect_uri`, `scope`,
   a random `state`, `code_challenge` + `code_challenge_method=S256`, and `aaiTools`: the
   app's tool names, comma-separated, so a consent page can show what the gateway will call);
4. wait for the browser to come back with `code` and the same `state`; a callback with another
   state gets an error page and the sign-in goes on waiting (a forged or stale link cannot end
   it); an `error` from the authorization server ends it;
5. exchange the code (form POST: grant_type, code, redirect_uri, code_verifier, client_id,
   client_secret when there is one) and return the `Credential` (the caller stores it).

Nothing is logged but the step reached; the code, verifier, tokens and secret never are. For a
web app every request (metadata, registration, token) obeys the web network rules
(token_client.py); an endpoint they refuse is AUTH_INVALID naming it, and nothing is sent to it.
"""

from __future__ import annotations

import base64
import hashlib
import html
import ipaddress
import logging
import secrets
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import parse_qs, urlsplit

import anyio
import httpx
from anyio.abc import SocketAttribute, SocketStream

from ..descriptor import AppDescriptor
from ..descriptor.http_headers import header_value_problem
from ..descriptor.model import OAuth2Auth
from ..discovery.web import NetworkRuleError, WebFetchPolicy
from ..discovery.web_transport import public_url
from ..errors import AuthRequiredError, ServiceUnavailableError
from .credentials import Credential
from .flows import TOKEN_REQUEST_TIMEOUT_SECONDS, AuthContext
from .token_answers import answer_document, endpoint_message, parse_token_response, scrub
from .token_client import endpoint_refused, is_web, new_token_client

logger = logging.getLogger(__name__)

CALLBACK_PATH: Final = "/callback"
DEFAULT_TIMEOUT_SECONDS: Final = 300.0
MAX_REQUEST_HEAD_BYTES: Final = 16 * 1024
CONNECTION_READ_SECONDS: Final = 10.0
METADATA_PATHS: Final = ("/.well-known/oauth-authorization-server", "/.well-known/openid-configuration")
CLIENT_NAME: Final = "AAI Gateway"

OpenUrl = Callable[[str], None]


@dataclass(frozen=True)
class PkcePair:
    verifier: str
    challenge: str

    @classmethod
    def create(cls) -> PkcePair:
        verifier = secrets.token_urlsafe(64)  # 86 characters of [A-Za-z0-9_-] (RFC 7636: 43-128)
        return cls(verifier, s256_challenge(verifier))


def s256_challenge(verifier: str) -> str:
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def authorization_url(
    settings: OAuth2Auth,
    *,
    client_id: str,
    redirect_uri: str,
    state: str,
    code_challenge: str,
    tool_names: Iterable[str] = (),
) -> str:
    params: dict[str, str] = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": redirect_uri,
        "state": state,
        "code_challenge": code_challenge,
        "code_challenge_method": "S256",
    }
    if settings.scopes:
        params["scope"] = " ".join(settings.scopes)
    tools = ",".join(tool_names)
    if tools:
        params["aaiTools"] = tools
    return str(httpx.URL(settings.authorization_endpoint).copy_merge_params(params))


async def login(
    app: AppDescriptor,
    settings: OAuth2Auth,
    *,
    client_id: str | None,
    client_secret: str | None = None,
    tool_names: Sequence[str] = (),
    open_url: OpenUrl,
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
    registration: bool = True,
    http_client: httpx.AsyncClient | None = None,
    web_policy: WebFetchPolicy | None = None,
    locale: str | None = None,
    port: int = 0,
) -> Credential:
    """Sign in to `app` in the user's browser and return its oauth2 credential (not stored).

    `open_url` shows the authorization URL (opens a browser, prints it); it must not block for
    long. `port` fixes the loopback port for servers that cannot accept any (0: a free one).
    `http_client` talks to the authorization server; without one, a client made for `app` under
    `web_policy` (token_client.py). Raises `AuthRequiredError` when the sign-in is refused,
    times out or cannot start.
    """
    context = AuthContext.for_app(app, settings, locale)
    owns_client = http_client is None
    client = http_client or new_token_client(web_policy or WebFetchPolicy(), web=is_web(app))
    try:
        listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=port)
        try:
            bound_port = listener.extra(SocketAttribute.local_port)  # noqa: S610 (anyio, not Django)
            redirect_uri = f"http://127.0.0.1:{bound_port}{CALLBACK_PATH}"
            if not client_id:
                if not registration:
                    raise _needs_client_id(context, "dynamic client registration is turned off")
                client_id, client_secret = await register_client(
                    client, settings, redirect_uri=redirect_uri, context=context
                )
            pkce = PkcePair.create()
            state = secrets.token_urlsafe(32)
            url = authorization_url(
                settings,
                client_id=client_id,
                redirect_uri=redirect_uri,
                state=state,
                code_challenge=pkce.challenge,
                tool_names=tool_names,
            )
            callback = _Callback(state, context.app_name)
            # The socket listens already: a browser that answers quickly waits in the backlog.
            open_url(url)
            logger.info(
                "waiting for the browser to return from %s", _host_of(settings.authorization_endpoint)
            )
            async with anyio.create_task_group() as tg:
                tg.start_soon(listener.serve, callback.handle)
                with anyio.move_on_after(timeout_seconds):
                    await callback.done.wait()
                tg.cancel_scope.cancel()
        finally:
            await listener.aclose()
        if callback.error is not None:
            raise context.error(callback.error)
        if callback.code is None:
            raise context.error(f"the browser did not come back within {timeout_seconds:g} s")
        tokens_started = time.time()
        form = {
            "grant_type": "authorization_code",
            "code": callback.code,
            "redirect_uri": redirect_uri,
            "code_verifier": pkce.verifier,
            "client_id": client_id,
        }
        if client_secret:
            form["client_secret"] = client_secret
        response = await _post(client, settings.token_endpoint, context, "token endpoint", data=form)
        sent = (client_secret, callback.code, pkce.verifier)
        if response.status_code >= 500:
            raise ServiceUnavailableError(
                app.id,
                f"its token endpoint answered {endpoint_message(response, sent)}",
                host=_host_of(settings.token_endpoint),
            )
        try:
            tokens = parse_token_response(response, tokens_started, sent)
        except ValueError as exc:
            raise context.error(
                f"the authorization code was not accepted ({scrub(str(exc), sent)})",
                endpoint=public_url(settings.token_endpoint),
            ) from None
        logger.info("signed in to %s", app.id)
        return Credential(
            kind="oauth2",
            app_id=app.id,
            binding=str(app.binding),
            client_id=client_id,
            client_secret=client_secret,
            tokens=tokens,
        )
    finally:
        if owns_client:
            await client.aclose()


# --------------------------------------------------------------------------- registration


async def register_client(
    client: httpx.AsyncClient, settings: OAuth2Auth, *, redirect_uri: str, context: AuthContext
) -> tuple[str, str | None]:
    """RFC 7591: a public client (`token_endpoint_auth_method: none`) for this redirect URI,
    at the `registration_endpoint` of the authorization server's RFC 8414 metadata."""
    metadata = await authorization_server_metadata(client, settings.authorization_endpoint)
    endpoint = metadata.get("registration_endpoint") if metadata else None
    if not isinstance(endpoint, str) or not endpoint:
        raise _needs_client_id(context, "the authorization server does not offer dynamic client registration")
    if not _is_secure_or_loopback(endpoint):
        raise _needs_client_id(context, f"its registration endpoint {endpoint} is not https")
    body: dict[str, Any] = {
        "client_name": CLIENT_NAME,
        "redirect_uris": [redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
    }
    if settings.scopes:
        body["scope"] = " ".join(settings.scopes)
    response = await _post(client, endpoint, context, "registration endpoint", json=body)
    answer = answer_document(response) or {}
    client_id = answer.get("client_id")
    if not response.is_success or not _usable_text(client_id):
        raise _needs_client_id(
            context, f"dynamic client registration failed ({endpoint_message(response, ())})"
        )
    assert isinstance(client_id, str)
    secret = answer.get("client_secret")
    method = answer.get("token_endpoint_auth_method")
    if method == "none" or not _usable_text(secret):
        secret = None
    logger.info("registered a client at %s", _host_of(endpoint))
    return client_id, secret


async def authorization_server_metadata(
    client: httpx.AsyncClient, authorization_endpoint: str
) -> dict[str, Any] | None:
    """RFC 8414 metadata from the authorization endpoint's origin, or None."""
    origin = httpx.URL(authorization_endpoint).copy_with(path="/", query=None, fragment=None)
    for path in METADATA_PATHS:
        url = origin.copy_with(path=path)
        try:
            response = await client.get(url, timeout=TOKEN_REQUEST_TIMEOUT_SECONDS)
        except (httpx.TransportError, NetworkRuleError):
            return None
        if response.status_code != 200:
            continue
        document = answer_document(response)
        if document is not None:
            return document
    return None


def _needs_client_id(context: AuthContext, why: str) -> AuthRequiredError:
    return context.error(
        f"a client id is needed ({why}); register the gateway as an OAuth client with redirect URI "
        f"http://127.0.0.1/{CALLBACK_PATH.lstrip('/')} (any port)",
        command=f"{context.command} --client-id <client id>",
    )


# --------------------------------------------------------------------------- the loopback callback


class _Callback:
    """Answers the browser on the loopback listener and keeps the first valid outcome."""

    def __init__(self, state: str, app_name: str) -> None:
        self._state = state
        self._app_name = app_name
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
            error = scrub(query["error"], ())
            description = scrub(query.get("error_description", ""), ())
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


# --------------------------------------------------------------------------- helpers


async def _post(
    client: httpx.AsyncClient, url: str, context: AuthContext, what: str, **kwargs: Any
) -> httpx.Response:
    try:
        return await client.post(
            url, timeout=TOKEN_REQUEST_TIMEOUT_SECONDS, headers={"Accept": "application/json"}, **kwargs
        )
    except NetworkRuleError as exc:
        raise endpoint_refused(context.app_id, what, url, exc) from None
    except httpx.TransportError as exc:
        host = _host_of(url)
        raise ServiceUnavailableError(
            context.app_id, f"{host} could not be reached ({type(exc).__name__})", host=host
        ) from exc


def _usable_text(value: Any) -> bool:
    """A non-empty string that can be stored and sent (a form body, a header): no lone
    surrogate, no control character."""
    return isinstance(value, str) and bool(value) and header_value_problem(value) is None


def _host_of(url: str) -> str:
    parsed = httpx.URL(url)
    return f"{parsed.host}:{parsed.port}" if parsed.port else parsed.host


def _is_secure_or_loopback(url: str) -> bool:
    parsed = httpx.URL(url)
    if parsed.scheme == "https":
        return True
    if parsed.scheme != "http":
        return False
    if parsed.host == "localhost":
        return True
    try:
        return ipaddress.ip_address(parsed.host).is_loopback
    except ValueError:
        return False
