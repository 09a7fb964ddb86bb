"""Plausible example arguments for a tool, built from its JSON Schema (Draft-07) `parameters`.

Every value is chosen from a list of candidates in order of preference: the schema's own
`examples`/`example`, its `const`, `default` or first `enum` value, a value quoted in its
description ("e.g. 200", `e.g. ["pdf", "docx"]`), guesses from the property's name, a value for
its `format`, then a value of its type within its bounds (or one matching its `pattern`). Name
guesses come before the generic `format` value because they are more specific ("end" gets a
later time than "start") and are kept only when the format accepts them. The first candidate
the schema accepts wins, checked by the same validator the gateway uses, so an example is
valid whenever any candidate is; when none is, the first is kept.

An object shows all its required properties and a few optional ones: those without a default
first; one with a default only when there is nothing else, and then with another value (an
example that repeats the default teaches nothing). Two optional properties whose descriptions
name each other ("or give durationMinutes") are alternatives, so only the first is shown.

The work is bounded whatever the schema (see `schema.py`): resolutions, validations and compiled
validators all draw on one `Resolver`'s steps, and a value from the descriptor too large to be a
useful example (`MAX_CANDIDATE_SIZE`) is never validated. Once the steps are used up the builder
stops trying and returns what it has.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from typing import Any

import jsonschema_rs

from . import hints
from .patterns import pattern_example
from .schema import MAX_DEPTH, Resolver, Schema, branches, properties_of, required_of, types_of

MAX_OPTIONAL = 3  # optional properties shown at the top level of an example
MAX_NESTED_OPTIONAL = 2  # ... and inside nested objects
# A schema may ask for a billion characters or items; an example never holds more than these
# (it then fails the schema, and the builder shows its best attempt instead of exhausting memory).
MAX_EXAMPLE_CHARACTERS = 1_000
MAX_EXAMPLE_ITEMS = 20
MAX_CANDIDATE_SIZE = 500  # JSON values plus string characters in one value the descriptor offers
MAX_GIVEN_CANDIDATES = 50  # values tried from one list the descriptor offers (`examples`, `enum`)
MAX_ALTERNATIVES_CHECKED = 64  # optional properties compared with each other (`_related`)
_DEFINITIONS_PER_STEP = 20  # compiling a validator costs a step per this many carried definitions
_NOTHING: Any = object()  # no value: leave an optional property out


def example_arguments(schema: Schema) -> dict[str, Any]:
    """Arguments for a call whose `parameters` is `schema`: every required property and a few
    useful optional ones, valid against the schema whenever the builder can find such values."""
    builder = _Builder(schema)
    value = builder.value(schema, name="", depth=0, refs=())
    return value if isinstance(value, dict) else {}


class _Builder:
    def __init__(self, root: Schema) -> None:
        self.resolver = Resolver(root)
        self._validators: dict[int, Any] = {}

    # ------------------------------------------------------------------ choosing

    def value(
        self, raw: Any, *, name: str, depth: int, refs: tuple[str, ...], avoid_default: bool = False
    ) -> Any:
        schema, taken = self.resolver.resolve(raw)
        if depth > MAX_DEPTH or self.resolver.exhausted() or any(ref in refs for ref in taken):
            return _NOTHING
        refs = (*refs, *taken)
        first = fallback = _NOTHING
        default = schema.get("default", _NOTHING) if avoid_default else _NOTHING
        for candidate in self._candidates(schema, name, depth, refs, avoid_default):
            if candidate is _NOTHING:
                continue
            if self.resolver.exhausted():  # no steps left to check it, or to build more
                first = candidate if first is _NOTHING else first
                break
            if self.fits(schema, candidate):
                if default is _NOTHING or candidate != default:
                    return candidate
                if fallback is _NOTHING:
                    fallback = candidate
            elif first is _NOTHING:
                first = candidate
        return fallback if fallback is not _NOTHING else first

    def fits(self, schema: Schema, value: Any) -> bool:
        key = id(schema)
        if key not in self._validators:
            standalone = self.resolver.standalone(schema)
            self.resolver.spend(1 + len(standalone.get("definitions") or ()) // _DEFINITIONS_PER_STEP)
            try:
                self._validators[key] = jsonschema_rs.Draft7Validator(standalone)
            except (ValueError, TypeError):  # a schema the validator cannot compile: nothing to check
                self._validators[key] = None
        validator = self._validators[key]
        self.resolver.spend(1)
        return validator is None or bool(validator.is_valid(value))

    def _candidates(
        self, schema: Schema, name: str, depth: int, refs: tuple[str, ...], avoid_default: bool
    ) -> Iterator[Any]:
        default = _usable(schema.get("default", _NOTHING))
        if isinstance(schema.get("examples"), list):
            yield from map(_usable, schema["examples"][:MAX_GIVEN_CANDIDATES])
        if "example" in schema:
            yield _usable(schema["example"])
        if "const" in schema:
            yield _usable(schema["const"])
        if default is not _NOTHING and not avoid_default:
            yield default
        enum = schema.get("enum")
        if isinstance(enum, list):
            yield from (_usable(v) for v in enum[:MAX_GIVEN_CANDIDATES] if v != default)
            if default is not _NOTHING:
                yield default
            return
        if avoid_default and isinstance(default, bool):
            yield not default
        quoted = hints.quoted_examples(schema.get("description"))
        yield from (_usable(v) for v in quoted if isinstance(v, list | dict))
        for branch in branches(schema):
            yield self.value(branch, name=name, depth=depth + 1, refs=refs)
        types = types_of(schema) or ["string"]
        for kind in sorted(types, key=lambda t: t == "null"):
            yield from self._typed(kind, schema, name, depth, refs)
        if default is not _NOTHING:
            yield default

    def _typed(
        self, kind: str, schema: Schema, name: str, depth: int, refs: tuple[str, ...]
    ) -> Iterator[Any]:
        if kind == "object":
            yield from self._objects(schema, depth, refs)
        elif kind == "array":
            yield from self._arrays(schema, name, depth, refs)
        elif kind == "string":
            yield from self._strings(schema, name)
        elif kind in ("integer", "number"):
            yield from _numbers(schema, name, integer=kind == "integer")
        elif kind == "boolean":
            yield True
        elif kind == "null":
            yield None

    # ------------------------------------------------------------------ structures

    def _objects(self, schema: Schema, depth: int, refs: tuple[str, ...]) -> Iterator[dict[str, Any]]:
        properties = properties_of(schema)
        required = list(dict.fromkeys(required_of(schema)))
        is_required = set(required)
        optional = [n for n in properties if n not in is_required]
        considered = optional[:MAX_ALTERNATIVES_CHECKED]
        resolved = {n: self.resolver.resolve(properties[n])[0] for n in considered}
        limit = MAX_OPTIONAL if depth == 0 else MAX_NESTED_OPTIONAL
        chosen: list[str] = []
        for name in (n for n in considered if not _has_default(resolved[n])):
            if len(chosen) < limit and not any(_related(name, other, resolved) for other in chosen):
                chosen.append(name)
        if not chosen:
            chosen = [n for n in considered if _has_default(resolved[n])][:1]
        for picked in (chosen, [], optional):
            yield self._object(
                schema, properties=properties, required=required, optional=picked, depth=depth, refs=refs
            )

    def _object(
        self,
        schema: Schema,
        *,
        properties: dict[str, Any],
        required: list[str],
        optional: list[str],
        depth: int,
        refs: tuple[str, ...],
    ) -> dict[str, Any]:
        result: dict[str, Any] = {}
        required_names, optional_names = set(required), set(optional)
        for name in [*properties, *(r for r in required if r not in properties)]:
            is_required = name in required_names
            if not is_required and name not in optional_names:
                continue
            sub = properties.get(name, schema.get("additionalProperties", {}))
            value = self.value(sub, name=name, depth=depth + 1, refs=refs, avoid_default=not is_required)
            if value is _NOTHING or (not is_required and value in ({}, [])):
                if not is_required:
                    continue
                value = _minimal(self.resolver.resolve(sub)[0])
            result[name] = value
        return result

    def _arrays(self, schema: Schema, name: str, depth: int, refs: tuple[str, ...]) -> Iterator[list[Any]]:
        items = schema.get("items", {})
        low = schema.get("minItems", 0)
        high = schema.get("maxItems")
        if isinstance(items, list):  # tuple validation: one value per position
            values = [self.value(s, name=name, depth=depth + 1, refs=refs) for s in items]
            yield [
                _minimal(self.resolver.resolve(s)[0]) if v is _NOTHING else v
                for s, v in zip(items, values, strict=True)
            ]
            return
        count = max(1, low if isinstance(low, int) else 0)
        if isinstance(high, int):
            count = min(count, high)
        count = min(count, MAX_EXAMPLE_ITEMS)
        item_name = hints.singular(name)
        first = self.value(items, name=item_name, depth=depth + 1, refs=refs)
        if first is _NOTHING or count == 0:
            yield []
            return
        values = [first]
        item_schema = self.resolver.resolve(items)[0]
        for candidate in self._variants(item_schema, item_name, first, depth, refs):
            if len(values) >= count:
                break
            if candidate not in values and self.fits(item_schema, candidate):
                values.append(candidate)
        while len(values) < count:
            values.append(first)
        yield values
        if count > 0 and not (isinstance(low, int) and low > 0):
            yield []  # an empty list is valid when no item could be

    def _variants(
        self, schema: Schema, name: str, first: Any, depth: int, refs: tuple[str, ...]
    ) -> Iterator[Any]:
        """Other values for array items, for arrays that need several distinct ones."""
        yield from self._candidates(schema, name, depth + 1, refs, avoid_default=False)
        for n in range(2, 50):
            if isinstance(first, bool):
                yield not first
            elif isinstance(first, int | float):
                yield first + n - 1
            elif isinstance(first, str):
                yield f"{first}{n}"
                yield f"{first[:-1]}{n}" if first else str(n)

    # ------------------------------------------------------------------ scalars

    def _strings(self, schema: Schema, name: str) -> Iterator[str]:
        for quoted in hints.quoted_examples(schema.get("description")):
            if isinstance(quoted, str):
                yield _usable(quoted)
        yield from hints.strings_for(name, schema.get("description"))  # kept only if format and pattern fit
        fmt = schema.get("format")
        if isinstance(fmt, str) and fmt in hints.FORMATS:
            yield from hints.FORMATS[fmt]
        pattern = schema.get("pattern")
        low = schema.get("minLength", 0) if isinstance(schema.get("minLength"), int) else 0
        high = schema.get("maxLength") if isinstance(schema.get("maxLength"), int) else None
        if isinstance(pattern, str):
            for extra in (0, 1, 2, 4, 8, max(low, 1)):
                found = pattern_example(pattern, extra=extra)
                if found is not None:
                    yield found
        base = "example"
        if high is not None and high < len(base):
            base = base[:high]
        yield base + "x" * min(max(0, low - len(base)), MAX_EXAMPLE_CHARACTERS)


def _usable(value: Any) -> Any:
    """A value the descriptor offers as an example (or default, enum member...), or `_NOTHING`
    when it is too large to be a useful one: validating it could cost more than the whole guide."""
    return value if value is _NOTHING or _small(value) else _NOTHING


def _small(value: Any) -> bool:
    """Whether `value` holds at most `MAX_CANDIDATE_SIZE` values and characters, found without
    walking more of it than that."""
    room = MAX_CANDIDATE_SIZE
    pending = [value]
    while pending:
        item = pending.pop()
        room -= 1 + (len(item) if isinstance(item, str) else 0)
        if isinstance(item, list | dict):
            if len(item) > room:
                return False
            pending.extend(item)  # a dict's keys: strings, counted with their length
            if isinstance(item, dict):
                pending.extend(item.values())
        if room < 0:
            return False
    return True


def _has_default(schema: Schema) -> bool:
    """A default worth keeping out of examples; an empty one ("", [], {}) just means "none"."""
    return "default" in schema and schema["default"] not in ("", [], {}, None)


def _related(name: str, other: str, schemas: dict[str, Schema]) -> bool:
    """Whether one property's description names the other ("or give durationMinutes", "used only
    when sessionId is omitted"): such pairs are usually alternatives, so an example shows one."""

    def mentions(text: Any, word: str) -> bool:
        if not isinstance(text, str):
            return False
        found = re.compile(rf"(?<![\w-]){re.escape(word)}(?![\w-])").search(
            text, 0, hints.SEARCHED_CHARACTERS
        )
        return found is not None

    return mentions(schemas[name].get("description"), other) or mentions(
        schemas[other].get("description"), name
    )


def _numbers(schema: Schema, name: str, *, integer: bool) -> Iterator[int | float]:
    for quoted in hints.quoted_examples(schema.get("description")):
        if isinstance(quoted, int | float) and not isinstance(quoted, bool):
            yield int(quoted) if integer and float(quoted).is_integer() else quoted
    guess = hints.number_for(name, integer=integer)
    if guess is not None:
        yield guess
    low, high = _bounds(schema, integer=integer)
    if low is not None and high is not None:
        # Floats are halved first: `high - low` overflows to infinity near the float limits.
        middle = low + (high - low) // 2 if integer else low / 2 + high / 2
        yield from (_tidy(middle), _tidy(low), _tidy(high))
    elif low is not None:
        yield _tidy(max(low, 1))
    elif high is not None:
        yield _tidy(min(high, 1))
    else:
        yield 1
    step = schema.get("multipleOf")
    if isinstance(step, int | float) and not isinstance(step, bool) and step > 0:
        multiple = _first_multiple(step, low if low is not None else 0)
        if multiple is not None:
            yield int(multiple) if integer or float(multiple).is_integer() else multiple


def _first_multiple(step: float, start: float) -> float | None:
    """The smallest multiple of `step` from `start` on; None when it is beyond every float (a tiny
    step from a huge start)."""
    try:
        multiple = math.ceil(start / step) * step
        return multiple if math.isfinite(multiple) else None
    except OverflowError:  # `ceil` of infinity, or an integer product too large for a float
        return None


def _tidy(value: float) -> int | float:
    """`50.0` → `50`: whole numbers read better without a fraction, and still validate."""
    if isinstance(value, int):  # already whole, and perhaps too large for float()
        return value
    return int(value) if value.is_integer() else value


def _bounds(schema: Schema, *, integer: bool) -> tuple[float | None, float | None]:
    def number(key: str) -> float | None:
        value = schema.get(key)
        return value if isinstance(value, int | float) and not isinstance(value, bool) else None

    low, high = number("minimum"), number("maximum")
    nudge = 1 if integer else 0.5
    exclusive_low, exclusive_high = number("exclusiveMinimum"), number("exclusiveMaximum")
    if exclusive_low is not None and (low is None or exclusive_low >= low):
        low = math.floor(exclusive_low) + 1 if integer else exclusive_low + nudge
    if exclusive_high is not None and (high is None or exclusive_high <= high):
        high = math.ceil(exclusive_high) - 1 if integer else exclusive_high - nudge
    if integer:
        low = math.ceil(low) if low is not None else None
        high = math.floor(high) if high is not None else None
    return low, high


def _minimal(schema: Schema) -> Any:
    """The smallest value of a schema's first type, for a required property the builder cannot
    fill (a recursive reference, or a structure nested too deep)."""
    kind = (types_of(schema) or ["string"])[0]
    return {"object": {}, "array": [], "string": "", "integer": 0, "number": 0, "boolean": False}.get(kind)
