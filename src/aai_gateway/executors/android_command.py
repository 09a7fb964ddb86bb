"""Pure pieces of the Android executor: the `adb` argv, POSIX shell quoting, and output parsers.

`adb shell WORD...` does not pass an argv to the device: it joins its arguments with spaces into
ONE command line that the device's `sh` parses again. So every word after `shell` is quoted here
for a POSIX shell (`shell_quote`), and a parameter value can only ever be one word of data.

Extras are typed from the JSON value each `${param}` template produced (see `extra_words`):

| value                           | `am` option                                 |
|---------------------------------|---------------------------------------------|
| string (or text with `${…}`)    | `--es KEY VALUE`                            |
| boolean                         | `--ez KEY true/false`                       |
| integer in 32 bits / wider      | `--ei` / `--el`                             |
| other number                    | `--ef` (float: `--ed` needs Android 12)     |
| null                            | `--esn KEY`                                 |
| array of strings / ints / nums  | `--esa` / `--eia` (`--ela`) / `--efa`       |
| object or mixed array           | `--es KEY <compact JSON>`                   |

Missing optional arguments drop their extra (whole-value placeholder) as the JSON templates do.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import quote

from ..descriptor.model import IntentCall, IntentChannel
from .answer_json import strict_loads
from .templates import MISSING, OMIT, PLACEHOLDER, lookup, substitute, text_of

INT32: Final = (-(2**31), 2**31 - 1)
INT64: Final = (-(2**63), 2**63 - 1)
_SAFE_WORD: Final = re.compile(r"[A-Za-z0-9_@%+=:,./-]+\Z")


class ExtraError(ValueError):
    """An argument that cannot be sent as an intent extra; `path` names it (JSON pointer-ish)."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(message)
        self.path = path
        self.message = message


def shell_quote(word: str) -> str:
    """`word` as one POSIX `sh` word that expands to exactly `word` (like `shlex.quote`).

    Single quotes keep everything literal, newlines included; an embedded `'` becomes `'\\''`.
    The empty string is `''`. NUL cannot be passed through a command line and is refused."""
    if "\0" in word:
        raise ValueError("a NUL character cannot be passed to the device's shell")
    if _SAFE_WORD.match(word):
        return word
    return "'" + word.replace("'", "'\\''") + "'"


@dataclass(frozen=True)
class AdbCommand:
    """`argv` runs locally; `remote` is the words after `shell` (already quoted), which the
    device's shell sees joined by spaces."""

    argv: tuple[str, ...]
    remote: tuple[str, ...]

    @property
    def remote_line(self) -> str:
        return " ".join(self.remote)


def adb_prefix(serial: str | None) -> tuple[str, ...]:
    return ("adb", "-s", serial) if serial else ("adb",)


def intent_command(
    channel: IntentChannel, call: IntentCall, arguments: Mapping[str, Any], *, serial: str | None
) -> AdbCommand:
    """`adb [-s SERIAL] shell am broadcast|start …` for one call.

    `result_type: broadcast` sends an ordered broadcast (`am broadcast`), whose result line is
    the answer; otherwise the intent starts an activity and `am start -W` waits until it is up.
    A `package` containing `/` names a component (`-n`), else the intent is limited to it (`-p`).
    """
    verb: tuple[str, ...] = ("broadcast",) if call.result_type == "broadcast" else ("start", "-W")
    target = ("-n", channel.package) if "/" in channel.package else ("-p", channel.package)
    words = ["am", *verb, "-a", call.action, *target]
    substituted = substitute(call.extras, arguments).value
    extras = substituted if isinstance(substituted, dict) else {}
    for key, value in extras.items():
        words += extra_words(key, value)
    remote = tuple(shell_quote(w) for w in words)
    return AdbCommand((*adb_prefix(serial), "shell", *remote), remote)


def content_query_command(uri: str, *, serial: str | None) -> AdbCommand:
    remote = tuple(shell_quote(w) for w in ("content", "query", "--uri", uri))
    return AdbCommand((*adb_prefix(serial), "shell", *remote), remote)


def result_uri(template: str, arguments: Mapping[str, Any]) -> str:
    """`result_uri` with `${param}` replaced by percent-encoded values (nothing else changes)."""

    def replace(match: re.Match[str]) -> str:
        value = lookup(arguments, match.group(1))
        if value is MISSING or value is None:
            return ""
        return quote(text_of(value), safe="")

    return PLACEHOLDER.sub(replace, template)


def extra_words(key: str, value: Any) -> list[str]:
    """The `am` words (unquoted) for one extra; see the module's table."""
    if value is OMIT:
        return []
    if value is None:
        return ["--esn", key]
    if isinstance(value, bool):
        return ["--ez", key, "true" if value else "false"]
    if isinstance(value, int):
        return [_int_option(key, [value], "--ei", "--el"), key, str(value)]
    if isinstance(value, float):
        return ["--ef", key, repr(value)]
    if isinstance(value, str):
        return ["--es", key, value]
    if isinstance(value, list) and value:
        if all(isinstance(v, str) for v in value):
            return ["--esa", key, _join_strings(key, value)]
        if all(isinstance(v, int) and not isinstance(v, bool) for v in value):
            return [_int_option(key, value, "--eia", "--ela"), key, ",".join(str(v) for v in value)]
        if all(isinstance(v, int | float) and not isinstance(v, bool) for v in value):
            return ["--efa", key, ",".join(repr(float(v)) for v in value)]
    return ["--es", key, json.dumps(value, ensure_ascii=False, separators=(",", ":"))]


def _int_option(key: str, values: Sequence[int], narrow: str, wide: str) -> str:
    if all(INT32[0] <= v <= INT32[1] for v in values):
        return narrow
    if all(INT64[0] <= v <= INT64[1] for v in values):
        return wide
    raise ExtraError(key, "an integer extra must fit in 64 bits")


def _join_strings(key: str, items: Sequence[str]) -> str:
    """`am --esa` splits on commas not preceded by a backslash, then turns `\\,` into `,`.
    Items that would not survive that round trip exactly are refused rather than altered."""
    for index, item in enumerate(items):
        if item.endswith("\\") or "\\," in item:
            raise ExtraError(f"{key}/{index}", "`am` cannot pass a backslash before a comma in a list")
    if len(items) > 1 and items[-1] == "":
        raise ExtraError(f"{key}/{len(items) - 1}", "`am` drops a trailing empty string from a list")
    return ",".join(item.replace(",", "\\,") for item in items)


# --------------------------------------------------------------------------- output parsers

_BROADCAST: Final = re.compile(r"^Broadcast completed: result=(-?\d+)(.*)\Z", re.MULTILINE | re.DOTALL)
_ROW: Final = re.compile(r"^Row: (\d+) ?(.*)\Z")
_COLUMN_SPLIT: Final = re.compile(r", (?=[A-Za-z_][A-Za-z0-9_]*=)")


@dataclass(frozen=True)
class BroadcastResult:
    code: int
    data: str | None


def parse_broadcast(output: str) -> BroadcastResult | None:
    """The `Broadcast completed: result=N[, data="…"][, extras: Bundle[…]]` line of `am broadcast`
    (`data` may span lines and contain quotes); None when there is no such line."""
    match = _BROADCAST.search(output)
    if match is None:
        return None
    rest = match.group(2).rstrip("\r\n")
    if not rest.startswith(', data="'):
        return BroadcastResult(int(match.group(1)), None)
    body = rest[len(', data="') :]
    end = body.rfind('", extras: ')
    if end < 0:
        end = body.rfind('"')
    return BroadcastResult(int(match.group(1)), body[:end] if end >= 0 else body)


def parse_content_rows(output: str) -> list[dict[str, str | None]]:
    """Rows of `content query` output (`Row: 0 key=value, key=value`), `NULL` read as null.

    A value containing `, name=` is ambiguous in this format and splits there; a line that does
    not start a row continues the previous row's last value (a value with a newline)."""
    rows: list[str] = []
    for line in output.splitlines():
        match = _ROW.match(line)
        if match is not None:
            rows.append(match.group(2))
        elif rows:
            rows[-1] += "\n" + line
    parsed: list[dict[str, str | None]] = []
    for text in rows:
        row: dict[str, str | None] = {}
        for column in _COLUMN_SPLIT.split(text) if text else []:
            name, _, value = column.partition("=")
            row[name] = None if value == "NULL" else value
        parsed.append(row)
    return parsed


def am_error(output: str) -> str | None:
    """The first `Error…`/`Exception…`/`Security exception…` line `am` printed (it often exits 0)."""
    for line in output.splitlines():
        stripped = line.strip()
        if stripped.startswith(("Error", "Exception", "java.lang.", "Security exception")):
            return stripped
    return None


def decode_data(text: str | None) -> Any:
    """Broadcast data or a single JSON cell as JSON when it is JSON, else the text itself.
    RecursionError when it is JSON nested too deeply to read."""
    if text is None:
        return None
    try:
        return strict_loads(text)
    except ValueError:
        return text
