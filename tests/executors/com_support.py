"""Fake COM objects for the COM executor tests: plain Python classes that record what they get."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from aai_gateway.descriptor import AppDescriptor, Source, load_text
from aai_gateway.executors import Invocation

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

# The spec's own multi-platform example (spec 001/003, "Structure Example"), as written there.
SPEC_MAIL: dict[str, Any] = json.loads(
    (Path(__file__).resolve().parents[1] / "fixtures" / "spec" / "b_mail.json").read_text(encoding="utf-8")
)


class Journal:
    """Every call and property write the fakes receive, in order."""

    def __init__(self) -> None:
        self.entries: list[tuple[Any, ...]] = []

    def add(self, *entry: Any) -> None:
        self.entries.append(entry)


class Recording:
    """Records property writes into the journal; attributes read back what was written."""

    _journal: Journal
    _name: str

    def __init__(self, journal: Journal, name: str) -> None:
        object.__setattr__(self, "_journal", journal)
        object.__setattr__(self, "_name", name)

    def __setattr__(self, prop: str, value: Any) -> None:
        self._journal.add("set", self._name, prop, value)
        object.__setattr__(self, prop, value)


class MailItem(Recording):
    def Send(self) -> None:
        self._journal.add("call", "MailItem", "Send")


class OutlookApplication(Recording):
    def CreateItem(self, kind: int) -> MailItem:
        self._journal.add("call", "Application", "CreateItem", kind)
        return MailItem(self._journal, "MailItem")


def load_windows(document: dict[str, Any]) -> AppDescriptor:
    result = load_text(json.dumps(document), Source(kind="inline", location="<test>"), "windows")
    assert result.descriptor is not None, [p.render() for p in result.problems]
    return result.descriptor


def load_example(app_id: str) -> AppDescriptor:
    path = EXAMPLES / app_id / "aai.json"
    result = load_text(path.read_bytes(), Source(kind="file", location=str(path)), "windows")
    assert result.descriptor is not None, [p.render() for p in result.problems]
    return result.descriptor


def invocation(
    app: AppDescriptor, tool: str, arguments: dict[str, Any], timeout_ms: int | None = None
) -> Invocation:
    found = app.tool(tool)
    assert found is not None, f"{app.id} has no tool {tool!r}"
    if timeout_ms is not None:
        found = found.model_copy(update={"timeout_ms": timeout_ms})
    return Invocation(app, found, dict(arguments), request_id="req-1")
