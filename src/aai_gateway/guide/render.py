"""An app descriptor rendered as the operation guide an agent reads (spec 004, "Operation Guide
Format"): app info, authentication, every operation with its parameters, returns and an example
call, and a footer naming the execution tool. Pure and deterministic: the same descriptor and
options always give the same text.

A guide is bounded: one longer than `GUIDE_MAX_CHARS` (`GUIDE_MAX_TOKENS` tokens, counted as
characters / 4) is an index instead (`index.py`), and the details of the operations an agent
picks come from `render_operations`, bounded the same way. Sections are rendered one by one and
the full guide is given up as soon as it passes the bound, so a huge app costs no more work than
a guide at the bound.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from ..descriptor.model import AppDescriptor, Tool
from ..descriptor.quoting import listed
from ..search import MAX_LIMIT
from .app_info import app_info, authentication
from .fields import capped
from .index import render_index
from .operations import operation_section
from .options import GUIDE_MAX_CHARS, GuideOptions, details_call, text_size

NAMED_LEFT_OUT = 3  # operations a details answer names in words among those it leaves out


def render_guide(
    app: AppDescriptor,
    *,
    locale: str | None = None,
    exec_tool: str = "aai_exec",
    unavailable: Mapping[str, str] | None = None,
    reference: str | None = None,
    entry_tool: str | None = None,
    search_tool: str = "aai_search",
    max_chars: int = GUIDE_MAX_CHARS,
) -> str:
    """The markdown guide of `app`; `unavailable` maps tool names to why they cannot run here;
    `reference` is what example calls put in `app` when the id alone would find another app.
    Longer than `max_chars`: the app's index, which tells how to get details through
    `entry_tool` (with `operations`) or `search_tool`."""
    options = GuideOptions(locale, exec_tool, unavailable, reference, entry_tool, search_tool, max_chars)
    return guide_with(app, options)


def guide_with(app: AppDescriptor, options: GuideOptions) -> str:
    """`render_guide` with its options as one value (as `render_operations` takes them)."""
    max_chars = options.max_chars
    lines = [*_head(app, options), *_no_operations(app)]
    footer = _footer(options.exec_tool)
    size = text_size(lines) + text_size(footer)
    if size > max_chars:
        return render_index(app, options)
    first_returning: dict[str, str] = {}  # returns schema (as canonical JSON) → first tool with it
    for tool in app.tools:
        section = _section(tool, options, reference=options.reference_of(app), first=first_returning)
        size += text_size(section)
        if size > max_chars:
            return render_index(app, options)
        lines += section
    return "\n".join([*lines, *footer]) + "\n"


def render_operations(
    app: AppDescriptor,
    names: Sequence[str],
    options: GuideOptions,
    *,
    title: str | None = None,
    more: str | None = None,
) -> str:
    """The full details of the operations `names` (in that order; names the app lacks are left
    out), at most `options.max_chars` long: the operations that do not fit are named at the end,
    with how to ask for them, then `more` (how to read on). The first one is always shown (a
    section is bounded well below a guide's bound)."""
    tools = [tool for name in dict.fromkeys(names) if (tool := app.tool(name)) is not None]
    lines = [title or f"# {app.names.lookup(options.locale)}: operation details", ""]
    footer = [*([capped(more), ""] if more else []), *_footer(options.exec_tool)]
    # room for the line naming what is left out at its longest (all but the first): kept whole,
    # so that the call it gives can be copied as it is
    longest_left_out = _left_out(app, [tool.name for tool in tools[1:]], options)
    size = text_size(lines) + text_size(footer) + text_size(longest_left_out)
    first_returning: dict[str, str] = {}
    left_out: list[str] = []
    for tool in tools:
        if left_out:
            left_out.append(tool.name)
            continue
        section = _section(tool, options, reference=options.reference_of(app), first=first_returning)
        if size + text_size(section) > options.max_chars and len(lines) > 2:
            left_out.append(tool.name)
            continue
        size += text_size(section)
        lines += section
    return "\n".join([*lines, *_left_out(app, left_out, options), *footer]) + "\n"


def _left_out(app: AppDescriptor, names: Sequence[str], options: GuideOptions) -> list[str]:
    """The line naming the operations `names` a details answer leaves out, with the call that
    gives them (the first `MAX_LIMIT`: one call can ask for no more), never cut."""
    if not names:
        return []
    asked = names[:MAX_LIMIT]
    rest = f" ({len(names) - len(asked)} more after them)" if len(names) > len(asked) else ""
    shown = listed(names, most=NAMED_LEFT_OUT, whole_up_to=len(max(names, key=len)))
    ask = details_call(app, asked, options)
    return [f"Not shown, to keep this answer short: {shown}. Ask for them with {ask}{rest}", ""]


def _head(app: AppDescriptor, options: GuideOptions) -> list[str]:
    lines = [f"# {app.names.lookup(options.locale)} Operation Guide", "", "## App Info", "", *app_info(app)]
    return [*lines, "", "## Authentication", "", *authentication(app), "", "## Available Operations", ""]


def _no_operations(app: AppDescriptor) -> list[str]:
    if not app.tools and app.platform is not None and app.server_tools_read:
        return ["Its MCP server lists no operations.", ""]
    if not app.tools and app.platform is not None and not app.tools_declared:
        return [
            "This app's operations are those of its MCP server; they are listed here once the "
            "gateway has asked the server for them.",
            "",
        ]
    if not app.tools:
        declared = ", ".join(app.declared_platforms)
        return [
            f"No operations are available on this machine (this app's operations are for: {declared}).",
            "",
        ]
    return []


def _section(tool: Tool, options: GuideOptions, *, reference: str, first: dict[str, str]) -> list[str]:
    """`tool`'s section; `first` maps each returns schema seen so far to the first tool with it."""
    same_returns = first.setdefault(json.dumps(tool.returns, sort_keys=True), tool.name)
    return operation_section(
        tool,
        exec_tool=options.exec_tool,
        unavailable=options.why_unavailable(tool),
        same_returns=same_returns,
        reference=reference,
    )


def _footer(exec_tool: str) -> list[str]:
    return [
        "---",
        "",
        f"Use {exec_tool} to execute operations. Arguments are validated against the operation's "
        "parameter schema before it runs; optional arguments left out take their defaults.",
    ]
