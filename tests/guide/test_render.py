"""The operation guide: snapshots of every bundled example, layout, app info and operations."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema_rs
import pytest

from aai_gateway.descriptor.model import (
    AcpChannel,
    AppleEventsChannel,
    Channel,
    ComChannel,
    DbusChannel,
    HttpChannel,
    IntentChannel,
    ScriptChannel,
    StdioChannel,
    UrlSchemeChannel,
)
from aai_gateway.descriptor.platforms import ExecutionType
from aai_gateway.guide import render_guide

from .conftest import Snapshot, updating_snapshots
from .helpers import (
    EXAMPLES_DIR,
    HOSTS,
    ROOT,
    SNAPSHOT_DIR,
    all_paths,
    example_calls,
    example_paths,
    load,
    load_with_tools,
    make_app,
    make_tool,
    path_id,
    section,
)

# --------------------------------------------------------------------------- snapshots


@pytest.mark.parametrize("path", example_paths(), ids=lambda p: p.parent.name)
def test_the_guide_of_every_bundled_example_matches_its_snapshot(path: Path, snapshot: Snapshot) -> None:
    app = load_with_tools(path)
    snapshot(app.id, render_guide(app))


def test_every_snapshot_belongs_to_a_bundled_example() -> None:
    if updating_snapshots():
        pytest.skip("snapshots are being rewritten")
    ids = {p.parent.name for p in example_paths()}
    stale = sorted(p.name for p in SNAPSHOT_DIR.glob("*.md") if p.stem not in ids)
    assert not stale, f"snapshots without an example (delete them): {stale}"


# --------------------------------------------------------------------------- whole guides


@pytest.mark.parametrize("path", all_paths(), ids=path_id)
def test_every_example_call_in_a_guide_is_valid_for_its_tool(path: Path) -> None:
    for host in HOSTS:
        app = load(path, host)
        calls = example_calls(render_guide(app))
        assert sorted(calls) == sorted(t.name for t in app.tools)
        for tool in app.tools:
            assert calls[tool.name]["app"] == app.id
            assert jsonschema_rs.Draft7Validator(tool.parameters).is_valid(calls[tool.name]["args"]), (
                tool.name
            )


@pytest.mark.parametrize("path", all_paths(), ids=path_id)
def test_no_guide_contains_a_placeholder_instead_of_real_arguments(path: Path) -> None:
    for host in HOSTS:
        guide = render_guide(load(path, host))
        assert "{ ... }" not in guide
        for block in re.findall(r"```\n(.*?)\n```", guide, flags=re.DOTALL):
            assert "..." not in block
            assert "…" not in block


RENDER_EVERY_GUIDE = """
import json
from aai_gateway.guide import render_guide
from tests.guide.helpers import HOSTS, all_paths, load

print(json.dumps({
    f"{path} on {host} in {locale}": render_guide(load(path, host), locale=locale)
    for path in all_paths() for host in HOSTS for locale in (None, "de", "zh-CN")
}))
"""


def test_every_guide_is_the_same_text_in_every_process_whatever_its_hash_seed() -> None:
    # Iterating a set or a dict built from one would order the guide by string hashes, which
    # change from one process to the next (PYTHONHASHSEED): agents would see guides change.
    path = EXAMPLES_DIR / "com.example.planwise" / "aai.json"
    first = render_guide(load(path, "linux"), locale="de")
    assert render_guide(load(path, "linux"), locale="de") == first
    assert render_guide(load(path, "linux"), locale="de") == render_guide(load(path, "linux"), locale="de")

    renders = []
    for seed in ("0", "1", "2", "3"):
        child = subprocess.run(
            [sys.executable, "-c", RENDER_EVERY_GUIDE],
            cwd=ROOT,
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert child.returncode == 0, child.stderr
        renders.append(json.loads(child.stdout))
    assert renders[0][f"{path} on linux in de"] == first
    for number, render in enumerate(renders[1:], start=1):
        changed = sorted(name for name in render if render[name] != renders[0][name])
        assert changed == [], f"with PYTHONHASHSEED={number} these guides differ from PYTHONHASHSEED=0"


def test_the_guide_follows_the_spec_layout() -> None:
    guide = render_guide(load(EXAMPLES_DIR / "dev.aai.example.httpbin" / "aai.json"))
    headings = [line for line in guide.splitlines() if line.startswith("#")]
    assert headings[:4] == [
        "# Local HTTP Echo Operation Guide",
        "## App Info",
        "## Authentication",
        "## Available Operations",
    ]
    assert headings[4:] == ["### echo_message", "### get_status", "### delayed_reply"]
    assert guide.endswith(
        "---\n\nUse aai_exec to execute operations. Arguments are validated against the operation's "
        "parameter schema before it runs; optional arguments left out take their defaults.\n"
    )


# --------------------------------------------------------------------------- app info and names


@pytest.mark.parametrize(
    ("locale", "title"),
    [
        ("zh-CN", "本地 HTTP 回显"),
        ("zh-TW", "本地 HTTP 回显"),  # same language
        ("zh_CN.UTF-8", "本地 HTTP 回显"),
        ("ja", "ローカル HTTP エコー"),
        ("fr", "Local HTTP Echo"),  # no French name: the default language
        (None, "Local HTTP Echo"),
    ],
)
def test_the_title_uses_the_name_for_the_locale_and_falls_back(locale: str | None, title: str) -> None:
    guide = render_guide(load(EXAMPLES_DIR / "dev.aai.example.httpbin" / "aai.json"), locale=locale)
    assert guide.startswith(f"# {title} Operation Guide\n")


def test_app_info_lists_id_platform_version_description_names_aliases_and_access() -> None:
    info = section(render_guide(load(EXAMPLES_DIR / "dev.aai.example.httpbin" / "aai.json")), "## App Info")
    assert "- ID: dev.aai.example.httpbin\n" in info
    assert "- Platform: linux\n" in info
    assert "- Version: 1.0.0\n" in info
    assert "- Description: httpbin-style test server" in info
    assert "- Names: Local HTTP Echo | 本地 HTTP 回显 | ローカル HTTP エコー | Lokales HTTP-Echo\n" in info
    assert "- Aliases: httpbin, echo, http test, 回显, 测试服务器\n" in info
    assert "- Access: HTTP API at http://127.0.0.1:8765\n" in info


def test_an_app_with_one_name_and_no_aliases_shows_neither_line() -> None:
    info = section(render_guide(make_app()), "## App Info")
    assert "Names:" not in info
    assert "Aliases:" not in info


@pytest.mark.parametrize(
    ("channel", "platform", "text"),
    [
        (HttpChannel(base_url="https://api.example.com/v1"), "web", "HTTP API at https://api.example.com/v1"),
        (
            StdioChannel(command="/opt/app/bin/adapter", args=("--serve",)),
            "linux",
            "local adapter program (stdio)",
        ),
        (AcpChannel(command="opencode"), "linux", "local agent over the Agent Client Protocol (ACP)"),
        (
            DbusChannel(service="org.x.App", object_path="/org/x/App", interface="org.x.App"),
            "linux",
            "D-Bus service org.x.App on the session bus",
        ),
        (AppleEventsChannel(bundle_id="com.x.App"), "macos", "Apple Events to com.x.App"),
        (
            ScriptChannel(type=ExecutionType.APPLESCRIPT),
            "macos",
            "AppleScript run by the gateway on this Mac",
        ),
        (ScriptChannel(type=ExecutionType.JXA), "macos", "JavaScript for Automation (JXA)"),
        (ComChannel(prog_id="X.Application"), "windows", "COM ProgID X.Application"),
        (ComChannel(), "windows", "Windows COM automation"),
        (IntentChannel(package="com.x.app"), "android", "Android intents to package com.x.app"),
        (UrlSchemeChannel(scheme="xapp"), "ios", "iOS URL scheme xapp://"),
    ],
)
def test_access_says_how_the_app_is_reached(channel: Channel, platform: Any, text: str) -> None:
    app = make_app(make_tool(channel=channel), platform=platform)
    assert f"- Access: {text}" in render_guide(app)


def test_an_app_with_several_channels_lists_the_operations_of_each() -> None:
    guide = render_guide(load(EXAMPLES_DIR / "com.example.planwise" / "aai.json", "linux"))
    assert (
        "- Access:\n"
        "  - D-Bus service com.example.Planwise on the session bus: create_event, list_events, delete_event\n"
        "  - HTTP API at https://api.planwise.example.com/v1: find_free_time\n"
    ) in guide
    auth = section(guide, "## Authentication")
    assert "- create_event, list_events, delete_event: No sign-in needed" in auth
    assert "- find_free_time: OAuth 2.0 (scopes: events.read, events.write, freebusy.read)" in auth


def test_an_app_without_operations_on_this_machine_says_which_platforms_it_is_for() -> None:
    guide = render_guide(load(EXAMPLES_DIR / "com.apple.Music" / "aai.json", "linux"))
    assert "- Platform: macos (none of them is this machine)" in guide
    assert "No operations are available on this machine (this app's operations are for: macos)." in guide
    assert "```" not in guide


# --------------------------------------------------------------------------- operations


def test_the_exec_tool_name_is_used_in_every_example_and_in_the_footer() -> None:
    app = load(EXAMPLES_DIR / "dev.aai.example.notes" / "aai.json")
    guide = render_guide(app, exec_tool="aai:exec")
    assert sorted(example_calls(guide, "aai:exec")) == sorted(t.name for t in app.tools)
    assert "aai_exec" not in guide
    assert "Use aai:exec to execute operations." in guide


def test_a_short_example_call_fits_on_one_line() -> None:
    guide = render_guide(load(EXAMPLES_DIR / "dev.aai.example.httpbin" / "aai.json"))
    assert (
        '```\naai_exec({"app": "dev.aai.example.httpbin", "tool": "get_status", "args": {"code": 200}})\n```'
    ) in guide


def test_unavailable_tools_are_marked_with_the_reason() -> None:
    app = load(EXAMPLES_DIR / "dev.aai.example.notes" / "aai.json")
    guide = render_guide(app, unavailable={"delete_note": "python3 is not installed"})
    assert "> Not available on this machine: python3 is not installed" in section(guide, "### delete_note")
    assert guide.count("Not available on this machine") == 1


def test_a_tool_without_parameters_says_none() -> None:
    guide = render_guide(make_app(make_tool()))
    assert "**Parameters**: none\n" in guide
    assert '"args": {}' in guide
