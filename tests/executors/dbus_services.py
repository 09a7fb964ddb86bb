"""DBus services the DBus executor tests call, exported from the test process on a private bus.

`AaiService` speaks the AAI `Execute(s) -> s` protocol; `TypedService` has ordinary typed
methods, as a desktop service not written for AAI would. Both record what they received.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated, Any

import anyio
from dbus_fast import DBusError, Message, MessageType, Variant
from dbus_fast.aio import MessageBus
from dbus_fast.annotations import (
    DBusBool,
    DBusDict,
    DBusDouble,
    DBusInt32,
    DBusInt64,
    DBusSignature,
    DBusStr,
    DBusUInt32,
)
from dbus_fast.service import ServiceInterface, dbus_method

SERVICE = "dev.aai.test.Service"
OBJECT_PATH = "/dev/aai/test/Service"
AAI_INTERFACE = "dev.aai.test.Service"
TYPED_INTERFACE = "dev.aai.test.Typed"

DBusStrings = Annotated[list[str], DBusSignature("as")]
DBusFlags = Annotated[tuple[bool, bytes], DBusSignature("(bay)")]
DBusInt64s = Annotated[list[int], DBusSignature("ax")]
DBusUInt64s = Annotated[list[int], DBusSignature("at")]
DBusWide = Annotated[tuple[list[int], list[int]], DBusSignature("(axat)")]


class AaiService(ServiceInterface):
    """`Execute`: echo (the params), fail (an AAI error), sleep, garbage (not JSON), raise (a
    DBus error reply). `senders`: the unique bus name of each caller, in order."""

    def __init__(self) -> None:
        super().__init__(AAI_INTERFACE)
        self.requests: list[str] = []
        self.senders: list[str] = []
        self.called = anyio.Event()

    @dbus_method()
    async def Execute(self, request: DBusStr) -> DBusStr:
        self.requests.append(request)
        self.called.set()
        parsed = json.loads(request)
        tool, params = parsed["tool"], parsed["params"]
        answer: dict[str, Any] = {"version": "1.0", "request_id": parsed["request_id"]}
        if tool == "sleep":
            await asyncio.sleep(params["seconds"])
        if tool == "fail":
            return json.dumps(
                {**answer, "status": "error", "error": {"code": "NOT_FOUND", "message": "no 7"}}
            )
        if tool == "garbage":
            return "this is not JSON"
        if tool == "raise":
            raise DBusError("dev.aai.test.Error.Broken", "the frobnicator broke")
        return json.dumps({**answer, "status": "success", "result": params}, ensure_ascii=False)


class TypedService(ServiceInterface):
    def __init__(self) -> None:
        super().__init__(TYPED_INTERFACE)
        self.received: list[Any] = []

    @dbus_method()
    def Echo(self, text: DBusStr) -> DBusStr:
        self.received.append(text)
        return text

    @dbus_method()
    def EchoAll(self, texts: DBusStrings) -> DBusStrings:
        self.received.append(texts)
        return texts

    @dbus_method()
    def Describe(self, hints: DBusDict) -> DBusDict:
        self.received.append(hints)
        return hints

    @dbus_method()
    def Add(self, left: DBusInt32, right: DBusUInt32) -> DBusInt64:
        self.received.append((left, right))
        return left + right

    @dbus_method()
    def Wide(self, signed: DBusInt64s, unsigned: DBusUInt64s) -> DBusWide:
        self.received.append((signed, unsigned))
        return (signed, unsigned)

    @dbus_method()
    def Flags(self) -> DBusFlags:
        return (True, b"\x00\x01\xff")

    @dbus_method()
    def Ratio(self, value: DBusDouble, negate: DBusBool) -> DBusDouble:
        return -value if negate else value

    @dbus_method()
    def Json(self, request: DBusStr) -> DBusStr:
        self.received.append(request)
        return json.dumps({"seen": json.loads(request)["params"]})

    @dbus_method()
    def Fail(self) -> DBusStr:
        raise DBusError("dev.aai.test.Error.Denied", "the user said no")

    @dbus_method()
    async def Sleep(self, seconds: DBusDouble) -> DBusStr:
        await asyncio.sleep(seconds)
        return "awake"


def variant_free(value: Any) -> Any:
    """What a service received, with every Variant unwrapped (checked independently of the
    gateway's own decoding): dictionaries, lists and plain values."""
    if isinstance(value, Variant):
        return variant_free(value.value)
    if isinstance(value, dict):
        return {key: variant_free(item) for key, item in value.items()}
    if isinstance(value, list):
        return [variant_free(item) for item in value]
    return value


def variant_signatures(hints: dict[str, Variant]) -> dict[str, str]:
    return {key: value.signature for key, value in hints.items()}


@asynccontextmanager
async def exported(address: str) -> AsyncIterator[tuple[AaiService, TypedService]]:
    """Both services at OBJECT_PATH under the name SERVICE, on their own connection."""
    bus = await MessageBus(bus_address=address).connect()
    aai, typed = AaiService(), TypedService()

    def record_sender(message: Message) -> None:
        if message.message_type == MessageType.METHOD_CALL and message.member == "Execute":
            aai.senders.append(message.sender)

    bus.add_message_handler(record_sender)
    bus.export(OBJECT_PATH, aai)
    bus.export(OBJECT_PATH, typed)
    await bus.request_name(SERVICE)
    try:
        yield aai, typed
    finally:
        bus.disconnect()
