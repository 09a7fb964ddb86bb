"""`aai-gateway consent list|grant|revoke`: which MCP client may use which app's tools.

Also the terminal prompt `aai-gateway exec` uses: the CLI's own caller is `aai-gateway CLI`.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

import anyio

from ..consent.gate import Answer
from ..consent.policy import Decision
from ..consent.prompt_text import DENY, ConsentQuestion, build_prompt
from ..errors import UsageError
from .common import LOGGING_OPTIONS, add_discovery_options, print_json
from .tables import render_table


class TerminalPrompter:
    """Asks on the terminal when the CLI runs in one (stdin and stderr are TTYs). Shows the
    same text as the native dialog: names with control characters or escape sequences are shown
    as escapes, so they can neither fake lines nor drive the terminal."""

    async def ask(self, question: ConsentQuestion) -> Answer | None:
        if not (sys.stdin.isatty() and sys.stderr.isatty()):
            return None
        prompt = build_prompt(question)
        print(f"\n{prompt.text}\n", file=sys.stderr)
        for number, choice in enumerate(prompt.listed, start=1):
            print(f"  {number}. {choice.label}", file=sys.stderr)
        reply = (await anyio.to_thread.run_sync(input, f"Choose 1-{len(prompt.listed)}: ")).strip()
        if reply.isascii() and reply.isdecimal() and 1 <= int(reply) <= len(prompt.listed):
            return prompt.listed[int(reply) - 1].answer
        return DENY


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "consent",
        parents=[LOGGING_OPTIONS],
        help="list, grant or revoke which MCP client may use which app's tools",
        description="Consent is kept per client (its MCP client name), app and tool, in the OS keyring.",
    )
    actions = parser.add_subparsers(dest="consent_action", metavar="ACTION", required=True)
    listing = actions.add_parser("list", help="the stored decisions")
    listing.add_argument("--caller", default=None, help="only this client's decisions")
    listing.add_argument("--json", action="store_true", help="machine-readable output")
    for name, verb in (("grant", "allow"), ("revoke", "forget")):
        sub = actions.add_parser(name, help=f"{verb} a client's use of one tool or all tools of an app")
        sub.add_argument("--caller", required=True, help="the MCP client's name, e.g. 'claude-code'")
        sub.add_argument("--app", required=True, help="app id, name or web origin")
        which = sub.add_mutually_exclusive_group(required=name == "grant")
        which.add_argument("--tool", help="one tool")
        which.add_argument("--all", action="store_true", help="every tool of the app")
        add_discovery_options(sub)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from ..consent.store import ConsentStore
    from .runtime import build_gateway, build_watcher, secret_store

    store = ConsentStore(secret_store())
    if args.consent_action == "list":
        return show(store.list(args.caller), args)
    gateway = build_gateway(args, build_watcher(args))
    app = gateway.resolve(args.app)
    if args.tool is not None and app.tool(args.tool) is None:
        known = ", ".join(t.name for t in app.tools)
        raise UsageError(f"{app.id} has no tool {args.tool!r}; its tools: {known}")
    if args.consent_action == "grant":
        decision = Decision.ALLOW_APP if args.all else Decision.ALLOW_TOOL
        tool = args.tool or (app.tools[0].name if app.tools else "")
        store.record_decision(args.caller, app, tool, decision, now=time.time())
        what = f"all tools of {app.id}" if args.all else f"{args.tool} of {app.id}"
        print(f"{args.caller} may now use {what}.")
        return 0
    from ..consent.policy import binding_of

    forgotten = store.revoke(args.caller, app.id, args.tool, binding=binding_of(app))
    what = f"{args.tool} of {app.id}" if args.tool else f"every tool of {app.id}"
    print(f"{'Revoked' if forgotten else 'Nothing was granted for'} {args.caller}: {what}.")
    return 0


def show(records: list[Any], args: argparse.Namespace) -> int:
    rows: list[dict[str, Any]] = []
    for record in records:
        for binding, grants in record.sources.items():
            if grants.all_tools:
                rows.append(
                    {
                        "caller": record.caller,
                        "app": record.app_id,
                        "tool": "*",
                        "decision": "allow",
                        "source": binding,
                    }
                )
            for tool, grant in sorted(grants.tools.items()):
                decision = "allow" if grant.allowed else "deny"
                rows.append(
                    {
                        "caller": record.caller,
                        "app": record.app_id,
                        "tool": tool,
                        "decision": decision,
                        "source": binding,
                    }
                )
    if args.json:
        print_json(rows)
        return 0
    if not rows:
        print("No consent decisions are stored.")
        return 0
    table = [[r["caller"], r["app"], r["tool"], r["decision"], r["source"]] for r in rows]
    print(render_table(["CALLER", "APP", "TOOL", "DECISION", "SOURCE"], table))
    return 0


def _row(record: Any, tool: str, decision: str, binding: str) -> dict[str, Any]:
    return {
        "caller": record.caller,
        "app": record.app_id,
        "tool": tool,
        "decision": decision,
        "source": binding,
    }
