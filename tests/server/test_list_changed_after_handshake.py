"""A handshake-era client hears of an app-list change from the moment its `initialize` is
answered: a change the gateway sees before the client's next message is not lost."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
import pytest

from tests.builders import c_descriptor, write_json
from tests.server.conftest import adapter_app
from tests.server.test_old_protocol_clients import OldClient

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


async def test_a_change_seen_before_the_initialized_notification_still_reaches_the_client(
    tmp_path: Path,
) -> None:
    apps = tmp_path / "apps"
    write_json(apps / "adapter.json", adapter_app())
    command = [sys.executable, "-m", "aai_gateway", "serve", "--no-default-paths", "--path", str(apps)]
    env = dict(os.environ, AAI_GATEWAY_CONFIG=str(tmp_path / "no-config.toml"))
    async with await anyio.open_process(command, env=env) as process:
        client = OldClient(process)
        hello = await client.request(
            1,
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "slow", "version": "1"},
            },
        )
        assert hello["result"]["protocolVersion"] == "2025-11-25"
        # the client has not yet said `notifications/initialized` when the app list changes
        write_json(
            apps / "later.json",
            c_descriptor("dev.test.later", name="Later", type="http", baseUrl="http://127.0.0.1:9"),
        )
        with anyio.fail_after(20):
            message = await client.receive()
        assert message.get("method") == "notifications/tools/list_changed", message
        await client.send({"method": "notifications/initialized"})
        listed = await client.request(2, "tools/list", {})
        assert "app_dev_test_later" in [tool["name"] for tool in listed["result"]["tools"]]
        assert process.stdin is not None
        await process.stdin.aclose()
