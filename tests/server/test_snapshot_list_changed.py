"""An MCP server's tools read by the gateway reach the MCP client: the app's guide on first use,
and tools/list_changed when a list the mcp executor reports removes or restores the app's line.
The gateway runs in this process with its own mcp executor, the client is the SDK's, in both
protocol generations, and the upstream is a real SDK server process that says when its tools
changed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.session import IncomingMessage

from aai_gateway.descriptor import ExecutionType
from aai_gateway.discovery.mcp_snapshots import SnapshotStore
from aai_gateway.discovery.sources import Pattern, SourceSpec
from aai_gateway.discovery.watch import CatalogWatcher
from aai_gateway.executors.registry import ExecutorRegistry
from aai_gateway.server.app import GatewayServer
from aai_gateway.service import Gateway
from tests.builders import mcp_descriptor, trusting_gate, write_json
from tests.snapshot_upstream import ReadCountingMcpExecutor, UpstreamTools

pytestmark = pytest.mark.anyio
APP = "dev.test.upstream"
ENTRY = "app_dev_test_upstream"
TOOLS: list[dict[str, Any]] = [{"name": "get_time", "description": "Now", "inputSchema": {"type": "object"}}]


def gateway_server(root: Path, executor: ReadCountingMcpExecutor, upstream: UpstreamTools) -> GatewayServer:
    apps = root / "apps"
    write_json(apps / "upstream" / "aai.json", mcp_descriptor(APP, **upstream.execution()))
    store = SnapshotStore.in_cache(root / "cache")
    watcher = CatalogWatcher(
        [SourceSpec("--path", apps, Pattern.FILES_AND_APP_DIRS, explicit=True)], "linux", store
    )
    registry = ExecutorRegistry()
    registry.register(ExecutionType.MCP, executor)
    gateway = Gateway(watcher.catalog, registry, consent=trusting_gate(APP), snapshots=store)
    return GatewayServer(gateway, watcher, poll_interval=0)


async def tool_names(client: Client) -> list[str]:
    return [t.name for t in (await client.list_tools()).tools]


@pytest.mark.parametrize("mode", ["legacy", "auto"], ids=["2025-11-25 handshake", "2026-07-28 per-request"])
async def test_the_guide_reads_the_servers_tools_and_a_changed_list_reaches_the_client(
    tmp_path: Path, mode: str
) -> None:
    executor = ReadCountingMcpExecutor()
    upstream = UpstreamTools(tmp_path / "tools.json", TOOLS)
    server = gateway_server(tmp_path, executor, upstream)
    changes = 0
    changed = anyio.Event()

    async def on_message(message: IncomingMessage) -> None:
        nonlocal changes
        if isinstance(message, types.ToolListChangedNotification):
            changes += 1
            changed.set()

    async with Client(server.build(), mode=mode, message_handler=on_message) as client:
        assert ENTRY in await tool_names(client)
        guide = await client.call_tool(ENTRY, {})
        assert isinstance(guide.content[0], types.TextContent) and "### get_time" in guide.content[0].text
        assert executor.taken == [APP]

        async with client.listen(tools_list_changed=True) if mode == "auto" else _nothing() as events:
            upstream.serve([], announce=True)  # the server drops its last tool and says so
            with anyio.fail_after(15):
                if events is not None:
                    await events.__anext__()
                else:
                    await changed.wait()
        assert ENTRY not in await tool_names(client)


class _nothing:  # noqa: N801 (used like a context manager function)
    async def __aenter__(self) -> None:
        return None

    async def __aexit__(self, *exc: object) -> None:
        return None
