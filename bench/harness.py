"""What the call benchmarks share: timing, the in-process gateway and the gateway as an MCP server."""

from __future__ import annotations

import sys
import time
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path

import anyio
from mcp import StdioServerParameters

from aai_gateway.auth.secrets import MemorySecretStore
from aai_gateway.cli.common import host_layout
from aai_gateway.consent import ConsentStore, load_config
from aai_gateway.consent.gate import ConsentGate
from aai_gateway.discovery import DiscoveryOptions, build_catalog, discovery_sources
from aai_gateway.executors.base import ExecutorSettings
from aai_gateway.executors.defaults import default_registry
from aai_gateway.service import Gateway

REPEAT = 3


async def timed(calls: int, one_call: Callable[[], Awaitable[object]], concurrency: int = 1) -> float:
    """Best of REPEAT: seconds for `calls` calls with `concurrency` of them in flight at once."""
    per_worker = [calls // concurrency + (1 if i < calls % concurrency else 0) for i in range(concurrency)]

    async def worker(count: int) -> None:
        for _ in range(count):
            await one_call()

    await one_call()  # warm up connections and caches
    best = float("inf")
    for _ in range(REPEAT):
        start = time.perf_counter()
        async with anyio.create_task_group() as tasks:
            for count in per_worker:
                tasks.start_soon(worker, count)
        best = min(best, time.perf_counter() - start)
    return best


def in_process_gateway(folder: Path, environ: Mapping[str, str]) -> Gateway:
    """The gateway over the descriptors in `folder`, consent from `folder/config.toml`."""
    sources = discovery_sources(host_layout(environ), DiscoveryOptions(paths=[folder], no_default_paths=True))
    consent = ConsentGate(ConsentStore(MemorySecretStore()), load_config(folder / "config.toml").config)
    return Gateway(
        build_catalog(sources), default_registry(ExecutorSettings(environ=environ)), consent=consent
    )


def gateway_server(folder: Path, environ: Mapping[str, str]) -> StdioServerParameters:
    """`aai-gateway serve` over the descriptors in `folder`, without polling for changes."""
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
        env={**environ, "AAI_GATEWAY_CONFIG": str(folder / "config.toml")},
    )
