"""The HTTP clients the auth layer reaches token endpoints with.

Token requests carry the most valuable secrets the gateway holds (App Secrets, refresh tokens,
authorization codes), so for a web app they obey the web network rules like its API calls
(discovery/web_transport.py): https only, public addresses only unless the policy allows private
ones, checked when connecting. Apps from this machine may use any http(s) token endpoint (a
local test server on http://127.0.0.1). Both clients trust the policy's CA file on top of the
usual CAs, read no proxy or certificate settings from the environment and follow no redirects.
"""

from __future__ import annotations

from typing import Any, Final

import anyio
import httpcore
import httpx
import httpx2

from .. import __version__
from ..descriptor import AppDescriptor
from ..discovery.web import NetworkRuleError, Resolver, WebFetchPolicy, ssl_context
from ..discovery.web_transport import WEB_RULES, GuardedTransport, public_url
from ..errors import AaiError, AuthInvalidError, ServiceUnavailableError
from ..executors.http_decoding import decoded_chunks

TOKEN_REQUEST_TIMEOUT_SECONDS: Final = 30.0
"""Each request to an authorization server, its whole answer included (`answer_of`)."""
MAX_ANSWER_BYTES: Final = 1024 * 1024
"""Metadata, registration and token answers are small: a server that sends more is not read."""
_NOT_RETURNED: Final = frozenset({"content-encoding", "content-length", "transfer-encoding"})


class OversizedAnswerError(Exception):
    """An authorization server answered more than `MAX_ANSWER_BYTES`."""

    def __init__(self, url: str, limit: int) -> None:
        super().__init__(f"{public_url(url)} answered more than {limit} bytes")
        self.url = public_url(url)
        self.limit = limit


async def answer_of(
    client: httpx.AsyncClient,
    request: httpx.Request,
    *,
    limit: int = MAX_ANSWER_BYTES,
    headers_only: bool = False,
) -> httpx.Response:
    """`request` sent by `client` and its answer, read and decoded: at most `limit` bytes
    (OversizedAnswerError), all of it within TOKEN_REQUEST_TIMEOUT_SECONDS (httpx.ReadTimeout).
    Each read's timeout alone would let a server that drips its answer a byte at a time hold a
    sign-in, a refresh or the call waiting on it for hours. A body that does not decode as its
    Content-Encoding says is httpx.RemoteProtocolError: a transport error, which every caller
    handles (httpx.DecodingError is not one, and went up as a traceback). `headers_only`: the
    status and headers, the body left unread (an MCP server may answer a probe with an event
    stream that stays open)."""
    try:
        with anyio.fail_after(TOKEN_REQUEST_TIMEOUT_SECONDS):
            response = await client.send(request, stream=True, follow_redirects=False)
            try:
                body = bytearray()
                if not headers_only:
                    async for chunk in decoded_chunks(response):  # bounded pieces, however compressed
                        body += chunk
                        if len(body) > limit:
                            raise OversizedAnswerError(str(request.url), limit)
            finally:
                await response.aclose()
    except TimeoutError:
        raise httpx.ReadTimeout(
            f"no whole answer within {TOKEN_REQUEST_TIMEOUT_SECONDS:g} s", request=request
        ) from None
    except httpx.DecodingError as exc:
        raise httpx.RemoteProtocolError(f"the answer does not decode ({exc})", request=request) from None
    headers = [(k, v) for k, v in response.headers.multi_items() if k.lower() not in _NOT_RETURNED]
    return httpx.Response(response.status_code, headers=headers, content=bytes(body), request=request)


def oversized_answer(app_id: str, what: str, exc: OversizedAnswerError) -> AaiError:
    return AuthInvalidError(
        app_id,
        f"its {what} {exc.url} answered more than {exc.limit} bytes; an authorization server's "
        "answers are small, so it was not read",
        endpoint=exc.url,
    )


def unreachable(app_id: str, what: str, url: str, exc: Exception) -> AaiError:
    """SERVICE_UNAVAILABLE naming the endpoint's host: it could not be reached, did not answer in
    time (a timeout) or not in valid HTTP."""
    host = host_of(url)
    if isinstance(exc, httpx.TimeoutException | httpx2.TimeoutException):
        reason = f"did not answer in full within {TOKEN_REQUEST_TIMEOUT_SECONDS:g} s"
    elif isinstance(exc, httpx.RemoteProtocolError | httpx2.RemoteProtocolError):
        reason = f"did not answer in valid HTTP ({type(exc).__name__})"
    else:
        reason = f"could not be reached ({type(exc).__name__})"
    return ServiceUnavailableError(app_id, f"its {what} {host} {reason}", host=host)


def new_token_client(
    policy: WebFetchPolicy,
    *,
    web: bool,
    resolver: Resolver | None = None,
    network_backend: httpcore.AsyncNetworkBackend | None = None,
) -> httpx.AsyncClient:
    """A client for the token endpoints of web apps (`web`) or of apps from this machine.
    `resolver` and `network_backend` replace name resolution and connections (tests)."""
    transport = GuardedTransport(policy, resolver=resolver, network_backend=network_backend) if web else None
    return httpx.AsyncClient(
        transport=transport,
        verify=ssl_context(policy),
        trust_env=False,
        follow_redirects=False,
        headers={"User-Agent": f"aai-gateway/{__version__}"},
    )


def is_web(app: AppDescriptor) -> bool:
    return app.source.kind == "web"


def endpoint_refused(app_id: str, what: str, url: str, exc: NetworkRuleError) -> AaiError:
    """AUTH_INVALID naming the endpoint and the rule: the descriptor's auth settings cannot be
    used as they are, and signing in again would not change that."""
    return AuthInvalidError(
        app_id,
        f"its {what} {public_url(url)} was refused ({exc}); {WEB_RULES}. Nothing was sent to it, "
        "no credential included",
        endpoint=public_url(url),
        reason=str(exc),
        rule=WEB_RULES,
    )


async def post_to_endpoint(
    client: httpx.AsyncClient, url: str, *, app_id: str, what: str, **kwargs: Any
) -> httpx.Response:
    """POST to an endpoint of the authorization server (`what`: "token endpoint"…), asking for
    JSON, its answer read as `answer_of` reads. Refused by the web network rules or answering too
    much: AUTH_INVALID; unreachable or too slow: SERVICE_UNAVAILABLE."""
    try:
        request = client.build_request(
            "POST",
            url,
            timeout=TOKEN_REQUEST_TIMEOUT_SECONDS,
            headers={"Accept": "application/json"},
            **kwargs,
        )
        return await answer_of(client, request)
    except NetworkRuleError as exc:
        raise endpoint_refused(app_id, what, url, exc) from None
    except OversizedAnswerError as exc:
        raise oversized_answer(app_id, what, exc) from None
    except httpx.TransportError as exc:
        raise unreachable(app_id, what, url, exc) from exc


def host_of(url: str) -> str:
    """`host` or `host:port` of a URL, for messages."""
    parsed = httpx.URL(url)
    return f"{parsed.host}:{parsed.port}" if parsed.port else parsed.host
