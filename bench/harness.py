"""What the benchmarks share: repeated measurements reported as median and range, interleaved
with their baselines, and the gateway in-process and as an MCP server.

Every benchmark runs each of its measurements `--repeat` times (REPEAT by default) round-robin:
round r runs every measurement once, so the subject and its baseline see the same moment of a
noisy machine. It prints the median with the range (the fastest and the slowest run), and ratios
of medians with the range of the ratios taken within one round.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import anyio
from mcp import Client, StdioServerParameters

from aai_gateway.auth.secrets import MemorySecretStore
from aai_gateway.cli.common import host_layout
from aai_gateway.consent import ConsentStore, load_config
from aai_gateway.consent.gate import ConsentGate
from aai_gateway.discovery import DiscoveryOptions, build_catalog, discovery_sources
from aai_gateway.executors.base import ExecutorSettings
from aai_gateway.executors.defaults import default_registry
from aai_gateway.service import Gateway
from aai_gateway.service.naming import app_tool_names

REPEAT = 5
_OWN_FOLDERS = tempfile.TemporaryDirectory(prefix="aai-bench-folders-")  # removed when the benchmark ends

Measurement = Callable[[], Awaitable[float]]
"""One full measurement: runs the workload once and returns the seconds it took."""

Key = TypeVar("Key", bound=Hashable)


@dataclass(frozen=True)
class Timing:
    """The seconds of each run of one measurement, in the order they were taken."""

    samples: tuple[float, ...]

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    @property
    def fastest(self) -> float:
        return min(self.samples)

    @property
    def slowest(self) -> float:
        return max(self.samples)

    def per(self, count: int) -> Timing:
        """Seconds per item when each run handled `count` items."""
        return Timing(tuple(sample / count for sample in self.samples))

    def ratio(self, baseline: Timing) -> float:
        return self.median / baseline.median

    def show(self, scale: float = 1e6, unit: str = "µs", digits: int = 0) -> str:
        """The median, then in brackets the fastest and the slowest run: `1,351 µs (1,340 to 1,380)`
        with an en dash."""
        median, fastest, slowest = (
            f"{value * scale:,.{digits}f}" for value in (self.median, self.fastest, self.slowest)
        )
        return f"{median} {unit} ({fastest}–{slowest})"

    def show_ratio(self, baseline: Timing) -> str:
        """The ratio of the medians, then in brackets the range of the ratios within one round."""
        rounds = [mine / theirs for mine, theirs in zip(self.samples, baseline.samples, strict=True)]
        return f"{self.ratio(baseline):.2f}x ({min(rounds):.2f}–{max(rounds):.2f})"


def round_robin(names: Sequence[Key], repeat: int) -> Iterator[Key]:
    """Every name once per round, each round starting one name later, so no measurement always
    runs first or always right after the same other one."""
    for round_number in range(repeat):
        shift = round_number % len(names)
        yield from [*names[shift:], *names[:shift]]


async def interleaved(measurements: Mapping[Key, Measurement], repeat: int) -> dict[Key, Timing]:
    samples: dict[Key, list[float]] = {name: [] for name in measurements}
    for name in round_robin(list(measurements), repeat):
        samples[name].append(await measurements[name]())
    return {name: Timing(tuple(taken)) for name, taken in samples.items()}


def interleaved_sync(measurements: Mapping[Key, Callable[[], float]], repeat: int) -> dict[Key, Timing]:
    samples: dict[Key, list[float]] = {name: [] for name in measurements}
    for name in round_robin(list(measurements), repeat):
        samples[name].append(measurements[name]())
    return {name: Timing(tuple(taken)) for name, taken in samples.items()}


def calls(count: int, one_call: Callable[[], Awaitable[object]], concurrency: int = 1) -> Measurement:
    """A measurement of `count` calls with `concurrency` of them in flight at once. Its first run
    starts with an untimed round of `concurrency` calls, to open connections and fill caches."""
    per_worker = [count // concurrency + (1 if i < count % concurrency else 0) for i in range(concurrency)]
    warm = False

    async def worker(calls_to_make: int) -> None:
        for _ in range(calls_to_make):
            await one_call()

    async def run_all(counts: list[int]) -> None:
        async with anyio.create_task_group() as tasks:
            for calls_to_make in counts:
                tasks.start_soon(worker, calls_to_make)

    async def measure() -> float:
        nonlocal warm
        if not warm:
            await run_all([1] * concurrency)
            warm = True
        start = time.perf_counter()
        await run_all(per_worker)
        return time.perf_counter() - start

    return measure


def add_repeat_option(parser: argparse.ArgumentParser) -> None:
    def at_least_one(text: str) -> int:
        value = int(text)
        if value < 1:
            raise argparse.ArgumentTypeError("must be at least 1")
        return value

    parser.add_argument(
        "--repeat",
        type=at_least_one,
        default=REPEAT,
        help=f"runs of each measurement, round-robin with the baselines (default {REPEAT})",
    )


def in_process_gateway(folder: Path, environ: Mapping[str, str]) -> Gateway:
    """The gateway over the descriptors in `folder`, consent from `folder/config.toml`."""
    sources = discovery_sources(host_layout(environ), DiscoveryOptions(paths=[folder], no_default_paths=True))
    consent = ConsentGate(ConsentStore(MemorySecretStore()), load_config(folder / "config.toml").config)
    return Gateway(
        build_catalog(sources), default_registry(ExecutorSettings(environ=environ)), consent=consent
    )


def private_folders() -> dict[str, str]:
    """The XDG folders of every gateway a benchmark starts: the benchmark's own, so that none
    reads the user's config or writes into their cache or consent decisions."""
    root = Path(_OWN_FOLDERS.name)
    names = ("XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME")
    return {name: str(root / name.lower()) for name in names}


def gateway_server(
    folder: Path, environ: Mapping[str, str], serve_args: Sequence[str] = ("--poll-interval", "0")
) -> StdioServerParameters:
    """`aai-gateway serve` over the descriptors in `folder` with `serve_args` (by default without
    polling for changes), its config.toml in `folder`, its cache and state the benchmark's."""
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "aai_gateway", "serve", "--no-default-paths", "--path", str(folder), *serve_args],
        env={**environ, **private_folders(), "AAI_GATEWAY_CONFIG": str(folder / "config.toml")},
    )


async def listed_tools(client: Client) -> set[str]:
    """Every tool name tools/list gives, all pages."""
    names: set[str] = set()
    cursor: str | None = None
    while True:
        page = await client.list_tools(cursor=cursor)
        names.update(tool.name for tool in page.tools)
        cursor = page.next_cursor
        if not cursor:
            return names


async def require_listed(client: Client, app_ids: Iterable[str]) -> None:
    """Stops the benchmark unless the gateway's tools/list shows an entry for each of `app_ids`:
    a generated descriptor the gateway skipped (invalid, or not found) would otherwise be
    measured as a quick error, or not at all."""
    listed = await listed_tools(client)
    missing = [app_id for app_id, name in app_tool_names(app_ids).items() if name not in listed]
    if missing:
        shown = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
        raise SystemExit(f"the gateway does not list {len(missing)} of the benchmark's apps: {shown}")


def require_entries(gateway: Gateway, app_ids: Iterable[str]) -> None:
    """The same for a gateway in this process: an entry for each of `app_ids`."""
    entries = {entry.app.id for entry in gateway.entries}
    missing = [app_id for app_id in app_ids if app_id not in entries]
    if missing:
        raise SystemExit(f"the gateway has no entry for {len(missing)} of the apps: {missing[:5]}")
