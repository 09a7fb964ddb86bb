"""The MCP server of the tool-snapshot tests (tests/mcp_upstream.py, a real SDK server process) as
an app, and the gateway's own `mcp` executor reaching it, noting each read of a server's tools."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from aai_gateway.descriptor import AppDescriptor
from aai_gateway.discovery.mcp_snapshots import Snapshot
from aai_gateway.executors.base import UpstreamAuth
from aai_gateway.executors.mcp import McpExecutor
from tests.executors.mcp_support import ENVIRON

UPSTREAM = Path(__file__).with_name("mcp_upstream.py")


class UpstreamTools:
    """The tools file of tests/mcp_upstream.py: what the server lists, and when it says so."""

    def __init__(self, path: Path, tools: list[dict[str, Any]], *, instructions: str | None = None) -> None:
        self.path = path
        self.instructions = instructions
        self.changes = 0
        self.serve(tools)

    def serve(self, tools: list[dict[str, Any]], *, announce: bool = False, times: int = 1) -> None:
        """From now on the server lists `tools`; with `announce`, it also says its tools changed
        (`times` times over)."""
        self.changes += announce
        document = {
            "tools": tools,
            "instructions": self.instructions,
            "changes": self.changes,
            "burst": times,
        }
        written = self.path.with_name(f"{self.path.name}.new")
        written.write_text(json.dumps(document), encoding="utf-8")
        os.replace(written, self.path)  # the server never reads half a file

    def execution(self) -> dict[str, Any]:
        """The `execution` section of a descriptor whose server this is."""
        return {"type": "mcp", "command": sys.executable, "args": [str(UPSTREAM), str(self.path)]}


class ReadCountingMcpExecutor(McpExecutor):
    """The gateway's `mcp` executor; `taken` holds the app id of every read of a server's tools."""

    def __init__(self) -> None:
        super().__init__(environ=ENVIRON, kill_grace_seconds=0.5)
        self.taken: list[str] = []

    async def take_snapshot(
        self, app: AppDescriptor, secrets: Mapping[str, str], upstream_auth: UpstreamAuth | None = None
    ) -> Snapshot:
        self.taken.append(app.id)
        return await super().take_snapshot(app, secrets, upstream_auth)
