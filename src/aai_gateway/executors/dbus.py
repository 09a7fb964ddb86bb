"""`execution.type: "dbus"`: method calls on the session or system bus, through dbus-fast.

Three ways a tool is called (docs/dbus.md):
- no per-tool method (dialects A and C): `Execute(s) -> s` on the channel's object and interface
  with the JSON request of wire.py; the reply is the JSON response.
- a dialect-B `method` without `signature`: that method with the JSON request as its one string
  argument; a string reply is parsed as JSON (`output_parser: string` keeps it as text).
- a dialect-B `method` with `signature` and `args`: typed arguments converted from the
  parameters (dbus_types.py); the reply values become JSON values.

One connection per bus (session, system) is opened on first use and shared by every call. When
the bus goes away the connection is dropped and the next call opens a new one; a call checks that
the bus has not hung up on the connection before it sends anything (the event loop may not have
noticed yet), so a restarted bus costs no failed call. A call whose connection dies while it
waits for the reply is not retried, since the method may already have run: it fails with
SERVICE_UNAVAILABLE.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import select
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import anyio
from dbus_fast import AuthError, BusType, DBusFastError, InvalidAddressError, Message, MessageType
from dbus_fast.aio import MessageBus

from ..descriptor import Tool
from ..descriptor.dbus_signature import complete_types
from ..descriptor.model import DbusCall, DbusChannel
from ..errors import (
    AaiError,
    AppReportedError,
    ErrorCode,
    ExecutionTimeoutError,
    InvalidParamsError,
    ServiceUnavailableError,
)
from .answer_json import loads_answer
from .base import Invocation
from .dbus_types import DbusValueError, reply_to_json, to_dbus
from .wire import decode_response, encode_request

logger = logging.getLogger(__name__)

BusName = Literal["session", "system"]
BUS_DAEMON = "org.freedesktop.DBus"
DEFAULT_SYSTEM_ADDRESS = "unix:path=/var/run/dbus/system_bus_socket"
ADDRESS_VARIABLES: dict[BusName, str] = {
    "session": "DBUS_SESSION_BUS_ADDRESS",
    "system": "DBUS_SYSTEM_BUS_ADDRESS",
}
_NAME_NOT_ON_BUS = frozenset(
    {"org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner"}
)
_NO_REPLY = "org.freedesktop.DBus.Error.NoReply"
# What the bus daemon answers when starting a service on demand fails, or takes too long.
_ACTIVATION_FAILED = "org.freedesktop.DBus.Error.Spawn."
_ACTIVATION_TIMEOUT = frozenset({"org.freedesktop.DBus.Error.TimedOut", "org.freedesktop.DBus.Error.Timeout"})
_NOT_THERE = frozenset(
    {
        "org.freedesktop.DBus.Error.UnknownMethod",
        "org.freedesktop.DBus.Error.UnknownObject",
        "org.freedesktop.DBus.Error.UnknownInterface",
    }
)
_CONNECT_ERRORS = (OSError, EOFError, AuthError, InvalidAddressError, DBusFastError)
_CONNECTION_LOST = (OSError, EOFError)

Mode = Literal["execute", "json", "typed"]


@dataclass(frozen=True)
class _Plan:
    mode: Mode
    member: str
    signature: str
    body: list[Any]
    output_parser: Literal["json", "string"] | None


@dataclass
class _Connection:
    """The shared connection to one bus, for the event loop it was made on."""

    loop: asyncio.AbstractEventLoop
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    bus: MessageBus | None = None
    watcher: asyncio.Task[None] | None = None


class DbusExecutor:
    """Runs DBus tools. Safe to call concurrently: calls share one connection per bus.

    `environ` is where the bus addresses are read (DBUS_SESSION_BUS_ADDRESS,
    DBUS_SYSTEM_BUS_ADDRESS, else `$XDG_RUNTIME_DIR/bus` and the system bus's standard socket);
    default: the gateway's own environment, read when a connection is opened.
    """

    def __init__(self, *, environ: Mapping[str, str] | None = None, platform: str = sys.platform) -> None:
        self._environ = environ
        self._platform = platform
        self._connections: dict[BusName, _Connection] = {}

    # ------------------------------------------------------------------ Executor protocol

    def unavailable_reason(self, tool: Tool) -> str | None:
        channel = tool.channel
        if not isinstance(channel, DbusChannel):
            return f"the DBus executor cannot run {channel.type.value!r} tools"
        if self._platform == "win32":
            return "DBus is not available on Windows"
        if self.bus_address(channel.bus) is None:
            return (
                f"no {channel.bus} bus: {ADDRESS_VARIABLES[channel.bus]} is not set and there is no "
                "$XDG_RUNTIME_DIR/bus (start the gateway inside the desktop session, or set "
                f"{ADDRESS_VARIABLES[channel.bus]})"
            )
        return None

    async def execute(self, invocation: Invocation) -> Any:
        channel = self._channel(invocation)
        plan = _plan(invocation)
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
                bus = await self._bus(app_id, channel.bus)
                reply: Message | None = await bus.call(message)
        except _CONNECTION_LOST as exc:
            if deadline.expired():
                raise ExecutionTimeoutError(app_id, tool, invocation.tool.effective_timeout_ms) from None
            raise ServiceUnavailableError(
                app_id,
                f"the connection to the {channel.bus} bus was lost during the call to "
                f"{channel.service} {plan.member} ({_describe(exc)}); the method may or may not "
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
            raise _error_reply(invocation, channel, plan, reply)
        return _result(invocation, plan, reply)

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

    # ------------------------------------------------------------------ the bus

    def _parent_environ(self) -> Mapping[str, str]:
        return os.environ if self._environ is None else self._environ

    def bus_address(self, bus: BusName) -> str | None:
        environ = self._parent_environ()
        given = environ.get(ADDRESS_VARIABLES[bus])
        if given:
            return given
        if bus == "system":
            return DEFAULT_SYSTEM_ADDRESS
        runtime = environ.get("XDG_RUNTIME_DIR")
        if runtime and (Path(runtime) / "bus").is_socket():
            return f"unix:path={Path(runtime) / 'bus'}"
        return None

    async def _bus(self, app_id: str, bus: BusName) -> MessageBus:
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
            address = self.bus_address(bus)
            if address is None:
                raise ServiceUnavailableError(app_id, self._no_bus_advice(bus), bus=bus)
            try:
                opened = await MessageBus(bus_address=address, bus_type=_BUS_TYPES[bus]).connect()
            except _CONNECT_ERRORS as exc:
                raise ServiceUnavailableError(
                    app_id,
                    f"the {bus} bus at {address} cannot be reached ({_describe(exc)}). "
                    + self._no_bus_advice(bus),
                    bus=bus,
                    address=address,
                ) from exc
            logger.info("connected to the %s bus at %s as %s", bus, address, opened.unique_name)
            connection.bus = opened
            connection.watcher = loop.create_task(_watch(opened, bus, address))
            return opened

    @staticmethod
    def _no_bus_advice(bus: BusName) -> str:
        if bus == "session":
            return (
                "Start the gateway inside the desktop session, so that DBUS_SESSION_BUS_ADDRESS is "
                "set, or set DBUS_SESSION_BUS_ADDRESS to the bus address (`echo "
                "$DBUS_SESSION_BUS_ADDRESS` in a terminal of that session)"
            )
        return (
            "Check that the system bus is running (`systemctl status dbus`), or set DBUS_SYSTEM_BUS_ADDRESS"
        )

    @staticmethod
    def _channel(invocation: Invocation) -> DbusChannel:
        channel = invocation.tool.channel
        if not isinstance(channel, DbusChannel):
            raise AaiError(
                f"{invocation.app.id} {invocation.tool.name}: the DBus executor got a "
                f"{channel.type.value!r} tool",
                {"app": invocation.app.id, "tool": invocation.tool.name},
                ErrorCode.INTERNAL_ERROR,
            )
        if invocation.app.source.kind == "web":
            raise ServiceUnavailableError(
                invocation.app.id,
                "a descriptor fetched from the web cannot call services on this computer's bus "
                f"(DBus service {channel.service!r}, descriptor {invocation.app.source.location})",
                service=channel.service,
            )
        return channel


_BUS_TYPES: dict[BusName, BusType] = {"session": BusType.SESSION, "system": BusType.SYSTEM}


async def _watch(bus: MessageBus, name: BusName, address: str) -> None:
    """Logs when a connection ends (and collects its error, which asyncio would otherwise report
    as never retrieved)."""
    try:
        await bus.wait_for_disconnect()  # type: ignore[no-untyped-call]
    except Exception as exc:
        logger.info("the %s bus at %s closed the connection (%s)", name, address, _describe(exc))
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


def _describe(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


# --------------------------------------------------------------------------- requests


def _plan(invocation: Invocation) -> _Plan:
    call = invocation.tool.call
    if not isinstance(call, DbusCall):
        return _Plan("execute", "Execute", "s", [_request(invocation)], None)
    if call.signature is None:
        return _Plan("json", call.method, "s", [_request(invocation)], call.output_parser)
    body: list[Any] = []
    for name, type_code in zip(call.args, _signature_types(call.signature), strict=True):
        path = "/" + name.replace("~", "~0").replace("/", "~1")
        if name not in invocation.arguments:
            raise _invalid(invocation, path, f"the DBus method {call.method} needs {name!r} ({type_code})")
        try:
            body.append(to_dbus(invocation.arguments[name], type_code, path))
        except DbusValueError as exc:
            raise _invalid(invocation, exc.path, exc.message) from None
    return _Plan("typed", call.method, call.signature, body, call.output_parser)


@functools.lru_cache(maxsize=512)
def _signature_types(signature: str) -> tuple[str, ...]:
    return tuple(complete_types(signature))


def _request(invocation: Invocation) -> str:
    request = encode_request(invocation.request_id, invocation.tool.name, invocation.arguments)
    try:
        request.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise _invalid(invocation, "", f"text that is not valid Unicode ({exc.reason})") from None
    return request


def _invalid(invocation: Invocation, path: str, message: str) -> InvalidParamsError:
    return InvalidParamsError(invocation.app.id, invocation.tool.name, [{"path": path, "message": message}])


# --------------------------------------------------------------------------- replies


def _result(invocation: Invocation, plan: _Plan, reply: Message) -> Any:
    app_id, tool = invocation.app.id, invocation.tool.name
    text = reply.body[0] if reply.signature == "s" else None
    if plan.mode == "execute":
        if text is None:
            raise AaiError(
                f"{app_id} {tool}: Execute answered with DBus signature {reply.signature!r}; an "
                "AAI service answers with one string, the JSON response",
                {"app": app_id, "tool": tool, "reply_signature": reply.signature},
                ErrorCode.EXECUTION_FAILED,
            )
        return decode_response(text, app_id=app_id, tool=tool, request_id=invocation.request_id)
    if text is None or plan.output_parser == "string":
        return reply_to_json(reply.body)
    if plan.mode == "typed" and plan.output_parser is None:
        return text
    try:
        value = loads_answer(text, app_id=app_id, tool=tool)
    except ValueError as exc:
        raise AaiError(
            f"{app_id} {tool}: the reply of {plan.member} is not JSON ({exc}); the descriptor says "
            'output_parser "json". Use "string" for a plain text reply',
            {"app": app_id, "tool": tool, "output_start": text[:200]},
            ErrorCode.EXECUTION_FAILED,
        ) from exc
    if _is_response(value):
        return decode_response(text, app_id=app_id, tool=tool, request_id=invocation.request_id)
    return value


def _is_response(value: Any) -> bool:
    """An AAI JSON response (so a method answering like `Execute` can report errors too)."""
    return (
        isinstance(value, dict)
        and value.get("status") in ("success", "error")
        and ("result" in value or "error" in value)
    )


def _error_reply(invocation: Invocation, channel: DbusChannel, plan: _Plan, reply: Message) -> AaiError:
    app_id, tool = invocation.app.id, invocation.tool.name
    name = reply.error_name or "org.freedesktop.DBus.Error.Failed"
    text = reply.body[0] if reply.body and isinstance(reply.body[0], str) else ""
    if name in _NAME_NOT_ON_BUS and reply.sender == BUS_DAEMON and channel.service != BUS_DAEMON:
        return ServiceUnavailableError(
            app_id,
            f"the DBus service {channel.service!r} is not on the {channel.bus} bus: the app is not "
            f"running (or not installed). Start it and retry ({name}: {text})",
            service=channel.service,
            bus=channel.bus,
            dbus_error=name,
        )
    if reply.sender == BUS_DAEMON and channel.service != BUS_DAEMON:
        if name.startswith(_ACTIVATION_FAILED):
            return ServiceUnavailableError(
                app_id,
                f"the {channel.bus} bus tried to start the DBus service {channel.service!r} and failed "
                f"({name}: {text}); check that the app is installed correctly (its D-Bus service file), "
                "or start it yourself and retry",
                service=channel.service,
                bus=channel.bus,
                dbus_error=name,
            )
        if name in _ACTIVATION_TIMEOUT:
            return AaiError(
                f"{app_id} {tool}: the {channel.bus} bus started {channel.service} but it did not take "
                f"its name in time ({name}: {text})",
                {"app": app_id, "tool": tool, "dbus_error": name, "service": channel.service},
                ErrorCode.TIMEOUT,
            )
    if name == _NO_REPLY:
        return AaiError(
            f"{app_id} {tool}: {channel.service} did not answer {plan.member} and the bus gave up "
            f"waiting ({text})",
            {"app": app_id, "tool": tool, "dbus_error": name},
            ErrorCode.TIMEOUT,
        )
    hint = ""
    if name in _NOT_THERE:
        hint = (
            f"; check the descriptor's object path {channel.object_path!r}, interface "
            f"{channel.interface!r} and method {plan.member!r}"
        )
    return AppReportedError(app_id, tool, f"{name}: {text}{hint}", None, dbus_error=name, dbus_message=text)
