"""The JSON Schema of the recommended dialect (C), for editors (`aai-gateway schema`).

Generated from the same raw model the gateway validates with, then tightened for editors:
unknown properties are flagged (the gateway warns about them), each execution type's required
settings are spelled out (and that only `mcp` may leave out `platform` and `tools`), and tool
parameters are checked against the Draft-07 meta-schema.
"""

from __future__ import annotations

from typing import Any

from .dialect_c import CDescriptor

SCHEMA_ID = "https://aai-gateway.dev/schema/aai.schema.json"
DRAFT7 = "http://json-schema.org/draft-07/schema#"

_REQUIRED_BY_TYPE: dict[str, dict[str, Any]] = {  # what `execution` of each type must hold
    "http": {"required": ["baseUrl"]},
    "stdio": {"required": ["command"]},
    "acp": {"required": ["start"]},
    "com": {"required": ["progId"]},
    "mcp": {
        "oneOf": [{"required": ["command"]}, {"required": ["url"]}],
        "dependencies": {"args": ["command"], "env": ["command"], "cwd": ["command"], "headers": ["url"]},
    },
}
_MCP_EXECUTION = {
    "required": ["execution"],
    "properties": {"execution": {"required": ["type"], "properties": {"type": {"const": "mcp"}}}},
}
_AUTH_SETTINGS = {
    "oauth2": "oauth2",
    "apiKey": "apiKey",
    "appCredential": "appCredential",
    "cookie": "cookie",
}
_DESCRIPTIONS: dict[tuple[str, str], str] = {
    ("CDescriptor", "schemaVersion"): 'AAI spec version, "1.0".',
    ("CDescriptor", "version"): "Descriptor version (semver MAJOR.MINOR.PATCH); see `aai-gateway diff`.",
    ("CDescriptor", "platform"): "Target platform of this file; mcp may leave it out (any desktop).",
    ("CDescriptor", "tools"): "The app's tools; mcp may leave them out (the server lists them).",
    ("CApp", "id"): "Reverse-DNS identifier, e.g. com.example.mail.",
    ("CApp", "name"): 'Names by BCP 47 tag, e.g. {"en": "Mail", "zh-CN": "邮件"}.',
    ("CApp", "defaultLang"): "Tag of the default name; must be a key of name.",
    ("CApp", "description"): "One English sentence for agents.",
    ("CApp", "aliases"): "Extra keywords agents match user intent against.",
    ("CExecution", "timeout"): "Execution timeout in milliseconds.",
    ("CExecution", "command"): "stdio, mcp: the program to start.",
    ("CExecution", "args"): "stdio, mcp: its arguments.",
    ("CExecution", "env"): (
        "stdio, acp, mcp: environment variables; for mcp a value may be "
        '{"secret": NAME} (OS keyring) or {"env": VARIABLE} (the gateway\'s environment).'
    ),
    ("CExecution", "cwd"): "mcp (with command): the absolute directory the server starts in.",
    ("CExecution", "url"): "mcp: a Streamable HTTP server (https://, or http:// to this computer).",
    ("CExecution", "headers"): (
        'mcp (with url): HTTP headers; a value may be {"secret": NAME} or {"env": VARIABLE}.'
    ),
    ("CSecretRef", "secret"): "Name of a secret in the OS keyring (aai-gateway auth set APP --secret NAME).",
    ("CEnvRef", "env"): "Name of a variable of the gateway's own environment.",
    ("CTool", "annotations"): "MCP tool annotations: hints shown in guides and consent questions.",
    ("CExecution", "bus"): "DBus bus: session (default) or system.",
    ("CTool", "parameters"): "JSON Schema Draft-07 of the arguments (an object schema).",
    ("CTool", "returns"): "JSON Schema Draft-07 of the result.",
    ("CToolExecution", "path"): "URL path appended to baseUrl; {param} placeholders are URL-encoded.",
}


def descriptor_json_schema() -> dict[str, Any]:
    schema = CDescriptor.model_json_schema(by_alias=True, ref_template="#/definitions/{model}")
    definitions: dict[str, Any] = schema.pop("$defs", {})
    definitions["CDescriptor"] = schema
    for name, definition in definitions.items():
        _tighten(name, definition)
    _require_type_settings(definitions["CExecution"])
    definitions["CDescriptor"]["allOf"] = [
        {"if": _MCP_EXECUTION, "then": {}, "else": {"required": ["platform", "tools"]}}
    ]
    _require_auth_settings(definitions["CAuth"])
    for key in ("parameters", "returns"):
        definitions["CTool"]["properties"][key] = {
            "$ref": DRAFT7,
            "description": _DESCRIPTIONS[("CTool", key)],
        }
    root = definitions.pop("CDescriptor")
    return {
        "$schema": DRAFT7,
        "$id": SCHEMA_ID,
        "title": "aai.json (AAI descriptor, camelCase dialect)",
        "description": "Describes one application's tools for AAI gateways.",
        **{k: v for k, v in root.items() if k not in ("title", "description")},
        "definitions": definitions,
    }


def _tighten(name: str, definition: dict[str, Any]) -> None:
    definition.pop("title", None)
    if definition.get("type") == "object" and "properties" in definition:
        definition["additionalProperties"] = False
        definition["patternProperties"] = {"^x-": {}, "^\\$(schema|comment)$": {"type": "string"}}
    for prop_name, prop in definition.get("properties", {}).items():
        prop.pop("title", None)
        prop.pop("default", None)
        description = _DESCRIPTIONS.get((name, prop_name))
        if description:
            prop["description"] = description


def _require_type_settings(execution: dict[str, Any]) -> None:
    execution["allOf"] = [
        {"if": {"properties": {"type": {"const": kind}}}, "then": settings}
        for kind, settings in _REQUIRED_BY_TYPE.items()
    ]


def _require_auth_settings(auth: dict[str, Any]) -> None:
    auth["allOf"] = [
        {"if": {"properties": {"type": {"const": kind}}}, "then": {"required": [key]}}
        for kind, key in _AUTH_SETTINGS.items()
    ]
