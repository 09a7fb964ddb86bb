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

import re
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final, Literal
from urllib.parse import quote, urlsplit

import anyio

from ..descriptor import ExecutionType, Tool
from ..descriptor.model import UrlSchemeCall, UrlSchemeChannel
from ..errors import AppReportedError, ExecutionFailedError, ServiceUnavailableError
from .answer_json import loads_answer, strict_loads
from .base import ExecutorBase, ExecutorSettings, Invocation, within_timeout
from .process import ProgramRun, run_program
from .programs import child_environment, find_program
from .templates import MISSING, PLACEHOLDER, lookup, text_of

RESULT_FILE: Final = "aai-result.json"
POLL_SECONDS: Final = 0.2
NEEDS_MACOS = "needs macOS with Xcode's xcrun (iOS Simulator) or open"
XCODE_ENVIRONMENT = ("DEVELOPER_DIR",)  # which Xcode `xcrun` uses
OUTPUT_LIMIT = 4 * 1024 * 1024
"""Bytes of stdout xcrun, open or pbpaste may print before they are stopped."""
KILL_GRACE_SECONDS = 1.0


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


class IosExecutor(ExecutorBase[UrlSchemeChannel]):
    """Opens URL-scheme tools in the booted iOS Simulator or on the Mac. `environ`: the gateway's
    environment (PATH, HOME, which Xcode)."""

    channel_class = UrlSchemeChannel
    label = "iOS"
    availability_from = ()

    def __init__(self, *, environ: Mapping[str, str], platform: str = sys.platform) -> None:
        self.environ = environ
        self._platform = platform

    def _which(self, program: str) -> str | None:
        return find_program(program, self.environ)[0]

    def unavailable(self, channel: UrlSchemeChannel, tool: Tool) -> str | None:
        if self._platform != "darwin" or (self._which("xcrun") is None and self._which("open") is None):
            return NEEDS_MACOS
        return None

    async def execute(self, invocation: Invocation) -> Any:
        channel, call = self.channel(invocation), self.call(invocation, UrlSchemeCall)
        reason = self.unavailable_reason(invocation.tool)
        if reason is not None:
            raise ServiceUnavailableError(invocation.app.id, reason)
        try:
            url = build_url(call.url_template, invocation.arguments, channel.scheme)
        except UrlError as exc:
            raise ExecutionFailedError(
                invocation.app.id,
                invocation.tool.name,
                str(exc),
            ) from exc
        with within_timeout(invocation):
            return await self._run(invocation, call, url)

    # ------------------------------------------------------------------ steps

    async def target(self, invocation: Invocation) -> tuple[Target, str]:
        """Where the URL opens, and why not in the simulator when it is the Mac."""
        xcrun = self._which("xcrun")
        if xcrun is None:
            why = "Xcode's xcrun is not installed"
        else:
            listed = await self._capture([xcrun, "simctl", "list", "devices", "booted", "-j"])
            if listed.returncode == 0 and any_booted(listed.stdout_text):
                return "simulator", "the booted iOS Simulator"
            why = "no iOS Simulator is booted" if listed.returncode == 0 else _last_line(listed.stderr_text)
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
            before = (await self._checked(invocation, paste)).stdout_text
            await self._open(invocation, target, where, url)
            while True:
                await anyio.sleep(POLL_SECONDS)
                now = (await self._checked(invocation, paste)).stdout_text
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
                f"{where} could not open the {urlsplit(url).scheme}: URL ({_last_line(opened.stderr_text)}): "
                f"is {invocation.app.id} installed there?",
            )

    async def _group_container(
        self, invocation: Invocation, target: Target, group_id: str | None
    ) -> Path | None:
        if not group_id:
            return None
        if target == "mac":
            home = self.environ.get("HOME")
            if not home:
                return None
            path = Path(home) / "Library" / "Group Containers" / group_id
            return path if path.is_dir() else None
        xcrun = self._which("xcrun") or "xcrun"
        argv = [xcrun, "simctl", "get_app_container", "booted", invocation.app.id, "groups"]
        listed = await self._capture(argv)
        if listed.returncode != 0:
            return None
        return listed_container(listed.stdout_text, group_id)

    async def _capture(self, argv: list[str]) -> ProgramRun:
        """Run a helper; cancelling the call (its timeout) stops the helper's process group."""
        environment = child_environment(self.environ, {}, passed=XCODE_ENVIRONMENT)
        return await run_program(argv, env=environment, max_stdout=OUTPUT_LIMIT, grace=KILL_GRACE_SECONDS)

    async def _checked(self, invocation: Invocation, argv: list[str]) -> ProgramRun:
        try:
            captured = await self._capture(argv)
        except OSError as exc:
            raise ServiceUnavailableError(invocation.app.id, f"could not run {argv[0]}: {exc}") from exc
        if captured.returncode != 0:
            message = captured.stderr_text.strip().splitlines()[-1:] or ["no output"]
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


def registration(settings: ExecutorSettings) -> tuple[tuple[ExecutionType, ...], IosExecutor]:
    """The entry point of `url_scheme` in the group `aai_gateway.executors` (pyproject.toml)."""
    return (ExecutionType.URL_SCHEME,), IosExecutor(environ=settings.environ, platform=settings.platform)
