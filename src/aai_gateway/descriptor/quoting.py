"""How much of a descriptor's own text a problem message repeats.

A hostile file can put megabytes into any string (a version of 5,000 digits, a tool name the
size of a novel). A problem names the value so its author can find it, but only the start of it:
`version '10000000000000000000000000000000…' (5004 characters)`. Lists of names are cut the same
way. `clip` is the last resort for library messages that embed a value the gateway cannot see.
`shell_command` writes a command (or a file name) a message gives for pasting into a shell.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterable, Sequence
from typing import Any

SHOWN_CHARACTERS = 32
"""How many characters of a long value a message shows."""
WHOLE_UP_TO = 64
"""Values up to this length are shown whole."""
LISTED_ITEMS = 6
MAX_MESSAGE = 600
"""No problem message is longer (see `clip`)."""


def quoted(text: str, *, ascii_only: bool = False) -> str:
    """`repr(text)` (or `ascii(text)`), shortened with its length when the text is long."""
    show = ascii if ascii_only else repr
    if len(text) <= WHOLE_UP_TO:
        return show(text)
    start = show(text[:SHOWN_CHARACTERS])
    return f"{start[:-1]}…{start[-1]} ({len(text)} characters)"


def shortened(text: str, *, whole_up_to: int = WHOLE_UP_TO, shown: int = SHOWN_CHARACTERS) -> str:
    """`text` itself, or its start and its length when long (for text already between quotes)."""
    if len(text) <= whole_up_to:
        return text
    return f"{text[:shown]}… ({len(text)} characters)"


def json_excerpt(value: Any) -> str:
    """A JSON value as compact JSON text, cut after a few dozen characters."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except ValueError:  # an integer too long to print: the loader refuses those, but be safe
        return f"a number of more than {WHOLE_UP_TO} digits"
    if len(text) <= WHOLE_UP_TO:
        return text
    return f"{text[:SHOWN_CHARACTERS]}… ({len(text)} characters)"


def listed(names: Iterable[str], *, most: int = LISTED_ITEMS, whole_up_to: int = 24) -> str:
    """`a, b, c`; after `most` names, `… (25 in all)`; names longer than `whole_up_to` shortened."""
    items = list(names)
    shown = ", ".join(shortened(name, whole_up_to=whole_up_to, shown=16) for name in items[:most])
    return shown if len(items) <= most else f"{shown}, … ({len(items)} in all)"


def clip(message: str, limit: int = MAX_MESSAGE) -> str:
    """A message cut in the middle to `limit` characters: the start names the value, the end
    usually says what is wrong with it."""
    if len(message) <= limit:
        return message
    head = limit * 2 // 5
    tail = limit - head - 30
    return f"{message[:head]} … [{len(message) - head - tail} characters cut] … {message[-tail:]}"


def shell_command(argv: Sequence[str]) -> str:
    """`argv` as a bash command line to print for the user to paste: each argument quoted, and
    one with a character that is not printable (a control, a bidirectional override, a newline:
    the CLI's `visible` would rewrite it in the output, or it would break the line) in bash's `$'…'`, with
    each such character spelled as the bytes of its UTF-8 (`\\xe2\\x80\\xae`: the same bytes in
    every locale, as a file name holds them)."""
    return " ".join(shlex.quote(arg) if arg.isprintable() else _ansi_c_quoted(arg) for arg in argv)


def _ansi_c_quoted(arg: str) -> str:
    spelled = []
    for char in arg:
        if char in "\\'":
            spelled.append("\\" + char)
        elif char.isprintable():
            spelled.append(char)
        else:
            try:  # a byte of a file name that is not UTF-8 comes back as itself
                encoded = char.encode("utf-8", "surrogateescape")
            except UnicodeEncodeError:
                encoded = char.encode("utf-8", "surrogatepass")
            spelled.append("".join(f"\\x{byte:02x}" for byte in encoded))
    return "$'" + "".join(spelled) + "'"
