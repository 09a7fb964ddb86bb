"""Record the real tools/list of three MCP servers nobody here wrote, as data for bench/mcp_proxy.py.

Run once (the output is committed): .venv/bin/python bench/record_mcp_tools.py
It starts `mcp-server-time`, `mcp-server-git` (PyPI) and `@modelcontextprotocol/server-everything`
(npm) from .cache/test-peers (scripts/install-test-peers puts them there, pinned), asks each for
every page of tools/list with the SDK client, and writes bench/data/mcp-tools/<name>.json:
`{"server": {name, version, instructions}, "tools": [...]}` with the tools as the server wrote
them (camelCase, no nulls).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters

BENCH = Path(__file__).resolve().parent
PEERS = BENCH.parent / ".cache" / "test-peers"
DATA = BENCH / "data" / "mcp-tools"
SERVERS_BIN = PEERS / "mcp-servers" / "venv" / "bin"
EVERYTHING = PEERS / "everything" / "node_modules" / "@modelcontextprotocol" / "server-everything"


def servers() -> dict[str, StdioServerParameters]:
    node = PEERS / "node" / "bin" / "node"
    return {
        "time": StdioServerParameters(command=str(SERVERS_BIN / "mcp-server-time")),
        "git": StdioServerParameters(command=str(SERVERS_BIN / "mcp-server-git")),
        "everything": StdioServerParameters(
            command=str(node), args=[str(EVERYTHING / "dist" / "index.js"), "stdio"]
        ),
    }


async def record(server: StdioServerParameters) -> dict[str, Any]:
    async with Client(server, mode="legacy") as client:
        tools: list[dict[str, Any]] = []
        cursor: str | None = None
        while True:
            page = await client.list_tools(cursor=cursor)
            tools += [t.model_dump(by_alias=True, mode="json", exclude_none=True) for t in page.tools]
            cursor = page.next_cursor
            if cursor is None:
                break
        info = client.server_info
        identity = {"name": info.name, "version": info.version} if info is not None else {}
        return {
            "server": {**identity, "instructions": client.instructions},
            "tools": tools,
        }


async def main() -> int:
    DATA.mkdir(parents=True, exist_ok=True)
    for name, server in servers().items():
        listing = await record(server)
        path = DATA / f"{name}.json"
        path.write_text(json.dumps(listing, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"{path.relative_to(BENCH.parent)}: {len(listing['tools'])} tools")
    return 0


if __name__ == "__main__":
    sys.exit(anyio.run(main))
