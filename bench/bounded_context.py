"""Bounded context: what tools/list and guides cost an agent, by number of apps and of operations.

Run: .venv/bin/python bench/bounded_context.py

Apps are the search catalog's (`bench/data/search/catalog`, real names and descriptions of 99
apps), repeated with new ids to reach larger counts. Listings are serialized as MCP sends them
(`{"tools": [...]}`, camelCase, no nulls); tokens are estimated as characters / 4, like
`bench/context_cost.py`. Nothing here is timed: the figures are sizes and do not vary between runs.
"""

from __future__ import annotations

import json
import logging
import os
import statistics
import sys
from pathlib import Path
from typing import Any

import mcp_types as types

from aai_gateway.auth.secrets import MemorySecretStore
from aai_gateway.cli.common import host_layout
from aai_gateway.consent.gate import ConsentGate
from aai_gateway.consent.listing_config import DEFAULT_MAX_APPS, ListingConfig
from aai_gateway.consent.store import ConsentStore
from aai_gateway.descriptor import AppDescriptor, Source, load_text
from aai_gateway.discovery import Catalog, CatalogEntry, DiscoveryOptions, build_catalog, discovery_sources
from aai_gateway.executors.base import ExecutorSettings
from aai_gateway.executors.defaults import default_registry
from aai_gateway.guide import GUIDE_MAX_CHARS, render_guide
from aai_gateway.server.listing import list_tools
from aai_gateway.service import Gateway

CATALOG = Path(__file__).resolve().parent / "data" / "search" / "catalog"
COUNTS = (5, 10, 15, 20, 25, 30, 40, 50, 100, 200)


def wire_chars(tools: list[types.Tool]) -> int:
    payload = {"tools": [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in tools]}
    return len(json.dumps(payload, ensure_ascii=False))


def catalog_apps() -> list[AppDescriptor]:
    sources = discovery_sources(
        host_layout(os.environ), DiscoveryOptions(paths=[CATALOG], no_default_paths=True)
    )
    return build_catalog(sources).apps


def gateway_of(apps: list[AppDescriptor], listing: ListingConfig) -> Gateway:
    catalog = Catalog(entries=[CatalogEntry.of(app, "bench") for app in apps])
    registry = default_registry(ExecutorSettings(environ=os.environ))
    return Gateway(catalog, registry, consent=ConsentGate(ConsentStore(MemorySecretStore())), listing=listing)


def listable(apps: list[AppDescriptor]) -> list[AppDescriptor]:
    """The catalog apps that tools/list would list on this machine (their tools can run here)."""
    gateway = gateway_of(apps, ListingConfig(max_apps=10**5))
    return [gateway.descriptor_of(entry.app) for entry in gateway.entries]


def copies(apps: list[AppDescriptor], count: int) -> list[AppDescriptor]:
    """`count` apps: the catalog's, then the catalog's again under new ids."""
    return [
        apps[i % len(apps)].model_copy(update={"id": f"{apps[i % len(apps)].id}.copy{i // len(apps)}"})
        if i >= len(apps)
        else apps[i]
        for i in range(count)
    ]


def listing_table(apps: list[AppDescriptor]) -> None:
    print(f"tools/list with every app listed (entries from {len(apps)} catalog apps that run here)")
    print(f"{'apps':>6} {'chars':>9} {'~tokens':>9}")
    for count in COUNTS:
        chars = wire_chars(list_tools(gateway_of(copies(apps, count), ListingConfig(max_apps=10**5))))
        print(f"{count:>6} {chars:>9} {chars // 4:>9}")
    fixed = wire_chars(list_tools(gateway_of([], ListingConfig())))
    per_app = (
        wire_chars(list_tools(gateway_of(copies(apps, 200), ListingConfig(max_apps=10**5)))) - fixed
    ) / 200
    print(f"universal tools alone: {fixed} chars (~{fixed // 4} tokens); per app entry: {per_app:.0f} chars")
    print(f"default max_apps = {DEFAULT_MAX_APPS}")


def bounded_table(apps: list[AppDescriptor]) -> None:
    many = copies(apps, 10_000)
    pins = tuple(app.id for app in many[:40])
    for label, listing in (("no pins", ListingConfig()), ("40 pins", ListingConfig(pinned=pins))):
        gateway = gateway_of(many, listing)
        chars = wire_chars(list_tools(gateway))
        shown = len(gateway.entries)
        print(f"10,000 apps, {label}: {chars} chars (~{chars // 4} tokens), {shown} app entries listed")


def operation_app(apps: list[AppDescriptor], count: int, app_id: str) -> AppDescriptor:
    """An app with `count` operations, taken from the catalog's apps in turn (real descriptions
    and schemas), renamed so that names stay unique."""
    tools = [tool for app in apps for tool in app.tools]
    chosen = [
        tools[i % len(tools)].model_copy(update={"name": f"{tools[i % len(tools)].name}_{i}"})
        for i in range(count)
    ]
    return apps[0].model_copy(update={"id": app_id, "tools": tuple(chosen)})


def guide_table(apps: list[AppDescriptor]) -> None:
    sizes = sorted((len(render_guide(app, max_chars=10**9)), len(app.tools), app.id) for app in apps)
    print(f"guides of the {len(apps)} catalog apps, in full (chars, operations, app):")
    print(f"  median {sizes[len(sizes) // 2]}, largest {sizes[-1]} (~{sizes[-1][0] // 4} tokens)")
    per_operation = statistics.median(size / max(1, tools) for size, tools, _ in sizes)
    bound = f"{GUIDE_MAX_CHARS} chars (~{GUIDE_MAX_CHARS // 4} tokens)"
    print(f"  median chars per operation: {per_operation:.0f}; bound: {bound}")
    kept = sum(size <= GUIDE_MAX_CHARS for size, _, _ in sizes)
    print(f"  full guides within the bound: {kept} of {len(sizes)}")
    for count in (30, 60, 90, 150, 1000):
        app = operation_app(apps, count, f"dev.bench.ops{count}")
        full = len(render_guide(app, max_chars=10**9))
        bounded = len(render_guide(app))
        sizes_text = f"full {full:>8} chars (~{full // 4:>6} tokens), guide {bounded:>6} (~{bounded // 4})"
        print(f"  {count:>5} operations: {sizes_text}")


def hostile_guide() -> None:
    def chain(width: int = 10, depth: int = 8) -> dict[str, Any]:
        definitions = {}
        for level in range(depth):
            inner = {"$ref": f"#/definitions/d{level + 1}"} if level + 1 < depth else {"type": "string"}
            definitions[f"d{level}"] = {
                "type": "object",
                "properties": {f"f{level}_{i}": inner for i in range(width)},
                "required": [f"f{level}_{i}" for i in range(width)],
            }
        return {
            "type": "object",
            "definitions": definitions,
            "properties": {"root": {"$ref": "#/definitions/d0"}},
            "required": ["root"],
        }

    document = {
        "schemaVersion": "1.0",
        "version": "1.0.0",
        "platform": "web",
        "app": {
            "id": "dev.bench.hostile",
            "name": {"en": "Hostile"},
            "defaultLang": "en",
            "description": "x",
        },
        "execution": {"type": "http", "baseUrl": "https://hostile.example"},
        "tools": [
            {
                "name": "expand",
                "description": "ten references per level, eight levels",
                "parameters": chain(),
                "returns": chain(),
            }
        ],
    }
    loaded = load_text(json.dumps(document), Source(kind="file", location="hostile.json"), "linux")
    assert loaded.descriptor is not None
    size = len(render_guide(loaded.descriptor))
    print(
        f"one tool whose schemas expand by $ref (10 per level, 8 levels): guide {size} chars (~{size // 4})"
    )


def main() -> int:
    logging.disable(logging.WARNING)  # pins left out of a bounded list are the point here, not news
    apps = listable(catalog_apps())
    listing_table(apps)
    print()
    bounded_table(apps)
    print()
    guide_table(catalog_apps())
    print()
    hostile_guide()
    return 0


if __name__ == "__main__":
    sys.exit(main())
