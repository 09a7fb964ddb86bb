"""The executors this gateway ships, keyed by the execution type each runs."""

from __future__ import annotations

from ..descriptor import ExecutionType
from .http import HttpExecutor
from .registry import ExecutorRegistry
from .stdio import StdioExecutor


def default_registry() -> ExecutorRegistry:
    registry = ExecutorRegistry()
    registry.register(ExecutionType.HTTP, HttpExecutor())
    registry.register(ExecutionType.STDIO, StdioExecutor())
    return registry
