"""`execution.type: "stdio"`: one adapter process per call, JSON request on stdin, answer on stdout.

The contract (docs/stdio.md; docs/architecture.md, "Wire formats"): the gateway starts
`command args…` in the descriptor's folder, writes the request as one line of JSON to the child's
stdin and closes it, and reads the response JSON from stdout; stderr is kept for error messages.
Parameters travel only inside that JSON, never in argv or the environment. The child gets a
minimal environment (see `programs.PASSED_ENVIRONMENT`) plus the descriptor's `env`. When the
call's time is up, or the calling task is cancelled, the child's whole process group is stopped.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any

import anyio

from ..descriptor import ExecutionType, Tool
from ..descriptor.model import StdioChannel
from ..errors import (
    AaiError,
    AppReportedError,
    ExecutionFailedError,
    InvalidArgumentError,
    ServiceUnavailableError,
)
from . import programs
from .base import ExecutorBase, ExecutorSettings, Invocation, timeout_error
from .process import ProgramRun, describe_exit, run_program
from .wire import decode_response, encode_request

STDERR_SHOWN_CHARS = 2000
OUTPUT_PREVIEW_CHARS = 200


class StdioExecutor(ExecutorBase[StdioChannel]):
    """Runs stdio adapters. Safe to call concurrently; each call gets its own process.

    - `environ`: the gateway's environment, where the command is looked up (PATH) and the
      allow-listed variables of the child come from.
    - `max_output_bytes`: the most stdout one call may produce; beyond it the child is stopped
      and the call fails with EXECUTION_FAILED (output is read in chunks, never unbounded).
    - `max_concurrent` / `max_concurrent_per_app`: processes running at once, in total and per
      app; further calls wait their turn, and the wait counts against their timeout.
    - `kill_grace_seconds`: time between SIGTERM and SIGKILL when a process group is stopped.
    - `output_drain_seconds`: after the adapter exits, how long to wait for its stdout/stderr to
      close (something it started in the background may hold them open).
    """

    channel_class = StdioChannel
    availability_from = ("command", "env")
    label = "stdio"

    def __init__(
        self,
        *,
        environ: Mapping[str, str],
        max_output_bytes: int = 16 * 1024 * 1024,
        max_concurrent: int = 16,
        max_concurrent_per_app: int = 8,
        kill_grace_seconds: float = 2.0,
        output_drain_seconds: float = 1.0,
    ) -> None:
        if max_output_bytes < 1 or max_concurrent < 1 or max_concurrent_per_app < 1:
            raise ValueError("max_output_bytes, max_concurrent and max_concurrent_per_app must be >= 1")
        self.max_output_bytes = max_output_bytes
        self.kill_grace_seconds = kill_grace_seconds
        self.output_drain_seconds = output_drain_seconds
        self._environ = environ
        self._max_per_app = max_concurrent_per_app
        self._all_slots = anyio.Semaphore(max_concurrent)
        self._app_slots: dict[str, anyio.Semaphore] = {}

    def unavailable(self, channel: StdioChannel, tool: Tool) -> str | None:
        missing = programs.missing_program(channel.command, self._environ, channel.env.get("PATH") or None)
        return None if missing is None else f"command {missing}"

    async def execute(self, invocation: Invocation) -> Any:
        channel = self.channel(invocation)
        argv = self._argv(invocation, channel)
        request = self._request_line(invocation)
        app_id = invocation.app.id
        deadline = anyio.current_time() + invocation.timeout_seconds
        async with contextlib.AsyncExitStack() as slots:
            with anyio.CancelScope(deadline=deadline) as waiting:  # the wait counts against the timeout
                await slots.enter_async_context(self._all_slots)
                await slots.enter_async_context(self._slots_for(app_id))
            if waiting.cancelled_caught:
                raise timeout_error(invocation)
            try:
                run = await run_program(
                    argv,
                    env=programs.child_environment(self._environ, channel.env),
                    cwd=invocation.descriptor_dir,
                    stdin=request,
                    timeout=deadline - anyio.current_time(),
                    max_stdout=self.max_output_bytes,
                    grace=self.kill_grace_seconds,
                    drain=self.output_drain_seconds,
                    log_as=f"{app_id} {invocation.tool.name}: {argv}",
                )
            except (OSError, ValueError) as exc:
                raise ServiceUnavailableError(
                    app_id, f"its adapter {argv[0]!r} could not be started: {exc}", command=argv[0]
                ) from exc
        if run.timed_out:
            error = timeout_error(invocation)
            tail = _stderr_text(run.stderr)
            if tail:
                error.data["stderr_tail"] = tail
            raise error
        return self._interpret(invocation, run)

    # ------------------------------------------------------------------ preparing a call

    def _argv(self, invocation: Invocation, channel: StdioChannel) -> list[str]:
        app = invocation.app
        found, looked = programs.find_program(
            channel.command,
            self._environ,
            base_dir=invocation.descriptor_dir,
            search_path=channel.env.get("PATH") or None,
        )
        if found is None:
            raise ServiceUnavailableError(
                app.id,
                f"its adapter command {channel.command!r} was not found {looked}, or is not "
                f"executable (descriptor {app.source.location}). Install the app's adapter or fix "
                "execution.command",
                command=channel.command,
                descriptor=app.source.location,
            )
        return [found, *channel.args]

    @staticmethod
    def _request_line(invocation: Invocation) -> bytes:
        line = encode_request(invocation.request_id, invocation.tool.name, invocation.arguments)
        try:
            return line.encode("utf-8") + b"\n"
        except UnicodeEncodeError as exc:  # a lone surrogate cannot be written as UTF-8
            raise InvalidArgumentError(
                f"text that is not valid Unicode ({exc.reason})",
                app_id=invocation.app.id,
                tool=invocation.tool.name,
            ) from exc

    def _slots_for(self, app_id: str) -> anyio.Semaphore:
        slots = self._app_slots.get(app_id)
        if slots is None:
            slots = self._app_slots[app_id] = anyio.Semaphore(self._max_per_app)
        return slots

    # ------------------------------------------------------------------ reading the answer

    def _interpret(self, invocation: Invocation, capture: ProgramRun) -> Any:
        app_id, tool = invocation.app.id, invocation.tool.name
        stderr = _stderr_text(capture.stderr)
        data: dict[str, Any] = {"stderr_tail": stderr} if stderr else {}
        if capture.output_too_large:
            raise ExecutionFailedError(
                app_id,
                tool,
                f"the adapter wrote more than {self.max_output_bytes} bytes to stdout (the gateway's "
                "max_output_bytes limit) and was stopped",
                **data,
                max_output_bytes=self.max_output_bytes,
            )
        returncode = capture.returncode
        assert returncode is not None
        output = capture.stdout.removeprefix(b"\xef\xbb\xbf")
        has_output = bool(output.strip())
        if returncode != 0:
            if has_output:
                try:
                    decode_response(output, app_id=app_id, tool=tool, request_id=invocation.request_id)
                except AppReportedError as reported:
                    reported.data["exit_code"] = returncode
                    raise
                except AaiError:
                    pass  # not a usable error answer: report the exit below
                data["output_start"] = _preview(output)
            data["exit_code"] = returncode
            raise ExecutionFailedError(
                app_id, tool, f"the adapter {describe_exit(returncode)}" + _stderr_clause(stderr), **data
            )
        if not has_output:
            raise ExecutionFailedError(
                app_id,
                tool,
                "the adapter exited without writing a response to stdout; expected one JSON object "
                'such as {"status": "success", "result": ...}' + _stderr_clause(stderr),
                **data,
            )
        try:
            return decode_response(output, app_id=app_id, tool=tool, request_id=invocation.request_id)
        except AppReportedError:
            raise
        except AaiError as garbled:
            if stderr:
                garbled.data["stderr_tail"] = stderr
            raise


def _stderr_text(raw: bytes) -> str:
    text = raw.decode("utf-8", "replace").strip()
    if len(text) > STDERR_SHOWN_CHARS:
        text = "…" + text[-STDERR_SHOWN_CHARS:].lstrip()
    return text


def _stderr_clause(stderr: str) -> str:
    return f"; its stderr ends with: {stderr}" if stderr else "; it wrote nothing to stderr"


def _preview(output: bytes) -> str:
    text = output[: OUTPUT_PREVIEW_CHARS * 4].decode("utf-8", "replace")
    return text[:OUTPUT_PREVIEW_CHARS] + ("…" if len(output) > OUTPUT_PREVIEW_CHARS else "")


def registration(settings: ExecutorSettings) -> tuple[tuple[ExecutionType, ...], StdioExecutor]:
    """The entry point of `stdio` in the group `aai_gateway.executors` (pyproject.toml)."""
    return (ExecutionType.STDIO,), StdioExecutor(environ=settings.environ)
