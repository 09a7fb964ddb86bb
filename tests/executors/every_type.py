"""One operation of the bundled examples for every execution type, and an executor that only
records what reaches it (for tests of what happens before an executor runs)."""

from __future__ import annotations

from typing import Any

from aai_gateway.descriptor import ExecutionType, Platform, Tool
from aai_gateway.discovery import CatalogEntry, load_file
from aai_gateway.executors import Invocation
from aai_gateway.guide import render_guide
from tests.guide.helpers import example_calls, example_paths

PLATFORMS: tuple[Platform, ...] = ("linux", "macos", "windows", "android", "ios")


class Recorder:
    """An executor that runs nothing and remembers what reached it."""

    def __init__(self) -> None:
        self.invocations: list[Invocation] = []

    def unavailable_reason(self, tool: Tool) -> str | None:
        return None

    async def execute(self, invocation: Invocation) -> Any:
        self.invocations.append(invocation)
        return {"ran": invocation.tool.name}

    async def aclose(self) -> None:
        return None


def one_call_per_type() -> dict[ExecutionType, tuple[Platform, CatalogEntry, str, dict[str, Any]]]:
    """For each execution type: an example app (as loaded on some OS), a tool and valid arguments."""
    found: dict[ExecutionType, tuple[Platform, CatalogEntry, str, dict[str, Any]]] = {}
    for platform in PLATFORMS:
        for path in example_paths():
            entry = load_file(path, "examples", platform)
            assert isinstance(entry, CatalogEntry), entry
            calls = example_calls(render_guide(entry.descriptor))
            for tool in entry.descriptor.tools:
                found.setdefault(tool.execution_type, (platform, entry, tool.name, calls[tool.name]["args"]))
    return found
