"""An MCP server's own tools (its `tools/list`) as canonical tools of its app.

An `mcp` descriptor without `tools` leaves them to its server (`AppDescriptor.tools_declared` is
false). What the server lists is held to the rules a descriptor's tools are held to, because a
server is not trusted more than a file: a name must be a dialect-C tool name, `inputSchema` and
`outputSchema` pass the same schema checks as `parameters` and `returns` (Draft-07, no remote
references, bounded cost), descriptions lose what a reader cannot see and are cut to
`MAX_DESCRIPTION_CHARS`, and only the known annotations of the right type are kept. A tool that
breaks a rule is left out with a problem naming its index in the server's list (`/tools/3/name`);
the app and its other tools stay. The list itself is bounded (`mcp_wire`): at most `MAX_TOOLS`
tools and `MAX_TOOLS_BYTES` of JSON.

MCP defaults a schema without `$schema` to JSON Schema 2020-12; the gateway checks arguments by
Draft-07's rules, which agree on everything an argument schema usually says, so a `$schema` of
2020-12 or 2019-09 is dropped and the schema checked as Draft-07 (the server checks the
arguments again by its own rules). Each tool is bound to the app's `McpChannel`, with no per-tool
call, exactly as a tool an `mcp` descriptor declares (`dialect_c._tool`).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Final

import jsonschema_rs

from ..errors import Problem, json_pointer
from .checks import check_schema, check_tool_names, refuse_remote
from .mcp_wire import (
    MAX_TOOL_BYTES,
    MAX_TOOLS,
    MAX_TOOLS_BYTES,
    OMITTED,
    compact_size,
    entry_problem,
)
from .model import AppDescriptor, McpChannel, Tool, ToolAnnotations
from .quoting import clip, quoted
from .shown_text import visible_text

MAX_DESCRIPTION_CHARS: Final = 4_096
MAX_TITLE_CHARS: Final = 200
NEWER_SCHEMA_DIALECTS: Final = frozenset(
    {
        "https://json-schema.org/draft/2020-12/schema",
        "https://json-schema.org/draft/2019-09/schema",
        "http://json-schema.org/draft/2020-12/schema",
        "http://json-schema.org/draft/2019-09/schema",
    }
)
_ANNOTATIONS: Final = {
    "title": "title",
    "readOnlyHint": "read_only_hint",
    "destructiveHint": "destructive_hint",
    "idempotentHint": "idempotent_hint",
    "openWorldHint": "open_world_hint",
}
_LEFT_OUT: Final = "; the tool is left out"


@dataclass(frozen=True)
class ServerTools:
    """The tools a server listed that the gateway takes, and every problem with the others."""

    tools: tuple[Tool, ...]
    problems: tuple[Problem, ...]


def convert(wire: Any, channel: McpChannel, *, listed: int | None = None) -> ServerTools:
    """The canonical tools of a server's `tools/list` result (`wire`: the list of tool objects,
    every page). `listed`: how many tools the server listed, when `wire` holds only the first of
    them (a snapshot keeps at most `MAX_TOOLS`, `MAX_TOOLS_BYTES` in all)."""
    if not isinstance(wire, list):
        return ServerTools((), (Problem("/tools", f"the tool list is {_kind(wire)}, not an array"),))
    problems: list[Problem] = []
    candidates: list[tuple[int, dict[str, Any]]] = []
    total = 0
    considered = wire[:MAX_TOOLS]
    taken = len(considered)
    for index, entry in enumerate(considered):
        size = _size_problem(entry, index, problems)
        if size is None:
            continue
        if total + size > MAX_TOOLS_BYTES:
            taken = index
            break
        total += size
        candidates.append((index, entry))
    listed = max(listed or 0, len(wire))
    if listed > taken:
        # past MAX_TOOLS a server's pages are read no further (`UpstreamSession.list_tools`): the
        # count read is then not how many the server has
        how_many, which = (str(listed), f"the {listed - taken}")
        if listed > MAX_TOOLS:
            how_many, which = f"more than {MAX_TOOLS}", "those"
        problems.append(
            Problem(
                "/tools",
                f"the server listed {how_many} tools; the gateway takes at most the first {MAX_TOOLS}, "
                f"{MAX_TOOLS_BYTES} bytes of JSON in all: {which} from tool {taken} on are left out",
            )
        )
    named = [(index, entry) for index, entry in candidates if _has_name(entry, index, problems)]
    name_problems: dict[str, Problem] = {}
    for problem in check_tool_names((entry["name"], json_pointer("tools", index)) for index, entry in named):
        name_problems.setdefault(problem.pointer.rsplit("/", 1)[0], problem)
    tools: list[Tool] = []
    for index, entry in named:
        pointer = json_pointer("tools", index)
        found = name_problems.get(pointer)
        if found is not None:
            problems.append(Problem(found.pointer, found.message + _LEFT_OUT))
            continue
        tool_problems = list(_tool_problems(entry, pointer))
        problems += tool_problems
        if not any(p.severity == "error" for p in tool_problems):
            tools.append(_tool(entry, channel))
    return ServerTools(tuple(tools), tuple(sorted(problems, key=_in_list_order)))


def with_server_tools(
    app: AppDescriptor, wire: Any, *, listed: int | None = None
) -> tuple[AppDescriptor, ServerTools]:
    """`app` (an `mcp` descriptor that leaves its tools to its server) with the server's tools
    in every platform section; its tools on this host are those of its active section."""
    channel = app.sections[0].channel if app.sections else None
    if app.tools_declared or not isinstance(channel, McpChannel):
        raise ValueError(f"{app.id} declares its tools itself: a server's tools do not replace them")
    taken = convert(wire, channel, listed=listed)
    # Every section runs the one server: its tools are the same objects in each.
    sections = tuple(section.model_copy(update={"tools": taken.tools}) for section in app.sections)
    active = next((s for s in sections if s.platform == app.platform), None)
    tools = active.tools if active else ()
    updated = app.model_copy(update={"sections": sections, "tools": tools, "server_tools_read": True})
    return updated, taken


SERVER_PROBE: Final = "tools/list"


def mcp_channel(app: AppDescriptor) -> McpChannel | None:
    """The MCP server an app runs on (every section of an `mcp` descriptor has the same one)."""
    for section in app.sections:
        if isinstance(section.channel, McpChannel):
            return section.channel
    return None


def server_probe(app: AppDescriptor) -> Tool | None:
    """A stand-in tool of `app`'s MCP server on this host, to ask an executor whether the server
    can run here before any of its tools is known; None when `app` has no such server here."""
    section = app.section(app.platform) if app.platform is not None else None
    if section is None or not isinstance(section.channel, McpChannel):
        return None
    return Tool(name=SERVER_PROBE, parameters={"type": "object"}, channel=section.channel)


def without_server_tools(app: AppDescriptor) -> AppDescriptor:
    """`app` as its descriptor declares it, before its server's tools are known."""
    if app.tools_declared:
        return app
    sections = tuple(section.model_copy(update={"tools": ()}) for section in app.sections)
    return app.model_copy(update={"sections": sections, "tools": (), "server_tools_read": False})


# --------------------------------------------------------------------------- one tool


def _size_problem(entry: Any, index: int, problems: list[Problem]) -> int | None:
    """The entry's size in bytes of JSON, or None (with a problem) when it cannot be a tool."""
    pointer = json_pointer("tools", index)
    if isinstance(entry, dict) and OMITTED in entry:
        kept_why = entry[OMITTED] if isinstance(entry[OMITTED], str) else "could not be kept"
        problems.append(Problem(pointer, f"tool {index}{_named(entry)} {clip(kept_why, 300)}{_LEFT_OUT}"))
        return None
    if not isinstance(entry, dict):
        problems.append(Problem(pointer, f"tool {index} is {_kind(entry)}, not a tool object{_LEFT_OUT}"))
        return None
    why = entry_problem(entry)
    size = compact_size(entry) if why is None else 0
    if why is None and size > MAX_TOOL_BYTES:
        why = f"is {size} bytes of JSON; a tool may have at most {MAX_TOOL_BYTES}"
    if why is not None:
        problems.append(Problem(pointer, f"tool {index}{_named(entry)} {why}{_LEFT_OUT}"))
        return None
    return size


def _has_name(entry: dict[str, Any], index: int, problems: list[Problem]) -> bool:
    if isinstance(entry.get("name"), str):
        return True
    problems.append(
        Problem(
            json_pointer("tools", index, "name"),
            f"tool {index} has no name: 'name' is {_kind(entry.get('name'))}, not a string{_LEFT_OUT}",
        )
    )
    return False


def _tool_problems(entry: dict[str, Any], pointer: str) -> Iterator[Problem]:
    name = entry["name"]
    if "inputSchema" not in entry:
        yield Problem(f"{pointer}/inputSchema", f"tool {quoted(name)} has no inputSchema{_LEFT_OUT}")
    for key, what, must_be_object in (
        ("inputSchema", "inputSchema", True),
        ("outputSchema", "outputSchema", False),
    ):
        if key in entry and not (key == "outputSchema" and entry[key] is None):
            for problem in check_schema(
                _draft7(entry[key]), f"{pointer}/{key}", what=what, must_be_object=must_be_object
            ):
                yield Problem(problem.pointer, f"tool {quoted(name)}: {problem.message}{_LEFT_OUT}")
    for key, limit, one_line in (
        ("description", MAX_DESCRIPTION_CHARS, False),
        ("title", MAX_TITLE_CHARS, True),
    ):
        value = entry.get(key)
        if value is not None and not isinstance(value, str):
            yield Problem(
                f"{pointer}/{key}", f"{key} is {_kind(value)}, not a string; it is ignored", "warning"
            )
        elif isinstance(value, str):
            for change in visible_text(value, max_chars=limit, one_line=one_line)[1]:
                yield Problem(f"{pointer}/{key}", f"{key} of tool {quoted(name)}: {change}", "warning")
    yield from _annotation_problems(entry.get("annotations"), f"{pointer}/annotations")


def _annotation_problems(raw: Any, pointer: str) -> Iterator[Problem]:
    if raw is None:
        return
    if not isinstance(raw, dict):
        yield Problem(pointer, f"annotations are {_kind(raw)}, not an object; they are ignored", "warning")
        return
    for key in _ANNOTATIONS:
        value = raw.get(key)
        wanted = str if key == "title" else bool
        if value is not None and not isinstance(value, wanted):
            yield Problem(
                f"{pointer}/{key}",
                f"{key} is {_kind(value)}, not a {'string' if wanted is str else 'boolean'}; it is ignored",
                "warning",
            )


def _tool(entry: dict[str, Any], channel: McpChannel) -> Tool:
    description = entry.get("description")
    output = entry.get("outputSchema")
    return Tool(
        name=entry["name"],
        description=visible_text(description, max_chars=MAX_DESCRIPTION_CHARS)[0]
        if isinstance(description, str)
        else "",
        parameters=_draft7(entry["inputSchema"]),
        returns=_draft7(output) if isinstance(output, dict) else None,
        annotations=_annotations(entry.get("annotations"), entry.get("title")),
        channel=channel,
    )


def _annotations(raw: Any, tool_title: Any) -> ToolAnnotations | None:
    """The known annotations of the right type; the tool's own `title` when they name none."""
    fields: dict[str, Any] = {}
    for key, field in _ANNOTATIONS.items():
        value = raw.get(key) if isinstance(raw, dict) else None
        if isinstance(value, str if key == "title" else bool):
            fields[field] = value
    title = fields.get("title", tool_title)
    if isinstance(title, str):
        fields["title"] = visible_text(title, max_chars=MAX_TITLE_CHARS, one_line=True)[0] or None
    else:
        fields.pop("title", None)
    present = {key: value for key, value in fields.items() if value is not None}
    return ToolAnnotations(**present) if present else None


def structured_content_problem(output_schema: dict[str, Any], content: Any) -> str | None:
    """Why a tool's structured content does not match its `outputSchema` (the first violation),
    or None. The schema must pass the checks of a listed tool (cost, compile, no remote `$ref`);
    one that does not is the problem. jsonschema-rs checks in time linear in `content` whatever
    the schema's patterns (Python's `re` backtracks: `^(a+)+$` takes hours on 40 characters)."""
    check = _output_check(json.dumps(_draft7(output_schema), sort_keys=True))
    if isinstance(check, str):
        return check
    error = next(iter(check.iter_errors(content)), None)
    if error is None:
        return None
    where = json_pointer(*error.instance_path)
    return f"{where}: {error.message}" if where else error.message


@functools.lru_cache(maxsize=64)
def _output_check(schema_json: str) -> jsonschema_rs.Validator | str:
    """The compiled validator of an output schema (as JSON), or why it cannot be used."""
    schema = json.loads(schema_json)
    refused = check_schema(schema, "", what="outputSchema", must_be_object=False)
    if refused:
        return f"its outputSchema cannot be used ({refused[0].message})"
    return jsonschema_rs.Draft7Validator(schema, retriever=refuse_remote)


def _draft7(schema: Any) -> Any:
    """`schema` without a `$schema` that names JSON Schema 2020-12 or 2019-09 (see module doc)."""
    if isinstance(schema, dict) and schema.get("$schema") in NEWER_SCHEMA_DIALECTS:
        return {key: value for key, value in schema.items() if key != "$schema"}
    return schema


# --------------------------------------------------------------------------- wording


def _named(entry: Any) -> str:
    name = entry.get("name") if isinstance(entry, dict) else None
    return f" ({quoted(name)})" if isinstance(name, str) else ""


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    kinds: dict[type, str] = {
        bool: "a boolean",
        int: "a number",
        float: "a number",
        str: "a string",
        list: "an array",
        dict: "an object",
    }
    return kinds.get(type(value), f"a {type(value).__name__}")


def _in_list_order(problem: Problem) -> tuple[int, str]:
    parts = problem.pointer.split("/")
    return (int(parts[2]) if len(parts) > 2 and parts[2].isdigit() else -1, problem.pointer)
