"""The canonical models `normalize` makes without validating them again (`prevalidated.py`) are
the models pydantic makes of the same values: the same fields, cleaned text, fresh defaults."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import pytest
from pydantic import BaseModel

from aai_gateway.descriptor import prevalidated
from aai_gateway.descriptor.model import (
    AppDescriptor,
    DbusCall,
    DbusChannel,
    HttpCall,
    HttpChannel,
    McpChannel,
    PlatformSection,
    Source,
    Tool,
    ToolAnnotations,
)
from aai_gateway.descriptor.names import LocalizedName

BUILDERS: list[tuple[Callable[..., BaseModel], type[BaseModel], frozenset[str]]] = [
    (prevalidated.tool, Tool, frozenset()),
    (prevalidated.http_call, HttpCall, frozenset({"kind", "body", "query_params", "output_parser"})),
    (prevalidated.dbus_call, DbusCall, frozenset({"kind"})),
    (prevalidated.source, Source, frozenset({"origin"})),
    (prevalidated.section, PlatformSection, frozenset()),
    (prevalidated.app, AppDescriptor, frozenset({"server_tools_read"})),
    (prevalidated.tool_annotations, ToolAnnotations, frozenset()),
    (prevalidated.localized_name, LocalizedName, frozenset()),
    (prevalidated.mcp_channel, McpChannel, frozenset({"type"})),
]
HIDDEN = "Reads\u202e items\x1b[31m now\u200b\r\nand\ttabs"


@pytest.mark.parametrize(("builder", "model", "defaulted"), BUILDERS)
def test_a_builder_takes_every_field_its_model_does_not_default_here(
    builder: Callable[..., BaseModel], model: type[BaseModel], defaulted: frozenset[str]
) -> None:
    assert set(inspect.signature(builder).parameters) == set(model.model_fields) - defaulted


CONSTRAINTS = frozenset(
    {"pattern", "max_length", "min_length", "ge", "gt", "le", "lt", "multiple_of", "strict"}
)
OWN_CHECKS: dict[type[BaseModel], tuple[set[str], set[str]]] = {
    Tool: ({"shown_text"}, {"strict"}),  # the description's ShownText; strict: types the raw model made
    HttpCall: (set(), set()),
    DbusCall: (set(), set()),
    Source: (set(), set()),
    PlatformSection: (set(), {"strict"}),
    AppDescriptor: ({"one_line_text"}, set()),  # OneLine, of the description and the aliases
    ToolAnnotations: ({"one_line_text"}, set()),  # OneLine, of the title
    LocalizedName: ({"one_line_text"}, set()),  # OneLine, of each name
    McpChannel: (set(), {"strict"}),  # strict: types the raw model made; the transport rule: model_post_init
}


def own_checks(model: type[BaseModel]) -> tuple[set[str], set[str]]:
    """The validator functions and constraints in the schemas of `model`'s own fields (not of
    the models its fields hold: the builders take those as made)."""
    schema: Any = model.__pydantic_core_schema__
    if schema["type"] == "definitions":
        schema = schema["schema"]
    functions: set[str] = set()
    constraints: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, list):
            for item in node:
                walk(item)
        elif isinstance(node, dict):
            if node.get("type") in ("model", "definition-ref"):
                return
            if str(node.get("type", "")).startswith("function-"):
                functions.add(getattr(node["function"]["function"], "__qualname__", "?"))
            constraints.update(CONSTRAINTS & node.keys())
            for key, value in node.items():
                if key not in ("function", "metadata", "serialization"):
                    walk(value)

    walk(schema["schema"]["fields"])
    return functions, constraints


@pytest.mark.parametrize("model", list(OWN_CHECKS))
def test_the_fields_check_nothing_but_what_the_builders_apply(model: type[BaseModel]) -> None:
    """A constraint or an `Annotated` validator added to a field of one of these models must be
    applied by its builder too: then change OWN_CHECKS with it."""
    assert own_checks(model) == OWN_CHECKS[model]


@pytest.mark.parametrize(
    "model",
    [
        Tool,
        HttpCall,
        DbusCall,
        Source,
        PlatformSection,
        AppDescriptor,
        ToolAnnotations,
        LocalizedName,
        McpChannel,
    ],
)
def test_the_models_validate_nothing_the_builders_would_skip(model: type[BaseModel]) -> None:
    """A validator added to one of these models must be applied by its builder too: then change
    this test with it. (McpChannel's `model_post_init` is called by its builder.)"""
    decorators = model.__pydantic_decorators__
    assert not (
        decorators.validators
        or decorators.field_validators
        or decorators.root_validators
        or decorators.model_validators
    )
    assert model.__pydantic_post_init__ == ("model_post_init" if model is McpChannel else None)


def _both(builder: Callable[..., BaseModel], model: type[BaseModel], **fields: Any) -> None:
    built, validated = builder(**fields), model(**fields)
    assert type(built) is model
    assert built == validated
    assert built.model_dump() == validated.model_dump()
    assert built.model_dump_json() == validated.model_dump_json()


def test_a_tool_is_the_model_pydantic_makes_and_its_description_is_cleaned() -> None:
    channel = HttpChannel(base_url="https://api.example.com")
    fields: dict[str, Any] = {
        "name": "search",
        "description": HIDDEN,
        "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
        "returns": None,
        "annotations": ToolAnnotations(title="Search"),
        "channel": channel,
        "call": prevalidated.http_call(path="/s", method="GET", headers={"X-A": "1"}),
        "timeout_ms": 5000,
    }
    _both(prevalidated.tool, Tool, **fields)
    assert "\u202e" not in prevalidated.tool(**fields).description


def test_calls_are_the_models_pydantic_makes_with_defaults_of_their_own() -> None:
    _both(prevalidated.http_call, HttpCall, path=None, method=None, headers={})
    _both(prevalidated.dbus_call, DbusCall, method="Call", output_parser="json", signature="s", args=("q",))
    one, two = (prevalidated.http_call(path=None, method=None, headers={}) for _ in range(2))
    assert one.query_params is not two.query_params


def test_an_app_is_the_model_pydantic_makes_with_its_texts_on_one_line() -> None:
    channel = DbusChannel(
        service="org.example.App", object_path="/org/example/App", interface="org.example.App"
    )
    tool = prevalidated.tool(
        name="t",
        description="d",
        parameters={"type": "object"},
        returns=None,
        annotations=None,
        channel=channel,
        call=None,
        timeout_ms=None,
    )
    section = prevalidated.section(platform="linux", declared_type="dbus", channel=channel, tools=(tool,))
    _both(
        prevalidated.section,
        PlatformSection,
        platform="linux",
        declared_type="dbus",
        channel=channel,
        tools=(tool,),
    )
    fields: dict[str, Any] = {
        "dialect": "C",
        "schema_version": "1.0",
        "version": "1.0.0",
        "declared_version": "1.0.0",
        "id": "org.example.App",
        "names": LocalizedName(names={"en": "App"}, default_lang="en"),
        "description": HIDDEN,
        "aliases": ("one\nline", HIDDEN),
        "sections": (section,),
        "platform": "linux",
        "tools": (tool,),
        "tools_declared": True,
        "source": prevalidated.source(kind="file", location="/apps/aai.json"),
    }
    _both(prevalidated.app, AppDescriptor, **fields)
    _both(prevalidated.source, Source, kind="bundled", location="/opt/aai.json")
    made = prevalidated.source(kind="file", location="/a")
    assert made.binding == Source(kind="file", location="/a").binding
    built = prevalidated.app(**fields)
    assert "\n" not in built.description and all("\n" not in alias for alias in built.aliases)


def test_annotations_and_names_are_the_models_pydantic_makes_with_their_texts_on_one_line() -> None:
    _both(
        prevalidated.tool_annotations,
        ToolAnnotations,
        title=HIDDEN,
        read_only_hint=True,
        destructive_hint=None,
        idempotent_hint=False,
        open_world_hint=None,
    )
    _both(prevalidated.tool_annotations, ToolAnnotations, **dict.fromkeys(ToolAnnotations.model_fields))
    names = {"en": HIDDEN, "zh-CN": "提醒事项"}
    _both(prevalidated.localized_name, LocalizedName, names=names, default_lang="en")
    built = prevalidated.localized_name(names=names, default_lang="en")
    assert "\n" not in built.names["en"] and built.names is not names


def test_an_mcp_channel_is_the_model_pydantic_makes_and_keeps_its_transport_rule() -> None:
    stdio: dict[str, Any] = {
        "command": "npx",
        "args": ("-y", "server"),
        "env": {"A": "1"},
        "cwd": None,
        "url": None,
        "headers": {},
        "timeout_ms": 3000,
    }
    _both(prevalidated.mcp_channel, McpChannel, **stdio)
    _both(
        prevalidated.mcp_channel,
        McpChannel,
        **{**stdio, "command": None, "args": (), "env": {}, "url": "https://m.example/mcp"},
    )
    with pytest.raises(ValueError, match="either a command or a url"):
        prevalidated.mcp_channel(**{**stdio, "url": "https://m.example/mcp"})
