"""`aai-gateway scan` says, per app, whether it can run on this machine."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aai_gateway.cli.main import main
from aai_gateway.cli.scan import runs_here, short_reason
from aai_gateway.descriptor import Platform, Source, Tool, host_platform, load_text

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
PLANWISE = EXAMPLES / "com.example.planwise" / "aai.json"


def tools(host: Platform = "linux") -> tuple[Tool, ...]:
    result = load_text(
        PLANWISE.read_text(encoding="utf-8"), Source(kind="file", location=str(PLANWISE)), host
    )
    assert result.descriptor is not None
    return result.descriptor.tools


def test_an_app_whose_tools_all_run_here_says_yes() -> None:
    assert runs_here(tools(), lambda tool: None) == "yes"


def test_an_app_with_some_runnable_tools_counts_them() -> None:
    reason_of = lambda tool: None if tool.name == "delete_event" else "no session bus: set it"  # noqa: E731
    assert runs_here(tools(), reason_of) == "1/4 tools"


def test_an_app_with_no_runnable_tool_shows_the_head_of_the_first_reason() -> None:
    reason = "needs adb (Android platform tools) and a connected device"
    assert runs_here(tools("android"), lambda tool: reason) == "no: needs adb"
    assert runs_here((), lambda tool: None) == "no tools"


def test_long_reasons_are_cut_to_a_readable_cell() -> None:
    cell = runs_here(tools(), lambda tool: "x" * 200)
    assert cell.endswith("…") and len(cell) == 40
    assert short_reason("ACP agent command 'x' was not found on PATH; install it") == (
        "ACP agent command 'x' was not found on PATH"
    )


@pytest.mark.skipif(host_platform() != "linux", reason="the expected cells are those of a Linux machine")
def test_scan_says_for_each_example_whether_and_why_it_runs_on_this_linux_machine(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("DBUS_SESSION_BUS_ADDRESS", raising=False)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))  # no session bus either way
    monkeypatch.setenv("COLUMNS", "250")
    examples = ["--no-default-paths", "--path", str(EXAMPLES)]
    assert main(["scan", *examples]) == 0
    table = {
        line.split()[0]: line
        for line in capsys.readouterr().out.splitlines()
        if line.startswith(("com.", "dev."))
    }
    assert "  no: needs Windows  " in table["com.example.ledgerdesk"]
    assert "  no: only for macos  " in table["com.apple.Music"]

    assert main(["scan", "--json", *examples]) == 0
    apps = {app["id"]: app for app in json.loads(capsys.readouterr().out)["apps"]}
    cells = {app_id: app["runs_here"] for app_id, app in apps.items()}
    assert cells["dev.aai.example.notes"] == "yes"  # a stdio adapter run by python3
    assert cells["dev.aai.example.timetracker"] == "no: needs macOS"
    assert cells["com.example.ledgerdesk"] == "no: needs Windows"
    assert cells["com.apple.Music"] == "no: only for macos"
    assert cells["dev.aai.example.files"] == "no: no session bus"
    assert cells["com.example.planwise"] == "1/4 tools"  # its web tool runs anywhere
    assert set(apps["com.example.planwise"]["unavailable"]) == {"create_event", "list_events", "delete_event"}
    assert apps["com.example.ledgerdesk"]["unavailable"]["createInvoice"] == "needs Windows (COM)"
    assert apps["com.apple.Music"]["unavailable"] == {}
