"""Filling macOS script templates (`applescript`, `jxa`) and reading what `osascript` prints.

Pure functions, no I/O. Parameter values are data, never code.

AppleScript: every value becomes a literal built here (its string syntax is simple: `"…"` with
backslash escapes, and nothing else can hold a quote). JavaScript's cannot be told apart from
its code without parsing it (is `/` after `)` a division or a regex?), so JXA values never enter
the template's text at all: the script starts with one line holding every value,
`var __aai = JSON.parse("…");` (an ASCII-only JSON string literal at a place whose context is
known: the start), and each placeholder becomes a fixed reference, `__aai.v["name"]` (the JSON
value) or `__aai.t["name"]` (its text). Whatever the template's syntax, a placeholder adds only
those characters. (`JSON.parse` rather than an object literal: a key `__proto__` stays a key.)

Where a `${name}` placeholder stands decides what it becomes (docs/macos.md):

- inside one of the template's own string literals (`"…${x}…"`, JXA also `'…'`): the literal is
  split into a concatenation, `("prefix" & <literal> & "suffix")` (JXA `+` and `__aai.t[…]`),
  with the value's text (strings as they are, anything else as compact JSON); `"${x}"` alone
  becomes `<literal>`;
- bare, in code: the value with its own type (AppleScript numbers, `true`/`false`,
  `missing value`, lists `{…}`, records `{|key|:…}`; JXA `(__aai.v[…])`);
- inside a JXA template literal (`` `…${x}…` ``): `${__aai.t[…]}` when `x` is a parameter;
  other `${…}` are JavaScript's own and left alone;
- inside a comment: left as it is.

A placeholder naming something that is not a parameter of the tool is an error; an optional
parameter the caller left out is the empty string inside quotes and `missing value` (JXA
`null`) in code. Substitution is one pass: text from a value is never searched again.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Collection, Mapping
from typing import Any, Final

from ..descriptor.applescript_syntax import AmbiguousTemplateError, applescript_pieces, string_end
from .templates import MISSING, NAME_PATTERN, lookup, text_of

PLACEHOLDER: Final = re.compile(r"\$\{(" + NAME_PATTERN + r")\}")
_AS_ESCAPES: Final = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_JS_REGEX_BEFORE: Final = set("(,=:[!&|?{};+-*%<>~^") | {""}


class TemplateError(ValueError):
    """A template that cannot be filled (names the placeholder and the tool)."""

    def __init__(self, message: str, name: str | None = None) -> None:
        super().__init__(message)
        self.name = name


class TemplateSyntaxError(TemplateError):
    """The template itself cannot be filled safely, whatever the values: the descriptor's fault."""


# ---------------------------------------------------------------------------- AppleScript values


def _needs_character_id(char: str) -> bool:
    code = ord(char)
    return (code < 0x20 and char not in "\n\r\t") or 0x7F <= code <= 0x9F or code in (0x2028, 0x2029)


def applescript_literal(value: str) -> str:
    """An AppleScript expression whose value is exactly `value`: a string literal with `\\`, `"`,
    newline, return and tab escaped; other control characters (and U+2028/9) are joined in as
    `(character id N)` so the script text holds no raw control character. Lone surrogates have no
    AppleScript form and raise TemplateError."""
    parts: list[str] = []
    chunk: list[str] = []
    for char in value:
        if 0xD800 <= ord(char) <= 0xDFFF:
            raise TemplateError(
                "text that is not valid Unicode (a lone surrogate) cannot be sent to AppleScript"
            )
        if _needs_character_id(char):
            if chunk:
                parts.append('"' + "".join(chunk) + '"')
                chunk = []
            parts.append(f"(character id {ord(char)})")
        else:
            chunk.append(_AS_ESCAPES.get(char, char))
    if chunk or not parts:
        parts.append('"' + "".join(chunk) + '"')
    return parts[0] if len(parts) == 1 else "(" + " & ".join(parts) + ")"


def _applescript_number(value: int | float) -> str:
    if isinstance(value, int):
        return str(value) if value >= 0 else f"({value})"
    if not math.isfinite(value):
        raise TemplateError(f"the number {value!r} has no AppleScript form")
    text = repr(value)
    if "e" in text:
        mantissa, exponent = text.split("e")
        if "." not in mantissa:
            mantissa += ".0"
        text = f"{mantissa}E{int(exponent):+d}"
    return text if value >= 0 else f"({text})"


def applescript_value(value: Any) -> str:
    """A JSON value as an AppleScript value: strings as `applescript_literal`, numbers, booleans,
    null as `missing value`, arrays as lists, objects as records with `|key|` labels (keys with
    `|`, `\\` or control characters are refused)."""
    if value is None:
        return "missing value"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return _applescript_number(value)
    if isinstance(value, str):
        return applescript_literal(value)
    if isinstance(value, list | tuple):
        return "{" + ", ".join(applescript_value(item) for item in value) + "}"
    if isinstance(value, Mapping):
        fields = []
        for raw_key, item in value.items():
            key = str(raw_key)
            if "|" in key or "\\" in key or any(_needs_character_id(c) or c in "\n\r\t" for c in key):
                raise TemplateError(f"the record key {key!r} cannot be written in AppleScript")
            fields.append(f"|{key}|:{applescript_value(item)}")
        return "{" + ", ".join(fields) + "}"
    raise TemplateError(f"a {type(value).__name__} has no AppleScript form")


def jxa_literal(value: Any) -> str:
    """A JavaScript expression for a JSON value: ASCII-only JSON (U+2028/9, `</` and every
    non-ASCII character become `\\u` escapes, so the text is also safe in any encoding)."""
    try:
        text = json.dumps(value, ensure_ascii=True, allow_nan=False, separators=(",", ":"))
    except (TypeError, ValueError) as exc:
        raise TemplateError(f"a value has no JavaScript form: {exc}") from exc
    return text.replace("</", "<\\/")


# ---------------------------------------------------------------------------- filling templates


class _Filler:
    """Looks up placeholders: the tool's declared parameters decide unknown vs left out."""

    def __init__(self, arguments: Mapping[str, Any], parameters: Collection[str] | None, tool: str) -> None:
        self.arguments = arguments
        self.parameters = parameters
        self.tool = tool

    def known(self, name: str) -> bool:
        top = name.split(".", 1)[0]
        declared = self.parameters is not None and (name in self.parameters or top in self.parameters)
        return declared or lookup(self.arguments, name) is not MISSING

    def value(self, name: str) -> Any:
        found = lookup(self.arguments, name)
        if found is MISSING and not self.known(name):
            where = f" of tool {self.tool!r}" if self.tool else ""
            raise TemplateError(f"the script uses ${{{name}}}, which is not a parameter{where}", name)
        return found


def _split_string(body: str, quote: str, join: str, piece: Callable[[str], str]) -> str:
    """The source text of one string literal (without quotes), placeholders split out as
    `piece(name)`: an expression for the named value's text."""
    parts: list[str] = []
    last = 0
    i = 0
    while i < len(body):
        if body[i] == "\\":
            i += 2
            continue
        match = PLACEHOLDER.match(body, i)
        if match is None:
            i += 1
            continue
        if i > last:
            parts.append(quote + body[last:i] + quote)
        parts.append(piece(match.group(1)))
        last = i = match.end()
    if not parts:
        return quote + body + quote
    if last < len(body):
        parts.append(quote + body[last:] + quote)
    return parts[0] if len(parts) == 1 else "(" + f" {join} ".join(parts) + ")"


def render_applescript(
    template: str, arguments: Mapping[str, Any], *, parameters: Collection[str] | None = None, tool: str = ""
) -> str:
    """The AppleScript `template` with its placeholders filled (see the module's rules)."""
    filler = _Filler(arguments, parameters, tool)

    def text_literal(name: str) -> str:
        found = filler.value(name)
        return applescript_literal("" if found is MISSING else text_of(found))

    try:
        pieces = applescript_pieces(template, PLACEHOLDER)
    except AmbiguousTemplateError as exc:
        where = f"the script of tool {tool!r}" if tool else "the script"
        raise TemplateSyntaxError(f"{where} cannot be filled safely: {exc}") from exc
    out: list[str] = []
    for piece in pieces:
        if piece.kind == "string":
            out.append(_split_string(piece.text, '"', "&", text_literal))
        elif piece.kind == "placeholder":
            found = filler.value(piece.text)
            out.append("missing value" if found is MISSING else applescript_value(found))
        else:
            out.append(piece.text)
    return "".join(out)


def _js_regex_allowed(out: list[str]) -> bool:
    text = "".join(out[-40:]).rstrip()
    if re.search(r"(?:^|[^\w$])(?:return|typeof|case|in|of|do|else|void|yield|await)\Z", text):
        return True
    return text[-1:] in _JS_REGEX_BEFORE


def _read_js_regex(template: str, start: int) -> int:
    i, in_class = start + 1, False
    while i < len(template) and template[i] != "\n":
        char = template[i]
        if char == "\\":
            i += 2
            continue
        if char == "[":
            in_class = True
        elif char == "]":
            in_class = False
        elif char == "/" and not in_class:
            return i + 1
        i += 1
    return i


class _JxaValues:
    """The values a JXA script uses, and the fixed text that refers to them."""

    NAME: Final = "__aai"

    def __init__(self, filler: _Filler) -> None:
        self.filler = filler
        self.values: dict[str, Any] = {}
        self.texts: dict[str, str] = {}

    def value(self, name: str) -> str:
        found = self.filler.value(name)
        self.values[name] = None if found is MISSING else found
        return f"{self.NAME}.v[{json.dumps(name)}]"

    def text(self, name: str) -> str:
        found = self.filler.value(name)
        self.texts[name] = "" if found is MISSING else text_of(found)
        return f"{self.NAME}.t[{json.dumps(name)}]"

    def preamble(self) -> str:
        if not self.values and not self.texts:
            return ""
        try:
            document = json.dumps({"v": self.values, "t": self.texts}, allow_nan=False, separators=(",", ":"))
        except (TypeError, ValueError) as exc:
            raise TemplateError(f"a value has no JavaScript form: {exc}") from exc
        return f"var {self.NAME} = JSON.parse({jxa_literal(document)});\n"


def _template_literal(template: str, start: int, values: _JxaValues) -> tuple[str, int]:
    out, i = ["`"], start + 1
    while i < len(template):
        char = template[i]
        if char == "\\":
            out.append(template[i : i + 2])
            i += 2
        elif char == "`":
            out.append("`")
            return "".join(out), i + 1
        elif template.startswith("${", i):
            match = PLACEHOLDER.match(template, i)
            if match is not None and values.filler.known(match.group(1)):
                out.append("${" + values.text(match.group(1)) + "}")
                i = match.end()
                continue
            depth, j = 0, i + 1  # JavaScript's own `${expression}`: kept as written
            while j < len(template):
                depth += {"{": 1, "}": -1}.get(template[j], 0)
                j += 1
                if depth == 0:
                    break
            out.append(template[i:j])
            i = j
        else:
            out.append(char)
            i += 1
    return "".join(out), i


def render_jxa(
    template: str, arguments: Mapping[str, Any], *, parameters: Collection[str] | None = None, tool: str = ""
) -> str:
    """The JXA script: the values' line, then `template` with its placeholders turned into
    references to them (see the module's rules)."""
    values = _JxaValues(_Filler(arguments, parameters, tool))
    out: list[str] = []
    i = 0
    n = len(template)
    while i < n:
        char = template[i]
        if char in "\"'":
            end = string_end(template, i, char)
            if end - 1 > i and template[end - 1] == char:
                out.append(_split_string(template[i + 1 : end - 1], char, "+", values.text))
            else:  # an unclosed literal: the script is broken anyway, and nothing is spliced in
                out.append(template[i:end])
            i = end
        elif char == "`":
            text, i = _template_literal(template, i, values)
            out.append(text)
        elif template.startswith("//", i):
            end = template.find("\n", i)
            end = n if end < 0 else end
            out.append(template[i:end])
            i = end
        elif template.startswith("/*", i):
            end = template.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append(template[i:end])
            i = end
        elif char == "/" and _js_regex_allowed(out):
            end = _read_js_regex(template, i)
            out.append(template[i:end])
            i = end
        elif (match := PLACEHOLDER.match(template, i)) is not None:
            out.append("(" + values.value(match.group(1)) + ")")
            i = match.end()
        else:
            out.append(char)
            i += 1
    body = "".join(out)
    return values.preamble() + body
