"""Cards and search texts as JSON records, for the persistent descriptor cache.

Reading a record checks every field's type: a record that is not exactly what `card_record`
writes raises `ValueError`, and the file it stood for is loaded again.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import chain
from typing import Any

from .binding import binding_for
from .card import ApiOrigin, AppCard, OperationRun, OperationText, ParameterText, SourceKind
from .platforms import PLATFORMS, ExecutionType

_SOURCE_KINDS: tuple[SourceKind, ...] = ("file", "web", "bundled", "inline")
_EXECUTION_TYPES = frozenset(kind.value for kind in ExecutionType)


def card_record(card: AppCard) -> list[Any]:
    """`card` as JSON-able data (a list: compact, read back fast)."""
    return [
        card.id,
        card.name_map,
        card.default_lang,
        list(card.all_names),
        card.description,
        list(card.aliases),
        card.version,
        card.source_kind,
        card.location,
        card.origin,
        card.platform,
        card.tools_declared,
        card.server_tools_read,
        list(card.operations),
        list(card.operation_runs),
        [_run_record(run) for run in card.runs],
        None if card.server_run is None else _run_record(card.server_run),
        [[o.scheme, o.host, o.port] for o in card.api_origins],
    ]


_RECORD_LENGTH = 18


def _run_record(run: OperationRun) -> list[Any]:
    return [run.execution, run.channel, run.call, run.call_kind]


def card_from_record(record: Any) -> AppCard:
    """The card `card_record` wrote; ValueError for anything else. (Every start reads thousands:
    the checks are written out, and run in C where they can.)"""
    if type(record) is not list or len(record) != _RECORD_LENGTH:
        raise ValueError("not a card record")
    (app_id, name_map, default_lang, all_names, description, aliases, version, kind, location, origin,
     platform, declared, read, operations, operation_runs, runs, server_run, origins) = record  # fmt: skip
    if not (
        type(app_id) is str
        and type(default_lang) is str
        and type(description) is str
        and type(version) is str
        and type(location) is str
        and (origin is None or type(origin) is str)
        and (platform is None or (type(platform) is str and platform in PLATFORMS))
        and type(declared) is bool
        and type(read) is bool
        and type(name_map) is dict
        and name_map
        and type(all_names) is list
        and type(aliases) is list
        and type(operations) is list
        and _all_of(str, chain(name_map.values(), all_names, aliases, operations))
        and type(operation_runs) is list
        and _all_of(int, operation_runs)
        and type(runs) is list
        and type(origins) is list
    ):
        raise ValueError("a card field of the wrong type")
    if type(kind) is not str or kind not in _SOURCE_KINDS:
        raise ValueError("not a source kind")
    source_kind: SourceKind = kind
    if (
        len(operation_runs) != len(operations)
        or (operation_runs and not 0 <= min(operation_runs) <= max(operation_runs) < len(runs))
        or len(set(operation_runs)) != len(runs)  # every run is some operation's
    ):
        raise ValueError("operations and runs do not match")
    return AppCard(
        app_id,
        name_map,
        default_lang,
        tuple(all_names),
        description,
        tuple(aliases),
        version,
        source_kind,
        location,
        origin,
        binding_for(source_kind, location, origin),
        platform,
        declared,
        read,
        tuple(operations),
        tuple(operation_runs),
        tuple(map(_run, runs)),
        None if server_run is None else _run(server_run),
        tuple(map(_api_origin, origins)),
    )


def _all_of(kind: type, values: Iterable[Any]) -> bool:
    """Whether every value is of exactly `kind` (checked in C: `map`, `set`)."""
    return set(map(type, values)) <= {kind}


def texts_record(texts: tuple[OperationText, ...]) -> list[Any]:
    return [
        [
            t.name,
            t.title,
            t.description,
            [[p.name, p.title, p.description] for p in t.parameters],
            t.reads_only,
        ]
        for t in texts
    ]


def texts_from_record(record: Any) -> tuple[OperationText, ...]:
    """The texts `texts_record` wrote; ValueError for anything else."""
    texts: list[OperationText] = []
    for operation in _list(record):
        name, title, description, parameters, reads_only = _list(operation, 5)
        if type(reads_only) is not bool:
            raise ValueError("reads_only is not a boolean")
        texts.append(
            OperationText(
                _text(name),
                _optional_text(title),
                _text(description),
                tuple(_parameter(p) for p in _list(parameters)),
                reads_only,
            )
        )
    return tuple(texts)


def _parameter(value: Any) -> ParameterText:
    name, title, description = _list(value, 3)
    return ParameterText(_text(name), _optional_text(title), _optional_text(description))


def _run(value: Any) -> OperationRun:
    execution, channel, call, kind = _list(value, 4)
    if not (
        type(execution) is str
        and execution in _EXECUTION_TYPES
        and type(channel) is str
        and (call is None or type(call) is str)
        and (kind is None or type(kind) is str)
    ):
        raise ValueError("not the run a card record holds")
    return OperationRun(execution, channel, call, kind)


def _api_origin(value: Any) -> ApiOrigin:
    scheme, host, port = _list(value, 3)
    return ApiOrigin(_text(scheme), _text(host), _integer(port))


def _list(value: Any, length: int | None = None) -> list[Any]:
    if type(value) is not list or (length is not None and len(value) != length):
        raise ValueError("not the list a card record holds")
    return value


def _text(value: Any) -> str:
    if type(value) is not str:
        raise ValueError("not a string")
    return value


def _optional_text(value: Any) -> str | None:
    return None if value is None else _text(value)


def _integer(value: Any) -> int:
    if type(value) is not int:
        raise ValueError("not an integer")
    return value
