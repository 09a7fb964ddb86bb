"""App entries (`app_<id>`) and what tools/list shows of them, computed once per catalog version.

Every listable app has an entry, found by its tool name in constant time, whether it is listed
or not: an agent may call the entry of an app that search found. Which entries are listed
depends on `[listing]` (`consent/listing_config.py`):

- up to `max_apps` listable apps (*full* mode): all of them, sorted by id;
- above (*bounded* mode): only the pinned apps, as many as fit in `PINNED_ROOM` characters,
  so tools/list stays under 2,000 tokens whatever the number of apps. Pins that name no
  listable app, and pins that do not fit, are reported (`Listing.unknown_pins`, `.left_out`).

A pin is an app id (a local app: a file or bundled) or a web origin (the web app discovered
there, which is then listed too, in both modes).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from ..consent.listing_config import ListingConfig
from ..descriptor import app_reference
from ..descriptor.card import AppCard, AppIdentity
from .naming import ToolNameStyle, app_entry_description, app_tool_name, app_tool_names

ListingMode = Literal["full", "bounded"]
PINNED_ROOM = 5_500
"""Characters the pinned entries of a bounded tools/list may take: with the universal tools
(about 2,000 characters), a bounded list stays under 8,000 characters (2,000 tokens). An entry
counts its name, its description as JSON (six characters for a non-ASCII one: never less than
its UTF-8 bytes) and `ENTRY_OVERHEAD` for its schema, annotations and keys (about 185 as MCP
sends them)."""
ENTRY_OVERHEAD = 190


@dataclass(frozen=True, eq=False)
class AppEntry:
    tool_name: str
    app: AppCard

    @functools.cached_property
    def description(self) -> str:
        """Made when first read: of thousands of entries, tools/list shows a few."""
        return app_entry_description(self.app)


@dataclass(frozen=True)
class Listing:
    """What tools/list shows of the apps, for one catalog version."""

    mode: ListingMode
    entries: tuple[AppEntry, ...]
    """The listed entries: every listable app (full), or the pinned ones that fit (bounded)."""
    listable: int  # how many apps have an entry
    settings: ListingConfig = field(default_factory=ListingConfig)
    unknown_pins: tuple[str, ...] = ()  # pins that name no listable app
    left_out: tuple[str, ...] = ()  # pins not listed in bounded mode: no room left
    why_unlisted: Mapping[str, str] = field(default_factory=dict)
    """Of `unknown_pins`, those naming an app that cannot run here: why."""

    def shown(self) -> list[tuple[str, str]]:
        """The listed entries' names and descriptions: equal for equal tools/list answers."""
        return [(e.tool_name, e.description) for e in self.entries]

    def summary(self) -> list[str]:
        """For `scan` and the log: the mode and why, the pins, and pins that are not listed."""
        limit = self.settings.max_apps
        if self.mode == "full":
            lines = [f"every app listed ({counted(self.listable, 'app')}, at most max_apps = {limit})"]
        else:
            lines = [
                f"bounded ({counted(self.listable, 'app')}, more than max_apps = {limit}): "
                f"aai_search, web_discover, aai_exec and {counted(len(self.entries), 'pinned app')}"
            ]
        lines.append(f"pinned: {', '.join(self.settings.pinned) or 'none'}")
        lines += [
            f"pinned but not an app listed here: {pin}"
            + (f" (it cannot run here: {why})" if (why := self.why_unlisted.get(pin)) else "")
            for pin in self.unknown_pins
        ]
        lines += [f"pinned but left out of the bounded list (no room): {pin}" for pin in self.left_out]
        return lines


class AppEntries:
    """The entries of `apps` and the listing they make. `apps` are the apps with an operation
    that can run here (or an MCP server that can): the local ones, and the pinned web ones."""

    def __init__(
        self,
        apps: Sequence[AppCard],
        style: ToolNameStyle,
        settings: ListingConfig,
        why_unlisted: Mapping[str, str] | None = None,
    ) -> None:
        """`why_unlisted`: why apps that are not among `apps` cannot run here, by pin."""
        self._style = style
        self._entries_in_order = entries = self._entries(apps, style)
        self._by_name = {entry.tool_name: entry for entry in entries}
        self._by_app = {entry.app.key: entry for entry in entries}
        self._other_names: dict[str, AppEntry] | None = None  # made at the first name not found
        self.listing = _listing(entries, settings, why_unlisted or {})

    @staticmethod
    def _entries(apps: Sequence[AppCard], style: ToolNameStyle) -> list[AppEntry]:
        """Entries sorted by id (local before web for one id). Local apps are named by id; a web
        app whose id a local app also has is named by its origin (`app_https___api_example_com`),
        so a pinned site never takes a local app's entry name."""
        ordered = sorted(apps, key=lambda a: (a.id, not a.binding.is_local))
        local_ids = {a.id for a in ordered if a.binding.is_local}
        keys = [
            a.id if a.binding.is_local or a.id not in local_ids else app_reference(a.binding, a.id)
            for a in ordered
        ]
        names = app_tool_names(keys, style)
        return [AppEntry(names[key], app) for key, app in zip(keys, ordered, strict=True)]

    def for_tool_name(self, name: str) -> AppEntry | None:
        """The entry called `name` in either naming style (listed or not), or None."""
        entry = self._by_name.get(name)
        if entry is not None:
            return entry
        if self._other_names is None:
            self._other_names = self._names_in_other_styles()
        return self._other_names.get(name)

    def _names_in_other_styles(self) -> dict[str, AppEntry]:
        """The other naming style's names, and `app:<raw id>` / `app_<raw id>`."""
        other: ToolNameStyle = "portable" if self._style == "colon" else "colon"
        names: dict[str, AppEntry] = {}
        for entry in self._entries_in_order:
            for name in (app_tool_name(entry.app.id, other), f"app:{entry.app.id}", f"app_{entry.app.id}"):
                if name not in self._by_name:
                    names.setdefault(name, entry)
        return names

    def for_app(self, app: AppIdentity) -> AppEntry | None:
        """`app`'s entry, when it has one (a listable app)."""
        return self._by_app.get((str(app.binding), app.id))

    def is_listed(self, app: AppIdentity) -> bool:
        entry = self.for_app(app)
        return entry is not None and (self.listing.mode == "full" or entry in self.listing.entries)


def _listing(entries: list[AppEntry], settings: ListingConfig, why_unlisted: Mapping[str, str]) -> Listing:
    by_pin = {pin_of(entry.app): entry for entry in entries}
    pinned = [(pin, by_pin[pin]) for pin in settings.pinned if pin in by_pin]
    unknown = tuple(pin for pin in settings.pinned if pin not in by_pin)
    why = {pin: why_unlisted[pin] for pin in unknown if pin in why_unlisted}
    if len(entries) <= settings.max_apps:
        return Listing("full", tuple(entries), len(entries), settings, unknown, why_unlisted=why)
    room = PINNED_ROOM
    chosen: dict[int, AppEntry] = {}
    left_out: list[str] = []
    for pin, entry in pinned:
        cost = len(entry.tool_name) + len(json.dumps(entry.description)) + ENTRY_OVERHEAD
        if cost > room:
            left_out.append(pin)
            continue
        room -= cost
        chosen[id(entry)] = entry
    shown = tuple(entry for entry in entries if id(entry) in chosen)  # in listing order
    return Listing("bounded", shown, len(entries), settings, unknown, tuple(left_out), why)


def counted(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def pin_of(app: AppIdentity) -> str:
    """What pins `app` in `[listing] pinned`: a web app's origin, a local app's id."""
    return app.binding.location if app.binding.kind == "web" else app.id
