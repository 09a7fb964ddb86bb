"""`${name}` placeholders in JSON templates, and `{name}` / `${name}` placeholders in URL paths.

Pure functions, no I/O. A placeholder names an argument; `${a.b}` reaches into a nested object
(`${items.0}` into an array) unless an argument is literally called `a.b`. Substitution is one
pass over the template: text that comes from an argument is never searched for placeholders
again, so a value such as `"${other}"` arrives as those eight characters.

Rules for JSON templates (dialect B `body`, `query_params`, `headers`, and the other bindings):

- a string that is exactly one placeholder becomes the argument's value with its JSON type
  (array, object, number, boolean, null, string);
- placeholders inside a longer string become the value's text: strings as they are, anything
  else as compact JSON (`true`, `3`, `[1,2]`, `{"a":1}`);
- a missing argument (an optional parameter the caller left out) makes a whole-value
  placeholder `OMIT`: the key is dropped from its object, the item from its array; inside a
  longer string it becomes the empty string;
- object keys and non-string values of the template are kept as they are.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final, final

NAME_PATTERN: Final = r"[A-Za-z_][A-Za-z0-9_-]*(?:\.[A-Za-z0-9_-]+)*"
PLACEHOLDER: Final = re.compile(r"\$\{(" + NAME_PATTERN + r")\}")
WHOLE_PLACEHOLDER: Final = re.compile(r"\$\{(" + NAME_PATTERN + r")\}\Z")
PATH_PLACEHOLDER: Final = re.compile(r"\$?\{(" + NAME_PATTERN + r")\}")


@final
class _Omit:
    """The value of a whole-value placeholder whose argument is missing: leave the slot out."""

    def __repr__(self) -> str:
        return "OMIT"


OMIT: Final = _Omit()


@final
class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Final = _Missing()


@dataclass(frozen=True)
class Substituted:
    """A substituted template (`OMIT` when the whole template was a missing argument) and the
    top-level argument names its placeholders referred to."""

    value: Any
    consumed: frozenset[str]


@dataclass(frozen=True)
class SubstitutedPath:
    """A URL path (or query string) with its placeholders replaced by encoded values.

    `missing` names placeholders whose argument is absent or null, `empty` those whose value
    encodes to nothing: the caller decides (an HTTP path refuses both rather than send an empty
    segment, which some servers collapse into a different path)."""

    text: str
    consumed: frozenset[str]
    missing: tuple[str, ...] = ()
    empty: tuple[str, ...] = ()


def top_level_name(name: str, arguments: Mapping[str, Any]) -> str:
    """The argument a placeholder name consumes: `a.b` consumes `a`, unless `a.b` is an argument."""
    return name if name in arguments else name.split(".", 1)[0]


def lookup(arguments: Mapping[str, Any], name: str) -> Any:
    """The argument a placeholder names, or `MISSING`."""
    if name in arguments:
        return arguments[name]
    value: Any = arguments
    for part in name.split("."):
        if isinstance(value, Mapping) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return MISSING
    return value


def text_of(value: Any) -> str:
    """A value as text: strings unchanged, everything else as compact JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def placeholder_names(template: Any) -> list[str]:
    """Every `${name}` in a JSON template, in order (keys are not templates)."""
    if isinstance(template, str):
        return PLACEHOLDER.findall(template)
    if isinstance(template, Mapping):
        return [n for v in template.values() for n in placeholder_names(v)]
    if isinstance(template, list | tuple):
        return [n for v in template for n in placeholder_names(v)]
    return []


def substitute(template: Any, arguments: Mapping[str, Any]) -> Substituted:
    """Replace the placeholders of a JSON template with argument values (rules above)."""
    consumed: set[str] = set()
    value = _substitute(template, arguments, consumed)
    return Substituted(value, frozenset(consumed))


def _substitute(template: Any, arguments: Mapping[str, Any], consumed: set[str]) -> Any:
    if isinstance(template, str):
        return _substitute_text(template, arguments, consumed)
    if isinstance(template, Mapping):
        result: dict[str, Any] = {}
        for key, item in template.items():
            value = _substitute(item, arguments, consumed)
            if value is not OMIT:
                result[key] = value
        return result
    if isinstance(template, list | tuple):
        items = (_substitute(item, arguments, consumed) for item in template)
        return [item for item in items if item is not OMIT]
    return template


def _substitute_text(template: str, arguments: Mapping[str, Any], consumed: set[str]) -> Any:
    whole = WHOLE_PLACEHOLDER.match(template)
    if whole is not None:
        name = whole.group(1)
        consumed.add(top_level_name(name, arguments))
        value = lookup(arguments, name)
        return OMIT if value is MISSING else value

    def replace(match: re.Match[str]) -> str:
        name = match.group(1)
        consumed.add(top_level_name(name, arguments))
        value = lookup(arguments, name)
        return "" if value is MISSING else text_of(value)

    return PLACEHOLDER.sub(replace, template)


def substitute_path(
    template: str, arguments: Mapping[str, Any], encode: Callable[[Any], str]
) -> SubstitutedPath:
    """Replace `{name}` and `${name}` in a URL path (or query string) with `encode(value)`.

    The literal text of the template is kept as written; only the values are encoded, by the
    caller's `encode`, which must make them unable to change the URL's structure."""
    consumed: set[str] = set()
    missing: list[str] = []
    empty: list[str] = []

    def replace(match: re.Match[str]) -> str:
        name = match.group(1)
        consumed.add(top_level_name(name, arguments))
        value = lookup(arguments, name)
        if value is MISSING or value is None:
            missing.append(name)
            return ""
        encoded = encode(value)
        if not encoded:
            empty.append(name)
        return encoded

    text = PATH_PLACEHOLDER.sub(replace, template)
    return SubstitutedPath(
        text, frozenset(consumed), tuple(dict.fromkeys(missing)), tuple(dict.fromkeys(empty))
    )
