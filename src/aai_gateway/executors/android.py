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

The device is `$ANDROID_SERIAL` of the gateway's environment, else adb's only device. The whole
call (intent plus query) shares the tool's timeout; adb is stopped with its process group when
it runs out.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from typing import Any

import anyio

from ..descriptor import Tool
from ..descriptor.model import IntentCall, IntentChannel
from ..errors import (
    AaiError,
    AppReportedError,
    ErrorCode,
    ExecutionTimeoutError,
    InvalidParamsError,
    ServiceUnavailableError,
)
from . import android_command as cmd
from .answer_json import AnswerTooDeepError
from .base import Invocation
from .captured import Captured, run_captured

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


class AndroidExecutor:
    """Runs `intent` tools with the `adb` found on the gateway's PATH."""

    def __init__(self, *, environ: Mapping[str, str] | None = None) -> None:
        self._environ = environ

    @property
    def environ(self) -> Mapping[str, str]:
        return self._environ if self._environ is not None else os.environ

    def adb_path(self) -> str | None:
        return shutil.which("adb", path=self.environ.get("PATH", os.defpath))

    # ------------------------------------------------------------------ Executor protocol

    def unavailable_reason(self, tool: Tool) -> str | None:
        if not isinstance(tool.channel, IntentChannel):
            return f"the Android executor cannot run {tool.channel.type.value!r} tools"
        if self.adb_path() is None:
            return NEEDS_ADB
        return None

    async def execute(self, invocation: Invocation) -> Any:
        channel, call = _channel_and_call(invocation)
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
        try:
            with anyio.fail_after(invocation.timeout_seconds):
                return await self._run(invocation, adb, command, call, serial)
        except TimeoutError as exc:
            raise ExecutionTimeoutError(
                invocation.app.id, invocation.tool.name, invocation.tool.effective_timeout_ms
            ) from exc

    async def aclose(self) -> None:
        return None

    # ------------------------------------------------------------------ steps

    async def _run(
        self, invocation: Invocation, adb: str, command: cmd.AdbCommand, call: IntentCall, serial: str | None
    ) -> Any:
        sent = await self._adb(invocation, adb, command)
        error = cmd.am_error(sent.stdout)
        if error is not None:
            raise _failed(invocation, error, sent)
        if call.result_type == "broadcast":
            result = cmd.parse_broadcast(sent.stdout)
            if result is None:
                raise _failed(invocation, "`am broadcast` printed no 'Broadcast completed' line", sent)
            try:
                data = cmd.decode_data(result.data)
            except RecursionError:
                raise AnswerTooDeepError(invocation.app.id, invocation.tool.name) from None
            if isinstance(data, dict | list):
                return data
            return {"result_code": result.code, "data": result.data}
        if call.result_type == "content_provider":
            if not call.result_uri:
                raise AaiError(
                    f"{invocation.app.id} {invocation.tool.name}: result_type content_provider "
                    "needs a result_uri",
                    {"app": invocation.app.id, "tool": invocation.tool.name},
                    ErrorCode.EXECUTION_FAILED,
                )
            query = cmd.content_query_command(
                cmd.result_uri(call.result_uri, invocation.arguments), serial=serial
            )
            settled = anyio.current_time() + SETTLE_SECONDS
            while True:
                queried = await self._adb(invocation, adb, query)
                error = cmd.am_error(queried.stdout)
                if error is not None:
                    raise _failed(invocation, error, queried)
                rows = cmd.parse_content_rows(queried.stdout)
                if rows or anyio.current_time() >= settled:
                    return {"rows": rows}
                await anyio.sleep(POLL_SECONDS)
        return {"sent": True}

    async def _adb(self, invocation: Invocation, adb: str, command: cmd.AdbCommand) -> Captured:
        argv = (adb, *command.argv[1:])
        try:
            captured = await run_captured(argv, self.environ, passed=ADB_ENVIRONMENT)
        except OSError as exc:
            raise ServiceUnavailableError(invocation.app.id, f"could not run adb: {exc}") from exc
        if captured.truncated:
            raise _failed(invocation, "adb printed more output than a result may hold", captured)
        if captured.returncode != 0:
            message = _first_line(captured.stderr) or _first_line(captured.stdout) or "no output"
            if any(problem in message.lower() for problem in _DEVICE_PROBLEMS):
                raise ServiceUnavailableError(
                    invocation.app.id, f"adb: {message}", returncode=captured.returncode
                )
            raise _failed(invocation, f"adb exited with code {captured.returncode}: {message}", captured)
        return captured


def _channel_and_call(invocation: Invocation) -> tuple[IntentChannel, IntentCall]:
    channel, call = invocation.tool.channel, invocation.tool.call
    if not isinstance(channel, IntentChannel) or not isinstance(call, IntentCall):
        raise AaiError(
            f"{invocation.app.id} {invocation.tool.name} is not an intent tool",
            {"app": invocation.app.id, "tool": invocation.tool.name},
            ErrorCode.INTERNAL_ERROR,
        )
    return channel, call


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


def _failed(invocation: Invocation, message: str, captured: Captured) -> AaiError:
    return AppReportedError(invocation.app.id, invocation.tool.name, message, stderr=captured.stderr[-2000:])


def _invalid(invocation: Invocation, path: str, message: str) -> InvalidParamsError:
    return InvalidParamsError(invocation.app.id, invocation.tool.name, [{"path": path, "message": message}])
