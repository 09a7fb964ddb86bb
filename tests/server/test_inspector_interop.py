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

from tests.builders import write_json
from tests.peers import INSPECTOR, node, with_node_first_on_path
from tests.server.conftest import big_app, listing_config


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


def test_a_strict_client_reads_an_unlisted_app_a_page_at_a_time_as_the_answers_say(apps_dir: Path) -> None:
    """The Inspector refuses to call a tool tools/list does not list: above `max_apps`, every call
    an answer suggests must be one of the listed tools."""
    write_json(apps_dir / "big.json", big_app(30))
    listing_config(apps_dir, '[listing]\nmax_apps = 1\npinned = ["dev.test.adapter"]\n')

    def search(*arguments: str) -> Any:
        flags = [flag for argument in arguments for flag in ("--tool-arg", argument)]
        return inspector(apps_dir, "--method", "tools/call", "--tool-name", "aai_search", *flags)

    first = search('query=""', "app=dev.test.big", "limit=20")
    text = first["content"][0]["text"]
    offset = json.loads(text.split("as before, with ")[1].split(".\n")[0])["offset"]
    second = search('query=""', "app=dev.test.big", "limit=20", f"offset={offset}")
    named = search("query=op_029 op_003", "app=dev.test.big")

    assert "app_dev_test_big" not in text
    pages = [first, second]
    assert [r["tool"] for page in pages for r in page["structuredContent"]["results"]] == [
        f"op_{i:03d}" for i in range(30)
    ]
    assert "More follow" not in second["content"][0]["text"]
    assert [r["tool"] for r in named["structuredContent"]["results"]][:2] == ["op_029", "op_003"]
