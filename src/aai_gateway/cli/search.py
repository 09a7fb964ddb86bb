"""`aai-gateway search QUERY [--app APP]`: what `aai_search` finds, as a table (or as the agent
reads it, `--text`): to see what an agent finds with its words, and try others."""

from __future__ import annotations

import argparse
import json
import re
import sys
from typing import TYPE_CHECKING

import anyio

from ..descriptor.mcp_wire import is_unicode
from ..descriptor.quoting import shell_command
from ..errors import UsageError
from ..guide.options import QUERY_PLACEHOLDER
from ..search import DEFAULT_LIMIT, MAX_LIMIT, MAX_OFFSET
from .common import (
    LOGGING_OPTIONS,
    add_discovery_options,
    add_gateway_options,
    add_locale_option,
    discovery_argv,
    plural,
    print_json,
    unread_servers_note,
)
from .tables import render_table

if TYPE_CHECKING:
    from ..service.search import SearchAnswer

INDEX_NOTICE_FROM = 1000
"""Apps from which a search says on stderr that it indexes them first (~0.3 s a thousand)."""
MAX_QUERY_SHOWN = 200  # characters of the query quoted back
_WHOLE_NUMBER = re.compile(r"[-+]?[0-9]+")


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "search",
        parents=[LOGGING_OPTIONS],
        help="search apps and operations as aai_search does, and print the results as a table",
        description=(
            "Search every app the gateway could list, as the agent's aai_search does: the best "
            "matches first, a page at a time. With --app, that app's operations (a blank query "
            "lists them all, in order). --text prints the answer exactly as the agent reads it."
        ),
    )
    parser.add_argument(
        "query",
        nargs="+",
        metavar="QUERY",
        help="what to do, or a name (in any language); its words may be given with or without quotes",
    )
    parser.add_argument(
        "--app", metavar="APP", help="only this app's operations (its id, name, alias or URL)"
    )
    parser.add_argument(
        "--limit",
        type=_bounded("--limit", 1, MAX_LIMIT),
        default=DEFAULT_LIMIT,
        metavar="N",
        help=f"results per page, 1-{MAX_LIMIT} (default {DEFAULT_LIMIT})",
    )
    parser.add_argument(
        "--offset",
        type=_bounded("--offset", 0, MAX_OFFSET),
        default=0,
        metavar="N",
        help=f"the page's first result, counted from 0 (at most {MAX_OFFSET})",
    )
    shown = parser.add_mutually_exclusive_group()
    shown.add_argument("--json", action="store_true", help="print the results and what follows as JSON")
    shown.add_argument(
        "--text", action="store_true", help="print the answer as aai_search gives it to agents"
    )
    add_discovery_options(parser)
    add_gateway_options(parser)
    add_locale_option(parser)
    parser.set_defaults(handler=run)


def _bounded(option: str, lowest: int, highest: int) -> argparse._ActionType:
    def whole(text: str) -> int:
        if not _WHOLE_NUMBER.fullmatch(text.strip()):  # `int` also takes `1_0` and other scripts' digits
            raise argparse.ArgumentTypeError(f"{option} takes a whole number, not {text!r}")
        value = int(text)
        if not lowest <= value <= highest:
            raise argparse.ArgumentTypeError(f"{option} must be from {lowest} to {highest}, not {value}")
        return value

    return whole


def run(args: argparse.Namespace) -> int:
    from ..server.arguments import search_arguments
    from .runtime import build_gateway, build_watcher

    args.query = " ".join(args.query)  # `search send an email`, unquoted, is one query
    if not args.query.strip() and args.app is None:
        raise UsageError(
            "QUERY is blank: say what you want to do or name an app; with --app APP, a blank query "
            "lists that app's operations"
        )
    if args.query.strip() == QUERY_PLACEHOLDER:
        raise UsageError(f"QUERY is the placeholder {QUERY_PLACEHOLDER}: put what you want to do there")
    if args.app is not None and not args.app.strip():
        raise UsageError("--app is blank: give the app's id, name, alias or URL")
    if not is_unicode(args.query):
        raise UsageError("QUERY holds bytes that are not UTF-8 text: type it again in a UTF-8 terminal")
    # and whatever else aai_search refuses
    search_arguments({"query": args.query, "app": args.app, "limit": args.limit, "offset": args.offset})
    watcher = build_watcher(args)
    gateway = build_gateway(args, watcher)

    async def search() -> SearchAnswer:
        try:
            if gateway.listing.listable >= INDEX_NOTICE_FROM:
                print(f"Indexing {gateway.listing.listable:,} apps for search…", file=sys.stderr, flush=True)
            return await gateway.search(args.query, args.limit, args.app, args.offset)
        finally:
            await gateway.aclose()

    answer = anyio.run(search)
    skipped = len(watcher.catalog.skipped)
    if args.text:
        sys.stdout.write(answer.text)
    elif args.json:
        following = args.offset + args.limit
        print_json(
            {
                **answer.structured(),
                "next_offset": following if answer.more and following <= MAX_OFFSET else None,
                "not_searched": list(answer.unread),
                "skipped_files": skipped,
            }
        )
    else:
        print(_report(args, answer, skipped))
    return 0


def _report(args: argparse.Namespace, answer: SearchAnswer, skipped: int) -> str:
    """The results as a table, then what follows them: the next page, how to read an operation's
    details, the apps the search could not see and the files it could not use, each with a
    command that works as printed."""
    discovery = discovery_argv(args)
    lines = [*_results(args, answer, discovery)]
    if answer.unread and not args.offset:
        lines.append(unread_servers_note(answer.unread, discovery))
    if skipped:
        scan = shell_command(["aai-gateway", "scan", *discovery])
        lines.append(f"{plural(skipped, 'descriptor file')} could not be used; why: {scan}")
    return "\n".join(lines)


def _results(args: argparse.Namespace, answer: SearchAnswer, discovery: list[str]) -> list[str]:
    query, blank = _shown(args.query), not args.query.strip()
    if answer.within is not None and answer.within[1] == 0 and not answer.results:
        return [answer.text.strip()]  # no operation of the app runs here: why, in the agent's words
    if not answer.results and args.offset:
        return [f"Nothing more after the first {args.offset}."]
    if not answer.results and answer.within is not None:
        everything = ["aai-gateway", "search", "", f"--app={answer.within[0]}", *discovery]
        return [
            f"No operation of {answer.within[0]} matches {query}. All of them: {shell_command(everything)}"
        ]
    if not answer.results:
        return [
            f"Nothing matches {query}: try other words, the app's name in another language, or what "
            "the operation does."
        ]
    last = args.offset + len(answer.results)
    place = f" (results {args.offset + 1}-{last})" if last > args.offset + 1 else f" (result {last})"
    place = place if args.offset or answer.more else ""
    if answer.within is not None and blank:
        heading = f"Operations of {answer.within[0]} that run here, in the descriptor's order{place}:"
    elif answer.within is not None:
        heading = f"Operations of {answer.within[0]} matching {query}, best first{place}:"
    else:
        heading = f"Apps and operations matching {query}, best first{place}:"
    lines = [heading, "", _table(answer, args.offset, scored=not blank), ""]
    if answer.more:
        following = args.offset + args.limit
        lines.append(
            f"More follow: run the same search with --offset {following}."
            if following <= MAX_OFFSET
            else f"More follow, past the last place a page can start ({MAX_OFFSET}): use other words."
        )
    operation = next(((r.app, r.tool) for r in answer.results if r.tool is not None), None)
    if operation is not None:
        guide = ["aai-gateway", "guide", operation[0], f"--operations={operation[1]}", *discovery]
        lines.append(f"An operation's parameters and example call: {shell_command(guide)}")
    return lines


def _shown(query: str) -> str:
    flat = " ".join(query.split())
    return json.dumps(
        flat if len(flat) <= MAX_QUERY_SHOWN else flat[: MAX_QUERY_SHOWN - 1] + "…", ensure_ascii=False
    )


def _table(answer: SearchAnswer, offset: int, *, scored: bool) -> str:
    within = answer.within is not None
    headers = ["#", *([] if within else ["APP"]), "OPERATION", *(["SCORE"] if scored else []), "DESCRIPTION"]
    rows = [
        [
            str(number),
            *([] if within else [result.app]),
            result.tool if result.tool is not None else "(the app)",
            *([f"{result.score:.3f}"] if scored else []),
            result.description or "(no description)",
        ]
        for number, result in enumerate(answer.results, start=offset + 1)
    ]
    return render_table(headers, rows, keep=set(range(len(headers) - 1)))
