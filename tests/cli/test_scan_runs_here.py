"""`aai-gateway scan` says, per app, whether it can run on this machine."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aai_gateway.cli.main import main
from aai_gateway.cli.scan import runs_here, short_reason, unavailable_lines
from aai_gateway.descriptor import AppDescriptor, Platform, Source, Tool, host_platform, load_text
from aai_gateway.discovery.catalog import CatalogEntry

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
PLANWISE = EXAMPLES / "com.example.planwise" / "aai.json"


def load_planwise(host: Platform = "linux") -> AppDescriptor:
    result = load_text(
        PLANWISE.read_text(encoding="utf-8"), Source(kind="file", location=str(PLANWISE)), host
    )
    assert result.descriptor is not None
    return result.descriptor


def tools(host: Platform = "linux") -> tuple[Tool, ...]:
    return load_planwise(host).tools


def test_an_app_whose_tools_all_run_here_says_yes() -> None:
    assert runs_here(tools(), lambda tool: None) == "yes"


def test_an_app_with_some_runnable_tools_counts_them() -> None:
    reason_of = lambda tool: None if tool.name == "delete_event" else "no session bus: set it"  # noqa: E731
    assert runs_here(tools(), reason_of) == "1/4 tools"


def test_an_app_with_no_runnable_tool_shows_the_head_of_the_first_reason() -> None:
    reason = "needs adb (Android platform tools) and a connected device"
    assert runs_here(tools("android"), lambda tool: reason) == "no: needs adb"
    assert runs_here((), lambda tool: None) == "no tools"


def test_a_long_reason_is_never_cut_its_head_is_the_cell_and_it_follows_whole() -> None:
    long = "ACP agent command 'a-very-long-agent-name' was not found on PATH; install it with pipx"
    assert (
        runs_here(tools(), lambda tool: long)
        == "no: ACP agent command 'a-very-long-agent-name' was not found on PATH"
    )
    assert short_reason("x" * 200) == "x" * 200
    entry = CatalogEntry.of(load_planwise(), "test")
    lines = unavailable_lines(entry, lambda tool: long)
    assert lines == [f"  com.example.planwise (all 4 tools): {long}"]


@pytest.mark.skipif(host_platform() != "linux", reason="the expected cells are those of a Linux machine")
def test_scan_says_for_each_example_whether_and_why_it_runs_on_this_linux_machine(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("DBUS_SESSION_BUS_ADDRESS", raising=False)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))  # no session bus either way
    monkeypatch.setenv("COLUMNS", "250")
    examples = ["--no-default-paths", "--path", str(EXAMPLES)]
    assert main(["scan", *examples]) == 0
    out = capsys.readouterr().out
    why = out.split("Why some tools cannot run here\n", 1)[1]
    assert "  com.example.ledgerdesk (all 4 tools): needs Windows (COM)\n" in why
    table = {line.split()[0]: line for line in out.splitlines() if line.startswith(("com.", "dev."))}
    assert "  no: needs Windows  " in table["com.example.ledgerdesk"]
    assert "  no: only for macos  " in table["com.apple.Music"]
    assert (
        "…" not in "".join(table) and "no: ACP agent command" in table["ai.opencode.agent"]
        if "ai.opencode.agent" in table
        else True
    )

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


def test_in_a_narrow_terminal_ids_are_never_cut_and_every_reason_is_shown_whole(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("DBUS_SESSION_BUS_ADDRESS", raising=False)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["scan", "--no-default-paths", "--path", str(EXAMPLES)]) == 0
    out = capsys.readouterr().out
    ids = [line.split()[1] for line in out.splitlines() if line.startswith("ID:")]  # one block per app
    assert "dev.aai.example.timetracker" in ids and not any(i.endswith("…") for i in ids)
    why = out.split("Why some tools cannot run here\n", 1)[1]
    assert "(all 5 tools): needs macOS (osascript); this is " in why
