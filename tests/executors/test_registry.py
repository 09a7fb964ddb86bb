"""The registry's dispatch: the one place that decides which executor runs a tool, and that a
descriptor fetched from the web runs HTTP tools only, whatever executor would take the rest."""

from __future__ import annotations

from typing import Any

import pytest

from aai_gateway.auth.secrets import MemorySecretStore
from aai_gateway.consent.gate import ConsentGate
from aai_gateway.consent.prompt_text import Answer, ConsentQuestion
from aai_gateway.consent.store import ConsentStore
from aai_gateway.descriptor import AppDescriptor, ExecutionType, Source
from aai_gateway.discovery import Catalog, CatalogEntry
from aai_gateway.errors import AaiError, ErrorCode
from aai_gateway.executors import ExecutorRegistry
from aai_gateway.service import Caller, Gateway
from tests.builders import trusting_gate
from tests.executors.every_type import Recorder, one_call_per_type

pytestmark = pytest.mark.anyio

CALLS = one_call_per_type()
NOT_HTTP = [each for each in ExecutionType if each is not ExecutionType.HTTP]
ORIGIN = "https://apps.example"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def from_the_web(app: AppDescriptor) -> AppDescriptor:
    """The same descriptor, as if fetched from ORIGIN."""
    source = Source(kind="web", location=f"{ORIGIN}/.well-known/aai.json", origin=ORIGIN)
    return app.model_copy(update={"source": source})


def recording_registry() -> tuple[ExecutorRegistry, Recorder]:
    recorder = Recorder()
    registry = ExecutorRegistry()
    for each in ExecutionType:
        registry.register(each, recorder)
    return registry, recorder


@pytest.mark.parametrize("execution_type", NOT_HTTP, ids=str)
async def test_a_descriptor_from_the_web_never_reaches_a_non_http_executor(
    execution_type: ExecutionType,
) -> None:
    _, entry, tool_name, arguments = CALLS[execution_type]
    app = from_the_web(entry.descriptor)
    tool = app.tool(tool_name)
    assert tool is not None and tool.execution_type is execution_type
    registry, recorder = recording_registry()

    with pytest.raises(AaiError) as refused:
        registry.executor_for(app, tool)
    assert refused.value.code is ErrorCode.SERVICE_UNAVAILABLE
    assert "fetched from the web cannot start programs" in refused.value.message
    assert refused.value.data["execution_type"] == execution_type.value

    gateway = Gateway(
        Catalog(entries=[CatalogEntry.of(app, "test")]), registry, consent=trusting_gate(app.id, ORIGIN)
    )
    with pytest.raises(AaiError) as through_the_gateway:
        await gateway.execute(app.id, tool_name, arguments, caller=Caller("agent"))
    assert through_the_gateway.value.code is ErrorCode.SERVICE_UNAVAILABLE
    assert recorder.invocations == []


class Asker:
    """A consent prompter that would allow the call once, and keeps the questions it was asked."""

    def __init__(self) -> None:
        self.questions: list[ConsentQuestion] = []

    async def ask(self, question: ConsentQuestion) -> Answer | None:
        self.questions.append(question)
        return ("allow_once", False)


@pytest.mark.parametrize("execution_type", NOT_HTTP, ids=str)
async def test_a_descriptor_from_the_web_is_refused_before_the_user_is_asked_for_consent(
    execution_type: ExecutionType,
) -> None:
    # Asking would have the user approve a call that can never run (and look as if it could).
    _, entry, tool_name, arguments = CALLS[execution_type]
    app = from_the_web(entry.descriptor)
    registry, recorder = recording_registry()
    asker = Asker()
    gateway = Gateway(
        Catalog(entries=[CatalogEntry.of(app, "test")]),
        registry,
        consent=ConsentGate(ConsentStore(MemorySecretStore())),
    )

    with pytest.raises(AaiError) as refused:
        await gateway.execute(app.id, tool_name, arguments, caller=Caller("agent"), prompters=[asker])
    assert refused.value.code is ErrorCode.SERVICE_UNAVAILABLE
    assert asker.questions == []
    assert recorder.invocations == []


async def test_a_descriptor_from_the_web_runs_its_http_tools() -> None:
    _, entry, tool_name, arguments = CALLS[ExecutionType.HTTP]
    app = from_the_web(entry.descriptor)
    registry, recorder = recording_registry()
    gateway = Gateway(
        Catalog(entries=[CatalogEntry.of(app, "test")]), registry, consent=trusting_gate(app.id, ORIGIN)
    )

    result: Any = await gateway.execute(app.id, tool_name, arguments, caller=Caller("agent"))

    assert result == {"ran": tool_name}
    assert [invocation.app.binding.kind for invocation in recorder.invocations] == ["web"]


async def test_a_type_without_an_executor_is_not_implemented_before_anything_runs() -> None:
    _, entry, tool_name, _ = CALLS[ExecutionType.DBUS]
    tool = entry.descriptor.tool(tool_name)
    assert tool is not None
    with pytest.raises(AaiError) as missing:
        ExecutorRegistry().executor_for(entry.descriptor, tool)
    assert missing.value.code is ErrorCode.NOT_IMPLEMENTED
    assert "no executor for it yet" in missing.value.message
