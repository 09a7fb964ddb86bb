"""Version compatibility: each kind of change gets the bump the spec's table gives it."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import pytest

from aai_gateway.descriptor import AppDescriptor, Source, load_descriptor
from aai_gateway.descriptor.compat import Bump, diff_descriptors, next_version, required_bump, satisfies
from aai_gateway.descriptor.semver import parse_version

BASE: dict[str, Any] = {
    "schemaVersion": "1.0",
    "version": "1.0.0",
    "platform": "linux",
    "app": {
        "id": "dev.test.compat",
        "name": {"en": "Compat"},
        "defaultLang": "en",
        "description": "Compat app",
    },
    "execution": {"type": "stdio", "command": "adapter"},
    "tools": [
        {
            "name": "search",
            "description": "Search items",
            "parameters": {
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "Text"},
                    "mode": {"type": "string", "enum": ["fast", "full"]},
                    "filter": {"type": "object", "properties": {"since": {"type": "string"}}},
                    "tags": {"type": "array", "items": {"type": "string"}},
                },
                "required": ["query"],
            },
        }
    ],
}


def load(document: dict[str, Any]) -> AppDescriptor:
    return load_descriptor(json.dumps(document), Source(kind="inline", location="test"), "linux")


Mutation = Callable[[dict[str, Any]], None]
PARAMS = "/tools/0/parameters"


def at(document: dict[str, Any], pointer: str) -> Any:
    value: Any = document
    for token in filter(None, pointer.split("/")):
        value = value[int(token)] if isinstance(value, list) else value[token]
    return value


def set_at(pointer: str, value: Any) -> Mutation:
    parent, _, key = pointer.rpartition("/")

    def mutate(document: dict[str, Any]) -> None:
        at(document, parent)[key] = copy.deepcopy(value)

    return mutate


def append_at(pointer: str, value: Any) -> Mutation:
    return lambda document: at(document, pointer).append(copy.deepcopy(value))


def delete_at(pointer: str) -> Mutation:
    parent, _, key = pointer.rpartition("/")
    return lambda document: at(document, parent).pop(key)


def both(*mutations: Mutation) -> Mutation:
    def mutate(document: dict[str, Any]) -> None:
        for mutation in mutations:
            mutation(document)

    return mutate


def changed(mutate: Mutation) -> list[tuple[str, Bump, str]]:
    document = copy.deepcopy(BASE)
    mutate(document)
    return [(c.kind, c.bump, c.detail) for c in diff_descriptors(load(BASE), load(document))]


NEW_TOOL = {
    "name": "open",
    "description": "Open an item",
    "parameters": {"type": "object", "properties": {"id": {"type": "integer"}}},
}


@pytest.mark.parametrize(
    ("mutate", "kind", "bump"),
    [
        (append_at("/tools", NEW_TOOL), "tool added", Bump.MINOR),
        (set_at("/tools", []), "tool removed", Bump.MAJOR),
        (set_at("/tools/0/name", "find"), "tool renamed", Bump.MAJOR),
        (set_at(f"{PARAMS}/properties/limit", {"type": "integer"}), "optional parameter added", Bump.MINOR),
        (
            both(
                set_at(f"{PARAMS}/properties/page", {"type": "integer"}),
                append_at(f"{PARAMS}/required", "page"),
            ),
            "required parameter added",
            Bump.MAJOR,
        ),
        (delete_at(f"{PARAMS}/properties/mode"), "parameter removed", Bump.MAJOR),
        (set_at(f"{PARAMS}/properties/query/type", "integer"), "parameter type changed", Bump.MAJOR),
        (append_at(f"{PARAMS}/required", "mode"), "parameter became required", Bump.MAJOR),
        (set_at(f"{PARAMS}/required", []), "parameter became optional", Bump.MINOR),
        (set_at(f"{PARAMS}/properties/mode/enum", ["fast"]), "allowed values narrowed", Bump.MAJOR),
        (append_at(f"{PARAMS}/properties/mode/enum", "smart"), "allowed values added", Bump.MINOR),
        (set_at("/tools/0/description", "Find items"), "tool description changed", Bump.PATCH),
        (
            set_at(f"{PARAMS}/properties/query/description", "Words"),
            "parameter description changed",
            Bump.PATCH,
        ),
        (set_at("/app/description", "Other"), "app description changed", Bump.PATCH),
        (set_at("/execution/args", ["--fast"]), "execution binding changed", Bump.PATCH),
        (set_at("/tools/0/returns", {"type": "array"}), "return schema changed", Bump.MINOR),
        (set_at("/tools/0/annotations", {"readOnlyHint": True}), "tool annotations changed", Bump.PATCH),
    ],
)
def test_each_change_is_classified_with_the_bump_it_needs(mutate: Mutation, kind: str, bump: Bump) -> None:
    assert (kind, bump) in [(k, b) for k, b, _ in changed(mutate)]


def test_identical_descriptors_need_no_bump() -> None:
    assert required_bump(diff_descriptors(load(BASE), load(BASE))) == Bump.NONE


def test_adding_a_description_to_a_tool_that_had_none_is_a_patch() -> None:
    old = copy.deepcopy(BASE)
    old["tools"][0].pop("description")
    changes = diff_descriptors(load(old), load(BASE))
    assert [(c.kind, c.bump) for c in changes] == [("tool description added", Bump.PATCH)]


def test_changes_inside_nested_objects_and_array_items_name_their_path() -> None:
    changes = changed(
        both(
            set_at(f"{PARAMS}/properties/filter/properties/since/type", "integer"),
            set_at(f"{PARAMS}/properties/tags/items/type", "integer"),
        )
    )
    details = {(kind, detail.split(":")[0]) for kind, _, detail in changes}
    assert ("parameter type changed", "filter.since") in details
    assert ("parameter type changed", "tags[]") in details


def test_a_removed_tool_with_different_parameters_is_not_mistaken_for_a_rename() -> None:
    kinds = {k for k, _, _ in changed(set_at("/tools", [NEW_TOOL]))}
    assert kinds == {"tool removed", "tool added"}


@pytest.mark.parametrize(
    ("old", "new", "bump", "ok"),
    [
        ("1.0.0", "2.0.0", Bump.MAJOR, True),
        ("1.4.2", "1.5.0", Bump.MAJOR, False),
        ("1.4.2", "1.5.0", Bump.MINOR, True),
        ("1.4.2", "1.4.3", Bump.MINOR, False),
        ("1.4.2", "1.4.3", Bump.PATCH, True),
        ("1.4.2", "1.4.2", Bump.PATCH, False),
        ("1.4.2", "1.4.2", Bump.NONE, True),
        ("1.4.2", "1.4.1", Bump.NONE, False),
    ],
)
def test_a_new_version_satisfies_a_bump_only_when_it_raises_that_part(
    old: str, new: str, bump: Bump, ok: bool
) -> None:
    old_version, new_version = parse_version(old), parse_version(new)
    assert old_version is not None and new_version is not None
    assert satisfies(old_version, new_version, bump) is ok


def test_the_suggested_version_is_the_smallest_that_satisfies_the_bump() -> None:
    version = parse_version("1.4.2")
    assert version is not None
    assert [str(next_version(version, b)) for b in (Bump.MAJOR, Bump.MINOR, Bump.PATCH)] == [
        "2.0.0",
        "1.5.0",
        "1.4.3",
    ]


def test_platform_sections_added_or_removed_in_dialect_b_are_minor_and_major() -> None:
    tool = {"name": "ping", "description": "Ping", "parameters": {"type": "object"}, "method": "Ping"}
    linux = {
        "automation": "dbus",
        "service": "dev.t.A",
        "object": "/dev/t/A",
        "interface": "dev.t.A",
        "tools": [tool],
    }
    web = {
        "automation": "restapi",
        "base_url": "https://api.example.com",
        "tools": [
            {"name": "ping", "description": "Ping", "parameters": {"type": "object"}, "endpoint": "/ping"}
        ],
    }
    doc: dict[str, Any] = {
        "schema_version": "1.0",
        "appId": "dev.t.a",
        "name": "A",
        "description": "A",
        "version": "1.0",
        "platforms": {"linux": linux},
    }
    both = {**doc, "platforms": {"linux": linux, "web": web}}
    old = load_descriptor(json.dumps(doc), Source(kind="inline", location="old"), "linux")
    new = load_descriptor(json.dumps(both), Source(kind="inline", location="new"), "linux")
    assert [(c.kind, c.bump) for c in diff_descriptors(old, new)] == [("platform added", Bump.MINOR)]
    assert [(c.kind, c.bump) for c in diff_descriptors(new, old)] == [("platform removed", Bump.MAJOR)]
