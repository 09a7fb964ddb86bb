"""The user's settings in `config.toml` in the user config dir: the `[consent]` table, and the
`[listing]` table that `listing_config.py` reads from the same document (one reader per file).

The caller (the CLI) passes the file's path; this module reads nothing else, not even the
environment. Reading never fails: a missing file gives the defaults, and a file that cannot be
used gives the defaults for whatever could not be read plus one `ConfigProblem` per mistake
(file, key, what is wrong, line when known), for the gateway to log and `consent list` to show.
That holds for whatever the file holds: arrays or inline tables nested past the parser's
stack, an integer of thousands of digits, or anything else tomllib raises mean the defaults.

Rule for mistakes: a config problem never grants more than having no config file would. An
unreadable file or a `[consent]` table of the wrong type means the defaults; a wrong
`always_ask` value means the default (`false`: stored decisions apply, and they were made by
the user); an `auto_allow` entry that cannot be read is dropped. Unknown keys are reported as
warnings (a misspelt `always_ask` must not pass silently) and ignored. Other top-level tables
belong to other parts of the gateway and are not looked at; `[listing]` follows the same rules
(`listing_config.py`).

What the entries mean (matching itself is `policy.auto_allow_entry`):

- an app **id** (`dev.aai.example.notes`) trusts that app only as described by a local
  descriptor (a file on this machine or one bundled with the gateway), never a web descriptor
  that claims the same id;
- an **origin** (`https://api.example.com`) trusts only the web app discovered at that origin;
- a tool entry is `<id or origin>/<tool name>`.
"""

from __future__ import annotations

import re
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ..descriptor.origin import normalize_origin
from ..errors import AaiError
from .config_values import kind as _kind
from .config_values import shown as _shown
from .listing_config import ListingConfig, read_listing

CONFIG_FILE_NAME = "config.toml"
Severity = Literal["error", "warning"]

_CONSENT_KEYS = frozenset({"always_ask", "auto_allow"})
_AUTO_ALLOW_KEYS = frozenset({"apps", "tools"})


@dataclass(frozen=True, slots=True)
class AutoAllow:
    """One `consent.auto_allow` entry: an app (by local id or by web origin), or one of its tools."""

    app: str  # an app id, or a normalized web origin (`https://host[:port]`)
    tool: str | None  # None: every tool of the app
    entry: str  # as written in the file, for logs and `describe`

    @property
    def is_origin(self) -> bool:
        return "://" in self.app


@dataclass(frozen=True, slots=True)
class ConsentConfig:
    always_ask: bool = False
    auto_allow: tuple[AutoAllow, ...] = ()

    def summary(self) -> list[str]:
        """The effective settings, one line each."""
        lines = [
            "always_ask = true: every execution asks; stored decisions to allow are not used"
            if self.always_ask
            else "always_ask = false: stored decisions apply"
        ]
        if not self.auto_allow:
            lines.append("auto_allow: none")
        for item in self.auto_allow:
            what = "every tool of " if item.tool is None else f"tool {item.tool!r} of "
            where = f"the web app at {item.app}" if item.is_origin else f"the local app {item.app}"
            lines.append(f"auto_allow: {what}{where}")
        return lines


@dataclass(frozen=True, slots=True)
class ConfigProblem:
    file: str
    key: str  # dotted TOML key (`consent.auto_allow.apps[2]`); "" for the file as a whole
    message: str
    severity: Severity = "error"
    line: int | None = None

    def render(self) -> str:
        where = f"{self.file}:{self.line}" if self.line is not None else self.file
        key = f" {self.key}:" if self.key else ""
        tag = " warning:" if self.severity == "warning" else ""
        return f"{where}:{key}{tag} {self.message}"


@dataclass(frozen=True, slots=True)
class LoadedConfig:
    """What `load_config` found: the settings to use, and every problem with the file."""

    path: str
    config: ConsentConfig
    problems: tuple[ConfigProblem, ...] = ()
    found: bool = False  # the file exists
    listing: ListingConfig = field(default_factory=ListingConfig)

    @property
    def errors(self) -> tuple[ConfigProblem, ...]:
        return tuple(p for p in self.problems if p.severity == "error")

    def summary(self) -> str:
        """For `consent list` and logs: where the file is, what is in effect, and what is wrong."""
        head = f"consent settings from {self.path}" if self.found else f"no {self.path}: consent defaults"
        lines = [head, *(f"  {line}" for line in self.config.summary())]
        lines += [f"  problem: {p.render()}" for p in self.problems]
        return "\n".join(lines)


def load_config(path: Path) -> LoadedConfig:
    """Read `path` (`<user config dir>/config.toml`). Never raises for the file's content."""
    shown = str(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return LoadedConfig(shown, ConsentConfig(), (), found=False)
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        problem = ConfigProblem(shown, "", f"cannot be read ({reason}); using consent defaults")
        return LoadedConfig(shown, ConsentConfig(), (problem,), found=True)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        problem = ConfigProblem(shown, "", f"is not UTF-8 text (byte {exc.start}); using consent defaults")
        return LoadedConfig(shown, ConsentConfig(), (problem,), found=True)
    return parse_config_text(text, shown, found=True)


def parse_config_text(text: str, file: str = CONFIG_FILE_NAME, *, found: bool = True) -> LoadedConfig:
    """The settings in `text`; never raises for what it holds (see the module docstring)."""
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        problem = ConfigProblem(
            file, "", f"is not valid TOML: {exc}; using consent defaults", line=_decode_error_line(exc)
        )
        return LoadedConfig(file, ConsentConfig(), (problem,), found=found)
    except RecursionError:
        return _unusable(file, found, "holds arrays or tables nested too deep to read")
    except ValueError:  # what tomllib lets through: Python's own limit on integer digits
        return _unusable(file, found, f"holds an integer of more than {sys.get_int_max_str_digits()} digits")
    except Exception as exc:  # anything else the parser may raise: the defaults, never a crash
        return _unusable(file, found, f"cannot be read ({type(exc).__name__}: {_first_line(exc)})")
    reader = _Reader(file, text)
    try:
        config = reader.read(document)
    except Exception as exc:  # a value no check foresaw: the defaults, never a crash
        return _unusable(file, found, f"cannot be applied ({type(exc).__name__}: {_first_line(exc)})")
    try:
        listing = read_listing(document, reader)
    except Exception as exc:  # the same for [listing]: its defaults, the consent settings kept
        reason = f"{type(exc).__name__}: {_first_line(exc)}"
        reader.problem("listing", f"cannot be applied ({reason}); using defaults")
        listing = ListingConfig()
    return LoadedConfig(file, config, tuple(reader.problems), found=found, listing=listing)


def _unusable(file: str, found: bool, reason: str) -> LoadedConfig:
    problem = ConfigProblem(file, "", f"{reason}; using consent defaults")
    return LoadedConfig(file, ConsentConfig(), (problem,), found=found)


def _first_line(exc: Exception) -> str:
    text = (str(exc).splitlines() or [""])[0]
    return text if len(text) <= 200 else text[:200] + "…"


def describe() -> str:
    """The `[consent]` reference, for docs and `aai-gateway --help`-style output."""
    return DESCRIPTION


DESCRIPTION = """\
Consent settings: the [consent] table of config.toml in the user config directory
(Linux $XDG_CONFIG_HOME/aai-gateway, by default ~/.config/aai-gateway; macOS
~/Library/Application Support/aai-gateway; Windows %LOCALAPPDATA%\\aai-gateway\\aai-gateway).

Before a tool of an app runs, the gateway asks the user, per calling MCP client (its client
info name; "Unknown Client" when it sends none). The answer can be: allow once; always allow
this tool; always allow every tool of this app; deny, optionally remembered. Remembered
answers live in the OS keyring (without one: in an owner-only file in the user state directory),
per client, per app, and per place the app's descriptor came from: a web descriptor claiming a
local app's id never shares its grants.

    [consent]
    always_ask = false     # true: ask before every execution; remembered allows are not used
                           # (remembered denials still apply, and auto_allow below still does)

    [consent.auto_allow]   # your own trusted apps: never asked, for every client
    apps = ["dev.aai.example.notes", "https://api.example.com"]
    tools = ["com.github.api/searchRepositories", "https://api.example.com/search"]

An app is named by its id or by its web origin:
  - an id (dev.aai.example.notes) matches the app only when its descriptor is local (a file on
    this machine or bundled with the gateway), never a web descriptor claiming that id;
  - an origin (https://api.example.com, with https://) matches only the web app discovered there.
A tool entry is <id or origin>/<tool name>.

Order of rules, first match wins:
  1. a remembered denial of the tool for this client denies;
  2. an auto_allow entry allows;
  3. always_ask = true asks (offering allow once and deny only);
  4. a remembered "all tools of this app" or "this tool" answer allows;
  5. otherwise the user is asked.

A file that cannot be used never grants more than no file: its problems are logged, unreadable
entries are dropped, and everything else takes the default. A file the TOML parser cannot read
(invalid, nested too deep, an integer of thousands of digits) means the defaults throughout.
"""


# --------------------------------------------------------------------------- reading


class _Reader:
    def __init__(self, file: str, text: str) -> None:
        self.file = file
        self.lines = text.splitlines()
        self.problems: list[ConfigProblem] = []

    def problem(self, key: str, message: str, severity: Severity = "error") -> None:
        self.problems.append(ConfigProblem(self.file, key, message, severity, self._line_of(key)))

    def read(self, document: dict[str, Any]) -> ConsentConfig:
        consent = document.get("consent")
        if consent is None:
            return ConsentConfig()
        if not isinstance(consent, dict):
            self.problem("consent", f"must be a table ([consent]), not {_kind(consent)}; using defaults")
            return ConsentConfig()
        self.unknown_keys("consent", consent, _CONSENT_KEYS)
        return ConsentConfig(
            always_ask=self._always_ask(consent), auto_allow=tuple(self._auto_allow(consent))
        )

    def _always_ask(self, consent: dict[str, Any]) -> bool:
        value = consent.get("always_ask", False)
        if isinstance(value, bool):
            return value
        self.problem(
            "consent.always_ask",
            f"must be true or false, not {_kind(value)} {_shown(value)}; using false",
        )
        return False

    def _auto_allow(self, consent: dict[str, Any]) -> list[AutoAllow]:
        table = consent.get("auto_allow")
        if table is None:
            return []
        if not isinstance(table, dict):
            self.problem(
                "consent.auto_allow",
                f"must be a table ([consent.auto_allow]) with `apps` and `tools` lists, not {_kind(table)}; "
                "nothing is auto-allowed",
            )
            return []
        self.unknown_keys("consent.auto_allow", table, _AUTO_ALLOW_KEYS)
        found: list[AutoAllow] = []
        for name, parse in (("apps", self._app_entry), ("tools", self._tool_entry)):
            key = f"consent.auto_allow.{name}"
            values = table.get(name, [])
            if not isinstance(values, list):
                self.problem(key, f"must be a list of strings, not {_kind(values)}; ignored")
                continue
            for index, value in enumerate(values):
                item_key = f"{key}[{index}]"
                if not isinstance(value, str):
                    self.problem(item_key, f"must be a string, not {_kind(value)}; ignored")
                    continue
                entry = parse(item_key, value.strip())
                if entry is not None:
                    found.append(entry)
        return found

    def _app_entry(self, key: str, text: str) -> AutoAllow | None:
        if not text:
            self.problem(key, "is empty; ignored")
            return None
        if "://" in text:
            scheme, _, rest = text.partition("://")
            host, _, path = rest.partition("/")
            origin = self.origin(key, f"{scheme}://{host}", text)
            if origin is None:
                return None
            if path:
                self.problem(
                    key,
                    f"{text!r} is not an origin (it has a path); to trust one tool, put "
                    f"'{origin}/<tool>' in consent.auto_allow.tools; ignored",
                )
                return None
            return AutoAllow(origin, None, text)
        if "/" in text:
            self.problem(
                key,
                f"{text!r} looks like a tool; put it in consent.auto_allow.tools, or give the app id "
                "alone here; ignored",
            )
            return None
        if _has_space(text):
            self.problem(key, f"{text!r} is not an app id (it contains whitespace); ignored")
            return None
        return AutoAllow(text, None, text)

    def _tool_entry(self, key: str, text: str) -> AutoAllow | None:
        if "://" in text:
            scheme, _, rest = text.partition("://")
            host, _, tool = rest.partition("/")
            origin = self.origin(key, f"{scheme}://{host}", text)
            if origin is None:
                return None
        else:
            origin, _, tool = text.partition("/")
            if not origin or _has_space(origin):
                self.problem(key, f"{text!r} is not <app id or origin>/<tool>; ignored")
                return None
        if not tool:
            self.problem(
                key,
                f"{text!r} names no tool (expected <app id or origin>/<tool>); to trust every tool of "
                "the app, put the app in consent.auto_allow.apps; ignored",
            )
            return None
        return AutoAllow(origin, tool, text)

    def origin(self, key: str, origin_text: str, entry: str) -> str | None:
        scheme = origin_text.partition("://")[0].lower()
        if scheme != "https":
            self.problem(
                key,
                f"{entry!r}: web apps are discovered over https only, so a {scheme or 'schemeless'} "
                "origin never matches; write https://…; ignored",
            )
            return None
        if any(c in origin_text for c in "?#"):
            self.problem(key, f"{entry!r} is not a web origin (it has a query or fragment); ignored")
            return None
        try:
            return normalize_origin(origin_text)
        except AaiError as exc:
            self.problem(key, f"{entry!r} is not a web origin ({exc.message}); ignored")
            return None

    def unknown_keys(self, table: str, values: dict[str, Any], known: frozenset[str]) -> None:
        for name in sorted(set(values) - known):
            self.problem(
                f"{table}.{name}",
                f"unknown setting, ignored (known in [{table}]: {', '.join(sorted(known))})",
                "warning",
            )

    def _line_of(self, key: str) -> int | None:
        """Best effort: the one line that sets the key's last part (`always_ask = …`)."""
        leaf = key.rsplit(".", 1)[-1].split("[", 1)[0]
        if not leaf:
            return None
        pattern = re.compile(rf"^\s*(?:[\w.\"-]+\.)?\"?{re.escape(leaf)}\"?\s*=")
        hits = [number for number, line in enumerate(self.lines, 1) if pattern.match(line)]
        return hits[0] if len(hits) == 1 else None


def _decode_error_line(exc: tomllib.TOMLDecodeError) -> int | None:
    line = getattr(exc, "lineno", None)  # Python 3.14+
    if isinstance(line, int):
        return line
    found = re.search(r"\(at line (\d+), column \d+\)", str(exc))
    return int(found.group(1)) if found else None


def _has_space(text: str) -> bool:
    return any(c.isspace() for c in text)
