"""Reading the JSON an app answers with: one set of rules for every executor.

- `NaN`, `Infinity` and `-Infinity` are not JSON (RFC 8259): text holding them is refused like
  any other text that is not JSON, so no executor passes on a value that cannot be written back
  as JSON.
- An answer nested deeper than `MAX_ANSWER_DEPTH` levels is EXECUTION_FAILED naming the app and
  the tool. Python's parser gives up (RecursionError) somewhere near 1000 levels; the result's
  way back to the client gives up much earlier: pydantic serializes about 250 levels and MCP
  clients built on it parse 200, envelope included. 100 levels is far beyond any real answer.
"""

from __future__ import annotations

import json
from typing import Any, Final

from ..errors import AaiError, ErrorCode

MAX_ANSWER_DEPTH: Final = 100


class AnswerTooDeepError(AaiError):
    def __init__(self, app_id: str, tool: str, limit: int = MAX_ANSWER_DEPTH) -> None:
        super().__init__(
            f"{app_id} {tool}: the app's answer is nested deeper than {limit} levels, more than the "
            "gateway passes on; the app must answer with flatter JSON",
            {"app": app_id, "tool": tool, "max_depth": limit},
            ErrorCode.EXECUTION_FAILED,
        )


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
        raise AnswerTooDeepError(app_id, tool) from None


def check_answer_depth(value: Any, *, app_id: str, tool: str, limit: int = MAX_ANSWER_DEPTH) -> None:
    """Raises AnswerTooDeepError when `value` (parsed JSON, or what an executor built) has more
    than `limit` levels of objects and arrays."""
    if nested_deeper_than(value, limit):
        raise AnswerTooDeepError(app_id, tool, limit)


def nested_deeper_than(value: Any, limit: int) -> bool:
    """Whether objects and arrays (dicts, lists, tuples) nest more than `limit` levels; `[]` is
    one level. Walks with a stack, never recursion, and stops at the first level too many."""
    if not isinstance(value, dict | list | tuple):
        return False
    pending: list[tuple[Any, int]] = [(value, 1)]
    while pending:
        container, depth = pending.pop()
        children = container.values() if isinstance(container, dict) else container
        for child in children:
            if isinstance(child, dict | list | tuple):
                if depth >= limit:
                    return True
                pending.append((child, depth + 1))
    return False


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")
