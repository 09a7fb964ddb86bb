"""What a guide needs besides the app, and the bound every guide keeps."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..descriptor.model import AppDescriptor, Tool
from ..search import MAX_LIMIT
from .operations import call_json

QUERY_PLACEHOLDER = "<what you want to do>"
"""What example calls of the search tool put where the agent's own words go."""
CHARS_PER_TOKEN = 4
GUIDE_MAX_TOKENS = 4_000
"""Measured (docs/performance.md, "Bounded context"): every app of the 99-app search catalog
keeps its full guide (GitHub's 26 operations are the largest, at 3,700 tokens); an app of 90
operations (8,600 tokens in full) gets an index of 2,400."""
GUIDE_MAX_CHARS = GUIDE_MAX_TOKENS * CHARS_PER_TOKEN


@dataclass(frozen=True, slots=True)
class GuideOptions:
    """What a guide needs besides the app: names of the gateway's tools, where the app's tools
    cannot run, and the reference example calls use."""

    locale: str | None = None
    exec_tool: str = "aai_exec"
    unavailable: Mapping[str, str] | None = None
    reference: str | None = None
    entry_tool: str | None = None
    """The app's entry in tools/list (`app_<id>`), which takes `operations`; None without one."""
    search_tool: str = "aai_search"
    max_chars: int = GUIDE_MAX_CHARS

    def why_unavailable(self, tool: Tool) -> str | None:
        return (self.unavailable or {}).get(tool.name)

    def reference_of(self, app: AppDescriptor) -> str:
        return self.reference or app.id


def details_call(app: AppDescriptor, names: Sequence[str], options: GuideOptions) -> str:
    """The call that gives the details of `names`: the app's entry with `operations`, else the
    search tool restricted to the app."""
    if options.entry_tool is not None:
        return f"{options.entry_tool}({call_json({'operations': list(names)})})"
    # a search within an app puts the operations the query names first: those alone
    asked = {"app": options.reference_of(app), "query": " ".join(names), "limit": min(len(names), MAX_LIMIT)}
    return f"{options.search_tool}({call_json(asked)})"


def text_size(lines: Sequence[str]) -> int:
    """Characters `lines` take in a guide (each ends with a newline)."""
    return sum(len(line) + 1 for line in lines)
