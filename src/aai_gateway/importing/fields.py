"""Reading the fields of one server entry: each value checked for its type and for what a process
or an HTTP request can carry, every problem recorded at the field's location.

Problem messages name keys and the kind of a value, never the value itself: configurations hold
credentials (only a transport type or URL scheme that is a plain word is quoted). A value of the
wrong type is an error (the entry is not imported): the clients themselves refuse
`"args": ["--port", 8080]`, and guessing would hide the mistake.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from ..descriptor.http_headers import GATEWAY_HEADERS, header_name_problem, header_value_problem
from ..descriptor.quoting import quoted
from ..errors import Problem
from .model import ConfigValue
from .values import Input, parse_value

Token = str | int
Locate = Callable[[tuple[Token, ...]], str]
"""Turns a path of keys (and array indexes) into a location in the file: an RFC 6901 pointer
for JSON, a dotted key path for TOML."""

_SURROGATE: Final = re.compile("[\ud800-\udfff]")
_JSON_KINDS: Final[dict[type, str]] = {
    str: "a string",
    bool: "a boolean",
    int: "a number",
    float: "a number",
    list: "an array",
    dict: "an object",
    type(None): "null",
}


def kind_of(value: Any) -> str:
    """The JSON (or TOML) kind of a value, for messages that must not repeat the value."""
    return _JSON_KINDS.get(type(value), "a date or time" if value is not None else "null")


@dataclass(frozen=True)
class Setting:
    """Where the entries of one file are read: which client's reference syntax applies, the
    file, its locator, VS Code's inputs, and the duplicate keys the parser saw."""

    client: str
    config_file: Path
    locate: Locate
    inputs: Mapping[str, Input] = field(default_factory=dict)
    duplicates: Mapping[int, list[str]] = field(default_factory=dict)


class EntryFields:
    """The fields of one entry (`raw`, at `tokens`). Reading a field returns its value, or None
    when it is absent or wrong; `failed` is set by any error."""

    def __init__(self, raw: dict[str, Any], tokens: tuple[Token, ...], setting: Setting) -> None:
        self.raw = raw
        self.tokens = tokens
        self.setting = setting
        self.problems: list[Problem] = []
        self.failed = False
        self.duplicate_keys(raw, tokens)

    def error(self, tokens: tuple[Token, ...], message: str) -> None:
        self.failed = True
        self.problems.append(Problem(self.setting.locate(tokens), message))

    def warning(self, tokens: tuple[Token, ...], message: str) -> None:
        self.problems.append(Problem(self.setting.locate(tokens), message, "warning"))

    def duplicate_keys(self, obj: dict[str, Any], tokens: tuple[Token, ...]) -> None:
        for key in self.setting.duplicates.get(id(obj), []):
            self.warning(
                (*tokens, key), f"key {quoted(key)} appears more than once; the client uses the last one"
            )

    def at(self, key: str) -> tuple[Token, ...]:
        return (*self.tokens, key)

    def present(self, key: str) -> bool:
        return key in self.raw

    def text(self, key: str) -> str | None:
        """A string field as it is (no references resolved): types, tool names."""
        if key not in self.raw:
            return None
        value = self.raw[key]
        if not isinstance(value, str):
            self.error(self.at(key), f"{key} is {kind_of(value)}; expected a string")
            return None
        return value

    def boolean(self, key: str) -> bool | None:
        if key not in self.raw:
            return None
        value = self.raw[key]
        if not isinstance(value, bool):
            self.error(self.at(key), f"{key} is {kind_of(value)}; expected true or false")
            return None
        return value

    def value(self, key: str, *, process: bool = False) -> ConfigValue | None:
        """A string the client resolves references in (command, cwd, url, …). `process`: it
        goes into a process's argv or environment, which cannot hold a NUL character."""
        if key not in self.raw:
            return None
        return self.config_value(self.raw[key], self.at(key), key, process=process)

    def config_value(
        self, value: Any, tokens: tuple[Token, ...], what: str, *, process: bool = False
    ) -> ConfigValue | None:
        if not isinstance(value, str):
            self.error(tokens, f"{what} is {kind_of(value)}; expected a string")
            return None
        if _SURROGATE.search(value):
            self.error(tokens, f"{what} is not valid Unicode text (it holds a lone surrogate)")
            return None
        if process and "\x00" in value:
            self.error(tokens, f"{what} holds a NUL character, which no process can be given")
            return None
        parsed = parse_value(value, self.setting.client, self.setting.inputs)
        for reference in parsed.references:
            if not reference.defined:
                self.warning(
                    tokens, f"{what} refers to input {quoted(reference.name)}, which inputs does not define"
                )
        return parsed

    def values(self, key: str) -> tuple[ConfigValue, ...]:
        """An array of strings with references (args)."""
        if key not in self.raw:
            return ()
        items = self.raw[key]
        if not isinstance(items, list):
            self.error(self.at(key), f"{key} is {kind_of(items)}; expected an array of strings")
            return ()
        found = [
            self.config_value(item, (*self.at(key), index), f"{key}[{index}]", process=True)
            for index, item in enumerate(items)
        ]
        return tuple(item for item in found if item is not None)

    def names(self, key: str) -> tuple[str, ...] | None:
        """An array of plain strings (tool names)."""
        if key not in self.raw:
            return None
        items = self.raw[key]
        if not isinstance(items, list) or not all(isinstance(item, str) for item in items):
            self.error(self.at(key), f"{key} must be an array of strings")
            return None
        return tuple(items)

    def table(self, key: str) -> dict[str, Any] | None:
        if key not in self.raw:
            return None
        value = self.raw[key]
        if not isinstance(value, dict):
            self.error(self.at(key), f"{key} is {kind_of(value)}; expected an object of strings")
            return None
        self.duplicate_keys(value, self.at(key))
        return value

    def environment(self, key: str) -> dict[str, ConfigValue]:
        """Environment variables: names a process can have, string values."""
        found: dict[str, ConfigValue] = {}
        for name, value in (self.table(key) or {}).items():
            where = (*self.at(key), name)
            if not name or "=" in name or "\x00" in name:
                self.error(where, f"{quoted(name)} cannot be the name of an environment variable")
                continue
            parsed = self.config_value(value, where, f"{key}.{name}", process=True)
            if parsed is not None:
                found[name] = parsed
        return found

    def headers(self, key: str) -> dict[str, ConfigValue]:
        """HTTP headers: valid names (the gateway's own framing headers are dropped with a
        warning), values a request can carry."""
        found: dict[str, ConfigValue] = {}
        for name, value in (self.table(key) or {}).items():
            parsed = self.header(name, value, (*self.at(key), name), f"{key}.{name}")
            if parsed is not None:
                found[name] = parsed
        return found

    def header(self, name: str, value: Any, where: tuple[Token, ...], what: str) -> ConfigValue | None:
        if name.lower() in GATEWAY_HEADERS:
            self.warning(
                where, f"header {quoted(name)} is set by the gateway's HTTP client itself; not carried over"
            )
            return None
        if header_name_problem(name) is not None:
            self.error(where, f"{quoted(name)} is not a valid HTTP header name")
            return None
        parsed = self.config_value(value, where, what)
        if parsed is None:
            return None
        problem = header_value_problem(parsed.raw)
        if problem is not None:
            self.error(where, f"the value of header {quoted(name)} {problem}")
            return None
        return parsed
