"""What a DBus call sends, and what its reply means (docs/dbus.md).

`plan_call` turns an invocation into the method call: `Execute(s)` with the JSON request of wire.py,
a dialect-B method with the JSON request as its one string, or typed arguments converted from
the parameters (dbus_types.py). `result` reads a reply as the tool's result; `error_reply` turns
a DBus error into the gateway's error (the service is not running, could not be started, did
not answer, or answered with an error of its own).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from ..descriptor.dbus_signature import complete_types
from ..descriptor.model import DbusCall, DbusChannel
from ..errors import (
    AaiError,
    AppReportedError,
    ExecutionFailedError,
    InvalidParamsError,
    NoAnswerError,
    ServiceUnavailableError,
)
from .answer_json import loads_answer
from .base import Invocation
from .dbus_types import DbusValueError, reply_to_json, to_dbus
from .wire import decode_response, encode_request

if TYPE_CHECKING:
    from dbus_fast import Message

BUS_DAEMON = "org.freedesktop.DBus"
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

Mode = Literal["execute", "json", "typed"]


@dataclass(frozen=True)
class Plan:
    mode: Mode
    member: str
    signature: str
    body: list[Any]
    output_parser: Literal["json", "string"] | None


def plan_call(invocation: Invocation) -> Plan:
    call = invocation.tool.call
    if not isinstance(call, DbusCall):
        return Plan("execute", "Execute", "s", [_request(invocation)], None)
    if call.signature is None:
        return Plan("json", call.method, "s", [_request(invocation)], call.output_parser)
    body: list[Any] = []
    for name, type_code in zip(call.args, _signature_types(call.signature), strict=True):
        path = "/" + name.replace("~", "~0").replace("/", "~1")
        if name not in invocation.arguments:
            raise _invalid(invocation, path, f"the DBus method {call.method} needs {name!r} ({type_code})")
        try:
            body.append(to_dbus(invocation.arguments[name], type_code, path))
        except DbusValueError as exc:
            raise _invalid(invocation, exc.path, exc.message) from None
    return Plan("typed", call.method, call.signature, body, call.output_parser)


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


def result(invocation: Invocation, plan: Plan, reply: Message) -> Any:
    app_id, tool = invocation.app.id, invocation.tool.name
    text = reply.body[0] if reply.signature == "s" else None
    if plan.mode == "execute":
        if text is None:
            raise ExecutionFailedError(
                app_id,
                tool,
                f"Execute answered with DBus signature {reply.signature!r}; an "
                "AAI service answers with one string, the JSON response",
                reply_signature=reply.signature,
            )
        return decode_response(text, app_id=app_id, tool=tool, request_id=invocation.request_id)
    if text is None or plan.output_parser == "string":
        return reply_to_json(reply.body)
    if plan.mode == "typed" and plan.output_parser is None:
        return text
    try:
        value = loads_answer(text, app_id=app_id, tool=tool)
    except ValueError as exc:
        raise ExecutionFailedError(
            app_id,
            tool,
            f"the reply of {plan.member} is not JSON ({exc}); the descriptor says "
            'output_parser "json". Use "string" for a plain text reply',
            output_start=text[:200],
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


def error_reply(invocation: Invocation, channel: DbusChannel, plan: Plan, reply: Message) -> AaiError:
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
            return NoAnswerError(
                app_id,
                tool,
                f"the {channel.bus} bus started {channel.service} but it did not take "
                f"its name in time ({name}: {text})",
                dbus_error=name,
                service=channel.service,
            )
    if name == _NO_REPLY:
        return NoAnswerError(
            app_id,
            tool,
            f"{channel.service} did not answer {plan.member} and the bus gave up waiting ({text})",
            dbus_error=name,
        )
    hint = ""
    if name in _NOT_THERE:
        hint = (
            f"; check the descriptor's object path {channel.object_path!r}, interface "
            f"{channel.interface!r} and method {plan.member!r}"
        )
    return AppReportedError(app_id, tool, f"{name}: {text}{hint}", None, dbus_error=name, dbus_message=text)
