"""Executors keyed by execution type, and the one place an execution is dispatched.

An unknown type is a clear NOT_IMPLEMENTED, never a crash. The rule "a descriptor fetched from the
web runs `http` tools only" (`descriptor/platforms.py`: the `web` platform) is enforced here, for
every executor, before anyone is asked for consent: no executor checks it itself.
"""

from __future__ import annotations

import logging

from ..descriptor import AppDescriptor, ExecutionType, Tool, host_platform
from ..descriptor.platforms import fits_platform
from ..errors import NotImplementedExecutionError, ServiceUnavailableError
from .base import Executor, SnapshotTaker

logger = logging.getLogger(__name__)


class ExecutorRegistry:
    def __init__(self) -> None:
        self._executors: dict[ExecutionType, Executor] = {}

    def register(self, execution_type: ExecutionType, executor: Executor) -> None:
        self._executors[execution_type] = executor

    def registered(self, execution_type: ExecutionType) -> Executor | None:
        return self._executors.get(execution_type)

    def executor_for(self, app: AppDescriptor, tool: Tool) -> Executor:
        """The executor that runs `tool` of `app`. SERVICE_UNAVAILABLE when a descriptor from the
        web asks for anything but HTTP; NOT_IMPLEMENTED when no executor can run the tool here."""
        if not app.binding.is_local and not fits_platform(tool.execution_type, "web"):
            raise ServiceUnavailableError(
                app.id,
                "a descriptor fetched from the web cannot start programs or reach apps on this "
                f"computer: its tool {tool.name!r} asks for {tool.execution_type.value!r}, and web "
                f"descriptors run http tools only (descriptor {app.source.location})",
                tool=tool.name,
                execution_type=tool.execution_type.value,
                descriptor=app.source.location,
            )
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

    def snapshot_taker(self) -> SnapshotTaker | None:
        """The executor that reads MCP servers' tools (`SnapshotTaker`), if one is installed."""
        executor = self._executors.get(ExecutionType.MCP)
        return executor if isinstance(executor, SnapshotTaker) else None

    def require_snapshot_taker(self) -> SnapshotTaker:
        """`snapshot_taker`, or NOT_IMPLEMENTED saying why there is none."""
        taker = self.snapshot_taker()
        if taker is not None:
            return taker
        reason = (
            "no executor for execution type 'mcp' is installed in this gateway, so it cannot start "
            "an MCP server to read its tools"
            if ExecutionType.MCP not in self._executors
            else "the installed executor of execution type 'mcp' cannot read a server's tools "
            "(it has no take_snapshot)"
        )
        raise NotImplementedExecutionError(ExecutionType.MCP.value, host_platform(), reason)

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
