"""Where an AppleScript template's code, string literals and comments are, for filling it.

One scanner, used twice: by the load-time check of dialect-B `applescript` tools
(`dialect_b_checks`) and by the renderer that fills templates (`executors/apple_script.py`). So a
template the check passes is read by the renderer exactly as the check read it.

Block comments. Apple's AppleScript Language Guide says a block comment runs from `(*` to `*)`
and that block comments nest; it does not say how the text inside one is read. Neuburg
(*AppleScript: The Definitive Guide*, "Comments") calls the comment delimiters "intelligent" and
treats quotation marks and `--` inside them as cases of their own. If a string literal inside
`(* … *)` can hide a `*)`, then `(* say "*)" *) set x to "Hi ${v}"` is one comment and then code to
AppleScript, but a comment, a string and a bare `${v}` to a scanner that ends the comment at the
first `*)`: the value filled in there would run as code. Since the documentation leaves it open,
every block comment holding text whose reading is in doubt is refused: a double quote, `--`,
`#`, `|`, `«` or `»`. Plain text, and nested `(* … *)`, are fine.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final, Literal

from .checks import PLACEHOLDER_NAME_PATTERN

CODE_PLACEHOLDER: Final = re.compile(r"\$\{(" + PLACEHOLDER_NAME_PATTERN + r")\}")
_IN_DOUBT: Final = re.compile(r'"|--|#|\||«|»')
_WHAT: Final = {  # what the message calls each construct: with its article, and short
    '"': ('a double quote (")', "the double quote"),
    "--": ("a '--' comment", "the '--'"),
    "#": ("a '#' comment", "the '#'"),
    "|": ("a '|'", "the '|'"),
    "«": ("a '«'", "the '«'"),
    "»": ("a '»'", "the '»'"),
}


@dataclass(frozen=True, slots=True)
class Piece:
    """`text`: copied as written (code, comments, `|…|`, `«…»`, unclosed literals); `string`: the
    body of a closed `"…"` literal, without its quotes; `placeholder`: a `${name}` in code."""

    kind: Literal["text", "string", "placeholder"]
    text: str


class AmbiguousCommentError(ValueError):
    """A block comment whose end AppleScript's documentation leaves in doubt (module docstring)."""

    def __init__(self, offset: int, construct: str) -> None:
        self.offset = offset
        self.construct = construct
        what, short = _WHAT[construct]
        super().__init__(
            f"the block comment (* … *) at character {offset + 1} holds {what}; AppleScript's "
            "documentation does not say whether such text inside a block comment can hide its "
            "'*)', so where the comment ends, and so which placeholders are code, is in doubt. "
            f"Write the comment as '--' lines instead, or take {short} out of it"
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
    """The template cut into pieces (see `Piece`); AmbiguousCommentError for a comment in doubt."""
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
            if end - 1 > i and template[end - 1] == '"':
                flush()
                pieces.append(Piece("string", template[i + 1 : end - 1]))
            else:  # an unclosed literal: the script is broken anyway, and nothing is spliced in
                text.append(template[i:end])
            i = end
        elif template.startswith("--", i) or char == "#":
            end = template.find("\n", i)
            end = n if end < 0 else end
            text.append(template[i:end])
            i = end
        elif template.startswith("(*", i):
            end = block_comment_end(template, i)
            text.append(template[i:end])
            i = end
        elif char in "«|":
            end = template.find("»" if char == "«" else "|", i + 1)
            end = n if end < 0 else end + 1
            text.append(template[i:end])
            i = end
        elif (match := placeholder.match(template, i)) is not None:
            flush()
            pieces.append(Piece("placeholder", match.group(1)))
            i = match.end()
        else:
            text.append(char)
            i += 1
    flush()
    return pieces
