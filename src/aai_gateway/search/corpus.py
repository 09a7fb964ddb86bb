"""The index's documents as term ids, field by field: what the scorer is built from.

Analysing text is most of the cost of building an index, and descriptors repeat their words (the
same parameter names, the same few hundred words in every description): a text is split on
whitespace and each distinct piece is analysed once per build (`to-do`, `jira_create_issue` and
`待办事项` are pieces; whitespace never joins two words into one term). Only the lexicon's
phrases that span pieces (`pull request`) are matched over the whole text, when two neighbouring
pieces may start one.
"""

from __future__ import annotations

from array import array
from itertools import chain
from operator import itemgetter
from collections.abc import Sequence

from ..descriptor import AppDescriptor
from .documents import FIELDS, Entry, app_entry, app_fields, app_names, tool_entry, tool_fields
from .lexicon import Lexicon
from .loanwords import Loanwords
from .tokens import analyze, fold_word, stem

_Piece = tuple[tuple[int, ...], tuple[str, ...], tuple[str, ...], bool]
"""A piece of text analysed: its term ids (concepts included), its stemmed words, its words as
written, and whether its last word may begin a lexicon phrase that goes on in the next piece."""
MAX_CACHED_PIECES = 1_000_000
_IDS = itemgetter(0)
_GOES_ON = itemgetter(3)


class Corpus:
    """The entries (an app, then its operations, app after app) and, for each field, each entry's
    term ids. `vocabulary` maps a term to its id; `surfaces` holds the words as written (case-
    and accent-folded), for typo correction; `loanwords` the names katakana may spell."""

    def __init__(self, apps: Sequence[AppDescriptor], lexicon: Lexicon | None) -> None:
        self.apps = list(apps)
        self.entry_app = array("i")
        self.entry_tool = array("i")
        """Per entry: the index of its app in `apps`, and of its operation (-1: the app itself)."""
        self.owner = array("i")
        """Per entry: the entry of its app (-1 for an app: it owns nothing)."""
        self.fields: dict[str, list[list[int]]] = {name: [] for name in FIELDS if name != "owner"}
        self.vocabulary: dict[str, int] = {}
        self.surfaces: set[str] = set()
        self.loanwords = Loanwords()
        self.app_ranges: dict[tuple[str, object], range] = {}
        self.spans: dict[int, range] = {}
        """An app's entry -> the entries of the app and its operations."""
        self.name_postings: dict[int, list[int]] = {}
        """Term id -> the entries of the apps whose names have it."""
        self._lexicon = lexicon
        self._pieces: dict[str, _Piece] = {}
        self._loanword_pieces: set[tuple[str, bool]] = set()
        for number, app in enumerate(self.apps):
            self._add_app(number, app)
        self._pieces = {}
        self._loanword_pieces = set()

    def __len__(self) -> int:
        return len(self.entry_app)

    def entry(self, index: int) -> Entry:
        app = self.apps[self.entry_app[index]]
        tool = self.entry_tool[index]
        return app_entry(app) if tool < 0 else tool_entry(app, app.tools[tool])

    def drop_fields(self) -> None:
        """Forget the term ids once the scorer holds them."""
        self.fields = {}

    def _piece(self, piece: str) -> _Piece:
        if piece.isascii() and piece.isalpha() and (piece.islower() or piece[1:].islower()):
            return self._word(piece.lower())
        analyzed = analyze(piece)
        terms = analyzed.terms
        if self._lexicon is not None:
            terms = terms + self._lexicon.concepts(analyzed)
        self.surfaces.update(word for word in analyzed.surfaces if word.isalpha())
        vocabulary = self.vocabulary
        ids = tuple(vocabulary.setdefault(term, len(vocabulary)) for term in terms)
        words, surfaces = tuple(analyzed.words), tuple(analyzed.surfaces)
        return ids, words, surfaces, self._may_go_on(words, surfaces)

    def _may_go_on(self, words: tuple[str, ...], surfaces: tuple[str, ...]) -> bool:
        return self._lexicon is not None and bool(words) and self._lexicon.may_go_on(words[-1], surfaces[-1])

    def _word(self, word: str) -> _Piece:
        """A piece that is one plain word (`read`, `Files`): what `analyze` would make of it."""
        term = stem(word)
        terms = [term]
        if self._lexicon is not None:
            terms += self._lexicon.concepts_of_word(word, term)
        self.surfaces.add(word)
        vocabulary = self.vocabulary
        ids = tuple(vocabulary.setdefault(term, len(vocabulary)) for term in terms)
        return ids, (term,), (word,), self._may_go_on((term,), (word,))

    def _ids(self, texts: Sequence[str]) -> list[int]:
        # the common path stays in C (split, map, chain): this runs for every text of every entry
        ids: list[int] = []
        pieces = self._pieces
        for text in texts:
            split = text.split()
            analysed = list(map(pieces.get, split))
            if None in analysed:
                analysed = [known or self._new_piece(piece) for piece, known in zip(split, analysed, strict=True)]
            ids += chain.from_iterable(map(_IDS, analysed))  # type: ignore[arg-type]
            if self._lexicon is not None and len(analysed) > 1 and any(map(_GOES_ON, analysed[:-1])):  # type: ignore[arg-type]
                self._add_phrases(ids, analysed, self._lexicon)  # type: ignore[arg-type]
        return ids

    def _new_piece(self, piece: str) -> _Piece:
        analysed = self._piece(piece)
        if len(self._pieces) < MAX_CACHED_PIECES:
            self._pieces[piece] = analysed
        return analysed

    def _add_phrases(self, ids: list[int], analysed_text: list[_Piece], lexicon: Lexicon) -> None:
        """The concepts of lexicon phrases that span pieces (`pull request`), once each."""
        if not any(
            lexicon.joins_phrase(before[1], before[2], after[1], after[2])
            for before, after in zip(analysed_text, analysed_text[1:], strict=False)
            if before[3]
        ):
            return
        words = [word for analysed in analysed_text for word in analysed[1]]
        surfaces = [word for analysed in analysed_text for word in analysed[2]]
        inside = {concept for analysed in analysed_text for concept in analysed[0]}
        vocabulary = self.vocabulary
        for concept in lexicon.phrase_concepts(words, surfaces):
            term = vocabulary.setdefault(concept, len(vocabulary))
            if term not in inside:
                ids.append(term)
                inside.add(term)

    def _add_loanwords(self, name: str, *, app_name: bool) -> None:
        seen = self._loanword_pieces
        for piece in name.split():
            analysed = self._pieces.get(piece)
            if analysed is None or (piece, app_name) in seen:
                continue
            seen.add((piece, app_name))
            if app_name and piece.isalpha():
                self.loanwords.add(fold_word(piece), app_name=True)
            for word in analysed[2]:
                self.loanwords.add(word, app_name=app_name)

    def _add_app(self, number: int, app: AppDescriptor) -> None:
        start = len(self)
        self.entry_app.append(number)
        self.entry_tool.append(-1)
        self.owner.append(-1)
        fields = app_fields(app)
        for name, column in self.fields.items():
            column.append(self._ids(fields.get(name, ())))
        for term in set(self.fields["name"][-1]):
            self.name_postings.setdefault(term, []).append(start)
        for name in fields["name"]:
            self._add_loanwords(name, app_name=True)
        for index, tool in enumerate(app.tools):
            self.entry_app.append(number)
            self.entry_tool.append(index)
            self.owner.append(start)
            fields = tool_fields(tool)
            for name, column in self.fields.items():
                column.append(self._ids(fields.get(name, ())))
            self._add_loanwords(fields["name"][0], app_name=False)
        span = range(start, len(self))
        self.app_ranges.setdefault((app.id, app.binding), span)
        self.spans[start] = span
