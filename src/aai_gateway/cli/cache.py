"""`aai-gateway cache [list|clear|refresh]`: what the gateway keeps so it need not ask again —
the descriptors `web_discover` fetched (kept for 24 hours) and the tool lists of MCP servers
(`discovery/mcp_snapshots.py`), both under one cache directory."""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

import anyio

from ..descriptor import AppDescriptor
from ..descriptor.mcp_wire import MAX_TOOLS
from ..descriptor.quoting import listed
from ..discovery.card_cache import CardCache
from ..discovery.catalog import Catalog, CatalogEntry, ServerToolsState, snapshot_age
from ..discovery.mcp_snapshots import Snapshot, SnapshotStore
from ..discovery.scanner import describe_os_error
from ..discovery.web_cache import CacheInfo, WebCache, default_cache_root
from ..errors import AaiError, UsageError
from .common import LOGGING_OPTIONS, add_discovery_options, heading, load_catalog, plural, print_json
from .tables import render_table

ENV_CACHE_DIR = "AAI_GATEWAY_CACHE_DIR"


def add_cache_option(parser: argparse.ArgumentParser, *, inherited: bool = False) -> None:
    """`inherited`: as for `add_discovery_options`."""
    parser.add_argument(
        "--cache-dir",
        default=argparse.SUPPRESS if inherited else None,
        metavar="DIR",
        help=f"the gateway's cache (default: ${ENV_CACHE_DIR}, else {default_cache_root()})",
    )


def cache_root(args: argparse.Namespace) -> Path:
    chosen = getattr(args, "cache_dir", None) or os.environ.get(ENV_CACHE_DIR)
    return Path(chosen) if chosen else default_cache_root()


def snapshot_store(args: argparse.Namespace) -> SnapshotStore:
    """The tool snapshots of MCP servers, in the cache directory (`cache_root`)."""
    return SnapshotStore.in_cache(cache_root(args))


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "cache",
        parents=[LOGGING_OPTIONS],
        help="show, clear or refresh cached web descriptors and MCP servers' tool lists",
        description=(
            "Web descriptors fetched by web_discover are cached for 24 hours. The tools of an MCP "
            "server whose descriptor leaves them to the server are kept as a snapshot, so listing "
            "apps never starts the server; it is taken again when the server says its tools "
            "changed, when its descriptor's execution section changes, and by `cache refresh`."
        ),
    )
    add_cache_option(parser)
    add_discovery_options(parser)
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    actions = parser.add_subparsers(dest="cache_action", metavar="ACTION")
    listing = actions.add_parser("list", help="show cached descriptors and tool snapshots (the default)")
    listing.add_argument(
        "--json", action="store_true", default=argparse.SUPPRESS, help="machine-readable output"
    )
    add_discovery_options(listing, inherited=True)
    clearing = actions.add_parser("clear", help="remove cached descriptors and tool snapshots")
    clearing.add_argument(
        "target",
        nargs="?",
        metavar="HOST_OR_APP",
        help="a web host, origin or URL, or an app id (its tool snapshots); everything when omitted",
    )
    refreshing = actions.add_parser(
        "refresh",
        help="start MCP apps' servers and take a new snapshot of their tools",
        description=(
            "Start each app's MCP server, one after the other, and keep what it lists as the "
            "app's tools. A server that cannot start is reported and the others still are read."
        ),
    )
    refreshing.add_argument(
        "apps", nargs="*", metavar="APP", help="an app: id, name, alias or file:/path (several may be given)"
    )
    refreshing.add_argument(
        "--unread",
        action="store_true",
        help=(
            "also every MCP app whose server can run here and whose tools were never read "
            "(search knows those by name only)"
        ),
    )
    add_discovery_options(refreshing, inherited=True)
    for sub in (listing, clearing, refreshing):
        add_cache_option(sub, inherited=True)
    parser.set_defaults(handler=run, cache_action=None)


def run(args: argparse.Namespace) -> int:
    if args.cache_action == "clear":
        return _clear(args)
    if args.cache_action == "refresh":
        return _refresh(args)
    return _list(args)


# --------------------------------------------------------------------------- list


def _list(args: argparse.Namespace) -> int:
    web = WebCache(cache_root(args))
    store = snapshot_store(args)
    entries, snapshots = web.entries(), store.list()
    apps = _apps_by_binding(load_catalog(args)) if snapshots else {}
    cards = CardCache(cache_root(args), "")
    files, size = cards.size()
    if args.json:
        print_json(
            {
                "web": [_web_json(e) for e in entries],
                "mcp_snapshots": [_snapshot_json(s, apps.get((s.binding, s.app_id))) for s in snapshots],
                "descriptor_cache": {"path": str(cards.path), "files": files, "bytes": size},
            }
        )
        return 0
    now = time.time()
    if entries:
        print(heading(f"Web descriptors ({len(entries)}, {web.root})").lstrip("\n"))
        print(render_table(["ORIGIN", "FETCHED", "EXPIRES", "SOURCE"], [_web_row(e, now) for e in entries]))
    else:
        print(f"No web descriptors are cached ({web.root}).")
    if snapshots:
        rows = [_snapshot_row(s, apps.get((s.binding, s.app_id)), now) for s in snapshots]
        print(heading(f"Tool snapshots of MCP servers ({len(snapshots)}, {store.root})"))
        print(render_table(["APP", "SERVER", "TOOLS", "TAKEN", "STATE", "DESCRIPTOR"], rows, keep={0}))
    else:
        print(f"No tool snapshots of MCP servers are kept ({store.root}).")
    print(
        f"Descriptor cache: what {plural(files, 'descriptor file')} held, {size / 1e6:.1f} MB "
        f"({cards.path}); a file is read and checked again only when it changes"
    )
    return 0


def _apps_by_binding(catalog: Catalog) -> dict[tuple[str, str], AppDescriptor]:
    return {(str(e.descriptor.binding), e.descriptor.id): e.descriptor for e in catalog.entries}


def _state(snapshot: Snapshot, app: AppDescriptor | None) -> str:
    if app is None:
        return "no descriptor found"
    if app.tools_declared:
        return "unused: the descriptor declares its tools"
    return "stale: the descriptor changed" if snapshot.is_stale_for(app) else "current"


def _snapshot_row(snapshot: Snapshot, app: AppDescriptor | None, now: float) -> list[str]:
    age = snapshot_age(ServerToolsState(snapshot.taken_at), now)
    server = snapshot.server.describe() if snapshot.server is not None else "-"
    return [
        snapshot.app_id,
        server,
        # past MAX_TOOLS the server's pages were read no further: its count is not known
        str(snapshot.listed) if snapshot.listed <= MAX_TOOLS else f"> {MAX_TOOLS}",
        f"{age} ago",
        _state(snapshot, app),
        snapshot.binding,
    ]


def _snapshot_json(snapshot: Snapshot, app: AppDescriptor | None) -> dict[str, Any]:
    server = snapshot.server
    return {
        "app": snapshot.app_id,
        "binding": snapshot.binding,
        "taken_at": snapshot.taken_at,
        "listed": snapshot.listed,
        "tools": [t.get("name") if isinstance(t, dict) else None for t in snapshot.tools],
        "server": None
        if server is None
        else {"name": server.name, "version": server.version, "title": server.title},
        "state": _state(snapshot, app).split(":")[0],
    }


def _age(seconds: float) -> str:
    seconds = abs(seconds)
    if seconds < 3600:
        return f"{int(seconds // 60)} min"
    return f"{seconds / 3600:.1f} h"


def _web_row(e: CacheInfo, now: float) -> list[str]:
    return [
        e.origin,
        f"{_age(now - e.fetched_at)} ago",
        f"in {_age(e.expires - now)}" if e.fresh else f"expired {_age(now - e.expires)} ago",
        e.source_url,
    ]


def _web_json(e: CacheInfo) -> dict[str, Any]:
    return {
        "host": e.host,
        "origin": e.origin,
        "source_url": e.source_url,
        "fetched_at": e.fetched_at,
        "expires": e.expires,
        "fresh": e.fresh,
    }


# --------------------------------------------------------------------------- clear and refresh


def _clear(args: argparse.Namespace) -> int:
    web = WebCache(cache_root(args))
    store = snapshot_store(args)
    target: str | None = args.target
    try:
        if target is None:
            removed, forgotten = web.clear(), store.clear()
            CardCache(cache_root(args), "").clear()
        else:
            taken = [s for s in store.list() if s.app_id == target]
            forgotten = sum(store.forget(s) for s in taken)
            removed = 0 if taken else web.clear(target)
    except OSError as exc:  # a folder in a file's place, a folder not writable by this user, …
        where = exc.filename or cache_root(args)
        raise UsageError(
            f"could not clear the cache in {cache_root(args)}: {where} cannot be removed "
            f"({describe_os_error(exc)}); remove it yourself or make its folder writable by you, "
            "then clear again"
        ) from None
    what = target or "everything"
    also = "" if target else " and the descriptor cache (every descriptor file is read again)"
    print(
        f"removed {plural(removed, 'cached descriptor')} and {plural(forgotten, 'tool snapshot')} "
        f"({what}){also} from {cache_root(args)}"
    )
    return 0


def _refresh(args: argparse.Namespace) -> int:
    from .runtime import app_named_by_user, build_gateway, build_watcher

    if not args.apps and not args.unread:
        raise UsageError(
            "name the apps whose MCP servers to read (aai-gateway cache refresh APP ...), or "
            "read every server never read yet: aai-gateway cache refresh --unread"
        )
    gateway = build_gateway(args, build_watcher(args))
    chosen: dict[tuple[str, str], AppDescriptor] = {}
    for reference in args.apps:  # every name checked before any server starts
        app = app_named_by_user(gateway, reference, args)
        chosen.setdefault((str(app.binding), app.id), app)
    if args.unread:
        runnable = gateway.unread_servers()
        for app in runnable:
            chosen.setdefault((str(app.binding), app.id), app)
        elsewhere = sorted({e.card.id for e in gateway.catalog.unread_servers} - {a.id for a in runnable})
        if elsewhere:
            print(
                f"Not read, as their servers cannot run here ({listed(elsewhere)}): "
                "aai-gateway scan says why",
                file=sys.stderr,
            )
    apps = list(chosen.values())
    if not apps:
        print("Every MCP server's tools have been read: none to refresh.")
        return 0

    async def refresh_each() -> int:
        failed = 0
        try:
            for number, app in enumerate(apps, 1):
                if len(apps) > 1:  # a server may take seconds to start: say which one is
                    print(f"[{number}/{len(apps)}] {app.id}…", file=sys.stderr)
                try:
                    entry = await gateway.refresh_snapshot(app)
                except AaiError as exc:  # one server that cannot start stops no other
                    print(f"error: {exc.message}", file=sys.stderr)
                    failed += 1
                    continue
                _say_refreshed(app, entry)
        finally:
            await gateway.aclose()
        return failed

    failed = anyio.run(refresh_each)
    if failed and len(apps) > 1:
        print(f"{failed} of {len(apps)} MCP servers could not be read (above)", file=sys.stderr)
    return 2 if failed else 0


def _say_refreshed(app: AppDescriptor, entry: CatalogEntry) -> None:
    state: ServerToolsState | None = entry.server_tools
    server = state.server.describe() if state is not None and state.server is not None else "its MCP server"
    print(f"{app.id}: {plural(len(entry.descriptor.tools), 'tool')} from {server}")
    left_out = [p for p in entry.server_problems if p.severity == "error"]
    if entry.server_problems:
        print(
            heading(f"Problems ({len(entry.server_problems)}; {len(left_out)} tools left out)").lstrip("\n")
        )
        print("\n".join(f"  {p.pointer or '/'}: {p.message}" for p in entry.server_problems))
