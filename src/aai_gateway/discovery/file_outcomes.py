"""What one descriptor file holds (`FileLoad`), read from the file or written and read back: a
row of the card cache, an entry of a snapshot, a worker's answer (`load_workers`).

Every stored or received outcome is checked the same way (`checked_outcome`) before it is taken:
a cache file or a worker is never trusted blindly.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import jiter

from ..descriptor import AppDescriptor, Platform, prevalidated
from ..descriptor.card import AppCard, OperationText, card_of, texts_of
from ..descriptor.card_records import card_from_record, card_record, texts_record
from ..descriptor.mcp_wire import is_unicode
from ..errors import Problem
from .card_cache import NewOutcome
from .load_workers import WorkerRow
from .scanner import describe_os_error, read_descriptor_bytes


@dataclass(slots=True)  # never changed once made (not frozen: see descriptor/card.py)
class FileLoad:
    """What one descriptor file held when it had `stamp`: an app (`card`, with its warnings), or
    nothing usable (`reason`, and every problem in `problems`)."""

    path: str
    stamp: str
    bundled: bool
    card: AppCard | None
    problems: tuple[Problem, ...]
    reason: str = ""


@dataclass(slots=True)
class ReadAhead:
    """A file read before its turn: its outcome, the app when read here, and, from a worker, the
    row for the card cache (so its JSON is not written twice)."""

    load: FileLoad
    app: AppDescriptor | None
    texts: tuple[OperationText, ...] | None
    row: NewOutcome | None = None


def read_file(
    path: str, bundled: bool, host: Platform | None
) -> FileLoad | tuple[AppDescriptor | None, tuple[Problem, ...]]:
    """The app in the file at `path` and its warnings, or (None, its problems), or, when it cannot
    be read, an outcome saying why (with no stamp)."""
    try:
        data = read_descriptor_bytes(path)
    except OSError as exc:
        return FileLoad(path, "", bundled, None, (), describe_os_error(exc))
    from ..descriptor.loader import load_text  # noqa: PLC0415 (the loader: when a file is read)

    source = prevalidated.source(kind="bundled" if bundled else "file", location=path)
    result = load_text(data, source, host)
    if not result.problems:  # most files
        return result.descriptor, ()
    problems = tuple(p.located(path) for p in result.problems)
    if result.descriptor is None:
        return None, problems
    return result.descriptor, tuple(p for p in problems if p.severity == "warning")


def outcome_row_of(
    outcome: FileLoad, texts: tuple[OperationText, ...] | None, record: list[Any] | None = None
) -> NewOutcome:
    """What the card cache stores of an outcome (`record`: its card's, when made already)."""
    if record is None and outcome.card is not None:
        record = card_record(outcome.card)
    return NewOutcome(
        outcome.path,
        outcome.stamp,
        outcome.bundled,
        None if record is None else record_json(record),
        outcome.reason or None,
        problems_json(outcome.problems),
        None if texts is None else record_json(texts_record(texts)),
    )


def read_outcome(path: str, stamp: str, bundled: bool, host: Platform | None) -> ReadAhead:
    """The file at `path`, read now; `stamp` is what its `stat` said before."""
    loaded = read_file(path, bundled, host)
    if isinstance(loaded, FileLoad):  # unreadable: no stamp, so the next build tries again
        return ReadAhead(loaded, None, None)
    return _outcome_of(path, stamp, bundled, loaded)


def _outcome_of(
    path: str, stamp: str, bundled: bool, loaded: tuple[AppDescriptor | None, tuple[Problem, ...]]
) -> ReadAhead:
    app, problems = loaded
    if app is None:
        return ReadAhead(FileLoad(path, stamp, bundled, None, problems, invalid_reason(problems)), None, None)
    return ReadAhead(FileLoad(path, stamp, bundled, card_of(app), problems), app, texts_of(app))


def outcome_row(path: str, bundled: bool, host: Platform | None) -> WorkerRow:
    """A worker's answer for one file (`load_workers.serve`): its outcome as the cache stores it,
    and its card's record, which the gateway then takes without parsing the JSON."""
    loaded = read_file(path, bundled, host)
    if isinstance(loaded, FileLoad):  # unreadable: an answer `read_ahead` refuses, so it is read there
        return (path, bundled, None, None, None, "[]", None)
    ahead = _outcome_of(path, "", bundled, loaded)
    record = None if ahead.load.card is None else card_record(ahead.load.card)
    row = outcome_row_of(ahead.load, ahead.texts, record)
    return (path, bundled, row.card, record, row.reason, row.problems, row.texts)


def snapshot_body(loads: Iterable[FileLoad]) -> str:
    return record_json(
        [
            [
                load.path,
                load.stamp,
                load.bundled,
                None if load.card is None else card_record(load.card),
                load.reason,
                problems_json(load.problems),
            ]
            for load in loads
        ]
    )


def outcomes_of_snapshot(body: bytes) -> dict[str, FileLoad]:
    """What `snapshot_body` wrote (as UTF-8), by path; ValueError or TypeError for anything else.
    Parsed by jiter, which reads the bytes themselves: 10,000 apps' snapshot in ~60 ms against
    ~90 ms for `json.loads` of the decoded text."""
    outcomes: dict[str, FileLoad] = {}
    entries = jiter.from_json(body)
    if type(entries) is not list:
        raise ValueError("not a snapshot")
    for entry in entries:
        if type(entry) is not list or len(entry) != 6:
            raise ValueError("not a snapshot entry")
        path, stamp, bundled, record, reason, problems = entry
        if not (type(path) is str and type(stamp) is str and type(bundled) is bool):
            raise ValueError("not a snapshot entry")
        outcomes[path] = checked_outcome(
            path, stamp, bundled=bundled, record=record, reason=reason, problems=problems
        )
    return outcomes


def checked_outcome(
    path: str, stamp: str, *, bundled: bool, record: Any, reason: Any, problems: Any
) -> FileLoad:
    """A stored outcome of the file at `path`, checked as a row or a snapshot entry holds it:
    ValueError or TypeError when any part is not what this module writes (or names another
    file, or another kind of source)."""
    if type(problems) is not str or not (reason is None or type(reason) is str):
        raise ValueError("not an outcome")
    card = None if record is None else card_from_record(record)
    if card is None and not reason:
        raise ValueError("an outcome with neither an app nor a reason")
    if card is not None and (card.location != path or (card.source_kind == "bundled") != bundled):
        raise ValueError("an outcome of another file")
    return FileLoad(path, stamp, bundled, card, problems_from_json(problems, path), reason or "")


def storable(path: str) -> bool:
    """Whether the card cache can keep `path` (a name that is not UTF-8 cannot be stored)."""
    return is_unicode(path)


def invalid_reason(problems: Sequence[Problem]) -> str:
    """Why a file with these problems is skipped, in one line: the first error and how many."""
    errors = [p for p in problems if p.severity == "error"]
    first = f"{errors[0].pointer or '/'}: {errors[0].message}" if errors else "no app in it"
    summary = first if len(errors) <= 1 else f"{len(errors)} problems, first {first}"
    return f"invalid descriptor: {summary}"


record_json = json.JSONEncoder(ensure_ascii=False, check_circular=False, separators=(",", ":")).encode
"""The JSON text the cache stores of a record (a tree of lists, dicts and scalars the gateway built,
so never circular): compact and unescaped, a third cheaper than `json.dumps` for a worker's rows."""


def problems_json(problems: Iterable[Any]) -> str:
    return record_json([[p.pointer, p.message, p.severity, p.file] for p in problems])


def problems_from_json(text: str, path: str) -> tuple[Problem, ...]:
    """The problems `problems_json` wrote (located in `path` when they name no file); ValueError
    for anything else."""
    if text == "[]":  # the common case: no JSON parse
        return ()
    found = json.loads(text)
    if type(found) is not list:
        raise ValueError("not a list of problems")
    problems = []
    for item in found:
        if type(item) is not list or len(item) != 4:
            raise ValueError("not a problem")
        pointer, message, severity, file = item
        if not (type(pointer) is str and type(message) is str and severity in ("error", "warning")):
            raise ValueError("not a problem")
        problems.append(Problem(pointer, message, severity, file if type(file) is str else path))
    return tuple(problems)
