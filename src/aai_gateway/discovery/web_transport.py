"""The web network rules under every request the gateway makes on behalf of a web app.

A web app (a descriptor fetched by `web_discover`) is reached under the same rules as its
descriptor was (web.py, web_fetch.py): its API calls, every redirect hop, and its token endpoints
(OAuth token and refresh, app-credential exchange, authorization-server metadata and client
registration) all go through a `GuardedTransport`:

- https only: a request for any other scheme is refused before anything is sent
  (`InsecureUrlError`);
- every connection goes through `GuardedBackend`: the host is resolved once, a loopback, private,
  link-local (…) address is refused unless `WebFetchPolicy.allow_private`, the connection goes to
  the checked address and the connected peer is checked again (`RefusedAddressError`). The check
  happens when connecting, so a cached app whose name now resolves to a private address is
  refused as well as a redirect to one;
- certificates are checked against the usual CAs plus `WebFetchPolicy.ca_file`, never against
  `SSL_CERT_FILE` or other environment settings.

Both errors derive from `NetworkRuleError` and pass through httpx unchanged (httpx maps only
httpcore's own exceptions), so callers catch them and say what they were doing. Apps read from
this machine do not use this transport: a local app may well listen on http://127.0.0.1.
"""

from __future__ import annotations

import ssl
from typing import Final

import httpcore
import httpx

from .web import (
    ALLOW_PRIVATE_HINT,
    GuardedBackend,
    NetworkRuleError,
    Resolver,
    WebFetchPolicy,
    ssl_context,
    system_resolver,
)

WEB_RULES: Final = (
    "a web app's requests go over https to public addresses only, on every redirect hop and to "
    f"its token endpoints (private addresses only with {ALLOW_PRIVATE_HINT})"
)
"""The rule, in words, for the errors that enforce it."""


class InsecureUrlError(NetworkRuleError):
    """A request for a web app to a URL that is not https."""

    def __init__(self, url: httpx.URL) -> None:
        super().__init__(f"{public_url(url)} is not an https URL")
        self.url = public_url(url)


class GuardedTransport(httpx.AsyncHTTPTransport):
    """httpx's own transport, with its connection pool built on `GuardedBackend` and a refusal of
    every URL that is not https."""

    def __init__(
        self,
        policy: WebFetchPolicy,
        *,
        resolver: Resolver | None = None,
        network_backend: httpcore.AsyncNetworkBackend | None = None,
        limits: httpx.Limits = httpx.Limits(max_connections=100, max_keepalive_connections=20),  # noqa: B008
    ) -> None:
        context = ssl_context(policy)
        super().__init__(verify=context, trust_env=False, limits=limits)
        self._pool = connection_pool(
            context,
            limits,
            GuardedBackend(policy, resolver or system_resolver, network_backend or httpcore.AnyIOBackend()),
        )

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.url.scheme != "https":
            raise InsecureUrlError(request.url)
        return await super().handle_async_request(request)


def connection_pool(
    context: ssl.SSLContext, limits: httpx.Limits, network_backend: httpcore.AsyncNetworkBackend
) -> httpcore.AsyncConnectionPool:
    """The pool httpx would build for a transport (HTTP/1.1, no retries), its connections made by
    `network_backend`. httpx offers no way to choose that backend, so a transport's pool is
    replaced by this one (httpx keeps it in `_pool`; tests/test_private_apis.py checks it)."""
    return httpcore.AsyncConnectionPool(
        ssl_context=context,
        max_connections=limits.max_connections,
        max_keepalive_connections=limits.max_keepalive_connections,
        keepalive_expiry=limits.keepalive_expiry,
        http1=True,
        http2=False,
        retries=0,
        network_backend=network_backend,
    )


def public_url(url: httpx.URL | str) -> str:
    """A URL fit for errors and logs: no user info, query string or fragment."""
    parsed = httpx.URL(url)
    return str(parsed.copy_with(query=None, fragment=None, username=None, password=None))
