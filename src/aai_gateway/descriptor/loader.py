"""Text in, canonical descriptor (or every problem with its pointer) out. No I/O here."""

from __future__ import annotations

import json
import logging
import math
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import jiter
from pydantic import ValidationError

from ..errors import DescriptorError, Problem, json_pointer
from . import dialect_a, dialect_b, dialect_b_checks, dialect_c, dialect_c_checks
from .checks import DEEP_CHECK_KEYS, problems_with_schemas_plain
from .limits import MAX_DESCRIPTOR_BYTES, MAX_NESTING
from .mcp_wire import is_unicode
from .model import AppDescriptor, Dialect, Source
from .platforms import Platform, host_platform
from .quoting import MAX_MESSAGE, clip, quoted
from .raw import RawParse, problems_from_validation, raw_model, validated
from .schema_cost import MAX_CHECKS

logger = logging.getLogger(__name__)

_MAX_INTEGER_DIGITS = len(str(int(sys.float_info.max)))  # 309: longer integers exceed every float


@dataclass
class LoadResult:
    descriptor: AppDescriptor | None
    problems: list[Problem] = field(default_factory=list)
    dialect: Dialect | None = None

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error"]

    @property
    def warnings(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "warning"]


@dataclass(frozen=True)
class _DialectSpec:
    parse: RawParse
    check: Callable[[Any], Iterator[Problem]]
    normalize: Callable[[Any, Source, Platform], AppDescriptor]


_DIALECTS: dict[Dialect, _DialectSpec] = {
    "A": _DialectSpec(
        partial(validated, dialect_a.ADescriptor), dialect_a.check, lambda d, s, _h: dialect_a.normalize(d, s)
    ),
    "B": _DialectSpec(partial(validated, dialect_b.BDescriptor), dialect_b_checks.check, dialect_b.normalize),
    "C": _DialectSpec(dialect_c.parse, dialect_c_checks.check, dialect_c.normalize),
}


def detect_dialect(document: dict[str, Any]) -> Dialect | None:
    """camelCase `schemaVersion` is C's alone; B also writes `schema_version`, so B is told from A
    by its `appId`/`platforms`."""
    if "schemaVersion" in document:
        return "C"
    if "appId" in document or "platforms" in document:
        return "B"
    if "schema_version" in document:
        return "A"
    return None


def load_text(data: str | bytes, source: Source, host: Platform | None = None) -> LoadResult:
    """Parse, validate and normalize one aai.json. Never raises: whatever goes wrong while loading
    one file, even a bug of the gateway's, is a problem of that file (see `_contained`)."""
    return _contained(lambda: _load_text(data, source, host), source)


def load_document(document: Any, source: Source, host: Platform | None = None) -> LoadResult:
    """`load_text` for a document already parsed from JSON. Never raises either."""
    return _contained(lambda: _load_document(document, source, host), source)


def _contained(load: Callable[[], LoadResult], source: Source) -> LoadResult:
    """The one safety net of descriptor loading: every caller (the catalog and its rescans, `scan`,
    `validate`, `web_discover` and its cache) loads through here, so an exception the checks did
    not foresee costs one file, never the gateway. Messages are capped: they echo file content."""
    try:
        result = load()
    except Exception as exc:  # any failure at all: reported, its traceback in the debug log
        # Only the type: an exception's text may quote the file, and logs never hold descriptor text.
        logger.warning(
            "loading %s failed with an unexpected %s (traceback at DEBUG level)",
            source.location,
            type(exc).__name__,
        )
        logger.debug("loading %s failed", source.location, exc_info=True)
        problem = Problem(
            "",
            f"unexpected {type(exc).__name__} while loading this file: this is a bug in aai-gateway; "
            "please report it with the file (run with --log-level DEBUG for the traceback). "
            "The app is skipped until then",
        )
        return LoadResult(None, [problem])
    if result.problems and any(len(p.message) > MAX_MESSAGE for p in result.problems):
        result.problems = [Problem(p.pointer, clip(p.message), p.severity, p.file) for p in result.problems]
    return result


def _load_text(data: str | bytes, source: Source, host: Platform | None) -> LoadResult:
    plain = _plainly_valid(data)
    if plain is not None:
        return _load_document(plain.document, source, host, plain_schemas=plain.schemas_plain)
    document, problems = _parse_exactly(data)
    if problems:  # not `document is None`: the text `null` parses fine and is refused below
        return LoadResult(None, problems)
    return _load_document(document, source, host)


def _load_document(
    document: Any, source: Source, host: Platform | None, *, plain_schemas: bool = False
) -> LoadResult:
    if not isinstance(document, dict):
        return LoadResult(
            None, [Problem("", f"an aai.json must be a JSON object, not {_json_kind(document)}")]
        )
    dialect = detect_dialect(document)
    if dialect is None:
        return LoadResult(
            None,
            [
                Problem(
                    "",
                    "cannot tell which aai.json dialect this is: expected 'schemaVersion' "
                    "(camelCase dialect), 'appId' and 'platforms' (multi-platform dialect), or "
                    "'schema_version' with 'app' and 'platform' (snake_case dialect); run "
                    "`aai-gateway schema` for the recommended format",
                )
            ],
        )
    spec = _DIALECTS[dialect]
    try:
        raw, problems = raw_model(spec.parse, document)
    except ValidationError as exc:
        note = Problem(
            "",
            "the checks of versions, names, schemas and bindings run once these structural errors are fixed",
            "warning",
        )
        return LoadResult(None, [*problems_from_validation(exc), note], dialect)
    problems += problems_with_schemas_plain(plain_schemas, lambda: spec.check(raw))
    if any(p.severity == "error" for p in problems):
        return LoadResult(None, problems, dialect)
    try:
        descriptor = spec.normalize(raw, source, host or host_platform())
    except ValidationError as exc:  # a check let through something the canonical model refuses
        return LoadResult(None, [*problems, *problems_from_validation(exc)], dialect)
    return LoadResult(descriptor, problems, dialect)


def load_descriptor(data: str | bytes, source: Source, host: Platform | None = None) -> AppDescriptor:
    """Like `load_text`, but raises `DescriptorError` with every problem when the file is unusable."""
    result = load_text(data, source, host)
    if result.descriptor is None:
        raise DescriptorError(source.location, result.problems)
    return result.descriptor


def parse_json(data: str | bytes) -> tuple[Any, list[Problem]]:
    """The document, or every problem of the text with its pointer. Strict: UTF-8, no `NaN`, no
    duplicate keys, at most MAX_NESTING levels, numbers that fit a float, Unicode strings."""
    plain = _plainly_valid(data)
    if plain is not None:
        return plain.document, []
    return _parse_exactly(data)


def _parse_exactly(data: str | bytes) -> tuple[Any, list[Problem]]:
    """`parse_json` for any text: finds and words every problem (slower than `_plainly_valid`)."""
    if isinstance(data, bytes):
        if len(data) > MAX_DESCRIPTOR_BYTES:
            return None, [
                Problem("", f"file is {len(data)} bytes; descriptors are limited to {MAX_DESCRIPTOR_BYTES}")
            ]
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            return None, [Problem("", f"file is not UTF-8 text (byte {exc.start}: {exc.reason})")]
    else:
        text = data.removeprefix("\ufeff")
    duplicates: list[tuple[int, str]] = []
    depth_of: dict[int, int] = {}

    def nesting(value: Any, limit: int = MAX_NESTING + 1) -> int:
        # Stops counting past the limit: a bare array nested hundreds deep would otherwise
        # exhaust the Python stack here, after json.loads itself coped with it.
        if isinstance(value, dict):
            return depth_of.get(id(value), 1)
        if isinstance(value, list):
            if limit <= 1:
                return 1
            return 1 + max((nesting(item, limit - 1) for item in value), default=0)
        return 0

    def pairs_hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        result: dict[str, Any] = {}
        deepest = 0
        for key, value in pairs:
            if key in result:
                duplicates.append((id(result), key))
            result[key] = value
            if isinstance(value, dict | list):
                deepest = max(deepest, nesting(value))
        depth_of[id(result)] = deepest + 1
        return result

    saw_infinity: list[bool] = []

    def parse_float(literal: str) -> float:
        value = float(literal)
        if not math.isfinite(value):
            saw_infinity.append(True)
        return value

    def parse_int(literal: str) -> int | float:
        # An integer beyond every float is as unusable as `1e999` and reported the same way, at its
        # pointer. It is not even converted: `int()` refuses more than 4,300 digits.
        negative = literal.startswith("-")
        if len(literal) - negative <= _MAX_INTEGER_DIGITS:
            value = int(literal)
            if abs(value) <= sys.float_info.max:
                return value
        saw_infinity.append(True)
        return -math.inf if negative else math.inf

    too_deep = Problem("", f"JSON is nested too deeply (limit {MAX_NESTING} levels)")
    try:
        document = json.loads(
            text,
            object_pairs_hook=pairs_hook,
            parse_constant=_refuse_constant,
            parse_float=parse_float,
            parse_int=parse_int,
        )
    except json.JSONDecodeError as exc:
        return None, [Problem("", f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}")]
    except ValueError as exc:
        return None, [Problem("", f"invalid JSON: {exc}")]
    except RecursionError:
        return None, [too_deep]
    if nesting(document) > MAX_NESTING:
        return None, [too_deep]
    # Only then can the document hold an infinite number or a lone surrogate.
    if saw_infinity or _SURROGATE_ESCAPE.search(text) or not (isinstance(data, bytes) or is_unicode(text)):
        unusable = _unrepresentable(document)
        if unusable:
            return None, unusable
    if duplicates:
        where = _pointers_by_id(document)
        return None, [
            Problem(
                json_pointer_of(where.get(obj_id, ()), key),
                f"key {quoted(key)} appears more than once in this object",
            )
            for obj_id, key in duplicates
        ]
    return document, []


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_UTF8_BOM = b"\xef\xbb\xbf"
_FLOAT_MAX = sys.float_info.max


@dataclass(slots=True)  # never changed once made; not frozen: a frozen __init__ costs twice as much
class _Plain:
    document: Any
    schemas_plain: bool  # no key of checks.DEEP_CHECK_KEYS anywhere, at most MAX_CHECKS objects


def _plainly_valid(data: str | bytes) -> _Plain | None:
    """The fast path of parsing, for the ordinary file: the document when jiter (a JSON parser in
    Rust, as strict as ours and catching duplicate keys) parses it and nothing in it breaks a rule
    of ours; else None, and the exact parser finds and words every problem. A cold start parses
    every descriptor: this takes a third of the exact parser's time, and its one walk also tells
    whether any schema in the file needs the deep checks (`checks.problems_with_schemas_plain`)."""
    if isinstance(data, str):
        try:
            data = data.encode("utf-8")
        except UnicodeEncodeError:
            return None
    if len(data) > MAX_DESCRIPTOR_BYTES:
        return None
    try:
        document = jiter.from_json(
            data.removeprefix(_UTF8_BOM), allow_inf_nan=False, catch_duplicate_keys=True, cache_mode="all"
        )
    except ValueError:
        return None
    if type(document) is not dict:  # not a descriptor at all: the exact parser says so
        return None
    objects = 0
    deep_keys = False
    level: list[Any] = [document]  # the containers `depth` levels down
    depth = 1
    while level:  # jiter refuses lone surrogates; depth and numbers are ours to check
        if depth > MAX_NESTING:
            return None
        below: list[Any] = []
        for value in level:
            if type(value) is dict:
                objects += 1
                deep_keys = deep_keys or not DEEP_CHECK_KEYS.isdisjoint(value)
                items: Iterable[Any] = value.values()
            else:
                items = value
            for item in items:
                kind = type(item)
                if kind is str:  # most values: asked first
                    continue
                if kind is dict or kind is list:
                    below.append(item)
                elif (kind is float and not math.isfinite(item)) or (kind is int and abs(item) > _FLOAT_MAX):
                    return None
        level = below
        depth += 1
    return _Plain(document, not deep_keys and objects <= MAX_CHECKS)


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _unrepresentable(document: Any) -> list[Problem]:
    """Values JSON text can spell but nothing downstream can hold: a number too large for a float
    (`1e999` parses as infinity) and strings with an unpaired surrogate escape (`"\\ud800"`), which
    are not Unicode text and cannot be encoded as UTF-8 for a schema validator, header or process."""
    problems: list[Problem] = []
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(document, ())]
    while stack:
        value, path = stack.pop()
        if isinstance(value, float) and not math.isfinite(value):
            problems.append(
                Problem(
                    json_pointer(*path),
                    "number is too large to represent: numbers in aai.json must fit a 64-bit "
                    "floating-point number (at most about 1.8e308)",
                )
            )
        elif isinstance(value, str) and not is_unicode(value):
            problems.append(
                Problem(
                    json_pointer(*path), f"string is not valid Unicode text: {quoted(value, ascii_only=True)}"
                )
            )
        elif isinstance(value, dict):
            for key in value:
                if not is_unicode(key):
                    problems.append(
                        Problem(
                            json_pointer(*path),
                            f"key {quoted(key, ascii_only=True)} is not valid Unicode text",
                        )
                    )
            items = [(v, (*path, k)) for k, v in value.items() if is_unicode(k)]
            stack.extend(reversed(items))
        elif isinstance(value, list):
            stack.extend(reversed([(v, (*path, i)) for i, v in enumerate(value)]))
    return problems


def _pointers_by_id(document: Any) -> dict[int, tuple[str | int, ...]]:
    found: dict[int, tuple[str | int, ...]] = {}
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(document, ())]
    while stack:
        value, path = stack.pop()
        if isinstance(value, dict):
            found[id(value)] = path
            stack.extend((v, (*path, k)) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((v, (*path, i)) for i, v in enumerate(value))
    return found


def json_pointer_of(path: tuple[str | int, ...], key: str) -> str:
    return json_pointer(*path, key)


def _json_kind(value: Any) -> str:
    return {list: "an array", str: "a string", bool: "a boolean", int: "a number", float: "a number"}.get(
        type(value), "null"
    )
