"""The executors this gateway ships, keyed by the execution type each runs."""

from __future__ import annotations

from collections.abc import Mapping

from ..descriptor import ExecutionType
from .acp import AcpExecutor
from .dbus import DbusExecutor
from .http import HttpExecutor
from .registry import ExecutorRegistry
from .stdio import StdioExecutor


def default_registry(environ: Mapping[str, str], *, ca_file: str | None = None) -> ExecutorRegistry:
    """`environ`: the gateway's environment, from which child processes get an allow-listed few.
    `ca_file`: extra CAs HTTPS apps may be signed by."""
    registry = ExecutorRegistry()
    registry.register(ExecutionType.HTTP, HttpExecutor(ca_file=ca_file))
    registry.register(ExecutionType.STDIO, StdioExecutor(environ=environ))
    registry.register(ExecutionType.ACP, AcpExecutor(environ=environ))
    registry.register(ExecutionType.DBUS, DbusExecutor(environ=environ))
    return registry
