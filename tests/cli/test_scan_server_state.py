"""`aai-gateway scan`, run beside a gateway that serves a client, shows each MCP app's transport,
whether its server runs, and the last error it gave; once the gateway exits, nothing runs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.builders import trusting_config
from tests.executors.mcp_support import mcp_document, write_app
from tests.server.conftest import connected

pytestmark = pytest.mark.anyio

SERVED = "dev.test.served"
BROKEN = "dev.test.broken"


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def apps(tmp_path: Path) -> Path:
    folder = tmp_path / "apps"
    write_app(folder / "served", mcp_document(app_id=SERVED, name="Served", timeout_ms=10_000))
    write_app(folder / "broken", mcp_document(app_id=BROKEN, name="Broken", args=["--exit-at-start"]))
    trusting_config(tmp_path / "config.toml", [SERVED, BROKEN])
    return folder


async def scan(apps: Path, *options: str) -> str:
    """`scan` as the user runs it, with the gateway's environment (the same home and cache)."""
    argv = [sys.executable, "-m", "aai_gateway", "scan", "--no-default-paths", "--path", str(apps), *options]
    env = {"HOME": str(apps.parent), "PATH": "/usr/bin:/bin"}
    done = await anyio.to_thread.run_sync(
        lambda: subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120, check=False)
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


async def servers(apps: Path) -> dict[str, Any]:
    listed = json.loads(await scan(apps, "--json"))["apps"]
    return {app["id"]: app["server"] for app in listed}


async def test_scan_shows_a_served_server_running_a_failed_one_with_its_error_and_none_after_exit(
    apps: Path,
) -> None:
    before = await servers(apps)
    assert (
        before[SERVED]
        == before[BROKEN]
        == {
            "transport": "stdio",
            "running": False,
            "gateways": 0,
            "since": None,
            "pid": None,
            "protocol": None,
            "last_error": None,
        }
    )

    async with connected(apps, "auto") as client:
        answer = await client.call_tool("aai_exec", {"app": SERVED, "tool": "pid", "args": {}})
        pid = int(answer.content[0].text)  # type: ignore[union-attr]
        failed = await client.call_tool("aai_exec", {"app": BROKEN, "tool": "echo", "args": {"text": "x"}})
        assert failed.is_error

        during = await servers(apps)
        table = await scan(apps)

    assert during[SERVED]["running"] is True and during[SERVED]["pid"] == pid
    assert during[SERVED]["gateways"] == 1 and during[SERVED]["protocol"]
    broken = during[BROKEN]
    assert broken["running"] is False
    assert "the configuration file is missing" in broken["last_error"]["message"]
    assert broken["last_error"]["code"] == "SERVICE_UNAVAILABLE"

    rows = {line.split()[0]: line for line in table.splitlines() if line.startswith("dev.test.")}
    assert "mcp (stdio)" in rows[SERVED] and " running " in rows[SERVED]
    assert "stopped, failed" in rows[BROKEN]
    assert "Last errors of MCP servers (1)" in table
    assert f"  {BROKEN} (0 min ago, SERVICE_UNAVAILABLE): " in table

    after = await servers(apps)
    assert after[SERVED]["running"] is False and after[SERVED]["pid"] is None
    assert after[BROKEN]["last_error"] == broken["last_error"]  # kept for the next look
