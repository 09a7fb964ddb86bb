"""examples/dev.aai.example.tally: its AAI-native DBus service, run as its own process on a private
bus, called through the DBus executor with the example descriptor as the gateway loads it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from aai_gateway.descriptor import AppDescriptor, Source, load_descriptor
from aai_gateway.errors import AaiError, ErrorCode
from aai_gateway.executors.dbus import DbusExecutor
from tests.dbus_bus import PrivateBus, private_bus_or_fail, service_process
from tests.executors.conftest import invocation

pytestmark = pytest.mark.anyio

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "dev.aai.example.tally"


@pytest.fixture(scope="module")
def bus() -> Iterator[PrivateBus]:
    with private_bus_or_fail() as running, service_process(EXAMPLE / "tally_service.py", running.address):
        yield running


@pytest.fixture
async def executor(bus: PrivateBus) -> AsyncIterator[DbusExecutor]:
    running = DbusExecutor(environ=bus.env())
    yield running
    await running.aclose()


def tally() -> AppDescriptor:
    path = EXAMPLE / "aai.json"
    return load_descriptor(path.read_bytes(), Source(kind="file", location=str(path)), "linux")


async def run(executor: DbusExecutor, tool: str, args: dict[str, Any]) -> Any:
    return await executor.execute(invocation(tally(), tool, args))


async def test_counters_go_up_and_are_listed(executor: DbusExecutor) -> None:
    assert await run(executor, "increment", {"name": "water", "by": 1}) == {"name": "water", "value": 1}
    assert await run(executor, "increment", {"name": "water", "by": 2}) == {"name": "water", "value": 3}
    assert await run(executor, "increment", {"name": "pomodoro 🍅", "by": 1}) == {
        "name": "pomodoro 🍅",
        "value": 1,
    }

    assert await run(executor, "list", {}) == [
        {"name": "pomodoro 🍅", "value": 1},
        {"name": "water", "value": 3},
    ]


async def test_an_unknown_counter_is_the_apps_own_not_found(executor: DbusExecutor) -> None:
    with pytest.raises(AaiError) as caught:
        await run(executor, "get", {"name": "push-ups"})

    assert caught.value.code == ErrorCode.NOT_FOUND
    assert "no counter named 'push-ups'" in caught.value.message
