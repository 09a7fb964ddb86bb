"""`aai-gateway validate FILE…`: every problem in every file, exit 0 only if all are usable."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..descriptor import Source, load_text
from ..descriptor.loader import LoadResult
from ..discovery.scanner import describe_os_error, read_descriptor_bytes
from ..errors import Problem
from .common import LOGGING_OPTIONS, chosen_platform, plural, print_json


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "validate",
        parents=[LOGGING_OPTIONS],
        help="check aai.json files and report every problem with its JSON pointer",
        description="Validate descriptors in any dialect. Exit status 0 only if every file is usable.",
    )
    parser.add_argument("files", nargs="+", metavar="FILE")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.add_argument("--strict", action="store_true", help="treat warnings as errors")
    parser.add_argument("--platform", choices=["linux", "macos", "windows", "android", "ios"], default=None)
    parser.set_defaults(handler=run)


def validate_file(path: Path, args: argparse.Namespace) -> LoadResult:
    try:
        data = read_descriptor_bytes(path, named_by_user=True)
    except OSError as exc:
        return LoadResult(None, [Problem("", f"cannot read file: {describe_os_error(exc)}")])
    return load_text(data, Source(kind="file", location=str(path)), chosen_platform(args))


@dataclass(frozen=True)
class FileReport:
    file: str
    result: LoadResult
    ok: bool

    @property
    def problems(self) -> list[Problem]:
        return [p.located(self.file) for p in self.result.problems]

    def as_json(self) -> dict[str, Any]:
        descriptor = self.result.descriptor
        return {
            "file": self.file,
            "ok": self.ok,
            "dialect": self.result.dialect,
            "app": descriptor.id if descriptor else None,
            "problems": [p.as_dict() for p in self.problems],
        }

    def render(self) -> str:
        descriptor = self.result.descriptor
        if descriptor is not None:
            verdict = "ok" if self.ok else "FAILED (warnings count as errors with --strict)"
            sections = ", ".join(f"{s.platform}: {plural(len(s.tools), 'tool')}" for s in descriptor.sections)
            what = f"{descriptor.id} {descriptor.version}, dialect {descriptor.dialect}"
            line = f"{self.file}: {verdict}: {what}, {sections}"
        else:
            count = len(self.result.errors)
            line = f"{self.file}: INVALID ({plural(count, 'error')})"
        return "\n".join([line, *(f"  {p.render()}" for p in self.problems)])


def run(args: argparse.Namespace) -> int:
    reports = []
    for name in args.files:
        result = validate_file(Path(name), args)
        ok = result.descriptor is not None and not (args.strict and result.warnings)
        reports.append(FileReport(name, result, ok))
    all_ok = all(r.ok for r in reports)
    if args.json:
        print_json({"ok": all_ok, "files": [r.as_json() for r in reports]})
    else:
        for report in reports:
            print(report.render())
        valid = sum(1 for r in reports if r.ok)
        print(f"\n{valid} of {plural(len(reports), 'file')} valid")
    return 0 if all_ok else 1
