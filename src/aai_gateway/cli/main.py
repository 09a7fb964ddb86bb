"""`aai-gateway` command line: argument parsing and dispatch; errors become exit codes here."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from .. import __version__
from ..errors import AaiError, DescriptorError
from . import auth, cache, consent, diff, exec, guide, import_servers, scan, schema, serve, validate
from .common import LOGGING_OPTIONS, command_first, configure_logging
from .terminal import visible_output

EXIT_OK, EXIT_FAILED_CHECK, EXIT_USAGE = 0, 1, 2


def build_parser() -> argparse.ArgumentParser:
    return _parser_and_commands()[0]


def _parser_and_commands() -> tuple[argparse.ArgumentParser, set[str]]:
    """The parser, and the names of its commands."""
    parser = argparse.ArgumentParser(
        prog="aai-gateway",
        parents=[LOGGING_OPTIONS],
        description=(
            "AAI Gateway: discover applications from aai.json descriptors and expose them to agents "
            "over MCP with progressive disclosure."
        ),
    )
    parser.add_argument("--version", action="version", version=f"aai-gateway {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in (serve, scan, guide, exec, auth, consent, cache, import_servers, validate, diff, schema):
        module.register(commands)
    serve.add_serve_options(parser)  # `aai-gateway` alone serves, with the same options
    return parser, set(commands.choices or ())


def normalize_argv(argv: list[str], commands: set[str]) -> list[str]:
    """`--scan` is the seed's spelling of `scan`; a command may follow the options."""
    argv = ["scan" if arg == "--scan" else arg for arg in argv]
    return command_first(argv, commands)


def main(argv: Sequence[str] | None = None) -> int:
    parser, commands = _parser_and_commands()
    args = parser.parse_args(normalize_argv(list(sys.argv[1:] if argv is None else argv), commands))
    if args.command is None:
        args.handler = serve.run
    # Descriptor and cache text never reaches the terminal as control sequences (terminal.py);
    # serve's stdout is the MCP protocol and stays as it is.
    with visible_output(keep_stdout=args.handler is serve.run):
        configure_logging(args.log_level, args.log_file)
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    try:
        code: int = args.handler(args)
    except DescriptorError as exc:
        print(f"error: {exc.file} is not a usable descriptor:", file=sys.stderr)
        for problem in exc.problems:
            print(f"  {problem.render()}", file=sys.stderr)
        return EXIT_USAGE
    except AaiError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader went away (`aai-gateway scan | head`): stop quietly, as other tools do.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_FAILED_CHECK
    return code
