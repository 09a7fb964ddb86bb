"""The one small contract every executor implements, what it is handed per call, what it is
configured with, and the parts every executor shares (`ExecutorBase`)."""

from __future__ import annotations

import sys
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Literal, Protocol, TypeVar, runtime_checkable

import anyio
from pydantic import BaseModel

from ..descriptor import AppDescriptor, Tool
from ..errors import AaiError, ExecutionTimeoutError, InternalError

if TYPE_CHECKING:
    import httpx

    from ..discovery.mcp_snapshots import Snapshot
    from ..discovery.web import WebFetchPolicy

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
class UserQuestion:
    """An app asks the user for input in the middle of a call (an MCP server's elicitation):
    either a form (`schema`: MCP's restricted JSON Schema of flat properties) or a page to open
    (`url`, with the app's `elicitation_id`). `app_name` is who asks, for the question's text."""

    app_name: str
    message: str
    schema: dict[str, Any] | None = None
    url: str | None = None
    elicitation_id: str | None = None


@dataclass(frozen=True)
class UserAnswer:
    """What the user did: `accept` (with the form's `content`), `decline` or `cancel`."""

    action: Literal["accept", "decline", "cancel"]
    content: dict[str, Any] | None = None


UserAsker = Callable[[UserQuestion], Awaitable[UserAnswer | None]]
"""Puts an app's question to the user through the MCP client of the current call; None when it
cannot be asked now (the client has no elicitation of that kind, or speaks 2026-07-28, where a
server cannot ask in the middle of a call)."""


@dataclass(frozen=True)
class ToolResult:
    """A tool result to pass on as the app gave it (an MCP server's CallToolResult), instead of a
    JSON value the gateway wraps: `content` holds MCP content blocks as wire dicts (text, image,
    audio, resource_link, resource), `structured_content` the structured result, `is_error`
    whether the tool itself reports a failure."""

    content: list[dict[str, Any]]
    structured_content: dict[str, Any] | None = None
    is_error: bool = False

    def wire(self) -> dict[str, Any]:
        """The result as MCP writes it (camelCase keys)."""
        document: dict[str, Any] = {"content": self.content}
        if self.structured_content is not None:
            document["structuredContent"] = self.structured_content
        if self.is_error:
            document["isError"] = True
        return document


class UpstreamAuth(Protocol):
    """The auth of an MCP server's Streamable HTTP client (`auth.mcp_auth.McpOAuth`, an
    `httpx2.Auth` the service builds from the app's sign-in). A refusal cannot be raised inside
    the SDK's transport (it would only be logged), so it is kept in `failure`, the AUTH_* error
    it means, for the executor to raise; `secret_values` are what the executor scrubs."""

    failure: AaiError | None

    def secret_values(self) -> list[str]: ...


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
    ask_permission: PermissionAsker | None = None
    """Asks the user through the same prompters as the consent check of this call (apps such as
    ACP agents that ask permission mid-operation); None: nobody can be asked."""
    upstream_auth: UpstreamAuth | None = None
    """The auth of an `mcp` app's Streamable HTTP client (its sign-in), None for every other."""
    secrets: Mapping[str, str] = field(default_factory=dict)
    """The keyring secrets the tool's channel refers to (`{"secret": NAME}` of an `mcp` app), by
    NAME, resolved by the service from the credential bound to the app; only those names."""
    ask_user: UserAsker | None = None
    """Puts an app's own question to the user through the call's MCP client (an MCP server's
    elicitation); None: nobody can be asked during this call."""

    @property
    def descriptor_dir(self) -> Path | None:
        """The folder of a descriptor read from disk (stdio adapters run there), else None."""
        return descriptor_dir(self.app)

    @property
    def timeout_seconds(self) -> float:
        return self.tool.effective_timeout_ms / 1000


def descriptor_dir(app: AppDescriptor) -> Path | None:
    """The folder of a descriptor read from disk, else None."""
    if app.source.kind in ("file", "bundled"):
        return Path(app.source.location).parent
    return None


@runtime_checkable
class Executor(Protocol):
    """Runs operations of one or more execution types.

    `execute` returns the operation's result as a JSON value (or a `ToolResult` to pass on as
    it is), or raises an `AaiError`
    (`TIMEOUT`, `SERVICE_UNAVAILABLE`, `EXECUTION_FAILED`, ...). It must be safe to call
    concurrently. `unavailable_reason` says, without side effects, why a tool cannot run on
    this machine (wrong OS, program missing), or None when it can; it may read the tool's
    execution type, channel and the kind of its call, nothing else (the gateway asks
    once for all tools that share them, with a stand-in tool). An executor may also say which
    channel fields its answer depends on (`ExecutorBase.availability_from`). `aclose` stops what the
    executor keeps between calls (connections, agents). An executor never sees a tool it was
    not registered for, nor a non-HTTP tool of a descriptor from the web (`registry.py`).
    """

    def unavailable_reason(self, tool: Tool) -> str | None: ...

    async def execute(self, invocation: Invocation) -> Any: ...

    async def aclose(self) -> None: ...


SnapshotListener = Callable[[AppDescriptor, "Snapshot"], Awaitable[object]]
"""Told of every tool list a `SnapshotTaker` read on its own (`Gateway.apply_snapshot`)."""


@runtime_checkable
class SnapshotTaker(Protocol):
    """An executor that can read an app's tools from the app's server: the `mcp` executor, for
    descriptors that leave their tools to their MCP server (`AppDescriptor.tools_declared` is
    false). The registry finds it by execution type (`ExecutorRegistry.snapshot_taker`).

    `take_snapshot` connects to the app's server (starting it if needed, or using the session
    it already has; `secrets` are the keyring secrets its launch settings refer to, as in
    `Invocation.secrets`), reads `tools/list` (every page) and returns `Snapshot.taken(app, tools,
    server=..., instructions=...)`; it raises an `AaiError` naming the server when it cannot
    (SERVICE_UNAVAILABLE, TIMEOUT...). It saves nothing: the caller keeps and applies the
    snapshot. `on_snapshot` is called once, by the gateway, with the listener to call with
    `(app, snapshot)` whenever the executor reads a server's tools on its own: after it has
    (re)connected to a server, and after the server sent `notifications/tools/list_changed`.
    The listener keeps the snapshot, re-applies it to the catalog and tells the MCP client
    when the gateway's own tools/list changed; it never raises."""

    async def take_snapshot(
        self, app: AppDescriptor, secrets: Mapping[str, str], upstream_auth: UpstreamAuth | None = None
    ) -> Snapshot: ...

    def on_snapshot(self, listener: SnapshotListener) -> None: ...


@dataclass(frozen=True)
class ExecutorSettings:
    """What executors are configured with. `cli/runtime.py`, the only code that reads the
    gateway's environment, builds it; `default_registry` hands it to every executor factory."""

    environ: Mapping[str, str] = field(default_factory=dict)
    """The gateway's environment: where programs are found (PATH), buses and devices are named,
    and what children get an allow-listed few variables of. Empty: nothing of it."""
    platform: str = sys.platform
    ca_file: str | None = None
    """Extra CAs HTTPS apps may be signed by."""
    web_policy: WebFetchPolicy | None = None
    """The network rules of web apps (None: no private addresses)."""
    cache_dir: Path | None = None
    """Where executors keep what other commands of the gateway read: whether each MCP server
    runs and its last error (`discovery/mcp_server_states.py`, read by `scan`). None: nowhere."""


ChannelT = TypeVar("ChannelT", bound=BaseModel)
CallT = TypeVar("CallT", bound=BaseModel)
PartT = TypeVar("PartT", bound=BaseModel)


class ExecutorBase(ABC, Generic[ChannelT]):
    """The parts every executor shares. A subclass names the channel it runs (`channel_class`)
    and itself (`label`, as in "the {label} executor"), implements `execute`, and overrides
    `unavailable` when a tool may not run on this machine and `aclose` when it keeps something
    open between calls."""

    channel_class: type[ChannelT]
    label: str
    availability_from: ClassVar[tuple[str, ...] | None] = None
    """The channel's fields `unavailable` reads, besides the tool's execution type and kind of
    call (`unavailable` may read nothing else of the tool): tools whose channels agree on
    these get one answer, asked once for all (`service/disclosure.py`, `RunsHere`). None: it
    may read any field."""

    def unavailable_reason(self, tool: Tool) -> str | None:
        channel = tool.channel
        if not isinstance(channel, self.channel_class):
            return f"the {self.label} executor cannot run {channel.type.value!r} tools"
        return self.unavailable(channel, tool)

    def unavailable(self, channel: ChannelT, tool: Tool) -> str | None:
        """Why `tool` cannot run on this machine (wrong OS, program missing), without side
        effects; None when it can."""
        return None

    @classmethod
    def channel(cls, invocation: Invocation) -> ChannelT:
        """The call's channel; a tool of another type is the caller's bug (INTERNAL_ERROR)."""
        kind = invocation.tool.execution_type.value
        return _bound(
            invocation,
            invocation.tool.channel,
            cls.channel_class,
            f"the {cls.label} executor got a {kind!r} tool",
        )

    @staticmethod
    def call(invocation: Invocation, call_class: type[CallT]) -> CallT:
        """The tool's own binding (`tool.call`), which this channel needs; a tool without it
        is the caller's bug (INTERNAL_ERROR: the descriptor layer never makes one)."""
        kind = invocation.tool.execution_type.value
        return _bound(
            invocation, invocation.tool.call, call_class, f"a {kind} tool without its {call_class.__name__}"
        )

    @abstractmethod
    async def execute(self, invocation: Invocation) -> Any: ...

    async def aclose(self) -> None:
        """Nothing to release: each call's process or request ends with the call."""


def _bound(invocation: Invocation, part: object, expected: type[PartT], problem: str) -> PartT:
    """`part` of the tool's execution binding, when it is what the executor expects."""
    if not isinstance(part, expected):
        raise InternalError(
            f"{invocation.app.id} {invocation.tool.name}: {problem}",
            app=invocation.app.id,
            tool=invocation.tool.name,
        )
    return part


def timeout_error(invocation: Invocation) -> ExecutionTimeoutError:
    """TIMEOUT for a call that ran out of its tool's time (execution.timeout)."""
    return ExecutionTimeoutError(
        invocation.app.id, invocation.tool.name, invocation.tool.effective_timeout_ms
    )


@contextmanager
def within_timeout(invocation: Invocation) -> Iterator[None]:
    """Runs the body within the tool's timeout; TIMEOUT when it runs out (the body is cancelled)."""
    try:
        with anyio.fail_after(invocation.timeout_seconds):
            yield
    except TimeoutError as exc:
        raise timeout_error(invocation) from exc
