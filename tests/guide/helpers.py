"""Descriptors for the guide tests: the bundled examples, the spec fixtures, and small apps
built directly from the canonical model."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from aai_gateway.descriptor import AppDescriptor, LocalizedName, Platform, Source, load_text
from aai_gateway.descriptor.model import Channel, PlatformSection, StdioChannel, Tool

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES_DIR = ROOT / "examples"
SPEC_DIR = ROOT / "tests" / "fixtures" / "spec"
SNAPSHOT_DIR = Path(__file__).resolve().parent / "snapshots"
HOSTS: tuple[Platform, ...] = ("linux", "macos", "windows")


def example_paths() -> list[Path]:
    return sorted(EXAMPLES_DIR.glob("*/aai.json"))


def spec_paths() -> list[Path]:
    return sorted(p for p in SPEC_DIR.glob("*.json") if p.name != "fragments.json")


def all_paths() -> list[Path]:
    return [*example_paths(), *spec_paths()]


def path_id(path: Path) -> str:
    return path.parent.name if path.name == "aai.json" else path.stem


def load(path: Path, host: Platform = "linux") -> AppDescriptor:
    result = load_text(path.read_bytes(), Source(kind="file", location=str(path)), host)
    assert result.descriptor is not None, result.problems
    return result.descriptor


def load_with_tools(path: Path) -> AppDescriptor:
    """The descriptor as loaded on the first host (linux, macos, windows) where it has tools."""
    for host in HOSTS:
        app = load(path, host)
        if app.tools:
            return app
    raise AssertionError(f"{path} has tools on no desktop host")


def every_tool() -> list[tuple[str, Tool]]:
    """(label, tool) for each distinct tool of the examples and spec fixtures, on every host."""
    found: dict[str, Tool] = {}
    for path in [*example_paths(), *spec_paths()]:
        for host in HOSTS:
            for tool in load(path, host).tools:
                label = f"{path.parent.name if path.name == 'aai.json' else path.stem}:{tool.name}"
                if label in found and found[label].parameters != tool.parameters:
                    label = f"{label}@{host}"
                found.setdefault(label, tool)
    return sorted(found.items())


def make_tool(
    name: str = "do_it",
    parameters: dict[str, Any] | None = None,
    *,
    returns: dict[str, Any] | None = None,
    channel: Channel | None = None,
    description: str = "Do the thing.",
) -> Tool:
    return Tool(
        name=name,
        description=description,
        parameters=parameters if parameters is not None else {"type": "object", "properties": {}},
        returns=returns,
        channel=channel or StdioChannel(command="adapter"),
    )


def make_app(
    *tools: Tool,
    app_id: str = "com.example.test",
    names: dict[str, str] | None = None,
    aliases: tuple[str, ...] = (),
    platform: Platform = "linux",
) -> AppDescriptor:
    tools = tools or (make_tool(),)
    section = PlatformSection(
        platform=platform, declared_type=str(tools[0].channel.type), channel=tools[0].channel, tools=tools
    )
    return AppDescriptor(
        dialect="C",
        schema_version="1.0",
        version="1.0.0",
        declared_version="1.0.0",
        id=app_id,
        names=LocalizedName(names=names or {"en": "Test App"}, default_lang=next(iter(names or {"en": ""}))),
        description="An app for tests",
        aliases=aliases,
        sections=(section,),
        platform=platform,
        tools=tools,
        source=Source(kind="inline", location="test"),
    )


def example_calls(guide: str, exec_tool: str = "aai_exec") -> dict[str, dict[str, Any]]:
    """Tool name → the call object of its example block."""
    calls: dict[str, dict[str, Any]] = {}
    for block in re.findall(r"```\n(.*?)\n```", guide, flags=re.DOTALL):
        assert block.startswith(f"{exec_tool}(") and block.endswith(")"), block
        call = json.loads(block[len(exec_tool) + 1 : -1])
        calls[call["tool"]] = call
    return calls


def section(guide: str, heading: str) -> str:
    """The text under `heading` up to the next heading of the same or a higher level."""
    level = heading.split(" ", 1)[0]
    start = guide.index(f"{heading}\n")
    following = re.compile(rf"^#{{1,{len(level)}}} ", re.MULTILINE)
    end = following.search(guide, start + len(heading) + 1)
    return guide[start : end.start() if end else len(guide)]
