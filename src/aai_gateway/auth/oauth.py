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
Registration is in oauth_registration.py, the loopback callback in oauth_callback.py.
"""

from __future__ import annotations

import base64
import hashlib
import logging
import secrets
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Final

import anyio
import httpx
from anyio.abc import SocketAttribute

from ..descriptor import AppDescriptor
from ..descriptor.model import OAuth2Auth
from ..discovery.web import WebFetchPolicy
from ..discovery.web_transport import public_url
from ..errors import ServiceUnavailableError
from .auth_context import AuthContext
from .credentials import Credential
from .oauth_callback import CALLBACK_PATH, LoopbackCallback
from .oauth_registration import needs_client_id, register_client
from .token_answers import endpoint_message, parse_token_response, scrub
from .token_client import host_of, is_web, new_token_client, post_to_endpoint

logger = logging.getLogger(__name__)

DEFAULT_TIMEOUT_SECONDS: Final = 300.0

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
                    raise needs_client_id(context, "dynamic client registration is turned off")
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
            callback = LoopbackCallback(state, context.app_name)
            # The socket listens already: a browser that answers quickly waits in the backlog.
            open_url(url)
            logger.info("waiting for the browser to return from %s", host_of(settings.authorization_endpoint))
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
        response = await post_to_endpoint(
            client, settings.token_endpoint, app_id=context.app_id, what="token endpoint", data=form
        )
        sent = (client_secret, callback.code, pkce.verifier)
        if response.status_code >= 500:
            raise ServiceUnavailableError(
                app.id,
                f"its token endpoint answered {endpoint_message(response, sent)}",
                host=host_of(settings.token_endpoint),
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
