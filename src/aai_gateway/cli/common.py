"""What every command shares: discovery options, the user's locale, logging, output helpers.

This package is the only place that reads environment variables and configures logging.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import platformdirs

from ..descriptor.platforms import PLATFORMS, Platform, host_platform
from ..descriptor.quoting import WHOLE_UP_TO, listed, shell_command
from ..discovery import (
    Catalog,
    DiscoveryOptions,
    Layout,
    SourceSpec,
    build_catalog,
    discovery_sources,
    paths_from_env,
)
from ..discovery.loading import FileLoads
from ..discovery.mcp_snapshots import SnapshotStore
from .terminal import visible

ENV_PATH = "AAI_GATEWAY_PATH"


def add_discovery_options(parser: argparse.ArgumentParser, *, inherited: bool = False) -> None:
    """`inherited`: `parser` is an action of a command that has these options already
    (`cache --path DIR refresh APP`): given before the action, they keep their value."""
    group = parser.add_argument_group("discovery")

    def default(value: object) -> object:
        return argparse.SUPPRESS if inherited else value

    group.add_argument(
        "--path",
        action="append",
        default=default([]),
        metavar="DIR",
        help=(
            "also read DIR/*.json and DIR/*/aai.json, before the default places "
            f"(repeatable; also ${ENV_PATH})"
        ),
    )
    group.add_argument(
        "--no-default-paths",
        action="store_true",
        default=default(False),
        help="only use --path / $AAI_GATEWAY_PATH (ignore ~/.aai, XDG dirs, /Applications, ...)",
    )
    group.add_argument(
        "--dev",
        action="store_true",
        default=default(False),
        help="macOS: also scan Xcode DerivedData build products",
    )
    group.add_argument(
        "--platform",
        choices=[p for p in PLATFORMS if p != "web"],
        default=default(None),
        help="pretend the gateway runs on this OS (default: this machine's)",
    )


def add_locale_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--locale", default=None, help="language for app names, e.g. zh-CN (default: $LC_ALL/$LANG)"
    )


def user_locale(explicit: str | None) -> str | None:
    if explicit:
        return explicit
    for variable in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = os.environ.get(variable, "")
        if value and value not in ("C", "POSIX") and not value.startswith("C."):
            return value
    return None


def chosen_platform(args: argparse.Namespace) -> Platform:
    platform: Platform | None = getattr(args, "platform", None)
    return platform or host_platform()


def discovery_options(args: argparse.Namespace) -> DiscoveryOptions:
    paths = [Path(p) for p in args.path] + paths_from_env(os.environ.get(ENV_PATH))
    return DiscoveryOptions(paths=paths, no_default_paths=args.no_default_paths, dev=args.dev)


def host_layout(environ: Mapping[str, str]) -> Layout:
    """This machine's descriptor folders: from platformdirs (HOME, the XDG variables) and
    environ's `%APPDATA%`."""
    host = host_platform()
    home = Path.home()
    unix = platformdirs.unix.Unix(multipath=True)
    appdata = environ.get("APPDATA")
    return Layout(
        os="linux" if host not in ("macos", "windows") else host,
        home=home,
        xdg_data_home=Path(unix.user_data_dir),
        xdg_data_dirs=tuple(Path(p) for p in unix.site_data_dir.split(os.pathsep) if p),
        appdata=Path(appdata) if appdata else None,
        applications_roots=(Path("/Applications"), home / "Applications"),
        derived_data=home / "Library" / "Developer" / "Xcode" / "DerivedData",
    )


def chosen_sources(args: argparse.Namespace) -> tuple[list[SourceSpec], Platform]:
    """Where to look for descriptors, and for which platform (`--platform`, default this OS).
    With `android` or `ios`, descriptors are searched where this OS keeps them, and their
    Android/iOS bindings drive a connected device or simulator from here."""
    platform = chosen_platform(args)
    layout = host_layout(os.environ)
    if platform in ("linux", "macos", "windows"):
        layout = dataclasses.replace(layout, os=platform)
    return discovery_sources(layout, discovery_options(args)), platform


def load_catalog(args: argparse.Namespace, snapshots: SnapshotStore | None = None) -> Catalog:
    """`snapshots`: where the tools of MCP servers are kept (without it, apps that leave their
    tools to their server show none)."""
    sources, platform = chosen_sources(args)
    return build_catalog(sources, platform, FileLoads(platform, on_reading=reading_notice), snapshots)


READING_NOTICE_FROM = 500
"""Descriptor files to read from which a command says so first: ~0.3 s of reading and more."""


def reading_notice(count: int) -> None:
    """A line on stderr before a build reads many descriptor files (a first start over thousands
    takes seconds; later ones take unchanged files from the descriptor cache)."""
    if count >= READING_NOTICE_FROM:
        print(f"Reading {count:,} descriptor files…", file=sys.stderr, flush=True)


def logging_options() -> argparse.ArgumentParser:
    """Options every command accepts (a parent parser)."""
    parent = argparse.ArgumentParser(add_help=False)
    parent.add_argument(
        "--log-level", default="WARNING", type=_log_level, help="DEBUG, INFO, WARNING (default) or ERROR"
    )
    parent.add_argument(
        "--log-file", default=None, help="also write logs to this file (they always go to stderr)"
    )
    return parent


LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")


def _log_level(value: str) -> str:
    if value.upper() not in LOG_LEVELS:
        raise argparse.ArgumentTypeError(f"{value!r} is not a log level: use {listed(LOG_LEVELS)}")
    return value.upper()


LOGGING_OPTIONS = logging_options()
VALUE_OPTIONS = frozenset(
    {
        "--path",
        "--platform",
        "--locale",
        "--log-level",
        "--log-file",
        "--tool-names",
        "--poll-interval",
        "--args",
        "--dir",
        "--project",
    }
)


def command_first(argv: list[str], commands: set[str]) -> list[str]:
    """`aai-gateway --path X scan` means `aai-gateway scan --path X`: move the command to the front
    so options given before it are not dropped by the command's own defaults."""
    index = 0
    while index < len(argv):
        arg = argv[index]
        if arg in commands:
            return [arg, *argv[:index], *argv[index + 1 :]] if index else argv
        if arg == "--":
            break
        index += 2 if arg in VALUE_OPTIONS else 1
    return argv


def configure_logging(level: str = "WARNING", log_file: str | None = None) -> None:
    handlers: list[logging.Handler] = [logging.StreamHandler(sys.stderr)]
    if log_file:
        handlers.append(logging.FileHandler(log_file, encoding="utf-8"))
    formatter = VisibleFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
    for handler in handlers:
        handler.setFormatter(formatter)
    logging.basicConfig(level=getattr(logging, level.upper(), logging.WARNING), handlers=handlers, force=True)
    # These log full URLs (query strings may hold tokens) and headers: never below WARNING.
    for chatty in ("httpx", "httpcore", "httpx2", "httpcore2", "authlib", "uvicorn", "uvicorn.access"):
        logging.getLogger(chatty).setLevel(max(logging.WARNING, logging.getLogger().level))


class VisibleFormatter(logging.Formatter):
    """Log lines quote descriptor and cache text: their control characters are made visible,
    in log files too (`terminal.visible`)."""

    def format(self, record: logging.LogRecord) -> str:
        return visible(super().format(record))


def print_json(value: Any) -> None:
    print(json.dumps(value, indent=2, ensure_ascii=False))


def heading(title: str) -> str:
    return f"\n{title}\n"


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def discovery_argv(args: argparse.Namespace) -> list[str]:
    """The discovery options of `args` as given (`add_discovery_options`), for a command printed
    for the user to run next: it then finds the apps this one found. `--path=DIR`, as one
    argument: a folder named `-x` is no option."""
    argv = [f"--path={path}" for path in getattr(args, "path", [])]
    argv += ["--no-default-paths"] if getattr(args, "no_default_paths", False) else []
    argv += ["--dev"] if getattr(args, "dev", False) else []
    platform = getattr(args, "platform", None)
    return argv + ([f"--platform={platform}"] if platform else [])


def unread_servers_note(unread: Sequence[str], options: Sequence[str] = ()) -> str:
    """What it means that the tools of the MCP servers of the apps `unread` (ids) were never
    read, and the command that reads them now (with `options`: `discovery_argv`)."""
    from ..service.search import MAX_UNREAD_NAMED

    named = listed(unread, most=MAX_UNREAD_NAMED, whole_up_to=WHOLE_UP_TO)
    which = [unread[0]] if len(unread) == 1 else ["--unread"]
    refresh = shell_command(["aai-gateway", "cache", "refresh", *which, *options])
    return (
        f"The tools of {plural(len(unread), 'MCP server')} were never read ({named}): until they "
        "are (on the first use of each app), agents' searches find those apps by name and "
        f"description only. Read them now: {refresh}"
    )


def add_gateway_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--tool-names",
        choices=["portable", "colon"],
        default="portable",
        help="portable: app_<id>, web_discover, aai_exec (default); colon: the seed names app:<id>, aai:exec",
    )
