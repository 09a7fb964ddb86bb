"""iOS `url_scheme` tools: open `url_template` with the arguments, then read the app's answer.

URL: every `${param}` is replaced by its value percent-encoded with nothing left safe
(`urllib.parse.quote(text, safe="")`), so `&`, `=`, `#`, `/`, `?`, `%`, spaces and non-ASCII text
stay inside the one query value or path segment they were put in. Non-string values are sent as
compact JSON text; a missing optional argument becomes the empty string. The finished URL must
still have the channel's scheme.

Where it runs (macOS only), decided per call: in the booted iOS Simulator (`xcrun simctl
openurl booted URL`) when Xcode's `simctl` lists a booted device (`xcrun simctl list devices
booted -j`); else with `open URL` on the Mac itself (apps that run on the Mac, e.g. iOS apps on
Apple silicon or Catalyst builds). Nothing here talks to a device. When the URL cannot be opened
(no simulator and no `open`, the app is not installed, nothing handles the scheme) the call is
SERVICE_UNAVAILABLE with the reason.

Results:

- `clipboard`: the pasteboard is read before the URL is opened, then polled (`xcrun simctl
  pbpaste booted` or `pbpaste`) until it changes; the new text as JSON when it is JSON, else
  `{"text": "…"}`. An app that copies exactly what was already there is not noticed (TIMEOUT).
- `app_group`: the app writes `aai-result.json` at the root of its App Group container; the file
  is polled until it is newer than the moment the URL was opened. The container is found with
  `xcrun simctl get_app_container booted BUNDLE groups` (BUNDLE: the descriptor's app id) or, on
  the Mac, at `$HOME/Library/Group Containers/APP_GROUP_ID`. When no container can be found the call
  answers `{"opened": URL}` (the operation ran, its result cannot be read).
- none: `{"opened": URL}`.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final, Literal
from urllib.parse import quote, urlsplit

import anyio

from ..descriptor import Tool
from ..descriptor.model import UrlSchemeCall, UrlSchemeChannel
from ..errors import AaiError, AppReportedError, ErrorCode, ExecutionTimeoutError, ServiceUnavailableError
from .answer_json import loads_answer, strict_loads
from .base import Invocation
from .captured import Captured, run_captured
from .templates import MISSING, PLACEHOLDER, lookup, text_of

RESULT_FILE: Final = "aai-result.json"
POLL_SECONDS: Final = 0.2
NEEDS_MACOS = "needs macOS with Xcode's xcrun (iOS Simulator) or open"
XCODE_ENVIRONMENT = ("DEVELOPER_DIR",)  # which Xcode `xcrun` uses


Target = Literal["simulator", "mac"]


class UrlError(ValueError):
    pass


def any_booted(listing: str) -> bool:
    """Whether `simctl list devices booted -j` lists a booted device."""
    try:
        devices = strict_loads(listing).get("devices", {})
    except (ValueError, AttributeError, RecursionError):
        return False
    return isinstance(devices, dict) and any(
        isinstance(device, dict) and device.get("state") == "Booted"
        for group in devices.values()
        if isinstance(group, list)
        for device in group
    )


def encode_value(value: Any) -> str:
    return quote(text_of(value), safe="")


def build_url(template: str, arguments: Mapping[str, Any], scheme: str) -> str:
    """`template` with every `${param}` replaced by its percent-encoded value (module rules)."""

    def replace(match: re.Match[str]) -> str:
        value = lookup(arguments, match.group(1))
        if value is MISSING or value is None:
            return ""
        return encode_value(value)

    url = PLACEHOLDER.sub(replace, template)
    found = urlsplit(url).scheme
    if found.lower() != scheme.lower():
        raise UrlError(f"url_template must open a {scheme}: URL, not {found or 'a relative URL'!r}")
    return url


class IosExecutor:
    """Opens URL-scheme tools in the booted iOS Simulator or on the Mac."""

    def __init__(self, *, environ: Mapping[str, str] | None = None, platform: str = sys.platform) -> None:
        self._environ = environ
        self._platform = platform

    @property
    def environ(self) -> Mapping[str, str]:
        return self._environ if self._environ is not None else os.environ

    def _which(self, program: str) -> str | None:
        return shutil.which(program, path=self.environ.get("PATH", os.defpath))

    # ------------------------------------------------------------------ Executor protocol

    def unavailable_reason(self, tool: Tool) -> str | None:
        if not isinstance(tool.channel, UrlSchemeChannel):
            return f"the iOS executor cannot run {tool.channel.type.value!r} tools"
        if self._platform != "darwin" or (self._which("xcrun") is None and self._which("open") is None):
            return NEEDS_MACOS
        return None

    async def execute(self, invocation: Invocation) -> Any:
        channel, call = invocation.tool.channel, invocation.tool.call
        if not isinstance(channel, UrlSchemeChannel) or not isinstance(call, UrlSchemeCall):
            raise AaiError(
                f"{invocation.app.id} {invocation.tool.name} is not a url_scheme tool",
                {"app": invocation.app.id, "tool": invocation.tool.name},
                ErrorCode.INTERNAL_ERROR,
            )
        reason = self.unavailable_reason(invocation.tool)
        if reason is not None:
            raise ServiceUnavailableError(invocation.app.id, reason)
        try:
            url = build_url(call.url_template, invocation.arguments, channel.scheme)
        except UrlError as exc:
            raise AaiError(
                f"{invocation.app.id} {invocation.tool.name}: {exc}",
                {"app": invocation.app.id, "tool": invocation.tool.name},
                ErrorCode.EXECUTION_FAILED,
            ) from exc
        try:
            with anyio.fail_after(invocation.timeout_seconds):
                return await self._run(invocation, call, url)
        except TimeoutError as exc:
            raise ExecutionTimeoutError(
                invocation.app.id, invocation.tool.name, invocation.tool.effective_timeout_ms
            ) from exc

    async def aclose(self) -> None:
        return None

    # ------------------------------------------------------------------ steps

    async def target(self, invocation: Invocation) -> tuple[Target, str]:
        """Where the URL opens, and why not in the simulator when it is the Mac."""
        xcrun = self._which("xcrun")
        if xcrun is None:
            why = "Xcode's xcrun is not installed"
        else:
            listed = await self._capture([xcrun, "simctl", "list", "devices", "booted", "-j"])
            if listed.returncode == 0 and any_booted(listed.stdout):
                return "simulator", "the booted iOS Simulator"
            why = "no iOS Simulator is booted" if listed.returncode == 0 else _last_line(listed.stderr)
        if self._which("open") is None:
            raise ServiceUnavailableError(
                invocation.app.id,
                f"cannot open the URL: {why}, and `open` was not found. Boot a simulator (`xcrun "
                "simctl boot DEVICE`) with the app installed, or run the gateway on a Mac that has it",
            )
        return "mac", f"this Mac ({why})"

    def open_argv(self, target: Target, url: str) -> list[str]:
        if target == "simulator":
            return [self._which("xcrun") or "xcrun", "simctl", "openurl", "booted", url]
        return [self._which("open") or "open", url]

    def paste_argv(self, target: Target) -> list[str] | None:
        if target == "simulator":
            return [self._which("xcrun") or "xcrun", "simctl", "pbpaste", "booted"]
        pbpaste = self._which("pbpaste")
        return [pbpaste] if pbpaste is not None else None

    async def _run(self, invocation: Invocation, call: UrlSchemeCall, url: str) -> Any:
        target, where = await self.target(invocation)
        if call.result_type == "clipboard":
            paste = self.paste_argv(target)
            if paste is None:
                await self._open(invocation, target, where, url)
                return {"opened": url}
            before = (await self._checked(invocation, paste)).stdout
            await self._open(invocation, target, where, url)
            while True:
                await anyio.sleep(POLL_SECONDS)
                now = (await self._checked(invocation, paste)).stdout
                if now != before:
                    return _decode(now, invocation)
        if call.result_type == "app_group":
            container = await self._group_container(invocation, target, call.app_group_id)
            opened_at = time.time()
            await self._open(invocation, target, where, url)
            if container is None:
                return {"opened": url}
            result = container / RESULT_FILE
            while True:
                await anyio.sleep(POLL_SECONDS)
                try:
                    if result.stat().st_mtime >= opened_at:
                        return _decode(result.read_text(encoding="utf-8"), invocation)
                except OSError:
                    continue
        await self._open(invocation, target, where, url)
        return {"opened": url}

    async def _open(self, invocation: Invocation, target: Target, where: str, url: str) -> None:
        """Open `url`; the app not being there (not installed, no handler) is SERVICE_UNAVAILABLE."""
        argv = self.open_argv(target, url)
        try:
            opened = await self._capture(argv)
        except OSError as exc:
            raise ServiceUnavailableError(invocation.app.id, f"could not run {argv[0]}: {exc}") from exc
        if opened.returncode != 0:
            raise ServiceUnavailableError(
                invocation.app.id,
                f"{where} could not open the {urlsplit(url).scheme}: URL ({_last_line(opened.stderr)}): "
                f"is {invocation.app.id} installed there?",
            )

    async def _group_container(
        self, invocation: Invocation, target: Target, group_id: str | None
    ) -> Path | None:
        if not group_id:
            return None
        if target == "mac":
            home = self.environ.get("HOME") or str(Path.home())
            path = Path(home) / "Library" / "Group Containers" / group_id
            return path if path.is_dir() else None
        xcrun = self._which("xcrun") or "xcrun"
        argv = [xcrun, "simctl", "get_app_container", "booted", invocation.app.id, "groups"]
        listed = await self._capture(argv)
        if listed.returncode != 0:
            return None
        return listed_container(listed.stdout, group_id)

    async def _capture(self, argv: list[str]) -> Captured:
        return await run_captured(argv, self.environ, passed=XCODE_ENVIRONMENT)

    async def _checked(self, invocation: Invocation, argv: list[str]) -> Captured:
        try:
            captured = await self._capture(argv)
        except OSError as exc:
            raise ServiceUnavailableError(invocation.app.id, f"could not run {argv[0]}: {exc}") from exc
        if captured.returncode != 0:
            message = captured.stderr.strip().splitlines()[-1:] or ["no output"]
            raise AppReportedError(
                invocation.app.id,
                invocation.tool.name,
                f"{Path(argv[0]).name} {argv[1] if len(argv) > 2 else ''} exited with code "
                f"{captured.returncode}: {message[0]}",
            )
        return captured


def _last_line(text: str) -> str:
    lines = text.strip().splitlines()
    return lines[-1].strip() if lines else "no message"


def listed_container(listing: str, group_id: str) -> Path | None:
    """The existing folder `simctl get_app_container … groups` lists for `group_id` (`ID<TAB>PATH`)."""
    for line in listing.splitlines():
        name, _, where = line.partition("\t")
        if name.strip() == group_id and where.strip() and Path(where.strip()).is_dir():
            return Path(where.strip())
    return None


def _decode(text: str, invocation: Invocation) -> Any:
    try:
        return loads_answer(text, app_id=invocation.app.id, tool=invocation.tool.name)
    except ValueError:
        return {"text": text}
