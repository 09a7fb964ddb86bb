"""`aai-gateway scan`: what the gateway would offer, and everything it had to skip."""

from __future__ import annotations

import argparse
import dataclasses
import os
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import anyio

from ..descriptor import Tool
from ..descriptor.card import card_of
from ..descriptor.mcp_tools import mcp_channel, server_probe
from ..discovery import Catalog, CatalogEntry
from ..discovery.catalog import ServerToolsState, snapshot_age, time_since
from ..discovery.mcp_server_states import STATE_DIR, AppKey, ServerState, read_states
from ..executors.base import ExecutorSettings
from ..executors.defaults import default_registry
from ..service import Listing
from ..service.disclosure import listing_of
from .cache import cache_root, snapshot_store
from .common import (
    LOGGING_OPTIONS,
    add_discovery_options,
    add_locale_option,
    discovery_argv,
    heading,
    load_catalog,
    plural,
    print_json,
    unread_servers_note,
    user_locale,
)
from .tables import render_table


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "scan",
        parents=[LOGGING_OPTIONS],
        help="list discovered apps and every skipped file with its reason",
        description="Discover aai.json descriptors in every source and report what the gateway would offer.",
    )
    add_discovery_options(parser)
    add_locale_option(parser)
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from .runtime import user_config, web_discovery

    catalog = load_catalog(args, snapshot_store(args))
    locale = user_locale(args.locale)
    registry = default_registry(ExecutorSettings(environ=os.environ))
    servers = read_states(cache_root(args) / STATE_DIR)
    settings = user_config()
    web_apps = [card_of(app) for app in web_discovery(args).cached_apps()]
    listing = listing_of(registry, settings.listing, catalog.cards, web_apps)
    problems = [p.render() for p in settings.problems if p.key.startswith("listing")]
    try:
        if args.json:
            report = catalog_as_json(catalog, locale, registry.unavailable_reason, servers)
            print_json({**report, "listing": listing_json(listing, problems)})
        else:
            lines = [*listing.summary(), *(f"problem: {p}" for p in problems)]
            print(
                render_catalog(
                    catalog,
                    locale,
                    registry.unavailable_reason,
                    servers,
                    lines,
                    discovery=discovery_argv(args),
                )
            )
    finally:
        anyio.run(registry.aclose)
    return 0


def listing_json(listing: Listing, problems: Sequence[str]) -> dict[str, Any]:
    """What tools/list holds of the apps (`[listing]` in config.toml): its mode and why."""
    return {
        "mode": listing.mode,
        "max_apps": listing.settings.max_apps,
        "listable": listing.listable,
        "listed": [entry.app.id for entry in listing.entries],
        "pinned": list(listing.settings.pinned),
        "unknown_pins": list(listing.unknown_pins),
        "cannot_run_here": dict(listing.why_unlisted),  # of those pins: why
        "left_out": list(listing.left_out),
        "problems": list(problems),
    }


ReasonOf = Callable[[Tool], str | None]
"""Why a tool cannot run on this machine, or None when it can (`ExecutorRegistry.unavailable_reason`)."""
ServerStates = Mapping[AppKey, ServerState]
"""What the gateways running MCP servers keep of them (`discovery/mcp_server_states.py`)."""


def short_reason(reason: str) -> str:
    """The head of a reason, for a table cell: up to its first `: `, ` (`, `; ` or `, `."""
    return re.split(r": | \(|; |, ", reason, maxsplit=1)[0].strip() or reason


def runs_here(tools: Sequence[Tool], reason_of: ReasonOf, declared: Sequence[str] = ()) -> str:
    """`yes` when every tool can run here, `K/N tools` when some can, else the head of why the
    first cannot (for a multi-platform descriptor without tools here: the platforms it is for).
    The whole reasons follow the table (`unavailable_lines`)."""
    if not tools:
        return f"no: only for {', '.join(declared)}" if declared else "no tools"
    reasons = [reason_of(tool) for tool in tools]
    runnable = sum(reason is None for reason in reasons)
    if runnable == len(tools):
        return "yes"
    if runnable:
        return f"{runnable}/{len(tools)} tools"
    return "no: " + short_reason(next(r for r in reasons if r is not None))


def unavailable_lines(entry: CatalogEntry, reason_of: ReasonOf) -> list[str]:
    """Every reason a tool of the app cannot run here, whole, with the tools it stops."""
    by_reason: dict[str, list[str]] = {}
    for tool in entry.descriptor.tools:
        reason = reason_of(tool)
        if reason is not None:
            by_reason.setdefault(reason, []).append(tool.name)
    total = len(entry.descriptor.tools)
    lines = []
    for reason, names in by_reason.items():
        which = f"all {total} tools" if len(names) == total else ", ".join(names)
        lines.append(f"  {entry.descriptor.id} ({which}): {reason}")
    return lines


def _by_id(catalog: Catalog) -> list[CatalogEntry]:
    """The apps by id, each holding its full descriptor, read once: the table, the reasons
    below it and `--json` look at it many times, and the catalog keeps only the last few hundred
    read (`HELD_DESCRIPTORS`), so with thousands of apps every look read the file again."""
    entries = sorted(catalog.entries, key=lambda e: e.card.id)
    return [e if e.held is not None else dataclasses.replace(e, held=e.descriptor) for e in entries]


def render_catalog(
    catalog: Catalog,
    locale: str | None,
    reason_of: ReasonOf | None = None,
    servers: ServerStates | None = None,
    listing: Sequence[str] = (),
    *,
    discovery: Sequence[str] = (),
) -> str:
    """`reason_of` adds a RUNS HERE column (see `runs_here`); `servers` a SERVER column when
    there are MCP apps, and their servers' last errors below the table; `listing` a section on
    what tools/list holds of the apps (`Listing.summary`); `discovery`, the options that found
    the apps, for the commands it prints (`discovery_argv`)."""
    parts: list[str] = []
    entries = _by_id(catalog)
    with_servers = servers is not None and any(mcp_channel(e.descriptor) for e in entries)
    if entries:
        rows = [
            [
                e.descriptor.id,
                e.descriptor.names.lookup(locale),
                e.descriptor.platform or f"({', '.join(e.descriptor.declared_platforms)} only)",
                _execution(e),
                _tools_cell(e),
                *([_runs_here(e, reason_of)] if reason_of is not None else []),
                *([_server_cell(e, servers or {})] if with_servers else []),
                e.path,
            ]
            for e in entries
        ]
        headers = ["ID", "NAME", "PLATFORM", "EXECUTION", "TOOLS", "SOURCE"]
        if with_servers:
            headers.insert(5, "SERVER")
        if reason_of is not None:
            headers.insert(5, "RUNS HERE")
        parts.append(f"Apps ({len(entries)})\n")
        parts.append(render_table(headers, rows, keep={0}))
        why = [line for e in entries for line in unavailable_lines(e, reason_of)] if reason_of else []
        if why:
            parts.append(heading("Why some tools cannot run here") + "\n".join(why))
        errors = _last_errors(entries, servers or {})
        if errors:
            parts.append(heading(f"Last errors of MCP servers ({len(errors)})") + "\n".join(errors))
        unread = [  # those whose server can run here: `cache refresh --unread` reads them
            entry.card.id
            for entry in catalog.unread_servers
            if reason_of is None or _runs_here(entry, reason_of) == "yes"
        ]
        if unread:
            parts.append("\n" + unread_servers_note(unread, discovery))
    else:
        parts.append("No apps found. Add descriptors with --path DIR or see `aai-gateway scan --help`.")
    if listing:
        parts.append(
            heading("tools/list ([listing] in config.toml)") + "\n".join(f"  {line}" for line in listing)
        )
    if catalog.skipped:
        parts.append(heading(f"Skipped ({len(catalog.skipped)})"))
        for skipped in catalog.skipped:
            parts.append(f"  {skipped.path}  [{skipped.source_label}]")
            if len(skipped.problems) > 1:
                parts += [f"      {p.pointer or '/'}: {p.message}" for p in skipped.problems]
            else:
                parts.append(f"      {skipped.reason}")
    server_problems = [p for e in entries for p in e.server_problems]
    if server_problems:
        parts.append(heading(f"Tools of MCP servers ({plural(len(server_problems), 'problem')})"))
        parts.append("\n".join(f"  {p.render()}" for p in server_problems))
    warnings = [w for e in entries for w in e.warnings]
    if warnings:
        parts.append(heading(f"Warnings ({len(warnings)})"))
        parts.append("\n".join(f"  {w.render()}" for w in warnings))
    searched = [
        f"{s.label} {s.root} ({s.found} found)" if s.status == "ok" else f"{s.label} {s.root} ({s.status})"
        for s in catalog.sources
    ]
    parts.append(heading("Searched") + "\n".join(f"  {line}" for line in searched))
    return "\n".join(parts)


def catalog_as_json(
    catalog: Catalog,
    locale: str | None,
    reason_of: ReasonOf | None = None,
    servers: ServerStates | None = None,
) -> dict[str, Any]:
    """`reason_of` adds `runs_here` and `unavailable` (tool name → reason) to each app;
    `servers` adds `server` (transport, running, last error; None for apps that are not MCP
    servers)."""
    return {
        "apps": [
            {
                **(_availability(e, reason_of) if reason_of is not None else {}),
                "id": e.descriptor.id,
                "name": e.descriptor.names.lookup(locale),
                "names": e.descriptor.names.names,
                "default_lang": e.descriptor.names.default_lang,
                "description": e.descriptor.description,
                "aliases": list(e.descriptor.aliases),
                "version": e.descriptor.version,
                "dialect": e.descriptor.dialect,
                "platform": e.descriptor.platform,
                "declared_platforms": list(e.descriptor.declared_platforms),
                "execution": [t.value for t in e.descriptor.execution_types]
                or list(dict.fromkeys(s.declared_type for s in e.descriptor.sections[:1])),
                "tools": [t.name for t in e.descriptor.tools],
                "server_tools": _server_tools_json(e.server_tools),
                "server_problems": [p.as_dict() for p in e.server_problems],
                **({"server": _server_json(e, servers)} if servers is not None else {}),
                "source": e.path,
                "source_label": e.source_label,
                "warnings": [w.as_dict() for w in e.warnings],
            }
            for e in _by_id(catalog)
        ],
        "skipped": [
            {
                "path": s.path,
                "source_label": s.source_label,
                "reason": s.reason,
                "problems": [p.as_dict() for p in s.problems],
            }
            for s in catalog.skipped
        ],
        "sources": [
            {"label": s.label, "root": s.root, "pattern": s.pattern, "status": s.status, "found": s.found}
            for s in catalog.sources
        ],
    }


def _runs_here(entry: CatalogEntry, reason_of: ReasonOf) -> str:
    app = entry.descriptor
    probe = server_probe(app) if not app.tools_declared and not app.server_tools_read else None
    if probe is not None:  # its tools are not known: can its server run here?
        reason = reason_of(probe)
        return "yes" if reason is None else "no: " + short_reason(reason)
    return runs_here(app.tools, reason_of, app.declared_platforms)


def _availability(entry: CatalogEntry, reason_of: ReasonOf) -> dict[str, Any]:
    tools = entry.descriptor.tools
    unavailable = {tool.name: reason for tool in tools if (reason := reason_of(tool)) is not None}
    return {"runs_here": _runs_here(entry, reason_of), "unavailable": unavailable}


def _execution(entry: CatalogEntry) -> str:
    """The execution types of the app's tools; an app without tools here shows its declared one;
    an MCP server how it is reached (`mcp (stdio)`)."""
    app = entry.descriptor
    types = [t.value for t in app.execution_types]
    shown = ", ".join(types) or (app.sections[0].declared_type if app.sections else "-")
    transport = _transport(entry)
    return f"{shown} ({transport})" if transport else shown


def _transport(entry: CatalogEntry) -> str | None:
    channel = mcp_channel(entry.descriptor)
    if channel is None:
        return None
    return "stdio" if channel.command is not None else "http"


def _server_state(entry: CatalogEntry, servers: ServerStates) -> ServerState | None:
    return servers.get((str(entry.descriptor.binding), entry.descriptor.id))


def _server_cell(entry: CatalogEntry, servers: ServerStates) -> str:
    """`running` (in how many gateways, when more than one), `stopped`, `not started`; `-` for
    an app that is not an MCP server."""
    if _transport(entry) is None:
        return "-"
    state = _server_state(entry, servers)
    if state is None:
        return "not started"
    if state.running:
        return "running" + (f" ({state.running} gateways)" if state.running > 1 else "")
    return "stopped" + (", failed" if state.last_error and state.last_error.at >= state.latest.since else "")


def _last_errors(entries: Sequence[CatalogEntry], servers: ServerStates) -> list[str]:
    lines = []
    for entry in entries:
        state = _server_state(entry, servers)
        error = state.last_error if state is not None else None
        if error is not None:
            lines.append(
                f"  {entry.descriptor.id} ({time_since(error.at)} ago, {error.code}): {error.message}"
            )
    return lines


def _server_json(entry: CatalogEntry, servers: ServerStates) -> dict[str, Any] | None:
    transport = _transport(entry)
    if transport is None:
        return None
    state = _server_state(entry, servers)
    latest = state.latest if state is not None else None
    error = state.last_error if state is not None else None
    return {
        "transport": transport,
        "running": bool(state and state.running),
        "gateways": state.running if state is not None else 0,
        "since": latest.since if latest is not None else None,
        "pid": latest.pid if latest is not None and state is not None and state.running else None,
        "protocol": latest.protocol if latest is not None else None,
        "last_error": None
        if error is None
        else {"at": error.at, "code": error.code, "message": error.message},
    }


def _tools_cell(entry: CatalogEntry) -> str:
    """How many tools; for an app whose tools are its MCP server's, where they are from."""
    count = str(len(entry.descriptor.tools))
    state = entry.server_tools
    if state is None:
        return count
    if state.taken_at is None:
        return "- (read on first use)"
    if state.stale:
        return "- (stale snapshot)"
    return f"{count} (snapshot {snapshot_age(state)})"


def _server_tools_json(state: ServerToolsState | None) -> dict[str, Any] | None:
    if state is None:
        return None
    server = state.server
    return {
        "snapshot_taken_at": state.taken_at,
        "stale": state.stale,
        "listed": state.listed,
        "server": None
        if server is None
        else {"name": server.name, "version": server.version, "title": server.title},
    }
