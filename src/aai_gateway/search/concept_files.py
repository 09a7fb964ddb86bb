"""The concept lexicon's files (the JSON files of `concepts/` beside this package): what a
concept is, how a file is read, and the broader concepts each concept has, closed over the
chain (`refund` -> `payment` -> `money`). Matching texts to concepts is lexicon.py's.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources

CONCEPT_PREFIX = "§"
NARROWER_PREFIX = "§<"
"""`§<payment`: the term of a text that has a concept narrower than `payment` (`§refund`)."""
MAX_CJK_TERM = 12
"""The longest CJK word the lexicon may hold (longer ones are refused when it loads)."""
MIN_FOREIGN_STEM = 5
"""A German, French or Spanish stem shorter than this matches nothing (`nach`, `ver`)."""
MIN_STEMMED_WORD = 5
"""A word shorter than this is matched as written or inflected only: by stem, `them` would be
German `Themen`."""
MIN_INFLECTED = 5
"""Words shorter than this get no inflections (`gîte` + `e` would be `gitee`; `Tür` + `n`,
folded, English `turn`)."""
INFLECTIONS: Mapping[str, tuple[str, ...]] = {
    "de": ("e", "n", "en", "s", "es", "er", "ern"),
    "fr": ("s", "x", "e", "es"),
    "es": ("s", "es"),
}
"""Endings added to a word of these languages: its plural and other regular forms."""


@dataclass(frozen=True, slots=True)
class Concept:
    id: str
    terms: Mapping[str, Sequence[str]]
    """Words by language tag (`en`, `zh`, `ja`, `de`, `fr`, `es`, ...)."""
    broader: Sequence[str] = ()
    """Ids of broader concepts: a text with this concept also has theirs."""
    query_terms: Mapping[str, Sequence[str]] = field(default_factory=dict)
    action: bool = False
    """Something done (create, send, cancel) rather than a thing: the concepts of a file marked
    `"actions": true`."""
    """Words by language that name the concept in a query only: what users say that descriptors
    write with another meaning (`text` someone: a message; `Kohle`: money)."""


@dataclass(slots=True)
class LexiconSource:
    concepts: list[Concept] = field(default_factory=list)
    plain_words: list[str] = field(default_factory=list)
    """CJK words that belong to no concept (they only hide the shorter words inside them)."""


def parse_lexicon(text: str, into: LexiconSource | None = None) -> LexiconSource:
    """The concepts and plain words of one lexicon file (JSON)."""
    source = into or LexiconSource()
    data = json.loads(text)
    action = bool(data.get("actions", False))
    for entry in data.get("concepts", ()):
        broader = tuple(entry.get("broader", ()))
        query_terms = entry.get("query_terms", {})
        source.concepts.append(Concept(entry["id"], entry["terms"], broader, query_terms, action=action))
    for words in data.get("words_without_concept", {}).values():
        source.plain_words.extend(words)
    return source


def load_source() -> LexiconSource:
    """Every file of the lexicon shipped with the package, in name order."""
    folder = resources.files(__package__) / "concepts"
    source = LexiconSource()
    for item in sorted(folder.iterdir(), key=lambda item: item.name):
        if item.name.endswith(".json"):
            parse_lexicon(item.read_text(encoding="utf-8"), source)
    return source


def load_concepts(text: str | None = None) -> list[Concept]:
    """The concepts of `text` (JSON), by default those of the lexicon shipped with the package."""
    return (load_source() if text is None else parse_lexicon(text)).concepts


def broader_closure(concepts: Sequence[Concept]) -> dict[str, frozenset[str]]:
    ids = {concept.id for concept in concepts}
    direct: dict[str, tuple[str, ...]] = {}
    for concept in concepts:
        for other in concept.broader:
            if other not in ids:
                raise ValueError(f"the lexicon's concept {concept.id!r} names an unknown broader {other!r}")
        direct[concept.id] = (*direct.get(concept.id, ()), *concept.broader)
    closure: dict[str, frozenset[str]] = {}
    for concept_id, wider in direct.items():
        seen: set[str] = set()
        todo = list(wider)
        while todo:
            other = todo.pop()
            if other not in seen and other != concept_id:
                seen.add(other)
                todo.extend(direct.get(other, ()))
        if seen:
            closure[CONCEPT_PREFIX + concept_id] = frozenset(CONCEPT_PREFIX + other for other in seen)
    return closure


def narrower_term(token: str) -> str:
    """The term of texts with a concept narrower than `token` (`§payment` -> `§<payment`)."""
    return NARROWER_PREFIX + token[len(CONCEPT_PREFIX) :]
