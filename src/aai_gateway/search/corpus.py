"""The index's documents as term ids, field by field: what the scorer is built from.

Analysing text is most of the cost of building an index, and descriptors repeat their words (the
same parameter names across servers, the same few hundred words in every description): a text is
split on whitespace into pieces, and a piece analysed is kept for the pieces that follow
(`to-do`, `jira_create_issue` and `待办事项` are pieces; whitespace never joins two words into one
term); what a text's pieces give is put together in C. Only the lexicon's phrases
that span pieces (`pull request`) are matched over a text, where two neighbouring pieces may hold
one.

What is indexed: one document per app and one per operation, each in weighted fields.

| field | app document | operation document | weight |
|---|---|---|---|
| `name` | names in every language, aliases, id | operation name, title | FIELD_WEIGHTS |
| `text` | description | description | |
| `params` | | parameter names and their descriptions | |
| `owner` | | its app's `name` score | |
| `owner_text` | | its app's `text` score | |

An operation takes its app's name and description scores (scoring.py) for the query's own words
and concepts: `github create issue` finds GitHub's `create_issue` ahead of the GitHub app, and an
operation of an app described as a car's meets `car`. `github` alone finds the app first: an app
the query names leads its operations (SearchIndex).
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import accumulate, chain, compress, islice
from operator import and_, itemgetter

from ..descriptor.card import AppCard, OperationText
from .cjk_names import NameSounds
from .lexicon import Lexicon
from .normalize import clip_field
from .spelling import Loanwords
from .tokens import NAME_WITH_NUMBER, analyze, fold_word, stem

FIELDS = ("name", "text", "params", "owner", "owner_text")
FIELD_WEIGHTS: Mapping[str, float] = {
    "name": 1.5,
    "text": 1.0,
    "params": 0.5,
    "owner": 1.5,
    "owner_text": 0.5,
}
MAX_PARAMETERS = 64
"""Parameters indexed per operation (in declaration order); more say nothing the first ones do not."""
MAX_ONE_LINE = 300
"""A hit's description is the first line of the app's or operation's description, cut to this."""


@dataclass(frozen=True, slots=True)
class IndexedApp:
    """What an index holds of one app: its card and its operations' texts (those of the
    operations that can run here)."""

    card: AppCard
    operations: tuple[OperationText, ...]


@dataclass(frozen=True, slots=True)
class Entry:
    """A searchable thing: an app (`tool` None) or one of its operations."""

    app: AppCard
    tool: str | None
    description: str


def one_line(text: str) -> str:
    """`text` on one line, at most MAX_ONE_LINE characters."""
    line = " ".join(text[: MAX_ONE_LINE * 4].split())
    return line if len(line) <= MAX_ONE_LINE else line[: MAX_ONE_LINE - 1].rstrip() + "…"


def app_names(app: AppCard) -> list[str]:
    """Every name of `app`: localized names, aliases and its id."""
    return [clip_field(text) for text in dict.fromkeys([*app.all_names, *app.aliases, app.id])]


def app_fields(app: AppCard) -> dict[str, list[str]]:
    return {"name": app_names(app), "text": [clip_field(app.description)]}


def _parameter_texts(operation: OperationText) -> Iterator[str]:
    for parameter in operation.parameters[:MAX_PARAMETERS]:
        yield clip_field(parameter.name)
        for value in (parameter.title, parameter.description):
            if value:
                yield clip_field(value)


def tool_fields(operation: OperationText) -> dict[str, list[str]]:
    """The fields of an operation, but `owner` (the app's names, shared by all its operations)."""
    names = [clip_field(operation.name)] + ([clip_field(operation.title)] if operation.title else [])
    return {
        "name": names,
        "text": [clip_field(operation.description)],
        "params": list(_parameter_texts(operation)),
    }


def app_entry(app: AppCard) -> Entry:
    return Entry(app, None, one_line(app.description))


MIN_ACRONYM = 3
MAX_ACRONYM = 6
"""Letters of a name's short form, which a query may spell out (`ADAC`, `vsts`)."""


def short_forms(corpus: Corpus, lexicon: Lexicon | None) -> set[str]:
    """The words of app names that may be short forms a query spells out: written in capitals
    (`SNCF`), or words of no language the lexicon knows (`vsts`, an alias); `Bahn` is a word."""
    return corpus.acronyms | {
        word
        for word in corpus.name_words
        if word.isalpha()
        and MIN_ACRONYM <= len(word) <= MAX_ACRONYM
        and not (lexicon is not None and lexicon.knows(word))
    }


# --------------------------------------------------------------------------- term ids

_Piece = tuple[tuple[int, ...], tuple[str, ...], tuple[str, ...], bool, float, bool]
"""A piece of text analysed: its term ids (concepts included), its stemmed words, its words as
written, whether its last word may begin a lexicon phrase that goes on in the next piece, its
length as BM25 counts it: its words, a CJK character half a word (a Chinese word is two characters
on average, and each character and pair is a term), concepts and joined forms nothing (they are
other names for words already counted, and would make a text in another language than the
lexicon's words, or one with many concept words, look long), and whether its first word may be the
second word of a phrase."""
MAX_CACHED_PIECES = 20_000
"""Pieces analysed kept for the pieces that follow; the cache starts again when full, before an
app. Descriptors repeat a few thousand words most, so a small cache keeps most of the work (10,000
apps: 18 % more analyses than with no bound), and one that held every piece of a big catalog would
leave the heap ~30 MB bigger once freed, its pages shared with what the index keeps."""
_IDS = itemgetter(0)
_GOES_ON = itemgetter(3)
_WORDS = itemgetter(1)
_SIZE = itemgetter(4)
_FOLLOWS = itemgetter(5)
_BOUNDARY_PIECE = "\ue000"  # private use: a character no text needs (and harmless if one has it)
_BOUNDARY = f" {_BOUNDARY_PIECE} "
_BOUNDARY_ANALYSED: _Piece = ((), (_BOUNDARY_PIECE,), (_BOUNDARY_PIECE,), False, 0.0, False)
"""Between two texts of a field: a piece with no terms whose one word is in no phrase."""
CJK_CHARACTER_LENGTH = 0.5


class Column:
    """One field's term ids, entry after entry, as flat arrays: `ids`; per entry, how many
    (`counts`) and its length as BM25 counts it (`sizes`, see _Piece)."""

    def __init__(self) -> None:
        self.ids = array("i")
        self.counts = array("i")
        self.sizes = array("d")

    def add(self, ids: Sequence[int], size: float) -> None:
        self.ids.extend(ids)
        self.counts.append(len(ids))
        self.sizes.append(size)

    def __len__(self) -> int:
        return len(self.counts)


class Corpus:
    """The entries (an app, then its operations, app after app) and, for each field, each entry's
    term ids. `vocabulary` maps a term to its id; `surfaces` holds the words as written (case-
    and accent-folded), for typo correction; `loanwords` the names katakana may spell."""

    def __init__(self, apps: Iterable[IndexedApp], lexicon: Lexicon | None) -> None:
        self.cards: list[AppCard] = []
        self._operation_names: list[str] = []
        self._operation_lines: list[str] = []
        """Per operation (the operations of app after app), what a hit on it shows: its name and
        one line. The operations' texts are not kept: at 10,000 apps they cost more memory than
        the index, and `apps` may be read a batch at a time (`Searcher`). Two flat lists, not a
        pair per operation: 65,000 pairs cost ~4 MB."""
        self._same: dict[str, str] = {}
        self.reads_only = bytearray()
        """Per entry, 1 for an operation its app says changes nothing (`readOnlyHint`, HTTP GET)."""
        self.entry_app = array("i")
        self.entry_tool = array("i")
        """Per entry: the index of its app in `cards`, and of its operation (-1: the app itself)."""
        self.owner = array("i")
        """Per entry: the entry of its app (-1 for an app: it owns nothing)."""
        stored = [name for name in FIELDS if not name.startswith("owner")]
        self.fields: dict[str, Column] = {name: Column() for name in stored}
        self.vocabulary: dict[str, int] = {}
        self.surfaces: set[str] = set()
        self.name_words: set[str] = set()
        """The words of the apps' names as written, and joined (`immoscout24`): what a misspelt
        word most often means when several known words are as near (spelling.py)."""
        self.acronyms: set[str] = set()
        """Words of app names written in capitals, folded: `ADAC`, `SNCF`, `BBVA`."""
        self.whole_names: set[str] = set()
        """The apps' names that are one word, folded (`EDEKA`: edeka); not aliases."""
        self.loanwords = Loanwords()
        self.name_sounds = NameSounds()
        """The apps' Chinese and kana names, for the query rewrite of misspelt ones."""
        self.app_numbers: dict[tuple[str, str], int] = {}
        """`AppCard.key` -> the app's index in `cards` (the first of equal keys)."""
        self.app_starts = array("i")
        """Per app, its entry (its operations follow it); one more: the number of entries."""
        self._lexicon = lexicon
        self._pieces: dict[str, _Piece] = {_BOUNDARY_PIECE: _BOUNDARY_ANALYSED}
        self._loanword_pieces: set[tuple[str, bool]] = set()
        for number, app in enumerate(apps):
            self._add_app(number, app)
        self.app_starts.append(len(self))
        self._pieces = {}
        self._loanword_pieces = set()
        self._same = {}

    def __len__(self) -> int:
        return len(self.entry_app)

    def entry(self, index: int) -> Entry:
        """Entry `index`, counted from 0 (no negative indexes: the operation's place below is
        counted from the front)."""
        if index < 0:
            raise IndexError(f"entry {index} of {len(self)}")
        number, tool = self.entry_app[index], self.entry_tool[index]
        card = self.cards[number]
        if tool < 0:
            return app_entry(card)
        operation = index - number - 1  # the entries before it, less those of apps 0..number
        return Entry(card, self._operation_names[operation], self._operation_lines[operation])

    def entries_of(self, number: int) -> range:
        """The entries of app `number`: the app's, then its operations'."""
        return range(self.app_starts[number], self.app_starts[number + 1])

    def drop_fields(self) -> None:
        """Forget the term ids once the scorer holds them."""
        self.fields = {}

    def _piece(self, piece: str) -> _Piece:
        if piece.isascii() and piece.isalpha() and (piece.islower() or piece[1:].islower()):
            return self._word(piece.lower())
        analyzed = analyze(piece)
        terms = analyzed.terms
        if self._lexicon is not None:
            terms = terms + self._lexicon.for_descriptor(self._lexicon.concepts(analyzed))
        self.surfaces.update(word for word in analyzed.surfaces if word.isalpha())
        vocabulary = self.vocabulary
        ids = tuple(vocabulary.setdefault(term, len(vocabulary)) for term in terms)
        words, surfaces = tuple(analyzed.words), tuple(analyzed.surfaces)
        size = len(words) + CJK_CHARACTER_LENGTH * sum(map(len, analyzed.stretches))
        return ids, words, surfaces, self._may_go_on(words, surfaces), size, self._may_follow(words, surfaces)

    def _may_follow(self, words: tuple[str, ...], surfaces: tuple[str, ...]) -> bool:
        return self._lexicon is not None and bool(words) and self._lexicon.may_follow(words[0], surfaces[0])

    def _may_go_on(self, words: tuple[str, ...], surfaces: tuple[str, ...]) -> bool:
        return self._lexicon is not None and bool(words) and self._lexicon.may_go_on(words[-1], surfaces[-1])

    def _word(self, word: str) -> _Piece:
        """A piece that is one plain word (`read`, `Files`): what `analyze` would make of it."""
        term = stem(word)
        terms = [term]
        if self._lexicon is not None:
            concepts = self._lexicon.concepts_of_word(word, term)
            if concepts:
                terms += self._lexicon.for_descriptor(concepts)
        self.surfaces.add(word)
        vocabulary = self.vocabulary
        ids = tuple(vocabulary.setdefault(term, len(vocabulary)) for term in terms)
        words, surfaces = (term,), (word,)
        return ids, words, surfaces, self._may_go_on(words, surfaces), 1.0, self._may_follow(words, surfaces)

    def _ids(self, texts: Sequence[str]) -> tuple[Sequence[int], float]:
        """The term ids of a field's texts and their length (see _Piece): the texts analysed as
        one string, a boundary piece between them."""
        if not texts:
            return (), 0.0
        return self._text_ids(texts[0] if len(texts) == 1 else _BOUNDARY.join(texts))

    def _text_ids(self, text: str) -> tuple[list[int], float]:
        # the common path stays in C (split, map, chain): this runs for every distinct text
        split = text.split()
        pieces = self._pieces
        analysed = list(map(pieces.get, split))
        if None in analysed:
            analysed = [known or self._new_piece(piece) for piece, known in zip(split, analysed, strict=True)]
        ids = list(chain.from_iterable(map(_IDS, analysed)))  # type: ignore[arg-type]
        size = sum(map(_SIZE, analysed))  # type: ignore[arg-type]
        # a piece that may start a phrase the next one may go on with (in C: the common path)
        if (
            self._lexicon is not None
            and len(analysed) > 1
            and any(map(and_, map(_GOES_ON, analysed), map(_FOLLOWS, islice(analysed, 1, None))))  # type: ignore[arg-type]
        ):
            joins = list(map(and_, map(_GOES_ON, analysed), map(_FOLLOWS, islice(analysed, 1, None))))  # type: ignore[arg-type]
            self._add_phrases(ids, analysed, joins, self._lexicon)  # type: ignore[arg-type]
        return ids, size

    def _new_piece(self, piece: str) -> _Piece:
        analysed = self._piece(piece)
        self._pieces[piece] = analysed
        return analysed

    def _add_phrases(
        self, ids: list[int], analysed_text: list[_Piece], joins: list[bool], lexicon: Lexicon
    ) -> None:
        """The concepts of lexicon phrases that span pieces (`pull request`), once each: only the
        phrases that cross a boundary where two pieces may join (`joins[i]`: pieces i and i + 1)
        are looked for."""
        stem_pairs, surface_pairs = lexicon.pairs
        boundaries: list[int] = []
        positions = list(accumulate(map(len, map(_WORDS, analysed_text))))
        for index in compress(range(len(joins)), joins):
            before, after = analysed_text[index], analysed_text[index + 1]
            if (before[1][-1], after[1][0]) in stem_pairs or (before[2][-1], after[2][0]) in surface_pairs:
                boundaries.append(positions[index])
        if not boundaries:
            return  # the common case: no phrase crosses a boundary
        words = [word for analysed in analysed_text for word in analysed[1]]
        surfaces = [word for analysed in analysed_text for word in analysed[2]]
        found = [
            token for boundary in boundaries for token in lexicon.phrases_across(words, surfaces, boundary)
        ]
        if not found:
            return
        inside = set(ids)
        vocabulary = self.vocabulary
        for concept in lexicon.for_descriptor(found):
            term = vocabulary.setdefault(concept, len(vocabulary))
            if term not in inside:
                ids.append(term)
                inside.add(term)

    def _add_result_line(self, operation: OperationText) -> None:
        """An operation's name and one line; equal ones kept once (copies of a server repeat them)."""
        line = one_line(operation.description or operation.title or "")
        self._operation_names.append(self._same.setdefault(operation.name, operation.name))
        self._operation_lines.append(self._same.setdefault(line, line))

    def _add_loanwords(self, name: str, *, app_name: bool) -> None:
        seen = self._loanword_pieces
        for piece in name.split():
            analysed = self._pieces.get(piece)
            if analysed is None or (piece, app_name) in seen:
                continue
            seen.add((piece, app_name))
            if app_name:
                surfaces = analysed[2]
                self.name_words.update(
                    word for word in surfaces if word.isalpha() or NAME_WITH_NUMBER.fullmatch(word)
                )
                if len(surfaces) > 1:
                    self.name_words.add("".join(surfaces))  # `ImmoScout24`: immoscout24
            if app_name and piece.isalpha():
                self.loanwords.add(fold_word(piece), app_name=True)
                if piece.isupper() and len(piece) >= MIN_ACRONYM:
                    self.acronyms.add(fold_word(piece))
            for word in analysed[2]:
                self.loanwords.add(word, app_name=app_name)

    def _add_app(self, number: int, indexed: IndexedApp) -> None:
        app = indexed.card
        start = len(self)
        if len(self._pieces) >= MAX_CACHED_PIECES:
            # between apps only: an app's names are read back from the cache after its other fields
            self._pieces = {_BOUNDARY_PIECE: _BOUNDARY_ANALYSED}
        self.cards.append(app)
        self.entry_app.append(number)
        self.entry_tool.append(-1)
        self.owner.append(-1)
        self.reads_only.append(0)
        self.app_starts.append(start)
        fields = app_fields(app)
        for name, column in self.fields.items():
            column.add(*self._ids(fields.get(name, ())))
        names = app.all_names
        for name in fields["name"]:
            self._add_loanwords(name, app_name=True)
            self.name_sounds.add(name)
            analysed = self._pieces.get(name) if name in names else None  # a name of one piece
            if analysed is not None and len(analysed[2]) == 1 and analysed[2][0].isalpha():
                self.whole_names.add(analysed[2][0])
        for index, operation in enumerate(indexed.operations):
            self.entry_app.append(number)
            self.entry_tool.append(index)
            self.owner.append(start)
            self.reads_only.append(operation.reads_only)
            self._add_result_line(operation)
            fields = tool_fields(operation)
            for name, column in self.fields.items():
                column.add(*self._ids(fields.get(name, ())))
            self._add_loanwords(fields["name"][0], app_name=False)
        self.app_numbers.setdefault(app.key, number)
