"""Every execution path asks for consent first: for each of the eleven execution types, an operation
of the bundled examples never reaches its executor until the caller is allowed, and then does."""

from __future__ import annotations

import pytest

from aai_gateway.consent import Decision
from aai_gateway.descriptor import ExecutionType
from aai_gateway.discovery import Catalog
from aai_gateway.errors import AaiError, ErrorCode
from aai_gateway.executors.registry import ExecutorRegistry
from aai_gateway.service import Caller, Gateway
from tests.builders import trusting_gate
from tests.executors.every_type import Recorder, one_call_per_type

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


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
