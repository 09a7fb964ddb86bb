"""Every execution path asks for consent first: for each of the ten execution types, an operation
of the bundled examples never reaches its executor until the caller is allowed, and then does."""

from __future__ import annotations

from typing import Any

import pytest

from aai_gateway.consent import Decision
from aai_gateway.descriptor import ExecutionType, Platform, Tool
from aai_gateway.discovery import Catalog, CatalogEntry, load_file
from aai_gateway.errors import AaiError, ErrorCode
from aai_gateway.executors import Invocation
from aai_gateway.executors.registry import ExecutorRegistry
from aai_gateway.guide import render_guide
from aai_gateway.service import Caller, Gateway
from tests.builders import trusting_gate
from tests.guide.helpers import example_calls, example_paths

pytestmark = pytest.mark.anyio

PLATFORMS: tuple[Platform, ...] = ("linux", "macos", "windows", "android", "ios")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


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


CALLS = one_call_per_type()


def test_the_examples_cover_every_execution_type() -> None:
    assert set(CALLS) == set(ExecutionType)


@pytest.mark.parametrize("execution_type", list(ExecutionType), ids=str)
async def test_no_operation_reaches_its_executor_before_the_caller_is_allowed(
    execution_type: ExecutionType,
) -> None:
    _, entry, tool, arguments = CALLS[execution_type]
    recorder = Recorder()
    registry = ExecutorRegistry()
    for each in ExecutionType:
        registry.register(each, recorder)
    app = entry.descriptor
    consent = trusting_gate()  # trusts nothing; nobody can be asked in this process
    gateway = Gateway(Catalog(entries=[entry]), registry, consent=consent)

    with pytest.raises(AaiError) as refused:
        await gateway.execute(app.id, tool, arguments, caller=Caller("agent"))
    assert refused.value.code is ErrorCode.CONSENT_REQUIRED
    assert recorder.invocations == []

    consent.store.record_decision("agent", app, tool, Decision.ALLOW_TOOL)
    assert await gateway.execute(app.id, tool, arguments, caller=Caller("agent")) == {"ran": tool}
    assert [i.tool.execution_type for i in recorder.invocations] == [execution_type]
    with pytest.raises(AaiError) as other:
        await gateway.execute(app.id, tool, arguments, caller=Caller("another agent"))
    assert other.value.code is ErrorCode.CONSENT_REQUIRED
    assert len(recorder.invocations) == 1
