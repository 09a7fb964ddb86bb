"""Dialect-B Windows `com` action sequences, run against an object backend (docs/windows.md).

Pure: no COM here. A backend creates objects by ProgID and calls methods, gets and sets
properties on them; `PythonObjectBackend` does that with plain Python objects (tests, in-process
use), `com_backend_win.PyWin32Backend` with real COM objects.

Semantics:
- `create` (`progid`, `var`): a new object bound to `var`;
- `call` (`object`, `method`, optional `args`, optional `var`): the method's return value, bound
  to `var` when given;
- `get` (`object`, `property`, optional `var`) and `set` (`object`, `property`, `value`);
- `return` (`value`, or `object`/`var` naming a variable): the result; the sequence ends there.
- The result (`output_parser: last_result`) is the value of the last `create`/`call`/`get`/
  `return` that ran. A `return` value written in the descriptor as JSON text of an object or
  array (`"{\\"deleted\\":true}"`) is that JSON value; text that came from a parameter never is.

Substitution of `${param}` in `value` and `args` (nested lists/objects too) is one pass: a string
that is exactly one placeholder becomes the parameter's value with its type; placeholders inside
a longer string become the value's text (strings as they are, others as compact JSON). Values
are handed to the backend as data: never evaluated, never searched for placeholders again. A
missing optional parameter is `None` as a whole value (a `set` of it is skipped) and empty text
inside a string. Every sequence is checked before its first action runs.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any, Protocol

from ..descriptor.model import ComAction
from ..errors import AaiError, ComScriptError, ServiceUnavailableError, json_pointer
from .templates import (
    MISSING,
    PLACEHOLDER,
    WHOLE_PLACEHOLDER,
    lookup,
    placeholder_names,
    text_of,
    top_level_name,
)


class ObjectBackend(Protocol):
    """Creates objects by ProgID and works on them. Blocking; runs in one worker thread per sequence."""

    def create(self, prog_id: str) -> Any: ...

    def call(self, obj: Any, method: str, args: Sequence[Any]) -> Any: ...

    def get(self, obj: Any, prop: str) -> Any: ...

    def set(self, obj: Any, prop: str, value: Any) -> None: ...


class ProgIdNotRegisteredError(LookupError):
    """Raised by a backend's `create` when no class is registered under the ProgID."""

    def __init__(self, prog_id: str) -> None:
        super().__init__(prog_id)
        self.prog_id = prog_id


class AttributeAccess:
    """Methods and properties as plain attribute access (late-bound COM objects, Python objects)."""

    def call(self, obj: Any, method: str, args: Sequence[Any]) -> Any:
        return getattr(obj, method)(*args)

    def get(self, obj: Any, prop: str) -> Any:
        return getattr(obj, prop)

    def set(self, obj: Any, prop: str, value: Any) -> None:
        setattr(obj, prop, value)


@dataclass
class PythonObjectBackend(AttributeAccess):
    """ProgIDs mapped to factories of plain Python objects; methods and properties are attributes."""

    factories: Mapping[str, Callable[[], Any]]
    created: list[tuple[str, Any]] = field(default_factory=list)

    def create(self, prog_id: str) -> Any:
        factory = self.factories.get(prog_id)
        if factory is None:
            raise ProgIdNotRegisteredError(prog_id)
        obj = factory()
        self.created.append((prog_id, obj))
        return obj


_REQUIRED: dict[str, tuple[str, ...]] = {
    "create": ("progid", "var"),
    "call": ("object", "method"),
    "get": ("object", "property"),
    "set": ("object", "property"),
    "return": (),
}


@dataclass(frozen=True)
class ScriptContext:
    """What the interpreter needs besides the actions: who is running and what parameters exist."""

    app_id: str
    tool: str
    declared: Collection[str] = ()
    """Parameter names of the tool's schema; a placeholder must name one of them (or an argument)."""


def check_sequence(actions: Sequence[ComAction], arguments: Mapping[str, Any], ctx: ScriptContext) -> None:
    """Raises ComScriptError for the first action that cannot run: a missing field, a variable
    used before it is bound, a placeholder naming no parameter. No side effects."""
    if not actions:
        raise ComScriptError(ctx.app_id, ctx.tool, None, "the action sequence is empty")
    bound: list[str] = []
    for index, action in enumerate(actions):
        for name in _REQUIRED[action.action]:
            if getattr(action, name) in (None, ""):
                raise ComScriptError(
                    ctx.app_id, ctx.tool, index, f"{action.action!r} needs the field {name!r}"
                )
        if action.action == "return":
            _check_return(action, index, ctx)
        referenced = action.object if action.action != "return" else _return_variable(action)
        if referenced is not None and referenced not in bound:
            known = ", ".join(bound) or "none"
            raise ComScriptError(
                ctx.app_id,
                ctx.tool,
                index,
                f"unknown variable {referenced!r} ({action.action}); variables bound before it: {known}",
            )
        for template in (action.value, list(action.args)):
            for name in placeholder_names(template):
                if name not in arguments and top_level_name(name, arguments) not in ctx.declared:
                    raise ComScriptError(
                        ctx.app_id,
                        ctx.tool,
                        index,
                        f"unknown placeholder ${{{name}}}: the tool has no such parameter",
                    )
        if action.var is not None and action.action in ("create", "call", "get"):
            bound.append(action.var)


def run_sequence(
    actions: Sequence[ComAction],
    arguments: Mapping[str, Any],
    backend: ObjectBackend,
    ctx: ScriptContext,
    *,
    stop: threading.Event | None = None,
) -> Any:
    """Checks, then runs the actions in order; the JSON result (`last_result`). `stop` set (the
    call timed out) ends the sequence before its next action."""
    check_sequence(actions, arguments, ctx)
    variables: dict[str, Any] = {}
    result: Any = None
    result_index = 0
    try:
        for index, action in enumerate(actions):
            if stop is not None and stop.is_set():
                raise ComScriptError(ctx.app_id, ctx.tool, index, "stopped: the call timed out")
            if action.action == "return":
                return _return(action, arguments, variables, ctx, index)
            value = _run_one(
                action, arguments=arguments, variables=variables, backend=backend, ctx=ctx, index=index
            )
            if action.action != "set":  # a `set` has no value: the last result stands
                result, result_index = value, index
        return _to_json(result, ctx, result_index)
    finally:
        variables.clear()  # COM objects are released in the thread (apartment) that made them


def _run_one(
    action: ComAction,
    *,
    arguments: Mapping[str, Any],
    variables: dict[str, Any],
    backend: ObjectBackend,
    ctx: ScriptContext,
    index: int,
) -> Any:
    what = _describe(action)
    try:
        if action.action == "create":
            assert action.progid is not None
            value = backend.create(action.progid)
        elif action.action == "call":
            assert action.object is not None and action.method is not None
            args = [_arg(substitute_value(a, arguments)) for a in action.args]
            value = backend.call(variables[action.object], action.method, args)
        elif action.action == "get":
            assert action.object is not None and action.property is not None
            value = backend.get(variables[action.object], action.property)
        else:  # set
            assert action.object is not None and action.property is not None
            new = substitute_value(action.value, arguments)
            if new is not MISSING:
                backend.set(variables[action.object], action.property, new)
            return None
    except AaiError:
        raise
    except ProgIdNotRegisteredError as exc:
        raise ServiceUnavailableError(
            ctx.app_id,
            f"no COM class is registered as {exc.prog_id!r} (is the application installed?)",
            tool=ctx.tool,
            pointer=json_pointer("actions", index),
        ) from exc
    except Exception as exc:  # the app's own failure, reported with where it happened
        raise ComScriptError(
            ctx.app_id, ctx.tool, index, f"{what} failed: {_error_text(exc)}", error_type=type(exc).__name__
        ) from exc
    if action.var is not None:
        variables[action.var] = value
    return value


def _return(
    action: ComAction, arguments: Mapping[str, Any], variables: dict[str, Any], ctx: ScriptContext, index: int
) -> Any:
    variable = _return_variable(action)
    if variable is not None:
        return _to_json(variables[variable], ctx, index)
    value = substitute_value(action.value, arguments)
    if value is MISSING:
        return None
    literal = isinstance(action.value, str) and not placeholder_names(action.value)
    if literal and isinstance(value, str) and value.lstrip()[:1] in ("{", "["):
        try:  # JSON text written by the descriptor's author (the spec's Outlook example)
            return json.loads(value)
        except json.JSONDecodeError:
            pass
    return _to_json(value, ctx, index)


def _check_return(action: ComAction, index: int, ctx: ScriptContext) -> None:
    if action.object is not None and action.var is not None and action.object != action.var:
        raise ComScriptError(ctx.app_id, ctx.tool, index, "'return' names two variables (object and var)")
    if _return_variable(action) is not None and action.value is not None:
        raise ComScriptError(ctx.app_id, ctx.tool, index, "'return' has both a variable and a value")


def _return_variable(action: ComAction) -> str | None:
    return action.object if action.object is not None else action.var


def substitute_value(template: Any, arguments: Mapping[str, Any]) -> Any:
    """One pass of `${name}` substitution (module docstring); `MISSING` for a whole placeholder
    of an argument the caller left out."""
    if isinstance(template, str):
        whole = WHOLE_PLACEHOLDER.match(template)
        if whole is not None:
            return lookup(arguments, whole.group(1))

        def replace(match: Any) -> str:
            value = lookup(arguments, match.group(1))
            return "" if value is MISSING else text_of(value)

        return PLACEHOLDER.sub(replace, template)
    if isinstance(template, Mapping):
        return {k: _arg(substitute_value(v, arguments)) for k, v in template.items()}
    if isinstance(template, list | tuple):
        return [_arg(substitute_value(v, arguments)) for v in template]
    return template


def _arg(value: Any) -> Any:
    return None if value is MISSING else value


def _to_json(value: Any, ctx: ScriptContext, index: int) -> Any:
    if value is None or isinstance(value, str | bool | int | float):
        return value
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, list | tuple):
        return [_to_json(v, ctx, index) for v in value]
    if isinstance(value, Mapping):
        return {str(k): _to_json(v, ctx, index) for k, v in value.items()}
    raise ComScriptError(
        ctx.app_id,
        ctx.tool,
        index,
        f"the result is an object ({type(value).__name__}), not a value: end the sequence with a "
        "'get' of one of its properties or a 'return'",
    )


def _describe(action: ComAction) -> str:
    if action.action == "create":
        return f"create {action.progid}"
    member = action.method if action.action == "call" else action.property
    return f"{action.action} {action.object}.{member}"


def _error_text(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text if len(text) <= 500 else text[:500] + "…"
