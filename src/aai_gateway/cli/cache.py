"""`aai-gateway cache list|clear`: the descriptors `web_discover` fetched and keeps for 24 hours."""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from ..discovery.web_cache import WebCache, default_cache_root
from .common import LOGGING_OPTIONS, plural, print_json
from .tables import render_table

ENV_CACHE_DIR = "AAI_GATEWAY_CACHE_DIR"


def add_cache_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--cache-dir",
        default=None,
        metavar="DIR",
        help=f"web descriptor cache (default: ${ENV_CACHE_DIR}, else {default_cache_root()})",
    )


def cache_root(args: argparse.Namespace) -> Path:
    chosen = getattr(args, "cache_dir", None) or os.environ.get(ENV_CACHE_DIR)
    return Path(chosen) if chosen else default_cache_root()


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "cache",
        parents=[LOGGING_OPTIONS],
        help="list or clear the cached web descriptors",
        description="Web descriptors fetched by web_discover are cached for 24 hours.",
    )
    actions = parser.add_subparsers(dest="cache_action", metavar="ACTION", required=True)
    listing = actions.add_parser("list", help="show cached descriptors, their source and expiry")
    listing.add_argument("--json", action="store_true", help="machine-readable output")
    clearing = actions.add_parser("clear", help="remove cached descriptors (all, or one host)")
    clearing.add_argument("host", nargs="?", help="a host, origin or URL; all entries when omitted")
    for sub in (listing, clearing):
        add_cache_option(sub)
    parser.set_defaults(handler=run)


def _age(seconds: float) -> str:
    seconds = abs(seconds)
    if seconds < 3600:
        return f"{int(seconds // 60)} min"
    return f"{seconds / 3600:.1f} h"


def run(args: argparse.Namespace) -> int:
    cache = WebCache(cache_root(args))
    if args.cache_action == "clear":
        removed = cache.clear(args.host)
        target = args.host or "all hosts"
        print(f"removed {plural(removed, 'cached descriptor')} ({target}) from {cache.root}")
        return 0
    entries = cache.entries()
    if args.json:
        print_json(
            [
                {
                    "host": e.host,
                    "origin": e.origin,
                    "source_url": e.source_url,
                    "fetched_at": e.fetched_at,
                    "expires": e.expires,
                    "fresh": e.fresh,
                }
                for e in entries
            ]
        )
        return 0
    if not entries:
        print(f"The web descriptor cache is empty ({cache.root}).")
        return 0
    now = time.time()
    rows = [
        [
            e.origin,
            f"{_age(now - e.fetched_at)} ago",
            f"in {_age(e.expires - now)}" if e.fresh else f"expired {_age(now - e.expires)} ago",
            e.source_url,
        ]
        for e in entries
    ]
    print(render_table(["ORIGIN", "FETCHED", "EXPIRES", "SOURCE"], rows))
    print(f"\n{len(entries)} {'entry' if len(entries) == 1 else 'entries'} in {cache.root}")
    return 0
