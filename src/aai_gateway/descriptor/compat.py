"""Version compatibility (spec "Version Specification"): what changed between two descriptors,
which semver bump each change needs, and whether the new version number is enough."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

from .model import AppDescriptor, PlatformSection, Tool
from .semver import Version


class Bump(IntEnum):
    NONE = 0
    PATCH = 1
    MINOR = 2
    MAJOR = 3


@dataclass(frozen=True)
class Change:
    kind: str
    bump: Bump
    detail: str
    platform: str = ""
    tool: str = ""


def diff_descriptors(old: AppDescriptor, new: AppDescriptor) -> list[Change]:
    changes: list[Change] = []
    if old.id != new.id:
        changes.append(
            Change("app id changed", Bump.MAJOR, f"{old.id} → {new.id}: agents address apps by id")
        )
    for label, before, after in (
        ("names", old.names.all_names(), new.names.all_names()),
        ("description", old.description, new.description),
        ("aliases", list(old.aliases), list(new.aliases)),
    ):
        if before != after:
            changes.append(Change(f"app {label} changed", Bump.PATCH, f"{_short(before)} → {_short(after)}"))
    old_sections = {s.platform: s for s in old.sections}
    new_sections = {s.platform: s for s in new.sections}
    for platform in old_sections.keys() - new_sections.keys():
        changes.append(Change("platform removed", Bump.MAJOR, f"{platform} is no longer supported", platform))
    for platform in new_sections.keys() - old_sections.keys():
        changes.append(Change("platform added", Bump.MINOR, f"{platform} is now supported", platform))
    for platform in sorted(old_sections.keys() & new_sections.keys()):
        changes += _diff_section(old_sections[platform], new_sections[platform])
    return changes


def _diff_section(old: PlatformSection, new: PlatformSection) -> list[Change]:
    platform = old.platform
    before = {t.name: t for t in old.tools}
    after = {t.name: t for t in new.tools}
    removed = [before[n] for n in before if n not in after]
    added = [after[n] for n in after if n not in before]
    changes: list[Change] = []
    for gone in list(removed):
        twin = next((t for t in added if _looks_renamed(gone, t)), None)
        if twin is not None:
            removed.remove(gone)
            added.remove(twin)
            changes.append(
                Change(
                    "tool renamed",
                    Bump.MAJOR,
                    f"{gone.name} → {twin.name}: callers of the old name break",
                    platform,
                    gone.name,
                )
            )
    changes += [
        Change("tool removed", Bump.MAJOR, "callers of this tool break", platform, t.name) for t in removed
    ]
    changes += [
        Change("tool added", Bump.MINOR, t.description or "new tool", platform, t.name) for t in added
    ]
    for name in before.keys() & after.keys():
        changes += [
            Change(c.kind, c.bump, c.detail, platform, name) for c in _diff_tool(before[name], after[name])
        ]
    return sorted(changes, key=lambda c: (c.tool, -c.bump, c.kind))


def _looks_renamed(old: Tool, new: Tool) -> bool:
    """Same parameters (and, when there are none to compare, the same description)."""
    if _canonical(old.parameters) != _canonical(new.parameters):
        return False
    return bool(old.parameters.get("properties")) or old.description == new.description


def _diff_tool(old: Tool, new: Tool) -> Iterator[Change]:
    if old.description != new.description:
        kind = "tool description added" if not old.description else "tool description changed"
        yield Change(kind, Bump.PATCH, _short(new.description))
    yield from _diff_object(old.parameters, new.parameters, "")
    if _canonical(old.returns) != _canonical(new.returns):
        old_type = (old.returns or {}).get("type")
        new_type = (new.returns or {}).get("type")
        if old.returns is not None and new.returns is not None and old_type != new_type:
            yield Change("return type changed", Bump.MAJOR, f"{old_type} → {new_type}")
        else:
            yield Change("return schema changed", Bump.MINOR, "agents reading the result may see new fields")
    if old.annotations != new.annotations:
        yield Change("tool annotations changed", Bump.PATCH, "the hints guides and consent questions show")
    if old.channel != new.channel or old.call != new.call or old.timeout_ms != new.timeout_ms:
        yield Change(
            "execution binding changed", Bump.PATCH, "how the gateway reaches the app; invisible to agents"
        )


def _diff_object(old: dict[str, Any], new: dict[str, Any], prefix: str) -> Iterator[Change]:
    old_props: dict[str, Any] = old.get("properties") or {}
    new_props: dict[str, Any] = new.get("properties") or {}
    old_required = set(old.get("required") or [])
    new_required = set(new.get("required") or [])
    for name in sorted(old_props.keys() - new_props.keys()):
        yield Change("parameter removed", Bump.MAJOR, f"{prefix}{name}: callers passing it break")
    for name in sorted(new_props.keys() - old_props.keys()):
        if name in new_required:
            yield Change("required parameter added", Bump.MAJOR, f"{prefix}{name}: existing calls lack it")
        else:
            yield Change("optional parameter added", Bump.MINOR, f"{prefix}{name}")
    for name in sorted(old_props.keys() & new_props.keys()):
        path = f"{prefix}{name}"
        if name in new_required and name not in old_required:
            yield Change("parameter became required", Bump.MAJOR, path)
        elif name in old_required and name not in new_required:
            yield Change("parameter became optional", Bump.MINOR, path)
        yield from _diff_property(_as_schema(old_props[name]), _as_schema(new_props[name]), path)


def _diff_property(old: dict[str, Any], new: dict[str, Any], path: str) -> Iterator[Change]:
    if _types(old) != _types(new):
        yield Change(
            "parameter type changed", Bump.MAJOR, f"{path}: {_short(_types(old))} → {_short(_types(new))}"
        )
        return
    if "enum" in old or "enum" in new:
        before, after = old.get("enum"), new.get("enum")
        if after is not None and (before is None or any(v not in after for v in before)):
            yield Change("allowed values narrowed", Bump.MAJOR, f"{path}: {_short(before)} → {_short(after)}")
        elif before is not None and after is not None and after != before:
            yield Change("allowed values added", Bump.MINOR, f"{path}: {_short(after)}")
        elif after is None:
            yield Change("allowed values widened", Bump.MINOR, f"{path}: any value")
    if old.get("description") != new.get("description"):
        yield Change("parameter description changed", Bump.PATCH, path)
    if "properties" in old or "properties" in new:
        yield from _diff_object(old, new, f"{path}.")
    if isinstance(old.get("items"), dict) and isinstance(new.get("items"), dict):
        yield from _diff_property(old["items"], new["items"], f"{path}[]")


def _as_schema(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _types(schema: dict[str, Any]) -> list[str]:
    declared = schema.get("type")
    if declared is None:
        return []
    return sorted(declared) if isinstance(declared, list) else [str(declared)]


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."


def required_bump(changes: list[Change]) -> Bump:
    return max((c.bump for c in changes), default=Bump.NONE)


def next_version(old: Version, bump: Bump) -> Version:
    if bump == Bump.MAJOR:
        return Version(old.major + 1, 0, 0)
    if bump == Bump.MINOR:
        return Version(old.major, old.minor + 1, 0)
    if bump == Bump.PATCH:
        return Version(old.major, old.minor, old.patch + 1)
    return old


def satisfies(old: Version, new: Version, bump: Bump) -> bool:
    """Does going from `old` to `new` bump at least the part `bump` names?"""
    if bump == Bump.MAJOR:
        return new.major > old.major
    if bump == Bump.MINOR:
        return (new.major, new.minor) > (old.major, old.minor)
    if bump == Bump.PATCH:
        return (new.major, new.minor, new.patch) > (old.major, old.minor, old.patch)
    return new >= old
