"""BM25 over the corpus's fields, as compressed sparse columns in numpy.

For each field and each term, the entries that have the term and their BM25 score for it are
computed once, when the index is built (Lucene's BM25: `idf = ln(1 + (N - df + 0.5) / (df + 0.5))`,
`score = idf * tf / (tf + k1 * (1 - b + b * length / average length))`, the length counted as
corpus.py says). A query is a list of units (query.py); for each unit and each field f, the entry
scores the larger of its literal terms added up and its best alternative:

    unit_f(u, e) = max(sum over literal t of w(t) * BM25_f(t, e),
                       max over alternative t of w(t) * BM25_f(t, e))
    score(e)     = coordination(e) * sum over units u, fields f of FIELD_WEIGHTS[f] * unit_f(u, e)

where an operation's `owner` and `owner_text` fields are its app's `name` and `text` values,
counted for the query's own words and the concepts they name only, at no cost in memory; and
coordination(e) = (units e matches / units) ** COORDINATION.

Why not a library: bm25s computes the same scores (checked equal to 1e-6) but builds its matrices
with a Python loop per document: 3.4-20 s for 10,000 apps on the development machine against 0.9 s
here; tantivy and SQLite FTS5 answer the best k documents only, where the owner field, the
named-app rule and the restriction to one app need every entry's score. docs/decisions.md
("Search") has the figures. numpy is imported when the first index is built.
"""

from __future__ import annotations

from collections.abc import Container, Mapping, Sequence
from typing import TYPE_CHECKING

from .corpus import FIELD_WEIGHTS, Column

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from .query_units import Unit

BM25_K1 = 1.2
BM25_B = 0.75
COORDINATION = 0.5
"""An entry's score is multiplied by (the share of the query's units it matches) ** COORDINATION:
the operation that has both the action and the thing asked for (`approve` and `pull request`)
leads one that has only one of them, however strongly (Lucene's classic coordination factor,
softened)."""


class _Field:
    """One field's BM25 scores: for term t, entries `rows[starts[t]:starts[t + 1]]` with scores
    `values[...]`. The offsets are 32-bit integers (10,000 apps: 1.2 MB less). The scores stay
    single-precision floats: kept in half precision they took 4.7 MB less, but widening them as
    they are read cost each term's scoring ~14 % (docs/decisions.md, "Memory at 10,000 apps")."""

    def __init__(self, column: Column, terms: int) -> None:
        import numpy as np  # noqa: PLC0415

        count = len(column)
        flat = np.frombuffer(column.ids, dtype=np.int32).astype(np.int64)
        owners = np.repeat(np.arange(count, dtype=np.int64), np.frombuffer(column.counts, dtype=np.int32))
        lengths = np.frombuffer(column.sizes, dtype=np.float64)
        # one key per (term, entry), term-major: sorting them groups each term's entries
        keys, frequencies = np.unique(flat * count + owners, return_counts=True)
        term_of = keys // count
        self.rows: npt.NDArray[np.int32] = (keys - term_of * count).astype(np.int32)
        document_frequency = np.bincount(term_of, minlength=terms)
        self.starts = np.concatenate(([0], np.cumsum(document_frequency))).astype(np.int32)
        idf = np.log1p((count - document_frequency + 0.5) / (document_frequency + 0.5))
        average = float(lengths.mean()) if count and lengths.any() else 1.0
        norm = BM25_K1 * (1 - BM25_B + BM25_B * lengths[self.rows] / average)
        self.values = (idf[term_of] * frequencies / (frequencies + norm)).astype(np.float32)

    def entries(self, term: int) -> npt.NDArray[np.int32]:
        """The entries that have `term`."""
        if term + 1 < len(self.starts):
            return self.rows[self.starts[term] : self.starts[term + 1]]
        return self.rows[:0]

    def has(self, term: int) -> bool:
        return term + 1 < len(self.starts) and self.starts[term + 1] > self.starts[term]

    def add_scores(self, into: npt.NDArray[np.float32], term: int, weight: float) -> None:
        if term + 1 < len(self.starts):
            start, stop = self.starts[term], self.starts[term + 1]
            into[self.rows[start:stop]] += weight * self.values[start:stop]

    def max_scores(self, into: npt.NDArray[np.float32], term: int, weight: float) -> None:
        """`into` raised to the term's weighted scores where they are larger (a term's rows are
        distinct, so this is a plain gather and scatter)."""
        import numpy as np  # noqa: PLC0415

        if term + 1 < len(self.starts):
            start, stop = self.starts[term], self.starts[term + 1]
            if stop > start:
                rows = self.rows[start:stop]
                into[rows] = np.maximum(into[rows], weight * self.values[start:stop])


class FieldScorer:
    """Scores every entry of a corpus for a weighted set of term ids."""

    def __init__(
        self,
        fields: Mapping[str, Column],
        terms: int,
        owner: Sequence[int],
    ) -> None:
        import numpy as np  # noqa: PLC0415 (loaded when the first index is built)

        self.size = len(owner)
        self._fields = [(name, FIELD_WEIGHTS[name], _Field(column, terms)) for name, column in fields.items()]
        self._names = next(field for name, _weight, field in self._fields if name == "name")
        # an app's own entry takes its owner score from a zero past the end
        self._inherited = {"name": FIELD_WEIGHTS["owner"], "text": FIELD_WEIGHTS["owner_text"]}
        """What an operation takes from its app's fields, by field."""
        self._owner = np.array(owner, dtype=np.int32)
        self._owner[self._owner < 0] = self.size

    def apps_named(self, term: int) -> list[int]:
        """The entries of the apps whose names have `term`."""
        rows = self._names.entries(term)
        return rows[self._owner[rows] == self.size].tolist()  # type: ignore[no-any-return]

    def unit_scores(
        self, units: Sequence[Unit], owner_terms: Container[int], *, guesses_only: float = 1.0
    ) -> npt.NDArray[np.float32]:
        """Every entry's score for a query's units (query.py). In each field, a unit scores the
        larger of its literal terms added up and its best alternative; so a word and its concept
        found in the same text count once, while evidence from two fields (the app's name says
        `job`, the operation's description says `作业`) adds up. The units are added up, and the
        sum weighed by the share of units matched (COORDINATION). An entry that matches guessed
        units only, where the query has a unit it is sure of, keeps `guesses_only` of its score
        (with two sure units or more, coordination leaves it nothing anyway)."""
        import numpy as np  # noqa: PLC0415

        size = self.size
        total = np.zeros(size, dtype=np.float32)
        matched = np.zeros(size, dtype=np.float32)
        # buffers reused for every unit: a query is a few passes over every entry, no allocation
        best = np.empty(size + 1, dtype=np.float32)
        owned = np.empty(size + 1, dtype=np.float32)
        unit_total = np.empty(size, dtype=np.float32)
        gathered = np.empty(size, dtype=np.float32)
        hit = np.empty(size, dtype=bool)
        for unit in units:
            unit_total.fill(0)
            owned.fill(0)
            inherits = False
            for name, field_weight, field in self._fields:
                literal = [(t, w) for t, w in unit.literal.items() if field.has(t)]
                alternatives = [(t, w) for t, w in unit.alternatives.items() if field.has(t)]
                if not literal and not alternatives:
                    continue
                self._best_of(field, best, literal, alternatives, field_weight)
                unit_total += best[:size]
                inherited = self._inherited.get(name)
                own_literal = [(t, w) for t, w in literal if t in owner_terms]
                own_alternatives = [(t, w) for t, w in alternatives if t in owner_terms]
                if inherited and (own_literal or own_alternatives):
                    self._best_of(field, best, own_literal, own_alternatives, inherited)
                    owned += best
                    inherits = True
            if inherits:
                np.take(owned, self._owner, out=gathered)
                unit_total += gathered
            total += unit_total
            if not unit.guessed:
                np.greater(unit_total, 0, out=hit)
                matched += hit
        required = sum(1 for unit in units if not unit.guessed)
        if required > 1:
            total *= (matched / required) ** COORDINATION
        elif required == 1 and guesses_only != 1.0:
            total[matched == 0] *= guesses_only
        return total

    @staticmethod
    def _best_of(
        field: _Field,
        into: npt.NDArray[np.float32],
        literal: Sequence[tuple[int, float]],
        alternatives: Sequence[tuple[int, float]],
        scale: float,
    ) -> None:
        """`into` := the larger of the literal terms' scores added up and the best alternative's."""
        into.fill(0)
        for term, weight in literal:
            field.add_scores(into, term, weight * scale)
        for term, weight in alternatives:
            field.max_scores(into, term, weight * scale)
