"""A configuration file from disk to a parsed document, or the one problem that stops it.

JSON is read as the clients write it: VS Code, Cursor and Gemini CLI accept comments and
trailing commas in their JSON (JSONC), so every JSON file may have them. They are blanked out
(each character replaced by a space, line breaks kept) before the standard parser runs, so a
syntax error is still reported at its true line and column. Files without them never take that
path: Claude Code's `~/.claude.json` can be tens of megabytes.

TOML (Codex) goes through `tomllib`. Which of the two a file is, its content says: JSON starts
with `{` (or a comment), anything else is read as TOML (and, starting with `[` and failing as
TOML, as JSON).
"""

from __future__ import annotations

import json
import re
import stat
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal

from ..errors import Problem

MAX_CONFIG_BYTES: Final = 128 * 1024 * 1024
"""Larger files are refused unread. Configuration files are a few KiB, but Claude Code keeps its
conversation history in `~/.claude.json`, which users have reported at 65–100 MB
(anthropics/claude-code#6394, #2593); the cap only stops a file that cannot be a configuration
(a log, a device) from filling memory."""

Syntax = Literal["json", "toml"]

_STRING_OR_COMMENT: Final = re.compile(r'"(?:[^"\\\n]|\\.)*"|//[^\n]*|/\*.*?\*/', re.DOTALL)
_STRING_OR_TRAILING_COMMA: Final = re.compile(r'"(?:[^"\\\n]|\\.)*"|,(?=\s*[}\]])')
_LEADING: Final = re.compile(r"\s*")


@dataclass
class Parsed:
    """A parsed document, or the problem that stopped parsing (`document` is then None).
    `duplicates` holds, per JSON object (by `id`), the keys it had more than once."""

    syntax: Syntax | None
    document: Any = None
    problem: Problem | None = None
    duplicates: dict[int, list[str]] = field(default_factory=dict)


def read_text(path: Path, max_bytes: int = MAX_CONFIG_BYTES) -> tuple[str | None, Problem | None]:
    """The file's text, or why it cannot be had. Only regular files are opened (a FIFO or device
    would block or never end), and no more than `max_bytes` + 1 bytes are read."""
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):
            return None, Problem("", "is not a regular file")
        with path.open("rb") as file:
            data = file.read(max_bytes + 1)
    except OSError as exc:
        return None, Problem("", f"cannot be read: {exc.strerror or type(exc).__name__}")
    if len(data) > max_bytes:
        return None, Problem(
            "", f"is larger than {max_bytes} bytes, more than any MCP client configuration; not read"
        )
    try:
        return data.decode("utf-8-sig"), None
    except UnicodeDecodeError as exc:
        return None, Problem("", f"is not UTF-8 text (byte {exc.start}: {exc.reason})")


def parse_text(text: str) -> Parsed:
    start = _LEADING.match(text)
    first = text[start.end() : start.end() + 2] if start else text[:2]
    if first.startswith("{") or first in ("//", "/*"):
        return _parse_json(text)
    parsed = _parse_toml(text)
    if parsed.problem is not None and first.startswith("["):  # a TOML table, or a JSON array?
        as_json = _parse_json(text)
        return parsed if as_json.problem is not None else as_json
    return parsed


def _parse_json(text: str) -> Parsed:
    duplicates: dict[int, list[str]] = {}

    def pairs_hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        result: dict[str, Any] = {}
        for key, value in pairs:
            if key in result:
                duplicates.setdefault(id(result), []).append(key)
            result[key] = value
        return result

    def load(source: str) -> Any:
        return json.loads(source, object_pairs_hook=pairs_hook, parse_constant=_refuse_constant)

    try:
        try:
            document = load(text)
        except json.JSONDecodeError:
            duplicates.clear()
            document = load(_blank_jsonc(text))
    except json.JSONDecodeError as exc:
        return Parsed(
            "json", problem=Problem("", f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}")
        )
    except ValueError as exc:  # NaN/Infinity, an integer of thousands of digits
        return Parsed("json", problem=Problem("", f"invalid JSON: {exc}"))
    except RecursionError:
        return Parsed("json", problem=Problem("", "JSON is nested too deeply to read"))
    return Parsed("json", document, duplicates=duplicates)


def _parse_toml(text: str) -> Parsed:
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        return Parsed("toml", problem=Problem("", f"invalid TOML: {exc}"))
    except RecursionError:
        return Parsed("toml", problem=Problem("", "TOML is nested too deeply to read"))
    return Parsed("toml", document)


def _blank_jsonc(text: str) -> str:
    """`text` with comments and trailing commas replaced by spaces; strings are left alone and
    every character keeps its line and column."""
    without_comments = _STRING_OR_COMMENT.sub(_blank_unless_string, text)
    return _STRING_OR_TRAILING_COMMA.sub(_blank_unless_string, without_comments)


def _blank_unless_string(match: re.Match[str]) -> str:
    found = match.group(0)
    if found.startswith('"'):
        return found
    return re.sub(r"[^\n]", " ", found)


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")
