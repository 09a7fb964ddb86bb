"""Plain-text tables that line up with CJK names and fit the terminal.

The width a table must fit (`terminal_width`) is COLUMNS when it holds a whole number above
zero, else the width of the terminal standard output is. Every line of a table then fits it:
the widest columns that may be cut (those not in `keep`: descriptions, paths, reasons) shrink,
their cells cut with `…` (a path loses its start and keeps its file's name, other text keeps
its start), never below `MIN_CUT` columns or their header. A table whose columns do not fit
even so is printed as one `HEADER: value` block per row (`_vertical`), where no value in `keep`
is ever cut either.

Output that goes to no terminal, with COLUMNS unset (a pipe, a file), keeps the layout it always
had (`_piped`): sized for `PIPE_WIDTH` columns, with the last column always whole, so scripts
that read it see what they always saw.
"""

from __future__ import annotations

import os
import re
import sys
import unicodedata
from collections.abc import Collection, Sequence
from typing import Final

from .terminal import visible

ELLIPSIS = "…"
PIPE_WIDTH: Final = 120  # what shutil.get_terminal_size answered when no terminal was attached
GAP: Final = 2  # spaces between columns
MIN_CUT: Final = 10  # a cut column keeps at least this many (or its header's width, if wider)
_PATH: Final = re.compile(r"(file:)?(?:/|~[/\\]|[A-Za-z]:[/\\])")


EMOJI_PRESENTATION = "\ufe0f"
"""Variation selector 16: takes no column itself, but makes the symbol before it an emoji two
columns wide (`❤️`); counting it as one column gives that width."""


def display_width(text: str) -> int:
    width = 0
    for char in text:
        if _takes_no_column(char):
            continue
        width += 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1
    return width


def _takes_no_column(char: str) -> bool:
    """Marks drawn on the character before them, whatever their combining class (Thai vowels
    and tone marks, Devanagari's anusvara have class 0), format characters such as the zero
    width joiner, and the Hangul vowels and finals that join the syllable before them."""
    if unicodedata.combining(char) or 0x1160 <= ord(char) <= 0x11FF:
        return True
    return unicodedata.category(char) in ("Mn", "Me", "Cf") and char != EMOJI_PRESENTATION


def truncate(text: str, width: int) -> str:
    if display_width(text) <= width:
        return text
    out: list[str] = []
    used = 0
    for char in text:
        char_width = display_width(char)
        if used + char_width > width - 1:
            break
        out.append(char)
        used += char_width
    return "".join(out) + ELLIPSIS


def cut(text: str, width: int) -> str:
    """`text` in at most `width` columns (at least 1): a path (`/…`, `~/…`, `C:\\…`, a `file:`
    binding) keeps its end, where the file's own name is, after `…`; other text keeps its start."""
    found = _PATH.match(text)
    if found is None or display_width(text) <= width:
        return truncate(text, max(width, 1))
    prefix = found.group(1) or ""
    room = width - display_width(prefix) - 1
    if room < 1:
        return truncate(text, max(width, 1))
    tail: list[str] = []
    used = 0
    for char in reversed(text):
        used += display_width(char)
        if used > room:
            break
        tail.append(char)
    while tail and (_takes_no_column(tail[-1]) or tail[-1] == EMOJI_PRESENTATION):
        tail.pop()  # marks whose letter was cut off, and an emoji selector without its symbol
    return prefix + ELLIPSIS + "".join(reversed(tail))


def pad(text: str, width: int) -> str:
    return text + " " * max(0, width - display_width(text))


def terminal_width() -> int | None:
    """The width tables must fit: COLUMNS when it is a whole number above zero (as
    `shutil.get_terminal_size` reads it), else the width of the terminal standard output is;
    None when there is neither: output piped or written to a file."""
    try:
        columns = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        columns = 0
    if columns > 0:
        return columns
    try:
        if sys.stdout.isatty():
            columns = os.get_terminal_size(sys.stdout.fileno()).columns
    except (OSError, ValueError, AttributeError):  # closed, captured, no file behind it
        return None
    return columns if columns > 0 else None


def render_table(
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    *,
    total_width: int | None = None,
    keep: Collection[int] = (),
) -> str:
    """Columns sized to their content, fitting `total_width` (by default `terminal_width()`).

    The columns in `keep` (an id people type, a cell whose text is its meaning) are never cut;
    the others shrink, widest first, their cells cut with `…`. A table that marks none keeps all
    but its last column whole: those tables (`auth status`, `consent list`, `cache list`'s web
    descriptors, `diff`) hold ids, tool names, dates and states before a last column of paths,
    URLs or details. Control characters in cells are shown as escapes (`terminal.visible`), and
    a cell's lines joined into one, before anything is measured. With no width to fit
    (`terminal_width()` None), the layout of a pipe (`_piped`)."""
    cells = [[" ".join(visible(str(c)).split()) for c in row] for row in rows]
    shown = [visible(h) for h in headers]
    limit = total_width if total_width is not None else terminal_width()
    if limit is None:
        return _piped(shown, cells, keep)
    kept = set(keep) if keep else set(range(len(shown) - 1))
    widths = _natural_widths(shown, cells)
    floors = [
        w if i in kept else min(w, max(display_width(h), MIN_CUT))
        for i, (h, w) in enumerate(zip(shown, widths, strict=True))
    ]
    if sum(floors) + GAP * (len(widths) - 1) > limit:
        return _vertical(shown, cells, kept, limit)
    excess = sum(widths) + GAP * (len(widths) - 1) - limit
    while excess > 0:  # the widest column that can still shrink gives up one column
        widest = max((i for i in range(len(widths)) if widths[i] > floors[i]), key=lambda i: widths[i])
        widths[widest] -= 1
        excess -= 1
    lines = [_line(shown, widths), (" " * GAP).join("-" * w for w in widths)]
    lines += [_line([cut(c, w) for c, w in zip(row, widths, strict=True)], widths) for row in cells]
    return "\n".join(lines)


def _natural_widths(headers: Sequence[str], cells: Sequence[Sequence[str]]) -> list[int]:
    return [max([display_width(h), *(display_width(r[i]) for r in cells)]) for i, h in enumerate(headers)]


def _line(cells: Sequence[str], widths: Sequence[int]) -> str:
    return (" " * GAP).join(pad(c, w) for c, w in zip(cells, widths, strict=True)).rstrip()


def _vertical(
    headers: Sequence[str], cells: Sequence[Sequence[str]], keep: Collection[int], limit: int
) -> str:
    """One block of `HEADER: value` lines per row, the values lined up, a blank line between
    rows. A value too wide for the room beside its label goes on the next line: whole if it is
    in `keep` (wider than the terminal, it is the only line that wraps), else cut to fit; so does
    its label, cut to the terminal's width if even that is narrower."""
    label = max(display_width(h) for h in headers) + 2
    blocks = []
    for row in cells:
        lines: list[str] = []
        for i, (header, cell) in enumerate(zip(headers, row, strict=True)):
            if display_width(cell) <= limit - label or (i not in keep and limit - label >= MIN_CUT):
                lines.append((pad(f"{header}:", label) + cut(cell, limit - label)).rstrip())
            else:  # a header wider than the terminal is cut too; an empty value adds no line
                lines.append(cut(f"{header}:", limit))
                if cell:
                    lines.append(cell if i in keep else cut(cell, limit))
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def _piped(headers: Sequence[str], cells: Sequence[Sequence[str]], keep: Collection[int]) -> str:
    """The layout for no terminal, unchanged since tables first fitted one: sized for
    `PIPE_WIDTH` columns, the columns before the last (and not in `keep`) shrinking to leave
    the last 20, never below 12 or their header; the last column is never cut, and its rule
    ends at column `PIPE_WIDTH`."""
    widths = _natural_widths(headers, cells)
    cuttable = [i for i in range(len(widths) - 1) if i not in keep]
    while cuttable and sum(widths[:-1]) + GAP * (len(widths) - 1) + 20 > PIPE_WIDTH:
        widest = max(cuttable, key=lambda i: widths[i])
        if widths[widest] <= max(12, display_width(headers[widest])):
            break
        widths[widest] -= 1
    lines = [_line(headers, widths)]
    room = PIPE_WIDTH - sum(widths[:-1]) - GAP * (len(widths) - 1)
    rules = [*widths[:-1], min(widths[-1], max(room, display_width(headers[-1])))]
    lines.append((" " * GAP).join("-" * w for w in rules))
    for row in cells:
        shown = [pad(truncate(c, w), w) for c, w in zip(row[:-1], widths[:-1], strict=True)] + [*row[-1:]]
        lines.append((" " * GAP).join(shown).rstrip())
    return "\n".join(lines)
