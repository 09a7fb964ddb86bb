"""A JSON Schema (Draft-07) described as markdown bullets an agent can scan.

One bullet per property: `name (type, required|optional, constraints): description`, with the
fields of nested objects, and of the objects inside arrays, indented under their parent. Types
read like TypeScript: `"low" | "normal"` for an enum, `string | null`, `array of date string`.

The text is bounded whatever the schema: a bullet is at most `MAX_LINE` characters, and the
bullets of one schema at most `max_text` (`PARAMETERS_TEXT`, `RETURNS_TEXT` by default), past
which a last bullet says the rest is too large to list (`TOO_LARGE`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Literal

from ..descriptor.shown_text import shown_text
from .schema import MAX_DEPTH, Resolver, Schema, branches, literal, properties_of, required_of, types_of

Mode = Literal["parameters", "returns"]
MAX_ENUM = 30
MAX_DEFAULT = 60
TOO_LARGE = "- … (the rest of this schema is too large to list here)"
MAX_LINE = 700  # characters of one bullet
PARAMETERS_TEXT = 8_000  # characters of the bullets of one tool's parameters
RETURNS_TEXT = 3_000  # ... and of its returns
_SPACES = re.compile(r"\s+")
_CHARACTERS_PER_STEP = 100  # a bullet costs the walk one step per this many characters


def parameter_lines(schema: Schema, max_text: int = PARAMETERS_TEXT) -> tuple[list[str], list[str]]:
    """Bullets for a tool's `parameters` (empty when it takes none), and the constraints on the
    arguments as a whole (`at least 2 fields`)."""
    resolver = Resolver(schema, max_text=max_text)
    resolved, refs = resolver.resolve(schema)
    overall = _count(_int(resolved, "minProperties"), _int(resolved, "maxProperties"), "field")
    lines = _children(resolver, resolved, "parameters", refs, depth=0)
    return _bounded(resolver, lines, max_text), overall


def returns_summary(schema: Schema, max_text: int = RETURNS_TEXT) -> tuple[str, list[str]]:
    """A one-line summary of a `returns` schema (`object — description`) and its field bullets."""
    resolver = Resolver(schema, max_text=max_text)
    resolved, refs = resolver.resolve(schema)
    head = type_label(resolver, resolved, depth=0)
    facts = constraints(resolver, resolved)
    if facts:
        head += f" ({', '.join(facts)})"
    text = description(resolved)
    if text:
        head += f" — {text}"
    lines = _children(resolver, resolved, "returns", refs, depth=0)
    return capped(head), _bounded(resolver, lines, max_text)


def _bounded(resolver: Resolver, lines: list[str], max_text: int) -> list[str]:
    """`lines` up to `max_text` characters, with a last bullet saying so when the walk ran out of
    steps or text before the end. (A bullet is written after its children, so the walk may go
    past `max_text` by the bullets of a field's parents: they are cut here.)"""
    kept: list[str] = []
    room = max_text
    for line in lines:
        room -= len(line) + 1
        if room < 0:
            return [*kept, TOO_LARGE]
        kept.append(line)
    return [*kept, TOO_LARGE] if resolver.exhausted() else kept


def capped(line: str, limit: int = MAX_LINE) -> str:
    """`line`, cut to `limit` characters (with `…`)."""
    return line if len(line) <= limit else line[: limit - 1] + "…"


# --------------------------------------------------------------------------- bullets


def _children(
    resolver: Resolver, schema: Schema, mode: Mode, refs: tuple[str, ...], *, depth: int
) -> list[str]:
    fields, taken = _fields(resolver, schema, depth)
    if depth >= MAX_DEPTH or _overlaps(taken, refs):
        return []
    refs = (*refs, *taken)
    lines: list[str] = []
    for name, sub, marker in fields:
        if resolver.exhausted():
            break
        lines.extend(_field(resolver, name=name, raw=sub, marker=marker, mode=mode, refs=refs, depth=depth))
    return lines


def _field(
    resolver: Resolver,
    *,
    name: str,
    raw: Any,
    marker: bool | None,
    mode: Mode,
    refs: tuple[str, ...],
    depth: int,
) -> list[str]:
    schema, taken = resolver.resolve(raw)
    recursive = _overlaps(taken, refs)
    children = [] if recursive else _children(resolver, schema, mode, (*refs, *taken), depth=depth + 1)
    recursive = recursive or (
        not children and _overlaps(_fields(resolver, schema, depth)[1], (*refs, *taken))
    )
    parts = [type_label(resolver, schema, depth=depth + 1)]
    if marker is not None and (mode == "parameters" or not marker):
        parts.append("required" if marker else "optional")
    parts.extend(constraints(resolver, schema))
    line = f"{'  ' * depth}- {as_written(name)} ({', '.join(parts)})"
    # Draft-07 ignores keywords beside `$ref`, but a description there still helps the reader.
    text = description(raw) if isinstance(raw, Mapping) and "$ref" in raw else ""
    text = text or description(schema)
    if recursive:
        text = (
            f"{text} (same structure as an enclosing field)"
            if text
            else "Same structure as an enclosing field."
        )
    if text:
        line += f": {text}"
    line = capped(line)
    resolver.spend(1 + len(line) // _CHARACTERS_PER_STEP)
    resolver.write(len(line) + 1)
    return [line, *children]


def _overlaps(taken: tuple[str, ...], refs: tuple[str, ...]) -> bool:
    return any(ref in refs for ref in taken)


Fields = list[tuple[str, Any, bool | None]]


def _fields(resolver: Resolver, schema: Schema, depth: int) -> tuple[Fields, tuple[str, ...]]:
    """What goes under a field, and the references followed to find it: an object's properties
    (with required?), the fields of an array's items, or the fields of the one structured
    `oneOf`/`anyOf` alternative; several structured alternatives appear as `option 1`,
    `option 2`... (required? is None for those)."""
    properties = properties_of(schema)
    if properties or required_of(schema):
        required = dict.fromkeys(required_of(schema))  # a set that keeps the file's order
        found: Fields = [(n, s, n in required) for n, s in properties.items()]
        found += [(n, {}, True) for n in required if n not in properties]
        return found, ()
    if depth >= MAX_DEPTH:
        return [], ()
    items = schema.get("items")
    if isinstance(items, Mapping) and "array" in types_of(schema):
        item, taken = resolver.resolve(items)
        inner, more = _fields(resolver, item, depth + 1)
        return inner, (*taken, *more)
    structured: list[tuple[Any, tuple[str, ...]]] = []
    for branch in branches(schema):
        resolved, taken = resolver.resolve(branch)
        inner, more = _fields(resolver, resolved, depth + 1)
        if inner:
            structured.append((branch, (*taken, *more)))
    if len(structured) == 1:
        resolved, taken = resolver.resolve(structured[0][0])
        return _fields(resolver, resolved, depth + 1)[0], structured[0][1]
    return [(f"option {i}", branch, None) for i, (branch, _) in enumerate(structured, start=1)], ()


# --------------------------------------------------------------------------- one schema


def type_label(resolver: Resolver, schema: Schema, *, depth: int) -> str:
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        shown = [literal(v) for v in enum[:MAX_ENUM]]
        if len(enum) > MAX_ENUM:
            shown.append(f"… ({len(enum) - MAX_ENUM} more)")
        return " | ".join(shown)
    if "const" in schema:
        return literal(schema["const"])
    declared = schema.get("type")
    alternatives = branches(schema)
    if declared is None and alternatives and depth < MAX_DEPTH:
        labels = [type_label(resolver, resolver.resolve(b)[0], depth=depth + 1) for b in alternatives]
        return " | ".join(dict.fromkeys(labels))
    types = types_of(schema)
    if not types:
        return "any"
    return " | ".join(_one_type(resolver, schema, t, depth) for t in types)


def _one_type(resolver: Resolver, schema: Schema, kind: str, depth: int) -> str:
    if kind == "string" and isinstance(schema.get("format"), str):
        return f"{as_written(schema['format'])} string"
    if kind == "array":
        items = schema.get("items")
        if isinstance(items, list):
            labels = [type_label(resolver, resolver.resolve(i)[0], depth=depth + 1) for i in items]
            return f"array [{', '.join(labels)}]"
        if isinstance(items, Mapping) and items and depth < MAX_DEPTH:
            inner = type_label(resolver, resolver.resolve(items)[0], depth=depth + 1)
            return f"array of {f'({inner})' if ' | ' in inner else inner}"
        return "array"
    if kind == "object" and not properties_of(schema):
        values = schema.get("additionalProperties")
        if isinstance(values, Mapping) and values and depth < MAX_DEPTH:
            inner = type_label(resolver, resolver.resolve(values)[0], depth=depth + 1)
            return f"object with {f'({inner})' if ' | ' in inner else inner} values"
    return kind


def constraints(resolver: Resolver, schema: Schema) -> list[str]:
    facts = _number_facts(schema) + _string_facts(schema)
    low, high = _int(schema, "minItems"), _int(schema, "maxItems")
    facts += _count(low, high, "item")
    if schema.get("uniqueItems") is True:
        facts.append("unique")
    facts += _count(_int(schema, "minProperties"), _int(schema, "maxProperties"), "field")
    items = schema.get("items")
    if isinstance(items, Mapping):
        item = resolver.resolve(items)[0]
        item_facts = _number_facts(item) + _string_facts(item)
        if item_facts:
            facts.append(f"each {', '.join(item_facts)}")
    if "default" in schema:
        shown = literal(schema["default"])
        facts.append(f"default {shown if len(shown) <= MAX_DEFAULT else shown[:MAX_DEFAULT] + '…'}")
    if schema.get("deprecated") is True:
        facts.append("deprecated")
    return facts


def _number_facts(schema: Schema) -> list[str]:
    low, high = _num(schema, "minimum"), _num(schema, "maximum")
    above, below = _num(schema, "exclusiveMinimum"), _num(schema, "exclusiveMaximum")
    facts: list[str] = []
    if low is not None and high is not None and above is None and below is None:
        facts.append(f"{_n(low)} to {_n(high)}")
    else:
        facts += [
            f"{op} {_n(v)}"
            for op, v in ((">=", low), (">", above), ("<=", high), ("<", below))
            if v is not None
        ]
    step = _num(schema, "multipleOf")
    if step is not None:
        facts.append(f"multiple of {_n(step)}")
    return facts


def _string_facts(schema: Schema) -> list[str]:
    low, high = _int(schema, "minLength"), _int(schema, "maxLength")
    facts = ["non-empty"] if low == 1 and high is None else _count(low, high, "char")
    pattern = schema.get("pattern")
    if isinstance(pattern, str):
        fence = "``" if "`" in pattern else "`"
        pad = " " if fence == "``" else ""
        facts.append(f"pattern {fence}{pad}{as_written(pattern)}{pad}{fence}")
    return facts


def as_written(value: str) -> str:
    """A value of the schema (a property name, a format, a pattern) that the agent may have to
    send as it is: itself, or as JSON text when it holds a line break or a character that is not
    printable, so that it shows exactly and can start no line of its own (`\\n## Authentication`)."""
    return value if value.isprintable() else json.dumps(value, ensure_ascii=False)


def _count(low: int | None, high: int | None, noun: str) -> list[str]:
    def plural(n: int) -> str:
        return f"{n} {noun}" if n == 1 else f"{n} {noun}s"

    if low and high is not None:
        return [plural(low)] if low == high else [f"{low}–{plural(high)}"]
    if low:
        return [f"at least {plural(low)}"]
    if high is not None:
        return [f"at most {plural(high)}"]
    return []


def description(schema: Schema) -> str:
    """A schema's description (else its title) on one line, without what a reader cannot see:
    schemas are kept as their app wrote them (they validate arguments), so their texts are
    cleaned here, where the guide shows them."""
    for key in ("description", "title"):
        value = schema.get(key)
        if isinstance(value, str) and (shown := shown_text(value, one_line=True)).strip():
            return _SPACES.sub(" ", shown).strip()
    return ""


def _num(schema: Schema, key: str) -> float | None:
    value = schema.get(key)
    return value if isinstance(value, int | float) and not isinstance(value, bool) else None


def _int(schema: Schema, key: str) -> int | None:
    value = schema.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _n(value: float) -> str:
    if isinstance(value, int):  # never through float(): a large integer has no float
        return str(value)
    return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)
