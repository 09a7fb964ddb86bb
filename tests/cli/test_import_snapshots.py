"""`aai-gateway import` starting each imported server once, as the user runs it (a child process,
a home folder of the test's own), with PyPI's `mcp-server-time` as the real server: its tools are
kept as a snapshot the gateway uses, its descriptor is described in the server's words, a server
that cannot start is reported and keeps its descriptor, and `--no-start` / `--dry-run` start
nothing."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from tests.cli.processes import run_cli, user_env
from tests.cli.test_import_command import descriptor, import_
from tests.peers import mcp_server_time

TIME_TOOLS = ["get_current_time", "convert_time"]


def write_config(tmp_path: Path, servers: dict[str, dict[str, Any]]) -> Path:
    config = tmp_path / "claude_desktop_config.json"
    config.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    return config


def marking_server(tmp_path: Path) -> tuple[dict[str, Any], Path]:
    """A server entry whose program leaves a file behind when it is started, and that file."""
    mark = tmp_path / "started"
    script = tmp_path / "marking_server.py"
    script.write_text(f"open({str(mark)!r}, 'w').close()\n", encoding="utf-8")
    return {"command": sys.executable, "args": [str(script)]}, mark


def snapshots(env: dict[str, str]) -> list[dict[str, Any]]:
    listed = run_cli(env, "cache", "--json")
    assert listed.code == 0, listed.err
    found: list[dict[str, Any]] = json.loads(listed.out)["mcp_snapshots"]
    return found


def test_an_imported_server_is_started_once_its_tools_are_kept_and_it_is_described_in_its_own_words(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    env = user_env(home, None)
    config = write_config(
        tmp_path, {"time": {"command": mcp_server_time(), "args": ["--local-timezone", "UTC"]}}
    )

    done = import_(env, config)

    assert done.code == 0, done.err
    assert "  time: started, tools: 2" in done.out
    imported = descriptor(home, "time")
    description = imported["app"]["description"]  # type: ignore[index]
    assert description.startswith("Tools: get_current_time (")
    assert "convert_time (" in description
    assert f"      described as: {description}" in done.out
    assert imported["x-imported-from"]["server"] == "time"  # type: ignore[index]
    [snapshot] = snapshots(env)
    assert (snapshot["app"], snapshot["tools"], snapshot["state"]) == ("time", TIME_TOOLS, "current")
    assert snapshot["server"]["name"] == "mcp-time"
    # The gateway lists the app with that description and guides it from the snapshot.
    scan = json.loads(run_cli(env, "scan", "--json").out)
    [app] = [a for a in scan["apps"] if a["id"] == "time"]
    assert app["description"] == description


def test_a_server_that_cannot_start_is_reported_and_its_descriptor_is_still_written(tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = user_env(home, None)
    missing = tmp_path / "no-such-mcp-server"
    config = write_config(
        tmp_path,
        {"broken": {"command": str(missing)}, "time": {"command": mcp_server_time()}},
    )

    done = import_(env, config)

    assert done.code == 0, done.err
    [line] = [line for line in done.out.splitlines() if line.startswith("  broken: ")]
    assert line.startswith("  broken: failed: broken is not reachable: its MCP server command")
    assert str(missing) in line
    assert descriptor(home, "broken")["app"]["description"] == "MCP server broken, runs no-such-mcp-server"  # type: ignore[index]
    assert "  time: started, tools: 2" in done.out
    assert [s["app"] for s in snapshots(env)] == ["time"]


def test_a_server_that_does_not_answer_in_time_is_reported_and_its_descriptor_is_still_written(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    env = user_env(home, None)
    config = write_config(
        tmp_path, {"silent": {"command": sys.executable, "args": ["-c", "import time; time.sleep(120)"]}}
    )

    done = import_(env, config, "--start-timeout", "1")

    assert done.code == 0, done.err
    assert "  silent: failed: its server did not list its tools within 1 s" in done.out
    assert (home / ".aai" / "silent" / "aai.json").is_file()
    assert snapshots(env) == []


def test_no_start_and_dry_run_start_no_server(tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = user_env(home, None)
    entry, mark = marking_server(tmp_path)
    config = write_config(tmp_path, {"marking": entry})

    dry = import_(env, config, "--dry-run")
    real = import_(env, config, "--no-start")

    assert dry.code == 0 and real.code == 0, dry.err + real.err
    assert not mark.exists()
    assert "not in a dry run: a real run starts each server once" in dry.out
    assert "Servers not started (--no-start)" in real.out
    assert descriptor(home, "marking")["app"]["description"].startswith("MCP server marking, runs python")  # type: ignore[index]
    assert snapshots(env) == []


def test_importing_again_without_starting_keeps_the_description_its_snapshot_gives(tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = user_env(home, None)
    config = write_config(tmp_path, {"time": {"command": mcp_server_time()}})

    first = import_(env, config)
    described = descriptor(home, "time")["app"]["description"]  # type: ignore[index]
    again = import_(env, config, "--no-start")

    assert first.code == 0 and again.code == 0, first.err + again.err
    assert described.startswith("Tools: get_current_time")
    assert descriptor(home, "time")["app"]["description"] == described  # type: ignore[index]
