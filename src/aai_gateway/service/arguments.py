"""Arguments against a tool's parameter schema: defaults filled in, every violation with its path."""

from __future__ import annotations

import copy
from typing import Any

import jsonschema_rs

from ..descriptor import AppDescriptor, Tool
from ..errors import InvalidParamsError, escape_pointer_token


class ArgumentValidator:
    """Compiles each tool's schema once (per catalog) and checks arguments against it."""

    def __init__(self) -> None:
        self._compiled: dict[int, Any] = {}

    def clear(self) -> None:
        self._compiled.clear()

    def _validator(self, tool: Tool) -> Any:
        key = id(tool)
        validator = self._compiled.get(key)
        if validator is None:
            validator = jsonschema_rs.Draft7Validator(tool.parameters, validate_formats=True)
            self._compiled[key] = validator
        return validator

    def prepare(self, app: AppDescriptor, tool: Tool, arguments: Any) -> dict[str, Any]:
        """The arguments to execute with; raises INVALID_PARAMS listing every violation."""
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            raise InvalidParamsError(
                app.id,
                tool.name,
                [{"path": "", "message": f"args must be an object, not {type(arguments).__name__}"}],
            )
        prepared: dict[str, Any] = with_defaults(tool.parameters, copy.deepcopy(arguments))
        violations = [
            {"path": _pointer(error.instance_path), "message": error.message}
            for error in self._validator(tool).iter_errors(prepared)
        ]
        violations += not_unicode(prepared)
        if violations:
            raise InvalidParamsError(app.id, tool.name, sorted(violations, key=lambda v: v["path"]))
        return prepared


def not_unicode(value: Any, path: str = "") -> list[dict[str, str]]:
    """Violations for text that is not valid Unicode: a lone surrogate (`"\\ud800"` in JSON).
    No app can receive it as text (UTF-8 cannot encode it), so no executor is handed one."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            bad = ord(value[exc.start])
            return [
                {"path": path, "message": f"text that is not valid Unicode (a lone surrogate U+{bad:04X})"}
            ]
        return []
    found: list[dict[str, str]] = []
    if isinstance(value, dict):
        for key, item in value.items():
            where = f"{path}/{escape_pointer_token(key)}"
            found += not_unicode(key, where) + not_unicode(item, where)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += not_unicode(item, f"{path}/{index}")
    return found


def _pointer(path: list[str | int]) -> str:
    return "".join("/" + escape_pointer_token(p) for p in path)


def with_defaults(schema: Any, value: Any) -> Any:
    """Fill `default`s of missing object properties, recursively through objects and arrays."""
    if not isinstance(schema, dict):
        return value
    if isinstance(value, dict):
        properties = schema.get("properties")
        if isinstance(properties, dict):
            for name, subschema in properties.items():
                if name not in value and isinstance(subschema, dict) and "default" in subschema:
                    value[name] = copy.deepcopy(subschema["default"])
                if name in value:
                    value[name] = with_defaults(subschema, value[name])
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [with_defaults(schema["items"], item) for item in value]
    return value
