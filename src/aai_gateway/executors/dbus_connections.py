"""The DBus executor's connections: one per bus (session, system), shared by every call.

A connection is opened on first use. When the bus goes away it is dropped and the next call
opens a new one; before a call sends anything it checks that the bus has not hung up on the
connection (the event loop may not have noticed yet), so a restarted bus costs no failed call.
Bus addresses come from the environment `cli/` hands down: DBUS_SESSION_BUS_ADDRESS,
DBUS_SYSTEM_BUS_ADDRESS, else `$XDG_RUNTIME_DIR/bus` and the system bus's standard socket.
"""

from __future__ import annotations

import asyncio
import logging
import select
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import anyio

if TYPE_CHECKING:  # dbus-fast is imported with the first connection (~15 ms of every start)
    from dbus_fast.aio import MessageBus

from ..errors import ServiceUnavailableError

logger = logging.getLogger(__name__)

BusName = Literal["session", "system"]
DEFAULT_SYSTEM_ADDRESS = "unix:path=/var/run/dbus/system_bus_socket"
ADDRESS_VARIABLES: dict[BusName, str] = {
    "session": "DBUS_SESSION_BUS_ADDRESS",
    "system": "DBUS_SYSTEM_BUS_ADDRESS",
}


@dataclass
class _Connection:
    """The shared connection to one bus, for the event loop it was made on."""

    loop: asyncio.AbstractEventLoop
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    bus: MessageBus | None = None
    watcher: asyncio.Task[None] | None = None


class BusConnections:
    """The shared connections to the buses named in `environ`."""

    def __init__(self, environ: Mapping[str, str]) -> None:
        self._environ = environ
        self._connections: dict[BusName, _Connection] = {}

    def address(self, bus: BusName) -> str | None:
        given = self._environ.get(ADDRESS_VARIABLES[bus])
        if given:
            return given
        if bus == "system":
            return DEFAULT_SYSTEM_ADDRESS
        runtime = self._environ.get("XDG_RUNTIME_DIR")
        if runtime and (Path(runtime) / "bus").is_socket():
            return f"unix:path={Path(runtime) / 'bus'}"
        return None

    async def bus(self, app_id: str, bus: BusName) -> MessageBus:
        """The shared connection to `bus`, opened (again) if there is none or it was closed."""
        loop = asyncio.get_running_loop()
        connection = self._connections.get(bus)
        if connection is None or connection.loop is not loop:
            connection = self._connections[bus] = _Connection(loop)
        if connection.bus is not None and connection.bus.connected and not _hung_up(connection.bus):
            return connection.bus
        async with connection.lock:
            if connection.bus is not None and connection.bus.connected and not _hung_up(connection.bus):
                return connection.bus
            if connection.bus is not None:
                connection.bus.disconnect()  # gone, whether or not the event loop has seen it yet
            connection.bus = None
            address = self.address(bus)
            if address is None:
                raise ServiceUnavailableError(app_id, no_bus_advice(bus), bus=bus)
            from dbus_fast import AuthError, BusType, DBusFastError, InvalidAddressError  # noqa: PLC0415
            from dbus_fast.aio import MessageBus  # noqa: PLC0415

            bus_type = BusType.SESSION if bus == "session" else BusType.SYSTEM
            try:
                opened = await MessageBus(bus_address=address, bus_type=bus_type).connect()
            except (OSError, EOFError, AuthError, InvalidAddressError, DBusFastError) as exc:
                raise ServiceUnavailableError(
                    app_id,
                    f"the {bus} bus at {address} cannot be reached ({describe(exc)}). " + no_bus_advice(bus),
                    bus=bus,
                    address=address,
                ) from exc
            logger.info("connected to the %s bus at %s as %s", bus, address, opened.unique_name)
            connection.bus = opened
            connection.watcher = loop.create_task(_watch(opened, bus, address))
            return opened

    async def aclose(self) -> None:
        connections = list(self._connections.values())
        self._connections.clear()
        running = asyncio.get_running_loop()
        for connection in connections:
            if connection.bus is None or connection.loop is not running:
                continue  # a connection of an event loop that has ended went with it
            connection.bus.disconnect()
            if connection.watcher is not None:
                with anyio.move_on_after(1):
                    await connection.watcher


def no_bus_advice(bus: BusName) -> str:
    if bus == "session":
        return (
            "Start the gateway inside the desktop session, so that DBUS_SESSION_BUS_ADDRESS is "
            "set, or set DBUS_SESSION_BUS_ADDRESS to the bus address (`echo "
            "$DBUS_SESSION_BUS_ADDRESS` in a terminal of that session)"
        )
    return "Check that the system bus is running (`systemctl status dbus`), or set DBUS_SYSTEM_BUS_ADDRESS"


def describe(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


async def _watch(bus: MessageBus, name: BusName, address: str) -> None:
    """Logs when a connection ends (and collects its error, which asyncio would otherwise report
    as never retrieved)."""
    try:
        await bus.wait_for_disconnect()  # type: ignore[no-untyped-call]
    except Exception as exc:
        logger.info("the %s bus at %s closed the connection (%s)", name, address, describe(exc))
    else:
        logger.debug("disconnected from the %s bus at %s", name, address)


def _hung_up(bus: MessageBus) -> bool:
    """Whether the bus has closed its end of the connection (a daemon restarted or crashed), seen
    on the socket itself: the event loop may not have run since, so `bus.connected` still says
    yes, and a message sent now would be lost."""
    descriptor = getattr(bus, "_fd", None)  # dbus-fast keeps its socket's descriptor here
    if not isinstance(descriptor, int) or not hasattr(select, "poll"):
        return False
    poller = select.poll()
    poller.register(descriptor, 0)  # hang-up and error are always reported
    return bool(poller.poll(0))
