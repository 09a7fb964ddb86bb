"""Call overhead: N `aai_exec` calls to a local HTTP endpoint vs the same N requests made directly.

Run: .venv/bin/python bench/call_overhead.py [--calls 1000] [--concurrency 32] [--repeat 5]
The endpoint (uvicorn, bench/echo_asgi.py) runs in its own process. Measured in one run:
  direct       httpx.AsyncClient POST, the baseline
  in-process   Gateway.execute (resolution, argument validation, HTTP executor), no MCP
  plain MCP    an MCP client calling a minimal SDK server whose tool makes the same httpx call
               (bench/plain_mcp_server.py): what any MCP server pays, the second baseline
  over MCP     an MCP client calling aai_exec on `aai-gateway serve` over stdio
each sequentially and with `concurrency` calls in flight, all eight interleaved round by round.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
import httpx
from mcp import Client, StdioServerParameters

from aai_gateway.service import Caller
from harness import Timing, add_repeat_option, calls, gateway_server, in_process_gateway, interleaved

BENCH = Path(__file__).resolve().parent
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
        "app": {"id": "dev.bench.echo", "name": {"en": "Echo"}, "defaultLang": "en", "description": "Echo"},
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
    (folder / "config.toml").write_text('[consent.auto_allow]\napps = ["dev.bench.echo"]\n', encoding="utf-8")


BASELINE = "direct httpx (baseline)"
PLAIN = "plain MCP server (baseline 2)"
OVER_MCP = "gateway over MCP stdio"


async def measure(
    port: int, folder: Path, count: int, concurrency: int, repeat: int
) -> dict[str, dict[int, Timing]]:
    """Seconds per call by way of calling and concurrency; every way runs in every round."""
    plain = StdioServerParameters(
        command=sys.executable, args=[str(BENCH / "plain_mcp_server.py"), f"http://127.0.0.1:{port}/echo"]
    )
    gateway = in_process_gateway(folder, os.environ)
    caller = Caller("bench")
    async with (
        httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as client,
        Client(plain) as plain_client,
        Client(gateway_server(folder, os.environ)) as mcp_client,
    ):

        async def direct() -> object:
            response = await client.post("/echo", json=PAYLOAD)
            return response.json()

        async def in_process() -> object:
            return await gateway.execute("dev.bench.echo", "echo", PAYLOAD, caller=caller)

        async def plain_mcp() -> object:
            return await plain_client.call_tool("echo", PAYLOAD)

        async def over_mcp() -> object:
            result = await mcp_client.call_tool(
                "aai_exec", {"app": "dev.bench.echo", "tool": "echo", "args": PAYLOAD}
            )
            assert not result.is_error, result
            return result

        ways = {BASELINE: direct, "gateway in-process": in_process, PLAIN: plain_mcp, OVER_MCP: over_mcp}
        measurements = {
            (label, level): calls(count, one_call, level)
            for label, one_call in ways.items()
            for level in (1, concurrency)
        }
        timings = await interleaved(measurements, repeat)
    await gateway.aclose()
    results: dict[str, dict[int, Timing]] = {label: {} for label in ways}
    for (label, level), timing in timings.items():
        results[label][level] = timing.per(count)
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=32)
    add_repeat_option(parser)
    args = parser.parse_args(argv)
    port = free_port()
    endpoint = start_endpoint(port)
    try:
        with tempfile.TemporaryDirectory(prefix="aai-bench-") as tmp:
            write_descriptor(Path(tmp), port)
            results = anyio.run(measure, port, Path(tmp), args.calls, args.concurrency, args.repeat)
    finally:
        endpoint.terminate()
        endpoint.wait(timeout=10)
    levels = (1, args.concurrency)
    baseline, plain, gateway = results[BASELINE], results[PLAIN], results[OVER_MCP]
    print(
        f"{args.calls} calls per run, POST /echo on 127.0.0.1 (uvicorn); per call: median (fastest–slowest) "
        f"of {args.repeat} runs; ratios vs direct httpx"
    )
    print(f"{'':<31}{'sequential':>40}{f'{args.concurrency} in flight':>42}")
    for label, timings in results.items():
        cells = [f"{timings[c].show()} {timings[c].show_ratio(baseline[c])}" for c in levels]
        print(f"{label:<31}{cells[0]:>40}{cells[1]:>42}")
    versus = [
        f"{gateway[c].show_ratio(plain[c])} {'sequential' if c == 1 else f'with {c} in flight'}"
        for c in levels
    ]
    print("gateway over MCP vs plain MCP server: " + ", ".join(versus))
    return 0


if __name__ == "__main__":
    sys.exit(main())
