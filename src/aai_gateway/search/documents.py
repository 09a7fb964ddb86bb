"""What is indexed: one document per app and one per operation, each in weighted fields.

| field | app document | operation document | weight |
|---|---|---|---|
| `name` | names in every language, aliases, id | operation name, title | FIELD_WEIGHTS |
| `text` | description | description | |
| `params` | | parameter names and their descriptions | |
| `owner` | | its app's names, aliases and id | |

An operation carries its app's names in a light field, so `github create issue` finds GitHub's
`create_issue` ahead of the GitHub app, while `github` alone finds the app first (its name field is
short and weighs more).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ..descriptor import AppDescriptor
from ..descriptor.model import Tool
from .normalize import clip_field

FIELDS = ("name", "text", "params", "owner")
FIELD_WEIGHTS: Mapping[str, float] = {"name": 3.0, "text": 1.0, "params": 0.5, "owner": 2.0}
MAX_PARAMETERS = 64
"""Parameters indexed per operation (in declaration order); more say nothing the first ones do not."""
MAX_ONE_LINE = 300
"""A hit's description is the first line of the app's or operation's description, cut to this."""


@dataclass(frozen=True, slots=True)
class Entry:
    """A searchable thing: an app (`tool` None) or one of its operations."""

    app: AppDescriptor
    tool: str | None
    description: str


def one_line(text: str) -> str:
    """`text` on one line, at most MAX_ONE_LINE characters."""
    line = " ".join(text[: MAX_ONE_LINE * 4].split())
    return line if len(line) <= MAX_ONE_LINE else line[: MAX_ONE_LINE - 1].rstrip() + "…"


def app_names(app: AppDescriptor) -> list[str]:
    """Every name of `app`: localized names, aliases and its id."""
    return [clip_field(text) for text in dict.fromkeys([*app.names.all_names(), *app.aliases, app.id])]


def app_fields(app: AppDescriptor) -> dict[str, list[str]]:
    return {"name": app_names(app), "text": [clip_field(app.description)]}


def _parameter_texts(parameters: Mapping[str, Any]) -> Iterator[str]:
    properties = parameters.get("properties")
    if not isinstance(properties, Mapping):
        return
    for index, (name, schema) in enumerate(properties.items()):
        if index >= MAX_PARAMETERS:
            return
        yield clip_field(str(name))
        if isinstance(schema, Mapping):
            for key in ("title", "description"):
                value = schema.get(key)
                if isinstance(value, str) and value:
                    yield clip_field(value)


def tool_fields(tool: Tool) -> dict[str, list[str]]:
    """The fields of an operation, but `owner` (the app's names, shared by all its operations)."""
    title = tool.annotations.title if tool.annotations and tool.annotations.title else None
    names = [clip_field(tool.name)] + ([clip_field(title)] if title else [])
    return {
        "name": names,
        "text": [clip_field(tool.description)],
        "params": list(_parameter_texts(tool.parameters)),
    }


def app_entry(app: AppDescriptor) -> Entry:
    return Entry(app, None, one_line(app.description))


def tool_entry(app: AppDescriptor, tool: Tool) -> Entry:
    title = tool.annotations.title if tool.annotations and tool.annotations.title else ""
    return Entry(app, tool.name, one_line(tool.description or title))
