"""What the MCP sign-in tests share: the servers as fixtures' building blocks, an `mcp` app for a
server URL, a user who consents over plain HTTP, and an MCP client session through the
gateway's `McpOAuth` (the httpx2 client the SDK's Streamable HTTP transport runs on)."""

from __future__ import annotations

import http.client
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import urlencode, urljoin, urlsplit

import anyio
import httpx2
import mcp_types as types
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from aai_gateway.auth.credentials import Credential
from aai_gateway.auth.mcp_auth import McpOAuth
from aai_gateway.auth.mcp_login import login_mcp
from aai_gateway.descriptor import AppDescriptor, Source, load_text

APP_FILE = "/tmp/aai-mcp-auth-tests/aai.json"


def mcp_app(url: str, *, app_id: str = "protected", headers: dict[str, Any] | None = None) -> AppDescriptor:
    execution: dict[str, Any] = {"type": "mcp", "url": url}
    if headers:
        execution["headers"] = headers
    document = {
        "schemaVersion": "1.0",
        "version": "1.0.0",
        "app": {"id": app_id, "name": {"en": "Protected"}, "defaultLang": "en", "description": "A server"},
        "execution": execution,
    }
    result = load_text(json.dumps(document), Source(kind="file", location=APP_FILE), "linux")
    assert result.descriptor is not None, [p.render() for p in result.problems]
    return result.descriptor


async def consent(authorization_url: str, decision: str = "allow") -> int:
    """The user, without a browser: the authorization request leads to the consent page, a button
    is pressed, the redirect goes back to the gateway's loopback callback. Its status is returned.
    Plain `http.client` in a worker thread: httpx would log the callback URL, code and all, and
    the log tests must only see what the gateway logs."""
    return await anyio.to_thread.run_sync(_consent, authorization_url, decision)


def _consent(url: str, decision: str) -> int:
    status, location = _fetch(url)
    while status in (302, 303, 307) and location:
        url = urljoin(url, location)
        status, location = _fetch(url)
    assert status == 200, status
    status, location = _fetch(url, urlencode({"decision": decision}))
    assert status == 302 and location, status
    return _fetch(location)[0]


def _fetch(url: str, body: str | None = None) -> tuple[int, str | None]:
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=15)
    try:
        target = parts.path + (f"?{parts.query}" if parts.query else "")
        headers = {"Content-Type": "application/x-www-form-urlencoded"} if body is not None else {}
        connection.request("GET" if body is None else "POST", target, body=body, headers=headers)
        response = connection.getresponse()
        response.read()
        return response.status, response.getheader("Location")
    finally:
        connection.close()


async def sign_in(
    app: AppDescriptor, *, decision: str = "allow", client_id: str | None = None, **options: Any
) -> Credential:
    """`login_mcp` with the user answering the consent page over HTTP (`consent`, pressing
    `decision`) as soon as the URL is shown; what `login_mcp` raises is raised as it is."""
    outcome: list[Credential | Exception] = []
    async with anyio.create_task_group() as tg:

        def open_url(url: str) -> None:
            tg.start_soon(consent, url, decision)

        try:
            outcome.append(
                await login_mcp(app, existing=None, client_id=client_id, open_url=open_url, **options)
            )
        except Exception as exc:  # raised below, not wrapped in the task group's ExceptionGroup
            outcome.append(exc)
    if isinstance(outcome[0], Exception):
        raise outcome[0]
    return outcome[0]


@asynccontextmanager
async def mcp_session(url: str, auth: McpOAuth | None) -> AsyncIterator[ClientSession]:
    """An MCP session (2025-11-25 handshake) over Streamable HTTP, on an httpx2 client with `auth`."""
    async with (
        httpx2.AsyncClient(auth=auth, follow_redirects=False, timeout=15) as client,
        streamable_http_client(url, http_client=client) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


async def whoami(session: ClientSession) -> dict[str, Any]:
    result = await session.call_tool("whoami", {})
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    answer: dict[str, Any] = json.loads(block.text)
    return answer
