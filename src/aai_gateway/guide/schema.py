"""Small JSON Schema (Draft-07) helpers shared by the guide renderer and the example builder.

Both walk a tool's `parameters` or `returns` schema. A `Resolver` follows local `$ref`s
(`#/definitions/...` or any JSON pointer into the same document) and folds `allOf` into one
schema, so the walkers see plain subschemas; `resolve` also reports the reference it followed,
which the walkers use to stop on recursive schemas.

A descriptor can make a small schema describe an enormous one: `$ref` chains thousands of links
long, `anyOf` alternatives that each point at the next such `anyOf`, deeply nested `allOf`. The
guide is built while a request waits, so each walk is bounded: a `Resolver` follows at most
`MAX_REF_HOPS` references in a row and answers at most `max_steps` resolutions; past either it
resolves to `{}` (any value) and says so in `exhausted()`, and the walkers summarize the rest.
The text a walk writes is bounded too (`max_text`): a few kilobytes of schema can expand through
references into megabytes of bullets long before the steps run out.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote

Schema = Mapping[str, Any]

MAX_DEPTH = 8  # deeper structures are summarized, never walked further
MAX_REF_HOPS = 32  # a longer chain of references resolves to `{}`
MAX_STEPS = 20_000  # resolutions (and other work) one walk of one tool's schema may ask for


class Resolver:
    """Follows local references of one root schema; unknown or remote references resolve to `{}`,
    and so does everything once the walk has used up its steps (see the module docstring)."""

    def __init__(self, root: Any, *, max_steps: int = MAX_STEPS, max_text: int | None = None) -> None:
        self.root: Schema = root if isinstance(root, Mapping) else {}
        self.steps_left = max_steps
        self.text_left = max_text

    def exhausted(self) -> bool:
        return self.steps_left <= 0 or (self.text_left is not None and self.text_left <= 0)

    def write(self, characters: int) -> None:
        """Charge text the walk produced to its `max_text` (when it has one)."""
        if self.text_left is not None:
            self.text_left -= characters

    def spend(self, steps: int) -> None:
        """Charge work other than resolving (a line of output, a validation) to the same walk."""
        self.steps_left -= steps

    def resolve(self, schema: Any) -> tuple[Schema, tuple[str, ...]]:
        """The schema with `$ref` chains followed and `allOf` merged, and the references taken."""
        refs: dict[str, None] = {}  # ordered, and quick to search however long the chain
        resolved = self._resolve(schema, refs, depth=0)
        return resolved, tuple(refs)

    def _resolve(self, schema: Any, refs: dict[str, None], depth: int) -> Schema:
        self.steps_left -= 1
        if self.steps_left < 0 or depth > MAX_DEPTH:
            return {}
        current: Schema = schema if isinstance(schema, Mapping) else {}
        hops: set[str] = set()
        while isinstance(current.get("$ref"), str):
            ref = current["$ref"]
            if ref in hops or len(hops) >= MAX_REF_HOPS:  # a loop, or a chain too long to follow
                return {}
            hops.add(ref)
            refs.setdefault(ref)
            current = self.lookup(ref)
        all_of = current.get("allOf")
        if isinstance(all_of, list) and all_of:
            merged: dict[str, Any] = {k: v for k, v in current.items() if k != "allOf"}
            for part in all_of:
                _merge_into(merged, self._resolve(part, refs, depth + 1))
            current = merged
        return current

    def lookup(self, ref: str) -> Schema:
        if not ref.startswith("#"):
            return {}
        node: Any = self.root
        for raw in ref[1:].split("/")[1:]:
            key = unquote(raw).replace("~1", "/").replace("~0", "~")
            if isinstance(node, Mapping) and key in node:
                node = node[key]
            elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
                node = node[int(key)]
            else:
                return {}
        return node if isinstance(node, Mapping) else {}

    def standalone(self, schema: Schema) -> dict[str, Any]:
        """`schema` made self-contained for a validator: the root's definitions travel with it."""
        copy = dict(schema)
        definitions = self.root.get("definitions")
        if isinstance(definitions, Mapping) and "definitions" not in copy:
            copy["definitions"] = definitions
        return copy


def _merge_into(target: dict[str, Any], part: Schema) -> None:
    for key, value in part.items():
        if key == "properties" and isinstance(value, Mapping):
            properties = dict(target.get("properties") or {})
            for name, sub in value.items():
                properties.setdefault(name, sub)
            target["properties"] = properties
        elif key == "required" and isinstance(value, list):
            target["required"] = list(dict.fromkeys([*target.get("required", []), *value]))
        else:
            target.setdefault(key, value)


def types_of(schema: Schema) -> list[str]:
    """The JSON types a schema names, or infers from its keywords when `type` is absent."""
    declared = schema.get("type")
    if isinstance(declared, str):
        return [declared]
    if isinstance(declared, list):
        return [t for t in declared if isinstance(t, str)]
    if "const" in schema:
        return [json_type(schema["const"])]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return list(dict.fromkeys(json_type(v) for v in schema["enum"]))
    if any(k in schema for k in ("properties", "additionalProperties", "required", "minProperties")):
        return ["object"]
    if any(k in schema for k in ("items", "minItems", "maxItems", "uniqueItems")):
        return ["array"]
    if any(k in schema for k in ("minLength", "maxLength", "pattern", "format")):
        return ["string"]
    if any(k in schema for k in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")):
        return ["number"]
    return []


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def branches(schema: Schema) -> list[Any]:
    """The alternatives of a `oneOf` or `anyOf` (oneOf first), or nothing."""
    for key in ("oneOf", "anyOf"):
        value = schema.get(key)
        if isinstance(value, list) and value:
            return value
    return []


def properties_of(schema: Schema) -> dict[str, Any]:
    value = schema.get("properties")
    if not isinstance(value, Mapping):
        return {}
    return {str(k): v for k, v in value.items()}


def required_of(schema: Schema) -> list[str]:
    value = schema.get("required")
    return [r for r in value if isinstance(r, str)] if isinstance(value, list) else []


def literal(value: Any, limit: int = 200) -> str:
    """A JSON value as JSON text (`json.dumps` spacing), non-ASCII kept readable, cut to `limit`
    characters (with `…`). Only about `limit` characters are ever encoded: a descriptor's
    megabyte-long default is not written out again at every place that refers to it."""
    text = _BoundedJson(limit + 1).encode(value)
    return text if len(text) <= limit else text[:limit] + "…"


class _BoundedJson:
    def __init__(self, room: int) -> None:
        self.pieces: list[str] = []
        self.room = room

    def encode(self, value: Any) -> str:
        self._value(value)
        return "".join(self.pieces)

    def _add(self, piece: str) -> None:
        self.pieces.append(piece)
        self.room -= len(piece)

    def _value(self, value: Any) -> None:
        if isinstance(value, str):
            self._add(json.dumps(value[: max(self.room, 0)], ensure_ascii=False))
        elif isinstance(value, list | tuple):
            self._add("[")
            for i, item in enumerate(value):
                if self.room <= 0:
                    return
                self._add(", " if i else "")
                self._value(item)
            self._add("]")
        elif isinstance(value, Mapping):
            self._add("{")
            for i, (key, item) in enumerate(value.items()):
                if self.room <= 0:
                    return
                self._add(", " if i else "")
                self._value(str(key))
                self._add(": ")
                self._value(item)
            self._add("}")
        else:
            self._add(json.dumps(value))
