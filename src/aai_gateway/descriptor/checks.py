"""Semantic checks shared by the dialects. Each takes a value and its JSON pointer, returns problems."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Iterator
from contextvars import ContextVar
from typing import Any
from urllib.parse import urlsplit

import jsonschema_rs

from ..errors import Problem, json_pointer
from .http_headers import header_name_problem, header_value_problem
from .platforms import ExecutionType, Platform, allowed_execution_types, fits_platform
from .quoting import clip, json_excerpt, listed, quoted, shortened
from .schema_cost import MAX_CHECKS, CostlySchemaError, costly_value
from .semver import MAX_VERSION_LENGTH, parse_version

APP_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}\Z")  # \Z: `$` lets a final newline in
TOOL_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,63}\Z")
PLACEHOLDER = re.compile(r"\$\{([^}]*)\}")
PATH_PLACEHOLDER = re.compile(r"(?<!\$)\{([^{}]*)\}")
PLACEHOLDER_NAME_PATTERN = r"[A-Za-z_][A-Za-z0-9_-]*(?:\.[A-Za-z0-9_-]+)*"
PLACEHOLDER_NAME = re.compile(rf"^{PLACEHOLDER_NAME_PATTERN}\Z")
DRAFT7_URIS = frozenset({"http://json-schema.org/draft-07/schema#", "http://json-schema.org/draft-07/schema"})

_DRAFT7_META = jsonschema_rs.Draft7Validator({"$ref": "http://json-schema.org/draft-07/schema#"})


def check_app_id(app_id: str, pointer: str) -> Iterator[Problem]:
    if not APP_ID.match(app_id):
        yield Problem(
            pointer,
            f"app id {quoted(app_id)} is not usable: use reverse-DNS letters, digits, '.', '-' or '_' "
            "(for example 'com.example.mail'), at most 128 characters",
        )


def check_version(text: str, pointer: str, *, allow_two_part: bool) -> Iterator[Problem]:
    form = "MAJOR.MINOR.PATCH or MAJOR.MINOR" if allow_two_part else "MAJOR.MINOR.PATCH"
    if len(text) > MAX_VERSION_LENGTH:
        yield Problem(
            pointer,
            f"version {quoted(text)} is too long: a semantic version has at most "
            f"{MAX_VERSION_LENGTH} characters; write it as {form}, e.g. '1.0.0'",
        )
    elif parse_version(text, allow_two_part=allow_two_part) is None:
        yield Problem(
            pointer, f"version {quoted(text)} is not a semantic version; write it as {form}, e.g. '1.0.0'"
        )


def check_tool_names(named: Iterable[tuple[str, str]]) -> Iterator[Problem]:
    """`named` holds (tool name, pointer of the tool object) in file order."""
    first_seen: dict[str, str] = {}
    for name, tool_pointer in named:
        pointer = f"{tool_pointer}/name"
        if not TOOL_NAME.match(name):
            yield Problem(
                pointer,
                f"tool name {quoted(name)} must start with a letter or '_' and use only letters, digits, "
                "'_', '-' or '.', at most 64 characters",
            )
        if name in first_seen:
            yield Problem(
                pointer, f"duplicate tool name {quoted(name)} (first defined at {first_seen[name]})"
            )
        else:
            first_seen[name] = tool_pointer


def refuse_remote(uri: str) -> Any:
    raise ValueError(
        f"remote reference {quoted(uri)} is not allowed; inline it or use a local '#/definitions/...'"
    )


def check_schema(schema: Any, pointer: str, *, what: str, must_be_object: bool) -> list[Problem]:
    """`schema` must be a valid JSON Schema Draft-07 document (and describe an object if asked)."""
    if not isinstance(schema, dict):
        return [Problem(pointer, f"{what} must be a JSON Schema object, not {type(schema).__name__}")]
    declared = schema.get("$schema")
    if declared is not None and (not isinstance(declared, str) or declared not in DRAFT7_URIS):
        return [
            Problem(
                json_pointer_join(pointer, "$schema"),
                f"{what} declare $schema {_excerpt(declared)}; AAI schemas are JSON Schema Draft-07 "
                "(remove $schema or use 'http://json-schema.org/draft-07/schema#')",
            )
        ]
    # `is_valid` first: a schema the meta-schema accepts (almost every one) costs half as much
    # as asking for its errors; only a refused one is walked again for them.
    problems = (
        []
        if _DRAFT7_META.is_valid(schema)
        else [
            Problem(json_pointer_join(pointer, *error.instance_path), _meta_message(error, what))
            for error in _DRAFT7_META.iter_errors(schema)
        ]
    )
    if problems:
        return problems
    if not _SCHEMAS_PLAIN.get() and may_be_costly_or_uncompilable(schema):
        cost_problem = _cost_problem(schema, pointer, what)
        if cost_problem is not None:
            return [cost_problem]
        compile_problem = _compile_problem(schema, pointer, what)
        if compile_problem is not None:
            return [compile_problem]
    if must_be_object and schema.get("type", "object") != "object":
        problems.append(
            Problem(
                json_pointer_join(pointer, "type"),
                f'{what} must describe an object ("type": "object") because arguments are passed by name',
            )
        )
    return problems


DEEP_CHECK_KEYS = frozenset({"$ref", "$id", "pattern", "patternProperties"})
_SCHEMAS_PLAIN: ContextVar[bool] = ContextVar("schemas_plain", default=False)


def problems_with_schemas_plain(plain: bool, check: Callable[[], Iterable[Problem]]) -> list[Problem]:
    """The problems `check` finds, with `check_schema` skipping the cost count and the trial
    compile when `plain`: the loader's parse found no key of DEEP_CHECK_KEYS anywhere in the file
    and at most MAX_CHECKS objects, which `may_be_costly_or_uncompilable` would find of each
    schema in it. (A plain function: a context manager made of a generator cost as much as the
    checks of a small file.)"""
    token = _SCHEMAS_PLAIN.set(plain)
    try:
        return list(check())
    finally:
        _SCHEMAS_PLAIN.reset(token)


def may_be_costly_or_uncompilable(schema: dict[str, Any]) -> bool:
    """Whether `schema` needs the cost count and a trial compile, or passing the meta-schema
    already proves it usable (most schemas: the two take ~0.2 ms per tool, a cold start of
    thousands of descriptors is mostly them). Without `$ref` a schema is a tree, so no value is
    checked against more subschemas than it has; without `$ref`, `$id` and regular expressions
    (`pattern`, `patternProperties`' keys) nothing is left that the meta-schema accepts and
    jsonschema-rs refuses to compile. Any of those keys anywhere (even as a property name or
    inside an `enum` value) counts, which errs on the safe side."""
    pending: list[Any] = [schema]
    nodes = 0
    while pending:
        value = pending.pop()
        if isinstance(value, dict):
            nodes += 1
            if nodes > MAX_CHECKS or not DEEP_CHECK_KEYS.isdisjoint(value):
                return True
            pending.extend(value.values())
        elif isinstance(value, list):
            pending.extend(value)
    return False


def _cost_problem(schema: dict[str, Any], pointer: str, what: str) -> Problem | None:
    """A schema whose references multiply into more checks than any value should cost (see
    `schema_cost`): every call, and the guide's examples, would wait for them."""
    try:
        found = costly_value(schema)
    except CostlySchemaError as exc:
        return Problem(pointer, f"{what} is too large to check in reasonable time ({exc}); simplify it")
    if found is None:
        return None
    return Problem(
        pointer,
        f"{what} is too costly to check: a value at {found} would be checked against more than "
        f"{MAX_CHECKS} subschemas once its $ref, allOf, anyOf, oneOf and not branches are followed "
        "(alternatives that refer to other alternatives multiply); share fewer definitions, or "
        "flatten them",
    )


def _compile_problem(schema: dict[str, Any], pointer: str, what: str) -> Problem | None:
    """Compile the schema as the gateway will to check arguments (`service.arguments`): a schema
    the meta-schema accepts can still fail there (a `pattern` whose repetition count overflows the
    regex engine, a reference that leads nowhere), and such an app must not load."""
    try:
        jsonschema_rs.Draft7Validator(schema, validate_formats=True, retriever=refuse_remote)
    except jsonschema_rs.ValidationError as exc:
        text = str(exc)
        if "remote reference" in text:
            reason = text[text.index("remote reference") :].splitlines()[0]
        else:
            reason = exc.message.splitlines()[0] if exc.message else text.splitlines()[0]
        where = json_pointer_join(pointer, *exc.instance_path)
        return Problem(where, f"{what} cannot be used as a schema: {clip(reason, 300)}")
    except (jsonschema_rs.ReferencingError, ValueError, TypeError, OverflowError) as exc:
        reason = (str(exc).splitlines() or [type(exc).__name__])[0]
        return Problem(pointer, f"{what} cannot be used as a schema: {clip(reason, 300)}")
    return None


def _meta_message(error: Any, what: str) -> str:
    path = list(error.schema_path)
    if path[-2:] == ["type", "anyOf"] or path[-3:-1] == ["type", "anyOf"]:
        return (
            f"not a JSON Schema type: {_excerpt(error.instance)}; expected one of array, boolean, integer, "
            "null, number, object, string"
        )
    return f"invalid in {what}: {clip(error.message, 300)}"


def _excerpt(value: Any) -> str:
    return quoted(value) if isinstance(value, str) else json_excerpt(value)


def json_pointer_join(pointer: str, *tokens: str | int) -> str:
    return pointer + json_pointer(*tokens)


def property_names(parameters: dict[str, Any]) -> set[str] | None:
    """Declared top-level parameter names, or None when the schema lists none (free-form)."""
    properties = parameters.get("properties")
    return set(properties) if isinstance(properties, dict) else None


def template_strings(value: Any, pointer: str) -> Iterator[tuple[str, str]]:
    """Every string inside a JSON template, with its pointer (keys are not templates)."""
    if isinstance(value, str):
        yield value, pointer
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from template_strings(item, json_pointer_join(pointer, key))
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            yield from template_strings(item, json_pointer_join(pointer, index))


def check_placeholders(
    template: Any, pointer: str, known: set[str] | None, *, path_style: bool = False
) -> Iterator[Problem]:
    """`${name}` (and `{name}` in URL paths) must name a declared parameter."""
    for text, where in template_strings(template, pointer):
        names = [m.group(1) for m in PLACEHOLDER.finditer(text)]
        if path_style:
            names += [m.group(1) for m in PATH_PLACEHOLDER.finditer(text)]
        for name in names:
            if not PLACEHOLDER_NAME.match(name):
                yield Problem(where, f"placeholder {{{shortened(name)}}} is not a parameter name")
                continue
            top = name.split(".", 1)[0]
            if known is not None and top not in known:
                declared = listed(sorted(known)) or "none"
                yield Problem(
                    where,
                    f"placeholder for {quoted(top)} names no declared parameter (declared: {declared})",
                )


def check_url(url: str, pointer: str, *, what: str) -> Iterator[Problem]:
    try:
        parts = urlsplit(url)
    except ValueError:  # e.g. an unclosed IPv6 bracket: "http://[::1"
        yield Problem(pointer, f"{what} {quoted(url)} must be an absolute http:// or https:// URL")
        return
    if parts.scheme not in ("http", "https") or not parts.hostname:
        yield Problem(pointer, f"{what} {quoted(url)} must be an absolute http:// or https:// URL")
    elif parts.username or parts.password:
        yield Problem(pointer, f"{what} must not carry credentials in the URL; use the auth section")


def check_headers(headers: dict[str, str], pointer: str) -> Iterator[Problem]:
    """Header names the descriptor may set, and values HTTP can carry (http_headers.py)."""
    for name, value in headers.items():
        where = json_pointer_join(pointer, name)
        yield from check_header_name(name, where)
        yield from check_header_value(value, where)


def check_header_name(name: str, pointer: str) -> Iterator[Problem]:
    problem = header_name_problem(name)
    if problem:
        yield Problem(pointer, f"header name {quoted(name)} {problem}")


def check_header_value(value: str, pointer: str) -> Iterator[Problem]:
    problem = header_value_problem(value)
    if problem:
        yield Problem(pointer, f"header value {problem}")


def check_fits(
    execution: ExecutionType, platform: Platform, pointer: str, *, expressible: Iterable[str] | None = None
) -> Iterator[Problem]:
    """`expressible`: the types the file's dialect can write, so the hint only offers those."""
    if not fits_platform(execution, platform):
        offered = set(expressible) if expressible is not None else None
        allowed = ", ".join(
            sorted(
                t.value for t in allowed_execution_types(platform) if offered is None or t.value in offered
            )
        )
        yield Problem(
            pointer,
            f"execution type {execution.value!r} cannot run on platform {platform!r} "
            f"(allowed there: {allowed})",
        )


MAX_TIMEOUT_MS = 24 * 60 * 60 * 1000


def timeout_ms(value: float | None, *, unit_ms: int) -> int | None:
    """A timeout written in seconds (unit_ms=1000) or milliseconds (1), in whole milliseconds;
    None when absent or too large to be a number of milliseconds at all."""
    if value is None or not math.isfinite(value * unit_ms):
        return None
    return round(value * unit_ms)


def check_timeout(
    value: float | None,
    pointer: str,
    *,
    unit_ms: int,
    what: str = "timeout",
    maximum_ms: int = MAX_TIMEOUT_MS,
) -> Iterator[Problem]:
    """A duration in range once rounded to whole units (`unit_ms`: 1 for ms, 1000 for seconds)."""
    if value is None:
        return
    unit = "milliseconds" if unit_ms == 1 else "seconds"
    milliseconds = timeout_ms(value, unit_ms=unit_ms)
    smallest = unit_ms if what != "timeout" else 1
    if milliseconds is None or not smallest <= milliseconds <= maximum_ms:  # None: beyond any float
        low = f"{smallest / unit_ms:g}"
        yield Problem(
            pointer, f"{what} must be between {low} and {maximum_ms // unit_ms} {unit}, not {value}"
        )


def check_pipe_names(value: str, pointer: str) -> Iterator[Problem]:
    if not any(part.strip() for part in value.split("|")):
        yield Problem(pointer, "name must hold at least one name ('Mail' or 'Mail|邮件|Courrier')")


def check_tool_http(
    path: str | None, headers: dict[str, str] | None, parameters: dict[str, Any], pointer: str
) -> Iterator[Problem]:
    """A tool's own HTTP settings: path placeholders name parameters; headers are safe."""
    known = property_names(parameters)
    if path is not None:
        yield from check_placeholders(path, f"{pointer}/path", known, path_style=True)
    if headers:
        yield from check_headers(headers, f"{pointer}/headers")
        yield from check_placeholders(headers, f"{pointer}/headers", known)


_BUS_NAME = re.compile(r"^(?=.{1,255}\Z)[A-Za-z_-][A-Za-z0-9_-]*(?:\.[A-Za-z_-][A-Za-z0-9_-]*)+\Z")
_INTERFACE = re.compile(r"^(?=.{1,255}\Z)[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+\Z")
_OBJECT_PATH = re.compile(r"^/(?:[A-Za-z0-9_]+(?:/[A-Za-z0-9_]+)*)?\Z")
_MEMBER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,254}\Z")


def check_dbus_names(
    service: str | None,
    object_path: str | None,
    interface: str | None,
    pointer: str,
    *,
    keys: tuple[str, str, str] = (
        "service",
        "objectPath",
        "interface",
    ),
) -> Iterator[Problem]:
    for value, key, pattern, what in (
        (service, keys[0], _BUS_NAME, "a DBus bus name like 'org.example.Mail'"),
        (object_path, keys[1], _OBJECT_PATH, "a DBus object path like '/org/example/Mail'"),
        (interface, keys[2], _INTERFACE, "a DBus interface name like 'org.example.Mail'"),
    ):
        if value is not None and not pattern.match(value):
            yield Problem(json_pointer_join(pointer, key), f"{quoted(value)} is not {what}")


def check_dbus_member(method: str, pointer: str) -> Iterator[Problem]:
    if not _MEMBER.match(method):
        yield Problem(pointer, f"{quoted(method)} is not a DBus method name (letters, digits and '_')")
