"""One error tree: every `AaiError` subclass is defined in `aai_gateway.errors`, and no code
outside it builds an `AaiError` by hand (message, data and code picked at the call site), so
each kind of error has one constructor that fixes its code and the shape of its data."""

from __future__ import annotations

import ast
import pkgutil
from importlib import import_module
from pathlib import Path

import aai_gateway
from aai_gateway import errors
from aai_gateway.errors import AaiError

SOURCE = Path(aai_gateway.__file__).parent
ERRORS = SOURCE / "errors"


def _every_module() -> list[str]:
    return [
        info.name
        for info in pkgutil.walk_packages([str(SOURCE)], prefix="aai_gateway.")
        if "com_backend_win" not in info.name  # imports pywin32, Windows only
        and not info.name.endswith("__main__")  # runs the command line
    ]


def _subclasses(root: type) -> set[type]:
    found: set[type] = set()
    todo: list[type] = [root]
    while todo:
        subclasses: list[type] = todo.pop().__subclasses__()
        for sub in subclasses:
            if sub not in found:
                found.add(sub)
                todo.append(sub)
    return found


def test_every_aai_error_subclass_of_the_gateway_is_defined_in_the_errors_package() -> None:
    for name in _every_module():
        import_module(name)
    outside = sorted(
        f"{cls.__module__}.{cls.__qualname__}"
        for cls in _subclasses(AaiError)
        if cls.__module__.startswith("aai_gateway.") and not cls.__module__.startswith("aai_gateway.errors")
    )
    assert outside == [], f"move these into src/aai_gateway/errors/: {outside}"


def test_no_module_outside_the_errors_package_builds_an_aai_error_by_hand() -> None:
    hand_built = []
    for path in sorted(SOURCE.rglob("*.py")):
        if ERRORS in path.parents:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "AaiError":
                hand_built.append(f"{path.relative_to(SOURCE)}:{node.lineno}")
    assert hand_built == [], f"use (or add) a constructor in src/aai_gateway/errors/: {hand_built}"


def test_the_errors_package_exports_every_error_class_of_the_gateway() -> None:
    for name in _every_module():
        import_module(name)
    exported = {getattr(errors, name) for name in errors.__all__}
    defined = {cls for cls in _subclasses(AaiError) if cls.__module__.startswith("aai_gateway.")}
    assert defined - exported == set()
