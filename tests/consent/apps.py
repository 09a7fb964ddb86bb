"""Descriptors for the consent tests: one app id described locally (file, bundled) and on the
web; and a consent question about it."""

from __future__ import annotations

from typing import Any

from aai_gateway.consent.prompt_text import ConsentQuestion
from aai_gateway.descriptor import AppDescriptor, Source, load_document
from tests.builders import c_descriptor

NOTES_ID = "dev.aai.example.notes"
NOTES_FILE = "/home/u/.aai/dev.aai.example.notes/aai.json"
EVIL = "https://evil.example"
GOOD = "https://api.example.com"


def _tools(document: dict[str, Any], names: tuple[str, ...]) -> dict[str, Any]:
    template = document["tools"][0]
    return {**document, "tools": [{**template, "name": name} for name in names]}


def _load(document: dict[str, Any], source: Source) -> AppDescriptor:
    result = load_document(document, source, "linux")
    assert result.descriptor is not None, result.errors
    return result.descriptor


def local_app(
    app_id: str = NOTES_ID, *, location: str = NOTES_FILE, tools: tuple[str, ...] = ("list", "create")
) -> AppDescriptor:
    """As discovery loads it from a file on this machine."""
    return _load(_tools(c_descriptor(app_id), tools), Source(kind="file", location=location))


def bundled_app(app_id: str = NOTES_ID, *, tools: tuple[str, ...] = ("list", "create")) -> AppDescriptor:
    return _load(_tools(c_descriptor(app_id), tools), Source(kind="bundled", location=f"{app_id}.json"))


def web_app(
    origin: str, app_id: str = NOTES_ID, *, tools: tuple[str, ...] = ("list", "create")
) -> AppDescriptor:
    """As web discovery loads it from `<origin>/.well-known/aai.json`, claiming `app_id`."""
    document = c_descriptor(app_id, platform="web", type="http", baseUrl=f"{origin}/v1")
    source = Source(kind="web", location=f"{origin}/.well-known/aai.json", origin=origin)
    return _load(_tools(document, tools), source)


def question(**changes: object) -> ConsentQuestion:
    """A consent question about the Notes app, with `changes` applied."""
    fields: dict[str, object] = {
        "caller": "Claude Code",
        "app_name": "Notes",
        "app_id": "dev.aai.example.notes",
        "source": "file:/home/me/apps/notes/aai.json",
        "tool": "add_note",
        "tool_description": "Adds a note.",
        "arguments": {"title": "groceries"},
    }
    fields.update(changes)
    return ConsentQuestion(**fields)  # type: ignore[arg-type]
