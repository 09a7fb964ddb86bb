"""The one small contract every executor implements, and what it is handed per call."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from ..descriptor import AppDescriptor, Tool

if TYPE_CHECKING:
    import httpx

ProgressReporter = Callable[[float, float | None, str | None], Awaitable[None]]
"""`(progress, total, message)`: forwards an executor's progress to whoever asked (MCP progress)."""

PermissionKind = Literal["allow_once", "allow_always", "reject_once", "reject_always"]
"""What a permission answer means (the four kinds of ACP permission options)."""


@dataclass(frozen=True)
class PermissionOption:
    """One answer an app offers to its own permission question (`option_id` is the app's)."""

    option_id: str
    name: str
    kind: PermissionKind


@dataclass(frozen=True)
class PermissionRequest:
    """An app asks, in the middle of an operation, whether it may do something (an ACP agent's
    `session/request_permission`): what it wants to do, and the answers it offers."""

    title: str
    kind: str | None
    arguments: Any
    options: tuple[PermissionOption, ...]


PermissionAsker = Callable[[PermissionRequest], Awaitable[PermissionKind | None]]
"""Asks the user on behalf of the current call; the kind of answer chosen, or None when nobody
could be asked (no prompter that can ask in the middle of a call)."""


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
    ask_permission: PermissionAsker | None = None
    """Asks the user through the same prompters as the consent check of this call (apps such as
    ACP agents that ask permission mid-operation); None: nobody can be asked."""

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
