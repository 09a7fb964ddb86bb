"""Guesses for example values: by `format`, by a value quoted in the description, by name.

Every guess is only a candidate: the example builder keeps it only when the schema accepts it.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

FORMATS: dict[str, tuple[str, ...]] = {
    "date": ("2025-06-30",),
    "date-time": ("2025-06-30T09:00:00Z",),
    "time": ("09:00:00Z", "09:00:00"),
    "email": ("alex@example.com",),
    "idn-email": ("alex@example.com",),
    "uri": ("https://example.com",),
    "url": ("https://example.com",),
    "iri": ("https://example.com",),
    "uri-reference": ("https://example.com/docs",),
    "iri-reference": ("https://example.com/docs",),
    "uri-template": ("https://example.com/items/{id}",),
    "uuid": ("123e4567-e89b-12d3-a456-426614174000",),
    "ipv4": ("192.0.2.10",),
    "ipv6": ("2001:db8::10",),
    "hostname": ("example.com",),
    "idn-hostname": ("example.com",),
    "json-pointer": ("/items/0",),
    "relative-json-pointer": ("0/name",),
    "regex": ("^[a-z]+$",),
}

# Values for a string property whose name (or its last word) is one of these, best first.
_DAY, _NEXT_DAY = "2025-06-30", "2025-07-04"
_START, _END = "2025-06-30T09:00:00Z", "2025-06-30T10:00:00Z"
_PATH, _DIR = "/home/user/Documents/report.txt", "/home/user/project"
_STRING_GROUPS: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = (
    (
        ("email", "recipient", "to", "cc", "bcc", "attendee"),
        ("alex@example.com", "2025-07-04T17:00:00Z", _NEXT_DAY),
    ),
    (("url", "uri", "link", "href", "website", "homepage", "endpoint"), ("https://example.com",)),
    (("title", "subject", "summary", "heading"), ("Quarterly report",)),
    (("name",), ("Example",)),
    (("filename",), ("report.txt",)),
    (("username", "user", "owner", "author", "assignee", "sender"), ("alex",)),
    (("query", "q", "search", "keyword", "keywords", "term"), ("quarterly report",)),
    (("text", "body", "content", "message"), ("Hello from the assistant",)),
    (("prompt", "instruction", "instructions"), ("Summarize the README",)),
    (("note", "notes", "comment", "memo"), ("Follow up next week",)),
    (("description",), ("Short description",)),
    (("task",), ("Write tests",)),
    (("path", "file", "filepath"), (_PATH,)),
    (("dir", "directory", "folder", "cwd", "root"), (_DIR,)),
    (("date", "day", "due", "deadline", "birthday"), (_DAY, "2025-06-30T17:00:00Z")),
    (("time",), ("09:00", "09:00:00Z")),
    (("datetime", "timestamp", "at", "from", "since", "start", "begin"), (_START, _DAY, "09:00", "08:30")),
    (("end", "until", "finish"), (_END, _NEXT_DAY, "17:00", "18:00")),
    (("tag", "tags", "label", "labels", "category"), ("work",)),
    (("extension", "ext"), ("pdf",)),
    (("project",), ("Website",)),
    (("list", "calendar", "folder", "group", "team"), ("Work",)),
    (("lang", "language"), ("en",)),
    (("locale",), ("en-US",)),
    (("country",), ("US",)),
    (("currency",), ("USD",)),
    (("timezone", "tz"), ("Europe/Berlin",)),
    (("color", "colour"), ("blue",)),
    (("phone", "mobile"), ("+1-555-0100",)),
    (("city",), ("Berlin",)),
    (("address",), ("1 Main Street",)),
    (("status", "state"), ("open",)),
    (("priority",), ("high",)),
    (("host", "hostname", "domain"), ("example.com",)),
    (("ip",), ("192.0.2.10",)),
    (("version",), ("1.0.0",)),
    (("mime", "mimetype", "contenttype"), ("text/plain",)),
    (("location", "place", "room"), ("Room 1",)),
)
_STRINGS: dict[str, tuple[str, ...]] = {}
for _names, _values in _STRING_GROUPS:
    for _name in _names:
        _STRINGS.setdefault(_name, _values)

_NUMBERS: dict[str, int] = {
    "limit": 10,
    "max": 10,
    "count": 5,
    "size": 10,
    "top": 10,
    "n": 5,
    "page": 1,
    "offset": 0,
    "skip": 0,
    "minutes": 30,
    "seconds": 5,
    "timeout": 30,
    "delay": 2,
    "hours": 2,
    "days": 7,
    "weeks": 2,
    "year": 2025,
    "month": 6,
    "hour": 9,
    "port": 8080,
    "volume": 50,
    "level": 50,
    "percent": 50,
    "quantity": 2,
    "qty": 2,
    "age": 30,
    "amount": 100,
    "price": 100,
    "total": 100,
    "rate": 19,
    "id": 1,
}

# Only the start of a description is searched for hints: the guide is built while a request
# waits, and a descriptor may repeat a megabyte-long description at every place that refers to it.
SEARCHED_CHARACTERS = 4_000
_FOLDER = re.compile(r"\b(folder|directory)\b", re.IGNORECASE)
_WORDS = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
# Linear in the description's length: `\s*+` is possessive (two optional runs of spaces around an
# optional `:` let "e.g." and thousands of spaces try every split of them) and a quoted value is
# at most `_MAX_QUOTED` characters (an unclosed “ after each of thousands of "e.g." would
# otherwise be searched for its end to the end of the text, each time).
_MAX_QUOTED = 500
_QUOTED = re.compile(
    r"(?:\be\.g\.|\bfor example|\bsuch as)\s*+(?:[:,]\s*+)?"
    rf"(?:\"([^\"]{{1,{_MAX_QUOTED}}})\"|“([^”]{{1,{_MAX_QUOTED}}})”|'([^']{{1,{_MAX_QUOTED}}})'"
    rf"|`([^`]{{1,{_MAX_QUOTED}}})`|([^\s,;()]+))",
    re.IGNORECASE,
)


def words(name: str) -> list[str]:
    """`durationMinutes` → [duration, minutes]; `project_id` → [project, id]."""
    return [w.lower() for w in _WORDS.findall(name)]


def strings_for(name: str, description: Any = None) -> tuple[str, ...]:
    """Candidate values for a string property called `name`, best first (maybe none)."""
    parts = words(name)
    if not parts:
        return ()
    whole = "".join(parts)
    if (
        parts[-1] == "path"
        and isinstance(description, str)
        and _FOLDER.search(description, 0, SEARCHED_CHARACTERS)
    ):
        return (_DIR, _PATH)
    if whole in _STRINGS:
        return _STRINGS[whole]
    if parts[-1] == "id":
        return (f"{'_'.join(parts[:-1]) or 'item'}_123",)
    return _STRINGS.get(parts[-1]) or _STRINGS.get(parts[0], ())


def number_for(name: str, *, integer: bool) -> int | float | None:
    parts = words(name)
    if not parts:
        return None
    for key in ("".join(parts), parts[-1]):
        if key in _NUMBERS:
            return _NUMBERS[key]
    if not integer and parts[-1] in ("amount", "price", "cost", "rate"):
        return 19.99
    return None


def singular(name: str) -> str:
    """The name an array's items go by: `tags` → `tag`, `entries` → `entry`."""
    if name.endswith("ies") and len(name) > 4:
        return name[:-3] + "y"
    if name.endswith("s") and not name.endswith("ss") and len(name) > 3:
        return name[:-1]
    return name


def quoted_examples(description: Any) -> list[Any]:
    """Values a description offers after "e.g." / "for example" / "such as": quoted text, a
    number, a JSON array or object, or a bare token; bare words in lower case are left out (in
    "e.g. the file name", `the` is prose, not a value)."""
    if not isinstance(description, str):
        return []
    found: list[Any] = []
    for match in _QUOTED.finditer(description, 0, SEARCHED_CHARACTERS):
        if match.group(5) and match.group(5)[0] in "[{":
            try:
                start = match.start(5)  # an example longer than that would not be shown anyway
                found.append(_DECODER.raw_decode(description[start : start + _MAX_JSON], 0)[0])
                continue
            except (ValueError, RecursionError):  # not JSON, or nested past the parser's stack
                pass
        quoted = next((g for g in match.groups()[:4] if g), None)
        if quoted is not None:
            found.append(quoted)
            continue
        bare = match.group(5).rstrip(".:;!?'\"")
        number = _number(bare)
        if number is not None:
            found.append(number)
        elif bare and not (bare.isalpha() and bare.islower()):
            found.append(bare)
    return found


def _plain_float(literal: str) -> float:
    value = float(literal)
    if not math.isfinite(value):
        raise ValueError("not a finite number")
    return value


def _plain_int(literal: str) -> int:
    if len(literal) > _MAX_DIGITS:
        raise ValueError("too many digits")
    return int(literal)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


# Numbers an example can hold as JSON: no NaN or infinity, no integers of hundreds of digits.
_MAX_DIGITS = 18
_MAX_JSON = 4_000
_DECODER = json.JSONDecoder(parse_float=_plain_float, parse_int=_plain_int, parse_constant=_no_constant)


def _number(text: str) -> int | float | None:
    if re.fullmatch(rf"-?\d{{1,{_MAX_DIGITS}}}", text):
        return int(text)
    if re.fullmatch(rf"-?\d{{1,{_MAX_DIGITS}}}\.\d{{1,{_MAX_DIGITS}}}", text):
        return float(text)
    return None
