"""Arguments against a tool's parameter schema: defaults filled in, every violation with its path.

What an INVALID_PARAMS error reports is bounded whatever the arguments hold: at most
MAX_LISTED_VIOLATIONS violations, each cut to MAX_VIOLATION_CHARS, MAX_VIOLATIONS_CHARS in all.
The work is bounded too. jsonschema-rs builds every error before its iterator yields the first
(1.9 million array items of the wrong type are 1.9 million Python objects, gigabytes), so only
arguments of at most EVERY_VIOLATION_VALUES values are checked for every violation; larger
ones are checked with `validate`, which stops at the first.

Compiled validators are kept by the text of the schema they were compiled from, never by the
tool object: when a web app is refreshed its old tools are freed, and a new tool with another
schema may be given the same memory, and so the same `id`. Which schema text a tool object has
is remembered through a weak reference to it, so a large schema is serialized once per tool.
Both caches hold at most MAX_CACHED_SCHEMAS entries, the least recently used going first.
"""

from __future__ import annotations

import copy
import hashlib
import json
import weakref
from collections import OrderedDict
from typing import Any, Final, Generic, TypeVar

import jsonschema_rs

from ..descriptor import AppDescriptor, Tool
from ..errors import InvalidParamsError, json_pointer
from ..executors.answer_json import scan_json

MAX_LISTED_VIOLATIONS: Final = 50
MAX_VIOLATION_CHARS: Final = 300
MAX_VIOLATIONS_CHARS: Final = 8_000
EVERY_VIOLATION_VALUES: Final = 10_000
MAX_CACHED_SCHEMAS: Final = 1_024

K = TypeVar("K")
V = TypeVar("V")


class _Recent(Generic[K, V]):
    """A mapping that keeps only its `size` most recently used entries."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._entries: OrderedDict[K, V] = OrderedDict()

    def get(self, key: K) -> V | None:
        value = self._entries.get(key)
        if value is not None:
            self._entries.move_to_end(key)
        return value

    def put(self, key: K, value: V) -> None:
        self._entries[key] = value
        self._entries.move_to_end(key)
        if len(self._entries) > self._size:
            self._entries.popitem(last=False)

    def clear(self) -> None:
        self._entries.clear()


def schema_key(schema: Any) -> str:
    """What identifies a parameter schema: a digest of its exact JSON text (key order kept)."""
    return hashlib.sha256(json.dumps(schema, separators=(",", ":")).encode("ascii")).hexdigest()


class ArgumentValidator:
    """Compiles each parameter schema once and checks arguments against it."""

    def __init__(self) -> None:
        self._compiled: _Recent[str, Any] = _Recent(MAX_CACHED_SCHEMAS)
        self._keys: _Recent[int, tuple[weakref.ref[Tool], str]] = _Recent(MAX_CACHED_SCHEMAS)

    def clear(self) -> None:
        self._compiled.clear()
        self._keys.clear()

    def _validator(self, tool: Tool) -> Any:
        key = self._schema_key(tool)
        validator = self._compiled.get(key)
        if validator is None:
            validator = jsonschema_rs.Draft7Validator(tool.parameters, validate_formats=True)
            self._compiled.put(key, validator)
        return validator

    def _schema_key(self, tool: Tool) -> str:
        known = self._keys.get(id(tool))
        if known is not None and known[0]() is tool:  # the same object, not one at a reused address
            return known[1]
        key = schema_key(tool.parameters)
        self._keys.put(id(tool), (weakref.ref(tool), key))
        return key

    def prepare(self, app: AppDescriptor, tool: Tool, arguments: Any) -> dict[str, Any]:
        """The arguments to execute with; raises INVALID_PARAMS listing the violations."""
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            raise InvalidParamsError(
                app.id,
                tool.name,
                [{"path": "", "message": f"args must be an object, not {type(arguments).__name__}"}],
            )
        prepared: dict[str, Any] = with_defaults(tool.parameters, copy.deepcopy(arguments))
        # Text no app can receive (UTF-8 cannot encode a lone surrogate) and numbers no JSON
        # can carry first: the schema validator cannot even read them.
        scan = scan_json(prepared, max_unwritable=MAX_LISTED_VIOLATIONS + 1)
        if scan.unwritable:
            found = [{"path": u.pointer, "message": u.reason} for u in scan.unwritable]
            complete = len(found) <= MAX_LISTED_VIOLATIONS
            raise _invalid(app, tool, found, len(found) if complete else None)
        validator = self._validator(tool)
        if validator.is_valid(prepared):
            return prepared
        if scan.values <= EVERY_VIOLATION_VALUES:
            found = [_violation(error) for error in validator.iter_errors(prepared)]
            if found:
                raise _invalid(app, tool, found, len(found))
            return prepared
        try:
            validator.validate(prepared)
        except jsonschema_rs.ValidationError as error:
            raise _invalid(app, tool, [_violation(error)], None) from None
        return prepared  # is_valid and validate disagree: only validate names a fault


def _violation(error: Any) -> dict[str, str]:
    return {"path": json_pointer(*error.instance_path), "message": error.message}


def _invalid(
    app: AppDescriptor, tool: Tool, violations: list[dict[str, str]], total: int | None
) -> InvalidParamsError:
    """The error listing a bounded part of `violations` (sorted by path); `total` is how many
    there are, None when the rest was not looked for."""
    listed: list[dict[str, str]] = []
    size = 0
    for violation in sorted(violations, key=_document_order)[:MAX_LISTED_VIOLATIONS]:
        shown = {key: _cut(text) for key, text in violation.items()}
        size += sum(len(text) for text in shown.values())
        if listed and size > MAX_VIOLATIONS_CHARS:
            break
        listed.append(shown)
    unlisted = None if total is None else total - len(listed)
    return InvalidParamsError(app.id, tool.name, listed, unlisted=unlisted)


def _document_order(violation: dict[str, str]) -> list[tuple[int, int, str]]:
    """Sorts by path, array indexes as numbers (`/tags/2` before `/tags/10`; never int(), which
    refuses thousands of digits)."""
    return [
        (0, len(token), token) if token.isascii() and token.isdigit() else (1, 0, token)
        for token in violation["path"].split("/")
    ]


def _cut(text: str) -> str:
    return text if len(text) <= MAX_VIOLATION_CHARS else text[: MAX_VIOLATION_CHARS - 1] + "…"


def with_defaults(schema: Any, value: Any) -> Any:
    """Fill `default`s of missing object properties, recursively through objects and arrays."""
    if not isinstance(schema, dict):
        return value
    if isinstance(value, dict):
        properties = schema.get("properties")
        if isinstance(properties, dict):
            for name, subschema in properties.items():
                if name not in value and isinstance(subschema, dict) and "default" in subschema:
                    value[name] = copy.deepcopy(subschema["default"])
                if name in value:
                    value[name] = with_defaults(subschema, value[name])
    elif isinstance(value, list) and _may_fill(items := schema.get("items")):
        return [with_defaults(items, item) for item in value]
    return value


def _may_fill(items_schema: Any) -> bool:
    """Whether array items could get a default: only objects (or arrays of them) can."""
    return isinstance(items_schema, dict) and ("properties" in items_schema or "items" in items_schema)
