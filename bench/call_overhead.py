"""Call overhead: N `aai_exec` calls to a local HTTP endpoint vs the same N requests made directly.

Run: .venv/bin/python bench/call_overhead.py [--calls 1000] [--concurrency 32]
The endpoint (uvicorn, bench/echo_asgi.py) runs in its own process. Measured in one run:
  direct       httpx.AsyncClient POST, the baseline
  in-process   Gateway.execute (resolution, argument validation, HTTP executor), no MCP
  plain MCP    an MCP client calling a minimal SDK server whose tool makes the same httpx call
               (bench/plain_mcp_server.py): what any MCP server pays, the second baseline
  over MCP     an MCP client calling aai_exec on `aai-gateway serve` over stdio
each sequentially and with `concurrency` calls in flight.
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
from harness import REPEAT, gateway_server, in_process_gateway, timed

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


async def measure(port: int, folder: Path, calls: int, concurrency: int) -> dict[str, dict[int, float]]:
    results: dict[str, dict[int, float]] = {}
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as client:

        async def direct() -> object:
            response = await client.post("/echo", json=PAYLOAD)
            return response.json()

        results["direct httpx (baseline)"] = {c: await timed(calls, direct, c) for c in (1, concurrency)}

    gateway = in_process_gateway(folder, os.environ)
    caller = Caller("bench")

    async def in_process() -> object:
        return await gateway.execute("dev.bench.echo", "echo", PAYLOAD, caller=caller)

    results["gateway in-process"] = {c: await timed(calls, in_process, c) for c in (1, concurrency)}
    await gateway.aclose()

    plain = StdioServerParameters(
        command=sys.executable, args=[str(BENCH / "plain_mcp_server.py"), f"http://127.0.0.1:{port}/echo"]
    )
    async with Client(plain) as plain_client:

        async def plain_mcp() -> object:
            return await plain_client.call_tool("echo", PAYLOAD)

        results["plain MCP server (baseline 2)"] = {
            c: await timed(calls, plain_mcp, c) for c in (1, concurrency)
        }

    server = gateway_server(folder, os.environ)
    async with Client(server) as mcp_client:

        async def over_mcp() -> object:
            result = await mcp_client.call_tool(
                "aai_exec", {"app": "dev.bench.echo", "tool": "echo", "args": PAYLOAD}
            )
            assert not result.is_error, result
            return result

        results["gateway over MCP stdio"] = {c: await timed(calls, over_mcp, c) for c in (1, concurrency)}
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=32)
    args = parser.parse_args(argv)
    port = free_port()
    endpoint = start_endpoint(port)
    try:
        with tempfile.TemporaryDirectory(prefix="aai-bench-") as tmp:
            write_descriptor(Path(tmp), port)
            results = anyio.run(measure, port, Path(tmp), args.calls, args.concurrency)
    finally:
        endpoint.terminate()
        endpoint.wait(timeout=10)
    baseline = results["direct httpx (baseline)"]
    plain = results["plain MCP server (baseline 2)"]
    print(f"{args.calls} calls, best of {REPEAT}, POST /echo on 127.0.0.1 (uvicorn); ratios vs direct httpx")
    print(f"{'':<31}{'sequential':>20}{f'{args.concurrency} in flight':>22}")
    for label, times in results.items():
        cells = [
            f"{times[c] / args.calls * 1e6:7.0f} µs {times[c] / baseline[c]:5.2f}x"
            for c in (1, args.concurrency)
        ]
        print(f"{label:<31}{cells[0]:>20}{cells[1]:>22}")
    gateway = results["gateway over MCP stdio"]
    versus = [
        f"{gateway[c] / plain[c]:.2f}x {'sequential' if c == 1 else f'with {c} in flight'}" for c in plain
    ]
    print("gateway over MCP vs plain MCP server: " + ", ".join(versus))
    return 0


if __name__ == "__main__":
    sys.exit(main())
