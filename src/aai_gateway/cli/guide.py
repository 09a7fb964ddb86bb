"""`aai-gateway guide APP [--operations A,B]`: the operation guide an agent gets from `app_<id>`,
or the full details of chosen operations (what `app_<id>` answers with `operations`)."""

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
        description=(
            "Print the operation guide of an app, found by id, name, alias or URL. A big app's guide "
            "is an index; --operations prints the full details of the operations named."
        ),
    )
    parser.add_argument("app", metavar="APP")
    parser.add_argument(
        "--operations",
        type=_names,
        metavar="NAME[,NAME…]",
        help="the full details (parameters, example call) of these operations instead of the guide",
    )
    add_discovery_options(parser)
    add_gateway_options(parser)
    add_locale_option(parser)
    parser.set_defaults(handler=run)


def _names(text: str) -> list[str]:
    names = [name.strip() for name in text.split(",") if name.strip()]
    if not names:
        raise argparse.ArgumentTypeError("name at least one operation (comma-separated)")
    return names


def run(args: argparse.Namespace) -> int:
    from .runtime import build_gateway, build_watcher

    gateway = build_gateway(args, build_watcher(args))

    async def guide() -> str:
        try:  # an MCP server whose tools are not known yet is asked for them, then stopped
            app = gateway.resolve(args.app)
            locale = user_locale(args.locale)
            if args.operations:
                return await gateway.operations_of(app, args.operations, locale)
            return await gateway.guide_of(app, locale)
        finally:
            await gateway.aclose()

    print(anyio.run(guide))
    return 0
