"""Cold start: from spawning the gateway to the first tools/list answer, with 0 and N descriptors.

Run: .venv/bin/python bench/cold_start.py [--descriptors 1000] [--repeat 3]
Baseline measured in the same run: a minimal MCP server on the same SDK (bench/plain_mcp_server.py).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters

from scan_validate import write_descriptors

BENCH = Path(__file__).resolve().parent


async def first_list(server: StdioServerParameters) -> tuple[float, int]:
    start = time.perf_counter()
    async with Client(server, mode="legacy") as client:
        listed = await client.list_tools()
        return time.perf_counter() - start, len(listed.tools)


def gateway(folder: Path) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "aai_gateway",
            "serve",
            "--no-default-paths",
            "--path",
            str(folder),
            "--poll-interval",
            "0",
        ],
    )


async def best(server: StdioServerParameters, repeat: int) -> tuple[float, int]:
    runs = [await first_list(server) for _ in range(repeat)]
    return min(t for t, _ in runs), runs[0][1]


async def measure(count: int, repeat: int) -> list[tuple[str, float, int]]:
    plain = StdioServerParameters(
        command=sys.executable, args=[str(BENCH / "plain_mcp_server.py"), "http://127.0.0.1:9"]
    )
    rows = [("minimal SDK server (baseline)", *await best(plain, repeat))]
    with tempfile.TemporaryDirectory(prefix="aai-bench-") as empty:
        rows.append(("gateway, 0 descriptors", *await best(gateway(Path(empty)), repeat)))
    with tempfile.TemporaryDirectory(prefix="aai-bench-") as full:
        write_descriptors(Path(full), count)
        rows.append((f"gateway, {count} descriptors", *await best(gateway(Path(full)), repeat)))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--descriptors", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    rows = anyio.run(measure, args.descriptors, args.repeat)
    baseline = rows[0][1]
    print(f"spawn → initialize → first tools/list answer, best of {args.repeat}")
    for label, seconds, tools in rows:
        print(
            f"{label:<34}{seconds * 1000:8.0f} ms  {seconds / baseline:5.2f}x  (tools/list: {tools} entries)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
