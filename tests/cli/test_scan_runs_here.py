"""`aai-gateway scan` says, per app, whether it can run on this machine."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from aai_gateway.cli.main import main
from aai_gateway.cli.scan import runs_here, short_reason
from aai_gateway.descriptor import Platform, Source, Tool, host_platform, load_text
from aai_gateway.executors.defaults import default_registry

PLANWISE = Path(__file__).resolve().parents[2] / "examples" / "com.example.planwise" / "aai.json"


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


def test_scan_shows_a_runs_here_column_and_json_lists_unavailable_tools(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    assert main(["scan", "--path", str(PLANWISE.parent)]) == 0
    out = capsys.readouterr().out
    assert "RUNS HERE" in out
    assert main(["scan", "--json", "--path", str(PLANWISE.parent)]) == 0
    apps = {app["id"]: app for app in json.loads(capsys.readouterr().out)["apps"]}
    planwise = apps["com.example.planwise"]
    registry = default_registry(os.environ)
    assert planwise["runs_here"] == runs_here(tools(host_platform()), registry.unavailable_reason)
    assert planwise["unavailable"] == {
        tool.name: reason for tool in tools(host_platform()) if (reason := registry.unavailable_reason(tool))
    }
