"""Every third-party package the code imports is declared in pyproject.toml, not only brought along
by another package (mcp brings starlette, uvicorn and mcp-types today, and may stop)."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from functools import cache
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
OWN = {"aai_gateway", "tests", *(path.stem for path in (ROOT / "bench").glob("*.py"))}
"""The project's own modules; the benchmarks import each other (and their tests them) by name."""


def imported_modules(folder: Path) -> dict[str, set[str]]:
    """Top-level module names imported (statically, not relative) → the files importing them."""
    found: dict[str, set[str]] = {}
    for path in sorted(folder.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.partition(".")[0]
                if top not in sys.stdlib_module_names and top not in OWN and top != "__future__":
                    found.setdefault(top, set()).add(str(path.relative_to(ROOT)))
    return found


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


@cache
def project() -> dict[str, object]:
    document = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    table: dict[str, object] = document["project"]
    return table


def declared(*extras: str) -> set[str]:
    table = project()
    requirements = list(table["dependencies"])  # type: ignore[call-overload]
    optional: dict[str, list[str]] = table["optional-dependencies"]  # type: ignore[assignment]
    for extra in extras:
        requirements += optional[extra]
    names = (re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", requirement) for requirement in requirements)
    return {canonical(match[0]) for match in names if match}


def undeclared(folder: str, allowed: set[str]) -> list[str]:
    distributions = packages_distributions()
    missing = []
    for module, files in sorted(imported_modules(ROOT / folder).items()):
        owners = distributions.get(module)
        if not owners:
            missing.append(f"{module} (imported by {sorted(files)[0]}) belongs to no installed package")
        elif not {canonical(owner) for owner in owners} & allowed:
            missing.append(f"{' or '.join(owners)}, imported as {module} by {sorted(files)[0]}")
    return missing


@pytest.mark.parametrize(
    ("folder", "extras"),
    [("src", ()), ("tests", ("test",))],
    ids=["the package: [project] dependencies", "the tests: dependencies and the [test] extra"],
)
def test_every_package_imported_is_declared_in_pyproject(folder: str, extras: tuple[str, ...]) -> None:
    assert undeclared(folder, declared(*extras)) == []
