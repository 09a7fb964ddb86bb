#!/usr/bin/env python3
"""The DBus service behind examples/dev.aai.example.tally/aai.json: named counters, AAI-native.

It owns the name `dev.aai.example.Tally` on the session bus and exports one method,
`Execute(s) -> s`, on the object `/dev/aai/example/Tally`, interface `dev.aai.example.Tally`.
The gateway calls it with the JSON request and reads the JSON response:

    request:  {"version": "1.0", "request_id": "…", "tool": "increment", "params": {"name": "water"}}
    response: {"version": "1.0", "request_id": "…", "status": "success", "result": {…}}
          or  {"version": "1.0", "request_id": "…", "status": "error",
               "error": {"code": "NOT_FOUND", "message": "…"}}

Counters live in memory while the service runs. Needs `pip install dbus-fast`. Run it, then try:

    python3 tally_service.py &
    aai-gateway exec dev.aai.example.tally increment --args '{"name": "water"}' --path .
    busctl --user call dev.aai.example.Tally /dev/aai/example/Tally dev.aai.example.Tally \\
        Execute s '{"tool": "list", "params": {}}'

`--address ADDRESS` connects to another bus than the session bus (tests use a private one). It
prints `ready` on stdout once the name is owned, and stops on SIGINT or SIGTERM.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
from collections.abc import Callable
from typing import Any

from dbus_fast import RequestNameReply
from dbus_fast.aio import MessageBus
from dbus_fast.annotations import DBusStr
from dbus_fast.service import ServiceInterface, dbus_method

BUS_NAME = "dev.aai.example.Tally"
OBJECT_PATH = "/dev/aai/example/Tally"
INTERFACE = "dev.aai.example.Tally"
WIRE_VERSION = "1.0"


class TallyError(Exception):
    """Becomes an error response with this AAI code and message."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class Tally:
    """The app itself, free of DBus: one method per tool, taking the tool's params."""

    def __init__(self) -> None:
        self.counters: dict[str, int] = {}

    def increment(self, params: dict[str, Any]) -> dict[str, Any]:
        name = str(params["name"])
        self.counters[name] = self.counters.get(name, 0) + int(params.get("by", 1))
        return {"name": name, "value": self.counters[name]}

    def get(self, params: dict[str, Any]) -> dict[str, Any]:
        name = str(params["name"])
        if name not in self.counters:
            raise TallyError("NOT_FOUND", f"no counter named {name!r}; increment creates one")
        return {"name": name, "value": self.counters[name]}

    def list(self, params: dict[str, Any]) -> list[dict[str, Any]]:
        return [{"name": name, "value": value} for name, value in sorted(self.counters.items())]

    def reset(self, params: dict[str, Any]) -> dict[str, Any]:
        name = str(params["name"])
        if self.counters.pop(name, None) is None:
            raise TallyError("NOT_FOUND", f"no counter named {name!r}")
        return {"name": name, "value": 0}


class TallyInterface(ServiceInterface):
    """The AAI side: decode the request, run the tool, encode the response. Never raises."""

    def __init__(self, app: Tally) -> None:
        super().__init__(INTERFACE)
        self.tools: dict[str, Callable[[dict[str, Any]], Any]] = {
            "increment": app.increment,
            "get": app.get,
            "list": app.list,
            "reset": app.reset,
        }

    @dbus_method(name="Execute")
    def execute(self, request: DBusStr) -> DBusStr:
        request_id = None
        try:
            parsed = json.loads(request)
            request_id = parsed.get("request_id")
            tool = self.tools.get(parsed.get("tool"))
            if tool is None:
                known = ", ".join(sorted(self.tools))
                raise TallyError("UNKNOWN_TOOL", f"no tool {parsed.get('tool')!r}; tools: {known}")
            result = tool(parsed.get("params") or {})
            answer: dict[str, Any] = {"status": "success", "result": result}
        except TallyError as exc:
            answer = {"status": "error", "error": {"code": exc.code, "message": exc.message}}
        except (ValueError, KeyError, TypeError) as exc:
            answer = {"status": "error", "error": {"code": "INVALID_PARAMS", "message": repr(exc)}}
        response = {"version": WIRE_VERSION, "request_id": request_id, **answer}
        return json.dumps(response, ensure_ascii=False)


async def serve(address: str | None) -> int:
    bus = await MessageBus(bus_address=address).connect()
    bus.export(OBJECT_PATH, TallyInterface(Tally()))
    reply = await bus.request_name(BUS_NAME)
    if reply != RequestNameReply.PRIMARY_OWNER:
        print(f"{BUS_NAME} is already owned by another process", file=sys.stderr)
        return 1
    print("ready", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    bus_gone = loop.create_task(bus.wait_for_disconnect())  # type: ignore[no-untyped-call]
    bus_gone.add_done_callback(lambda _: stop.set())
    await stop.wait()
    bus.disconnect()
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description="The Tally example's DBus service")
    parser.add_argument("--address", help="bus address (default: the session bus)")
    return asyncio.run(serve(parser.parse_args().address))


if __name__ == "__main__":
    sys.exit(main())
