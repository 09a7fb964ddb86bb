"""MCP servers behind the gateway: call overhead against FastMCP's proxy, and the size of tools/list.

Run: ./scripts/bench (installs the `bench` extra, FastMCP), or
     .venv/bin/python bench/mcp_proxy.py [--calls 1000] [--concurrency 32] [--repeat 5] [--mode auto]

1. Calls. The upstream is a minimal SDK server whose one tool, `echo`, answers with its arguments
   (bench/echo_mcp_server.py), imported as an app (bench/mcp_apps.py). Measured in one run, each
   sequentially and with `concurrency` calls in flight, all interleaved round by round:
     direct        an SDK client calling `echo` on the server itself: the floor
     FastMCP       the same client calling `echo` on FastMCP's proxy of the server
                   (bench/fastmcp_proxy.py, `create_proxy`, served over stdio)
     gateway       the same client calling `aai_exec` on `aai-gateway serve` over stdio
     in-process    `Gateway.execute` in this process (resolve, validate, consent, mcp executor):
                   the gateway without the MCP hop in front
   Every middle runs in its own process and starts the upstream itself; the client negotiates
   the protocol generation (`--mode auto`) or is held to the 2025-11-25 handshake (`legacy`).
2. tools/list. Ten imported servers whose tools are the real tools/list of mcp-server-time,
   mcp-server-git and server-everything (bench/data/mcp-tools, bench/record_mcp_tools.py):
   the gateway's tools/list against every tool of the ten listed flat, as a client that has
   the ten servers configured directly sees them. Tokens estimated as characters / 4.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import sys
import tempfile
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import anyio
import mcp_types as types
from mcp import Client, StdioServerParameters

from aai_gateway.server.listing import list_tools
from aai_gateway.service import Caller
from harness import Timing, add_repeat_option, calls, gateway_server, in_process_gateway, interleaved
from mcp_apps import Server, import_servers
from process_cpu import child_pids, cpu_accounted

BENCH = Path(__file__).resolve().parent
DATA = BENCH / "data" / "mcp-tools"
PAYLOAD = {"text": "hello gateway", "count": 3, "tags": ["a", "b"]}
UPSTREAM = [sys.executable, str(BENCH / "echo_mcp_server.py")]

DIRECT = "direct SDK client (floor)"
FASTMCP = "FastMCP proxy over stdio"
GATEWAY = "gateway over MCP stdio"
IN_PROCESS = "gateway in-process"


@dataclass(frozen=True)
class Run:
    calls: int
    concurrency: int
    repeat: int
    mode: Literal["auto", "legacy"]


def echo_tools() -> list[dict[str, Any]]:
    from echo_mcp_server import ECHO  # noqa: PLC0415 (the upstream's own module, imported once)

    return [ECHO.model_dump(by_alias=True, mode="json", exclude_none=True)]


def fastmcp_proxy() -> StdioServerParameters:
    """FastMCP's defaults, but for its start-up line on stderr (it logs nothing per request)."""
    return StdioServerParameters(
        command=sys.executable,
        args=[str(BENCH / "fastmcp_proxy.py"), *UPSTREAM],
        env={**os.environ, "FASTMCP_LOG_LEVEL": "WARNING"},
    )


Cpu = dict[tuple[str, int], list[tuple[float, float]]]
"""CPU seconds of the middle process and of its upstream in each run, by way and concurrency."""


@dataclass
class Measured:
    timings: dict[str, dict[int, Timing]]
    protocols: dict[str, str]
    cpu: Cpu


async def measure_calls(folder: Path, app_id: str, run: Run) -> Measured:
    """Seconds per call by way of calling and concurrency, the protocol each front spoke, and the
    CPU time of the processes behind each front."""
    gateway = in_process_gateway(folder, os.environ)
    caller = Caller("bench")
    servers = {
        DIRECT: StdioServerParameters(command=UPSTREAM[0], args=UPSTREAM[1:]),
        FASTMCP: fastmcp_proxy(),
        GATEWAY: gateway_server(folder, os.environ),
    }
    async with AsyncExitStack() as stack:
        clients: dict[str, Client] = {}
        pids: dict[str, int] = {}
        for label, server in servers.items():
            before = child_pids()
            clients[label] = await stack.enter_async_context(Client(server, mode=run.mode))
            started = child_pids() - before
            if len(started) == 1:  # on Linux; elsewhere no CPU figures
                pids[label] = started.pop()

        async def call_direct() -> object:
            return checked(await clients[DIRECT].call_tool("echo", PAYLOAD))

        async def call_proxy() -> object:
            return checked(await clients[FASTMCP].call_tool("echo", PAYLOAD))

        async def call_gateway() -> object:
            arguments = {"app": app_id, "tool": "echo", "args": PAYLOAD}
            return checked(await clients[GATEWAY].call_tool("aai_exec", arguments))

        async def call_in_process() -> object:
            return await gateway.execute(app_id, "echo", PAYLOAD, caller=caller)

        ways = {DIRECT: call_direct, FASTMCP: call_proxy, GATEWAY: call_gateway, IN_PROCESS: call_in_process}
        for one_call in ways.values():  # every upstream started before any clock runs
            await one_call()
        cpu: Cpu = {}
        measurements = {}
        for label, one_call in ways.items():
            for level in (1, run.concurrency):
                measure = calls(run.calls, one_call, level)
                if label in pids:
                    measure = cpu_accounted(measure, pids[label], cpu.setdefault((label, level), []))
                measurements[label, level] = measure
        timings = await interleaved(measurements, run.repeat)
        protocols = {label: str(clients[label].protocol_version) for label in servers}
    await gateway.aclose()
    results: dict[str, dict[int, Timing]] = {label: {} for label in ways}
    for (label, level), timing in timings.items():
        results[label][level] = timing.per(run.calls)
    return Measured(results, protocols, cpu)


def checked(result: types.CallToolResult) -> types.CallToolResult:
    """Every way must give back the upstream's answer, or its timing means nothing."""
    if result.is_error or result.structured_content != PAYLOAD:
        raise SystemExit(f"a call did not come back as the upstream answered it: {result}")
    return result


def print_calls(measured: Measured, run: Run) -> None:
    levels = (1, run.concurrency)
    results = measured.timings
    floor, proxy, gateway = results[DIRECT], results[FASTMCP], results[GATEWAY]
    print(
        f"{run.calls} calls of `echo` per run; per call: median (fastest–slowest) of {run.repeat} runs; "
        "ratios vs the direct call"
    )
    print("protocol toward the client: " + ", ".join(f"{k} {v}" for k, v in measured.protocols.items()))
    print(f"{'':<29}{'sequential':>40}{f'{run.concurrency} in flight':>42}")
    for label, timings in results.items():
        cells = [f"{timings[c].show()} {timings[c].show_ratio(floor[c])}" for c in levels]
        print(f"{label:<29}{cells[0]:>40}{cells[1]:>42}")
    versus = [
        f"{gateway[c].show_ratio(proxy[c])} {'sequential' if c == 1 else f'with {c} in flight'}"
        for c in levels
    ]
    print("gateway over MCP vs FastMCP's proxy: " + ", ".join(versus))
    faster = all(gateway[c].median < proxy[c].median for c in levels)
    print(f"goal (gateway faster than FastMCP's proxy in every column): {'met' if faster else 'NOT met'}")
    if measured.cpu:
        print("CPU per call, median of the runs: the process the client talks to + the upstream it started")
        for label in (DIRECT, FASTMCP, GATEWAY):
            cells = []
            for level in levels:
                samples = measured.cpu.get((label, level), [])
                middle, upstream = (
                    statistics.median(s[i] for s in samples) / run.calls * 1e6 for i in (0, 1)
                )
                cells.append(f"{middle:,.0f} + {upstream:,.0f} µs" if upstream else f"{middle:,.0f} µs")
            print(f"{label:<29}{cells[0]:>40}{cells[1]:>42}")


# ---------------------------------------------------------------------------- tools/list


def recorded(name: str) -> list[dict[str, Any]]:
    tools: list[dict[str, Any]] = json.loads((DATA / f"{name}.json").read_text(encoding="utf-8"))["tools"]
    return tools


def ten_servers() -> list[Server]:
    """The three real servers and seven more configured like them (git for four repositories,
    two more of each of the others), as a user with ten servers might have them."""
    runs = {
        "time": ("uvx", ["mcp-server-time"]),
        "git": ("uvx", ["mcp-server-git", "--repository"]),
        "everything": ("npx", ["-y", "@modelcontextprotocol/server-everything"]),
    }
    kinds = ["time", "git", "everything", "git", "everything", "time", "git", "everything", "time", "git"]
    servers = []
    for index, kind in enumerate(kinds):
        command, args = runs[kind]
        name = kind if index < 3 else f"{kind}-{index}"
        if kind == "git":
            args = [*args, f"/home/ada/src/project-{index}"]
        servers.append(Server(name, command, args, recorded(kind)))
    return servers


def wire_size(tools: list[dict[str, Any]]) -> int:
    return len(json.dumps({"tools": tools}, ensure_ascii=False).encode())


def stand_ins(folder: Path, programs: list[str]) -> dict[str, str]:
    """The environment with `programs` on PATH as stand-ins that do nothing: the listing starts no
    server, but the gateway lists only apps whose program it finds, as on a machine that has them."""
    folder.mkdir()
    for program in programs:
        path = folder / program
        path.write_text("#!/bin/sh\nexit 1\n", encoding="utf-8")
        path.chmod(0o755)
    return {**os.environ, "PATH": os.pathsep.join([str(folder), os.environ.get("PATH", os.defpath)])}


def measure_listing(folder: Path) -> None:
    servers = ten_servers()
    ids = import_servers(folder / "apps", servers)
    gateway = in_process_gateway(folder / "apps", stand_ins(folder / "bin", ["uvx", "npx"]))
    listed = [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in list_tools(gateway)]
    gateway_bytes = wire_size(listed)
    flat = [dict(tool) for server in servers for tool in server.tools]
    flat_bytes = wire_size(flat)
    print(
        f"{len(servers)} imported servers, {len(flat)} tools (real tools/list of mcp-server-time, "
        "mcp-server-git, server-everything)"
    )

    def row(label: str, size: int) -> None:
        print(f"{label:<52}{size:>9,} bytes  ≈{size // 4:>7,} tokens")

    row("flat: every tool of the ten servers (baseline)", flat_bytes)
    row(f"gateway tools/list ({len(listed)} entries)", gateway_bytes)
    for kind in ("time", "git", "everything"):
        row(f"one guide, read on demand: {kind}", len(gateway.guide(ids[kind]).encode()))
    print(f"ratio gateway/flat: {gateway_bytes / flat_bytes:.1%}")
    largest = max(len(gateway.guide(ids[kind]).encode()) for kind in ("time", "git", "everything"))
    print(f"with the largest guide read: {(gateway_bytes + largest) / flat_bytes:.1%}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--mode", choices=["auto", "legacy"], default="auto", help="the client's protocol")
    parser.add_argument("--listing-only", action="store_true", help="only the tools/list sizes")
    add_repeat_option(parser)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="aai-bench-") as tmp:
        measure_listing(Path(tmp))
    if args.listing_only:
        return 0
    print()
    if importlib.util.find_spec("fastmcp") is None:
        print("FastMCP is not installed: run ./scripts/bench, or pip install -e '.[bench]'", file=sys.stderr)
        return 1
    run = Run(args.calls, args.concurrency, args.repeat, args.mode)
    with tempfile.TemporaryDirectory(prefix="aai-bench-") as tmp:
        folder = Path(tmp)
        ids = import_servers(folder, [Server("bench-echo", UPSTREAM[0], UPSTREAM[1:], echo_tools())])
        measured = anyio.run(measure_calls, folder, ids["bench-echo"], run)
    print_calls(measured, run)
    return 0


if __name__ == "__main__":
    sys.exit(main())
