"""`aai-gateway schema`: the JSON Schema of the recommended dialect, for editors."""

from __future__ import annotations

import argparse

from ..descriptor.schema_export import descriptor_json_schema
from .common import LOGGING_OPTIONS, print_json


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "schema",
        parents=[LOGGING_OPTIONS],
        help="print the JSON Schema of aai.json (camelCase dialect) for editors",
        description="Print the JSON Schema (Draft-07) that editors can use to validate aai.json as you type.",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    print_json(descriptor_json_schema())
    return 0
