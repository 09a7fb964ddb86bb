"""The fast path of parsing a descriptor, for the ordinary file (`plainly_valid`).

jiter (a JSON parser in Rust, as strict as the exact parser and catching duplicate keys) parses
the text; what jiter leaves to us, nesting and numbers, one compiled JSON Schema checks in Rust:
`maximum` and `minimum` at every level, and no container below MAX_NESTING levels. A Python walk
over every value did the same in twice the time of jiter's parse, ~7 % of a first start's work
on a file (docs/performance.md, run (aj)). Whatever the fast path does not take, the exact parser
reads (`loader._parse_exactly`), finding and wording every problem; so each test here may be
stricter than the rules, never looser.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

import jiter
import jsonschema_rs

from .checks import DEEP_CHECK_KEYS
from .limits import MAX_DESCRIPTOR_BYTES, MAX_NESTING
from .schema_cost import MAX_CHECKS

_UTF8_BOM: Final = b"\xef\xbb\xbf"

NUMBER_BOUND: Final = 1e308
"""Numbers beyond it go to the exact parser, which refuses those no float holds (above
~1.797e308). Below the largest float, so that a huge integer the schema engine rounds to a float
is still beyond it."""

_SCALARS: Final = ["string", "number", "boolean", "null"]  # ±infinity, which jiter reads for 1e999, is none


def _limits_schema(*, without_deep_keys: bool) -> dict[str, Any]:
    """Levels 1 (the document) to MAX_NESTING, each by reference to the next; below the last,
    scalars only. With `without_deep_keys`, no object anywhere has a key of DEEP_CHECK_KEYS."""
    bounds = {"maximum": NUMBER_BOUND, "minimum": -NUMBER_BOUND}
    levels: dict[str, Any] = {}
    for depth in range(1, MAX_NESTING + 1):
        below = {"$ref": f"#/$defs/{depth + 1}"} if depth < MAX_NESTING else {"type": _SCALARS, **bounds}
        level: dict[str, Any] = {
            "type": ["object", "array", *_SCALARS],
            **bounds,
            "items": below,
            "additionalProperties": below,
        }
        if without_deep_keys:
            level["propertyNames"] = {"not": {"enum": sorted(DEEP_CHECK_KEYS)}}
        levels[str(depth)] = level
    return {"$ref": "#/$defs/1", "$defs": levels}


_WITHIN_LIMITS: Final = jsonschema_rs.Draft202012Validator(_limits_schema(without_deep_keys=False))
_WITHOUT_DEEP_KEYS: Final = jsonschema_rs.Draft202012Validator(_limits_schema(without_deep_keys=True))
_DEEP_KEYS_QUOTED: Final = tuple(f'"{key}"'.encode() for key in sorted(DEEP_CHECK_KEYS))


@dataclass(slots=True)  # never changed once made; not frozen: a frozen __init__ costs twice as much
class PlainDocument:
    document: Any
    schemas_plain: bool
    """No key of checks.DEEP_CHECK_KEYS anywhere, and at most MAX_CHECKS objects: a schema of the
    file can skip the deep checks (`checks.problems_with_schemas_plain`)."""


def plainly_valid(data: str | bytes) -> PlainDocument | None:
    """The document when jiter parses `data` and nothing in it breaks a rule of ours; else None,
    and the exact parser finds and words every problem. A cold start parses every descriptor:
    this takes a third of the exact parser's time."""
    if isinstance(data, str):
        try:
            data = data.encode("utf-8")
        except UnicodeEncodeError:
            return None
    if len(data) > MAX_DESCRIPTOR_BYTES:
        return None
    try:
        document = jiter.from_json(
            data.removeprefix(_UTF8_BOM), allow_inf_nan=False, catch_duplicate_keys=True, cache_mode="all"
        )
    except ValueError:  # jiter also refuses lone surrogates
        return None
    if type(document) is not dict:  # not a descriptor at all: the exact parser says so
        return None
    try:
        if not _WITHIN_LIMITS.is_valid(document):
            return None
        # Each object's text starts with `{`: their count bounds the objects'.
        schemas_plain = data.count(b"{") <= MAX_CHECKS and (
            not _may_name_a_deep_key(data) or _WITHOUT_DEEP_KEYS.is_valid(document)
        )
    except (ValueError, TypeError, OverflowError, RecursionError):  # the exact parser decides
        return None
    return PlainDocument(document, schemas_plain)


def _may_name_a_deep_key(data: bytes) -> bool:
    """Whether a key of DEEP_CHECK_KEYS may be in the text: written as it is, or with an escape
    (`"\\u0024ref"`), and every escape of one of their characters starts `\\u00`."""
    return b"\\u00" in data or any(map(data.__contains__, _DEEP_KEYS_QUOTED))
