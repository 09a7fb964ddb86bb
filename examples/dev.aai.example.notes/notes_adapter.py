#!/usr/bin/env python3
"""The stdio adapter behind examples/dev.aai.example.notes/aai.json: a small local notebook.

The gateway runs `python3 notes_adapter.py` in this folder once per call, writes one JSON request
line to stdin and reads one JSON response from stdout:

    request:  {"version": "1.0", "request_id": "…", "tool": "add_note", "params": {…}}
    response: {"version": "1.0", "request_id": "…", "status": "success", "result": {…}}
          or  {"version": "1.0", "request_id": "…", "status": "error",
               "error": {"code": "INVALID_PARAMS", "message": "…"}}

Notes live in one JSON file: `$AAI_NOTES_FILE` when set, else
`$XDG_DATA_HOME/aai-example-notes/notes.json` (XDG_DATA_HOME defaults to ~/.local/share; on
Windows %APPDATA%). Writes go to a temporary file that replaces the old one, under a lock, so
concurrent calls neither corrupt the file nor lose each other's notes.

Standard library only; Python 3.9 or newer. Try it by hand:

    echo '{"request_id":"1","tool":"add_note","params":{"title":"hello"}}' | python3 notes_adapter.py
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
import tempfile
import traceback
import uuid
from collections.abc import Callable, Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

if sys.platform != "win32":  # Windows has no advisory file locks in the standard library
    import fcntl

WIRE_VERSION = "1.0"
SNIPPET_CHARS = 120
TAG_PATTERN = re.compile(r"^[^\s,]{1,40}$")
SORT_KEYS = ("updated", "created", "title")
SEARCH_FIELDS = ("title", "body", "tags")

Note = dict[str, Any]


class AdapterError(Exception):
    """Becomes a wire error response with this code and message."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def invalid(message: str) -> AdapterError:
    return AdapterError("INVALID_PARAMS", message)


# --------------------------------------------------------------------------- storage


def notes_file() -> Path:
    explicit = os.environ.get("AAI_NOTES_FILE")
    if explicit:
        return Path(explicit).expanduser()
    data_home = os.environ.get("XDG_DATA_HOME")
    if data_home and os.path.isabs(data_home):
        base = Path(data_home)
    elif os.name == "nt" and os.environ.get("APPDATA"):
        base = Path(os.environ["APPDATA"])
    else:
        base = Path.home() / ".local" / "share"
    return base / "aai-example-notes" / "notes.json"


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold an exclusive lock next to the notes file for one read-modify-write."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if sys.platform == "win32":
        yield
        return
    with open(str(path) + ".lock", "a", encoding="utf-8") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock.fileno(), fcntl.LOCK_UN)


def load(path: Path) -> list[Note]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise AdapterError("EXECUTION_FAILED", f"cannot read the notes file {path}: {exc}") from exc
    try:
        document = json.loads(text)
    except ValueError as exc:
        raise AdapterError(
            "EXECUTION_FAILED",
            f"the notes file {path} is not valid JSON ({exc}); fix or move it, it was left untouched",
        ) from exc
    notes = document.get("notes") if isinstance(document, dict) else None
    if not isinstance(notes, list):
        raise AdapterError(
            "EXECUTION_FAILED", f'the notes file {path} has no "notes" list; it was left untouched'
        )
    return [note for note in notes if isinstance(note, dict)]


def save(path: Path, notes: list[Note]) -> None:
    """Atomically: a temporary file in the same folder, flushed to disk, then renamed over."""
    payload = json.dumps({"version": 1, "notes": notes}, ensure_ascii=False, indent=1)
    handle, temporary = tempfile.mkstemp(prefix=".notes-", suffix=".tmp", dir=str(path.parent))
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(payload)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, str(path))
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


# --------------------------------------------------------------------------- parameters


def check_keys(params: dict[str, Any], allowed: tuple[str, ...]) -> None:
    unknown = sorted(set(params) - set(allowed))
    if unknown:
        raise invalid(f"unknown parameter(s) {', '.join(unknown)}; allowed: {', '.join(allowed)}")


def text_param(
    params: dict[str, Any],
    name: str,
    default: str | None = None,
    *,
    min_len: int = 0,
    max_len: int | None = None,
) -> str:
    value = params.get(name, default)
    if value is None:
        raise invalid(f"{name} is required")
    if not isinstance(value, str):
        raise invalid(f"{name} must be a string")
    if len(value) < min_len:
        raise invalid(f"{name} must not be empty")
    if max_len is not None and len(value) > max_len:
        raise invalid(f"{name} must be at most {max_len} characters")
    return value


def bool_param(params: dict[str, Any], name: str, default: bool) -> bool:
    value = params.get(name, default)
    if not isinstance(value, bool):
        raise invalid(f"{name} must be true or false")
    return value


def int_param(params: dict[str, Any], name: str, default: int, low: int, high: int) -> int:
    value = params.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise invalid(f"{name} must be a whole number from {low} to {high}")
    return value


def tags_param(params: dict[str, Any]) -> list[str]:
    tags = params.get("tags", [])
    if not isinstance(tags, list) or not all(isinstance(tag, str) for tag in tags):
        raise invalid("tags must be a list of strings")
    bad = [tag for tag in tags if not TAG_PATTERN.match(tag)]
    if bad:
        raise invalid(f"tags must be 1-40 characters without spaces or commas, not {bad[0]!r}")
    if len(set(tags)) != len(tags):
        raise invalid("tags must not repeat")
    if len(tags) > 20:
        raise invalid("at most 20 tags")
    return list(tags)


# --------------------------------------------------------------------------- tools


def now() -> str:
    stamp = datetime.now(timezone.utc).isoformat(timespec="milliseconds")  # noqa: UP017 (datetime.UTC needs 3.11)
    return stamp.replace("+00:00", "Z")


def summary(note: Note, snippet: str | None = None) -> Note:
    body = note.get("body", "")
    shown = (
        snippet if snippet is not None else body[:SNIPPET_CHARS] + ("…" if len(body) > SNIPPET_CHARS else "")
    )
    return {
        "id": note["id"],
        "title": note["title"],
        "tags": note.get("tags", []),
        "pinned": note.get("pinned", False),
        "updated": note["updated"],
        "snippet": shown,
    }


def ordered(notes: list[Note], key: str) -> list[Note]:
    """Pinned first; dates newest first, titles A to Z; ties keep the newest-added first."""
    numbered = list(enumerate(notes))
    if key == "title":
        numbered.sort(key=lambda pair: -pair[0])
        numbered.sort(key=lambda pair: pair[1]["title"].casefold())
    else:
        numbered.sort(key=lambda pair: (pair[1].get(key, ""), pair[0]), reverse=True)
    numbered.sort(key=lambda pair: not pair[1].get("pinned", False))
    return [note for _, note in numbered]


def add_note(params: dict[str, Any], path: Path) -> Any:
    check_keys(params, ("title", "body", "tags", "pinned"))
    title = text_param(params, "title", min_len=1, max_len=200)
    if not title.strip():
        raise invalid("title must not be blank")
    body = text_param(params, "body", "", max_len=100_000)
    tags = tags_param(params)
    pinned = bool_param(params, "pinned", False)
    stamp = now()
    note = {
        "id": uuid.uuid4().hex[:12],
        "title": title,
        "body": body,
        "tags": tags,
        "pinned": pinned,
        "created": stamp,
        "updated": stamp,
    }
    with locked(path):
        notes = load(path)
        notes.append(note)
        save(path, notes)
    return note


def list_notes(params: dict[str, Any], path: Path) -> Any:
    check_keys(params, ("tag", "pinned_only", "sort", "limit"))
    tag = params.get("tag")
    if tag is not None and not isinstance(tag, str):
        raise invalid("tag must be a string")
    pinned_only = bool_param(params, "pinned_only", False)
    sort = params.get("sort", "updated")
    if sort not in SORT_KEYS:
        raise invalid(f"sort must be one of {', '.join(SORT_KEYS)}")
    limit = int_param(params, "limit", 20, 1, 200)
    notes = [
        note
        for note in load(path)
        if (tag is None or tag in note.get("tags", [])) and (not pinned_only or note.get("pinned"))
    ]
    return {"notes": [summary(note) for note in ordered(notes, sort)[:limit]], "total": len(notes)}


def search_notes(params: dict[str, Any], path: Path) -> Any:
    check_keys(params, ("query", "fields", "limit"))
    query = text_param(params, "query", min_len=1)
    words = query.casefold().split()
    if not words:
        raise invalid("query must contain at least one word")
    fields = params.get("fields", list(SEARCH_FIELDS))
    if (
        not isinstance(fields, list)
        or not fields
        or any(field not in SEARCH_FIELDS for field in fields)
        or len(set(fields)) != len(fields)
    ):
        raise invalid(f"fields must be a non-empty list of distinct values from {', '.join(SEARCH_FIELDS)}")
    limit = int_param(params, "limit", 10, 1, 100)
    found = []
    for note in load(path):
        texts = {
            "title": note.get("title", ""),
            "body": note.get("body", ""),
            "tags": " ".join(note.get("tags", [])),
        }
        haystack = "\n".join(texts[field] for field in fields).casefold()
        if all(word in haystack for word in words):
            found.append((note, passage(texts, fields, words[0])))
    by_id = {note["id"]: snippet for note, snippet in found}
    return {
        "notes": [
            summary(note, by_id[note["id"]]) for note in ordered([n for n, _ in found], "updated")[:limit]
        ]
    }


def passage(texts: dict[str, str], fields: list[str], word: str) -> str:
    """Some context around the first match of `word`, preferring the body."""
    for field in sorted(fields, key=lambda name: name != "body"):
        text = texts[field]
        at = text.casefold().find(word)
        if at >= 0:
            start = max(0, at - SNIPPET_CHARS // 3)
            end = min(len(text), start + SNIPPET_CHARS)
            return ("…" if start else "") + text[start:end] + ("…" if end < len(text) else "")
    return ""


def delete_note(params: dict[str, Any], path: Path) -> Any:
    check_keys(params, ("id",))
    note_id = text_param(params, "id", min_len=1)
    with locked(path):
        notes = load(path)
        kept = [note for note in notes if note.get("id") != note_id]
        if len(kept) != len(notes):
            save(path, kept)
    return {"deleted": len(kept) != len(notes), "id": note_id}


TOOLS: dict[str, Callable[[dict[str, Any], Path], Any]] = {
    "add_note": add_note,
    "list_notes": list_notes,
    "search_notes": search_notes,
    "delete_note": delete_note,
}


# --------------------------------------------------------------------------- wire


def answer(request_id: Any, body: dict[str, Any]) -> None:
    response = {"version": WIRE_VERSION, "request_id": request_id, **body}
    sys.stdout.buffer.write(json.dumps(response, ensure_ascii=False).encode("utf-8") + b"\n")
    sys.stdout.buffer.flush()


def main() -> int:
    request_id = None
    try:
        try:
            request = json.loads(sys.stdin.buffer.readline())
        except ValueError as exc:
            raise AdapterError("INVALID_REQUEST", f"the request is not JSON: {exc}") from exc
        if not isinstance(request, dict):
            raise AdapterError("INVALID_REQUEST", "the request must be a JSON object")
        request_id = request.get("request_id")
        tool = request.get("tool")
        params = request.get("params", {})
        if tool not in TOOLS:
            raise AdapterError(
                "UNKNOWN_TOOL", f"no tool {tool!r}; this adapter has {', '.join(sorted(TOOLS))}"
            )
        if not isinstance(params, dict):
            raise invalid("params must be a JSON object")
        result = TOOLS[str(tool)](params, notes_file())
    except AdapterError as error:
        answer(request_id, {"status": "error", "error": {"code": error.code, "message": error.message}})
        return 0
    except Exception as exc:  # anything unforeseen still gets a well-formed answer
        traceback.print_exc(file=sys.stderr)
        message = f"the notes adapter failed: {type(exc).__name__}: {exc}"
        answer(request_id, {"status": "error", "error": {"code": "EXECUTION_FAILED", "message": message}})
        return 1
    answer(request_id, {"status": "success", "result": result})
    return 0


if __name__ == "__main__":
    sys.exit(main())
