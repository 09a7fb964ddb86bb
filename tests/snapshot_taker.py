"""A small real `mcp` executor for tests of the snapshot hooks: every operation opens its own SDK
session to the app's server (stdio), so tests drive a real upstream process without waiting for
the gateway's own mcp executor. It implements `SnapshotTaker` as that executor must."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters

from aai_gateway.descriptor import AppDescriptor, Tool
from aai_gateway.descriptor.model import McpChannel
from aai_gateway.discovery.mcp_snapshots import ServerInfo, Snapshot
from aai_gateway.executors.base import Invocation, SnapshotListener

UPSTREAM = Path(__file__).with_name("mcp_upstream.py")


def upstream_execution(tools_file: Path) -> dict[str, Any]:
    """The `execution` section of a descriptor whose server is `mcp_upstream.py TOOLS_FILE`."""
    return {"type": "mcp", "command": sys.executable, "args": [str(UPSTREAM), str(tools_file)]}


class OneShotMcpExecutor:
    def __init__(self) -> None:
        self.listener: SnapshotListener | None = None
        self.taken: list[str] = []  # app ids, one per tools/list read

    def unavailable_reason(self, tool: Tool) -> str | None:
        return None if isinstance(tool.channel, McpChannel) else "not an MCP server"

    async def execute(self, invocation: Invocation) -> Any:
        async with _session(invocation.app) as client:
            result = await client.call_tool(invocation.tool.name, invocation.arguments)
        return result.structured_content

    async def aclose(self) -> None:
        pass

    async def take_snapshot(
        self, app: AppDescriptor, secrets: Mapping[str, str], upstream_auth: object = None
    ) -> Snapshot:
        self.taken.append(app.id)
        async with _session(app) as client:
            tools: list[Any] = []
            cursor: str | None = None
            while True:
                page = await client.list_tools(cursor=cursor)
                tools += [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in page.tools]
                cursor = page.next_cursor
                if cursor is None:
                    break
            info = client.server_info
            server = ServerInfo(info.name, info.version, info.title) if info is not None else None
            return Snapshot.taken(app, tools, server=server, instructions=client.instructions)

    def on_snapshot(self, listener: SnapshotListener) -> None:
        self.listener = listener

    async def tools_changed(self, app: AppDescriptor) -> None:
        """What the real executor does on `notifications/tools/list_changed`: read and report."""
        assert self.listener is not None, "the gateway did not register its listener"
        await self.listener(app, await self.take_snapshot(app, {}))


def _session(app: AppDescriptor) -> Client:
    channel = app.sections[0].channel
    assert isinstance(channel, McpChannel) and channel.command is not None
    env = {k: v for k, v in channel.env.items() if isinstance(v, str)}
    params = StdioServerParameters(command=channel.command, args=list(channel.args), env=env or None)
    return Client(params, mode="legacy")
