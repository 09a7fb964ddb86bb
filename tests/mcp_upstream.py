"""A real MCP server over stdio (the SDK's low-level server) whose tools are read from a JSON file.

    python tests/mcp_upstream.py TOOLS.json

TOOLS.json: `{"tools": [<MCP Tool objects as on the wire>], "instructions": "..."}`. tools/list
answers two tools per page, so a client must follow `nextCursor` to see them all; tools/call
answers with the tool's name and arguments as structured content.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

PAGE = 2


def build(tools_file: Path) -> Server[Any]:
    spec = json.loads(tools_file.read_text(encoding="utf-8"))
    tools = [types.Tool.model_validate(tool) for tool in spec["tools"]]

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        start = int(params.cursor) if params is not None and params.cursor else 0
        end = start + PAGE
        return types.ListToolsResult(
            tools=tools[start:end], next_cursor=str(end) if end < len(tools) else None
        )

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        answer = {"tool": params.name, "arguments": params.arguments or {}}
        return types.CallToolResult(
            content=[types.TextContent(text=json.dumps(answer))], structured_content=answer
        )

    return Server(
        "test-upstream",
        version="4.5.6",
        title="Test Upstream",
        instructions=spec.get("instructions"),
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


async def main() -> None:
    server = build(Path(sys.argv[1]))
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
