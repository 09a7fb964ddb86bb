"""Find the app and tool an agent means: by id, by its tools/list name, by URL or domain for web
apps, or by a name or alias that identifies exactly one app."""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import urlsplit

from ..descriptor import AppDescriptor, Tool
from ..descriptor.model import HttpChannel
from ..errors import AaiError, ErrorCode, UnknownAppError, UnknownToolError
from .naming import app_tool_name


def resolve_app(apps: Sequence[AppDescriptor], reference: str) -> AppDescriptor:
    wanted = reference.strip()
    if not wanted:
        raise UnknownAppError(reference, sorted(a.id for a in apps))
    for app in apps:
        if app.id == wanted:
            return app
    lowered = wanted.lower()
    candidates = [
        a
        for a in apps
        if a.id.lower() == lowered
        or app_tool_name(a.id, "portable").lower() == lowered
        or app_tool_name(a.id, "colon").lower() == lowered
    ]
    host = host_of(wanted)
    if not candidates and host is not None:
        candidates = [a for a in apps if host in app_hosts(a)]
        if not candidates:  # `notion.com` finds the app at `api.notion.com`
            candidates = [a for a in apps if any(h.endswith("." + host) for h in app_hosts(a))]
    if not candidates:
        candidates = [
            a
            for a in apps
            if lowered in (n.lower() for n in a.names.all_names())
            or lowered in (x.lower() for x in a.aliases)
        ]
    if len(candidates) == 1:
        return candidates[0]
    if len(candidates) > 1:
        ids = sorted(a.id for a in candidates)
        raise AaiError(
            f"{reference!r} could mean several apps: {', '.join(ids)}; use the app id",
            {"app": reference, "candidates": ids},
            ErrorCode.UNKNOWN_APP,
        )
    raise UnknownAppError(reference, sorted(a.id for a in apps))


def resolve_tool(app: AppDescriptor, name: str) -> Tool:
    tool = app.tool(name)
    if tool is not None:
        return tool
    lowered = name.strip().lower()
    matches = [t for t in app.tools if t.name.lower() == lowered]
    if len(matches) == 1:
        return matches[0]
    raise UnknownToolError(app.id, name, [t.name for t in app.tools])


def host_of(reference: str) -> str | None:
    """`https://api.notion.com/v1` or `api.notion.com` → `api.notion.com`; None if not URL-like."""
    text = reference.strip()
    if "://" not in text:
        if "." not in text or " " in text:
            return None
        text = "https://" + text
    try:
        host = urlsplit(text).hostname
    except ValueError:
        return None
    return host.lower().removeprefix("www.") if host else None


def app_hosts(app: AppDescriptor) -> set[str]:
    """Hosts a web app answers to: its origin and every HTTP base URL it calls."""
    hosts: set[str] = set()
    if app.source.origin:
        origin_host = host_of(app.source.origin)
        if origin_host:
            hosts.add(origin_host)
    for tool in app.tools:
        if isinstance(tool.channel, HttpChannel):
            base_host = host_of(tool.channel.base_url)
            if base_host:
                hosts.add(base_host)
    return hosts
