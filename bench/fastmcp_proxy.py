"""FastMCP's proxy of one stdio MCP server, served over stdio: the comparison of bench/mcp_proxy.py.

Run: python bench/fastmcp_proxy.py COMMAND [ARG ...] (needs `fastmcp`, the project's `bench`
extra, which scripts/bench installs). It is FastMCP's documented way to put a configured server
behind a proxy: `create_proxy` with an MCP configuration of one server, default settings (the
backend process is kept alive between requests, each request gets a fresh client on it, the
backend's protocol generation mirrors the front's), `run()` on stdio without the banner.
"""

from __future__ import annotations

import sys

from fastmcp.server import create_proxy


def main(argv: list[str]) -> int:
    if not argv:
        print("usage: fastmcp_proxy.py COMMAND [ARG ...]", file=sys.stderr)
        return 2
    config = {"mcpServers": {"upstream": {"command": argv[0], "args": argv[1:]}}}
    create_proxy(config, name="fastmcp-proxy").run(transport="stdio", show_banner=False)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
