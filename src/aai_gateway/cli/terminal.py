"""What the CLI prints never drives the terminal: control characters become visible escapes.

Descriptor text (names, descriptions, problems quoting values), web cache metadata, config
keys and app output can hold escape sequences: `ESC ] 0 ; … BEL` retitles the window, `ESC [ 2 J`
clears it, OSC 52 writes the clipboard, a carriage return overwrites the line being read (a
consent prompt, say). Everything `aai-gateway` prints passes through `visible`: C0 controls
other than newline and tab, DEL, the C1 controls, the bidirectional overrides and isolates
(U+202A-U+202E, U+2066-U+2069, which can make a line read backwards) and lone surrogates
(which cannot be written as UTF-8 at all) are written as `\\u001b`, `\\u009b`, `\\u202e`, `\\ud800`.
Those are visible, and valid escapes inside the JSON that `--json` prints, so that output stays
JSON. `guide` keeps its newlines.

`visible_output` applies it to `sys.stdout` and `sys.stderr` for one command; `serve` keeps its
stdout as it is (the MCP protocol, read by the client, not by a person) and only its stderr logs
are escaped.
"""

from __future__ import annotations

import io
import shlex
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Final, TextIO, cast

_KEPT: Final = frozenset("\n\t")
_ESCAPES: Final = {
    code: f"\\u{code:04x}"
    for code in (
        *range(0x00, 0x20),
        *range(0x7F, 0xA0),
        *range(0x202A, 0x202F),
        *range(0x2066, 0x206A),
        *range(0xD800, 0xE000),
    )
    if chr(code) not in _KEPT
}


def visible(text: str) -> str:
    """`text` with every character that could drive a terminal written as a visible escape."""
    return text.translate(_ESCAPES)


def shell_command(argv: Sequence[str]) -> str:
    """`argv` as a bash command line to print for the user to paste: each argument quoted, and
    one with a character that is not printable (a control, a bidirectional override, a newline:
    `visible` would rewrite it in the output, or it would break the line) in bash's `$'…'`, with
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


class VisibleText(io.TextIOBase):
    """A text stream that writes through `visible` to another one."""

    def __init__(self, stream: TextIO) -> None:
        super().__init__()
        self.stream = stream

    def write(self, text: str) -> int:
        self.stream.write(visible(text))
        return len(text)

    def flush(self) -> None:
        self.stream.flush()

    def fileno(self) -> int:
        return self.stream.fileno()

    def isatty(self) -> bool:
        return self.stream.isatty()

    def writable(self) -> bool:
        return True

    @property
    def encoding(self) -> str:  # type: ignore[override]  # TextIOBase declares it read-only
        return self.stream.encoding


@contextmanager
def visible_output(*, keep_stdout: bool = False) -> Iterator[None]:
    """Escape what is printed to stderr (and to stdout, unless `keep_stdout`) until the end."""
    saved = sys.stdout, sys.stderr
    sys.stderr = cast(TextIO, VisibleText(sys.stderr))
    if not keep_stdout:
        sys.stdout = cast(TextIO, VisibleText(sys.stdout))
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved
