"""Running an invocation the way the gateway does: through the registry's dispatch."""

from __future__ import annotations

from typing import Any

from aai_gateway.executors import Executor, ExecutorRegistry, Invocation


async def dispatched(executor: Executor, invocation: Invocation) -> Any:
    """`executor`, registered for the tool's execution type, runs `invocation` if the registry's
    dispatch (`ExecutorRegistry.executor_for`, as `Gateway.execute` uses it) lets it."""
    registry = ExecutorRegistry()
    registry.register(invocation.tool.execution_type, executor)
    return await registry.executor_for(invocation.app, invocation.tool).execute(invocation)
