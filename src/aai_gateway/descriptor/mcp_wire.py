"""What an MCP server sends in `tools/list`, measured before anything trusts it: JSON values that
the rest of the gateway can hold, and their size.

An upstream MCP server is not trusted more than a descriptor file: a tool's schema may be nested
thousands of levels deep, hold numbers no float can carry or strings that are not Unicode, and a
description may hide text from the person who reads it (shown_text.py cleans that). Everything
here is iterative and bounded: nothing recurses into a value before its depth is known.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from ..errors import json_pointer
from .limits import MAX_NESTING

MAX_TOOLS: Final = 1_000
"""Tools one server may contribute; more is a server that lists by accident or in malice."""
MAX_TOOL_BYTES: Final = 256 * 1024
"""One tool's definition as compact JSON (the largest seen in real servers is a few KiB)."""
MAX_TOOLS_BYTES: Final = 4 * 1024 * 1024
"""All tools of one server as compact JSON: a descriptor file's own limit."""
MAX_VALUES: Final = 200_000
"""JSON values (objects, arrays, strings, numbers...) one tool may hold."""


@dataclass(frozen=True)
class Unusable:
    """Why a value cannot be taken as JSON, and where (a JSON pointer below the value)."""

    pointer: str
    reason: str


def unusable_json(
    value: Any, *, max_depth: int = MAX_NESTING, max_values: int = MAX_VALUES
) -> Unusable | None:
    """None when `value` is plain JSON the gateway can hold: objects with string keys, arrays,
    Unicode strings, finite numbers, booleans and null, nested at most `max_depth` levels and
    holding at most `max_values` values; else the first thing that is not."""
    stack: list[tuple[Any, int, tuple[str | int, ...]]] = [(value, 0, ())]
    seen = 0
    while stack:
        item, depth, path = stack.pop()
        seen += 1
        if seen > max_values:
            return Unusable("", f"holds more than {max_values} JSON values")
        if isinstance(item, dict):
            if depth >= max_depth:
                return Unusable(json_pointer(*path), f"is nested more than {max_depth} levels deep")
            for key, inner in item.items():
                if not isinstance(key, str) or not is_unicode(key):
                    return Unusable(json_pointer(*path), "has a key that is not Unicode text")
                stack.append((inner, depth + 1, (*path, key)))
        elif isinstance(item, list):
            if depth >= max_depth:
                return Unusable(json_pointer(*path), f"is nested more than {max_depth} levels deep")
            stack.extend((inner, depth + 1, (*path, index)) for index, inner in enumerate(item))
        elif isinstance(item, str):
            if not is_unicode(item):
                return Unusable(json_pointer(*path), "holds a string that is not Unicode text")
        elif isinstance(item, float):
            if not math.isfinite(item):
                return Unusable(json_pointer(*path), "holds a number that is not finite")
        elif isinstance(item, int) and not isinstance(item, bool) and abs(item) > 2**63:
            return Unusable(json_pointer(*path), "holds an integer beyond 64 bits")
        elif not (item is None or isinstance(item, bool | int)):
            return Unusable(json_pointer(*path), f"holds a {type(item).__name__}, which is not JSON")
    return None


def compact_size(value: Any) -> int:
    """Bytes of `value` as compact UTF-8 JSON; only for a value `unusable_json` accepted."""
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))


def is_unicode(text: str) -> bool:
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


OMITTED: Final = "$omitted"
"""The key of what `bounded_tools` keeps in place of an entry it cannot keep: why, in words."""


def bounded_tools(wire: Sequence[Any]) -> list[Any]:
    """The leading entries of a server's tool list that the gateway keeps: at most `MAX_TOOLS`,
    `MAX_TOOLS_BYTES` in all. An entry that is not JSON the gateway can hold, or larger than
    `MAX_TOOL_BYTES`, is kept as `{"$omitted": why}` (with its name when it has a short one), so
    that every other entry keeps the index the server gave it and problems name the right tool."""
    kept: list[Any] = []
    total = 0
    for entry in wire[:MAX_TOOLS]:
        why = entry_problem(entry)
        size = compact_size(entry) if why is None else 0
        if why is None and size > MAX_TOOL_BYTES:
            why = f"is {size} bytes of JSON; a tool may have at most {MAX_TOOL_BYTES}"
        keep = entry if why is None else _placeholder(entry, why)
        size = size if why is None else compact_size(keep)
        if total + size > MAX_TOOLS_BYTES:
            break
        total += size
        kept.append(keep)
    return kept


def _placeholder(entry: Any, why: str) -> dict[str, str]:
    name = entry.get("name") if isinstance(entry, dict) else None
    if isinstance(name, str) and len(name) <= 64 and is_unicode(name):
        return {OMITTED: why, "name": name}
    return {OMITTED: why}


def entry_problem(entry: Any) -> str | None:
    """Why one entry of a tool list cannot be a tool's JSON at all, or None."""
    problem = unusable_json(entry)
    if problem is None:
        return None
    where = f" at {problem.pointer}" if problem.pointer else ""
    return f"{problem.reason}{where}" if where else problem.reason
