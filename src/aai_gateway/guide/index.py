"""The guide of an app too big for one: an index of its operations, one line each, and how to get
the details of the ones the agent needs. At most `options.max_chars` long whatever the app holds:
every line is cut to a length, the app's own text (description, names, access, authentication)
gets a share of the bound, and operations that do not fit are counted, not listed.

Operations are listed in the descriptor's order: the canonical model has no groups or tags to
arrange them by.
"""

from __future__ import annotations

from ..descriptor.model import AppDescriptor, Tool
from .app_info import app_info, authentication
from .fields import capped
from .operations import call_json
from .options import QUERY_PLACEHOLDER, GuideOptions, details_call, text_size

MAX_HEADER_LINE = 300  # characters of one line of App Info or Authentication
MAX_SUMMARY = 120  # characters of an operation's one-line description
MAX_NAME = 100  # characters of an operation's name in its line
_SHORTEST_SENTENCE = 12  # a full stop earlier than this is an abbreviation ("e.g. ")
_HEADER_SHARE = 4  # App Info and Authentication take at most 1/4 of the bound


def render_index(app: AppDescriptor, options: GuideOptions) -> str:
    """The index guide of `app` (see the module docstring)."""
    reference = options.reference_of(app)
    count = len(app.tools)
    head = [capped(f"# {app.names.lookup(options.locale)} Operation Guide", MAX_HEADER_LINE), ""]
    header_room = options.max_chars // _HEADER_SHARE
    head += ["## App Info", "", *_fit(app_info(app), header_room // 2), ""]
    head += ["## Authentication", "", *_fit(authentication(app), header_room // 2), ""]
    head += [
        "## Available Operations",
        "",
        f"This app has {count} operations, too many to describe in one guide: this is an index, one "
        "line per operation. Get the parameters and an example call of the ones you need (see "
        "Operation details below) before running them.",
        "",
    ]
    tail = ["", "## Operation details", "", *_details(app, options), ""]
    tail += ["---", "", f"Use {options.exec_tool} to execute an operation once you have its details."]
    room = (
        options.max_chars
        - text_size(head)
        - text_size(tail)
        - text_size([_more_line(count, reference, options)])
    )
    listed: list[str] = []
    for tool in app.tools:
        line = _operation_line(tool, options)
        room -= len(line) + 1
        if room < 0:
            break
        listed.append(line)
    lines = [*head, *listed]
    if len(listed) < count:
        lines.append(_more_line(count - len(listed), reference, options))
    lines += tail
    return "\n".join(lines) + "\n"


def _more_line(left_out: int, reference: str, options: GuideOptions) -> str:
    search = call_json({"app": reference, "query": QUERY_PLACEHOLDER})
    every = call_json({"app": reference, "query": ""})
    return (
        f"- … and {left_out} more operations, not listed here: find them with "
        f"{options.search_tool}({search}), or read them all a page at a time with "
        f"{options.search_tool}({every})."
    )


def _operation_line(tool: Tool, options: GuideOptions) -> str:
    line = f"- `{capped(tool.name, MAX_NAME)}`"
    summary = one_line(tool.description)
    if summary:
        line += f": {summary}"
    if options.why_unavailable(tool) is not None:
        line += " (not available on this machine)"
    return line


def one_line(text: str, limit: int = MAX_SUMMARY) -> str:
    """The first sentence of `text` on one line, cut to `limit` characters."""
    flat = " ".join(text.split())
    for end in (". ", "。", "! ", "? "):
        cut = flat.find(end)
        if _SHORTEST_SENTENCE <= cut < limit:
            flat = flat[: cut + len(end)].rstrip()
    return capped(flat, limit)


def _details(app: AppDescriptor, options: GuideOptions) -> list[str]:
    example = [tool.name for tool in app.tools[:2]]
    reference = options.reference_of(app)
    search = call_json({"app": reference, "query": QUERY_PLACEHOLDER})
    lines = [
        f"- {capped(details_call(app, example, options), MAX_HEADER_LINE)} gives the parameters "
        "and an example call of each operation it names."
    ]
    lines.append(
        f"- {options.search_tool}({search}) finds this app's operations for a task, with their parameters "
        "and an example call."
    )
    return lines


def _fit(lines: list[str], room: int) -> list[str]:
    """`lines`, each cut to `MAX_HEADER_LINE` characters, as many as fit in `room`."""
    kept: list[str] = []
    for line in (capped(text, MAX_HEADER_LINE) for text in lines):
        room -= len(line) + 1
        if room < 0:
            return [*kept, "- …"]
        kept.append(line)
    return kept
