"""Semantic checks for dialect B: every platform section is checked, not only the host's."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..errors import Problem, json_pointer
from . import checks
from .applescript_syntax import AmbiguousTemplateError, applescript_pieces
from .dbus_signature import INTEGER_RANGES, SignatureError, complete_types, describe
from .dialect_b import (
    BAndroidTool,
    BAuth,
    BComAction,
    BDescriptor,
    BIos,
    BIosTool,
    BLinux,
    BLinuxTool,
    BMacos,
    BMacosTool,
    BTool,
    BWeb,
    BWebTool,
    BWindowsTool,
    PlatformSectionRaw,
    present_sections,
    timeout_unit_ms,
)
from .quoting import listed, quoted
from .shown_text import check_app_texts, check_shown_text


def check(doc: BDescriptor) -> Iterator[Problem]:
    yield from checks.check_app_id(doc.app_id, "/appId")
    yield from checks.check_version(doc.version, "/version", allow_two_part=True)
    yield from checks.check_pipe_names(doc.name, "/name")
    yield from check_app_texts("", doc.name, doc.description, doc.aliases)
    sections = present_sections(doc)
    if not sections:
        yield Problem(
            "/platforms", "platforms declares no platform; add at least one of macos, windows, linux, web"
        )
    for platform, section in sections:
        yield from _check_section(section, json_pointer("platforms", platform))


def _check_section(section: PlatformSectionRaw, pointer: str) -> Iterator[Problem]:
    tools: list[BTool] = list(section.tools)
    yield from checks.check_tool_names((t.name, f"{pointer}/tools/{i}") for i, t in enumerate(tools))
    if type(section) is BLinux:
        yield from checks.check_dbus_names(
            section.service,
            section.object,
            section.interface,
            pointer,
            keys=("service", "object", "interface"),
        )
    if type(section) is BWeb:
        yield from checks.check_url(section.base_url, f"{pointer}/base_url", what="base_url")
        yield from checks.check_headers(section.default_headers or {}, f"{pointer}/default_headers")
        if section.auth is not None:
            yield from _check_auth(section.auth, f"{pointer}/auth")
    for index, tool in enumerate(tools):
        yield from _check_tool(section, tool, f"{pointer}/tools/{index}")


def _check_auth(auth: BAuth, pointer: str) -> Iterator[Problem]:
    if auth.type == "oauth2":
        for key in ("auth_url", "token_url"):
            url = getattr(auth, key)
            if url is None:
                yield Problem(f"{pointer}/{key}", f"auth type 'oauth2' needs {key}")
            else:
                yield from checks.check_url(url, f"{pointer}/{key}", what=key)
    elif auth.type == "api_key" and auth.key_name is None:
        yield Problem(
            f"{pointer}/key_name", "auth type 'api_key' needs key_name (the header or query parameter name)"
        )
    elif auth.type == "api_key" and (auth.key_placement or auth.token_placement or "header") == "header":
        assert auth.key_name is not None
        yield from checks.check_header_name(auth.key_name, f"{pointer}/key_name")
    if auth.token_prefix is not None:
        yield from checks.check_header_value(auth.token_prefix, f"{pointer}/token_prefix")
    ignored = {
        "oauth2": ("env_var", "key_name", "key_placement"),
        "api_key": ("auth_url", "token_url", "scopes"),
        "bearer": ("auth_url", "token_url", "scopes", "key_name", "key_placement"),
    }[auth.type]
    if auth.type == "bearer" and auth.token_placement == "query":  # noqa: S105 (a location)
        ignored += ("token_prefix",)
    for key in ignored:
        if getattr(auth, key) is not None:
            yield Problem(f"{pointer}/{key}", f"{key} is ignored for auth type {auth.type!r}", "warning")


def _check_tool(section: PlatformSectionRaw, tool: BTool, pointer: str) -> Iterator[Problem]:
    yield from check_shown_text(tool.description, f"{pointer}/description", "description")
    if not tool.description:
        yield Problem(
            f"{pointer}/description", "tool has no description; agents choose tools by it", "warning"
        )
    yield from checks.check_schema(
        tool.parameters, f"{pointer}/parameters", what="parameters", must_be_object=True
    )
    if tool.returns is not None:
        yield from checks.check_schema(
            tool.returns, f"{pointer}/returns", what="returns", must_be_object=False
        )
    yield from checks.check_timeout(tool.timeout, f"{pointer}/timeout", unit_ms=timeout_unit_ms(section))
    templates: list[tuple[object, str]] = []
    if type(tool) is BMacosTool:
        templates.append((tool.script, "script"))
        if type(section) is BMacos and section.automation == "applescript":
            yield from _check_applescript_syntax(tool.script, f"{pointer}/script")
    elif type(tool) is BWindowsTool:
        yield from _check_com_actions(tool.script, f"{pointer}/script")
        for i, action in enumerate(tool.script):
            templates += [(action.value, f"script/{i}/value"), (action.args, f"script/{i}/args")]
    elif type(tool) is BLinuxTool:
        yield from checks.check_dbus_member(tool.method, f"{pointer}/method")
        yield from _check_dbus_arguments(tool, pointer)
    elif type(tool) is BAndroidTool:
        templates.append((tool.extras, "extras"))
        if tool.result_type == "content_provider" and not tool.result_uri:
            yield Problem(f"{pointer}/result_uri", "result_type 'content_provider' needs result_uri")
    elif type(tool) is BIosTool:
        templates.append((tool.url_template, "url_template"))
        if type(section) is BIos and not tool.url_template.lower().startswith(section.scheme.lower() + ":"):
            yield Problem(
                f"{pointer}/url_template",
                f"url_template does not use the scheme {quoted(section.scheme)}",
                "warning",
            )
        if tool.result_type == "app_group" and not tool.app_group_id:
            yield Problem(f"{pointer}/app_group_id", "result_type 'app_group' needs app_group_id")
    elif type(tool) is BWebTool:
        templates += [(tool.body, "body"), (tool.query_params, "query_params"), (tool.headers, "headers")]
        yield from checks.check_headers(tool.headers or {}, f"{pointer}/headers")
        yield from checks.check_placeholders(
            tool.endpoint, f"{pointer}/endpoint", checks.property_names(tool.parameters), path_style=True
        )
    known = checks.property_names(tool.parameters)
    for template, key in templates:
        if template is not None:
            yield from checks.check_placeholders(template, f"{pointer}/{key}", known)


def _check_applescript_syntax(script: str, pointer: str) -> Iterator[Problem]:
    """The renderer refuses a template whose reading is in doubt (a block comment whose end is
    unclear, an unknown escape inside `|…|`, curly quotes...); say so before any call."""
    try:
        applescript_pieces(script)
    except AmbiguousTemplateError as exc:
        yield Problem(pointer, str(exc))


def _json_types_for(type_code: str) -> frozenset[str] | None:
    """The JSON types a parameter passed as this DBus type may have (None: any)."""
    if type_code == "v":
        return None
    if type_code.startswith("a{"):
        return frozenset({"object"})
    if type_code[0] in "a(":
        return frozenset({"array"})
    if type_code in INTEGER_RANGES:
        return frozenset({"integer", "number"})
    return {
        "s": frozenset({"string"}),
        "o": frozenset({"string"}),
        "g": frozenset({"string"}),
        "b": frozenset({"boolean"}),
        "d": frozenset({"number", "integer"}),
    }.get(type_code, frozenset())


def _check_dbus_arguments(tool: BLinuxTool, pointer: str) -> Iterator[Problem]:
    """`signature` is a DBus signature and `args` names one declared parameter per complete type."""
    if tool.signature is None:
        if tool.args is not None:
            yield Problem(
                f"{pointer}/args",
                'args needs signature: the DBus types of the arguments, e.g. "signature": "ss"',
            )
        return
    try:
        types = complete_types(tool.signature)
    except SignatureError as exc:
        yield Problem(f"{pointer}/signature", f"{quoted(tool.signature)} is not a DBus signature: {exc}")
        return
    if "h" in tool.signature:
        yield Problem(
            f"{pointer}/signature",
            f"{quoted(tool.signature)} holds a unix file descriptor ('h'), which the gateway cannot pass",
        )
        return
    names = tool.args or []
    if len(names) != len(types):
        yield Problem(
            f"{pointer}/args" if tool.args is not None else f"{pointer}/signature",
            f"signature {quoted(tool.signature)} takes {len(types)} argument(s) but args names {len(names)}; "
            "args lists the parameter passed for each complete type, in order",
        )
    properties = tool.parameters.get("properties")
    declared: dict[str, Any] = properties if isinstance(properties, dict) else {}
    required = tool.parameters.get("required")
    required_names = set(required) if isinstance(required, list) else set()
    for index, (name, type_code) in enumerate(zip(names, types, strict=False)):
        where = f"{pointer}/args/{index}"
        if name not in declared:
            known = listed(sorted(declared)) or "none"
            yield Problem(where, f"{quoted(name)} is not a parameter of this tool (parameters: {known})")
            continue
        schema = declared[name]
        if not isinstance(schema, dict):
            continue
        allowed = _json_types_for(type_code)
        json_type = schema.get("type")
        json_types = {json_type} if isinstance(json_type, str) else set(json_type or ())
        if allowed is not None and json_types and not json_types & allowed:
            yield Problem(
                where,
                f"parameter {quoted(name)} is declared as {'/'.join(sorted(json_types))} but the signature "
                f"passes it as {type_code!r} ({describe(type_code)})",
            )
        if name not in required_names and "default" not in schema:
            yield Problem(
                where,
                f"parameter {quoted(name)} is optional but DBus needs a value for every argument: make it "
                "required or give it a default",
                "warning",
            )


_NEEDS: dict[str, tuple[str, ...]] = {
    "create": ("var", "progid"),
    "call": ("object", "method"),
    "set": ("object", "property"),
    "get": ("object", "property"),
    "return": (),
}
_USES: dict[str, frozenset[str]] = {
    "create": frozenset({"var", "progid"}),
    "call": frozenset({"var", "object", "method", "args"}),
    "set": frozenset({"object", "property", "value"}),
    "get": frozenset({"var", "object", "property"}),
    "return": frozenset({"value"}),
}


def _check_com_actions(actions: list[BComAction], pointer: str) -> Iterator[Problem]:
    """Each action has the fields its kind needs, and only uses variables set by earlier actions."""
    defined: set[str] = set()
    for index, action in enumerate(actions):
        where = f"{pointer}/{index}"
        for key in _NEEDS[action.action]:
            if getattr(action, key) is None:
                yield Problem(f"{where}/{key}", f"a {action.action!r} action needs {key}")
        for key in sorted(action.model_fields_set - _USES[action.action] - {"action"}):
            yield Problem(f"{where}/{key}", f"{key} is ignored by a {action.action!r} action", "warning")
        if action.action == "set" and "value" not in action.model_fields_set:
            yield Problem(f"{where}/value", "a 'set' action needs value")
        if action.object is not None and action.object not in defined:
            known = listed(sorted(defined)) or "none yet"
            yield Problem(
                f"{where}/object",
                f"object {quoted(action.object)} is used before an action stores it (defined: {known})",
            )
        if action.var is not None:
            defined.add(action.var)
