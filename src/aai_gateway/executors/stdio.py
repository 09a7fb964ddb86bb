"""`execution.type: "stdio"`: one adapter process per call, JSON request on stdin, answer on stdout.

The contract (docs/stdio.md; docs/architecture.md, "Wire formats"): the gateway starts
`command args…` in the descriptor's folder, writes the request as one line of JSON to the child's
stdin and closes it, and reads the response JSON from stdout; stderr is kept for error messages.
Parameters travel only inside that JSON, never in argv or the environment. The child gets a
minimal environment (see `process.PASSED_ENVIRONMENT`) plus the descriptor's `env`. When the
call's time is up, or the calling task is cancelled, the child's whole process group is stopped.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from subprocess import PIPE
from typing import Any

import anyio
import anyio.abc

from ..descriptor import Tool
from ..descriptor.model import StdioChannel
from ..errors import (
    AaiError,
    AppReportedError,
    ErrorCode,
    ExecutionTimeoutError,
    ServiceUnavailableError,
)
from . import process as proc
from .base import Invocation
from .wire import decode_response, encode_request

logger = logging.getLogger(__name__)

STDERR_KEPT_BYTES = 64 * 1024
STDERR_SHOWN_CHARS = 2000
OUTPUT_PREVIEW_CHARS = 200


@dataclass
class _Capture:
    """What one run produced so far; survives a timeout so the error can show the stderr tail."""

    stdout: bytearray = field(default_factory=bytearray)
    stderr: bytearray = field(default_factory=bytearray)
    returncode: int | None = None
    output_too_large: bool = False


@dataclass(frozen=True)
class _Launch:
    argv: list[str]
    cwd: Path | None
    env: dict[str, str]


class StdioExecutor:
    """Runs stdio adapters. Safe to call concurrently; each call gets its own process.

    - `max_output_bytes`: the most stdout one call may produce; beyond it the child is stopped
      and the call fails with EXECUTION_FAILED (output is read in chunks, never unbounded).
    - `max_concurrent` / `max_concurrent_per_app`: processes running at once, in total and per
      app; further calls wait their turn, and the wait counts against their timeout.
    - `kill_grace_seconds`: time between SIGTERM and SIGKILL when a process group is stopped.
    - `output_drain_seconds`: after the adapter exits, how long to wait for its stdout/stderr to
      close (something it started in the background may hold them open).
    - `environ`: the environment the allow-listed variables are copied from (default: the
      gateway's own, read at each call).
    """

    def __init__(
        self,
        *,
        max_output_bytes: int = 16 * 1024 * 1024,
        max_concurrent: int = 16,
        max_concurrent_per_app: int = 8,
        kill_grace_seconds: float = 2.0,
        output_drain_seconds: float = 1.0,
        environ: Mapping[str, str] | None = None,
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

    # ------------------------------------------------------------------ Executor protocol

    def unavailable_reason(self, tool: Tool) -> str | None:
        channel = tool.channel
        if not isinstance(channel, StdioChannel):
            return f"the stdio executor cannot run {channel.type.value!r} tools"
        command = channel.command
        if proc.has_path_separator(command) and not Path(command).is_absolute():
            return None  # relative to the descriptor's folder, which only the invocation knows
        found, looked = proc.find_program(command, base_dir=None, search_path=self._search_path(channel))
        if found is None:
            return f"command {command!r} was not found {looked}, or is not executable"
        return None

    async def execute(self, invocation: Invocation) -> Any:
        launch = self._prepare(invocation)
        request = self._request_line(invocation)
        app_id, tool = invocation.app.id, invocation.tool.name
        capture = _Capture()
        with anyio.CancelScope(deadline=anyio.current_time() + invocation.timeout_seconds) as deadline:
            async with self._all_slots, self._slots_for(app_id):
                await self._run(launch, request, capture, app_id, f"{app_id} {tool}")
        if deadline.cancelled_caught and capture.returncode is None and not capture.output_too_large:
            error = ExecutionTimeoutError(app_id, tool, invocation.tool.effective_timeout_ms)
            tail = _stderr_text(capture.stderr)
            if tail:
                error.data["stderr_tail"] = tail
            raise error
        return self._interpret(invocation, capture)

    async def aclose(self) -> None:
        """Nothing to release: every process belongs to the call that started it, and cancelling
        that call stops the process."""

    # ------------------------------------------------------------------ preparing a call

    def _parent_environ(self) -> Mapping[str, str]:
        return os.environ if self._environ is None else self._environ

    def _search_path(self, channel: StdioChannel) -> str:
        return channel.env.get("PATH") or self._parent_environ().get("PATH") or os.defpath

    def _prepare(self, invocation: Invocation) -> _Launch:
        channel = invocation.tool.channel
        app = invocation.app
        if not isinstance(channel, StdioChannel):
            raise AaiError(
                f"{app.id} {invocation.tool.name}: the stdio executor got a {channel.type.value!r} tool",
                {"app": app.id, "tool": invocation.tool.name},
                ErrorCode.INTERNAL_ERROR,
            )
        if app.source.kind == "web":
            raise ServiceUnavailableError(
                app.id,
                "a descriptor fetched from the web cannot start programs on this computer "
                f"(stdio command {channel.command!r}, descriptor {app.source.location})",
                command=channel.command,
                descriptor=app.source.location,
            )
        env = proc.child_environment(self._parent_environ(), channel.env)
        base_dir = invocation.descriptor_dir
        found, looked = proc.find_program(
            channel.command, base_dir=base_dir, search_path=self._search_path(channel)
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
        return _Launch([found, *channel.args], base_dir, env)

    @staticmethod
    def _request_line(invocation: Invocation) -> bytes:
        line = encode_request(invocation.request_id, invocation.tool.name, invocation.arguments)
        try:
            return line.encode("utf-8") + b"\n"
        except UnicodeEncodeError as exc:  # a lone surrogate cannot be written as UTF-8
            raise AaiError(
                f"invalid arguments for {invocation.app.id} {invocation.tool.name}: text that is "
                f"not valid Unicode ({exc.reason})",
                {"app": invocation.app.id, "tool": invocation.tool.name},
                ErrorCode.INVALID_PARAMS,
            ) from exc

    def _slots_for(self, app_id: str) -> anyio.Semaphore:
        slots = self._app_slots.get(app_id)
        if slots is None:
            slots = self._app_slots[app_id] = anyio.Semaphore(self._max_per_app)
        return slots

    # ------------------------------------------------------------------ running it

    async def _run(self, launch: _Launch, request: bytes, capture: _Capture, app_id: str, label: str) -> None:
        try:
            with anyio.CancelScope(shield=True):  # once started, the process must be ours to stop
                process = await anyio.open_process(
                    launch.argv,
                    stdin=PIPE,
                    stdout=PIPE,
                    stderr=PIPE,
                    cwd=launch.cwd,
                    env=launch.env,
                    **proc.spawn_options(),
                )
        except (OSError, ValueError) as exc:
            raise ServiceUnavailableError(
                app_id,
                f"its adapter {launch.argv[0]!r} could not be started: {exc}",
                command=launch.argv[0],
            ) from exc
        started = anyio.current_time()
        logger.debug("%s: started pid %d: %s (cwd %s)", label, process.pid, launch.argv, launch.cwd)
        try:
            assert process.stdin is not None and process.stdout is not None and process.stderr is not None
            stdout_done, stderr_done = anyio.Event(), anyio.Event()
            async with anyio.create_task_group() as tasks:

                async def read_stdout(stream: anyio.abc.ByteReceiveStream) -> None:
                    if not await proc.read_bounded(stream, capture.stdout, self.max_output_bytes):
                        capture.output_too_large = True
                        tasks.cancel_scope.cancel()
                    stdout_done.set()

                async def read_stderr(stream: anyio.abc.ByteReceiveStream) -> None:
                    await proc.read_tail(stream, capture.stderr, STDERR_KEPT_BYTES)
                    stderr_done.set()

                tasks.start_soon(proc.write_and_close, process.stdin, request)
                tasks.start_soon(read_stdout, process.stdout)
                tasks.start_soon(read_stderr, process.stderr)
                capture.returncode = await process.wait()
                with anyio.move_on_after(self.output_drain_seconds):
                    await stdout_done.wait()
                    await stderr_done.wait()
                tasks.cancel_scope.cancel()
        finally:
            with anyio.CancelScope(shield=True):
                await proc.stop_process_tree(process, self.kill_grace_seconds)
                await _close_quietly(process)
            logger.debug(
                "%s: pid %d %s after %.3f s%s",
                label,
                process.pid,
                proc.describe_exit(process.returncode) if process.returncode is not None else "ended",
                anyio.current_time() - started,
                "" if capture.returncode is not None else " (stopped by the gateway)",
            )

    # ------------------------------------------------------------------ reading the answer

    def _interpret(self, invocation: Invocation, capture: _Capture) -> Any:
        app_id, tool = invocation.app.id, invocation.tool.name
        stderr = _stderr_text(capture.stderr)
        data: dict[str, Any] = {"app": app_id, "tool": tool}
        if stderr:
            data["stderr_tail"] = stderr
        if capture.output_too_large:
            raise AaiError(
                f"{app_id} {tool}: the adapter wrote more than {self.max_output_bytes} bytes to "
                "stdout (the gateway's max_output_bytes limit) and was stopped",
                {**data, "max_output_bytes": self.max_output_bytes},
                ErrorCode.EXECUTION_FAILED,
            )
        returncode = capture.returncode
        assert returncode is not None
        output = bytes(capture.stdout).removeprefix(b"\xef\xbb\xbf")
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
            raise AaiError(
                f"{app_id} {tool}: the adapter {proc.describe_exit(returncode)}" + _stderr_clause(stderr),
                data,
                ErrorCode.EXECUTION_FAILED,
            )
        if not has_output:
            raise AaiError(
                f"{app_id} {tool}: the adapter exited without writing a response to stdout; expected "
                'one JSON object such as {"status": "success", "result": ...}' + _stderr_clause(stderr),
                data,
                ErrorCode.EXECUTION_FAILED,
            )
        try:
            return decode_response(output, app_id=app_id, tool=tool, request_id=invocation.request_id)
        except AppReportedError:
            raise
        except AaiError as garbled:
            if stderr:
                garbled.data["stderr_tail"] = stderr
            raise


def _stderr_text(raw: bytearray) -> str:
    text = raw.decode("utf-8", "replace").strip()
    if len(text) > STDERR_SHOWN_CHARS:
        text = "…" + text[-STDERR_SHOWN_CHARS:].lstrip()
    return text


def _stderr_clause(stderr: str) -> str:
    return f"; its stderr ends with: {stderr}" if stderr else "; it wrote nothing to stderr"


def _preview(output: bytes) -> str:
    text = output[: OUTPUT_PREVIEW_CHARS * 4].decode("utf-8", "replace")
    return text[:OUTPUT_PREVIEW_CHARS] + ("…" if len(output) > OUTPUT_PREVIEW_CHARS else "")


async def _close_quietly(process: anyio.abc.Process) -> None:
    with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
        await process.aclose()
