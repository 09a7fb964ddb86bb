"""How the gateway reaches a Streamable HTTP MCP server: the SDK's transport on an httpx2 client
of the gateway's making (the SDK's transport takes an httpx2 client). Imported only when a session
starts, like everything that imports the MCP SDK."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from http.cookiejar import CookieJar, DefaultCookiePolicy
from typing import Any, Final

import httpx
import httpx2
from mcp.client.streamable_http import streamable_http_client

from .mcp_launch import HttpLaunch

HTTP_TIMEOUT_SECONDS: Final = 30.0
"""Connecting, writing, waiting for a pooled connection; an SSE stream may be read for longer."""
SSE_READ_SECONDS: Final = 300.0


@asynccontextmanager
async def http_transport(
    launch: HttpLaunch, *, ca_file: str | None, max_event_bytes: int, auth: Any = None
) -> AsyncIterator[Any]:
    """The SDK's Streamable HTTP transport on an httpx2 client (the one its transport takes) of
    the gateway's making: the headers, no cookies kept, no proxy or CA settings read from the
    environment, redirects only as the SDK follows them (within the server's origin)."""
    verify = httpx.create_ssl_context(trust_env=False)  # certifi's CAs; no SSL_CERT_FILE read
    if ca_file:
        verify.load_verify_locations(cafile=ca_file)
    client = httpx2.AsyncClient(
        auth=auth,  # the server's sign-in (auth.mcp_auth.McpOAuth), when it has one
        headers=dict(launch.headers),
        verify=verify,
        trust_env=False,
        follow_redirects=False,
        cookies=CookieJar(policy=DefaultCookiePolicy(allowed_domains=[])),
        timeout=httpx2.Timeout(HTTP_TIMEOUT_SECONDS, read=SSE_READ_SECONDS),
    )
    async with (
        client,
        streamable_http_client(launch.url, http_client=client, max_sse_event_size=max_event_bytes) as streams,
    ):
        yield streams
