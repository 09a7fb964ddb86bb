"""A minimal MCP server (the SDK's low-level Server) whose one tool, `echo`, answers with its
arguments: text and structured content, at once, without I/O.

The upstream of bench/mcp_proxy.py: its own cost is small and the same whoever calls it (the
SDK client directly, FastMCP's proxy, the gateway), so the differences are the middle's.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

ECHO = types.Tool(
    name="echo",
    description="Answer with the arguments",
    input_schema={
        "type": "object",
        "properties": {
            "text": {"type": "string"},
            "count": {"type": "integer"},
            "tags": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["text"],
    },
)


def build() -> Server[Any]:
    async def list_tools(ctx: ServerRequestContext[Any, Any], params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[ECHO])

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        value = params.arguments or {}
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=json.dumps(value))], structured_content=value
        )

    return Server("bench-echo", on_list_tools=list_tools, on_call_tool=call_tool)


async def main() -> None:
    server = build()
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
