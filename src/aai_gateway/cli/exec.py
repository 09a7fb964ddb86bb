"""`aai-gateway exec APP TOOL --args JSON`: run one operation the way `aai_exec` does."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import anyio

from ..errors import AaiError, UsageError
from .common import LOGGING_OPTIONS, add_discovery_options, add_gateway_options, print_json

CLI_CALLER_NAME = "aai-gateway CLI"


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "exec",
        parents=[LOGGING_OPTIONS],
        help="run one app operation and print its JSON result",
        description="Run an operation through the same checks and executors as aai_exec.",
    )
    parser.add_argument("app", metavar="APP")
    parser.add_argument("tool", metavar="TOOL")
    parser.add_argument(
        "--args", default="{}", metavar="JSON", help="the operation's arguments as a JSON object"
    )
    add_discovery_options(parser)
    add_gateway_options(parser)
    parser.set_defaults(handler=run)


def parse_arguments(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"--args is not JSON: {exc.msg} at column {exc.colno}", args=text) from exc


def run(args: argparse.Namespace) -> int:
    from ..executors import ToolResult
    from ..service import Caller, Gateway
    from .consent import TerminalPrompter
    from .runtime import build_gateway, build_watcher

    arguments = parse_arguments(args.args)
    gateway = build_gateway(args, build_watcher(args))

    async def call(gateway: Gateway) -> Any:
        try:
            return await gateway.execute(
                args.app, args.tool, arguments, caller=Caller(CLI_CALLER_NAME), prompters=[TerminalPrompter()]
            )
        finally:
            await gateway.aclose()

    try:
        result = anyio.run(call, gateway)
    except AaiError as exc:
        if isinstance(exc, UsageError):
            raise
        print(json.dumps(exc.to_payload(), ensure_ascii=False, indent=2), file=sys.stderr)
        return 1
    if isinstance(result, ToolResult):
        # An MCP server's own result, as MCP writes it: content blocks, structuredContent, and
        # isError (then the exit status is 1, like an operation's error)
        print_json(result.wire())
        return 1 if result.is_error else 0
    print_json(result)
    return 0
