"""`aai-gateway diff OLD NEW`: which semver bump the changes need and whether NEW's version has it."""

from __future__ import annotations

import argparse

from ..descriptor import AppDescriptor, Source, load_descriptor
from ..descriptor.compat import Bump, diff_descriptors, next_version, required_bump, satisfies
from ..descriptor.semver import parse_version
from ..discovery.scanner import describe_os_error, read_descriptor_bytes
from ..errors import UsageError
from .common import LOGGING_OPTIONS, chosen_platform, print_json
from .tables import render_table


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "diff",
        parents=[LOGGING_OPTIONS],
        help="classify the changes between two versions of a descriptor and check the version bump",
        description=(
            "Compare two descriptors (any dialects). Every change is classified as MAJOR (breaks agents), "
            "MINOR (new capability) or PATCH (wording). Exit status 1 if NEW's version is not bumped enough."
        ),
    )
    parser.add_argument("old", metavar="OLD")
    parser.add_argument("new", metavar="NEW")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.add_argument("--platform", choices=["linux", "macos", "windows", "android", "ios"], default=None)
    parser.set_defaults(handler=run)


def _load(path: str, args: argparse.Namespace) -> AppDescriptor:
    try:
        data = read_descriptor_bytes(path, named_by_user=True)
    except OSError as exc:
        raise UsageError(f"{path}: cannot read file: {describe_os_error(exc)}", file=path) from exc
    return load_descriptor(data, Source(kind="file", location=path), chosen_platform(args))


def run(args: argparse.Namespace) -> int:
    old, new = _load(args.old, args), _load(args.new, args)
    changes = diff_descriptors(old, new)
    bump = required_bump(changes)
    old_version = parse_version(old.version)
    new_version = parse_version(new.version)
    assert old_version is not None and new_version is not None
    ok = satisfies(old_version, new_version, bump)
    suggestion = next_version(old_version, bump)
    if args.json:
        print_json(
            {
                "old_version": old.version,
                "new_version": new.version,
                "required_bump": bump.name,
                "satisfied": ok,
                "suggested_version": str(suggestion),
                "changes": [
                    {
                        "bump": c.bump.name,
                        "kind": c.kind,
                        "platform": c.platform,
                        "tool": c.tool,
                        "detail": c.detail,
                    }
                    for c in changes
                ],
            }
        )
        return 0 if ok else 1
    if changes:
        rows = [[c.bump.name, c.kind, c.platform or "-", c.tool or "-", c.detail] for c in changes]
        print(render_table(["BUMP", "CHANGE", "PLATFORM", "TOOL", "DETAIL"], rows))
    else:
        print("No changes that agents can see.")
    print(f"\nRequired bump: {bump.name}")
    if ok:
        print(f"Version {old.version} → {new.version}: ok")
    elif bump == Bump.NONE:
        print(f"Version {old.version} → {new.version}: NOT OK, the version went backwards")
    else:
        print(
            f"Version {old.version} → {new.version}: NOT OK, "
            f"needs a {bump.name} bump: use {suggestion} or later"
        )
    return 0 if ok else 1
