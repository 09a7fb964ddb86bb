"""A minimal MCP server (the SDK's low-level Server) whose one tool POSTs its arguments to a URL.

The call-overhead benchmark's baselines: what any MCP server pays for the same work, so the
gateway's own cost can be told apart from the cost of MCP over stdio. It makes the HTTP call
with httpx (as most servers would), or with `--raw`, with `RawHttpClient`: HTTP/1.1 written by
hand on asyncio streams, the fastest honest way to make the same request from a server.

Run: python bench/plain_mcp_server.py URL [--raw]
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any
from urllib.parse import urlsplit

import anyio
import httpx
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

Connection = tuple[asyncio.StreamReader, asyncio.StreamWriter]


class RawHttpClient:
    """JSON POSTs to one URL over kept-alive connections (one per request in flight), written
    and read by hand: no pool bookkeeping, no header objects, no timeouts. It reads exactly
    what the benchmark's endpoint answers (a status line, headers with Content-Length, a body)
    and reconnects once when the server has closed an idle connection."""

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        if parts.scheme != "http" or parts.hostname is None:
            raise ValueError(f"RawHttpClient speaks plain http to one host, not {url}")
        self._host, self._port = parts.hostname, parts.port or 80
        self._head = (
            f"POST {parts.path or '/'} HTTP/1.1\r\nHost: {parts.netloc}\r\n"
            "Content-Type: application/json\r\nContent-Length: "
        ).encode("ascii")
        self._idle: list[Connection] = []

    async def post_json(self, value: Any) -> Any:
        body = json.dumps(value, separators=(",", ":")).encode("utf-8")
        request = self._head + str(len(body)).encode("ascii") + b"\r\n\r\n" + body
        reused = bool(self._idle)
        connection = self._idle.pop() if reused else await self._connect()
        try:
            answer = await self._exchange(connection, request)
        except (asyncio.IncompleteReadError, ConnectionError):
            connection[1].close()
            if not reused:
                raise
            connection = await self._connect()  # the server closed it while it was idle
            answer = await self._exchange(connection, request)
        self._idle.append(connection)
        return json.loads(answer)

    async def _connect(self) -> Connection:
        return await asyncio.open_connection(self._host, self._port)

    @staticmethod
    async def _exchange(connection: Connection, request: bytes) -> bytes:
        reader, writer = connection
        writer.write(request)
        head = await reader.readuntil(b"\r\n\r\n")
        status = head[9:12]
        length = None
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        if status != b"200" or length is None:
            raise RuntimeError(f"unexpected answer from the endpoint: {head[:200]!r}")
        return await reader.readexactly(length)

    async def aclose(self) -> None:
        for _, writer in self._idle:
            writer.close()
        self._idle.clear()


def build(url: str, raw: bool = False) -> Server[Any]:
    client = httpx.AsyncClient()
    raw_client = RawHttpClient(url)

    async def post(arguments: dict[str, Any]) -> Any:
        if raw:
            return await raw_client.post_json(arguments)
        response = await client.post(url, json=arguments)
        return response.json()

    async def list_tools(ctx: ServerRequestContext[Any, Any], params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[types.Tool(name="echo", input_schema={"type": "object"})])

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        value = await post(params.arguments or {})
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=json.dumps(value, separators=(",", ":")))],
            structured_content=value,
        )

    return Server("plain", on_list_tools=list_tools, on_call_tool=call_tool)


async def main(url: str, raw: bool) -> None:
    server = build(url, raw)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], "--raw" in sys.argv[2:])
