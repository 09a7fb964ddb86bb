"""DBus apps through the gateway's MCP interface: a gateway subprocess on a private session bus,
running the shipped examples (the bus daemon itself, and the AAI-native Tally service)."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client

from tests.builders import trusting_config
from tests.dbus_bus import PrivateBus, private_bus_or_fail, service_process
from tests.server.conftest import gateway_command

pytestmark = pytest.mark.anyio

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
APPS = ("org.freedesktop.DBus", "dev.aai.example.tally")


@pytest.fixture(scope="module")
def bus() -> Iterator[PrivateBus]:
    tally = EXAMPLES / "dev.aai.example.tally" / "tally_service.py"
    with private_bus_or_fail() as running, service_process(tally, running.address):
        yield running


@pytest.fixture(scope="module")
async def gateway(
    bus: PrivateBus, mode: str, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Client]:
    folder = tmp_path_factory.mktemp("dbus") / "apps"
    for app in APPS:
        shutil.copytree(EXAMPLES / app, folder / app)
    trusting_config(folder.parent / "config.toml", list(APPS))
    command = gateway_command(folder)
    command.env = bus.env(command.env)
    async with Client(
        command, mode=mode, client_info=types.Implementation(name="dbus-e2e", version="1")
    ) as client:
        yield client


def result_of(result: types.CallToolResult) -> Any:
    """The operation's result: JSON, or the text itself for a string result."""
    assert not result.is_error, result
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    try:
        return json.loads(block.text)
    except json.JSONDecodeError:
        return block.text


async def test_dbus_apps_are_listed_when_the_gateway_has_a_session_bus(gateway: Client) -> None:
    names = [tool.name for tool in (await gateway.list_tools()).tools]

    assert "app_org_freedesktop_DBus" in names
    assert "app_dev_aai_example_tally" in names


async def test_aai_exec_calls_a_typed_method_of_the_bus_daemon(gateway: Client) -> None:
    bus_id = result_of(
        await gateway.call_tool("aai_exec", {"app": "org.freedesktop.DBus", "tool": "get_id", "args": {}})
    )
    has_owner = result_of(
        await gateway.call_tool(
            "aai_exec",
            {"app": "dbus", "tool": "name_has_owner", "args": {"name": "dev.aai.example.Tally"}},
        )
    )

    assert re.fullmatch(r"[0-9a-f]{32}", bus_id)
    assert has_owner is True


async def test_aai_exec_runs_an_aai_native_dbus_service_and_reports_its_errors(
    gateway: Client, mode: str
) -> None:
    name = f'{mode}: quote " $(x) 🎉'
    counted = await gateway.call_tool(
        "aai_exec", {"app": "tally", "tool": "increment", "args": {"name": name}}
    )
    missing = await gateway.call_tool("aai_exec", {"app": "tally", "tool": "get", "args": {"name": "nope"}})

    assert counted.structured_content == {"name": name, "value": 1}
    assert missing.is_error
    block = missing.content[0]
    assert isinstance(block, types.TextContent)
    assert json.loads(block.text)["error"]["code"] == "NOT_FOUND"
