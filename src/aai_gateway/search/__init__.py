"""Search over apps and their operations: what `aai_search` answers.

Pure: an index is built from apps' cards and their operations' texts (`IndexedApp`) and answers
queries; it reads no file (but the lexicon shipped with the package) and asks no server. The
interface (`SearchIndex`, `SearchPage`, `SearchHit`, `IndexedApp`) is what the service layer
uses. How it matches (tokens.py, lexicon.py, spelling.py, query.py), what it indexes (corpus.py)
and how it scores (scoring.py) are described in those modules and in docs/decisions.md ("Search").

Heavy libraries (numpy, OpenCC, PyStemmer, rapidfuzz) are imported when the first index is
built, not when this package is imported.

The package itself holds only the limits: the index (`index.py`, with the corpus and the lexicon
it imports) is imported when first used, so a gateway's start, which needs only the limits,
does not pay for it.
"""

from typing import TYPE_CHECKING, Any

DEFAULT_LIMIT = 10
MAX_LIMIT = 50
MAX_OFFSET = 10_000
"""How many results a page may start after: every operation of an app of 10,000 is one page away."""

if TYPE_CHECKING:
    from .corpus import IndexedApp
    from .index import SearchHit, SearchIndex, SearchPage

_FROM_INDEX = frozenset({"SearchHit", "SearchIndex", "SearchPage"})


def __getattr__(name: str) -> Any:
    if name in _FROM_INDEX:
        from . import index  # noqa: PLC0415

        return getattr(index, name)
    if name == "IndexedApp":
        from .corpus import IndexedApp  # noqa: PLC0415

        return IndexedApp
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["DEFAULT_LIMIT", "MAX_LIMIT", "MAX_OFFSET", "IndexedApp", "SearchHit", "SearchIndex", "SearchPage"]
