"""What the CLI prints never drives the terminal: control characters become visible escapes.

Descriptor text (names, descriptions, problems quoting values), web cache metadata, config
keys and app output can hold escape sequences: `ESC ] 0 ; … BEL` retitles the window, `ESC [ 2 J`
clears it, OSC 52 writes the clipboard, a carriage return overwrites the line being read (a
consent prompt, say). Everything `aai-gateway` prints passes through `visible`: C0 controls
other than newline and tab, DEL, the C1 controls, the bidirectional marks, overrides and
isolates (which can make a line read backwards), what a reader cannot see (zero-width and tag
characters: `shown_text.escaped_hidden`, the escapes an agent reads too) and lone surrogates
(which cannot be written as UTF-8 at all) are written as `\\u001b`, `\\u009b`, `\\u202e`, `\\ud800`.
Those are visible, and valid escapes inside the JSON that `--json` prints, so that output stays
JSON. `guide` keeps its newlines.

`visible_output` applies it to `sys.stdout` and `sys.stderr` for one command; `serve` keeps its
stdout as it is (the MCP protocol, read by the client, not by a person) and only its stderr logs
are escaped.
"""

from __future__ import annotations

import errno
import io
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Final, TextIO, cast

from ..descriptor.shown_text import escaped_hidden

_LONE_SURROGATES: Final = {code: f"\\u{code:04x}" for code in range(0xD800, 0xE000)}


def visible(text: str) -> str:
    """`text` with every character that could drive a terminal, or that a reader cannot see,
    written as a visible escape: the same escapes an agent reads (`shown_text.escaped_hidden`),
    and lone surrogates, which cannot be written as UTF-8 at all."""
    return escaped_hidden(text).translate(_LONE_SURROGATES)


class UnwritableOutputError(OSError):
    """Standard output or error refused what was written (a full disk, a file too large, an
    I/O error): not the command's fault, and said in one line instead of a traceback. A reader
    gone away (`| head`) is BrokenPipeError, which stays itself: the command stops quietly."""


class VisibleText(io.TextIOBase):
    """A text stream that writes through `visible` to another one."""

    def __init__(self, stream: TextIO | None) -> None:
        super().__init__()
        self.stream = stream  # None: the stream was closed before the command started (`>&-`)

    def write(self, text: str) -> int:
        if self.stream is None:
            raise UnwritableOutputError(errno.EBADF, "it is closed")
        try:
            self.stream.write(visible(text))
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise UnwritableOutputError(exc.errno, exc.strerror) from exc
        return len(text)

    def flush(self) -> None:
        if self.stream is None:
            return
        try:
            self.stream.flush()
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise UnwritableOutputError(exc.errno, exc.strerror) from exc

    def fileno(self) -> int:
        if self.stream is None:
            raise UnwritableOutputError(errno.EBADF, "it is closed")
        return self.stream.fileno()

    def isatty(self) -> bool:
        return self.stream is not None and self.stream.isatty()

    def writable(self) -> bool:
        return True

    @property
    def encoding(self) -> str:  # type: ignore[override]  # TextIOBase declares it read-only
        return self.stream.encoding if self.stream is not None else "utf-8"


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
