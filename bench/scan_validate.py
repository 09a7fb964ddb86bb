"""Scan + validate + normalize N generated descriptors, against reading the same files with json.load.

Run: .venv/bin/python bench/scan_validate.py [--count 1000] [--repeat 5]
Both run interleaved round by round; prints the median time per descriptor with its range for
both, and their ratio (the gateway's cost of validation and normalization on top of simply
parsing the JSON).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from aai_gateway.bulk import without_cyclic_gc
from aai_gateway.cli.common import host_layout
from aai_gateway.discovery import DiscoveryOptions, build_catalog, discovery_sources
from harness import add_repeat_option, interleaved_sync


def _tool(rng: random.Random, index: int, camel: bool) -> dict[str, Any]:
    properties: dict[str, Any] = {
        "query": {"type": "string", "description": "Text to look for"},
        "limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 10},
        "mode": {"type": "string", "enum": ["fast", "full"]},
        "tags": {"type": "array", "items": {"type": "string"}},
        "filter": {"type": "object", "properties": {"since": {"type": "string", "format": "date"}}},
    }
    chosen = dict(rng.sample(sorted(properties.items()), k=rng.randint(2, 5)))
    name = f"tool{index}Action" if camel else f"tool_{index}_action"
    return {
        "name": name,
        "description": f"Performs action number {index} on the app's items.",
        "parameters": {"type": "object", "properties": chosen, "required": [next(iter(chosen))]},
    }


def descriptor(rng: random.Random, number: int) -> dict[str, Any]:
    dialect = number % 3
    app_id = f"dev.bench.app{number}"
    tools_a = [_tool(rng, i, camel=False) for i in range(rng.randint(3, 10))]
    if dialect == 0:
        return {
            "schemaVersion": "1.0",
            "version": "1.2.3",
            "platform": "linux",
            "app": {
                "id": app_id,
                "name": {"en": f"App {number}", "zh-CN": f"应用 {number}"},
                "defaultLang": "en",
                "description": "A generated app",
                "aliases": ["bench"],
            },
            "execution": {"type": "stdio", "command": "adapter", "args": ["--exec"]},
            "tools": [_tool(rng, i, camel=True) for i in range(rng.randint(3, 10))],
        }
    if dialect == 1:
        return {
            "schema_version": "1.0",
            "version": "1.0.0",
            "platform": "web",
            "app": {
                "id": app_id,
                "name": f"App {number}|应用 {number}",
                "description": "A generated web app",
            },
            "execution": {"type": "http", "base_url": f"https://app{number}.example.com/api"},
            "tools": tools_a,
        }
    for tool in tools_a:
        tool["method"] = "Call"
    return {
        "schema_version": "1.0",
        "appId": app_id,
        "name": f"App {number}",
        "description": "A generated desktop app",
        "version": "1.0",
        "platforms": {
            "linux": {
                "automation": "dbus",
                "service": f"dev.bench.App{number}",
                "object": f"/dev/bench/App{number}",
                "interface": f"dev.bench.App{number}",
                "tools": tools_a,
            }
        },
    }


def write_descriptors(directory: Path, count: int) -> int:
    rng = random.Random(20261122)
    total = 0
    for number in range(count):
        app_dir = directory / f"app{number:05d}"
        app_dir.mkdir()
        text = json.dumps(descriptor(rng, number), ensure_ascii=False, indent=2)
        (app_dir / "aai.json").write_text(text, encoding="utf-8")
        total += len(text.encode())
    return total


def plain_json_load(directory: Path) -> int:
    """The baseline: every file read and parsed by `json.load`, with the cyclic GC off as the
    gateway's scan has it (`bulk.without_cyclic_gc`; with it on, collections over the measuring
    process's own heap made this baseline up to 3x slower, and the ratio look better than it is)."""
    loaded = 0
    with without_cyclic_gc():
        for path in sorted(directory.glob("*/aai.json")):
            with path.open("rb") as handle:
                json.load(handle)
            loaded += 1
    return loaded


def gateway_scan(directory: Path) -> int:
    sources = discovery_sources(
        host_layout(os.environ), DiscoveryOptions(paths=[directory], no_default_paths=True)
    )
    catalog = build_catalog(sources, "linux")
    if catalog.skipped:
        raise SystemExit(f"benchmark descriptors were rejected: {catalog.skipped[0]}")
    return len(catalog.entries)


def seconds_for(action: Callable[[Path], int], directory: Path) -> Callable[[], float]:
    def measurement() -> float:
        start = time.perf_counter()
        action(directory)
        return time.perf_counter() - start

    return measurement


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--count", type=int, default=1000)
    add_repeat_option(parser)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="aai-bench-") as tmp:
        directory = Path(tmp)
        size = write_descriptors(directory, args.count)
        assert plain_json_load(directory) == gateway_scan(directory) == args.count
        timings = interleaved_sync(
            {
                "json.load (baseline)": seconds_for(plain_json_load, directory),
                "gateway scan+validate+normalize": seconds_for(gateway_scan, directory),
            },
            args.repeat,
        )
    baseline = timings["json.load (baseline)"]
    print(
        f"descriptors: {args.count} ({size / args.count / 1024:.1f} KiB average, 3 dialects); "
        f"median (fastest–slowest) of {args.repeat} runs"
    )
    for label, timing in timings.items():
        print(
            f"{label:<34}{timing.per(args.count).show(digits=1):>24}/descriptor  "
            f"{timing.show(1000, 'ms', 1):>26} total"
        )
    gateway = timings["gateway scan+validate+normalize"]
    print(f"ratio gateway/baseline: {gateway.show_ratio(baseline)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
