"""DBus call overhead: N sequential `aai_exec` calls to DBus methods vs the same N calls made directly.

Run: .venv/bin/python bench/dbus_overhead.py [--calls 2000] [--mcp-calls 500] [--repeat 5]
Starts its own private dbus-daemon and the Tally example's service (examples/dev.aai.example.tally,
its own process). Two workloads:
  Execute    Tally `increment` through the AAI `Execute(s) -> s` protocol (JSON in, JSON out)
  typed      org.freedesktop.DBus `NameHasOwner(s) -> b` (typed argument, typed reply)
each measured as
  direct       a dbus-fast call of the same method on one connection (JSON encoded and decoded
               for Execute, as the gateway does): the baseline
  executor     DbusExecutor.execute alone (argument conversion, the call, reply decoding)
  in-process   Gateway.execute (resolution, argument validation, consent check, DBus executor)
  over MCP     an MCP client calling aai_exec on `aai-gateway serve` over stdio
all eight interleaved round by round.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
from dbus_fast import Message
from dbus_fast.aio import MessageBus
from mcp import Client

from aai_gateway.descriptor import Source, load_descriptor
from aai_gateway.executors import Invocation
from aai_gateway.executors.dbus import DbusExecutor
from aai_gateway.service import Caller
from harness import (
    Measurement,
    Timing,
    add_repeat_option,
    calls,
    gateway_server,
    in_process_gateway,
    interleaved,
)

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
APPS = ("dev.aai.example.tally", "org.freedesktop.DBus")
# (label, app, tool, args)
WORKLOADS: list[tuple[str, str, str, dict[str, Any]]] = [
    ("Execute", "dev.aai.example.tally", "increment", {"name": "bench", "by": 1}),
    ("typed", "org.freedesktop.DBus", "name_has_owner", {"name": "dev.aai.example.Tally"}),
]
BASELINE = "direct dbus-fast (baseline)"


BUS_CONFIG = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path={socket}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
"""


def start_bus(folder: Path) -> tuple[subprocess.Popen[bytes], str]:
    """A private bus (no service activation), so nothing on the desktop's own bus is touched."""
    config = folder / "bus.conf"
    config.write_text(BUS_CONFIG.format(socket=folder / "bus"), encoding="utf-8")
    daemon = subprocess.Popen(
        ["dbus-daemon", f"--config-file={config}", "--nofork", "--print-address=1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert daemon.stdout is not None
    return daemon, daemon.stdout.readline().decode().strip()


def start_service(address: str) -> subprocess.Popen[bytes]:
    script = EXAMPLES / "dev.aai.example.tally" / "tally_service.py"
    service = subprocess.Popen([sys.executable, str(script), "--address", address], stdout=subprocess.PIPE)
    assert service.stdout is not None
    if service.stdout.readline().strip() != b"ready":
        raise SystemExit("the Tally service did not start")
    return service


def direct_message(app: str, args: dict[str, Any]) -> Callable[[], Message]:
    if app == "org.freedesktop.DBus":
        return lambda: Message(
            destination="org.freedesktop.DBus",
            path="/org/freedesktop/DBus",
            interface="org.freedesktop.DBus",
            member="NameHasOwner",
            signature="s",
            body=[args["name"]],
        )
    request = json.dumps({"version": "1.0", "request_id": "bench", "tool": "increment", "params": args})
    return lambda: Message(
        destination="dev.aai.example.Tally",
        path="/dev/aai/example/Tally",
        interface="dev.aai.example.Tally",
        member="Execute",
        signature="s",
        body=[request],
    )


def invocation_of(app: str, tool: str, args: dict[str, Any]) -> Invocation:
    path = EXAMPLES / app / "aai.json"
    descriptor = load_descriptor(path.read_bytes(), Source(kind="file", location=str(path)), "linux")
    found = descriptor.tool(tool)
    assert found is not None
    return Invocation(descriptor, found, args, request_id="bench")


async def measure(
    address: str, folder: Path, count: int, mcp_count: int, repeat: int
) -> dict[str, dict[str, Timing]]:
    """Seconds per call, by workload and by way of calling; every one runs in every round."""
    environ = {**os.environ, "DBUS_SESSION_BUS_ADDRESS": address}
    bus = await MessageBus(bus_address=address).connect()
    executor = DbusExecutor(environ=environ)
    gateway = in_process_gateway(folder, environ)
    caller = Caller("bench")
    measurements: dict[tuple[str, str], Measurement] = {}
    async with Client(gateway_server(folder, environ)) as client:
        for label, app, tool, args in WORKLOADS:
            make = direct_message(app, args)
            invocation = invocation_of(app, tool, args)

            async def direct(make: Callable[[], Message] = make, app: str = app) -> object:
                reply = await bus.call(make())
                return json.loads(reply.body[0]) if app != "org.freedesktop.DBus" else reply.body[0]

            async def executor_alone(invocation: Invocation = invocation) -> object:
                return await executor.execute(invocation)

            async def in_process(app: str = app, tool: str = tool, args: dict[str, Any] = args) -> object:
                return await gateway.execute(app, tool, args, caller=caller)

            async def over_mcp(app: str = app, tool: str = tool, args: dict[str, Any] = args) -> object:
                result = await client.call_tool("aai_exec", {"app": app, "tool": tool, "args": args})
                assert not result.is_error, result
                return result

            measurements[label, BASELINE] = calls(count, direct)
            measurements[label, "DBus executor alone"] = calls(count, executor_alone)
            measurements[label, "gateway in-process"] = calls(count, in_process)
            measurements[label, "gateway over MCP stdio"] = calls(mcp_count, over_mcp)
        timings = await interleaved(measurements, repeat)
    await gateway.aclose()
    await executor.aclose()
    bus.disconnect()
    results: dict[str, dict[str, Timing]] = {label: {} for label, *_ in WORKLOADS}
    for (label, way), timing in timings.items():
        results[label][way] = timing.per(mcp_count if way == "gateway over MCP stdio" else count)
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--mcp-calls", type=int, default=500)
    add_repeat_option(parser)
    args = parser.parse_args(argv)
    if shutil.which("dbus-daemon") is None:
        raise SystemExit("dbus-daemon is not installed (Debian: apt install dbus)")
    with tempfile.TemporaryDirectory(prefix="aai-bench-", dir="/tmp") as tmp:
        folder = Path(tmp)
        for app in APPS:
            shutil.copy(EXAMPLES / app / "aai.json", folder / f"{app}.json")
        # The user trusts these apps in their config: consent is checked on every call without asking.
        allowed = ", ".join(json.dumps(app) for app in APPS)
        (folder / "config.toml").write_text(f"[consent.auto_allow]\napps = [{allowed}]\n", encoding="utf-8")
        daemon, address = start_bus(folder)
        service = start_service(address)
        try:
            results = anyio.run(measure, address, folder, args.calls, args.mcp_calls, args.repeat)
        finally:
            for process in (service, daemon):
                process.terminate()
                process.wait(timeout=10)
    print(
        f"sequential calls on a private bus ({args.calls} per run; {args.mcp_calls} over MCP); per call: "
        f"median (fastest–slowest) of {args.repeat} runs; ratios vs direct dbus-fast"
    )
    for label, rows in results.items():
        baseline = rows[BASELINE]
        print(f"{label}:")
        for way, timing in rows.items():
            print(f"  {way:<30}{timing.show():>26}  {timing.show_ratio(baseline):>20}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
