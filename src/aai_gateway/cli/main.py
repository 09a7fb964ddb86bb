"""`aai-gateway` command line: argument parsing and dispatch; errors become exit codes here."""

from __future__ import annotations

import argparse
import contextlib
import errno
import importlib
import io
import os
import sys
from collections.abc import Sequence
from typing import Final, NoReturn, Protocol

from .. import __version__
from ..errors import AaiError, DescriptorError
from . import serve
from .common import LOGGING_OPTIONS, command_first, configure_logging
from .terminal import UnwritableOutputError, visible_output

EXIT_OK, EXIT_FAILED_CHECK, EXIT_USAGE = 0, 1, 2
COMMAND_MODULES: Final = {
    "serve": "serve",
    "scan": "scan",
    "guide": "guide",
    "exec": "exec",
    "search": "search",
    "auth": "auth",
    "consent": "consent",
    "cache": "cache",
    "import": "import_servers",
    "validate": "validate",
    "diff": "diff",
    "schema": "schema",
}
"""Each command and the module of this package that registers and runs it. A run imports the
module of its own command only (an MCP client starts `serve` often, and waits for it)."""


class _ParseError(Exception):
    pass


class _Writable(Protocol):
    def write(self, text: str, /) -> object: ...


class _Parser(argparse.ArgumentParser):
    """argparse's parser, but what it prints (help, the version, a usage error) reaches the
    stream or fails like any command's output: argparse drops a write that fails, and a full
    disk or a closed stdout would pass as success."""

    def _print_message(self, message: str, file: _Writable | None = None) -> None:
        if not message:
            return
        if file is None:  # argparse names its stream: None is a closed one (`>&-`)
            raise UnwritableOutputError(errno.EBADF, "it is closed")
        try:
            file.write(message)
            if isinstance(file, io.IOBase):
                file.flush()
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise UnwritableOutputError(exc.errno, exc.strerror) from exc

    def error(self, message: str) -> NoReturn:
        if sys.stderr is None:  # closed (`2>&-`): argparse would print the usage on stdout instead
            raise UnwritableOutputError(errno.EBADF, "it is closed")
        super().error(message)


class _TryingParser(_Parser):
    """A parser that raises instead of printing its error and exiting (the parser of one command
    is tried first; the full one then explains any mistake)."""

    def error(self, message: str) -> NoReturn:
        raise _ParseError(message)


def build_parser(
    only: str | None = None, kind: type[argparse.ArgumentParser] = _Parser
) -> argparse.ArgumentParser:
    """The parser of every command, or of the command `only`."""
    parser = kind(
        prog="aai-gateway",
        add_help=kind is not _TryingParser,  # help, however abbreviated, is the full parser's
        parents=[LOGGING_OPTIONS],
        description=(
            "AAI Gateway: discover applications from aai.json descriptors and expose them to agents "
            "over MCP with progressive disclosure."
        ),
    )
    parser.add_argument("--version", action="version", version=f"aai-gateway {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, module in COMMAND_MODULES.items():
        if only is None or name == only:
            importlib.import_module(f"{__package__}.{module}").register(commands)
    serve.add_serve_options(parser)  # `aai-gateway` alone serves, with the same options
    return parser


def normalize_argv(argv: list[str], commands: set[str]) -> list[str]:
    """`--scan` is the seed's spelling of `scan`; a command may follow the options."""
    argv = ["scan" if arg == "--scan" else arg for arg in argv]
    return command_first(argv, commands)


def parse(argv: list[str]) -> argparse.Namespace:
    """The arguments of `argv`, parsed by its command's parser alone when that parser takes them
    (no command and no help asked for: `serve`), else by the full parser."""
    argv = normalize_argv(argv, set(COMMAND_MODULES))
    command = argv[0] if argv and argv[0] in COMMAND_MODULES else None
    if command is not None or not {"-h", "--help"} & set(argv):
        try:
            return build_parser(command or "serve", _TryingParser).parse_args(argv)
        except _ParseError:
            pass  # the full parser says what is wrong, with every command in its message
    return build_parser().parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = parse(list(sys.argv[1:] if argv is None else argv))
        if args.command is None:
            args.handler = serve.run
        # Descriptor and cache text never reaches the terminal as control sequences (terminal.py);
        # serve's stdout is the MCP protocol and stays as it is.
        with visible_output(keep_stdout=args.handler is serve.run):
            try:
                configure_logging(args.log_level, args.log_file)
            except OSError as exc:  # --log-file names a folder, a file in a missing folder, …
                print(f"error: --log-file {args.log_file}: {_unopenable(exc)}", file=sys.stderr)
                return EXIT_USAGE
            return _run(args)
    except UnwritableOutputError as exc:  # the command's output, or argparse's (help, a usage error)
        _say_unwritable(exc)
        return EXIT_FAILED_CHECK
    except BrokenPipeError:
        # The reader went away (`aai-gateway scan | head`): stop quietly, as other tools do.
        _drop_unwritten_output()
        return EXIT_FAILED_CHECK


def _run(args: argparse.Namespace) -> int:
    try:
        code: int = args.handler(args)
        sys.stdout.flush()  # a write that fails fails here, not at exit after the message below
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
    return code


def _unopenable(exc: OSError) -> str:
    """Why a file to write could not be opened, in the user's terms."""
    if exc.errno == errno.ENOENT:
        return "its folder does not exist"
    if exc.errno == errno.EISDIR:
        return "it is a folder: name a file in it"
    if exc.errno in (errno.EACCES, errno.EPERM):
        return "permission denied"
    return f"cannot be written ({exc.strerror or exc})"


def _say_unwritable(exc: UnwritableOutputError) -> None:
    """One line on stderr (written directly: it may be the stream that failed, or stdout's
    buffer may still hold what did not fit), and stdout's unwritten rest dropped, so the exit
    does not try it again."""
    reason = exc.strerror or f"error {exc.errno}"
    message = f"error: aai-gateway could not write its output: {reason}\n"
    with contextlib.suppress(OSError):  # stderr refuses too: the exit code says it
        os.write(sys.__stderr__.fileno() if sys.__stderr__ else 2, message.encode("utf-8", "replace"))
    _drop_unwritten_output()


def _drop_unwritten_output() -> None:
    """Standard output to /dev/null, so that what its buffer still holds is not written again
    (and fails again) at exit."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)  # file descriptor 1 itself: sys.stdout may be gone (`>&-`)
    os.close(devnull)
