"""A second MCP client, the MCP Inspector CLI (Node), lists and calls the gateway's tools.

scripts/install-test-peers installs the pinned Inspector and the Node it needs into .cache/test-peers.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.peers import INSPECTOR, node, with_node_first_on_path


def inspector(apps: Path, *method: str) -> Any:
    assert INSPECTOR.exists(), "MCP Inspector CLI missing: run scripts/install-test-peers"
    gateway = [sys.executable, "-m", "aai_gateway", "serve", "--no-default-paths", "--path", str(apps)]
    config = ["-e", f"AAI_GATEWAY_CONFIG={apps.parent / 'config.toml'}"]  # auto-allows the test apps
    done = subprocess.run(
        [node(), str(INSPECTOR), "--cli", *config, *gateway, *method],
        env=with_node_first_on_path(dict(os.environ)),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_inspector_lists_the_app_entries_and_the_universal_tools(apps_dir: Path) -> None:
    listed = inspector(apps_dir, "--method", "tools/list")
    names = [tool["name"] for tool in listed["tools"]]
    assert names == [
        "app_dev_test_adapter",
        "app_dev_test_offline",
        "app_dev_test_slow",
        "aai_search",
        "web_discover",
        "aai_exec",
    ]


def test_the_inspector_runs_an_operation_through_aai_exec(apps_dir: Path) -> None:
    called = inspector(
        apps_dir,
        "--method",
        "tools/call",
        "--tool-name",
        "aai_exec",
        "--tool-arg",
        "app=dev.test.adapter",
        "--tool-arg",
        "tool=echo",
        "--tool-arg",
        'args={"text": "from node"}',
    )
    assert called["isError"] is False
    assert called["structuredContent"] == {"tool": "echo", "params": {"text": "from node", "count": 1}}
