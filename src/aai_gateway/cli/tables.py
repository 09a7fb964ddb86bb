"""Plain-text tables that line up with CJK names and fit the terminal."""

from __future__ import annotations

import shutil
import unicodedata
from collections.abc import Collection, Sequence

from .terminal import visible

ELLIPSIS = "…"


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


def pad(text: str, width: int) -> str:
    return text + " " * max(0, width - display_width(text))


def render_table(
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    *,
    total_width: int | None = None,
    keep: Collection[int] = (),
) -> str:
    """Columns sized to their content; the widest columns shrink (with …) to fit `total_width`.

    The last column is never cut: it usually holds a path or a sentence, and a terminal wraps
    an over-long last column without misaligning the others. Nor are the columns in `keep`
    (an id people type, a cell whose text is its meaning). Control characters in cells are
    shown as escapes (`terminal.visible`) before anything is measured.
    """
    cells = [[" ".join(visible(str(c)).split()) for c in row] for row in rows]
    headers = [visible(h) for h in headers]
    widths = [max([display_width(h), *(display_width(r[i]) for r in cells)]) for i, h in enumerate(headers)]
    limit = total_width if total_width is not None else shutil.get_terminal_size((120, 24)).columns
    gap = 2
    cuttable = [i for i in range(len(widths) - 1) if i not in keep]
    while cuttable and sum(widths[:-1]) + gap * (len(widths) - 1) + 20 > limit:
        widest = max(cuttable, key=lambda i: widths[i])
        if widths[widest] <= max(12, display_width(headers[widest])):
            break
        widths[widest] -= 1
    lines = [(" " * gap).join(pad(h, w) for h, w in zip(headers, widths, strict=True)).rstrip()]
    # the last column's rule ends at the terminal's edge: a long cell wraps, its rule would too
    room = limit - sum(widths[:-1]) - gap * (len(widths) - 1)
    rules = [*widths[:-1], min(widths[-1], max(room, display_width(headers[-1])))]
    lines.append((" " * gap).join("-" * w for w in rules))
    for row in cells:
        shown = [pad(truncate(c, w), w) for c, w in zip(row[:-1], widths[:-1], strict=True)] + row[-1:]
        lines.append((" " * gap).join(shown).rstrip())
    return "\n".join(lines)
