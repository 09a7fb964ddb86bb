"""Cold start: from spawning the gateway to the first tools/list answer, with 0 and N descriptors.

Run: .venv/bin/python bench/cold_start.py [--descriptors 1000] [--repeat 5]
Baseline measured in the same run, interleaved round by round: a minimal MCP server on the same SDK
(bench/plain_mcp_server.py).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters

from harness import Measurement, Timing, add_repeat_option, interleaved, private_folders
from scan_validate import write_descriptors

BENCH = Path(__file__).resolve().parent
BASELINE = "minimal SDK server (baseline)"


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
        env=private_folders(),  # over the MCP SDK's default environment: HOME, PATH and a few more
    )


async def measure(count: int, repeat: int) -> tuple[dict[str, Timing], dict[str, int]]:
    """Seconds to the first answer, and how many entries it listed, by server."""
    plain = StdioServerParameters(
        command=sys.executable, args=[str(BENCH / "plain_mcp_server.py"), "http://127.0.0.1:9"]
    )
    listed: dict[str, int] = {}

    def start_to_list(label: str, server: StdioServerParameters) -> Measurement:
        async def measurement() -> float:
            seconds, listed[label] = await first_list(server)
            return seconds

        return measurement

    with (
        tempfile.TemporaryDirectory(prefix="aai-bench-") as empty,
        tempfile.TemporaryDirectory(prefix="aai-bench-") as full,
    ):
        write_descriptors(Path(full), count)
        servers = {
            BASELINE: plain,
            "gateway, 0 descriptors": gateway(Path(empty)),
            f"gateway, {count} descriptors": gateway(Path(full)),
        }
        timings = await interleaved(
            {label: start_to_list(label, server) for label, server in servers.items()}, repeat
        )
    return timings, listed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--descriptors", type=int, default=1000)
    add_repeat_option(parser)
    args = parser.parse_args(argv)
    timings, listed = anyio.run(measure, args.descriptors, args.repeat)
    baseline = timings[BASELINE]
    print(f"spawn → initialize → first tools/list answer; median (fastest–slowest) of {args.repeat} runs")
    for label, timing in timings.items():
        print(
            f"{label:<34}{timing.show(1000, 'ms'):>24}  {timing.show_ratio(baseline):>20}"
            f"  (tools/list: {listed[label]} entries)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
