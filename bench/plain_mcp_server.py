"""A minimal MCP server (the SDK's low-level Server) whose one tool POSTs to a URL with httpx.

The call-overhead benchmark's second baseline: what any MCP server pays for the same work,
so the gateway's own cost can be told apart from the cost of MCP over stdio.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import anyio
import httpx
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server


def build(url: str) -> Server[Any]:
    client = httpx.AsyncClient()

    async def list_tools(ctx: ServerRequestContext[Any, Any], params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[types.Tool(name="echo", input_schema={"type": "object"})])

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        response = await client.post(url, json=params.arguments or {})
        value = response.json()
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=json.dumps(value))], structured_content=value
        )

    return Server("plain", on_list_tools=list_tools, on_call_tool=call_tool)


async def main(url: str) -> None:
    server = build(url)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main, sys.argv[1])
