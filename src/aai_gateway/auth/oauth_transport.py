"""The OAuth client's requests, sent through the gateway's own HTTP clients.

authlib (the OAuth client, oauth_client.py) and the MCP SDK's discovery helpers build httpx2
requests: both use httpx2 when it is installed, and the SDK brings it. The gateway's network
rules are built on httpx (discovery/web_transport.py, token_client.py). `BridgeTransport` is the
httpx2 transport of every client the auth layer gives authlib or the SDK helpers: it passes each
request to the httpx client that `route` picks for its URL (guarded by the web network rules, or
the plain one for an endpoint on this machine), so one implementation of the rules covers API
calls, token endpoints, metadata and registration. Besides, it reads answers as
`token_client.answer_of` does: at most `MAX_ANSWER_BYTES` (`OversizedAnswerError`), all of it
within `TOKEN_REQUEST_TIMEOUT_SECONDS`.

Errors pass through as the httpx client raised them (`NetworkRuleError`, `httpx.TransportError`);
`reaching()` turns them, and `OversizedAnswerError`, into the AAI errors that name the endpoint.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Final

import httpx
import httpx2

from ..discovery.web import NetworkRuleError
from .token_client import (
    MAX_ANSWER_BYTES,
    TOKEN_REQUEST_TIMEOUT_SECONDS,
    OversizedAnswerError,
    answer_of,
    endpoint_refused,
    oversized_answer,
    unreachable,
)

Route = Callable[[str], httpx.AsyncClient]
"""An endpoint's URL → the client allowed to reach it."""

HEADERS_ONLY: Final = "aai_headers_only"
"""A request extension: its answer's status and headers, its body left unread (`answer_of`)."""
# Set by the httpx client that sends the request, not copied from the httpx2 one: what it can
# decode (Accept-Encoding), its own User-Agent, and the framing of the body it sends.
_NOT_FORWARDED: Final = frozenset(
    {"host", "accept-encoding", "connection", "content-length", "transfer-encoding", "user-agent"}
)


class BridgeTransport(httpx2.AsyncBaseTransport):
    """An httpx2 transport that sends through the httpx client `route` picks for each URL. The
    httpx clients belong to whoever made `route`: closing this transport leaves them open."""

    def __init__(self, route: Route, *, max_answer_bytes: int = MAX_ANSWER_BYTES) -> None:
        self._route = route
        self._max_answer_bytes = max_answer_bytes

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        url = str(request.url)
        client = self._route(url)
        outgoing = client.build_request(
            request.method,
            url,
            headers=[(k, v) for k, v in request.headers.multi_items() if k.lower() not in _NOT_FORWARDED],
            content=await request.aread(),
            timeout=_timeout(request),
        )
        headers_only = bool(request.extensions.get(HEADERS_ONLY))
        answer = await answer_of(client, outgoing, limit=self._max_answer_bytes, headers_only=headers_only)
        return httpx2.Response(
            answer.status_code, headers=answer.headers.multi_items(), content=answer.content, request=request
        )


def _timeout(request: httpx2.Request) -> httpx.Timeout:
    given = request.extensions.get("timeout")
    if isinstance(given, dict):
        return httpx.Timeout(
            TOKEN_REQUEST_TIMEOUT_SECONDS,
            **{k: given[k] for k in ("connect", "read", "write", "pool") if k in given},
        )
    return httpx.Timeout(TOKEN_REQUEST_TIMEOUT_SECONDS)


def oauth_http_client(route: Route) -> httpx2.AsyncClient:
    """An httpx2 client for the SDK's discovery helpers: every request through `route`, no
    redirects followed, no cookies or environment settings."""
    return httpx2.AsyncClient(
        transport=BridgeTransport(route),
        trust_env=False,
        follow_redirects=False,
        timeout=TOKEN_REQUEST_TIMEOUT_SECONDS,
    )


@contextmanager
def reaching(app_id: str, what: str, url: str) -> Iterator[None]:
    """Requests to an authorization server's `what` ("token endpoint", …) at `url`: refused by the
    network rules or answering too much → AUTH_INVALID naming it; unreachable → SERVICE_UNAVAILABLE."""
    try:
        yield
    except NetworkRuleError as exc:
        raise endpoint_refused(app_id, what, url, exc) from None
    except OversizedAnswerError as exc:
        raise oversized_answer(app_id, what, exc) from None
    except (httpx.TransportError, httpx2.TransportError) as exc:
        raise unreachable(app_id, what, url, exc) from exc
