"""Platforms, execution types, and which execution types can run on which platform."""

from __future__ import annotations

import sys
from enum import StrEnum
from typing import Literal

Platform = Literal["macos", "linux", "windows", "web", "android", "ios"]
PLATFORMS: tuple[Platform, ...] = ("macos", "linux", "windows", "web", "android", "ios")
DESKTOP_PLATFORMS: tuple[Platform, ...] = ("macos", "linux", "windows")


class ExecutionType(StrEnum):
    HTTP = "http"
    STDIO = "stdio"
    ACP = "acp"
    APPLE_EVENTS = "apple-events"
    APPLESCRIPT = "applescript"
    JXA = "jxa"
    DBUS = "dbus"
    COM = "com"
    INTENT = "intent"
    URL_SCHEME = "url_scheme"
    MCP = "mcp"


# Local HTTP servers exist on every platform; stdio adapters, ACP agents and MCP servers need a
# desktop OS (a descriptor from the web never starts a program); the rest are one OS's own
# automation channel.
_ALLOWED: dict[Platform, frozenset[ExecutionType]] = {
    "web": frozenset({ExecutionType.HTTP}),
    "macos": frozenset(
        {
            ExecutionType.HTTP,
            ExecutionType.STDIO,
            ExecutionType.ACP,
            ExecutionType.MCP,
            ExecutionType.APPLE_EVENTS,
            ExecutionType.APPLESCRIPT,
            ExecutionType.JXA,
        }
    ),
    "linux": frozenset(
        {ExecutionType.HTTP, ExecutionType.STDIO, ExecutionType.ACP, ExecutionType.MCP, ExecutionType.DBUS}
    ),
    "windows": frozenset(
        {ExecutionType.HTTP, ExecutionType.STDIO, ExecutionType.ACP, ExecutionType.MCP, ExecutionType.COM}
    ),
    "android": frozenset({ExecutionType.INTENT}),
    "ios": frozenset({ExecutionType.URL_SCHEME}),
}


def allowed_execution_types(platform: Platform) -> frozenset[ExecutionType]:
    return _ALLOWED[platform]


def fits_platform(execution: ExecutionType, platform: Platform) -> bool:
    return execution in _ALLOWED[platform]


def host_platform() -> Platform:
    """The platform the gateway itself runs on."""
    if sys.platform == "darwin":
        return "macos"
    if sys.platform in ("win32", "cygwin"):
        return "windows"
    return "linux"
