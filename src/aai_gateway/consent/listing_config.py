"""The `[listing]` table of `config.toml`: how many apps tools/list shows one by one, and which
apps it always shows.

It lives beside the `[consent]` reader because config.toml has one reader (`config.load_config`),
which hands this module the parsed document and collects its problems with the consent ones.
The rules are the same: reading never fails, a value that cannot be used takes its default and is
reported (file, key, line), unknown keys are warnings. Whether a pin names a known app can only
be told once the apps are discovered: the service layer reports that (`Listing.unknown_pins`).

    [listing]
    max_apps = 20                              # up to this many apps: one entry each
    pinned = ["com.github.api", "https://api.example.com"]

Above `max_apps` apps, tools/list holds the universal tools and the pinned apps only (as many
as fit in its budget); every app stays reachable through `aai_search`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from .config_values import kind as _kind
from .config_values import shown as _shown

if TYPE_CHECKING:
    from .config import Severity

DEFAULT_MAX_APPS = 20
"""Measured (docs/performance.md, "Bounded context"): 20 app entries with real descriptions and
the universal tools make a tools/list of about 2,000 tokens."""
LARGEST_MAX_APPS = 100_000
_LISTING_KEYS = frozenset({"max_apps", "pinned"})


@dataclass(frozen=True, slots=True)
class ListingConfig:
    max_apps: int = DEFAULT_MAX_APPS
    pinned: tuple[str, ...] = ()
    """App ids (local apps) and normalized web origins (`https://host[:port]`), in file order."""

    def summary(self) -> list[str]:
        """The settings, one line each (for `aai-gateway scan`)."""
        pins = ", ".join(self.pinned) if self.pinned else "none"
        return [f"max_apps = {self.max_apps}", f"pinned: {pins}"]


class ProblemSink(Protocol):
    """What `config._Reader` offers this module: report a problem, check keys, read an origin."""

    def problem(self, key: str, message: str, severity: Severity = "error") -> None: ...

    def unknown_keys(self, table: str, values: dict[str, Any], known: frozenset[str]) -> None: ...

    def origin(self, key: str, origin_text: str, entry: str) -> str | None: ...


def read_listing(document: dict[str, Any], sink: ProblemSink) -> ListingConfig:
    """The `[listing]` settings of a parsed config.toml; problems go to `sink`."""
    table = document.get("listing")
    if table is None:
        return ListingConfig()
    if not isinstance(table, dict):
        sink.problem("listing", f"must be a table ([listing]), not {_kind(table)}; using defaults")
        return ListingConfig()
    sink.unknown_keys("listing", table, _LISTING_KEYS)
    return ListingConfig(max_apps=_max_apps(table, sink), pinned=_pinned(table, sink))


def _max_apps(table: dict[str, Any], sink: ProblemSink) -> int:
    value = table.get("max_apps", DEFAULT_MAX_APPS)
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= LARGEST_MAX_APPS:
        return value
    sink.problem(
        "listing.max_apps",
        f"must be a whole number from 0 to {LARGEST_MAX_APPS}, not {_kind(value)} {_shown(value)}; "
        f"using {DEFAULT_MAX_APPS}",
    )
    return DEFAULT_MAX_APPS


def _pinned(table: dict[str, Any], sink: ProblemSink) -> tuple[str, ...]:
    values = table.get("pinned", [])
    if not isinstance(values, list):
        sink.problem("listing.pinned", f"must be a list of app ids and origins, not {_kind(values)}; ignored")
        return ()
    found: dict[str, None] = {}
    for index, value in enumerate(values):
        key = f"listing.pinned[{index}]"
        if not isinstance(value, str):
            sink.problem(key, f"must be a string (an app id or a web origin), not {_kind(value)}; ignored")
            continue
        pin = _pin(key, value.strip(), sink)
        if pin is not None and pin in found:
            sink.problem(key, f"pins {pin!r} again (an earlier entry pins it); ignored", "warning")
        elif pin is not None:
            found[pin] = None
    return tuple(found)


def _pin(key: str, text: str, sink: ProblemSink) -> str | None:
    if not text:
        sink.problem(key, "is empty; ignored")
        return None
    if "://" in text:
        scheme, _, rest = text.partition("://")
        host, _, path = rest.partition("/")
        origin = sink.origin(key, f"{scheme}://{host}", text)
        if origin is not None and path:
            sink.problem(key, f"{text!r} is not an origin (it has a path): pin https://host[:port]; ignored")
            return None
        return origin
    if "/" in text or any(c.isspace() for c in text):
        sink.problem(key, f"{text!r} is not an app id (ids have no '/' and no whitespace); ignored")
        return None
    return text
