"""After `aai-gateway import` wrote its descriptors: each server is started once and its tools
taken as a snapshot, the way `aai-gateway cache refresh` takes one (a gateway built as for a call,
the secrets read from the keyring), so the gateway has them without starting the server again;
then the descriptor gets the description the server's own words make (`importing/description`).

Each server has `seconds` to list its tools, and a gateway of its own, closed (its server
stopped) before the next one starts. A server that cannot start is reported with the reason and
keeps its descriptor. A snapshot taken earlier for the same execution section still describes the
server when it is not started now (`--no-start`, or it failed).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Final

import anyio

from ..descriptor import AppDescriptor
from ..descriptor.shown_text import visible_text
from ..discovery.catalog import Skipped, load_file
from ..discovery.mcp_snapshots import SnapshotStore
from ..discovery.watch import CatalogWatcher
from ..errors import AaiError
from ..importing.apply import describe_from_snapshot
from ..importing.plan import Written
from .common import chosen_platform, heading, plural

START_SECONDS: Final = 30.0
_REASON_CHARS: Final = 400


def add_start_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--no-start",
        action="store_true",
        help="do not start the servers to take their tools (they are taken on first use, or by "
        "`aai-gateway cache refresh APP`)",
    )
    parser.add_argument(
        "--start-timeout",
        type=float,
        default=START_SECONDS,
        metavar="SECONDS",
        help=f"how long each server has to start and list its tools (default: {START_SECONDS:g})",
    )


def print_dry_run_note(written: Sequence[Written], *, start: bool) -> None:
    if written and start:
        print(
            heading("Tool snapshots")
            + "  not in a dry run: a real run starts each server once to take its tools and "
            "describe it from them (--no-start to skip)"
        )


def snapshot_servers(
    args: argparse.Namespace, written: Sequence[Written], target_dir: Path, *, start: bool, seconds: float
) -> None:
    """Start each server of `written` (unless `start` is false), keep its tools, describe it."""
    if not written:
        return
    from .cache import snapshot_store
    from .runtime import build_watcher

    store = snapshot_store(args)
    watcher: CatalogWatcher | None = None
    if start:
        discovery = argparse.Namespace(**vars(args))
        discovery.path, discovery.no_default_paths, discovery.dev = [str(target_dir)], True, False
        watcher = build_watcher(discovery)
        print(heading(f"Taking the tools of {plural(len(written), 'server')} (each at most {seconds:g} s)"))
    else:
        print(
            heading("Servers not started (--no-start)")
            + "  their tools are taken on first use, or with `aai-gateway cache refresh APP`"
        )
    for item in written:
        loaded = load_file(item.path, "imported", chosen_platform(args))
        if isinstance(loaded, Skipped):
            print(f"  {item.app_id}: failed: {loaded.reason}")
            continue
        app = loaded.descriptor
        if watcher is not None:
            print(f"  {item.app_id}: ", end="", flush=True)
            print(_take_snapshot(args, watcher, app, seconds), flush=True)
        _describe(item, app, store)


def _take_snapshot(
    args: argparse.Namespace, watcher: CatalogWatcher, app: AppDescriptor, seconds: float
) -> str:
    """`started, tools: N` or `failed: why`, once the server's tools are kept (or not)."""
    from .runtime import build_gateway

    async def take() -> str:
        gateway = build_gateway(args, watcher)
        try:
            with anyio.fail_after(seconds):
                entry = await gateway.refresh_snapshot(app)
        except TimeoutError:
            return f"failed: its server did not list its tools within {seconds:g} s"
        except AaiError as error:
            return f"failed: {_one_line(error.message)}"
        finally:
            await gateway.aclose()
        return f"started, tools: {len(entry.descriptor.tools)}"

    try:
        return anyio.run(take)
    except AaiError as error:  # building the gateway: a configuration it refuses
        return f"failed: {_one_line(error.message)}"


def _describe(item: Written, app: AppDescriptor, store: SnapshotStore) -> None:
    snapshot = store.load(app)
    if snapshot is None or snapshot.is_stale_for(app):
        return
    try:
        description = describe_from_snapshot(item, snapshot)
    except OSError as exc:
        print(f"error: {item.path}: cannot write its description: {exc.strerror or exc}", file=sys.stderr)
        return
    if description is not None:
        print(f"      described as: {description}")


def _one_line(text: str) -> str:
    """An error's message as one line: it may quote what the server wrote on its error stream."""
    return visible_text(text, max_chars=_REASON_CHARS, one_line=True)[0]
