"""Context cost of tools/list: the gateway's one-entry-per-app listing vs listing every tool flat.

Run: .venv/bin/python bench/context_cost.py [--apps 50] [--tools 10]
Both listings are built from the same generated descriptors and serialized as MCP would send
them (`{"tools": [...]}`, camelCase, no nulls). Tokens are estimated as characters / 4.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import mcp_types as types

from aai_gateway.auth.secrets import MemorySecretStore
from aai_gateway.cli.common import host_layout
from aai_gateway.consent.gate import ConsentGate
from aai_gateway.consent.listing_config import ListingConfig
from aai_gateway.consent.store import ConsentStore
from aai_gateway.discovery import DiscoveryOptions, build_catalog, discovery_sources
from aai_gateway.executors.base import ExecutorSettings
from aai_gateway.executors.defaults import default_registry
from aai_gateway.server.listing import list_tools
from aai_gateway.service import Gateway

VERBS = ["list", "get", "create", "update", "delete", "search", "archive", "share", "export", "import"]
NOUNS = ["items", "projects", "notes", "events", "contacts", "files", "tasks", "messages", "invoices", "tags"]


def realistic_tool(app: int, index: int) -> dict[str, Any]:
    verb, noun = VERBS[index % len(VERBS)], NOUNS[(app + index) % len(NOUNS)]
    return {
        "name": f"{verb}_{noun}",
        "description": f"{verb.title()} {noun} in the workspace. Use when the user asks to {verb} {noun}.",
        "parameters": {
            "type": "object",
            "properties": {
                "workspace": {
                    "type": "string",
                    "description": "Workspace id, as returned by list_workspaces",
                },
                "query": {"type": "string", "description": f"Text to match against {noun} titles and bodies"},
                "limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 20},
                "sort": {"type": "string", "enum": ["created", "updated", "title"], "default": "updated"},
                "fields": {"type": "array", "items": {"type": "string"}, "description": "Fields to return"},
            },
            "required": ["workspace"],
        },
    }


def write_apps(folder: Path, apps: int, tools: int) -> None:
    for app in range(apps):
        document = {
            "schemaVersion": "1.0",
            "version": "1.0.0",
            "platform": "web",
            "app": {
                "id": f"com.example.app{app:02d}",
                "name": {"en": f"Example App {app}", "zh-CN": f"示例应用 {app}"},
                "defaultLang": "en",
                "description": f"Team workspace number {app}: projects, notes and tasks",
                "aliases": [f"app{app}", "workspace"],
            },
            "execution": {"type": "http", "baseUrl": f"https://app{app}.example.com/api"},
            "tools": [realistic_tool(app, i) for i in range(tools)],
        }
        (folder / f"app{app:02d}.json").write_text(json.dumps(document), encoding="utf-8")


def wire_size(tools: list[types.Tool]) -> int:
    payload = {"tools": [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in tools]}
    return len(json.dumps(payload, ensure_ascii=False).encode())


def flat_listing(gateway: Gateway) -> list[types.Tool]:
    """What a client sees when every operation of every app is its own MCP tool."""
    return [
        types.Tool(
            name=f"{entry.app.id.replace('.', '_')}__{tool.name}"[:64],
            description=tool.description,
            input_schema=tool.parameters,
        )
        for entry in gateway.entries
        for tool in gateway.descriptor_of(entry.app).tools
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--apps", type=int, default=50)
    parser.add_argument("--tools", type=int, default=10)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="aai-bench-") as tmp:
        write_apps(Path(tmp), args.apps, args.tools)
        sources = discovery_sources(
            host_layout(os.environ), DiscoveryOptions(paths=[Path(tmp)], no_default_paths=True)
        )
        catalog = build_catalog(sources)
    consent = ConsentGate(ConsentStore(MemorySecretStore()))  # nothing runs: listing only
    registry = default_registry(ExecutorSettings(environ=os.environ))
    # Every app listed: the cost of one line per app; then the default [listing] (bounded above 20).
    gateway = Gateway(catalog, registry, consent=consent, listing=ListingConfig(max_apps=args.apps))
    default = Gateway(catalog, registry, consent=consent)
    gateway_bytes = wire_size(list_tools(gateway))
    flat_bytes = wire_size(flat_listing(gateway))
    guide_bytes = len(gateway.guide(gateway.entries[0].app.id).encode())
    default_bytes = wire_size(list_tools(default))
    print(f"{args.apps} apps x {args.tools} tools")

    def row(label: str, size: int) -> None:
        print(f"{label:<40}{size:>9} bytes  ~{size // 4:>7} tokens")

    row("flat: every tool listed (baseline)", flat_bytes)
    row("gateway tools/list, every app listed", gateway_bytes)
    row("gateway tools/list, default [listing]", default_bytes)
    row("one app guide, read on demand", guide_bytes)
    print(f"ratio gateway/flat, every app listed: {gateway_bytes / flat_bytes:.1%} (target <= 5%)")
    print(f"ratio gateway/flat, default [listing]: {default_bytes / flat_bytes:.1%}")
    print(f"with one guide read: {(gateway_bytes + guide_bytes) / flat_bytes:.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
