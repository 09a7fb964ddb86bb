"""The name and the one-line description an imported server's descriptor gets.

An agent picks an app by its tools/list line, so the description should say what the server is
for. The best sources are the server's own: its `serverInfo` (title, description), its
`instructions`, a summary of its tools. Those exist only once the server has run and its tools
were taken as a snapshot, which is the `mcp` executor's work; `describe_from_server` is where
they are used. Until then (and whenever there is no snapshot) the description is built from what
the client's configuration says: the server's name and the package or program it runs, or the
host it is reached at. Never from an argument or a URL part that may be a credential.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from pathlib import PurePosixPath, PureWindowsPath
from typing import Any, Final
from urllib.parse import urlsplit

from ..descriptor.secret_shapes import secret_argument_indexes, secret_shaped

MAX_NAME: Final = 64
MAX_DESCRIPTION: Final = 200
_SHOWN_ARGUMENTS: Final = 3
_SHOWN_ARGUMENT_LENGTH: Final = 60
_SPACES: Final = re.compile(r"\s+")


def display_name(server_name: str, fallback: str) -> str:
    """The server's name as an app name: one line of printable text, `fallback` when none is left."""
    name = _printable(server_name)[:MAX_NAME].strip()
    return name or fallback


def describe_from_server(name: str, execution: Mapping[str, Any], snapshot: None = None) -> str:
    """A one-line description an agent can match.

    `snapshot` is the hook for the server's own words: the tool snapshot the `mcp` executor takes
    (serverInfo, instructions, the tools' summaries); its type replaces `None` when it exists.
    Without one, the description comes from the configuration: the server's name and what it runs
    (the program and the first arguments that are not options or secrets) or the host it is
    reached at."""
    shown = display_name(name, "server")
    url = execution.get("url")
    if isinstance(url, str):
        host = _host(url)
        where = f" at {host}" if host else ""
        return _clip(f"MCP server {shown}{where} (Streamable HTTP)")
    command = execution.get("command")
    runs = _command_summary(command if isinstance(command, str) else "", execution.get("args") or [])
    return _clip(f"MCP server {shown}" + (f", runs {runs}" if runs else ""))


def _command_summary(command: str, args: Sequence[Any]) -> str:
    texts = [arg for arg in args if isinstance(arg, str)]
    secret = set(secret_argument_indexes(texts))
    program = _program(command)
    shown = [program] if program and not secret_shaped(command) else []
    for index, arg in enumerate(texts):
        if len(shown) > _SHOWN_ARGUMENTS:
            break
        if index in secret or arg.startswith("-") or not arg.strip():
            continue
        text = _printable(arg)
        if len(text) > _SHOWN_ARGUMENT_LENGTH:
            text = text[: _SHOWN_ARGUMENT_LENGTH - 1] + "…"
        shown.append(text)
    return " ".join(shown)


def _program(command: str) -> str:
    """The program's file name, without its folder (which says little and may name the user)."""
    text = _printable(command)
    name = PureWindowsPath(text).name if "\\" in text else PurePosixPath(text).name
    return name or text


def _host(url: str) -> str:
    try:
        host = urlsplit(url).hostname or ""
    except ValueError:
        return ""
    return _printable(host)


def _printable(text: str) -> str:
    """Control, format and separator characters become spaces; runs of spaces one."""
    cleaned = "".join(" " if unicodedata.category(c)[0] in "CZ" else c for c in text)
    return _SPACES.sub(" ", cleaned).strip()


def _clip(text: str) -> str:
    return text if len(text) <= MAX_DESCRIPTION else text[: MAX_DESCRIPTION - 1] + "…"
