"""`execution.type: "com"`: Windows COM automation (docs/windows.md).

Two ways a tool is called:
- a dialect-B `script` (an action sequence): run by com_interpreter.py against the backend;
- no per-tool call (dialects A and C): the object of the channel's ProgID is created and its
  `Execute` method is called with the JSON request of wire.py; it returns the JSON response.

Backends block, so each call runs in a worker thread (anyio.to_thread); a call that outlives its
timeout fails with TIMEOUT, and its sequence stops before its next action (a COM call already
under way cannot be interrupted). On Windows the backend is pywin32; elsewhere COM tools are
unavailable unless a backend is given (tests, in-process objects: `PythonObjectBackend`).
"""

from __future__ import annotations

import sys
import threading
from contextlib import AbstractContextManager, nullcontext
from typing import Any, Protocol, runtime_checkable

import anyio
import anyio.to_thread

from ..descriptor import ExecutionType, Tool
from ..descriptor.model import ComAction, ComCall, ComChannel
from ..errors import ExecutionFailedError, ServiceUnavailableError
from .base import ExecutorBase, ExecutorSettings, Invocation, within_timeout
from .com_backend_win import PyWin32Backend, pywin32_installed
from .com_interpreter import ObjectBackend, ScriptContext, run_sequence
from .wire import decode_response, encode_request


@runtime_checkable
class _ThreadScoped(Protocol):
    def thread_scope(self) -> AbstractContextManager[None]: ...


class ComExecutor(ExecutorBase[ComChannel]):
    """Runs `com` tools through `backend` (default: pywin32, on Windows only)."""

    channel_class = ComChannel
    label = "COM"
    availability_from = ("prog_id",)

    def __init__(self, *, backend: ObjectBackend | None = None, platform: str = sys.platform) -> None:
        self._explicit = backend
        self._platform = platform
        self._default: ObjectBackend | None = None

    def unavailable(self, channel: ComChannel, tool: Tool) -> str | None:
        if not isinstance(tool.call, ComCall) and not channel.prog_id:
            return "the descriptor names no COM ProgID (execution.progId) for this tool"
        if self._explicit is not None:
            return None
        if self._platform != "win32":
            return "needs Windows (COM)"
        if not pywin32_installed():
            return "install pywin32 (pip install pywin32) so the gateway can use COM"
        return None

    async def execute(self, invocation: Invocation) -> Any:
        reason = self.unavailable_reason(invocation.tool)
        if reason is not None:  # the registry checks too; a direct caller gets the same answer
            raise ServiceUnavailableError(invocation.app.id, reason)
        backend = self._backend()
        stop = threading.Event()
        try:
            with within_timeout(invocation):
                return await anyio.to_thread.run_sync(
                    self._run, invocation, backend, stop, abandon_on_cancel=True
                )
        finally:
            stop.set()  # a sequence still running in its thread stops before its next action

    # ------------------------------------------------------------------ in the worker thread

    @staticmethod
    def _run(invocation: Invocation, backend: ObjectBackend, stop: threading.Event) -> Any:
        scope = backend.thread_scope() if isinstance(backend, _ThreadScoped) else nullcontext()
        with scope:
            call = invocation.tool.call
            if isinstance(call, ComCall):
                ctx = ScriptContext(
                    invocation.app.id,
                    invocation.tool.name,
                    tuple(invocation.tool.parameters.get("properties", {}) or ()),
                )
                return run_sequence(call.actions, invocation.arguments, backend, ctx, stop=stop)
            return _execute_method(invocation, backend)

    def _backend(self) -> ObjectBackend:
        if self._explicit is not None:
            return self._explicit
        if self._default is None:
            self._default = PyWin32Backend()
        return self._default


def _execute_method(invocation: Invocation, backend: ObjectBackend) -> Any:
    """Dialects A and C: `<ProgID>.Execute(request) -> response`, both JSON text."""
    channel = ComExecutor.channel(invocation)
    assert channel.prog_id  # `unavailable` refuses a tool with neither a ComCall nor a ProgID
    app_id, tool = invocation.app.id, invocation.tool.name
    request = encode_request(invocation.request_id, tool, invocation.arguments)
    # the same interpreter, so errors (class not registered, Execute failed) read the same way
    actions = (
        ComAction(action="create", var="app", progid=channel.prog_id),
        ComAction(action="call", var="response", object="app", method="Execute", args=("${request}",)),
    )
    response = run_sequence(actions, {"request": request}, backend, ScriptContext(app_id, tool, ("request",)))
    if not isinstance(response, str | bytes):
        raise ExecutionFailedError(
            app_id,
            tool,
            f"{channel.prog_id}.Execute returned {type(response).__name__}, not the "
            'JSON response text {"status": "success", "result": ...}',
            prog_id=channel.prog_id,
        )
    return decode_response(response, app_id=app_id, tool=tool, request_id=invocation.request_id)


def registration(settings: ExecutorSettings) -> tuple[tuple[ExecutionType, ...], ComExecutor]:
    """The entry point of `com` in the group `aai_gateway.executors` (pyproject.toml)."""
    return (ExecutionType.COM,), ComExecutor(platform=settings.platform)
