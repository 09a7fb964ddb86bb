"""Call overhead: N `aai_exec` calls to a local HTTP endpoint vs the same N requests made otherwise.

Run: .venv/bin/python bench/call_overhead.py [--calls 1000] [--concurrency 32] [--repeat 5]
The endpoint (uvicorn, bench/echo_asgi.py) runs in its own process. Measured in one run:
  direct httpx        httpx.AsyncClient POST from this process, the first baseline
  direct raw asyncio  the same request written by hand on asyncio streams (plain_mcp_server's
                      RawHttpClient): what the request costs at the least
  gateway in-process  Gateway.execute (resolution, argument validation, consent, HTTP executor)
  plain MCP, httpx    an MCP client calling a minimal SDK server whose tool makes the same httpx
                      call (bench/plain_mcp_server.py): what any MCP server pays, the baseline
                      the gateway over MCP is held to
  plain MCP, raw      the same server making the request with the raw asyncio client: the
                      fastest honest way to do it from a server
  gateway over MCP    an MCP client calling aai_exec on `aai-gateway serve` over stdio
each sequentially and with `concurrency` calls in flight, all interleaved round by round
(bench/harness.py), reported as the median and the range of the runs. On Linux it also prints
the CPU time the server processes spent per call, which a busy machine disturbs far less than
wall-clock time. The benchmark stops unless the gateway lists the app it calls.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from pathlib import Path

import anyio
import httpx
from mcp import Client, StdioServerParameters

from aai_gateway.service import Caller
from harness import (
    Timing,
    add_repeat_option,
    calls,
    gateway_server,
    in_process_gateway,
    interleaved,
    require_entries,
    require_listed,
)
from plain_mcp_server import RawHttpClient
from process_cpu import child_pids, cpu_accounted

BENCH = Path(__file__).resolve().parent
APP_ID = "dev.bench.echo"
PAYLOAD = {"text": "hello gateway", "count": 3, "tags": ["a", "b"]}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def start_endpoint(port: int) -> subprocess.Popen[bytes]:
    command = [
        sys.executable,
        "-m",
        "uvicorn",
        "--app-dir",
        str(BENCH),
        "echo_asgi:app",
        "--port",
        str(port),
        "--log-level",
        "warning",
        "--no-access-log",
    ]
    process = subprocess.Popen(command)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return process
        time.sleep(0.05)
    process.kill()
    raise SystemExit("the benchmark endpoint did not start")


def write_descriptor(folder: Path, port: int) -> None:
    document = {
        "schemaVersion": "1.0",
        "version": "1.0.0",
        "platform": "linux",
        "app": {"id": APP_ID, "name": {"en": "Echo"}, "defaultLang": "en", "description": "Echo"},
        "execution": {"type": "http", "baseUrl": f"http://127.0.0.1:{port}"},
        "tools": [
            {
                "name": "echo",
                "description": "Echo the body",
                "execution": {"path": "/echo", "method": "POST"},
                "parameters": {
                    "type": "object",
                    "properties": {
                        "text": {"type": "string"},
                        "count": {"type": "integer"},
                        "tags": {"type": "array", "items": {"type": "string"}},
                    },
                    "required": ["text"],
                },
            }
        ],
    }
    (folder / "echo.json").write_text(json.dumps(document), encoding="utf-8")
    # The user trusts this app in their config: consent is checked on every call without asking.
    (folder / "config.toml").write_text(f'[consent.auto_allow]\napps = ["{APP_ID}"]\n', encoding="utf-8")


BASELINE = "direct httpx (baseline)"
RAW = "direct raw asyncio"
IN_PROCESS = "gateway in-process"
PLAIN = "plain MCP server, httpx (baseline 2)"
PLAIN_RAW = "plain MCP server, raw asyncio"
OVER_MCP = "gateway over MCP stdio"
OTHER_CODE = "gateway over MCP, --compare-src"
SERVERS = (PLAIN, PLAIN_RAW, OVER_MCP, OTHER_CODE)

Results = dict[str, dict[int, Timing]]
CpuSamples = dict[tuple[str, int], list[tuple[float, float]]]


async def measure(
    port: int, folder: Path, count: int, concurrency: int, repeat: int, *, compare_src: Path | None = None
) -> tuple[Results, CpuSamples]:
    """Seconds per call by way of calling and concurrency; every way runs in every round. Also
    the CPU seconds the MCP servers spent in each run (Linux)."""
    url = f"http://127.0.0.1:{port}/echo"
    servers = {
        PLAIN: StdioServerParameters(command=sys.executable, args=[str(BENCH / "plain_mcp_server.py"), url]),
        PLAIN_RAW: StdioServerParameters(
            command=sys.executable, args=[str(BENCH / "plain_mcp_server.py"), url, "--raw"]
        ),
        OVER_MCP: gateway_server(folder, os.environ),
    }
    if compare_src is not None:  # the same command, importing aai_gateway from there first
        servers[OTHER_CODE] = gateway_server(folder, {**os.environ, "PYTHONPATH": str(compare_src)})
    gateway = in_process_gateway(folder, os.environ)
    require_entries(gateway, [APP_ID])
    caller = Caller("bench")
    raw = RawHttpClient(url)
    clients: dict[str, Client] = {}
    pids: dict[str, int] = {}
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as client, AsyncExitStack() as stack:
        for label, server in servers.items():
            before = child_pids()
            clients[label] = await stack.enter_async_context(Client(server))
            started = child_pids() - before
            if len(started) == 1:  # on Linux; elsewhere no CPU figures
                pids[label] = started.pop()
        for label in (OVER_MCP, OTHER_CODE):
            if label in clients:
                await require_listed(clients[label], [APP_ID])

        async def direct() -> object:
            response = await client.post("/echo", json=PAYLOAD)
            return response.json()

        async def direct_raw() -> object:
            return await raw.post_json(PAYLOAD)

        async def in_process() -> object:
            return await gateway.execute(APP_ID, "echo", PAYLOAD, caller=caller)

        def tool_call(label: str, name: str, arguments: dict[str, object]) -> Callable[[], Awaitable[object]]:
            async def call() -> object:
                result = await clients[label].call_tool(name, arguments)
                assert not result.is_error, result
                return result

            return call

        ways: dict[str, Callable[[], Awaitable[object]]] = {
            BASELINE: direct,
            RAW: direct_raw,
            IN_PROCESS: in_process,
            PLAIN: tool_call(PLAIN, "echo", PAYLOAD),
            PLAIN_RAW: tool_call(PLAIN_RAW, "echo", PAYLOAD),
        }
        for label in (OVER_MCP, OTHER_CODE):
            if label in clients:
                ways[label] = tool_call(label, "aai_exec", {"app": APP_ID, "tool": "echo", "args": PAYLOAD})
        cpu: CpuSamples = {}
        measurements = {}
        for label, one_call in ways.items():
            for level in (1, concurrency):
                measurement = calls(count, one_call, level)
                if label in pids:
                    measurement = cpu_accounted(measurement, pids[label], cpu.setdefault((label, level), []))
                measurements[label, level] = measurement
        timings = await interleaved(measurements, repeat)
    await raw.aclose()
    await gateway.aclose()
    results: Results = {label: {} for label in ways}
    for (label, level), timing in timings.items():
        results[label][level] = timing.per(count)
    return results, cpu


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument(
        "--compare-src",
        type=Path,
        metavar="DIR",
        help="also measure the gateway whose package is in DIR/aai_gateway, over MCP, in the same "
        "rounds: another version of the code, e.g. `git archive <commit> src | tar -x -C /tmp/old` "
        "then --compare-src /tmp/old/src",
    )
    add_repeat_option(parser)
    args = parser.parse_args(argv)
    if args.compare_src is not None and not (args.compare_src / "aai_gateway").is_dir():
        parser.error(f"{args.compare_src} holds no aai_gateway package")
    port = free_port()
    endpoint = start_endpoint(port)
    try:
        with tempfile.TemporaryDirectory(prefix="aai-bench-") as tmp:
            write_descriptor(Path(tmp), port)
            run = functools.partial(measure, compare_src=args.compare_src)
            results, cpu = anyio.run(run, port, Path(tmp), args.calls, args.concurrency, args.repeat)
    finally:
        endpoint.terminate()
        endpoint.wait(timeout=10)
    report(results, cpu, args.calls, args.concurrency, args.repeat)
    return 0


def report(results: Results, cpu: CpuSamples, count: int, concurrency: int, repeat: int) -> None:
    levels = (1, concurrency)
    baseline, gateway = results[BASELINE], results[OVER_MCP]
    print(
        f"{count} calls per run, POST /echo on 127.0.0.1 (uvicorn); per call: median (fastest–slowest) "
        f"of {repeat} runs; ratios vs direct httpx (range: the ratios within one round)"
    )
    print(f"{'':<37}{'sequential':>40}{f'{concurrency} in flight':>42}")
    for label, timings in results.items():
        cells = [f"{timings[c].show()} {timings[c].show_ratio(baseline[c])}" for c in levels]
        print(f"{label:<37}{cells[0]:>40}{cells[1]:>42}")
    cpu_per_call = {key: Timing(tuple(own for own, _ in samples)).per(count) for key, samples in cpu.items()}
    for label in (PLAIN, PLAIN_RAW, OTHER_CODE):
        if label not in results:
            continue
        versus = [f"{gateway[c].show_ratio(results[label][c])} {_level(c)}" for c in levels]
        if all((name, c) in cpu_per_call for name in (OVER_MCP, label) for c in levels):
            for c in levels:
                mine, theirs = cpu_per_call[OVER_MCP, c], cpu_per_call[label, c]
                versus.append(f"CPU {mine.show_ratio(theirs)} {_level(c)}")
        print(f"gateway over MCP vs {label}: " + ", ".join(versus))
    measured = [label for label in SERVERS if all((label, c) in cpu_per_call for c in levels)]
    if measured:
        print("CPU time of the server process per call (its own; the gateway starts no children here):")
        for label in measured:
            cells = [f"{cpu_per_call[label, c].show()} {_level(c)}" for c in levels]
            print(f"  {label:<37}" + ", ".join(cells))


def _level(concurrency: int) -> str:
    return "sequential" if concurrency == 1 else f"with {concurrency} in flight"


if __name__ == "__main__":
    sys.exit(main())
