"""Newline-delimited JSON on a byte stream, read within a bound: the gateway's own MCP server
reads its client this way (server/stdio_transport.py), and the `mcp` executor reads the MCP
servers it starts (executors/mcp_stdio.py).

- `LineSplitter` cuts a stream into lines of at most `limit` bytes and never holds more than
  `limit` bytes plus one chunk: a longer line comes out once, when it ends, as `TooLong`, holding
  its first `ID_SEARCH_BYTES` and its last `END_KEPT_BYTES`; the rest of it is dropped unread.
- `leading_members` and `trailing_members` read the scalar members of the top-level object that
  the start and the end of such a line show, so the message a skipped line was can still be
  answered or settled. Writers differ: Python's SDK puts `id` and `method` before `params` and
  `result`; the TypeScript SDK writes `{"result": …, "jsonrpc": "2.0", "id": 7}` and
  `{"method": …, "params": …, "jsonrpc": "2.0", "id": 7}`, the id last.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Final

import pydantic_core

ID_SEARCH_BYTES: Final = 64 * 1024
"""How much of the start of a skipped line is kept, and searched for the message's id."""
END_KEPT_BYTES: Final = 4 * 1024
"""How much of the end of a skipped line is kept, and searched for the message's id."""


@dataclass(frozen=True)
class TooLong:
    """A line longer than the limit, of which only the start and the end were kept."""

    start: bytes
    end: bytes = b""


class LineSplitter:
    """Cuts a byte stream into lines of at most `limit` bytes; holds at most `limit` bytes plus
    one chunk. A longer line comes out as `TooLong` once, and the rest of it is dropped unread."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._pending = bytearray()
        self._searched = 0  # how much of _pending is known to hold no newline
        self._skipped: tuple[bytes, bytes] | None = None  # start and end of the line being skipped

    def feed(self, chunk: bytes) -> list[bytes | TooLong]:
        lines: list[bytes | TooLong] = []
        if self._skipped is not None:
            newline = chunk.find(b"\n")
            head, tail = self._skipped
            if newline < 0:
                self._skipped = head, (tail + chunk)[-END_KEPT_BYTES:]
                return []
            lines.append(TooLong(head, (tail + chunk[:newline])[-END_KEPT_BYTES:]))
            self._skipped = None
            chunk = chunk[newline + 1 :]
        pending = self._pending
        pending += chunk
        start = 0
        while (end := pending.find(b"\n", max(start, self._searched))) >= 0:
            lines.append(self._line(start, end))
            start = end + 1
        del pending[:start]
        self._searched = len(pending)
        if len(pending) > self.limit:
            self._skipped = bytes(pending[:ID_SEARCH_BYTES]), bytes(pending[-END_KEPT_BYTES:])
            pending.clear()
            self._searched = 0
        return lines

    def finish(self) -> list[bytes | TooLong]:
        """At end of input: the last line, when it had no newline."""
        rest, self._pending = bytes(self._pending), bytearray()
        if self._skipped is not None:
            skipped, self._skipped = TooLong(*self._skipped), None
            return [skipped]
        return [rest] if rest else []

    def _line(self, start: int, end: int) -> bytes | TooLong:
        if end - start > self.limit:
            pending = self._pending
            return TooLong(
                bytes(pending[start : min(end, start + ID_SEARCH_BYTES)]),
                bytes(pending[max(start, end - END_KEPT_BYTES) : end]),
            )
        return bytes(self._pending[start:end])


_TOKEN: Final = re.compile(
    rb'\s*("(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null|[{}\[\]:,])'
)


def leading_members(start: bytes, wanted: frozenset[str]) -> dict[str, Any]:
    """The scalar members named in `wanted` of the top-level object that begins `start`, as far
    as `start` shows them; the search stops once all are found. Empty when `start` is not an
    object. A member whose value is an object or an array is not read (its key is skipped)."""
    found: dict[str, Any] = {}
    depth, key, expecting_key = 0, None, False
    position = 0
    while (match := _TOKEN.match(start, position)) is not None:
        token, position = match.group(1), match.end()
        if token in (b"{", b"["):
            depth += 1
            expecting_key, key = depth == 1 and token == b"{", None
        elif token in (b"}", b"]"):
            depth -= 1
        elif depth == 0:
            return {}  # the line is not an object
        elif depth == 1 and token == b",":
            expecting_key = True
        elif depth == 1 and token != b":":
            try:
                value = pydantic_core.from_json(token)
            except ValueError:
                return found
            if expecting_key:
                key, expecting_key = value, False
            elif key is not None:
                if key in wanted:
                    found[key] = value
                key = None
            if wanted <= found.keys():
                return found
    return found


_SCALAR_AT_END: Final = re.compile(rb"-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?\Z|true\Z|false\Z|null\Z")
_STRING: Final = re.compile(rb'"(?:[^"\\]|\\.)*"')


def trailing_members(end: bytes, wanted: frozenset[str]) -> dict[str, Any]:
    """The scalar members named in `wanted` of the top-level object that ends `end`, read back
    from its closing brace as far as scalar members go (a member whose value is an object or an
    array stops the search). Empty when `end` does not end an object."""
    found: dict[str, Any] = {}
    rest = end.rstrip()
    if not rest.endswith(b"}"):
        return found
    rest = rest[:-1].rstrip()
    while True:
        value = _last_string(rest) or _last_scalar(rest)
        rest = rest[: len(rest) - len(value)].rstrip()
        if not value or not rest.endswith(b":"):
            return found
        rest = rest[:-1].rstrip()
        key = _last_string(rest)
        rest = rest[: len(rest) - len(key)].rstrip()
        if not key:
            return found
        try:
            name, decoded = pydantic_core.from_json(key), pydantic_core.from_json(value)
        except ValueError:
            return found
        if name in wanted and name not in found:
            found[name] = decoded
        if not rest.endswith(b","):
            return found  # `{`: the whole object was read; anything else: not JSON
        rest = rest[:-1].rstrip()


def _last_scalar(text: bytes) -> bytes:
    match = _SCALAR_AT_END.search(text[-400:])
    return match.group(0) if match else b""


def _last_string(text: bytes) -> bytes:
    """The JSON string `text` ends with, from its opening quote: the last quote before the
    closing one that no backslash escapes (inside a string every quote is escaped)."""
    if not text.endswith(b'"'):
        return b""
    position = len(text) - 1
    while (position := text.rfind(b'"', 0, position)) >= 0:
        before = text[:position]
        if (len(before) - len(before.rstrip(b"\\"))) % 2 == 0:
            token = text[position:]
            return token if _STRING.fullmatch(token) else b""
    return b""
