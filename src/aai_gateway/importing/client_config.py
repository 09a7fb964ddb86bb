"""A client's configuration with the imported servers replaced by the gateway alone.

`ClientChange` says, for one configuration file, which entries the gateway now serves and where
the gateway's own entry goes: the section the first of them was in (a Claude Code project's
servers are replaced by one gateway entry at user scope, in the file's top-level `mcpServers`).
From it come the text to show the user (`snippet`), the file's new text (`replaced_text`) and a
copy of the original without the secrets that moved into the keyring (`backup_text`).

Only the entries named are removed; everything else in the file stays. JSON is rewritten with
two-space indentation (its content is kept, its layout may change); a JSON file with comments or
trailing commas is refused, since rewriting it would lose them. TOML goes through `tomlkit`,
which keeps comments and layout.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import tomlkit

from ..errors import UsageError
from .model import FoundServer

GATEWAY_ENTRY: Final = "aai-gateway"
_TOML_SECTION: Final = ("mcp_servers",)


@dataclass(frozen=True)
class GatewayCommand:
    """How a client starts the gateway: an absolute program and its arguments."""

    command: str
    args: tuple[str, ...]


@dataclass(frozen=True)
class ClientChange:
    path: Path
    client: str
    toml: bool
    removed: tuple[FoundServer, ...]

    @property
    def section(self) -> tuple[str, ...]:
        """Where the gateway's entry goes (keys from the document's root)."""
        if self.toml:
            return _TOML_SECTION
        tokens = pointer_tokens(self.removed[0].json_pointer)[:-1]
        return ("mcpServers",) if tokens[:1] == ("projects",) else tokens

    def entry(self, gateway: GatewayCommand) -> dict[str, Any]:
        entry: dict[str, Any] = {"command": gateway.command, "args": list(gateway.args)}
        return {"type": "stdio", **entry} if self.section[-1:] == ("servers",) else entry


def snippet(change: ClientChange, gateway: GatewayCommand) -> str:
    """The gateway's entry as it goes into this file."""
    entry = change.entry(gateway)
    if change.toml:
        table = tomlkit.table()
        table.update(entry)
        return f"[{'.'.join(_TOML_SECTION)}.{GATEWAY_ENTRY}]\n" + tomlkit.dumps(table)
    nested: dict[str, Any] = {GATEWAY_ENTRY: entry}
    for key in reversed(change.section):
        nested = {key: nested}
    return json.dumps(nested, indent=2, ensure_ascii=False)


def replaced_text(change: ClientChange, text: str, gateway: GatewayCommand) -> str:
    """The file's text with the entries removed and the gateway's entry added."""
    if change.toml:
        document = tomlkit.parse(text)
        servers = document[_TOML_SECTION[0]]
        assert isinstance(servers, dict)
        for server in change.removed:
            servers.pop(server.name, None)
        table = tomlkit.table()
        table.update(change.entry(gateway))
        servers[GATEWAY_ENTRY] = table
        return tomlkit.dumps(document)
    document = _strict_json(change.path, text)
    for server in change.removed:
        *parents, key = pointer_tokens(server.json_pointer)
        parent = _walk(document, parents)
        if isinstance(parent, dict):
            parent.pop(key, None)
    section = document
    for key in change.section:
        section = section.setdefault(key, {})
    section[GATEWAY_ENTRY] = change.entry(gateway)
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def backup_text(change: ClientChange, text: str, markers: Mapping[str, str]) -> str:
    """The original file, but every moved secret value (a key of `markers`) replaced by its
    marker, which says where the value went: after the import, no file holds it."""
    if not markers:
        return text
    if change.toml:
        document = tomlkit.parse(text)
        _redact(document, markers)
        result = tomlkit.dumps(document)
    else:
        parsed = _strict_json(change.path, text)
        result = json.dumps(_redact(parsed, markers), indent=2, ensure_ascii=False) + "\n"
    left = [value for value in markers if value in result]
    if left:  # a value written with escapes the walk cannot see: refuse rather than keep it
        raise UsageError(
            f"{change.path}: a secret moved into the keyring would stay in the backup; edit it by hand"
        )
    return result


def pointer_tokens(pointer: str) -> tuple[str, ...]:
    """The keys of an RFC 6901 pointer (`/projects/~1home~1me/mcpServers/git`)."""
    return tuple(token.replace("~1", "/").replace("~0", "~") for token in pointer.split("/")[1:])


def _strict_json(path: Path, text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        raise UsageError(
            f"{path} has comments or trailing commas, which rewriting it would lose; not changed. "
            "Edit it by hand as shown above (remove the imported servers, add the aai-gateway entry)"
        ) from None


def _walk(document: Any, keys: Sequence[str]) -> Any:
    node = document
    for key in keys:
        node = node.get(key) if isinstance(node, dict) else None
    return node


def _redact(node: Any, markers: Mapping[str, str]) -> Any:
    if isinstance(node, str):
        for value, marker in markers.items():
            node = node.replace(value, marker)
        return node
    if isinstance(node, dict):
        for key in list(node):
            node[key] = _redact(node[key], markers)
    elif isinstance(node, list):
        for index, item in enumerate(node):
            node[index] = _redact(item, markers)
    return node
