"""Android `intent` tools, sent to a device or emulator through `adb shell am …`.

The argv is built by `android_command` (every word quoted for the device's shell, extras typed
from the argument values). Results:

- `broadcast`: the ordered broadcast's result line; its `data` as JSON when it is a JSON object
  or array, else `{"result_code": N, "data": "…"}`;
- `content_provider`: after the intent, `adb shell content query --uri RESULT_URI`, answered as
  `{"rows": [{column: value-as-text-or-null}, …]}`. An app may write its result just after the
  intent was handled, so an empty answer is asked again every `POLL_SECONDS` for up to
  `SETTLE_SECONDS` before it counts as "no rows";
- no `result_type`: `{"sent": true}` once `am` accepted the intent.

The device is `$ANDROID_SERIAL` of the gateway's environment (as `cli/` hands it down), else
adb's only device. The whole call (intent plus query) shares the tool's timeout; adb is stopped
with its process group when it runs out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import anyio

from ..descriptor import ExecutionType, Tool
from ..descriptor.model import IntentCall, IntentChannel
from ..errors import (
    AaiError,
    AnswerTooDeepError,
    AppReportedError,
    ExecutionFailedError,
    InvalidParamsError,
    ServiceUnavailableError,
)
from . import android_command as cmd
from .answer_json import MAX_ANSWER_DEPTH
from .base import ExecutorBase, ExecutorSettings, Invocation, within_timeout
from .process import ProgramRun, run_program
from .programs import child_environment, find_program

NEEDS_ADB = "needs adb (Android platform tools) and a connected device"
SETTLE_SECONDS = 1.0
POLL_SECONDS = 0.2
ADB_ENVIRONMENT = (
    "ANDROID_SERIAL",
    "ANDROID_ADB_SERVER_ADDRESS",
    "ANDROID_ADB_SERVER_PORT",
    "ADB_SERVER_SOCKET",
    "ADB_VENDOR_KEYS",
    "ANDROID_SDK_ROOT",
    "ANDROID_HOME",
)
"""What adb reads from its environment (which server, which keys): passed on to it."""
OUTPUT_LIMIT = 4 * 1024 * 1024
"""Bytes of stdout adb may print before it is stopped (a result, not a data dump)."""
KILL_GRACE_SECONDS = 1.0
_DEVICE_PROBLEMS = (
    "no devices",
    "no emulators",
    "device offline",
    "unauthorized",
    "not found",
    "more than one device",
    "cannot connect to daemon",
    "daemon not running",
    "failed to start daemon",
)


class AndroidExecutor(ExecutorBase[IntentChannel]):
    """Runs `intent` tools with the `adb` found on the PATH of `environ` (the gateway's
    environment, whose adb variables are passed on to adb)."""

    channel_class = IntentChannel
    label = "Android"
    availability_from = ()

    def __init__(self, *, environ: Mapping[str, str]) -> None:
        self.environ = environ

    def adb_path(self) -> str | None:
        return find_program("adb", self.environ)[0]

    def unavailable(self, channel: IntentChannel, tool: Tool) -> str | None:
        return NEEDS_ADB if self.adb_path() is None else None

    async def execute(self, invocation: Invocation) -> Any:
        channel, call = self.channel(invocation), self.call(invocation, IntentCall)
        adb = self.adb_path()
        if adb is None:
            raise ServiceUnavailableError(invocation.app.id, NEEDS_ADB)
        serial = self.environ.get("ANDROID_SERIAL") or None
        try:
            command = cmd.intent_command(channel, call, invocation.arguments, serial=serial)
        except cmd.ExtraError as exc:
            raise _invalid(invocation, exc.path, exc.message) from exc
        except ValueError as exc:  # NUL in a value
            raise _invalid(invocation, "", str(exc)) from exc
        with within_timeout(invocation):
            return await self._run(invocation, adb, command, call, serial)

    # ------------------------------------------------------------------ steps

    async def _run(
        self, invocation: Invocation, adb: str, command: cmd.AdbCommand, call: IntentCall, serial: str | None
    ) -> Any:
        sent = await self._adb(invocation, adb, command)
        error = cmd.am_error(sent.stdout_text)
        if error is not None:
            raise _failed(invocation, error, sent)
        if call.result_type == "broadcast":
            result = cmd.parse_broadcast(sent.stdout_text)
            if result is None:
                raise _failed(invocation, "`am broadcast` printed no 'Broadcast completed' line", sent)
            try:
                data = cmd.decode_data(result.data)
            except RecursionError:
                raise AnswerTooDeepError(invocation.app.id, invocation.tool.name, MAX_ANSWER_DEPTH) from None
            if isinstance(data, dict | list):
                return data
            return {"result_code": result.code, "data": result.data}
        if call.result_type == "content_provider":
            if not call.result_uri:
                raise ExecutionFailedError(
                    invocation.app.id,
                    invocation.tool.name,
                    "result_type content_provider needs a result_uri",
                )
            query = cmd.content_query_command(
                cmd.result_uri(call.result_uri, invocation.arguments), serial=serial
            )
            settled = anyio.current_time() + SETTLE_SECONDS
            while True:
                queried = await self._adb(invocation, adb, query)
                error = cmd.am_error(queried.stdout_text)
                if error is not None:
                    raise _failed(invocation, error, queried)
                rows = cmd.parse_content_rows(queried.stdout_text)
                if rows or anyio.current_time() >= settled:
                    return {"rows": rows}
                await anyio.sleep(POLL_SECONDS)
        return {"sent": True}

    async def _adb(self, invocation: Invocation, adb: str, command: cmd.AdbCommand) -> ProgramRun:
        """Run adb; cancelling the call (its timeout) stops adb's whole process group."""
        argv: Sequence[str] = (adb, *command.argv[1:])
        environment = child_environment(self.environ, {}, passed=ADB_ENVIRONMENT)
        try:
            ran = await run_program(argv, env=environment, max_stdout=OUTPUT_LIMIT, grace=KILL_GRACE_SECONDS)
        except OSError as exc:
            raise ServiceUnavailableError(invocation.app.id, f"could not run adb: {exc}") from exc
        if ran.output_too_large:
            raise _failed(invocation, "adb printed more output than a result may hold", ran)
        if ran.returncode != 0:
            message = _first_line(ran.stderr_text) or _first_line(ran.stdout_text) or "no output"
            if any(problem in message.lower() for problem in _DEVICE_PROBLEMS):
                raise ServiceUnavailableError(invocation.app.id, f"adb: {message}", returncode=ran.returncode)
            raise _failed(invocation, f"adb exited with code {ran.returncode}: {message}", ran)
        return ran


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


def _failed(invocation: Invocation, message: str, ran: ProgramRun) -> AaiError:
    return AppReportedError(invocation.app.id, invocation.tool.name, message, stderr=ran.stderr_text[-2000:])


def _invalid(invocation: Invocation, path: str, message: str) -> InvalidParamsError:
    return InvalidParamsError(invocation.app.id, invocation.tool.name, [{"path": path, "message": message}])


def registration(settings: ExecutorSettings) -> tuple[tuple[ExecutionType, ...], AndroidExecutor]:
    """The entry point of `intent` in the group `aai_gateway.executors` (pyproject.toml)."""
    return (ExecutionType.INTENT,), AndroidExecutor(environ=settings.environ)
