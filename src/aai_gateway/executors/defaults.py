"""The executors this gateway ships, keyed by the execution type each runs."""

from __future__ import annotations

from collections.abc import Mapping

from ..descriptor import ExecutionType
from ..discovery.web import WebFetchPolicy
from .acp import AcpExecutor
from .android import AndroidExecutor
from .apple import AppleEventsExecutor, AppleScriptExecutor
from .com import ComExecutor
from .dbus import DbusExecutor
from .http import HttpExecutor
from .ios import IosExecutor
from .registry import ExecutorRegistry
from .stdio import StdioExecutor


def default_registry(
    environ: Mapping[str, str], *, ca_file: str | None = None, web_policy: WebFetchPolicy | None = None
) -> ExecutorRegistry:
    """`environ`: the gateway's environment, from which child processes get an allow-listed few.
    `ca_file`: extra CAs HTTPS apps may be signed by. `web_policy`: the network rules of web apps
    (default: no private addresses)."""
    registry = ExecutorRegistry()
    registry.register(ExecutionType.HTTP, HttpExecutor(ca_file=ca_file, web_policy=web_policy))
    registry.register(ExecutionType.STDIO, StdioExecutor(environ=environ))
    registry.register(ExecutionType.ACP, AcpExecutor(environ=environ))
    registry.register(ExecutionType.DBUS, DbusExecutor(environ=environ))
    scripts = AppleScriptExecutor(environ=environ)
    registry.register(ExecutionType.APPLESCRIPT, scripts)
    registry.register(ExecutionType.JXA, scripts)
    registry.register(ExecutionType.APPLE_EVENTS, AppleEventsExecutor(environ=environ))
    registry.register(ExecutionType.COM, ComExecutor())
    registry.register(ExecutionType.INTENT, AndroidExecutor(environ=environ))
    registry.register(ExecutionType.URL_SCHEME, IosExecutor(environ=environ))
    return registry
