"""Shared machinery for the per-dialect raw models: strict parsing into problems with pointers.

Raw models mirror a dialect's field tables exactly. They are strict (no "1" → 1 coercion) and
keep unknown fields, which become warnings ("did you mean ...?") rather than silent drops.
"""

from __future__ import annotations

import difflib
import functools
import json
import re
import typing
from typing import Any, Final, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError, ValidationInfo
from pydantic.alias_generators import to_camel

from ..errors import Problem, json_pointer
from .quoting import clip, json_excerpt, quoted, shortened


class RawModel(BaseModel):
    model_config = ConfigDict(strict=True, extra="allow", frozen=True)


_Raw = TypeVar("_Raw", bound=RawModel)

KNOWN_FIELDS_ONLY: Final = object()
"""The validation context of `validated(..., known_fields_only=True)`."""


def validated(model: type[_Raw], document: Any, *, known_fields_only: bool = False) -> _Raw:
    """`model.model_validate(document)`; with `known_fields_only`, a field that no raw model knows,
    anywhere in the document, is an error too (pydantic's `extra="forbid"` for this validation;
    a validator that validates a model itself asks `extra_of` for it). Then there is no unknown
    field to warn of: most files, which so skip the walk of `unknown_field_warnings`."""
    if known_fields_only:
        return model.model_validate(document, extra="forbid", context=KNOWN_FIELDS_ONLY)
    return model.model_validate(document)


def extra_of(info: ValidationInfo) -> typing.Literal["forbid"] | None:
    """What a validator passes as `extra` to a model's validation it starts itself."""
    return "forbid" if info.context is KNOWN_FIELDS_ONLY else None


class RawParse(Protocol):
    """A dialect's parse of a document (`validated`): raises pydantic's ValidationError."""

    def __call__(self, document: dict[str, Any], *, known_fields_only: bool = False) -> BaseModel: ...


def raw_model(parse: RawParse, document: dict[str, Any]) -> tuple[BaseModel, list[Problem]]:
    """The document's raw model and a warning for each field no raw model knows; pydantic's
    ValidationError for structural errors. Most files have no unknown field, which the parse
    for known fields only tells without walking the model (`unknown_field_warnings`)."""
    try:
        return parse(_without_allowed_extras(document), known_fields_only=True), []
    except ValidationError:  # an unknown field, or errors: parsed again to tell them apart
        model = parse(document, known_fields_only=False)
        return model, unknown_field_warnings(model)


def _without_allowed_extras(document: dict[str, Any]) -> dict[str, Any]:
    """The document without a top-level `$schema` or `$comment` (`ALLOWED_EXTRA_KEYS`, read by
    nothing): where editors put `$schema`, which would otherwise cost such files a second parse.
    (An `x-` key costs its file that parse: looking for one costs every file ~1 %.)"""
    if ALLOWED_EXTRA_KEYS.isdisjoint(document):
        return document
    return {key: value for key, value in document.items() if key not in ALLOWED_EXTRA_KEYS}


class CamelRawModel(RawModel):
    model_config = ConfigDict(
        alias_generator=to_camel,
        validate_by_alias=True,
        validate_by_name=False,
        serialize_by_alias=True,
    )


_JSON_TYPE_NAMES: dict[type, str] = {
    str: "a string",
    bool: "a boolean",
    int: "an integer",
    float: "a number",
    list: "an array",
    dict: "an object",
    type(None): "null",
}

_EXPECTED: dict[str, str] = {
    "string_type": "a string",
    "int_type": "an integer",
    "float_type": "a number",
    "bool_type": "a boolean",
    "list_type": "an array",
    "tuple_type": "an array",
    "dict_type": "an object",
    "model_type": "an object",
    "model_attributes_type": "an object",
}


def describe_json(value: Any) -> str:
    kind = _JSON_TYPE_NAMES.get(type(value), type(value).__name__)
    if isinstance(value, str | int | float | bool):
        shown = json.dumps(value, ensure_ascii=False)
        if len(shown) > 60:
            shown = shown[:57] + "..."
        return f"{kind} ({shown})"
    return kind


_UNITS: dict[str, tuple[str, str]] = {  # fields whose number has a unit: (unit, a typical value)
    "timeout": ("milliseconds", "30000"),
    "expiresIn": ("seconds", "7200"),
    "expires_in": ("seconds", "7200"),
}


def correct_example(kind: str, given: Any) -> str:
    """What a value of the expected JSON type looks like, made from the given one where it can
    be (`"memo"` → `["memo"]`, `"10s"` → `10`, `3` → `"3"`), as JSON."""
    scalar = isinstance(given, str | int | float | bool) and len(str(given)) <= 40
    if kind in ("list_type", "tuple_type"):
        return json.dumps([given] if scalar else ["…"], ensure_ascii=False)
    if kind in ("int_type", "float_type"):
        number = re.search(r"-?\d+(?:\.\d+)?", str(given)) if scalar else None
        if number is None:
            return "1"
        return number[0] if kind == "float_type" else str(int(float(number[0])))
    if kind == "string_type":
        return json.dumps(
            str(given) if scalar and not isinstance(given, bool) else "text", ensure_ascii=False
        )
    if kind == "bool_type":
        return "false" if str(given).strip().lower() in ("false", "no", "0", "off", "") else "true"
    return '{"name": "value"}'


def _field_label(loc: tuple[str | int, ...]) -> str:
    tail = [shortened(p) for p in loc if isinstance(p, str)][-2:]
    if tail[-1:] == ["type"] and tail[:1] in (["execution"], ["auth"]):
        return f"{tail[0]} type"
    if tail[-1:] == ["automation"]:
        return "automation type"
    return f"'{tail[-1]}'" if tail else "value"


def problems_from_validation(error: ValidationError, prefix: tuple[str | int, ...] = ()) -> list[Problem]:
    problems: list[Problem] = []
    for item in error.errors(include_url=False):
        loc = tuple(p for p in item["loc"] if isinstance(p, str | int))
        pointer = json_pointer(*prefix, *loc)
        kind = item["type"]
        given = item.get("input")
        if kind == "missing":
            message = f"required field {_field_label(loc)} is missing"
        elif kind in _EXPECTED:
            unit = _UNITS.get(str(loc[-1])) if loc else None
            example = f"{unit[1]} ({unit[0]})" if unit else correct_example(kind, given)
            message = (
                f"{_field_label(loc)} must be {_EXPECTED[kind]}, not {describe_json(given)}; "
                f"for example {example}"
            )
        elif kind == "literal_error":
            expected = item.get("ctx", {}).get("expected", "")
            message = f"unknown {_field_label(loc)} {json_excerpt(given)}; expected {expected}"
        elif kind in ("too_short", "string_too_short"):
            message = f"{_field_label(loc)} must not be empty"
        else:
            message = clip(item["msg"], 300)
        problems.append(Problem(pointer, message))
    return problems


ALLOWED_EXTRA_KEYS = frozenset({"$schema", "$comment"})


def unknown_field_warnings(model: BaseModel) -> list[Problem]:
    """Warn about fields a raw model does not know, recursively, with a spelling suggestion.
    (Every file is walked, and almost none has such a field: plain calls that fill one list.)"""
    found: list[Problem] = []
    _unknown_fields(model, (), found)
    return found


def _unknown_fields(model: BaseModel, prefix: tuple[str | int, ...], found: list[Problem]) -> None:
    extra = model.__pydantic_extra__  # `model_extra`, without its property
    if extra:
        for key in extra:
            if key in ALLOWED_EXTRA_KEYS or key.startswith("x-"):
                continue
            known = [info.alias or name for name, info in type(model).model_fields.items()]
            close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
            hint = f"; did you mean '{close[0]}'?" if close else f"; known fields: {', '.join(known)}"
            message = f"unknown field {quoted(key)} is ignored{hint}"
            found.append(Problem(json_pointer(*prefix, key), message, "warning"))
    for name, alias in _model_bearing_fields(type(model)):
        value = getattr(model, name)
        if value is not None:
            _walk(value, (*prefix, alias), found)


@functools.cache
def _model_bearing_fields(cls: type[BaseModel]) -> tuple[tuple[str, str], ...]:
    """Fields whose type can hold a raw model: the only ones worth descending into."""
    return tuple(
        (name, info.alias or name)
        for name, info in cls.model_fields.items()
        if _mentions_model(info.annotation)
    )


def _mentions_model(annotation: Any) -> bool:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return True
    return any(_mentions_model(arg) for arg in typing.get_args(annotation))


def _walk(value: Any, prefix: tuple[str | int, ...], found: list[Problem]) -> None:
    if isinstance(value, BaseModel):
        _unknown_fields(value, prefix, found)
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            _walk(item, (*prefix, index), found)
    elif isinstance(value, dict):
        for key, item in value.items():
            _walk(item, (*prefix, key), found)
