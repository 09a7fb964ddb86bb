"""One operation's section of a guide: description, hints, parameters, returns and an example
call. Every part is bounded (descriptions, bullets, the example), so one section stays well
under a guide's bound whatever the descriptor holds.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ..descriptor.annotations import annotation_hints
from ..descriptor.model import Tool, ToolAnnotations
from .examples import example_arguments
from .fields import capped, parameter_lines, returns_summary
from .schema import MAX_DEPTH

ONE_LINE_CALL = 130  # longer example calls are spread over several lines
MAX_DESCRIPTION = 1_500  # characters of an operation's description in its section
MAX_EXAMPLE = 2_000  # characters of an example's arguments (as JSON)
SHORTENED_EXAMPLE = "(Example shortened to fit the guide: some nested values are left out.)"


def operation_section(
    tool: Tool, *, exec_tool: str, unavailable: str | None, same_returns: str, reference: str
) -> list[str]:
    """One tool's section; `same_returns` names an earlier tool whose returns are identical."""
    lines = [f"### {tool.name}", ""]
    if tool.description:
        lines += [capped(" ".join(tool.description.split()), MAX_DESCRIPTION), ""]
    lines += _annotation_lines(tool.annotations)
    if unavailable is not None:
        lines += [capped(f"> Not available on this machine: {' '.join(unavailable.split())}"), ""]
    params, overall = parameter_lines(tool.parameters)
    label = f"**Parameters** ({', '.join(overall)}):" if overall else "**Parameters**:"
    lines += [label if params else f"{label} none", ""]
    if params:
        lines += [*params, ""]
    if tool.returns is not None and same_returns != tool.name:
        lines += [f"**Returns**: same as {same_returns}.", ""]
    elif tool.returns is not None:
        head, fields = returns_summary(tool.returns)
        lines += [f"**Returns**: {head}", ""]
        if fields:
            lines += [*fields, ""]
    arguments, shortened = fitted(example_arguments(tool.parameters), MAX_EXAMPLE)
    call = {"app": reference, "tool": tool.name, "args": arguments}
    lines += ["**Example**:", "", "```", *call_text(exec_tool, call), "```", ""]
    if shortened:
        lines += [SHORTENED_EXAMPLE, ""]
    return lines


def _annotation_lines(annotations: ToolAnnotations | None) -> list[str]:
    """MCP's hints, as the app declares them; destructive and idempotent only mean something for
    a tool that is not read-only."""
    if annotations is None:
        return []
    lines = []
    if annotations.title and annotations.title.strip():
        lines += [capped(f"**Title**: {' '.join(annotations.title.split())}"), ""]
    hints = annotation_hints(annotations)
    if hints:
        lines += [f"**Hints** (as the app declares them): {'; '.join(hints)}.", ""]
    return lines


def call_text(exec_tool: str, call: dict[str, Any]) -> Sequence[str]:
    """One line when short; else one line per key of the call, and per argument if need be."""
    compact = f"{exec_tool}({call_json(call)})"
    if len(compact) <= ONE_LINE_CALL:
        return [compact]
    args = call["args"]
    args_line = f'  "args": {call_json(args)}'
    if len(args_line) <= ONE_LINE_CALL or not args:
        args_lines = [args_line]
    else:
        entries = [f"    {call_json(key)}: {call_json(value)}" for key, value in args.items()]
        args_lines = ['  "args": {', ",\n".join(entries), "  }"]
    head = [f"{exec_tool}({{", f'  "app": {call_json(call["app"])},', f'  "tool": {call_json(call["tool"])},']
    return [*head, *"\n".join(args_lines).splitlines(), "})"]


def call_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def fitted(arguments: dict[str, Any], max_chars: int) -> tuple[dict[str, Any], bool]:
    """`arguments`, or when their JSON is longer than `max_chars`, a shorter copy and True:
    nested values past some depth emptied (`{}`, `[]`), at the deepest depth that fits, and at
    worst only the first top-level properties that fit. A schema can make a valid example
    megabytes long (required properties nested through references); a shortened one is the
    best a bounded guide can show."""
    if _json_length(arguments) <= max_chars:
        return arguments, False
    for depth in range(MAX_DEPTH, 0, -1):
        pruned = _emptied_below(arguments, depth)
        if _json_length(pruned) <= max_chars:
            return pruned, True
    kept: dict[str, Any] = {}
    for key, value in _emptied_below(arguments, 1).items():
        if _json_length({**kept, key: value}) > max_chars:
            break
        kept[key] = value
    return kept, True


def _emptied_below(value: Any, depth: int) -> Any:
    if isinstance(value, dict):
        return {k: _emptied_below(v, depth - 1) for k, v in value.items()} if depth > 0 else {}
    if isinstance(value, list):
        return [_emptied_below(v, depth - 1) for v in value] if depth > 0 else []
    return value


def _json_length(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False))
