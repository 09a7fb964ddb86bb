"""Reading the JSON an app answers with: one set of rules for every executor.

- `NaN`, `Infinity` and `-Infinity` are not JSON (RFC 8259): text holding them is refused like
  any other text that is not JSON, so no executor passes on a value that cannot be written back
  as JSON.
- An answer nested deeper than `MAX_ANSWER_DEPTH` levels is EXECUTION_FAILED naming the app and
  the tool. Python's parser gives up (RecursionError) somewhere near 1000 levels; the result's
  way back to the client gives up much earlier: pydantic serializes about 250 levels and MCP
  clients built on it parse 200, envelope included. 100 levels is far beyond any real answer.
- Whatever an executor hands back, parsed or built, is checked once more before it leaves the
  gateway (`check_answer`): text with a lone surrogate (`"\\ud800"` is valid JSON text, but no
  UTF-8 encoder can write it), in a value or a key, and a number beyond the range of a 64-bit
  float (`1e400` parses as infinity) or NaN are EXECUTION_FAILED naming the app, the tool and
  where in the answer; neither could be written back as JSON.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any, Final

from ..errors import AnswerTooDeepError, UnwritableAnswerError, escape_pointer_token

MAX_ANSWER_DEPTH: Final = 100
POINTER_SHOWN_CHARS: Final = 200

_SURROGATE: Final = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True)
class Unwritable:
    """A value JSON cannot carry: `pointer` is where (RFC 6901), `reason` what it is."""

    pointer: str
    reason: str


@dataclass
class JsonScan:
    """What `scan_json` saw: how many values, whether it went past the depth limit, and the
    unwritable values it found (at most as many as it was asked for)."""

    values: int = 0
    too_deep: bool = False
    unwritable: list[Unwritable] = field(default_factory=list)


def strict_loads(text: str | bytes) -> Any:
    """`json.loads` that refuses NaN and ±Infinity. Raises ValueError for text that is not JSON
    (including bytes that are not UTF-8) and RecursionError for absurdly deep nesting: callers
    without an app to name catch it themselves; the others use `loads_answer`."""
    try:
        return json.loads(text, parse_constant=_refuse_constant)
    except UnicodeDecodeError as exc:
        raise ValueError(f"not UTF-8 text: {exc.reason}") from exc


def loads_answer(text: str | bytes, *, app_id: str, tool: str) -> Any:
    """The app's answer parsed: ValueError when it is not JSON, AnswerTooDeepError when the
    parser cannot even read how deep it goes."""
    try:
        return strict_loads(text)
    except RecursionError:
        raise AnswerTooDeepError(app_id, tool, MAX_ANSWER_DEPTH) from None


def check_answer(value: Any, *, app_id: str, tool: str, limit: int = MAX_ANSWER_DEPTH) -> None:
    """Raises AnswerTooDeepError or UnwritableAnswerError unless `value` can travel back to the
    client as JSON (see the module's description)."""
    scan = scan_json(value, max_depth=limit, max_unwritable=1)
    if scan.too_deep:
        raise AnswerTooDeepError(app_id, tool, limit)
    if scan.unwritable:
        where = scan.unwritable[0]
        raise UnwritableAnswerError(app_id, tool, _shown_pointer(where.pointer), where.reason)


def check_answer_depth(value: Any, *, app_id: str, tool: str, limit: int = MAX_ANSWER_DEPTH) -> None:
    """Raises AnswerTooDeepError when `value` (parsed JSON, or what an executor built) has more
    than `limit` levels of objects and arrays."""
    if nested_deeper_than(value, limit):
        raise AnswerTooDeepError(app_id, tool, limit)


def nested_deeper_than(value: Any, limit: int) -> bool:
    """Whether objects and arrays (dicts, lists, tuples) nest more than `limit` levels; `[]` is
    one level. Walks with a stack, never recursion, and stops at the first level too many."""
    return scan_json(value, max_depth=limit, max_unwritable=0).too_deep


def scan_json(value: Any, *, max_depth: int | None = None, max_unwritable: int = 1) -> JsonScan:
    """Walks a JSON value (dicts, lists, tuples and scalars) with a stack, never recursion,
    counting its values and looking for text with a lone surrogate (values and keys) and for
    infinite or NaN floats. Stops at the first level deeper than `max_depth` or once it found
    `max_unwritable` such values (0: it does not look for them).

    Every call's answer and arguments pass through here, so the common values (ASCII text,
    integers, booleans, null) cost one type test each, and a container's JSON pointer is only
    written out when something inside it is reported (`_Path`)."""
    scan = JsonScan(values=1)
    look = max_unwritable > 0
    if look and (reason := unwritable_reason(value)) is not None:
        scan.unwritable.append(Unwritable("", reason))
        if len(scan.unwritable) >= max_unwritable:
            return scan
    if not isinstance(value, _CONTAINERS):
        return scan
    unwritable = scan.unwritable
    pending: list[tuple[Any, int, _Path | None]] = [(value, 1, None)]
    while pending:
        container, depth, path = pending.pop()
        scan.values += len(container)
        is_object = isinstance(container, dict)
        for key, child in container.items() if is_object else enumerate(container):
            kind = type(child)
            nested = kind is dict or kind is list or (kind not in _SCALARS and isinstance(child, _CONTAINERS))
            if nested:
                if max_depth is not None and depth >= max_depth:
                    scan.too_deep = True
                    return scan
                pending.append((child, depth + 1, (path, key)))
            if not look:
                continue
            if is_object and not (type(key) is str and key.isascii()):
                reason = unwritable_reason(key)
                if reason is not None:
                    unwritable.append(Unwritable(_pointer((path, key)), reason))
                    if len(unwritable) >= max_unwritable:
                        return scan
            if nested or kind in _WRITABLE_SCALARS or (kind is str and child.isascii()):
                continue  # most of a long answer: ASCII text, integers, booleans and null
            reason = unwritable_reason(child)
            if reason is not None:
                unwritable.append(Unwritable(_pointer((path, key)), reason))
                if len(unwritable) >= max_unwritable:
                    return scan
    return scan


_CONTAINERS: Final = (dict, list, tuple)
_SCALARS: Final = frozenset({str, int, float, bool, type(None)})
_WRITABLE_SCALARS: Final = frozenset({int, bool, type(None)})

_Path = tuple["_Path | None", Any]
"""Where a value is: the path of its container (None: the top) and its key or index."""


def _pointer(path: _Path | None) -> str:
    """The JSON pointer (RFC 6901) of a path."""
    tokens: list[str] = []
    while path is not None:
        path, key = path
        tokens.append(escape_pointer_token(key))
    return "".join(f"/{token}" for token in reversed(tokens))


def unwritable_reason(value: Any) -> str | None:
    """Why a scalar cannot be written as JSON, or None: text with a lone surrogate, a number
    beyond the range of a 64-bit float (JSON `1e400` parses as infinity), NaN."""
    if isinstance(value, str):
        if value.isascii() or (found := _SURROGATE.search(value)) is None:
            return None
        return f"text that is not valid Unicode (a lone surrogate U+{ord(found.group()):04X})"
    if isinstance(value, float) and not math.isfinite(value):
        if math.isnan(value):
            return "a number that is not a number (NaN)"
        return "a number beyond the range of a 64-bit float (about 1.8e308)"
    return None


def writable_text(text: str, *, json_text: bool = False) -> str:
    """`text` with each lone surrogate written out as its escape in letters (`\\udc00`), so
    that it can be written as UTF-8 and still shows what was there. In `json_text` (where
    surrogates only occur inside strings) the backslash is escaped, so the text still reads
    as JSON and the string read from it holds the letters."""
    if text.isascii():
        return text
    backslash = "\\\\" if json_text else "\\"
    return _SURROGATE.sub(lambda found: f"{backslash}u{ord(found.group()):04x}", text)


def _shown_pointer(pointer: str) -> str:
    if len(pointer) <= POINTER_SHOWN_CHARS:
        return pointer
    return pointer[:POINTER_SHOWN_CHARS] + "…"


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")
