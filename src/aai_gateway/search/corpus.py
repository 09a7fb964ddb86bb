"""The index's documents as term ids, field by field: what the scorer is built from.

Analysing text is most of the cost of building an index, and descriptors repeat themselves (the same
parameter names and descriptions in every operation, an app's names in each of its operations):
each distinct text of a field is analysed once per build.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..descriptor import AppDescriptor
from .documents import FIELDS, Entry, app_entry, app_fields, app_names, tool_entry, tool_fields
from .lexicon import Lexicon
from .loanwords import Loanwords
from .normalize import runs
from .tokens import analyze, fold_word, split_word


class Corpus:
    """Entries (apps and operations, in catalog order: an app, then its operations) and, for each
    field, each entry's term ids; `vocabulary` maps a term to its id; `surfaces` maps a word as
    written (case-folded) to its term, for typo correction."""

    def __init__(self, apps: Sequence[AppDescriptor], lexicon: Lexicon | None) -> None:
        self.entries: list[Entry] = []
        self.fields: dict[str, list[list[int]]] = {name: [] for name in FIELDS}
        self.vocabulary: dict[str, int] = {}
        self.surfaces: dict[str, str] = {}
        self.app_ranges: dict[tuple[str, object], range] = {}
        self.loanwords = Loanwords()
        self.spans: dict[int, range] = {}
        """An app's entry index -> the entries of the app and its operations."""
        self.name_postings: dict[int, list[int]] = {}
        """Term id -> the entries of the apps whose names have it (the app's own entry index)."""
        self._lexicon = lexicon
        self._cache: dict[str, list[int]] = {}
        for app in apps:
            self._add_app(app)
        self._cache.clear()

    def _ids(self, texts: Sequence[str]) -> list[int]:
        ids: list[int] = []
        for text in texts:
            cached = self._cache.get(text)
            if cached is None:
                cached = self._analyse(text)
                if len(self._cache) < 500_000:
                    self._cache[text] = cached
            ids += cached
        return ids

    def _analyse(self, text: str) -> list[int]:
        analyzed = analyze(text)
        terms = analyzed.terms
        if self._lexicon is not None:
            terms = terms + self._lexicon.concepts(analyzed)
        surfaces = self.surfaces
        for surface, term in zip(analyzed.surfaces, analyzed.words, strict=True):
            if surface not in surfaces and surface.isalpha():
                surfaces[surface] = term
        vocabulary = self.vocabulary
        return [vocabulary.setdefault(term, len(vocabulary)) for term in terms]

    def _add_loanwords(self, name: str, *, app_name: bool) -> None:
        for run in runs(name):
            if run.script == "word":
                self.loanwords.add(fold_word(run.text), app_name=app_name)
                for part in split_word(run.text):
                    self.loanwords.add(part, app_name=app_name)

    def _add_app(self, app: AppDescriptor) -> None:
        start = len(self.entries)
        self.entries.append(app_entry(app))
        fields = app_fields(app)
        for name in FIELDS:
            self.fields[name].append(self._ids(fields.get(name, ())))
        for term in set(self.fields["name"][-1]):
            self.name_postings.setdefault(term, []).append(start)
        names = app_names(app)
        owner = self._ids(names)
        for name in names:
            self._add_loanwords(name, app_name=True)
        for tool in app.tools:
            self._add_loanwords(tool.name, app_name=False)
            self.entries.append(tool_entry(app, tool))
            fields = tool_fields(tool)
            for name in FIELDS:
                self.fields[name].append(owner if name == "owner" else self._ids(fields.get(name, ())))
        span = range(start, len(self.entries))
        self.app_ranges.setdefault((app.id, app.binding), span)
        self.spans[start] = span
