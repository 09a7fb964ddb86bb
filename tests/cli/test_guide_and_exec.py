"""`aai-gateway guide` and `exec` go through the same gateway code as the MCP tools."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from aai_gateway.cli.main import main
from tests.builders import trusting_config, write_json
from tests.executors.mcp_support import mcp_document
from tests.executors.mobile_support import PLANWISE, calls, stand_in
from tests.server.conftest import adapter_app

PLANWISE_DIR = PLANWISE.parent


@pytest.fixture
def apps(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The adapter app, auto-allowed by the user's config (these tests are about exec itself)."""
    write_json(tmp_path / "apps" / "adapter.json", adapter_app())
    monkeypatch.setenv(
        "AAI_GATEWAY_CONFIG", str(trusting_config(tmp_path / "config.toml", ["dev.test.adapter"]))
    )
    return tmp_path / "apps"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_guide_prints_the_markdown_guide_of_an_app_found_by_alias(
    capsys: pytest.CaptureFixture[str], apps: Path
) -> None:
    code, out, _ = run(capsys, "guide", "echo box", "--no-default-paths", "--path", str(apps))
    assert code == 0
    assert out.startswith("# Adapter Operation Guide")
    assert '"tool": "echo"' in out


def test_guide_uses_the_requested_locale_for_the_app_name(
    capsys: pytest.CaptureFixture[str], apps: Path
) -> None:
    _, out, _ = run(
        capsys, "guide", "dev.test.adapter", "--locale", "zh-CN", "--no-default-paths", "--path", str(apps)
    )
    assert out.startswith("# Adapter（中文） Operation Guide")


def test_exec_prints_the_result_with_defaults_applied(capsys: pytest.CaptureFixture[str], apps: Path) -> None:
    code, out, _ = run(
        capsys,
        "exec",
        "dev.test.adapter",
        "echo",
        "--args",
        '{"text": "hi"}',
        "--no-default-paths",
        "--path",
        str(apps),
    )
    assert code == 0
    assert json.loads(out) == {"tool": "echo", "params": {"text": "hi", "count": 1}}


def test_exec_reports_an_operation_error_on_stderr_and_exits_one(
    capsys: pytest.CaptureFixture[str], apps: Path
) -> None:
    code, out, err = run(
        capsys, "exec", "dev.test.adapter", "echo", "--args", "{}", "--no-default-paths", "--path", str(apps)
    )
    assert (code, out) == (1, "")
    assert json.loads(err)["error"]["code"] == "INVALID_PARAMS"


def test_exec_refuses_arguments_that_are_not_json(capsys: pytest.CaptureFixture[str], apps: Path) -> None:
    code, _, err = run(
        capsys, "exec", "dev.test.adapter", "echo", "--args", "{text: hi}", "--path", str(apps)
    )
    assert code == 2
    assert "--args is not JSON" in err


def test_options_before_the_command_are_kept(capsys: pytest.CaptureFixture[str], apps: Path) -> None:
    code, out, _ = run(capsys, "--no-default-paths", "--path", str(apps), "guide", "dev.test.adapter")
    assert code == 0 and "Adapter Operation Guide" in out


def test_exec_without_consent_and_without_a_terminal_reports_consent_required_with_the_command(
    capsys: pytest.CaptureFixture[str], apps: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AAI_GATEWAY_CONFIG", str(tmp_path / "no-config.toml"))
    code, out, err = run(
        capsys,
        "exec",
        "dev.test.adapter",
        "echo",
        "--args",
        '{"text": "hi"}',
        "--no-default-paths",
        "--path",
        str(apps),
    )
    assert (code, out) == (1, "")
    error = json.loads(err)["error"]
    assert error["code"] == "CONSENT_REQUIRED"
    assert error["data"]["caller"] == "aai-gateway CLI"
    assert error["data"]["command"] == (
        "aai-gateway consent grant '--caller=aai-gateway CLI' --app=dev.test.adapter --tool=echo "
        f"--source=file:{apps / 'adapter.json'}"
    )
    assert "consent_url" not in error["data"]  # no approval link where an agent could read it


def test_exec_for_the_android_platform_sends_the_intent_through_adb(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = tmp_path / "bin"
    stand_in(
        bin_dir,
        "adb",
        'print(\'Broadcast completed: result=-1, data="{\\"event_id\\": \\"e-7\\"}"\')\n',
    )
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv(
        "AAI_GATEWAY_CONFIG", str(trusting_config(tmp_path / "config.toml", ["com.example.planwise"]))
    )
    event = {"title": "Dentist", "start": "2025-06-03T14:00:00+02:00", "end": "2025-06-03T15:00:00+02:00"}
    planwise = ["--no-default-paths", "--path", str(PLANWISE_DIR)]
    create = ["exec", "com.example.planwise", "create_event", "--args", json.dumps(event)]
    code, out, err = run(capsys, *create, "--platform", "android", *planwise)
    assert code == 0, err
    assert json.loads(out) == {"event_id": "e-7"}
    [argv] = calls(bin_dir)
    assert argv[:4] == ["shell", "am", "broadcast", "-a"]
    code, _, err = run(
        capsys, "exec", "com.example.planwise", "create_event", "--args", json.dumps(event), *planwise
    )
    assert code == 1 and len(calls(bin_dir)) == 1  # on this OS the same tool is not the Android one


@pytest.fixture
def mcp_apps(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The test MCP server (tests/executors/mcp_upstream.py) as an app, auto-allowed."""
    write_json(tmp_path / "apps" / "upstream" / "aai.json", mcp_document(app_id="dev.test.upstream"))
    monkeypatch.setenv(
        "AAI_GATEWAY_CONFIG", str(trusting_config(tmp_path / "config.toml", ["dev.test.upstream"]))
    )
    return tmp_path / "apps"


def test_exec_prints_an_mcp_servers_result_as_mcp_writes_it(
    capsys: pytest.CaptureFixture[str], mcp_apps: Path
) -> None:
    code, out, _ = run(
        capsys, "exec", "dev.test.upstream", "blocks", "--no-default-paths", "--path", str(mcp_apps)
    )

    printed = json.loads(out)
    assert code == 0
    assert [block["type"] for block in printed["content"]] == [
        "text",
        "image",
        "audio",
        "resource_link",
        "resource",
        "resource",
    ]
    assert printed["structuredContent"] == {"kinds": 6, "nested": {"list": [1, 2, 3]}}
    assert "isError" not in printed


def test_exec_exits_one_when_the_mcp_tool_reports_its_own_failure(
    capsys: pytest.CaptureFixture[str], mcp_apps: Path
) -> None:
    code, out, _ = run(
        capsys, "exec", "dev.test.upstream", "tool_error", "--no-default-paths", "--path", str(mcp_apps)
    )

    assert code == 1
    assert json.loads(out) == {"content": [{"type": "text", "text": "the disk is full"}], "isError": True}
