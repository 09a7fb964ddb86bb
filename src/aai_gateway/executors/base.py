"""The one small contract every executor implements, and what it is handed per call."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ..descriptor import AppDescriptor, Tool

if TYPE_CHECKING:
    import httpx

ProgressReporter = Callable[[float, float | None, str | None], Awaitable[None]]
"""`(progress, total, message)`: forwards an executor's progress to whoever asked (MCP progress)."""


@dataclass(frozen=True)
class Invocation:
    """One operation to run: arguments are already validated against the tool's schema, with
    defaults applied. Everything an executor needs and nothing it must look up itself."""

    app: AppDescriptor
    tool: Tool
    arguments: dict[str, Any]
    request_id: str
    progress: ProgressReporter | None = None
    http_auth: httpx.Auth | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def descriptor_dir(self) -> Path | None:
        """The folder of a descriptor read from disk (stdio adapters run there), else None."""
        if self.app.source.kind in ("file", "bundled"):
            return Path(self.app.source.location).parent
        return None

    @property
    def timeout_seconds(self) -> float:
        return self.tool.effective_timeout_ms / 1000


class Executor(Protocol):
    """Runs operations of one or more execution types.

    `execute` returns the operation's result as a JSON value, or raises an `AaiError`
    (`TIMEOUT`, `SERVICE_UNAVAILABLE`, `EXECUTION_FAILED`, ...). It must be safe to call
    concurrently. `unavailable_reason` says, without side effects, why a tool cannot run on
    this machine (wrong OS, program missing), or None when it can.
    """

    def unavailable_reason(self, tool: Tool) -> str | None: ...

    async def execute(self, invocation: Invocation) -> Any: ...

    async def aclose(self) -> None: ...
