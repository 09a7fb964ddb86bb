"""MCP servers made apps the way `aai-gateway import` makes them, for bench/mcp_proxy.py.

A Claude Desktop configuration listing the servers is written to a file, read and planned by the
import itself (`importing.read_config`, `plan_import`: ids, names, descriptions, the `mcp`
execution), and each planned descriptor gets the server's tools declared in it (what a tool
snapshot holds: name, description, `inputSchema` as parameters, `outputSchema` as returns,
annotations), then is written to `<folder>/<id>/aai.json`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aai_gateway.importing import read_config
from aai_gateway.importing.conversion import ImportSettings
from aai_gateway.importing.plan import plan_import

HINTS = ("title", "readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")


@dataclass(frozen=True)
class Server:
    """A server as a client's configuration names it, and the tools it lists (as MCP writes them)."""

    name: str
    command: str
    args: Sequence[str]
    tools: Sequence[Mapping[str, Any]]


def descriptor_tool(tool: Mapping[str, Any]) -> dict[str, Any]:
    """One tool of a server's tools/list as a tool of an `mcp` descriptor."""
    declared: dict[str, Any] = {"name": tool["name"], "parameters": tool["inputSchema"]}
    if "description" in tool:
        declared["description"] = tool["description"]
    if "outputSchema" in tool:
        declared["returns"] = tool["outputSchema"]
    annotations = {key: value for key, value in tool.get("annotations", {}).items() if key in HINTS}
    if "title" in tool:
        annotations.setdefault("title", tool["title"])
    if annotations:
        declared["annotations"] = annotations
    return declared


def import_servers(folder: Path, servers: Sequence[Server]) -> dict[str, str]:
    """Writes one descriptor per server under `folder` and a `config.toml` that allows every
    app's tools without asking; returns the app id of each server, by name."""
    folder.mkdir(parents=True, exist_ok=True)
    config = folder / "claude_desktop_config.json"
    entries = {s.name: {"command": s.command, "args": list(s.args)} for s in servers}
    config.write_text(json.dumps({"mcpServers": entries}), encoding="utf-8")
    settings = ImportSettings(target_dir=folder, keyring=False, home=folder)
    plan = plan_import([read_config(config)], {}, settings)
    if plan.skipped or len(plan.written) != len(servers):
        reasons = [f"{s.server.name}: {s.reason}" for s in plan.skipped]
        raise SystemExit(f"the import did not plan every server: {reasons}")
    by_name = {s.name: s for s in servers}
    ids: dict[str, str] = {}
    for written in plan.written:
        server = by_name[written.server.name]
        document = {**written.document, "tools": [descriptor_tool(t) for t in server.tools]}
        written.path.parent.mkdir(parents=True, exist_ok=True)
        written.path.write_text(json.dumps(document, ensure_ascii=False), encoding="utf-8")
        ids[server.name] = written.app_id
    config.unlink()
    # The user trusts these apps in their config: consent is checked on every call without asking.
    allowed = ", ".join(json.dumps(app_id) for app_id in ids.values())
    (folder / "config.toml").write_text(f"[consent.auto_allow]\napps = [{allowed}]\n", encoding="utf-8")
    return ids
