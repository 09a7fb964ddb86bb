"""Newline-delimited JSON on a byte stream, read within a bound: the gateway's own MCP server
reads its client this way (server/stdio_transport.py), and the `mcp` executor reads the MCP
servers it starts (executors/mcp_stdio.py).

- `LineSplitter` cuts a stream into lines of at most `limit` bytes and never holds more than
  `limit` bytes plus one chunk: a longer line comes out once as `TooLong`, holding its first
  `ID_SEARCH_BYTES`, and the rest of it is dropped unread.
- `leading_members` reads the scalar members of the top-level object that the start of such a
  line shows (`id`, `method`: JSON-RPC writers put them before `params` and `result`), so the
  message a skipped line was can still be answered or settled.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Final

import pydantic_core

ID_SEARCH_BYTES: Final = 64 * 1024
"""How much of a skipped line is kept, and searched for the message's id."""


@dataclass(frozen=True)
class TooLong:
    """A line longer than the limit, of which only the start was kept."""

    start: bytes


class LineSplitter:
    """Cuts a byte stream into lines of at most `limit` bytes; holds at most `limit` bytes plus
    one chunk. A longer line comes out as `TooLong` once, and the rest of it is dropped unread."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._pending = bytearray()
        self._searched = 0  # how much of _pending is known to hold no newline
        self._skipping = False

    def feed(self, chunk: bytes) -> list[bytes | TooLong]:
        if self._skipping:
            end = chunk.find(b"\n")
            if end < 0:
                return []
            self._skipping = False
            chunk = chunk[end + 1 :]
        pending = self._pending
        pending += chunk
        lines: list[bytes | TooLong] = []
        start = 0
        while (end := pending.find(b"\n", max(start, self._searched))) >= 0:
            lines.append(self._line(start, end))
            start = end + 1
        del pending[:start]
        self._searched = len(pending)
        if len(pending) > self.limit:
            lines.append(TooLong(bytes(pending[:ID_SEARCH_BYTES])))
            pending.clear()
            self._searched = 0
            self._skipping = True
        return lines

    def finish(self) -> list[bytes | TooLong]:
        """At end of input: the last line, when it had no newline."""
        rest, self._pending = bytes(self._pending), bytearray()
        return [rest] if rest and not self._skipping else []

    def _line(self, start: int, end: int) -> bytes | TooLong:
        if end - start > self.limit:
            return TooLong(bytes(self._pending[start : start + ID_SEARCH_BYTES]))
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
