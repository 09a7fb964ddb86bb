"""`aai-gateway [serve]`: the MCP server on stdio (what MCP clients start)."""

from __future__ import annotations

import argparse
import functools
import logging
import os
import sys

import anyio

from ..server.limits import DEFAULT_MAX_MESSAGE_BYTES, SMALLEST_MAX_MESSAGE_BYTES
from .common import (
    LOGGING_OPTIONS,
    add_discovery_options,
    add_gateway_options,
    add_locale_option,
)

logger = logging.getLogger(__name__)

TERMINAL_HINT = (
    "aai-gateway is an MCP server: it is now waiting for an MCP client on stdin (press Ctrl-C to stop).\n"
    "MCP clients (Claude Code, Cursor, VS Code, ...) start it themselves; see the README for their "
    "configuration.\nTo see it at work, run ./scripts/demo from a clone of the repository; to look "
    "around: aai-gateway scan, aai-gateway guide APP, aai-gateway exec APP TOOL --args '{...}'."
)


def add_serve_options(parser: argparse.ArgumentParser) -> None:
    add_discovery_options(parser)
    add_gateway_options(parser)
    add_locale_option(parser)
    parser.add_argument(
        "--poll-interval",
        type=float,
        default=2.0,
        metavar="SECONDS",
        help=(
            "descriptors added, changed or removed are noticed by the OS's file notifications; "
            "where those cannot be used (a warning says why), or with --force-polling, the "
            "gateway looks every SECONDS instead (0: never look for changes; default 2)"
        ),
    )
    parser.add_argument(
        "--force-polling",
        action="store_true",
        help=(
            "look for descriptor changes every --poll-interval seconds instead of waiting for "
            "file notifications: for descriptor folders on a network file system (NFS, SMB, "
            "sshfs) or WSL's /mnt drives, where changes made elsewhere send no notification"
        ),
    )
    parser.add_argument(
        "--max-message-bytes",
        type=_message_size,
        default=DEFAULT_MAX_MESSAGE_BYTES,
        metavar="BYTES",
        help=(
            "the longest JSON-RPC message read from the client; a longer one is skipped and "
            f"answered with an error (default {DEFAULT_MAX_MESSAGE_BYTES}, 4 MiB; at least "
            f"{SMALLEST_MAX_MESSAGE_BYTES})"
        ),
    )


def _message_size(text: str) -> int:
    try:
        size = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of bytes") from None
    if size < SMALLEST_MAX_MESSAGE_BYTES:
        raise argparse.ArgumentTypeError(
            f"{size} is too small: ordinary requests would not fit (at least {SMALLEST_MAX_MESSAGE_BYTES})"
        )
    return size


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "serve",
        parents=[LOGGING_OPTIONS],
        help="run the MCP server on stdio (the default when no command is given)",
        description="Run the MCP server on stdin/stdout. MCP clients start this; logs go to stderr.",
    )
    add_serve_options(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from ..bulk import without_cyclic_gc

    # What is imported and built before serving lives as long as the process (bulk.py)
    with without_cyclic_gc():
        from ..discovery.change_notices import ChangeNotices
        from ..server.app import GatewayServer, serve_stdio  # the MCP SDK is slow to import: only here
        from .runtime import build_gateway, build_watcher

        watcher = build_watcher(args)
        gateway = build_gateway(args, watcher, serving=True)
    for skipped in watcher.catalog.skipped:
        logger.warning("skipped %s: %s", skipped.path, skipped.reason)
    logger.info(
        "serving %d apps over stdio (%s); tools/list: %s",
        gateway.listing.listable,
        watcher.loads.last_counts.describe(),
        gateway.listing.summary()[0],
    )
    notices = ChangeNotices(
        watcher.sources,
        watcher.snapshots.root if watcher.snapshots is not None else None,
        poll_interval=args.poll_interval,
        force_polling=args.force_polling,
    )
    server = GatewayServer(gateway, watcher, args.poll_interval, notices)
    if sys.stdin.isatty():  # started by hand: nothing will come from a person typing here
        print(TERMINAL_HINT, file=sys.stderr, flush=True)
    anyio.run(functools.partial(serve_stdio, server, _exit_now, args.max_message_bytes))
    return 0


def _exit_now(status: int) -> None:
    """Exit without waiting for threads: the server stopped everything it started, but a thread
    may still be blocked reading stdin, and a normal exit would wait for it forever."""
    logging.shutdown()
    os._exit(status)
