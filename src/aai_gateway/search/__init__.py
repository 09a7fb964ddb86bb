"""Search over apps and their operations: what `aai_search` answers.

Pure: an index is built from loaded `AppDescriptor`s and answers queries; it reads no file and
asks no server. The interface (`SearchIndex`, `SearchHit`) is what the service layer uses.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from ..descriptor import AppDescriptor

DEFAULT_LIMIT = 10
MAX_LIMIT = 50


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One result: an app (`tool` None) or one of its operations, with its score (higher is
    better) and a one-line description."""

    app: AppDescriptor
    tool: str | None
    score: float
    description: str


_WORD = re.compile(r"\w+")


def _tokens(text: str) -> set[str]:
    return set(_WORD.findall(unicodedata.normalize("NFKC", text).casefold()))


def _one_line(text: str) -> str:
    return " ".join(text.split())


class SearchIndex:
    """Every app of `apps` and each of its tools, searchable by `search`."""

    def __init__(self, apps: Sequence[AppDescriptor]) -> None:
        self._documents: list[tuple[AppDescriptor, str | None, set[str], str]] = []
        for app in apps:
            app_text = " ".join([*app.names.all_names(), *app.aliases, app.id, app.description])
            self._documents.append((app, None, _tokens(app_text), _one_line(app.description)))
            for tool in app.tools:
                parameters = " ".join(tool.parameters.get("properties", {}) or {})
                text = " ".join([tool.name, tool.name.replace("_", " "), tool.description, parameters])
                self._documents.append((app, tool.name, _tokens(text), _one_line(tool.description)))

    def search(
        self, query: str, limit: int = DEFAULT_LIMIT, *, app: AppDescriptor | None = None
    ) -> list[SearchHit]:
        """The best matches for `query`, best first, at most `limit`; only `app`'s operations
        when `app` is given."""
        wanted = _tokens(query)
        hits: list[SearchHit] = []
        for owner, tool, tokens, description in self._documents:
            if app is not None and (owner.id != app.id or owner.binding != app.binding or tool is None):
                continue
            score = float(len(wanted & tokens))
            if score > 0:
                hits.append(SearchHit(owner, tool, score, description))
        hits.sort(key=lambda hit: -hit.score)
        return hits[: max(0, min(limit, MAX_LIMIT))]
