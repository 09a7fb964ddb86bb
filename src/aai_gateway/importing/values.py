"""Which references each client resolves in its configuration's strings, and splitting a string
into literal text and references accordingly.

- Claude Desktop and Codex: none; Codex names environment variables in keys of their own
  (`env_vars`, `bearer_token_env_var`, `env_http_headers`), handled with the entry.
- Claude Code: `${NAME}` and `${NAME:-default}` (environment).
- Cursor: `${env:NAME}`, and `${userHome}`, `${workspaceFolder}`, `${workspaceFolderBasename}`,
  `${pathSeparator}`, `${/}`.
- VS Code: `${input:id}`, `${env:NAME}`, and its other predefined variables (`${workspaceFolder}`,
  `${userHome}`, `${config:…}`, …).
- Gemini CLI: `$NAME` and `${NAME}` (environment).
- Windsurf: `${env:NAME}` and `${file:path}`.
- A file whose client is unknown (`GENERIC`): `${env:NAME}`, `${NAME}` and `${NAME:-default}`,
  the forms of the clients that share its shape; text like that is almost never meant
  literally.

Where each is documented: see the package docstring.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from .model import (
    CLAUDE_CODE,
    CLAUDE_DESKTOP,
    CODEX,
    CURSOR,
    GEMINI,
    GENERIC,
    VSCODE,
    WINDSURF,
    ConfigValue,
    Reference,
)

_NAME: Final = r"[A-Za-z_][A-Za-z0-9_]*"
_ENV_PREFIXED: Final = r"\$\{env:(?P<env>[^}]+)\}"
_BRACED: Final = rf"\$\{{(?P<braced>{_NAME})(?::-(?P<default>[^}}]*))?\}}"
_BRACED_PLAIN: Final = rf"\$\{{(?P<braced>{_NAME})\}}"
_BARE: Final = rf"\$(?P<bare>{_NAME})"
_INPUT: Final = r"\$\{input:(?P<input>[^}]+)\}"
_FILE: Final = r"\$\{file:(?P<file>[^}]+)\}"
_CURSOR_VARIABLES: Final = (
    r"\$\{(?P<variable>userHome|workspaceFolder|workspaceFolderBasename|pathSeparator|/)\}"
)
_VSCODE_VARIABLES: Final = r"\$\{(?P<variable>[A-Za-z][A-Za-z0-9_]*(?::[^}]*)?|/)\}"

_PATTERNS: Final[dict[str, re.Pattern[str] | None]] = {
    CLAUDE_DESKTOP: None,
    CODEX: None,
    CLAUDE_CODE: re.compile(_BRACED),
    CURSOR: re.compile(f"{_ENV_PREFIXED}|{_CURSOR_VARIABLES}"),
    VSCODE: re.compile(f"{_INPUT}|{_ENV_PREFIXED}|{_VSCODE_VARIABLES}"),
    GEMINI: re.compile(f"{_BRACED_PLAIN}|{_BARE}"),
    WINDSURF: re.compile(f"{_ENV_PREFIXED}|{_FILE}"),
    GENERIC: re.compile(f"{_ENV_PREFIXED}|{_BRACED}"),
}


@dataclass(frozen=True, slots=True)
class Input:
    """A VS Code input variable, from the file's `inputs`."""

    id: str
    description: str | None
    password: bool


def parse_value(text: str, client: str, inputs: Mapping[str, Input] | None = None) -> ConfigValue:
    """`text` split into literal pieces and the references `client` resolves in it."""
    pattern = _PATTERNS.get(client, _PATTERNS[GENERIC])
    if pattern is None or "$" not in text:
        return ConfigValue.literal(text)
    parts: list[str | Reference] = []
    position = 0
    for match in pattern.finditer(text):
        parts.append(text[position : match.start()])
        parts.append(_reference(match, inputs or {}))
        position = match.end()
    parts.append(text[position:])
    return ConfigValue(text, tuple(part for part in parts if part != ""))


def env_reference(name: str) -> Reference:
    """A reference to an environment variable that a key of the configuration names (Codex)."""
    return Reference("env", name, f"${{env:{name}}}")


def _reference(match: re.Match[str], inputs: Mapping[str, Input]) -> Reference:
    found = {key: value for key, value in match.groupdict().items() if value is not None}
    raw = match.group(0)
    if "input" in found:
        given = inputs.get(found["input"])
        if given is None:
            return Reference("input", found["input"], raw, defined=False)
        return Reference("input", given.id, raw, secret=given.password, description=given.description)
    if "file" in found:
        return Reference("file", found["file"], raw)
    if "variable" in found:
        return Reference("variable", found["variable"], raw)
    name = found.get("env") or found.get("braced") or found["bare"]
    return Reference("env", name, raw, default=found.get("default"))
