"""`execution.type: "dbus"`: method calls on the session or system bus, through dbus-fast.

Three ways a tool is called (docs/dbus.md):
- no per-tool method (dialects A and C): `Execute(s) -> s` on the channel's object and interface
  with the JSON request of wire.py; the reply is the JSON response.
- a dialect-B `method` without `signature`: that method with the JSON request as its one string
  argument; a string reply is parsed as JSON (`output_parser: string` keeps it as text).
- a dialect-B `method` with `signature` and `args`: typed arguments converted from the
  parameters (dbus_types.py); the reply values become JSON values.

One connection per bus (session, system) is shared by every call (`dbus_connections.py`); what a
call sends and how its reply is read is in `dbus_messages.py`. A call whose connection dies while
it waits for the reply is not retried, since the method may already have run: it fails with
SERVICE_UNAVAILABLE.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import time
from collections.abc import Mapping
from typing import Any

from ..descriptor import ExecutionType, Tool
from ..descriptor.model import DbusChannel
from ..errors import ServiceUnavailableError
from .base import ExecutorBase, ExecutorSettings, Invocation, timeout_error
from .dbus_connections import ADDRESS_VARIABLES, BusConnections, BusName, describe

logger = logging.getLogger(__name__)

_CONNECTION_LOST = (OSError, EOFError)


class DbusExecutor(ExecutorBase[DbusChannel]):
    """Runs DBus tools. Safe to call concurrently: calls share one connection per bus.

    `environ` is the gateway's environment, where the bus addresses are read
    (`dbus_connections.py`).
    """

    channel_class = DbusChannel
    label = "DBus"
    availability_from = ("bus",)

    def __init__(self, *, environ: Mapping[str, str], platform: str = sys.platform) -> None:
        self._platform = platform
        self._connections = BusConnections(environ)

    def unavailable(self, channel: DbusChannel, tool: Tool) -> str | None:
        if self._platform == "win32":
            return "DBus is not available on Windows"
        if self.bus_address(channel.bus) is None:
            return (
                f"no {channel.bus} bus: {ADDRESS_VARIABLES[channel.bus]} is not set and there is no "
                "$XDG_RUNTIME_DIR/bus (start the gateway inside the desktop session, or set "
                f"{ADDRESS_VARIABLES[channel.bus]})"
            )
        return None

    def bus_address(self, bus: BusName) -> str | None:
        return self._connections.address(bus)

    async def execute(self, invocation: Invocation) -> Any:
        # dbus-fast and the message code are imported with the first call (~15 ms of every start)
        from dbus_fast import Message, MessageType  # noqa: PLC0415

        from .dbus_messages import error_reply, plan_call, result  # noqa: PLC0415

        channel = self.channel(invocation)
        plan = plan_call(invocation)
        app_id, tool = invocation.app.id, invocation.tool.name
        message = Message(
            destination=channel.service,
            path=channel.object_path,
            interface=channel.interface,
            member=plan.member,
            signature=plan.signature,
            body=plan.body,
        )
        started = time.perf_counter()
        # asyncio.timeout, not an anyio cancel scope: half the cost per call, and dbus-fast
        # runs on asyncio only anyway
        deadline = asyncio.timeout(invocation.timeout_seconds)
        try:
            async with deadline:
                bus = await self._connections.bus(app_id, channel.bus)
                reply: Message | None = await bus.call(message)
        except _CONNECTION_LOST as exc:
            if deadline.expired():
                raise timeout_error(invocation) from None
            raise ServiceUnavailableError(
                app_id,
                f"the connection to the {channel.bus} bus was lost during the call to "
                f"{channel.service} {plan.member} ({describe(exc)}); the method may or may not "
                "have run. The next call connects again",
                service=channel.service,
                bus=channel.bus,
            ) from exc
        if logger.isEnabledFor(logging.DEBUG):
            elapsed_ms = (time.perf_counter() - started) * 1000
            logger.debug(
                "%s %s: %s %s answered in %.1f ms", app_id, tool, channel.service, plan.member, elapsed_ms
            )
        if reply is None:
            raise ServiceUnavailableError(
                app_id,
                f"the {channel.bus} bus closed the connection before {channel.service} answered; the "
                "method may or may not have run. The next call connects again",
                service=channel.service,
                bus=channel.bus,
            )
        if reply.message_type == MessageType.ERROR:
            raise error_reply(invocation, channel, plan, reply)
        return result(invocation, plan, reply)

    async def aclose(self) -> None:
        await self._connections.aclose()


def registration(settings: ExecutorSettings) -> tuple[tuple[ExecutionType, ...], DbusExecutor]:
    """The entry point of `dbus` in the group `aai_gateway.executors` (pyproject.toml)."""
    return (ExecutionType.DBUS,), DbusExecutor(environ=settings.environ, platform=settings.platform)
