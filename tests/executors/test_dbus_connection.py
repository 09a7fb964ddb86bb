"""Which bus the DBus executor talks to, and what happens when it is missing, restarts or dies."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from aai_gateway.descriptor import AppDescriptor, Source, load_descriptor
from aai_gateway.errors import AaiError, ErrorCode
from aai_gateway.executors.dbus import DbusExecutor
from tests.builders import c_descriptor
from tests.dbus_bus import PrivateBus, private_bus_or_fail
from tests.executors.conftest import invocation, load
from tests.executors.dbus_services import AAI_INTERFACE, OBJECT_PATH, SERVICE, exported

pytestmark = pytest.mark.anyio


def bus_daemon_example() -> AppDescriptor:
    path = Path(__file__).resolve().parents[2] / "examples" / "org.freedesktop.DBus" / "aai.json"
    return load_descriptor(path.read_bytes(), Source(kind="file", location=str(path)), "linux")


def app_on(bus: str = "session") -> AppDescriptor:
    document = c_descriptor(
        "dev.aai.test.app",
        type="dbus",
        service=SERVICE,
        objectPath=OBJECT_PATH,
        interface=AAI_INTERFACE,
        bus=bus,
        timeout=10_000,
    )
    document["tools"] = [
        {"name": name, "description": f"{name} for tests", "parameters": {"type": "object"}}
        for name in ("echo", "sleep")
    ]
    return load(document)


@pytest.fixture
def bus() -> Iterator[PrivateBus]:
    with private_bus_or_fail() as running:
        yield running


async def failure(executor: DbusExecutor, app: AppDescriptor, tool: str = "echo") -> AaiError:
    with pytest.raises(AaiError) as caught:
        await executor.execute(invocation(app, tool, {"seconds": 5}))
    return caught.value


def test_without_a_session_bus_address_dbus_tools_are_unavailable_with_the_fix() -> None:
    executor = DbusExecutor(environ={"HOME": "/nonexistent", "XDG_RUNTIME_DIR": "/nonexistent"})
    [tool] = app_on().tools[:1]

    reason = executor.unavailable_reason(tool)

    assert reason is not None
    assert "DBUS_SESSION_BUS_ADDRESS is not set" in reason
    assert "start the gateway inside the desktop session" in reason


def test_the_session_bus_of_the_login_session_is_found_in_the_runtime_dir(bus: PrivateBus) -> None:
    executor = DbusExecutor(environ={"XDG_RUNTIME_DIR": str(bus.root)})

    assert executor.unavailable_reason(app_on().tools[0]) is None
    assert executor.bus_address("session") == bus.address


def test_dbus_is_unavailable_on_windows() -> None:
    executor = DbusExecutor(environ={"DBUS_SESSION_BUS_ADDRESS": "unix:path=/x"}, platform="win32")

    assert executor.unavailable_reason(app_on().tools[0]) == "DBus is not available on Windows"


async def test_a_bus_nobody_listens_on_is_service_unavailable_with_how_to_fix() -> None:
    executor = DbusExecutor(environ={"DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent/aai-bus"})

    error = await failure(executor, app_on())

    assert error.code == ErrorCode.SERVICE_UNAVAILABLE
    assert "the session bus at unix:path=/nonexistent/aai-bus cannot be reached" in error.message
    assert "set DBUS_SESSION_BUS_ADDRESS" in error.message


async def test_a_system_bus_tool_uses_the_system_bus_address(bus: PrivateBus) -> None:
    executor = DbusExecutor(
        environ={"DBUS_SYSTEM_BUS_ADDRESS": bus.address, "DBUS_SESSION_BUS_ADDRESS": "unix:path=/nowhere"}
    )
    async with exported(bus.address):
        assert await executor.execute(invocation(app_on("system"), "echo", {"on": "system"})) == {
            "on": "system"
        }
        assert (await failure(executor, app_on("session"))).code == ErrorCode.SERVICE_UNAVAILABLE
    await executor.aclose()


async def test_after_the_bus_restarts_the_next_call_connects_again(bus: PrivateBus) -> None:
    executor = DbusExecutor(environ=bus.env())
    async with exported(bus.address):
        assert await executor.execute(invocation(app_on(), "echo", {"n": 1})) == {"n": 1}
    bus.restart(signal.SIGKILL)
    await anyio.sleep(0.05)  # the gateway's event loop runs on between calls and sees the bus go

    async with exported(bus.address):
        assert await executor.execute(invocation(app_on(), "echo", {"n": 2})) == {"n": 2}
    await executor.aclose()


async def test_a_call_right_after_the_bus_restarted_reconnects_before_sending(bus: PrivateBus) -> None:
    executor = DbusExecutor(environ=bus.env())
    daemon = bus_daemon_example()
    first = await executor.execute(invocation(daemon, "get_id"))
    bus.restart(signal.SIGKILL)  # the event loop does not run in between: it cannot have noticed
    second = await executor.execute(invocation(daemon, "get_id"))
    assert isinstance(first, str) and isinstance(second, str) and first != second  # a new daemon answered
    await executor.aclose()


@pytest.mark.parametrize(
    ("command", "code", "said"),
    [
        ("/nonexistent/aai-test-service", ErrorCode.SERVICE_UNAVAILABLE, "Spawn."),
        ("/bin/false", ErrorCode.SERVICE_UNAVAILABLE, "Spawn."),
        ("/bin/sleep 30", ErrorCode.TIMEOUT, "did not take its name in time"),
    ],
    ids=["not installed", "exits at once", "never takes its name"],
)
async def test_a_service_the_bus_fails_to_start_is_reported_as_unavailable_or_timed_out(
    command: str, code: ErrorCode, said: str
) -> None:
    with private_bus_or_fail({SERVICE: command}) as activating:
        executor = DbusExecutor(environ=activating.env())
        error = await failure(executor, app_on())
        await executor.aclose()
    assert error.code == code
    assert said in error.message and SERVICE in error.message
    assert error.data["dbus_error"].startswith("org.freedesktop.DBus.Error.")


async def test_a_call_cut_off_by_a_dying_bus_fails_once_and_the_next_call_reconnects(bus: PrivateBus) -> None:
    executor = DbusExecutor(environ=bus.env())
    app = app_on()
    async with exported(bus.address) as (service, _):
        async with anyio.create_task_group() as tasks:
            errors: list[AaiError] = []

            async def slow_call() -> None:
                errors.append(await failure(executor, app, "sleep"))

            tasks.start_soon(slow_call)
            await service.called.wait()
            bus.stop(signal.SIGKILL)
        [error] = errors
        assert len(service.requests) == 1  # not retried
    assert error.code == ErrorCode.SERVICE_UNAVAILABLE
    assert "the method may or may not have run" in error.message

    bus.start()
    async with exported(bus.address):
        assert await executor.execute(invocation(app, "echo", {"n": 3})) == {"n": 3}
    await executor.aclose()
