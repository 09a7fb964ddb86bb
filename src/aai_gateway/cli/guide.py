"""`aai-gateway guide APP`: the operation guide an agent gets from `app_<id>`."""

from __future__ import annotations

import argparse

import anyio

from .common import (
    LOGGING_OPTIONS,
    add_discovery_options,
    add_gateway_options,
    add_locale_option,
    user_locale,
)


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "guide",
        parents=[LOGGING_OPTIONS],
        help="print an app's operation guide (what app_<id> returns to agents)",
        description="Print the operation guide of an app, found by id, name, alias or URL.",
    )
    parser.add_argument("app", metavar="APP")
    add_discovery_options(parser)
    add_gateway_options(parser)
    add_locale_option(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from .runtime import build_gateway, build_watcher

    gateway = build_gateway(args, build_watcher(args))

    async def guide() -> str:
        try:  # an MCP server whose tools are not known yet is asked for them, then stopped
            return await gateway.guide_of(gateway.resolve(args.app), user_locale(args.locale))
        finally:
            await gateway.aclose()

    print(anyio.run(guide))
    return 0
