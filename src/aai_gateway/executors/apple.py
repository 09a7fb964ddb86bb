"""macOS: `applescript` / `jxa` script tools and `apple-events` apps, run through `osascript`.

Script tools (dialect B): the tool's template is filled by `apple_script` (values become
literals, never code) and the script is written to `osascript -`'s stdin, so it never shows in
argv. `result as record` adds `-s s` and parses the printed source form.

Apple Events (dialect C): a constant AppleScript program, fed on stdin, sends the JSON request
(wire.py) to the app as the direct parameter of the event `«event CCCCIIII»`; the bundle id and
the request are arguments (`osascript - <bundleId> <request>`), never script text. The two
four-character codes cannot be arguments: they are checked to be exactly four printable ASCII
characters first. The app answers with the JSON response.

Every run: minimal environment, own process group, stopped with its group when the tool's
timeout is up (TIMEOUT). A failure printed on stderr is EXECUTION_FAILED with osascript's message;
a descriptor fetched from the web never runs scripts or sends events.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from subprocess import PIPE
from typing import Any

import anyio

from ..descriptor import Tool
from ..descriptor.model import AppleEventsChannel, ScriptCall, ScriptChannel
from ..descriptor.platforms import ExecutionType
from ..errors import AaiError, ErrorCode, ExecutionTimeoutError, ServiceUnavailableError
from . import process as proc
from .answer_json import AnswerTooDeepError
from .apple_output import RecordSyntaxError, parse_output
from .apple_script import TemplateError, TemplateSyntaxError, render_applescript, render_jxa
from .base import Invocation
from .wire import decode_response, encode_request

OUTPUT_LIMIT = 16 * 1024 * 1024
KILL_GRACE_SECONDS = 1.0
STDERR_SHOWN_CHARS = 2000
_FOUR_CHAR_CODE = re.compile(r"[\x20-\x21\x23-\x5b\x5d-\x7e]{4}")
"""Printable ASCII but `"` and `\\`: what may stand inside `«event …»` in the program's text."""
_OSA_ERROR = re.compile(r"\((-?\d+)\)\s*$")
_UNREACHABLE = {"-600": "the app is not running", "-10814": "the app is not installed"}


def apple_events_program(event_class: str, event_id: str, timeout_seconds: int) -> str:
    """The constant AppleScript run for an `apple-events` call (codes already validated)."""
    for code in (event_class, event_id):
        if not _FOUR_CHAR_CODE.fullmatch(code):
            raise ValueError(
                "an Apple event code must be 4 printable ASCII characters (no quote or "
                f"backslash), not {code!r}"
            )
    return (
        "on run argv\n"
        f"  with timeout of {int(timeout_seconds)} seconds\n"
        "    tell application id (item 1 of argv)\n"
        f"      return «event {event_class}{event_id}» (item 2 of argv)\n"
        "    end tell\n"
        "  end timeout\n"
        "end run\n"
    )


@dataclass(frozen=True)
class _Run:
    returncode: int | None
    stdout: str
    stderr: str
    truncated: bool = False


class _Osascript:
    """What both executors share: finding osascript, running it, turning failures into errors."""

    def __init__(self, *, environ: Mapping[str, str] | None = None, platform: str | None = None) -> None:
        self._environ = environ
        self._platform = sys.platform if platform is None else platform

    def _parent_environ(self) -> Mapping[str, str]:
        return os.environ if self._environ is None else self._environ

    def _find(self) -> tuple[str | None, str]:
        if self._platform != "darwin":
            return None, "needs macOS (osascript); this is " + self._platform
        search = self._parent_environ().get("PATH") or os.defpath
        found, looked = proc.find_program("osascript", base_dir=None, search_path=search)
        if found is None:
            return None, f"osascript was not found {looked}"
        return found, ""

    def unavailable_reason(self, tool: Tool) -> str | None:
        return self._find()[1] or None

    async def aclose(self) -> None:
        """Nothing to release: each call's process is stopped by the call."""

    def _osascript(self, invocation: Invocation) -> str:
        app = invocation.app
        if app.source.kind == "web":
            raise ServiceUnavailableError(
                app.id,
                "a descriptor fetched from the web cannot run scripts or send Apple events on this "
                f"computer (descriptor {app.source.location})",
                descriptor=app.source.location,
            )
        found, reason = self._find()
        if found is None:
            raise ServiceUnavailableError(app.id, reason)
        return found

    async def _run(self, invocation: Invocation, argv: Sequence[str], script: str) -> _Run:
        app_id, tool = invocation.app.id, invocation.tool.name
        try:
            data = script.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise AaiError(
                f"invalid arguments for {app_id} {tool}: text that is not valid Unicode ({exc.reason})",
                {"app": app_id, "tool": tool},
                ErrorCode.INVALID_PARAMS,
            ) from exc
        out, err = bytearray(), bytearray()
        complete = True
        returncode: int | None = None
        with anyio.move_on_after(invocation.timeout_seconds):
            with anyio.CancelScope(shield=True):
                try:
                    process = await anyio.open_process(
                        list(argv),
                        stdin=PIPE,
                        stdout=PIPE,
                        stderr=PIPE,
                        env=proc.child_environment(self._parent_environ(), {}),
                        **proc.spawn_options(),
                    )
                except OSError as exc:
                    raise ServiceUnavailableError(app_id, f"osascript could not be started: {exc}") from exc
            try:
                assert process.stdin and process.stdout and process.stderr
                async with anyio.create_task_group() as group:
                    group.start_soon(proc.write_and_close, process.stdin, data)
                    group.start_soon(proc.read_tail, process.stderr, err, 64 * 1024)
                    complete = await proc.read_bounded(process.stdout, out, OUTPUT_LIMIT)
                    if complete:
                        returncode = await process.wait()
                    group.cancel_scope.cancel()
            finally:
                with anyio.CancelScope(shield=True):
                    await proc.stop_process_tree(process, KILL_GRACE_SECONDS)
                    with contextlib.suppress(Exception):
                        await process.aclose()
        if returncode is None and complete:
            raise ExecutionTimeoutError(app_id, tool, invocation.tool.effective_timeout_ms)
        run = _Run(returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"), not complete)
        self._check(invocation, run)
        return run

    @staticmethod
    def _check(invocation: Invocation, run: _Run) -> None:
        app_id, tool = invocation.app.id, invocation.tool.name
        data: dict[str, Any] = {"app": app_id, "tool": tool}
        if run.truncated:
            raise AaiError(
                f"{app_id} {tool}: osascript printed more than {OUTPUT_LIMIT} bytes and was stopped",
                data,
                ErrorCode.EXECUTION_FAILED,
            )
        if run.returncode == 0:
            return
        message = run.stderr.strip()[-STDERR_SHOWN_CHARS:] or f"osascript exited with code {run.returncode}"
        data["stderr_tail"] = message
        code = _OSA_ERROR.search(message)
        if code is not None:
            data["osa_error"] = int(code.group(1))
            if code.group(1) == "-1743":
                message += (
                    " (the user has not allowed the gateway's host to control this app: System "
                    "Settings > Privacy & Security > Automation)"
                )
            elif code.group(1) in _UNREACHABLE:
                raise ServiceUnavailableError(app_id, f"{_UNREACHABLE[code.group(1)]}: {message}", **data)
        raise AaiError(f"{app_id} {tool} failed: {message}", data, ErrorCode.EXECUTION_FAILED)


def _script_error(invocation: Invocation, exc: Exception) -> AaiError:
    app_id, tool = invocation.app.id, invocation.tool.name
    by_arguments = getattr(exc, "name", None) is None and not isinstance(exc, TemplateSyntaxError)
    code = ErrorCode.INVALID_PARAMS if by_arguments else ErrorCode.EXECUTION_FAILED
    return AaiError(f"{app_id} {tool}: {exc}", {"app": app_id, "tool": tool}, code)


class AppleScriptExecutor(_Osascript):
    """`applescript` and `jxa` script tools. Safe to call concurrently (a process per call)."""

    @staticmethod
    def build(invocation: Invocation) -> tuple[list[str], str]:
        """The osascript arguments after the program name, and the script for its stdin."""
        tool = invocation.tool
        call = tool.call
        if not isinstance(tool.channel, ScriptChannel) or not isinstance(call, ScriptCall):
            raise AaiError(
                f"{invocation.app.id} {tool.name}: not a script tool",
                {"tool": tool.name},
                ErrorCode.INTERNAL_ERROR,
            )
        jxa = tool.channel.type == ExecutionType.JXA
        declared = tool.parameters.get("properties")
        parameters = list(declared) if isinstance(declared, Mapping) else []
        render = render_jxa if jxa else render_applescript
        try:
            script = render(call.script, invocation.arguments, parameters=parameters, tool=tool.name)
        except TemplateError as exc:
            raise _script_error(invocation, exc) from exc
        args = ["-l", "JavaScript" if jxa else "AppleScript"]
        if call.output_parser == "result as record":
            args += ["-s", "s"]
        return [*args, "-"], script

    async def execute(self, invocation: Invocation) -> Any:
        osascript = self._osascript(invocation)
        args, script = self.build(invocation)
        run = await self._run(invocation, [osascript, *args], script)
        call = invocation.tool.call
        assert isinstance(call, ScriptCall)
        try:
            return parse_output(run.stdout, call.output_parser)
        except RecursionError:  # JSON or a record nested too deeply to read
            raise AnswerTooDeepError(invocation.app.id, invocation.tool.name) from None
        except RecordSyntaxError as exc:
            raise AaiError(
                f"{invocation.app.id} {invocation.tool.name}: the script's result is not a record ({exc})",
                {"app": invocation.app.id, "tool": invocation.tool.name, "output_start": run.stdout[:200]},
                ErrorCode.EXECUTION_FAILED,
            ) from exc


class AppleEventsExecutor(_Osascript):
    """`apple-events` apps: the JSON request as an Apple event to the app by bundle id."""

    @staticmethod
    def build(invocation: Invocation) -> tuple[list[str], str]:
        """The osascript arguments after the program name, and the constant program for stdin."""
        channel = invocation.tool.channel
        if not isinstance(channel, AppleEventsChannel):
            raise AaiError(
                f"{invocation.app.id} {invocation.tool.name}: not an apple-events tool",
                {"tool": invocation.tool.name},
                ErrorCode.INTERNAL_ERROR,
            )
        seconds = max(1, -(-invocation.tool.effective_timeout_ms // 1000))
        try:
            program = apple_events_program(channel.event_class, channel.event_id, seconds)
        except ValueError as exc:
            raise AaiError(
                f"{invocation.app.id}: the descriptor's eventClass/eventId cannot be used: {exc}",
                {"app": invocation.app.id, "tool": invocation.tool.name},
                ErrorCode.EXECUTION_FAILED,
            ) from exc
        request = encode_request(invocation.request_id, invocation.tool.name, invocation.arguments)
        try:
            request.encode("utf-8")
        except UnicodeEncodeError as exc:  # a lone surrogate cannot be an argument
            raise _script_error(
                invocation, TemplateError(f"text that is not valid Unicode ({exc.reason})")
            ) from exc
        return ["-", channel.bundle_id, request], program

    async def execute(self, invocation: Invocation) -> Any:
        osascript = self._osascript(invocation)
        args, program = self.build(invocation)
        run = await self._run(invocation, [osascript, *args], program)
        answer = run.stdout[:-1] if run.stdout.endswith("\n") else run.stdout
        return decode_response(
            answer, app_id=invocation.app.id, tool=invocation.tool.name, request_id=invocation.request_id
        )
