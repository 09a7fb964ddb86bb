"""BM25 over the corpus's fields, through bm25s (sparse matrices of precomputed scores).

One bm25s index per field, all sharing one vocabulary of term ids; a document's score is
`sum over fields f of FIELD_WEIGHTS[f] * sum over query terms t of weight(t) * BM25_f(t, doc)`.
bm25s keeps, for each term, the BM25 score of each document that has it, so a query costs a
gather and a sum per term and field. numpy and bm25s are imported when the first index is built.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .documents import FIELD_WEIGHTS

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

BM25_K1 = 1.2
BM25_B = 0.75


class FieldScorer:
    """Scores every document of a corpus for a weighted set of term ids."""

    def __init__(self, fields: Mapping[str, Sequence[list[int]]], vocabulary: Mapping[str, int]) -> None:
        import bm25s  # noqa: PLC0415 (numpy and bm25s: loaded when the first index is built)

        self._indexes: list[tuple[float, Any]] = []
        self.size = 0
        for name, corpus in fields.items():
            weight = FIELD_WEIGHTS[name]
            self.size = len(corpus)
            if not any(corpus):
                continue
            index = bm25s.BM25(k1=BM25_K1, b=BM25_B)
            index.index((list(corpus), dict(vocabulary)), show_progress=False)
            self._indexes.append((weight, index))

    def scores(self, weights: Mapping[int, float]) -> npt.NDArray[np.float32]:
        """Every document's score for term ids weighted by `weights`."""
        import numpy as np  # noqa: PLC0415

        total = np.zeros(self.size, dtype=np.float32)
        by_weight: dict[float, list[int]] = defaultdict(list)
        for term, weight in weights.items():
            by_weight[weight].append(term)
        for field_weight, index in self._indexes:
            for weight, terms in by_weight.items():
                total += (field_weight * weight) * index.get_scores_from_ids(terms)
        return total
