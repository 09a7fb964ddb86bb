"""The arguments of `aai_search` and of an app entry as an agent sends them: checked, each
refusal INVALID_PARAMS naming the argument. Free of the MCP SDK, so that `aai-gateway search`
checks its query as `aai_search` does without importing it."""

from __future__ import annotations

from typing import Any

from ..errors import InvalidArgumentError
from ..guide.options import QUERY_PLACEHOLDER
from ..search import DEFAULT_LIMIT, MAX_LIMIT, MAX_OFFSET

MAX_OPERATIONS = 50  # names an app entry's `operations` may hold


def search_arguments(arguments: dict[str, Any]) -> tuple[str, int, str | None, int]:
    """`query`, `limit`, `app` and `offset` of an `aai_search` call; INVALID_PARAMS naming the
    argument."""
    query = arguments.get("query")
    app = arguments.get("app")
    if app is not None and (not isinstance(app, str) or not app.strip()):
        raise InvalidArgumentError("argument 'app' must be a non-empty string (an app id)", path="/app")
    if not isinstance(query, str):
        raise InvalidArgumentError("argument 'query' must be a string: what to do, or a name", path="/query")
    if not _encodable(query):
        raise InvalidArgumentError(
            "argument 'query' holds text that is not Unicode (a lone surrogate: half of a character "
            "such as an emoji): send whole characters",
            path="/query",
        )
    if query.strip() == QUERY_PLACEHOLDER:
        raise InvalidArgumentError(
            f"argument 'query' is the placeholder {QUERY_PLACEHOLDER}: put there what the user wants to "
            "do, in a few words",
            path="/query",
        )
    if not query.strip() and app is None:
        raise InvalidArgumentError(
            "argument 'query' is blank: say what to do or name an app (a blank query lists the "
            "operations of the app given in 'app')",
            path="/query",
        )
    limit = _whole_number(arguments, "limit", DEFAULT_LIMIT, 1, MAX_LIMIT)
    offset = _whole_number(arguments, "offset", 0, 0, MAX_OFFSET)
    return query, limit, app, offset


def _whole_number(arguments: dict[str, Any], name: str, default: int, lowest: int, highest: int) -> int:
    value = arguments.get(name, default)
    whole = isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    if isinstance(value, bool) or not whole or not lowest <= value <= highest:
        raise InvalidArgumentError(
            f"argument '{name}' must be a whole number from {lowest} to {highest}, not {_shown(value)}",
            path=f"/{name}",
        )
    return int(value)


def operations_argument(arguments: dict[str, Any]) -> list[str] | None:
    """The `operations` of an app entry call (None or empty: the guide); INVALID_PARAMS when it
    is not a list of at most `MAX_OPERATIONS` non-empty strings."""
    names = arguments.get("operations")
    if names is None:
        return None
    if not isinstance(names, list):
        raise InvalidArgumentError(
            "argument 'operations' must be a list of operation names from the guide", path="/operations"
        )
    if len(names) > MAX_OPERATIONS:
        raise InvalidArgumentError(
            f"argument 'operations' names {len(names)} operations: at most {MAX_OPERATIONS} at a time",
            path="/operations",
        )
    for index, name in enumerate(names):
        if not isinstance(name, str) or not name.strip() or not _encodable(name):
            raise InvalidArgumentError(
                "each of 'operations' must be a non-empty operation name (whole Unicode characters)",
                path=f"/operations/{index}",
            )
    return names or None


def _encodable(text: str) -> bool:
    """Whether `text` is Unicode UTF-8 can carry: a JSON string may hold a lone surrogate escape,
    which no answer can quote back."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:40] + "…"
