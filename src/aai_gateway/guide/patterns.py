"""A string that matches a JSON Schema `pattern`, for example values.

Walks the pattern as Python's own regular-expression parser reads it and emits the simplest
text each piece accepts: the first alternative, the lowest character of a class, the fewest
repetitions (plus `extra` more, to reach a `minLength`). JSON Schema patterns are ECMA 262
expressions, which agree with Python's on everything a descriptor is likely to use; the caller
checks the result against the real schema anyway (with jsonschema-rs, whose regex engines are
bounded), so an exotic pattern only costs a fallback.

The pattern is only parsed here, never run: Python's `re` backtracks, and a descriptor's pattern
such as `^(?=(a+)+c)a{30}$` would take hours to test against one short string. Building the text
is bounded too: it stops at `_MAX_LENGTH` characters whatever the repetition counts ask for.
"""

from __future__ import annotations

import importlib
import re
import string
from collections.abc import Callable
from typing import Any

_parser: Any = importlib.import_module("re._parser")  # Python's regex parser (`sre_parse` before 3.11)

_CATEGORY_CHAR = {
    "CATEGORY_DIGIT": "0",
    "CATEGORY_NOT_DIGIT": "a",
    "CATEGORY_SPACE": " ",
    "CATEGORY_NOT_SPACE": "a",
    "CATEGORY_WORD": "a",
    "CATEGORY_NOT_WORD": "-",
    "CATEGORY_LINEBREAK": "\n",
    "CATEGORY_NOT_LINEBREAK": "a",
}
_CATEGORY_TEST: dict[str, Callable[[str], bool]] = {
    "CATEGORY_DIGIT": str.isdigit,
    "CATEGORY_SPACE": str.isspace,
    "CATEGORY_WORD": lambda c: c.isalnum() or c == "_",
    "CATEGORY_LINEBREAK": lambda c: c == "\n",
}
_PREFERRED = string.ascii_lowercase + string.digits + string.ascii_uppercase + "-_.:/ @"
_MAX_LENGTH = 2_000
_MAX_STEPS = 20_000  # pieces visited: `((?:){1000}){1000}` repeats an empty piece a million times


class _UnsupportedError(Exception):
    pass


def pattern_example(pattern: str, *, extra: int = 0) -> str | None:
    """A string meant to match `pattern`, or None when none can be built within the bounds. It
    is not checked here (lookarounds, for one, are ignored): the caller validates it."""
    try:
        parsed = _parser.parse(pattern)
    except (re.error, RecursionError, OverflowError, ValueError):
        return None
    out = _Text()
    try:
        _emit(parsed, out, {}, extra)
    except (_UnsupportedError, RecursionError):
        return None
    return "".join(out.parts)


class _Text:
    """The text being built; refuses to grow past `_MAX_LENGTH` (`(a{1000}){1000}` would ask for
    a million characters, nested repetitions for far more) or to take more than `_MAX_STEPS`."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.length = 0
        self.steps = 0

    def step(self) -> None:
        self.steps += 1
        if self.steps > _MAX_STEPS:
            raise _UnsupportedError("too many steps")

    def append(self, piece: str) -> None:
        self.length += len(piece)
        if self.length > _MAX_LENGTH:
            raise _UnsupportedError("too long")
        self.parts.append(piece)

    def since(self, start: int) -> str:
        return "".join(self.parts[start:])

    def __len__(self) -> int:
        return len(self.parts)


def _name(op: Any) -> str:
    return str(getattr(op, "name", op))


def _emit(items: Any, out: _Text, groups: dict[int, str], extra: int) -> None:
    for op, av in items:
        out.step()
        kind = _name(op)
        if kind == "LITERAL":
            out.append(chr(av))
        elif kind == "NOT_LITERAL":
            out.append("a" if chr(av) != "a" else "b")
        elif kind == "ANY":
            out.append("a")
        elif kind == "IN":
            out.append(_pick(av))
        elif kind == "CATEGORY":
            out.append(_CATEGORY_CHAR.get(_name(av), "a"))
        elif kind == "BRANCH":
            _emit(av[1][0], out, groups, extra)
        elif kind == "SUBPATTERN":
            start = len(out)
            _emit(av[-1], out, groups, extra)
            if av[0] is not None:
                groups[av[0]] = out.since(start)
        elif kind == "ATOMIC_GROUP":
            _emit(av, out, groups, extra)
        elif kind in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            low, high, body = av
            count = low + extra if _name(high) == "MAXREPEAT" else min(high, low + extra)
            if count > _MAX_LENGTH:
                raise _UnsupportedError
            for _ in range(count):
                out.step()  # each round too: an empty body (`(?:){1000}`) has no piece to count
                _emit(body, out, groups, extra)
        elif kind == "GROUPREF":
            out.append(groups.get(av, ""))
        elif kind == "GROUPREF_EXISTS":
            _emit(av[1], out, groups, extra)
        elif kind in ("AT", "ASSERT", "ASSERT_NOT"):
            continue
        else:
            raise _UnsupportedError(kind)


def _pick(members: Any) -> str:
    """One character of a class like `[A-Za-z0-9_-]` or `[^\\s,]`."""
    negated = bool(members) and _name(members[0][0]) == "NEGATE"
    if negated:
        members = members[1:]
    allowed: list[str] = []
    for op, av in members:
        kind = _name(op)
        if kind == "LITERAL":
            allowed.append(chr(av))
        elif kind == "RANGE":
            allowed.append(chr(av[0]))
            allowed.extend(c for c in _PREFERRED if av[0] <= ord(c) <= av[1])
        elif kind == "CATEGORY":
            allowed.append(_CATEGORY_CHAR.get(_name(av), "a"))
    if not negated:
        preferred = [c for c in allowed if c.isalnum()]
        if preferred or allowed:
            return (preferred or allowed)[0]
        raise _UnsupportedError("empty class")
    for candidate in _PREFERRED:
        if not _in_class(candidate, members):
            return candidate
    raise _UnsupportedError("class excludes every candidate")


def _in_class(char: str, members: Any) -> bool:
    for op, av in members:
        kind = _name(op)
        if (kind == "LITERAL" and chr(av) == char) or (kind == "RANGE" and av[0] <= ord(char) <= av[1]):
            return True
        if kind == "CATEGORY":
            name = _name(av)
            positive = name.replace("NOT_", "")
            test = _CATEGORY_TEST.get(positive)
            if test is not None and test(char) != ("NOT_" in name):
                return True
    return False
