"""Where an AppleScript template's code, string literals and comments are, for filling it.

One scanner, used twice: by the load-time check of dialect-B `applescript` tools
(`dialect_b_checks`) and by the renderer that fills templates (`executors/apple_script.py`). So a
template the check passes is read by the renderer exactly as the check read it.

A value is only safe if the scanner and AppleScript agree on every boundary before it: where a
string, a comment, a `|…|` identifier or a `«…»` raw code starts and ends. Where Apple's
AppleScript Language Guide ("Lexical Conventions") is silent, the template is refused rather
than guessed at (`AmbiguousTemplateError`, with the character it is at and what to write instead):

- Block comments `(* … *)` nest, as the Guide says; how text *inside* one is read, it does not
  say. Neuburg (*AppleScript: The Definitive Guide*, "Comments") treats quotation marks and `--`
  inside them as cases of their own. If a string literal inside `(* … *)` can hide a `*)`, then
  `(* say "*)" *) set x to "Hi ${v}"` is one comment and then code to AppleScript, but a comment,
  a string and a bare `${v}` to a scanner that ends the comment at the first `*)`. So a block
  comment holding a double quote (straight or curly), `--`, `#`, `|`, `«` or `»` is refused.
- `|…|` identifiers: the Guide says one "can contain additional vertical bars preceded by a
  backslash (\\) character, as in the identifier |This\\|Or\\|That|", and a backslash is written
  `\\\\`. Both are honoured; any other backslash inside bars is refused.
- `«…»` raw codes (`«class pnam»`, `«event aevtodoc»`, `«data utxt0041»`) hold four-character
  codes and hex; one holding a quote, `|`, `\\`, `«`, a comment opener or a line break is refused.
- Curly double quotes `“ ”`: AppleScript may take them for string delimiters, and the Guide does
  not say how they pair with straight ones, so they are refused outside comments and `|…|`.
- Line comments (`--`, `#`) end at a line feed or a carriage return. Other line breaks (VT, FF,
  NEL, U+2028, U+2029) are refused outside string literals, and so is the continuation character
  `¬` inside a line comment: whether either ends or extends a comment is not documented.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final, Literal

from .checks import PLACEHOLDER_NAME_PATTERN

CODE_PLACEHOLDER: Final = re.compile(r"\$\{(" + PLACEHOLDER_NAME_PATTERN + r")\}")
_IN_DOUBT: Final = re.compile(r'"|“|”|--|#|\||«|»')
_WHAT: Final = {  # what the message calls each construct: with its article, and short
    '"': ('a double quote (")', "the double quote"),
    "“": ("a curly double quote (“)", "the curly quote"),
    "”": ("a curly double quote (”)", "the curly quote"),
    "--": ("a '--' comment", "the '--'"),
    "#": ("a '#' comment", "the '#'"),
    "|": ("a '|'", "the '|'"),
    "«": ("a '«'", "the '«'"),
    "»": ("a '»'", "the '»'"),
}
_LINE_ENDS: Final = "\n\r"
_OTHER_LINE_BREAKS: Final = {
    "\x0b": "VT",
    "\x0c": "FF",
    "\x85": "NEL",
    "\u2028": "U+2028",
    "\u2029": "U+2029",
}
_CURLY_QUOTES: Final = "“”"
_NOT_IN_RAW_CODES: Final = re.compile(r'["“”|\\«\n\r\x0b\x0c\x85\u2028\u2029¬#]|--|\(\*|\*\)')


@dataclass(frozen=True, slots=True)
class Piece:
    """`text`: copied as written (code, comments, `|…|`, `«…»`, unclosed literals); `string`: the
    body of a closed `"…"` literal, without its quotes; `placeholder`: a `${name}` in code."""

    kind: Literal["text", "string", "placeholder"]
    text: str


class AmbiguousTemplateError(ValueError):
    """A template in which AppleScript's documentation leaves in doubt where a string, comment,
    identifier or raw code ends, so which placeholders are code (module docstring)."""

    def __init__(self, offset: int, message: str) -> None:
        self.offset = offset
        super().__init__(message)


class AmbiguousCommentError(AmbiguousTemplateError):
    """A block comment whose end AppleScript's documentation leaves in doubt."""

    def __init__(self, offset: int, construct: str) -> None:
        self.construct = construct
        what, short = _WHAT[construct]
        super().__init__(
            offset,
            f"the block comment (* … *) at character {offset + 1} holds {what}; AppleScript's "
            "documentation does not say whether such text inside a block comment can hide its "
            "'*)', so where the comment ends, and so which placeholders are code, is in doubt. "
            f"Write the comment as '--' lines instead, or take {short} out of it",
        )


def string_end(template: str, start: int, quote: str) -> int:
    """Index just past the string literal opening at `start` (or the end of an unclosed one)."""
    i = start + 1
    while i < len(template):
        if template[i] == "\\":
            i += 2
        elif template[i] == quote:
            return i + 1
        else:
            i += 1
    return len(template)


def block_comment_end(template: str, start: int) -> int:
    """Index just past the `(* … *)` opening at `start`, nested comments included (the end of the
    template when it is never closed); AmbiguousCommentError when its end is in doubt."""
    depth, i, n = 0, start, len(template)
    while i < n:
        if template.startswith("(*", i):
            depth, i = depth + 1, i + 2
        elif template.startswith("*)", i):
            depth, i = depth - 1, i + 2
            if depth == 0:
                break
        else:
            i += 1
    inner_end = i - 2 if depth == 0 else n
    doubt = _IN_DOUBT.search(template, start + 2, max(start + 2, inner_end))
    if doubt is not None:
        raise AmbiguousCommentError(start, doubt.group())
    return i


def applescript_pieces(template: str, placeholder: re.Pattern[str] = CODE_PLACEHOLDER) -> list[Piece]:
    """The template cut into pieces (see `Piece`); AmbiguousTemplateError for text whose reading is
    in doubt (see the module docstring)."""
    pieces: list[Piece] = []
    text: list[str] = []

    def flush() -> None:
        if text:
            pieces.append(Piece("text", "".join(text)))
            text.clear()

    i, n = 0, len(template)
    while i < n:
        char = template[i]
        if char == '"':
            end = string_end(template, i, '"')
            _refuse_curly_quotes(template, i, end, "in the string literal")
            if end - 1 > i and template[end - 1] == '"':
                flush()
                pieces.append(Piece("string", template[i + 1 : end - 1]))
            else:  # an unclosed literal: the script is broken anyway, and nothing is spliced in
                text.append(template[i:end])
            i = end
        elif template.startswith("--", i) or char == "#":
            end = line_comment_end(template, i)
            text.append(template[i:end])
            i = end
        elif template.startswith("(*", i):
            end = block_comment_end(template, i)
            text.append(template[i:end])
            i = end
        elif char == "|":
            end = identifier_end(template, i)
            text.append(template[i:end])
            i = end
        elif char == "«":
            end = raw_code_end(template, i)
            text.append(template[i:end])
            i = end
        elif (match := placeholder.match(template, i)) is not None:
            flush()
            pieces.append(Piece("placeholder", match.group(1)))
            i = match.end()
        else:
            _refuse_curly_quotes(template, i, i + 1, "in code")
            _refuse_other_line_breaks(template, i, i + 1, "in code")
            text.append(char)
            i += 1
    flush()
    return pieces


def line_comment_end(template: str, start: int) -> int:
    """Index of the line end (LF or CR) that closes the `--` or `#` comment at `start`."""
    end = next((j for j in range(start, len(template)) if template[j] in _LINE_ENDS), len(template))
    _refuse_other_line_breaks(template, start, end, "in the comment")
    continuation = template.find("¬", start, end)
    if continuation >= 0:
        raise AmbiguousTemplateError(
            continuation,
            f"the comment at character {start + 1} holds '¬' (character {continuation + 1}), "
            "AppleScript's continuation character; its documentation does not say whether it "
            "carries a comment onto the next line, so which placeholders are code is in doubt. "
            "Take the '¬' out of the comment",
        )
    return end


def identifier_end(template: str, start: int) -> int:
    """Index just past the `|…|` identifier opening at `start`, `\\|` and `\\\\` inside it
    honoured (the end of the template when it is never closed)."""
    i, n = start + 1, len(template)
    while i < n:
        if template[i] == "|":
            return i + 1
        if template[i] == "\\":
            if template[i + 1 : i + 2] not in ("|", "\\"):
                after = repr(template[i + 1]) if i + 1 < n else "the end of the template"
                raise AmbiguousTemplateError(
                    i,
                    f"the identifier |…| at character {start + 1} holds a backslash before {after} "
                    f"(character {i + 1}); AppleScript's documentation only defines '\\|' and '\\\\' "
                    "inside vertical bars, so where the identifier ends, and so which placeholders "
                    "are code, is in doubt. Write '\\|' or '\\\\', or leave the backslash out",
                )
            i += 2
        else:
            i += 1
    return n


def raw_code_end(template: str, start: int) -> int:
    """Index just past the `«…»` raw code opening at `start` (the end of the template when it is
    never closed); AmbiguousTemplateError when it holds text whose reading is in doubt."""
    close = template.find("»", start + 1)
    end = len(template) if close < 0 else close
    doubt = _NOT_IN_RAW_CODES.search(template, start + 1, end)
    if doubt is not None:
        raise AmbiguousTemplateError(
            doubt.start(),
            f"the raw code «…» at character {start + 1} holds {doubt.group()!r} (character "
            f"{doubt.start() + 1}); raw codes hold four-character codes and hex, and AppleScript's "
            "documentation does not say how such text inside one is read, so which placeholders "
            "are code is in doubt. Take it out of the «…»",
        )
    return end if close < 0 else close + 1


def _refuse_curly_quotes(template: str, start: int, end: int, where: str) -> None:
    found = next((j for j in range(start, end) if template[j] in _CURLY_QUOTES), None)
    if found is not None:
        raise AmbiguousTemplateError(
            found,
            f"a curly double quote ({template[found]}) {where} at character {found + 1}: AppleScript "
            "may read it as a string delimiter, and its documentation does not say how curly and "
            "straight quotes pair, so which text is a string, and which placeholders are code, is "
            'in doubt. Write strings with straight quotes (") and the character itself as '
            f"(character id {ord(template[found])})",
        )


def _refuse_other_line_breaks(template: str, start: int, end: int, where: str) -> None:
    found = next((j for j in range(start, end) if template[j] in _OTHER_LINE_BREAKS), None)
    if found is not None:
        raise AmbiguousTemplateError(
            found,
            f"a line break other than LF or CR ({_OTHER_LINE_BREAKS[template[found]]}) {where} at "
            f"character {found + 1}: AppleScript's documentation does not say whether it ends a "
            "comment, so which placeholders are code is in doubt. Use a line feed",
        )
