"""Reading what `osascript` prints for a script tool (`output_parser`).

Pure functions. `-s s` makes osascript print the result in AppleScript source form
(`{name:"x", count:3, items:{"a", "b"}}`); `parse_applescript_value` reads that back as JSON.
"""

from __future__ import annotations

import re
from typing import Any, Final

from .answer_json import strict_loads

_NUMBER: Final = re.compile(r"-?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_KEY: Final = re.compile(r"\s*(\|(?:[^|\\]|\\.)*\||[A-Za-z_][A-Za-z0-9_ ]*?)\s*:(?!=)")
_AS_UNESCAPES: Final = {'"': '"', "\\": "\\", "n": "\n", "r": "\r", "t": "\t"}


class RecordSyntaxError(ValueError):
    pass


class _RecordParser:
    """Recursive descent over `osascript -s s` output (AppleScript source form of a value)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.i = 0

    def skip(self) -> None:
        while self.i < len(self.text) and self.text[self.i].isspace():
            self.i += 1

    def value(self) -> Any:
        self.skip()
        text, i = self.text, self.i
        if i >= len(text):
            raise RecordSyntaxError("a value was expected at the end of the output")
        if text[i] == "{":
            return self.braces()
        if text[i] == '"':
            return self.string()
        for word, meaning in (("true", True), ("false", False), ("missing value", None), ("null", None)):
            if text.startswith(word, i) and not text[i + len(word) : i + len(word) + 1].isalnum():
                self.i += len(word)
                return meaning
        if text.startswith("date ", i) and text[i + 5 : i + 6] == '"':
            self.i += 5
            return self.string()
        number = _NUMBER.match(text, i)
        if number is not None and (number.end() == len(text) or text[number.end()] in ",}) \n\t\r"):
            self.i = number.end()
            lexeme = number.group()
            return int(lexeme) if re.fullmatch(r"-?\d+", lexeme) else float(lexeme)
        return self.raw()

    def string(self) -> str:
        text, out = self.text, list[str]()
        self.i += 1
        while self.i < len(text):
            char = text[self.i]
            if char == '"':
                self.i += 1
                return "".join(out)
            if char == "\\" and self.i + 1 < len(text):
                following = text[self.i + 1]
                out.append(_AS_UNESCAPES.get(following, "\\" + following))
                self.i += 2
                continue
            out.append(char)
            self.i += 1
        raise RecordSyntaxError("an unterminated string")

    def raw(self) -> str:
        """A term this parser does not model (object specifiers, `«class …»`, constants): its
        source text up to the next `,` or closing brace of this level."""
        start, depth, text = self.i, 0, self.text
        while self.i < len(text):
            char = text[self.i]
            if char == '"':
                self.string()
                continue
            if char in "{«(":
                depth += 1
            elif char in "}»)":
                if depth == 0:
                    break
                depth -= 1
            elif char == "," and depth == 0:
                break
            self.i += 1
        return text[start : self.i].strip()

    def braces(self) -> Any:
        self.i += 1
        self.skip()
        if self.text.startswith("}", self.i):
            self.i += 1
            return []
        is_record = _KEY.match(self.text, self.i) is not None
        record: dict[str, Any] = {}
        items: list[Any] = []
        while True:
            if is_record:
                key = _KEY.match(self.text, self.i)
                if key is None:
                    raise RecordSyntaxError(f"a record label was expected at offset {self.i}")
                label = key.group(1)
                if label.startswith("|"):
                    label = re.sub(r"\\(.)", r"\1", label[1:-1])
                self.i = key.end()
                record[label.strip()] = self.value()
            else:
                items.append(self.value())
            self.skip()
            if self.text.startswith(",", self.i):
                self.i += 1
                continue
            if self.text.startswith("}", self.i):
                self.i += 1
                return record if is_record else items
            raise RecordSyntaxError(f"',' or '}}' was expected at offset {self.i}")


def parse_applescript_value(text: str) -> Any:
    """An AppleScript value in source form (`osascript -s s`) as JSON: records → objects, lists →
    arrays, strings, integers, reals, booleans, `missing value` → null, `date "…"` → its text;
    anything else (object specifiers, constants, `«class …»`) → its source text."""
    parser = _RecordParser(text.strip())
    value = parser.value()
    parser.skip()
    if parser.i != len(parser.text):
        raise RecordSyntaxError(f"unexpected text after the value at offset {parser.i}")
    return value


def parse_output(stdout: str, output_parser: str | None) -> Any:
    """What a script tool returns. `result as record`: the value parsed from source form (JSON
    first, for JXA); an empty record or list is `{}`. Otherwise (`result as text`, none): the text
    without its final newline, or the JSON object/array it holds when it is one. RecursionError
    when the value is nested too deeply to read."""
    text = stdout[:-1] if stdout.endswith("\n") else stdout
    if output_parser == "result as record":
        try:
            value = strict_loads(text)
        except ValueError:
            value = parse_applescript_value(text)
        return {} if value == [] else value
    stripped = text.strip()
    if stripped[:1] in ("{", "["):
        try:
            parsed = strict_loads(stripped)
        except ValueError:
            return text
        return parsed
    return text
