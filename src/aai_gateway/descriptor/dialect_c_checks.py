"""Semantic checks for dialect C: what the strict types cannot say."""

from __future__ import annotations

import typing
from collections.abc import Iterator

from ..errors import Problem, json_pointer
from . import checks, dialect_c_mcp
from .dialect_c import (
    CDescriptor,
    CExecution,
    CExecutionType,
    CTool,
    execution_type,
)
from .platforms import ExecutionType
from .quoting import listed, quoted
from .shown_text import check_app_texts, check_shown_text

_TYPE_FIELDS: dict[str, tuple[str, ...]] = {
    "http": ("baseUrl", "defaultHeaders"),
    "stdio": ("command", "args", "env"),
    "acp": ("start", "env"),
    "apple-events": ("bundleId", "eventClass", "eventId"),
    "dbus": ("service", "objectPath", "interface", "bus"),
    "com": ("progId",),
    "mcp": ("command", "args", "env", "cwd", "url", "headers"),
}
_AUTH_KEYS: dict[str, str] = {
    "oauth2": "oauth2",
    "apiKey": "api_key",
    "appCredential": "app_credential",
    "cookie": "cookie",
}


def check(doc: CDescriptor) -> Iterator[Problem]:
    yield from checks.check_app_id(doc.app.id, "/app/id")
    yield from checks.check_version(doc.version, "/version", allow_two_part=False)
    if doc.app.default_lang not in doc.app.name:
        same = [tag for tag in doc.app.name if tag.lower() == doc.app.default_lang.lower()]
        hint = f"did you mean {quoted(same[0])}?" if same else "add a name for it or change defaultLang"
        yield Problem(
            "/app/defaultLang",
            f"defaultLang {quoted(doc.app.default_lang)} is not one of the name's languages "
            f"({listed(doc.app.name)}); {hint}",
        )
    for tag, text in doc.app.name.items():
        if not text.strip():
            yield Problem(json_pointer("app", "name", tag), "name must not be empty")
    yield from check_app_texts("/app", doc.app.name, doc.app.description, doc.app.aliases)
    kind = execution_type(doc)
    if doc.platform is not None:  # only mcp may leave it out: then the file fits every desktop
        yield from checks.check_fits(
            ExecutionType(kind),
            doc.platform,
            "/execution/type" if doc.execution else "/platform",
            expressible=typing.get_args(CExecutionType),
        )
    yield from _check_execution(doc, kind)
    yield from _check_auth(doc, kind)
    tools = doc.tools or []
    pointers = [f"/tools/{index}" for index in range(len(tools))]
    yield from checks.check_tool_names(zip([t.name for t in tools], pointers, strict=True))
    for tool, pointer in zip(tools, pointers, strict=True):
        yield from _check_tool(tool, pointer, kind)


def _check_execution(doc: CDescriptor, kind: str) -> Iterator[Problem]:
    ex = doc.execution
    if kind == "dbus" and (ex is None or ex.service is None):  # the service name is the app id then
        yield from checks.check_dbus_names(doc.app.id, None, None, "/app", keys=("id", "", ""))
    if ex is None:
        if kind in ("http", "com"):
            needed = "baseUrl" if kind == "http" else "progId"
            yield Problem("/execution", f"platform {doc.platform!r} needs an execution section with {needed}")
        return
    # Only fields the file wrote can be set: most files write a few of the many (C, not a getattr each).
    given = {
        _CAMEL[name]
        for name in _TYPE_FIELD_NAMES.intersection(ex.model_fields_set)
        if getattr(ex, name) is not None
    }
    for key in sorted(given - set(_TYPE_FIELDS[kind])):
        yield Problem(f"/execution/{key}", f"{key} is ignored for execution type {kind!r}", "warning")
    yield from checks.check_timeout(ex.timeout, "/execution/timeout", unit_ms=1)
    if kind == "http":
        if ex.base_url is None:
            yield Problem("/execution/baseUrl", "execution type 'http' needs baseUrl")
        else:
            yield from checks.check_url(ex.base_url, "/execution/baseUrl", what="baseUrl")
        yield from checks.check_headers(ex.default_headers or {}, "/execution/defaultHeaders")
    elif kind == "mcp":
        yield from dialect_c_mcp.check_execution(ex, doc.app.id)
    elif kind in ("stdio", "acp"):
        if kind == "stdio" and ex.command is None:
            yield Problem("/execution/command", "execution type 'stdio' needs command (the adapter to run)")
        if kind == "acp" and ex.start is None:
            yield Problem("/execution/start", "execution type 'acp' needs start {command, args, env}")
        yield from dialect_c_mcp.check_literal_env(ex.env, kind)
    elif kind == "com" and ex.prog_id is None:
        yield Problem("/execution/progId", "execution type 'com' needs progId (e.g. 'Example.Application')")
    elif kind == "apple-events":
        for key, code in (("eventClass", ex.event_class), ("eventId", ex.event_id)):
            if code is not None and not _is_four_char_code(code):
                yield Problem(f"/execution/{key}", f"{key} {quoted(code)} must be exactly four characters")
    elif kind == "dbus":
        yield from checks.check_dbus_names(ex.service, ex.object_path, ex.interface, "/execution")


def _is_four_char_code(code: str) -> bool:
    try:
        return len(code.encode("mac_roman")) == 4
    except UnicodeEncodeError:
        return False


def _check_auth(doc: CDescriptor, kind: str) -> Iterator[Problem]:
    auth = doc.auth
    if auth is None:
        return
    if kind != "http":
        yield Problem("/auth", f"auth applies to http execution only, not {kind!r}")
    if getattr(auth, _AUTH_KEYS[auth.type]) is None:
        yield Problem(
            f"/auth/{auth.type}", f"auth type {auth.type!r} needs its settings object {auth.type!r}"
        )
    for other, attr in _AUTH_KEYS.items():
        if other != auth.type and getattr(auth, attr) is not None:
            yield Problem(
                f"/auth/{other}",
                f"{other} settings are ignored because auth type is {auth.type!r}",
                "warning",
            )
    urls: list[tuple[str | None, str, str]] = []
    if auth.oauth2:
        urls += [
            (
                auth.oauth2.authorization_endpoint,
                "/auth/oauth2/authorizationEndpoint",
                "authorizationEndpoint",
            ),
            (auth.oauth2.token_endpoint, "/auth/oauth2/tokenEndpoint", "tokenEndpoint"),
        ]
    if auth.api_key:
        urls.append((auth.api_key.obtain_url, "/auth/apiKey/obtainUrl", "obtainUrl"))
        if auth.api_key.location == "header":
            yield from checks.check_header_name(auth.api_key.name, "/auth/apiKey/name")
        if auth.api_key.prefix is not None:
            yield from checks.check_header_value(auth.api_key.prefix, "/auth/apiKey/prefix")
    if auth.app_credential:
        urls.append(
            (auth.app_credential.token_endpoint, "/auth/appCredential/tokenEndpoint", "tokenEndpoint")
        )
        yield from checks.check_timeout(
            auth.app_credential.expires_in,
            "/auth/appCredential/expiresIn",
            unit_ms=1000,
            what="expiresIn",
            maximum_ms=366 * 24 * 3600 * 1000,
        )
    if auth.cookie:
        urls.append((auth.cookie.login_url, "/auth/cookie/loginUrl", "loginUrl"))
    for url, pointer, what in urls:
        if url is not None:
            yield from checks.check_url(url, pointer, what=what)


def _check_tool(tool: CTool, pointer: str, kind: str) -> Iterator[Problem]:
    yield from check_shown_text(tool.description, f"{pointer}/description", "description")
    if tool.annotations is not None:
        title = tool.annotations.title
        yield from check_shown_text(title, f"{pointer}/annotations/title", "title", one_line=True)
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
    if tool.execution is None:
        return
    if kind != "http":
        yield Problem(
            f"{pointer}/execution",
            f"tool execution (path, method, headers) applies to http only, not {kind!r}",
        )
        return
    yield from checks.check_tool_http(
        tool.execution.path, tool.execution.headers, tool.parameters, f"{pointer}/execution"
    )


_ALL_TYPE_FIELDS = tuple(dict.fromkeys(k for keys in _TYPE_FIELDS.values() for k in keys))
_SNAKE = {
    name: info_name
    for info_name, info in CExecution.model_fields.items()
    for name in [info.alias or info_name]
}
_CAMEL = {snake: camel for camel, snake in _SNAKE.items()}
_TYPE_FIELD_NAMES = frozenset(_SNAKE[key] for key in _ALL_TYPE_FIELDS)
