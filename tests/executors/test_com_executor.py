"""The COM executor: dialect-B sequences and dialect-C `Execute`, with plain Python objects as COM."""

from __future__ import annotations

import importlib.machinery
import json
import subprocess
import sys
import threading
import types
from typing import Any

import pytest

from aai_gateway.descriptor import ExecutionType
from aai_gateway.discovery.catalog import Catalog, CatalogEntry
from aai_gateway.errors import AaiError, ErrorCode
from aai_gateway.executors import com, com_backend_win
from aai_gateway.executors.com import ComExecutor
from aai_gateway.executors.com_interpreter import PythonObjectBackend
from aai_gateway.executors.registry import ExecutorRegistry
from aai_gateway.service.gateway import Caller, Gateway
from tests.builders import trusting_gate

from .com_support import (
    SPEC_MAIL,
    Journal,
    OutlookApplication,
    Recording,
    invocation,
    load_example,
    load_windows,
)

pytestmark = pytest.mark.anyio


# --------------------------------------------------------------------------- fake Planwise


class PlanwiseEvent(Recording):
    def Save(self) -> None:
        self._journal.add("call", self._name, "Save")
        object.__setattr__(self, "Id", "evt-42")

    def Delete(self) -> None:
        self._journal.add("call", self._name, "Delete")


class PlanwiseCalendar(Recording):
    def NewEvent(self) -> PlanwiseEvent:
        return PlanwiseEvent(self._journal, "Event")

    def ExportEventsJson(self, start: str, end: str) -> str:
        self._journal.add("call", self._name, "ExportEventsJson", start, end)
        return json.dumps({"events": [{"id": "evt-1", "title": "Dentist"}]})


class PlanwiseApplication(Recording):
    def GetCalendar(self, name: str) -> PlanwiseCalendar:
        self._journal.add("call", "Application", "GetCalendar", name)
        return PlanwiseCalendar(self._journal, f"Calendar {name}")

    def GetEventById(self, event_id: str) -> PlanwiseEvent:
        self._journal.add("call", "Application", "GetEventById", event_id)
        return PlanwiseEvent(self._journal, event_id)


def planwise(journal: Journal) -> ComExecutor:
    return ComExecutor(
        backend=PythonObjectBackend(
            {"Planwise.Application": lambda: PlanwiseApplication(journal, "Application")}
        )
    )


async def test_planwise_create_event_sets_every_field_saves_and_returns_the_new_id() -> None:
    app, journal = load_example("com.example.planwise"), Journal()
    arguments = {
        "title": 'Dentist "urgent" & ${notes}',
        "start": "2025-06-03T14:00:00+02:00",
        "end": "2025-06-03T15:00:00+02:00",
        "calendar": "Work",
        "location": "",
        "notes": "bring card\n%USERPROFILE%",
    }
    result = await planwise(journal).execute(invocation(app, "create_event", arguments))
    assert result == "evt-42"
    assert journal.entries == [
        ("call", "Application", "GetCalendar", "Work"),
        ("set", "Event", "Title", 'Dentist "urgent" & ${notes}'),
        ("set", "Event", "StartIso", "2025-06-03T14:00:00+02:00"),
        ("set", "Event", "EndIso", "2025-06-03T15:00:00+02:00"),
        ("set", "Event", "Location", ""),
        ("set", "Event", "Notes", "bring card\n%USERPROFILE%"),
        ("call", "Event", "Save"),
    ]


async def test_planwise_list_events_returns_the_apps_json_text_and_delete_event_the_declared_json() -> None:
    app, journal = load_example("com.example.planwise"), Journal()
    executor = planwise(journal)
    listed = await executor.execute(
        invocation(
            app,
            "list_events",
            {"from": "2025-06-01T00:00:00Z", "to": "2025-06-02T00:00:00Z", "calendar": "Personal"},
        )
    )
    assert json.loads(listed) == {"events": [{"id": "evt-1", "title": "Dentist"}]}
    deleted = await executor.execute(invocation(app, "delete_event", {"event_id": "evt-9"}))
    assert deleted == {"deleted": True}
    assert ("call", "Application", "GetEventById", "evt-9") in journal.entries
    assert ("call", "evt-9", "Delete") in journal.entries


async def test_the_spec_outlook_example_runs_through_the_executor() -> None:
    app, journal = load_windows(SPEC_MAIL), Journal()
    executor = ComExecutor(
        backend=PythonObjectBackend(
            {"Outlook.Application": lambda: OutlookApplication(journal, "Application")}
        )
    )
    result = await executor.execute(
        invocation(app, "send_email", {"to": "a@b.c", "subject": "S", "body": "B"})
    )
    assert result == {"success": True, "message_id": "generated"}
    assert journal.entries[-1] == ("call", "MailItem", "Send")


# --------------------------------------------------------------------------- dialect C: Execute


class LedgerDesk:
    """A COM server speaking the JSON request/response of DESIGN.md through `Execute`."""

    def __init__(self, answer: dict[str, Any] | None = None) -> None:
        self.requests: list[str] = []
        self.answer = answer

    def Execute(self, request: str) -> str:
        self.requests.append(request)
        parsed = json.loads(request)
        answer = self.answer or {"status": "success", "result": {"echo": parsed["params"]}}
        return json.dumps({"version": "1.0", "request_id": parsed["request_id"], **answer})


async def test_dialect_c_calls_execute_with_the_json_request_and_returns_the_result() -> None:
    app, server = load_example("com.example.ledgerdesk"), LedgerDesk()
    executor = ComExecutor(backend=PythonObjectBackend({"LedgerDesk.Application": lambda: server}))
    params = {"customer": 'Acme "${x}" $(rm) `id`', "limit": 5, "status": ["paid"]}
    result = await executor.execute(invocation(app, "listInvoices", params))
    assert result == {"echo": params}
    assert json.loads(server.requests[0]) == {
        "version": "1.0",
        "request_id": "req-1",
        "tool": "listInvoices",
        "params": params,
    }


async def test_dialect_c_error_responses_keep_the_apps_code_and_message() -> None:
    app = load_example("com.example.ledgerdesk")
    server = LedgerDesk({"status": "error", "error": {"code": "NOT_FOUND", "message": "no invoice INV-9"}})
    executor = ComExecutor(backend=PythonObjectBackend({"LedgerDesk.Application": lambda: server}))
    with pytest.raises(AaiError) as caught:
        await executor.execute(invocation(app, "getInvoice", {"number": "INV-9"}))
    assert caught.value.code is ErrorCode.NOT_FOUND and "no invoice INV-9" in caught.value.message


# --------------------------------------------------------------------------- availability, timeout


def test_com_tools_are_unavailable_off_windows_without_an_explicit_backend() -> None:
    tool = load_example("com.example.planwise").tools[0]
    assert ComExecutor(platform="linux").unavailable_reason(tool) == "needs Windows (COM)"
    assert ComExecutor(platform="darwin").unavailable_reason(tool) == "needs Windows (COM)"
    assert ComExecutor(backend=PythonObjectBackend({}), platform="linux").unavailable_reason(tool) is None


def test_on_windows_the_reason_says_to_install_pywin32_until_it_is_importable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    tool = load_example("com.example.ledgerdesk").tools[0]
    monkeypatch.setattr(com, "pywin32_installed", lambda: False)
    reason = ComExecutor(platform="win32").unavailable_reason(tool)
    assert reason is not None and "install pywin32" in reason
    monkeypatch.setattr(com, "pywin32_installed", lambda: True)
    assert ComExecutor(platform="win32").unavailable_reason(tool) is None


async def test_a_sequence_past_its_timeout_fails_with_timeout_and_stops_after_the_running_action() -> None:
    release, journal = threading.Event(), Journal()

    class Slow(PlanwiseApplication):
        def GetCalendar(self, name: str) -> PlanwiseCalendar:
            release.wait(5)
            return super().GetCalendar(name)

    app = load_example("com.example.planwise")
    executor = ComExecutor(
        backend=PythonObjectBackend({"Planwise.Application": lambda: Slow(journal, "Application")})
    )
    call = invocation(app, "list_events", {"from": "a", "to": "b", "calendar": "Work"}, timeout_ms=100)
    with pytest.raises(AaiError) as caught:
        await executor.execute(call)
    assert caught.value.code is ErrorCode.TIMEOUT
    release.set()
    for _ in range(100):  # the abandoned thread finishes GetCalendar, then stops
        if journal.entries:
            break
        threading.Event().wait(0.01)
    threading.Event().wait(0.05)
    assert journal.entries == [("call", "Application", "GetCalendar", "Work")]


# --------------------------------------------------------------------------- through the gateway


async def test_the_gateway_runs_a_com_tool_with_validated_defaulted_arguments() -> None:
    app, journal = load_example("com.example.planwise"), Journal()
    registry = ExecutorRegistry()
    registry.register(ExecutionType.COM, planwise(journal))
    gateway = Gateway(
        Catalog(entries=[CatalogEntry.of(app, "test")]), registry, consent=trusting_gate(app.id)
    )
    result = await gateway.execute(
        app.id,
        "create_event",
        {"title": "T", "start": "2025-06-03T14:00:00+02:00", "end": "2025-06-03T15:00:00+02:00"},
        caller=Caller("test"),
    )
    assert result == "evt-42"
    assert ("call", "Application", "GetCalendar", "Personal") in journal.entries
    with pytest.raises(AaiError) as caught:
        await gateway.execute(app.id, "create_event", {"title": 3}, caller=Caller("test"))
    assert caught.value.code is ErrorCode.INVALID_PARAMS


# --------------------------------------------------------------------------- the pywin32 backend


class FakeComError(Exception):
    """pywintypes.com_error: args[0] is the HRESULT."""


def fake_pywin32(monkeypatch: pytest.MonkeyPatch, registered: dict[str, Any]) -> list[str]:
    """pythoncom, pywintypes and win32com.client stand-ins in sys.modules; returns the journal of
    COM initialisation calls."""
    journal: list[str] = []
    pythoncom = types.ModuleType("pythoncom")
    pythoncom.CoInitialize = lambda: journal.append("CoInitialize")  # type: ignore[attr-defined]
    pythoncom.CoUninitialize = lambda: journal.append("CoUninitialize")  # type: ignore[attr-defined]
    pywintypes = types.ModuleType("pywintypes")
    pywintypes.com_error = FakeComError  # type: ignore[attr-defined]
    win32com = types.ModuleType("win32com")
    win32com.__spec__ = importlib.machinery.ModuleSpec("win32com", None)
    client = types.ModuleType("win32com.client")

    def dispatch(prog_id: str) -> Any:
        if prog_id == "Broken.Application":
            raise FakeComError(-2147024891, "Access is denied.", None, None)
        if prog_id not in registered:
            raise FakeComError(-2147221005, "Invalid class string", None, None)
        journal.append(f"Dispatch {prog_id}")
        return registered[prog_id]()

    client.Dispatch = dispatch  # type: ignore[attr-defined]
    win32com.client = client  # type: ignore[attr-defined]
    for name, module in (
        ("pythoncom", pythoncom),
        ("pywintypes", pywintypes),
        ("win32com", win32com),
        ("win32com.client", client),
    ):
        monkeypatch.setitem(sys.modules, name, module)
    return journal


async def test_on_windows_the_pywin32_backend_initialises_com_per_sequence_and_dispatches_by_prog_id(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    journal = Journal()
    com_journal = fake_pywin32(
        monkeypatch, {"Outlook.Application": lambda: OutlookApplication(journal, "Application")}
    )
    app = load_windows(SPEC_MAIL)
    executor = ComExecutor(platform="win32")
    assert executor.unavailable_reason(app.tools[0]) is None
    arguments = {"to": "bob@example.com", "subject": "Hi", "body": "x"}
    result = await executor.execute(invocation(app, "send_email", arguments))
    assert result == {"success": True, "message_id": "generated"}
    assert com_journal == ["CoInitialize", "Dispatch Outlook.Application", "CoUninitialize"]
    assert ("call", "MailItem", "Send") in journal.entries


async def test_on_windows_an_unregistered_prog_id_is_unavailable_and_other_com_errors_are_the_apps(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    com_journal = fake_pywin32(monkeypatch, {})
    app = load_windows(SPEC_MAIL)
    with pytest.raises(AaiError) as missing:
        await ComExecutor(platform="win32").execute(
            invocation(app, "send_email", {"to": "a", "subject": "b", "body": "c"})
        )
    assert missing.value.code is ErrorCode.SERVICE_UNAVAILABLE
    assert "'Outlook.Application'" in missing.value.message
    assert com_journal == ["CoInitialize", "CoUninitialize"]  # uninitialised after a failure too
    backend = com_backend_win.PyWin32Backend()
    with pytest.raises(FakeComError):
        backend.create("Broken.Application")


async def test_off_windows_a_direct_call_is_unavailable_not_an_import_error() -> None:
    app = load_windows(SPEC_MAIL)
    with pytest.raises(AaiError) as caught:
        await ComExecutor(platform="linux").execute(
            invocation(app, "send_email", {"to": "a", "subject": "b", "body": "c"})
        )
    assert caught.value.code is ErrorCode.SERVICE_UNAVAILABLE and "needs Windows" in caught.value.message


def test_the_gateway_never_imports_pywin32_off_windows() -> None:
    probe = (
        "import sys\n"
        "from aai_gateway.executors.base import ExecutorSettings\n"
        "from aai_gateway.executors.defaults import default_registry\n"
        "from aai_gateway.server import app\n"
        "registry = default_registry(ExecutorSettings())\n"
        "names = ('win32com', 'pythoncom', 'pywintypes', 'win32api')\n"
        "loaded = [m for m in sys.modules if m.split('.')[0] in names]\n"
        "print(loaded)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "[]"
