"""A real MCP server over stdio (the SDK's low-level server) whose tools are those of a JSON file.

    python tests/mcp_upstream.py TOOLS.json

TOOLS.json: `{"tools": [<MCP Tool objects as on the wire>], "instructions": "...", "changes": N,
"burst": M}`
(tests/snapshot_upstream.py writes it). tools/list lists the tools the file holds at that moment,
two per page, so a client must follow `nextCursor` to see them all; tools/call answers with the
tool's name and arguments as structured content. Whenever `changes` grows, the server says its
tools changed: `notifications/tools/list_changed` to a 2025-11-25 client, an event on the
`subscriptions/listen` stream of a 2026-07-28 one. The instructions are those of the file at start.
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
from mcp.server.lowlevel.server import NotificationOptions
from mcp.server.session import ServerSession
from mcp.server.stdio import stdio_server
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ToolsListChanged
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

PAGE = 2
POLL_SECONDS = 0.05


class ToolsFile:
    """The file, read again whenever it is needed; the session of a 2025-11-25 client, to tell."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.changes = self.read().get("changes", 0)
        self.session: ServerSession | None = None

    def read(self) -> dict[str, Any]:
        spec: dict[str, Any] = json.loads(self.path.read_text(encoding="utf-8"))
        return spec

    def tools(self) -> list[types.Tool]:
        return [types.Tool.model_validate(tool) for tool in self.read()["tools"]]

    async def announce_changes(self, bus: InMemorySubscriptionBus) -> None:
        while True:
            await anyio.sleep(POLL_SECONDS)
            spec = self.read()
            changes = spec.get("changes", 0)
            if changes != self.changes:
                self.changes = changes
                for _ in range(spec.get("burst", 1)):  # a chatty server says it many times
                    await bus.publish(ToolsListChanged())
                    if self.session is not None:
                        await self.session.send_tool_list_changed()


def build(tools_file: ToolsFile, bus: InMemorySubscriptionBus) -> Server[Any]:
    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            tools_file.session = ctx.session
        tools = tools_file.tools()
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
        instructions=tools_file.read().get("instructions"),
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_subscriptions_listen=ListenHandler(bus),
    )


async def main() -> None:
    tools_file = ToolsFile(Path(sys.argv[1]))
    bus = InMemorySubscriptionBus()
    server = build(tools_file, bus)
    options = server.create_initialization_options(NotificationOptions(tools_changed=True))
    async with stdio_server() as (read, write), anyio.create_task_group() as tasks:
        tasks.start_soon(tools_file.announce_changes, bus)
        await server.run(read, write, options)
        tasks.cancel_scope.cancel()


if __name__ == "__main__":
    anyio.run(main)
