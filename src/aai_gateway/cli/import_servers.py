"""`aai-gateway import [FILE ...]`: the MCP servers configured in MCP clients become apps.

This command is the thin edge of `importing/`: it reads the environment (home folder, platform,
variables), opens the OS keyring, reads the files, has the plan made, prints it
(`import_report.py`), and, unless `--dry-run`, carries it out: writes the descriptors, then
starts each server once to keep its tools and describe it (`import_snapshots.py`, unless
`--no-start`); with `--replace` it also edits the clients' files (after a backup).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from ..auth.credentials import CredentialStore
from ..auth.secrets import KeyringSecretStore
from ..errors import SecretStoreUnavailableError, UsageError
from ..importing import ConfigReport, default_locations, read_config
from ..importing.apply import read_existing, replace_client_file, write_descriptors
from ..importing.client_config import ClientChange, GatewayCommand
from ..importing.conversion import ImportSettings
from ..importing.plan import ImportPlan, plan_import
from .cache import add_cache_option
from .common import LOGGING_OPTIONS, host_layout
from .import_report import (
    keyring_note,
    print_client_changes,
    print_found,
    print_outcomes,
    print_problems,
    print_to_do,
    secret_markers,
)
from .import_snapshots import add_start_options, print_dry_run_note, snapshot_servers

_GATEWAY_PROGRAMS = ("aai-gateway", "aai-gateway.exe")


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "import",
        parents=[LOGGING_OPTIONS],
        help="put the MCP servers configured in your MCP clients behind the gateway",
        description=(
            "Read the MCP servers of Claude Desktop, Claude Code, Cursor, VS Code, Codex, Gemini CLI and "
            "Windsurf (from FILEs, or from each client's default places) and write one descriptor per "
            "server under ~/.aai/<id>/aai.json. Secrets written in the files move into the OS keyring. "
            "Each server is then started once: its tools are kept as a snapshot and describe it."
        ),
    )
    parser.add_argument(
        "files", nargs="*", metavar="FILE", help="client configuration files (default: every client's)"
    )
    parser.add_argument("--dry-run", action="store_true", help="show everything it would do, and do nothing")
    parser.add_argument(
        "--replace",
        action="store_true",
        help="also edit each client's file: back it up, remove the imported servers, add the gateway",
    )
    parser.add_argument(
        "--dir", default=None, metavar="DIR", help="write the descriptors under DIR (default: ~/.aai)"
    )
    parser.add_argument(
        "--project",
        default=None,
        metavar="DIR",
        help="also read the project configuration files in DIR, and fill in ${workspaceFolder} with DIR",
    )
    add_start_options(parser)
    add_cache_option(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    home = Path.home()
    default_dir = host_layout(os.environ).home / ".aai"
    target_dir = Path(os.path.abspath(args.dir)) if args.dir else default_dir
    project = Path(os.path.abspath(args.project)) if args.project else None
    reports = _reports(args.files, home, project)
    print_found(reports, from_files=bool(args.files))
    unreadable = any(report.format is None for report in reports)
    if not any(report.servers for report in reports):
        print_problems(reports, None)  # why the servers a file names were not read
        malformed = any(p.severity == "error" for report in reports for p in report.problems)
        return 1 if unreadable or malformed else 0
    store, unavailable = _keyring()
    settings = ImportSettings(target_dir, store is not None, home, os.environ, project, os.sep)
    plan = plan_import(reports, read_existing(target_dir), settings)
    print_problems(reports, plan)
    print_outcomes(plan, dry_run=args.dry_run)
    if unavailable is not None:
        print(keyring_note(unavailable, plan))
    failures = [] if args.dry_run else write_descriptors(plan, store)
    for failure in failures:
        print(f"error: {failure.app_id}: {failure.reason}", file=sys.stderr)
    failed = {f.app_id for f in failures}
    if args.dry_run:
        print_dry_run_note(plan.written, start=not args.no_start)
    else:
        written = [w for w in plan.written if w.app_id not in failed]
        snapshot_servers(args, written, target_dir, start=not args.no_start, seconds=args.start_timeout)
    print_to_do(plan)
    changes = _client_changes(reports, plan, failed)
    gateway = _gateway_command(target_dir, default_dir)
    print_client_changes(changes, gateway, replace=args.replace, dry_run=args.dry_run)
    refused = 0
    if args.replace and not args.dry_run:
        markers = secret_markers(plan)
        stamp = time.strftime("%Y%m%d-%H%M%S")
        for change in changes:
            try:
                backup = replace_client_file(change, gateway, markers, stamp)
            except (UsageError, OSError, ValueError) as exc:
                refused += 1
                print(f"error: {change.path}: not changed: {getattr(exc, 'message', exc)}", file=sys.stderr)
                continue
            print(
                f"Replaced {len(change.removed)} server(s) in {change.path} by the gateway; backup: {backup}"
            )
    return 1 if failures or refused or unreadable else 0


def _reports(files: list[str], home: Path, project: Path | None) -> list[ConfigReport]:
    if files:
        paths = dict.fromkeys(Path(os.path.abspath(file)) for file in files)  # each file once
        return [read_config(path) for path in paths]
    found = default_locations(home, sys.platform, os.environ, project)
    return [read_config(location.path, location.client) for location in found]


def _keyring() -> tuple[CredentialStore | None, str | None]:
    try:
        secrets = KeyringSecretStore()
        secrets.keys()  # one read: a locked or unreachable keyring shows here, not halfway through
        return CredentialStore(secrets), None
    except SecretStoreUnavailableError as exc:
        return None, str(exc.data.get("reason", exc.message))


def _client_changes(reports: list[ConfigReport], plan: ImportPlan, failed: set[str]) -> list[ClientChange]:
    """One change per client file with servers the gateway now serves (none whose descriptor
    could not be written)."""
    changes = []
    failed_files = {w.server.config_file for w in plan.written if w.app_id in failed}
    for report in reports:
        pointers = {server.json_pointer for server in plan.served_by_gateway(report.path)}
        served = [server for server in report.servers if server.json_pointer in pointers]  # file order
        if served and report.path not in failed_files:
            changes.append(ClientChange(report.path, report.client, report.format == "codex", tuple(served)))
    return changes


def _gateway_command(target_dir: Path, default_dir: Path) -> GatewayCommand:
    """The gateway as a client starts it: this very installation, by absolute path."""
    program = Path(os.path.abspath(sys.argv[0])) if sys.argv and sys.argv[0] else None
    if program is not None and program.name in _GATEWAY_PROGRAMS and program.is_file():
        command, args = str(program), ["serve"]
    else:
        command, args = sys.executable, ["-m", "aai_gateway", "serve"]
    if target_dir != default_dir:
        args += ["--path", str(target_dir)]
    return GatewayCommand(command, tuple(args))
