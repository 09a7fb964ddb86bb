"""`aai-gateway consent list|grant|revoke`: which MCP client may use which app's tools.

Also the terminal prompt `aai-gateway exec` uses: the CLI's own caller is `aai-gateway CLI`.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from dataclasses import replace
from typing import Any

import anyio

from ..consent.gate import consent_command
from ..consent.policy import UNKNOWN_CALLER, ConsentRecord, ConsentTarget, Decision, caller_name
from ..consent.prompt_text import DENY, Answer, ConsentQuestion, build_prompt
from ..errors import AaiError, UsageError
from .common import LOGGING_OPTIONS, add_discovery_options, print_json
from .tables import render_table


class TerminalPrompter:
    """Asks on the terminal when the CLI runs in one (stdin and stderr are TTYs). Shows the
    same text as the native dialog: names with control characters or escape sequences are shown
    as escapes, so they can neither fake lines nor drive the terminal. Everything goes to
    stderr: stdout carries the operation's result (`exec … | jq`)."""

    async def ask(self, question: ConsentQuestion) -> Answer | None:
        if not (sys.stdin.isatty() and sys.stderr.isatty()):
            return None
        prompt = build_prompt(question)
        print(f"\n{prompt.text}\n", file=sys.stderr)
        for number, choice in enumerate(prompt.listed, start=1):
            print(f"  {number}. {choice.label}", file=sys.stderr)
        reply = await anyio.to_thread.run_sync(_read_reply, f"Choose 1-{len(prompt.listed)}: ")
        if (
            reply is not None
            and reply.isascii()
            and reply.isdecimal()
            and 1 <= int(reply) <= len(prompt.listed)
        ):
            return prompt.listed[int(reply) - 1].answer
        return DENY


def _read_reply(prompt: str) -> str | None:
    sys.stderr.write(prompt)
    sys.stderr.flush()
    line = sys.stdin.readline()
    return line.strip() if line else None  # None: end of input


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "consent",
        parents=[LOGGING_OPTIONS],
        help="list, grant or revoke which MCP client may use which app's tools",
        description="Consent is kept per client (its MCP client name), app and tool, in the OS keyring.",
    )
    actions = parser.add_subparsers(dest="consent_action", metavar="ACTION", required=True)
    listing = actions.add_parser("list", help="the stored decisions, and the settings of config.toml")
    listing.add_argument("--caller", default=None, help="only this client's decisions")
    listing.add_argument("--json", action="store_true", help="machine-readable output")
    for name, verb in (("grant", "allow"), ("revoke", "forget")):
        sub = actions.add_parser(name, help=f"{verb} a client's use of one tool or all tools of an app")
        sub.add_argument("--caller", required=True, help="the MCP client's name, e.g. 'claude-code'")
        sub.add_argument(
            "--app", required=True, help="app id (or, found by discovery: name, alias, web origin)"
        )
        which = sub.add_mutually_exclusive_group(required=name == "grant")
        which.add_argument("--tool", help="one tool")
        which.add_argument("--all", action="store_true", help="every tool of the app")
        sub.add_argument(
            "--source",
            metavar="BINDING",
            help=(
                "where the app's descriptor comes from, as CONSENT_REQUIRED names it (file:/path, bundled "
                "or https://origin); then --app is its id and no discovery is needed"
                if name == "grant"
                else "only decisions about the app as described there (default: wherever it came from)"
            ),
        )
        add_discovery_options(sub)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    if getattr(args, "tool", None) is not None and not args.tool.strip():
        raise UsageError("--tool is empty; name one tool, or use --all for every tool of the app")
    from .runtime import consent_store

    store = consent_store()
    if args.consent_action == "list":
        return show(store.list(caller_name(args.caller) if args.caller else None), store.where, args)
    if args.consent_action == "grant":
        return grant(store, args)
    return revoke(store, args)


def grant(store: Any, args: argparse.Namespace) -> int:
    caller = _caller(args.caller)
    if caller == UNKNOWN_CALLER:
        raise UsageError(
            f"{UNKNOWN_CALLER!r} is every MCP client that sends no name: a grant to it would let any such "
            "client use the app. Trust the app in consent.auto_allow of config.toml instead, or answer "
            "when the gateway asks"
        )
    if args.source is not None:
        binding, app_id = _binding(args.source), args.app.strip()
    else:
        app = _discovered_app(args)
        if args.tool is not None and app.tool(args.tool) is None:
            known = ", ".join(t.name for t in app.tools)
            raise UsageError(f"{app.id} has no tool {args.tool!r}; its tools: {known}")
        target = ConsentTarget.of(caller, app, args.tool or "")
        binding, app_id = target.binding, target.app_id
    decision = Decision.ALLOW_APP if args.all else Decision.ALLOW_TOOL
    store.decide(ConsentTarget(caller, app_id, binding, args.tool or ""), decision, now=time.time())
    what = f"all tools of {app_id}" if args.all else f"{args.tool} of {app_id}"
    print(f"{caller} may now use {what} (described by {binding}); kept in {store.where}.")
    return 0


def revoke(store: Any, args: argparse.Namespace) -> int:
    caller = _caller(args.caller)
    binding = _binding(args.source) if args.source is not None else None
    app_id = args.app.strip()
    record = store.load(caller, app_id)
    if record is None and args.source is None:
        # Not an id with stored decisions: perhaps a name, alias or origin that discovery knows.
        with contextlib.suppress(AaiError):
            app = _discovered_app(args)
            app_id, binding = app.id, str(app.binding)
    elif record is not None and binding is None:
        _refuse_ambiguous_revoke(record, args)
    forgotten = store.revoke(caller, app_id, args.tool, binding=binding)
    what = f"{args.tool} of {app_id}" if args.tool else f"every tool of {app_id}"
    where = f" (described by {binding})" if binding else ""
    if forgotten:
        print(f"Revoked for {caller}: {what}{where}.")
    else:
        print(f"Nothing was stored for {caller}: {what}{where}. `aai-gateway consent list` shows what is.")
    return 0


def _caller(given: str) -> str:
    if not given.strip():
        raise UsageError(
            "--caller is empty; give the MCP client's name, as `aai-gateway consent list` shows it"
        )
    return caller_name(given)


def _binding(source: str) -> str:
    """`--source` checked: `bundled`, `file:` and an absolute path, or an https origin."""
    from ..descriptor import parse_binding

    try:
        return str(parse_binding(source))
    except AaiError as exc:
        raise UsageError(f"--source {exc.message}") from exc


def _refuse_ambiguous_revoke(record: ConsentRecord, args: argparse.Namespace) -> None:
    """Decisions about one app id kept for several sources (say a local app and a web app that
    claims its id): which one is meant must be said, as everywhere an app is named."""
    sources = sorted(
        binding
        for binding, grants in record.sources.items()
        if not grants.empty and (args.tool is None or grants.all_tools or args.tool in grants.tools)
    )
    if len(sources) < 2:
        return
    target = ConsentTarget(record.caller, record.app_id, "", args.tool or "")
    commands = [
        f"{binding}: {consent_command('revoke', replace(target, binding=binding), every_tool=args.all)}"
        for binding in sources
    ]
    raise UsageError(
        f"{record.caller} has decisions about {record.app_id} as described in {len(sources)} places; "
        "name the one meant with --source:\n  " + "\n  ".join(commands),
        sources=sources,
    )


def _discovered_app(args: argparse.Namespace) -> Any:
    from .runtime import app_named_by_user, build_gateway, build_watcher

    return app_named_by_user(build_gateway(args, build_watcher(args)), args.app, args)


def rows_of(records: list[ConsentRecord]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for record in records:
        for binding, grants in record.sources.items():
            decided = [("*", True, grants.all_tools_at)] if grants.all_tools else []
            decided += [(tool, g.allowed, g.decided_at) for tool, g in sorted(grants.tools.items())]
            rows += [
                {
                    "caller": record.caller,
                    "app": record.app_id,
                    "tool": tool,
                    "decision": "allow" if allowed else "deny",
                    "source": binding,
                    "decided_at": _utc(when),
                }
                for tool, allowed, when in decided
            ]
    return rows


def show(records: list[ConsentRecord], where: str, args: argparse.Namespace) -> int:
    from .runtime import user_config

    rows = rows_of(records)
    if args.json:
        print_json(rows)
        return 0
    if rows:
        table = [
            [r["caller"], r["app"], r["tool"], r["decision"], r["decided_at"] or "", r["source"]]
            for r in rows
        ]
        print(render_table(["CALLER", "APP", "TOOL", "DECISION", "DECIDED (UTC)", "SOURCE"], table))
    else:
        print("No consent decisions are stored.")
    print(f"\nDecisions are kept in {where}.")
    print(f"\n{user_config().summary()}")
    return 0


def _utc(timestamp: float | None) -> str | None:
    if timestamp is None:
        return None
    try:
        return time.strftime("%Y-%m-%d %H:%M", time.gmtime(timestamp))
    except (OverflowError, OSError, ValueError):
        return None
