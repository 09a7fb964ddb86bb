"""Small JSON Schema (Draft-07) helpers shared by the guide renderer and the example builder.

Both walk a tool's `parameters` or `returns` schema. A `Resolver` follows local `$ref`s
(`#/definitions/...` or any JSON pointer into the same document) and folds `allOf` into one
schema, so the walkers see plain subschemas; `resolve` also reports the reference it followed,
which the walkers use to stop on recursive schemas.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote

Schema = Mapping[str, Any]

MAX_DEPTH = 8  # deeper structures are summarized, never walked further


class Resolver:
    """Follows local references of one root schema; unknown or remote references resolve to `{}`."""

    def __init__(self, root: Any) -> None:
        self.root: Schema = root if isinstance(root, Mapping) else {}

    def resolve(self, schema: Any) -> tuple[Schema, tuple[str, ...]]:
        """The schema with `$ref` chains followed and `allOf` merged, and the references taken."""
        refs: list[str] = []
        current: Schema = schema if isinstance(schema, Mapping) else {}
        while isinstance(current.get("$ref"), str):
            ref = current["$ref"]
            if ref in refs:  # a reference loop that never reaches a real schema
                return {}, tuple(refs)
            refs.append(ref)
            current = self.lookup(ref)
        all_of = current.get("allOf")
        if isinstance(all_of, list) and all_of:
            merged: dict[str, Any] = {k: v for k, v in current.items() if k != "allOf"}
            for part in all_of:
                resolved, part_refs = self.resolve(part)
                refs.extend(r for r in part_refs if r not in refs)
                _merge_into(merged, resolved)
            current = merged
        return current, tuple(refs)

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


def literal(value: Any) -> str:
    """A JSON value as compact JSON text, non-ASCII kept readable."""
    return json.dumps(value, ensure_ascii=False)
