"""The name and the one-line description an imported server's descriptor gets.

An agent picks an app by its tools/list line, so the description should say what the server is
for. The best sources are the server's own, from the tool snapshot taken when the import starts
it (`discovery/mcp_snapshots.py`): the first sentence of its `instructions`; else a summary of
its tools (names, with the gist of each when that fits), after its `serverInfo` title when it has
one. Whatever the server says is cleaned of control, bidirectional and format characters and
bounded. Without a snapshot (not started, failed to start, or a server that says nothing) the
description is built from what the client's configuration says: the server's name and the
package or program it runs, or the host it is reached at. Never from an argument or a URL part
that may be a credential.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from pathlib import PurePosixPath, PureWindowsPath
from typing import Any, Final
from urllib.parse import urlsplit

from ..descriptor.mcp_wire import OMITTED
from ..descriptor.secret_shapes import secret_argument_indexes, secret_shaped
from ..descriptor.shown_text import visible_text, without_escape_sequences
from ..discovery.mcp_snapshots import Snapshot

MAX_NAME: Final = 64
MAX_DESCRIPTION: Final = 200
_SHOWN_ARGUMENTS: Final = 3
_SHOWN_ARGUMENT_LENGTH: Final = 60
_SPACES: Final = re.compile(r"\s+")
_GIST: Final = 60
"""Characters of a tool's description shown after its name in the summary."""
_FIRST_SENTENCE: Final = re.compile(r"^(.+?[.!?])(?=\s|$)")
_READ_CHARS: Final = 4 * MAX_DESCRIPTION


def display_name(server_name: str, fallback: str) -> str:
    """The server's name as an app name: one line of printable text, `fallback` when none is left."""
    name = _printable(server_name)[:MAX_NAME].strip()
    return name or fallback


def describe_from_server(name: str, execution: Mapping[str, Any], snapshot: Snapshot | None = None) -> str:
    """A one-line description an agent can match.

    From `snapshot` (the server's tool snapshot) when it says anything: its instructions' first
    sentence, else its title and a summary of its tools. Otherwise from the configuration: the
    server's name and what it runs (the program and the first arguments that are not options or
    secrets) or the host it is reached at."""
    own = _in_servers_words(snapshot) if snapshot is not None else ""
    if own:
        return own
    shown = display_name(name, "server")
    url = execution.get("url")
    if isinstance(url, str):
        host = _host(url)
        where = f" at {host}" if host else ""
        return _clip(f"MCP server {shown}{where} (Streamable HTTP)")
    command = execution.get("command")
    runs = _command_summary(command if isinstance(command, str) else "", execution.get("args") or [])
    return _clip(f"MCP server {shown}" + (f", runs {runs}" if runs else ""))


def _in_servers_words(snapshot: Snapshot) -> str:
    sentence = _first_sentence(snapshot.instructions or "")
    if sentence:
        return _clip(sentence)
    title = _server_text(snapshot.server.title or "") if snapshot.server is not None else ""
    tools = _tools_summary(snapshot.tools, MAX_DESCRIPTION - len(title) - 2)
    return _clip(". ".join(part for part in (title, tools) if part))


def _first_sentence(instructions: str) -> str:
    """The first sentence of the first line that says something, a Markdown heading only when
    nothing else does: a heading names a document ("Everything Server - Server Instructions"),
    the text under it says what the server does."""
    heading = ""
    for line in instructions.splitlines():
        is_heading = line.lstrip().startswith("#")
        text = _server_text(line).lstrip("#>*-= ").strip()
        if len(text) <= 1:
            continue
        if is_heading:
            heading = heading or text
            continue
        found = _FIRST_SENTENCE.match(text)
        return found.group(1) if found else text
    return heading


def _tools_summary(tools: Sequence[Any], room: int) -> str:
    """`Tools: a (what a does), b (what b does)`, or only the names when the gists do not fit in
    `room` characters; empty without a tool that has a name."""
    named = [t for t in tools if isinstance(t, dict) and isinstance(t.get("name"), str) and OMITTED not in t]
    names = [_server_text(t["name"])[:MAX_NAME] for t in named]
    gists = [_gist(t) for t in named]
    if not any(names):
        return ""
    with_gists = ", ".join(f"{n} ({g})" if g else n for n, g in zip(names, gists, strict=True) if n)
    summary = f"Tools: {with_gists}"
    if len(summary) <= room:
        return summary
    return _names_only([n for n in names if n], room)


def _names_only(names: list[str], room: int) -> str:
    shown: list[str] = []
    for index, name in enumerate(names):
        rest = len(names) - index - 1
        more = f" and {rest} more" if rest else ""
        if len("Tools: " + ", ".join([*shown, name]) + more) > room and shown:
            return f"Tools: {', '.join(shown)} and {len(names) - len(shown)} more"
        shown.append(name)
    return f"Tools: {', '.join(shown)}"


def _gist(tool: Mapping[str, Any]) -> str:
    """A tool's title, else its description's first sentence, when short enough to help."""
    annotations = tool.get("annotations")
    titles = [tool.get("title"), annotations.get("title") if isinstance(annotations, dict) else None]
    texts = [t for t in titles if isinstance(t, str)]
    description = tool.get("description")
    if isinstance(description, str):
        texts.append(_first_sentence(description).rstrip("."))
    for text in texts:
        cleaned = _server_text(text)
        if cleaned and cleaned != tool.get("name"):
            return cleaned if len(cleaned) <= _GIST else cleaned[: _GIST - 1].rstrip() + "…"
    return ""


def _server_text(text: str) -> str:
    """What a server said, as the snapshot code cleans it (no control, bidirectional or tag
    characters), on one line of printable text."""
    return _printable(visible_text(text[:_READ_CHARS], max_chars=_READ_CHARS, one_line=True)[0])


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
    """Escape sequences go whole; control, format and separator characters become spaces; runs
    of spaces one."""
    cleaned = "".join(
        " " if unicodedata.category(c)[0] in "CZ" else c for c in without_escape_sequences(text)
    )
    return _SPACES.sub(" ", cleaned).strip()


def _clip(text: str) -> str:
    return text if len(text) <= MAX_DESCRIPTION else text[: MAX_DESCRIPTION - 1] + "…"
