"""Executors keyed by execution type; an unknown type is a clear NOT_IMPLEMENTED, never a crash."""

from __future__ import annotations

import logging

from ..descriptor import ExecutionType, Tool, host_platform
from ..errors import NotImplementedExecutionError
from .base import Executor

logger = logging.getLogger(__name__)


class ExecutorRegistry:
    def __init__(self) -> None:
        self._executors: dict[ExecutionType, Executor] = {}

    def register(self, execution_type: ExecutionType, executor: Executor) -> None:
        self._executors[execution_type] = executor

    def for_tool(self, tool: Tool) -> Executor:
        executor = self._executors.get(tool.execution_type)
        if executor is None:
            raise NotImplementedExecutionError(
                tool.execution_type.value,
                host_platform(),
                "this gateway has no executor for it yet",
            )
        reason = executor.unavailable_reason(tool)
        if reason is not None:
            raise NotImplementedExecutionError(tool.execution_type.value, host_platform(), reason)
        return executor

    def unavailable_reason(self, tool: Tool) -> str | None:
        executor = self._executors.get(tool.execution_type)
        if executor is None:
            return f"no executor for {tool.execution_type.value!r}"
        return executor.unavailable_reason(tool)

    async def aclose(self) -> None:
        for executor in dict.fromkeys(self._executors.values()):
            try:
                await executor.aclose()
            except Exception:  # closing one executor must not keep the others open
                logger.exception("closing executor %r failed", executor)
