"""Text as agents and people are shown it: without what a reader cannot see.

A description may hide text from the person who reads it: terminal escape sequences, bidirectional
overrides that make a line read backwards, Unicode tag characters that spell invisible
instructions to a model, zero-width characters. Such text reaches a person reviewing a guide or a
consent question unseen, and a model as it is. Every text of the canonical descriptor passes
`shown_text` (descriptor/model.py), whoever wrote it: a file, a web site, an MCP server; what an
MCP server sends is cut to size too (`visible_text`, descriptor/mcp_tools.py), and a file's
checks warn of what is removed (`check_shown_text`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Final

from ..errors import Problem, json_pointer

# C0 and C1 controls but tab and newline; the bidirectional marks, embeddings, overrides and
# isolates; the Unicode tag characters; lone surrogates (which have no UTF-8 form at all); and
# the characters that show nothing and join or separate nothing a script needs: the soft hyphen,
# the zero-width space, the word joiner, the invisible operators, the deprecated format
# characters, the byte-order mark and the interlinear annotation marks. (The zero-width joiner
# and non-joiner stay: emoji sequences and Indic and Persian text need them.)
_HIDDEN: Final = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\xad\u061c\u180e\u200b\u200e\u200f\u202a-\u202e\u2060-\u2064"
    "\u2066-\u206f\ufeff\ufff9-\ufffb\U000e0000-\U000e007f\ud800-\udfff]"
)

# A terminal's escape sequences, whole: a control sequence (`ESC [31m`, `ESC [2J`), an operating
# system command up to its end (`ESC ]0;title BEL`), any other escape (`ESC (B`). Removing only the
# ESC would leave `[31m` in the text.
_ESCAPE_SEQUENCE: Final = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"
    r"|(?:\x1b\]|\x9d)[^\x07\x1b\x9c]{0,1024}(?:\x07|\x1b\\|\x9c)?"
    r"|\x1b[ -/]*[0-~]"
)


def without_escape_sequences(text: str) -> str:
    """`text` without a terminal's escape sequences (`_ESCAPE_SEQUENCE`), each removed whole."""
    return _ESCAPE_SEQUENCE.sub("", text)


def visible_text(text: str, *, max_chars: int, one_line: bool = False) -> tuple[str, list[str]]:
    """`text` without what a reader cannot see (`_ESCAPE_SEQUENCE`, `_HIDDEN`; CR LF becomes LF,
    and with `one_line` every line break a space), cut to `max_chars` with `…`; and what was
    changed, in words."""
    changes: list[str] = []
    cleaned = text.replace("\r\n", "\n")
    cleaned, sequences = _ESCAPE_SEQUENCE.subn("", cleaned)
    if sequences:
        changes.append(f"{sequences} terminal escape sequence{'s' if sequences > 1 else ''} removed")
    cleaned, removed = _HIDDEN.subn("", cleaned)
    if removed:
        changes.append(f"{removed} invisible or control character{'s' if removed > 1 else ''} removed")
    if one_line:
        cleaned = " ".join(cleaned.split())
    if len(cleaned) > max_chars:
        changes.append(f"cut to {max_chars} of its {len(cleaned)} characters")
        cleaned = cleaned[: max_chars - 1].rstrip() + "…"
    return cleaned, changes


def shown_text(text: str, *, one_line: bool = False) -> str:
    """`text` as agents and people are shown it: without what a reader cannot see (see
    `visible_text`), and with `one_line` on one line. The canonical descriptor's texts pass
    here, whatever wrote them (a file, a web site, an MCP server): most have nothing to clean,
    which one check in C tells (a line break, a control or a format character is not printable)."""
    if text.isprintable():
        return text
    return visible_text(text, max_chars=len(text) + 1, one_line=one_line)[0]


def check_shown_text(
    text: str | None, pointer: str, what: str, *, one_line: bool = False
) -> Iterator[Problem]:
    """A warning for each kind of thing `shown_text` changes in `text` (at `pointer`, the
    descriptor's `what`): agents read it without them."""
    if text is None or text.isprintable():
        return
    for change in visible_text(text, max_chars=len(text) + 1)[1]:
        yield Problem(pointer, f"{what}: {change} where agents read it", "warning")
    if one_line and any(mark in text for mark in "\n\r\t"):
        yield Problem(pointer, f"{what}: shown on one line (its line breaks and tabs as spaces)", "warning")


def check_app_texts(
    app: str, names: str | Mapping[str, str], description: str, aliases: Sequence[str]
) -> Iterator[Problem]:
    """`check_shown_text` for an app's names (one pipe-separated string, or one per language),
    description and aliases, all shown on one line; `app` is the pointer of the object that
    holds them ("" for the document)."""
    if isinstance(names, str):
        yield from check_shown_text(names, f"{app}/name", "name", one_line=True)
    else:
        for tag, name in names.items():
            yield from check_shown_text(name, f"{app}/name/{json_pointer(tag)[1:]}", "name", one_line=True)
    yield from check_shown_text(description, f"{app}/description", "description", one_line=True)
    for index, alias in enumerate(aliases):
        yield from check_shown_text(alias, f"{app}/aliases/{index}", "alias", one_line=True)
