"""Turning text into index terms, the same way for descriptors and queries.

- Alphabetic words: split on anything that is not a letter or digit and at camelCase
  (`createTodoTask`, `jira_create_issue`, `send-channel-message` each give their words), each word
  case- and accent-folded and lightly stemmed (English Snowball, `tasks` and `task` meet); a name written in
  parts also gives its parts joined (`to-do` and `todo`, `e-mail` and `email`, `HassTurnOff` and
  `hassturnoff`). An elided French article (`l'agenda`: `agenda`) and an English ending after an
  apostrophe (`what's`: `what`) are dropped.
- Chinese (Han): every character and every pair of neighbouring characters, after folding
  Traditional to Simplified: there are no spaces to split on, and pairs are what most words are.
- Japanese kana and Korean Hangul: the whole run (2 to 12 characters) and every pair; hiragana is
  folded to katakana (`りまいんだー` meets `リマインダー`).

Terms never mix scripts, so a word and a CJK pair cannot collide.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from itertools import pairwise

from .normalize import MAX_FIELD_CHARACTERS, Run, clip_field, fold_run, is_all_cjk, runs

NAME_WITH_NUMBER = re.compile(r"(?=(?:\d*[^\W\d_]){4})[^\W\d_][^\W_]*\d[^\W_]*")
"""A word of letters and digits that starts with a letter and has four letters or more
(`zigbee2mqtt`, `immoscout24`): in an app's name, a name the speller knows; in a query, a word it
corrects like any other (`zigbe2mqtt`, `imoscout24`)."""
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])|(?<=\d)(?=[A-Z][a-z])")
MIN_HIRAGANA_LOANWORD = 4
MAX_WHOLE_RUN = 12
"""A kana or Hangul run longer than this is a sentence, not a word: only its pairs are terms."""


@dataclass(slots=True)
class Analyzed:
    """A text as the index sees it.

    `terms`: the index terms, repeated as often as they occur. `words`: the stemmed words in order
    (for phrases of the concept lexicon). `stretches`: the folded CJK text between separators (for
    CJK terms of the lexicon, matched as substrings). `surfaces`: the case-folded words before
    stemming (what typo correction compares)."""

    terms: list[str] = field(default_factory=list)
    words: list[str] = field(default_factory=list)
    stretches: list[str] = field(default_factory=list)
    surfaces: list[str] = field(default_factory=list)
    kana: list[str] = field(default_factory=list)
    """The kana runs, folded to katakana (for names written in katakana, loanwords.py)."""
    chunk_of: list[int] = field(default_factory=list)
    """Per word, the index of the first word written together with it (`jobFullName`: 0, 0, 0)."""
    joined: dict[str, int] = field(default_factory=dict)
    """The joined forms among `terms` (`jobfullnam`; a query's `todo` for `to do`), each with the
    index of its first word."""
    spellings: dict[int, str] = field(default_factory=dict)
    """Per word with an umlaut, its stem spelt as ASCII names spell it (`Kündigung`: `kuendigung`,
    as in `vertragKuendigen`), also among `terms`."""


_FUNCTION_STEMS = frozenset(
    {"with", "for", "from", "the", "this", "that", "there", "here", "have", "some", "into", "about"}
    | {"then", "than", "what", "when", "where", "which"}
)
"""English function words that a longer word may stem to (`withings`: `with`): such a word keeps
its own form, or a name would meet every `with` of every description."""


class _Stemmer:
    """A Snowball stemmer (PyStemmer), loaded on first use; words under four letters and words
    with digits are kept as they are (`k8s`, `s3`, `12306`). No cache of ours: PyStemmer keeps its
    own (10,000 words). One of every word stemmed held ~10 MB at 10,000 apps for a process's life;
    it made a first index build, queries and the lexicon's load no faster, and only a rebuild in
    the same process ~0.4 s faster (of ~7 s at 10,000 apps)."""

    def __init__(self, language: str) -> None:
        self._language = language
        self._stem: Callable[[str], str] | None = None

    def __call__(self, word: str) -> str:
        if len(word) < 4 or not word.isalpha():
            return word
        if self._stem is None:
            import Stemmer  # noqa: PLC0415 (loaded when the first index is built)

            self._stem = Stemmer.Stemmer(self._language).stemWord
        stem = self._stem(word)
        if stem in _FUNCTION_STEMS and len(word) > len(stem) + 2:
            return word  # `withings` is no form of `with`
        return stem


stem = _Stemmer("english")
"""English Snowball: every Latin word of the index and of queries goes through it."""
FOREIGN_STEMMERS = {"de": _Stemmer("german"), "fr": _Stemmer("french"), "es": _Stemmer("spanish")}
"""Used only to match words of the concept lexicon in those languages (lexicon.py)."""


def fold_word(word: str) -> str:
    """A word case-folded, its accents dropped (`Tâche` and `tache` meet; `Größe`: `grosse`)."""
    folded = word.casefold()
    if folded.isascii():
        return folded
    decomposed = unicodedata.normalize("NFD", folded)
    return unicodedata.normalize("NFC", "".join(c for c in decomposed if not unicodedata.combining(c)))


_UMLAUTS = str.maketrans({"ä": "ae", "ö": "oe", "ü": "ue"})


def umlaut_spelling(word: str) -> str | None:
    """`word` (a camelCase part, as written) with its umlauts spelt out as German does without
    them (`Kündigen`: `kuendigen`), folded; None when it has none."""
    folded = word.casefold()
    spelt = folded.translate(_UMLAUTS)
    return None if spelt == folded else fold_word(spelt)


def _cjk_terms(script: str, text: str, into: list[str]) -> None:
    if script == "han":
        into.extend(text)
    elif 1 < len(text) <= MAX_WHOLE_RUN:
        # a single kana is a particle (の, を, に): it says nothing about what is wanted
        into.append(text)
    into.extend(text[i : i + 2] for i in range(len(text) - 1))


class _Chunk:
    """Words written together (`to-do`, `jira_create_issue`, `HassTurnOff`): their joined forms."""

    def __init__(self, start: int = 0) -> None:
        self.parts: list[str] = []
        self.start = start
        """The index of the chunk's first word in the text."""

    def joined_terms(self) -> list[str]:
        parts = self.parts
        if len(parts) < 2:
            return []
        joined = [stem("".join(parts))]
        if len(parts) > 2:
            joined += [stem(a + b) for a, b in pairwise(parts)]
        return joined


def analyze(text: str, *, pairs: bool = False) -> Analyzed:
    """The terms of `text` (already clipped). `pairs`: also join each two neighbouring words
    written apart (`to do` gives `todo`): for queries, whose joined forms are only kept when the
    index knows them."""
    out = Analyzed()
    chunk = _Chunk()
    stretch: list[str] = []
    previous_word: str | None = None
    pieces = list(runs(text))
    elided = False
    for index, piece in enumerate(pieces):
        run = piece
        if run.script == "word" and _is_clitic(run, pieces[index + 1] if index + 1 < len(pieces) else None):
            # `l'agenda`, `qu'il`: the article goes, the word stands alone; `what's`, `don't`: the
            # ending goes. A letter on its own says nothing a search could use.
            elided = not run.apostrophe
            continue
        if elided:
            run = Run(run.script, run.text, joined=False)
            elided = False
        if not run.joined:
            _end_chunk(chunk, out)
            chunk = _Chunk(len(out.words))
            if stretch:
                out.stretches.append("".join(stretch))
                stretch = []
        _add_run(run, out, chunk, stretch)
        if run.script == "word":
            last = chunk.parts[-1] if chunk.parts else None
            if pairs and previous_word is not None and not run.joined and last is not None:
                pair = stem(previous_word + chunk.parts[0])
                out.terms.append(pair)
                out.joined.setdefault(pair, chunk.start - 1)
            previous_word = last
        else:
            previous_word = None
    _end_chunk(chunk, out)
    if stretch:
        out.stretches.append("".join(stretch))
    return out


ELIDED = frozenset({"c", "d", "j", "l", "m", "n", "qu", "s", "t"})
"""French articles and pronouns written before a vowel with an apostrophe (`l'agenda`, `d'accord`)."""
ENDINGS = frozenset({"s", "t", "d", "m", "ll", "re", "ve"})
"""English endings after an apostrophe (`what's`, `don't`, `I'll`, `we're`)."""


def _is_clitic(run: Run, following: Run | None) -> bool:
    """Whether a word run is an elided article (`l'`, before a word joined by an apostrophe) or an
    English ending after an apostrophe (`'s`, `'t`)."""
    folded = run.text.casefold()
    if run.apostrophe and folded in ENDINGS:
        return True
    return (
        following is not None
        and following.apostrophe
        and following.script == "word"
        and folded in ELIDED
        and following.text.casefold() not in ENDINGS
    )


def _end_chunk(chunk: _Chunk, out: Analyzed) -> None:
    for term in chunk.joined_terms():
        out.terms.append(term)
        out.joined.setdefault(term, chunk.start)


def _add_run(run: Run, out: Analyzed, chunk: _Chunk, stretch: list[str]) -> None:
    if run.script == "word":
        written = [part for part in _CAMEL.split(run.text) if part]
        parts = [fold_word(part) for part in written]
        chunk.parts += parts
        for part, as_written in zip(parts, written, strict=True):
            stemmed = stem(part)
            out.terms.append(stemmed)
            if not as_written.isascii() and (spelt := umlaut_spelling(as_written)) is not None:
                out.spellings[len(out.words)] = stem(spelt)
                out.terms.append(out.spellings[len(out.words)])
            out.words.append(stemmed)
            out.surfaces.append(part)
            out.chunk_of.append(chunk.start)
        return
    folded = fold_run(run.script, run.text)
    stretch.append(folded)
    if run.script == "kana" and (folded == run.text or len(run.text) >= MIN_HIRAGANA_LOANWORD):
        # katakana, or hiragana long enough to be a name written by sound (ぎっとはぶ); shorter
        # hiragana is particles and verb endings (らせを), no name
        out.kana.append(folded)
    _cjk_terms(run.script, folded, out.terms)


_PLAIN_LATIN = re.compile(r"[^\W\d_]+(?: [^\W\d_]+)*")
_LAST_LATIN = "\u024f"  # the end of Latin Extended-B


def word_shape(text: str) -> tuple[list[str], list[str], list[str]]:
    """What `analyze` makes of a lexicon word or phrase: its words (stems), its words as written
    (folded) and its CJK stretches. Most of the lexicon is read without the tokenizer, to the same
    result (a test checks every shipped word): words and phrases of Latin letters, lowercase or
    capitalized (German nouns), and words of CJK characters only (one stretch of their runs,
    folded). Loading the lexicon is paid at a process's first search: this makes it ~11 % cheaper
    (instructions counted by callgrind: 2,258 M before, 2,002 M after)."""
    parts = text.split(" ")
    if (
        len(text) <= MAX_FIELD_CHARACTERS  # what `clip_field` would cut
        and _PLAIN_LATIN.fullmatch(text)
        and max(text) <= _LAST_LATIN  # one call in C, not a test per character (-2 % of a build)
        and all(part.islower() or part.istitle() for part in parts)  # no camelCase
        and unicodedata.is_normalized("NFKC", text)  # `ǆ`, `ª`: the tokenizer rewrites them
    ):
        surfaces = [fold_word(part) for part in parts]
        return [stem(surface) for surface in surfaces], surfaces, []
    if len(text) <= MAX_FIELD_CHARACTERS and is_all_cjk(text) and unicodedata.is_normalized("NFKC", text):
        # every run joins the one before it (nothing between them): one stretch (`予約する`)
        return [], [], ["".join(fold_run(run.script, run.text) for run in runs(text))]
    analyzed = analyze(clip_field(text))
    return analyzed.words, analyzed.surfaces, analyzed.stretches


def analyze_all(texts: Iterable[str]) -> Analyzed:
    """The terms of several texts of one field, as separate phrases."""
    out = Analyzed()
    for text in texts:
        one = analyze(text)
        out.terms += one.terms
        out.words += one.words
        out.words.append("")  # no phrase spans two texts
        out.stretches += one.stretches
        out.surfaces += one.surfaces
    return out
