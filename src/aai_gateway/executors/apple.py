"""macOS: `applescript` / `jxa` script tools and `apple-events` apps, run through `osascript`.

Script tools (dialect B): the tool's template is filled by `apple_script` (values become
literals, never code) and the script is written to `osascript -`'s stdin, so it never shows in
argv. `result as record` adds `-s s` and parses the printed source form.

Apple Events (dialect C): a constant AppleScript program, fed on stdin, sends the JSON request
(wire.py) to the app as the direct parameter of the event `«event CCCCIIII»`; the bundle id and
the request are arguments (`osascript - <bundleId> <request>`), never script text. The two
four-character codes cannot be arguments: they are checked to be exactly four printable ASCII
characters first. The app answers with the JSON response.

Every run goes through `process.run_program`: minimal environment, own process group, stopped
with its group when the tool's timeout is up (TIMEOUT). A failure printed on stderr is
EXECUTION_FAILED with osascript's message. (A descriptor fetched from the web never gets here:
the registry refuses it, see `registry.py`.)
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from ..descriptor import Tool
from ..descriptor.model import AppleEventsChannel, ScriptCall, ScriptChannel
from ..descriptor.platforms import ExecutionType
from ..errors import (
    AaiError,
    AnswerTooDeepError,
    ExecutionFailedError,
    InvalidArgumentError,
    ServiceUnavailableError,
)
from .answer_json import MAX_ANSWER_DEPTH
from .apple_output import RecordSyntaxError, parse_output
from .apple_script import TemplateError, TemplateSyntaxError, render_applescript, render_jxa
from .base import ChannelT, ExecutorBase, ExecutorSettings, Invocation, timeout_error
from .process import ProgramRun, run_program
from .programs import child_environment, find_program
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


class _Osascript(ExecutorBase[ChannelT]):
    """What both executors share: finding osascript, running it, turning failures into errors."""

    availability_from = ()  # osascript is there or not, whatever the channel

    def __init__(self, *, environ: Mapping[str, str], platform: str = sys.platform) -> None:
        self._environ = environ
        self._platform = platform

    def _find(self) -> tuple[str | None, str]:
        if self._platform != "darwin":
            return None, "needs macOS (osascript); this is " + self._platform
        found, looked = find_program("osascript", self._environ)
        if found is None:
            return None, f"osascript was not found {looked}"
        return found, ""

    def unavailable_reason(self, tool: Tool) -> str | None:
        # without osascript no tool can run here, whatever its type
        return self._find()[1] or super().unavailable_reason(tool)

    def _osascript(self, invocation: Invocation) -> str:
        found, reason = self._find()
        if found is None:
            raise ServiceUnavailableError(invocation.app.id, reason)
        return found

    async def _run(self, invocation: Invocation, argv: Sequence[str], script: str) -> ProgramRun:
        app_id, tool = invocation.app.id, invocation.tool.name
        try:
            data = script.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise InvalidArgumentError(
                f"text that is not valid Unicode ({exc.reason})", app_id=app_id, tool=tool
            ) from exc
        try:
            run = await run_program(
                argv,
                env=child_environment(self._environ, {}),
                stdin=data,
                timeout=invocation.timeout_seconds,
                max_stdout=OUTPUT_LIMIT,
                grace=KILL_GRACE_SECONDS,
            )
        except OSError as exc:
            raise ServiceUnavailableError(app_id, f"osascript could not be started: {exc}") from exc
        if run.timed_out:
            raise timeout_error(invocation)
        self._check(invocation, run)
        return run

    @staticmethod
    def _check(invocation: Invocation, run: ProgramRun) -> None:
        app_id, tool = invocation.app.id, invocation.tool.name
        data: dict[str, Any] = {}
        if run.output_too_large:
            raise ExecutionFailedError(
                app_id, tool, f"osascript printed more than {OUTPUT_LIMIT} bytes and was stopped"
            )
        if run.returncode == 0:
            return
        message = (
            run.stderr_text.strip()[-STDERR_SHOWN_CHARS:] or f"osascript exited with code {run.returncode}"
        )
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
                raise ServiceUnavailableError(
                    app_id, f"{_UNREACHABLE[code.group(1)]}: {message}", tool=tool, **data
                )
        raise ExecutionFailedError(app_id, tool, f"osascript failed: {message}", **data)


def _script_error(invocation: Invocation, exc: Exception) -> AaiError:
    """A script the template could not be filled into: the arguments' fault (INVALID_PARAMS)
    unless the error names a placeholder or the template itself is malformed."""
    app_id, tool = invocation.app.id, invocation.tool.name
    if getattr(exc, "name", None) is None and not isinstance(exc, TemplateSyntaxError):
        return InvalidArgumentError(str(exc), app_id=app_id, tool=tool)
    return ExecutionFailedError(app_id, tool, str(exc))


class AppleScriptExecutor(_Osascript[ScriptChannel]):
    """`applescript` and `jxa` script tools. Safe to call concurrently (a process per call)."""

    channel_class = ScriptChannel
    label = "AppleScript"

    @classmethod
    def build(cls, invocation: Invocation) -> tuple[list[str], str]:
        """The osascript arguments after the program name, and the script for its stdin."""
        tool = invocation.tool
        channel, call = cls.channel(invocation), cls.call(invocation, ScriptCall)
        jxa = channel.type == ExecutionType.JXA
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
        try:
            return parse_output(run.stdout_text, self.call(invocation, ScriptCall).output_parser)
        except RecursionError:  # JSON or a record nested too deeply to read
            raise AnswerTooDeepError(invocation.app.id, invocation.tool.name, MAX_ANSWER_DEPTH) from None
        except RecordSyntaxError as exc:
            raise ExecutionFailedError(
                invocation.app.id,
                invocation.tool.name,
                f"the script's result is not a record ({exc})",
                output_start=run.stdout_text[:200],
            ) from exc


class AppleEventsExecutor(_Osascript[AppleEventsChannel]):
    """`apple-events` apps: the JSON request as an Apple event to the app by bundle id."""

    channel_class = AppleEventsChannel
    label = "Apple Events"

    @classmethod
    def build(cls, invocation: Invocation) -> tuple[list[str], str]:
        """The osascript arguments after the program name, and the constant program for stdin."""
        channel = cls.channel(invocation)
        seconds = max(1, -(-invocation.tool.effective_timeout_ms // 1000))
        try:
            program = apple_events_program(channel.event_class, channel.event_id, seconds)
        except ValueError as exc:
            raise ExecutionFailedError(
                invocation.app.id,
                invocation.tool.name,
                f"the descriptor's eventClass/eventId cannot be used: {exc}",
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
        text = run.stdout_text
        answer = text[:-1] if text.endswith("\n") else text
        return decode_response(
            answer, app_id=invocation.app.id, tool=invocation.tool.name, request_id=invocation.request_id
        )


def script_registration(settings: ExecutorSettings) -> tuple[tuple[ExecutionType, ...], AppleScriptExecutor]:
    """The entry point of `applescript` and `jxa` in the group `aai_gateway.executors`."""
    executor = AppleScriptExecutor(environ=settings.environ, platform=settings.platform)
    return (ExecutionType.APPLESCRIPT, ExecutionType.JXA), executor


def apple_events_registration(
    settings: ExecutorSettings,
) -> tuple[tuple[ExecutionType, ...], AppleEventsExecutor]:
    """The entry point of `apple-events` in the group `aai_gateway.executors`."""
    return (ExecutionType.APPLE_EVENTS,), AppleEventsExecutor(
        environ=settings.environ, platform=settings.platform
    )
