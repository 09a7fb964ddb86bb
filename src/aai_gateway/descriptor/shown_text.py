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
from typing import Annotated, Final

from pydantic import AfterValidator

from ..errors import Problem, json_pointer

# C0 and C1 controls but tab and newline; the bidirectional marks, embeddings, overrides and
# isolates; the Unicode tag characters and the variation selectors beyond U+E0100 (both spell
# invisible bytes); lone surrogates (which have no UTF-8 form at all); and the characters that
# show nothing and join or separate nothing a script needs: the soft hyphen, the combining
# grapheme joiner, the Hangul and Khmer fillers, the Mongolian selectors and separator, the
# zero-width space, the word joiner, the invisible operators, the deprecated format characters,
# the byte-order mark, the interlinear annotation marks, the shorthand format controls and the
# musical formatting characters. (The zero-width joiner and non-joiner stay: emoji sequences and
# Indic and Persian text need them; and so do U+FE00-U+FE0F, emoji presentation.)
_INVISIBLE_PRINTABLE = (  # what `str.isprintable` counts as printable
    "\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180d\u180f\u3164\uffa0\U000e0100-\U000e01ef"
)
_HIDDEN: Final = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\xad\u061c\u180e\u200b\u200e\u200f\u202a-\u202e\u2060-\u2064"
    "\u2066-\u206f\ufeff\ufff9-\ufffb\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0000-\U000e0fff\ud800-\udfff" + _INVISIBLE_PRINTABLE + "]"
)
_HIDDEN_PRINTABLE: Final = re.compile(f"[{_INVISIBLE_PRINTABLE}]")
# The three flags Unicode spells with tag characters (England, Scotland, Wales: the black flag,
# `gbeng`, `gbsct` or `gbwls` in tag letters, the cancel tag) keep theirs: each spells one of
# three fixed words, so no other text can hide in them.
_SUBDIVISION_FLAG: Final = (
    "\U0001f3f4\U000e0067\U000e0062"
    "(?:\U000e0065\U000e006e\U000e0067|\U000e0073\U000e0063\U000e0074|\U000e0077\U000e006c\U000e0073)"
    "\U000e007f"
)
_FLAG_OR_HIDDEN: Final = re.compile(f"({_SUBDIVISION_FLAG})|{_HIDDEN.pattern}")
_LINE_SEPARATORS: Final = re.compile("\r\n|[\r\u2028\u2029]")

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
    cleaned = _LINE_SEPARATORS.sub("\n", text)
    cleaned, sequences = _ESCAPE_SEQUENCE.subn("", cleaned)
    if sequences:
        changes.append(f"{sequences} terminal escape sequence{'s' if sequences > 1 else ''} removed")
    cleaned, removed = _without_hidden(cleaned)
    if removed:
        changes.append(f"{removed} invisible or control character{'s' if removed > 1 else ''} removed")
    if one_line:
        cleaned = " ".join(cleaned.split())
    if len(cleaned) > max_chars:
        changes.append(f"cut to {max_chars} of its {len(cleaned)} characters")
        # The cut may split a flag: its tag characters go then, as any outside a whole flag.
        cleaned = _without_hidden(cleaned[: max_chars - 1])[0].rstrip() + "…"
    return cleaned, changes


def _without_hidden(text: str) -> tuple[str, int]:
    """`text` without `_HIDDEN`'s characters but those of a subdivision flag, and how many went."""
    if "\U0001f3f4" not in text:  # no black flag, no flag to keep: one pass in C
        return _HIDDEN.subn("", text)
    removed = 0

    def flag_or_nothing(found: re.Match[str]) -> str:
        nonlocal removed
        if found.group(1) is not None:
            return found.group(1)
        removed += 1
        return ""

    return _FLAG_OR_HIDDEN.sub(flag_or_nothing, text), removed


def shown_text(text: str, *, one_line: bool = False) -> str:
    """`text` as agents and people are shown it: without what a reader cannot see (see
    `visible_text`), and with `one_line` on one line. The canonical descriptor's texts pass
    here, whatever wrote them (a file, a web site, an MCP server): most have nothing to clean,
    which one check in C tells (a line break, a control or a format character is not printable),
    and for text that is not ASCII a search for the few invisible characters it lets through."""
    if _plain(text):
        return text
    return visible_text(text, max_chars=len(text) + 1, one_line=one_line)[0]


def escaped_hidden(text: str) -> str:
    """`text` with each character a reader cannot see (and each line separator other than a
    newline) written as a JSON escape (`\\u202e`; a pair of them beyond U+FFFF): what the gateway
    writes for agents passes here last, so that a value it shows as it is (an enum value, a
    property name, an error quoting an argument) hides nothing. Lossless in JSON text."""
    if _plain(text):
        return text
    return _ESCAPED.sub(_json_escape, text)


def _plain(text: str) -> bool:
    """No character a reader cannot see, no line break, no control: one check in C for most."""
    return text.isprintable() and (text.isascii() or not _HIDDEN_PRINTABLE.search(text))


# Lone surrogates are left to the writer (`answer_json.writable_text` spells them in letters: a
# JSON escape of one would read back as the same unwritable character).
_ESCAPED: Final = re.compile(
    f"({_SUBDIVISION_FLAG})|" + _HIDDEN.pattern[:-1].replace("\ud800-\udfff", "") + "\r\u2028\u2029]"
)


def _json_escape(found: re.Match[str]) -> str:
    if found.group(1) is not None:
        return found.group(1)
    code = ord(found.group())
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def check_shown_text(
    text: str | None, pointer: str, what: str, *, one_line: bool = False, required: bool = False
) -> Iterator[Problem]:
    """A warning for each kind of thing `shown_text` changes in `text` (at `pointer`, the
    descriptor's `what`): agents read it without them. An error when `required` text holds
    nothing else (a name made of invisible characters names nothing)."""
    if text is None or _plain(text):
        return
    if required and text.strip() and not shown_text(text, one_line=True).strip():
        yield Problem(pointer, f"{what} holds only characters a reader cannot see; write it in letters")
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
        yield from check_shown_text(names, f"{app}/name", "name", one_line=True, required=True)
    else:
        for tag, name in names.items():
            pointer = f"{app}/name/{json_pointer(tag)[1:]}"
            yield from check_shown_text(name, pointer, "name", one_line=True, required=True)
    yield from check_shown_text(description, f"{app}/description", "description", one_line=True)
    for index, alias in enumerate(aliases):
        yield from check_shown_text(alias, f"{app}/aliases/{index}", "alias", one_line=True)


ShownText = Annotated[str, AfterValidator(shown_text)]
"""Text agents read (an operation's description): without what a reader cannot see, which a
person reviewing a guide or a consent question would miss and a model would read."""


def one_line_text(text: str) -> str:
    """`shown_text` on one line."""
    return shown_text(text, one_line=True)


OneLine = Annotated[str, AfterValidator(one_line_text)]
"""`ShownText` on one line: what is shown as one (a name, a title, the app's description in
tools/list and in its guide's App Info, an auth instruction: a line break could start a heading
of its own)."""
