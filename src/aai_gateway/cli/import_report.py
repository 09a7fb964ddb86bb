"""What `aai-gateway import` prints: the files found, every action (or, with `--dry-run`, every
action it would take), what the user must still do, and the client configuration that replaces
the imported servers by the gateway. Secret names appear; secret values never do."""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Sequence

from ..importing import ConfigReport, FoundServer
from ..importing.client_config import ClientChange, GatewayCommand, pointer_tokens, snippet
from ..importing.plan import ImportPlan
from .common import heading, plural
from .tables import render_table

_CLAUDE_CODE_SCOPES = {".mcp.json": "project", ".claude.json": "user"}


def print_found(reports: Sequence[ConfigReport], *, from_files: bool) -> None:
    if not reports:
        print(
            "No MCP client configuration found in the default places of Claude Desktop, Claude Code, "
            "Cursor, VS Code, Codex, Gemini CLI or Windsurf. Name a file: aai-gateway import FILE"
        )
        return
    found = "Read" if from_files else "Found"
    print(f"{found} {plural(len(reports), 'configuration file')}:")
    rows = [
        [report.client, str(report.path), ", ".join(s.name for s in report.servers) or "(no servers)"]
        for report in reports
    ]
    print(render_table(["CLIENT", "FILE", "SERVERS"], rows, keep=(0, 1)))
    unreadable = [report for report in reports if report.format is None]
    for report in unreadable:
        for problem in report.problems:
            print(f"  {problem.render()}")


def print_problems(reports: Sequence[ConfigReport], plan: ImportPlan | None) -> None:
    """The reader's notes on the files, except the errors that are a skipped server's reason
    (`plan`: None when nothing was planned, no server being importable)."""
    reasons = {skipped.reason for skipped in plan.skipped} if plan is not None else set()
    notes = [
        problem.render()
        for report in reports
        if report.format is not None
        for problem in report.problems
        if problem.message not in reasons
    ]
    if notes:
        print(heading("Notes on the files read"))
        for note in notes:
            print(f"  {note}")


def print_outcomes(plan: ImportPlan, *, dry_run: bool) -> None:
    if plan.written:
        verb = "Would import" if dry_run else "Importing"
        suffix = " (dry run: nothing is written or stored)" if dry_run else ""
        print(heading(f"{verb} {plural(len(plan.written), 'server')}{suffix}"))
        for written in plan.written:
            action = "write" if written.choice == "new" else "update"
            would = "would " if dry_run else ""
            print(f"  {written.app_id}  ← {_origin(written.server)}")
            print(f"      {would}{action} {written.path}")
            for name in written.moved:
                print(f"      {would}move the secret {name} into the OS keyring")
            for warning in written.warnings:
                print(f"      warning: {warning}")
    if plan.same:
        print(heading("Already imported from another entry (the same server)"))
        for same in plan.same:
            print(f"  {same.app_id}  ← {_origin(same.server)}")
    if plan.skipped:
        print(heading(f"Skipped {plural(len(plan.skipped), 'server')}"))
        for skipped in plan.skipped:
            print(f"  {_origin(skipped.server)}: {skipped.reason}")


def keyring_note(reason: str, plan: ImportPlan) -> str:
    return (
        f"\nNo usable OS keyring ({reason}), so no secret is stored in one. The descriptors read "
        'the secrets from the gateway\'s environment instead ({"env": VARIABLE}): set the '
        "variables listed below where the gateway runs (for example in the env of the aai-gateway "
        "entry of your MCP client), or set up a keyring and import again."
    )


def print_to_do(plan: ImportPlan) -> None:
    commands = [
        (f"aai-gateway auth set {shlex.quote(w.app_id)} --secret {shlex.quote(s.name)}", s.what)
        for w in plan.written
        for s in w.secrets_to_set
    ]
    variables: dict[str, list[str]] = {}
    for written in plan.written:
        for needed in written.variables_to_set:
            variables.setdefault(needed.variable, []).append(f"{written.app_id}: {needed.what}")
    if not commands and not variables:
        return
    print(heading("Still to do, so the gateway can start these servers"))
    for command, what in commands:
        print(f"  {command}\n      ({what})")
    for variable, uses in variables.items():
        print(f"  set {variable} in the gateway's environment")
        for use in uses:
            print(f"      ({use})")


def print_client_changes(
    changes: Sequence[ClientChange], gateway: GatewayCommand, *, replace: bool, dry_run: bool
) -> None:
    if not changes:
        return
    print(heading("Client configuration: the gateway instead of the imported servers"))
    for change in changes:
        print(f"  {change.path} ({change.client})")
        print(f"    remove: {', '.join(s.name for s in change.removed)}")
        print("    add:")
        for line in snippet(change, gateway).splitlines():
            print(f"      {line}")
        for line in _claude_code_commands(change, gateway):
            print(f"    or run: {line}")
    if not replace:
        print("\nRun the import again with --replace to make these changes (each file is backed up first).")
    elif dry_run:
        print(
            "\nWith --replace and without --dry-run, each file is backed up next to itself "
            "and changed as shown."
        )


def secret_markers(plan: ImportPlan) -> dict[str, str]:
    """What replaces each moved secret value in a client file's backup."""
    return {
        value: f"<moved to the OS keyring by aai-gateway import: app {written.app_id}, secret {name}>"
        for written in plan.written
        for name, value in written.moved.items()
    }


def _origin(server: FoundServer) -> str:
    """Where a server came from, on one line: a line break in its name is shown as `\\n`."""
    name = server.name.replace("\r", "\\r").replace("\n", "\\n")
    return f"{name} ({server.client}, {server.config_file} {server.json_pointer})"


def _claude_code_commands(change: ClientChange, gateway: GatewayCommand) -> Iterable[str]:
    """Claude Code manages its files itself: its `claude mcp` commands do the same change."""
    scope = _CLAUDE_CODE_SCOPES.get(change.path.name)
    if change.client != "claude-code" or scope is None:
        return []
    lines = []
    for server in change.removed:
        local = pointer_tokens(server.json_pointer)[:1] == ("projects",)
        where = f"-s local  # run in {server.project}" if local else f"-s {scope}"
        lines.append(f"claude mcp remove {shlex.quote(server.name)} {where}")
    added = shlex.join([gateway.command, *gateway.args])
    lines.append(f"claude mcp add -s {'project' if scope == 'project' else 'user'} aai-gateway -- {added}")
    return lines
