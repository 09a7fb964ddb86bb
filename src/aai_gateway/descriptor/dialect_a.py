"""Dialect A (`000_…`): snake_case, one platform per file, `|`-separated names, `ipc` or `http`.

`ipc` means the platform's own IPC channel: Apple Events on macOS (bundle id = app id, event
`AAI `/`call`), DBus on Linux (service = app id), COM on Windows (ProgID = app id).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field

from ..errors import Problem
from . import checks, prevalidated
from .model import (
    AppDescriptor,
    AppleEventsChannel,
    Channel,
    ComChannel,
    DbusChannel,
    HttpChannel,
    Source,
)
from .model_auth import OAuth2Auth
from .names import from_pipe_string
from .platforms import ExecutionType, Platform
from .raw import RawModel
from .semver import parse_version
from .shared import derived_dbus_names, upper_if_str
from .shown_text import check_app_texts, check_shown_text

NonEmpty = Annotated[str, Field(min_length=1)]
Method = Annotated[
    Literal["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"], BeforeValidator(upper_if_str)
]


class AApp(RawModel):
    id: NonEmpty
    name: NonEmpty
    description: str
    aliases: list[str] = Field(default_factory=list)  # a `[]` default is deep-copied per model


class AExecution(RawModel):
    type: Literal["ipc", "http"]
    base_url: str | None = None
    default_headers: dict[str, str] | None = None


class APkce(RawModel):
    method: Literal["S256"]


class AOAuth2(RawModel):
    authorization_endpoint: str
    token_endpoint: str
    scopes: list[str]
    pkce: APkce | None = None


class AAuth(RawModel):
    type: Literal["oauth2"]
    oauth2: AOAuth2 | None = None


class AToolExecution(RawModel):
    path: str | None = None
    method: Method | None = None
    headers: dict[str, str] | None = None


class ATool(RawModel):
    name: str
    description: str | None = None
    parameters: dict[str, Any]
    returns: dict[str, Any] | None = None
    execution: AToolExecution | None = None


class ADescriptor(RawModel):
    schema_version: str
    version: str
    platform: Literal["macos", "linux", "windows", "web"]
    app: AApp
    execution: AExecution | None = None
    auth: AAuth | None = None
    tools: list[ATool]


_IPC: dict[str, ExecutionType] = {
    "macos": ExecutionType.APPLE_EVENTS,
    "linux": ExecutionType.DBUS,
    "windows": ExecutionType.COM,
}


def execution_type(doc: ADescriptor) -> ExecutionType:
    declared = doc.execution.type if doc.execution else ("http" if doc.platform == "web" else "ipc")
    if declared == "http":
        return ExecutionType.HTTP
    return _IPC.get(doc.platform, ExecutionType.HTTP)


def check(doc: ADescriptor) -> Iterator[Problem]:
    yield from checks.check_app_id(doc.app.id, "/app/id")
    yield from checks.check_version(doc.version, "/version", allow_two_part=False)
    declared = doc.execution.type if doc.execution else None
    web_ipc = doc.platform == "web" and declared == "ipc"
    if web_ipc:
        yield Problem(
            "/execution/type", "execution type 'ipc' cannot run on platform 'web' (use 'http' with base_url)"
        )
    kind = execution_type(doc)
    if kind == ExecutionType.HTTP and not web_ipc:  # web+ipc: one error, not also "needs base_url"
        base_url = doc.execution.base_url if doc.execution else None
        if base_url is None:
            yield Problem("/execution/base_url", "http execution needs base_url")
        else:
            yield from checks.check_url(base_url, "/execution/base_url", what="base_url")
    elif doc.execution and doc.execution.base_url is not None:
        yield Problem("/execution/base_url", "base_url is ignored for ipc execution", "warning")
    if doc.execution and doc.execution.default_headers:
        if kind == ExecutionType.HTTP:
            yield from checks.check_headers(doc.execution.default_headers, "/execution/default_headers")
        else:
            yield Problem(
                "/execution/default_headers", "default_headers is ignored for ipc execution", "warning"
            )
    yield from checks.check_pipe_names(doc.app.name, "/app/name")
    yield from check_app_texts("/app", doc.app.name, doc.app.description, doc.app.aliases)
    if kind == ExecutionType.DBUS:
        yield from checks.check_dbus_names(doc.app.id, None, None, "/app", keys=("id", "", ""))
    if doc.auth is not None:
        if kind != ExecutionType.HTTP:
            yield Problem("/auth", "auth applies to http execution only, not ipc")
        if doc.auth.oauth2 is None:
            yield Problem("/auth/oauth2", "auth type 'oauth2' needs its settings object 'oauth2'")
        else:
            yield from checks.check_url(
                doc.auth.oauth2.authorization_endpoint,
                "/auth/oauth2/authorization_endpoint",
                what="authorization_endpoint",
            )
            yield from checks.check_url(
                doc.auth.oauth2.token_endpoint, "/auth/oauth2/token_endpoint", what="token_endpoint"
            )
    pointers = [f"/tools/{index}" for index in range(len(doc.tools))]
    yield from checks.check_tool_names(zip([t.name for t in doc.tools], pointers, strict=True))
    for tool, pointer in zip(doc.tools, pointers, strict=True):
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
        if tool.execution is not None:
            if kind != ExecutionType.HTTP:
                yield Problem(
                    f"{pointer}/execution", "tool execution (path, method, headers) applies to http only"
                )
                continue
            yield from checks.check_tool_http(
                tool.execution.path, tool.execution.headers, tool.parameters, f"{pointer}/execution"
            )


def normalize(doc: ADescriptor, source: Source) -> AppDescriptor:
    platform: Platform = doc.platform
    channel = _channel(doc)
    # The operations without settings of their own share one call, as they share the channel.
    plain_call = (
        prevalidated.http_call(path=None, method=None, headers={})
        if channel.type == ExecutionType.HTTP
        else None
    )
    tools = tuple(
        [
            prevalidated.file_tool(
                t,
                channel=channel,
                call=(
                    prevalidated.http_call(
                        path=t.execution.path, method=t.execution.method, headers=t.execution.headers or {}
                    )
                    if t.execution
                    else plain_call
                ),
                timeout_ms=None,
            )
            for t in doc.tools
        ]
    )
    version = parse_version(doc.version)
    assert version is not None
    declared = doc.execution.type if doc.execution else ("http" if platform == "web" else "ipc")
    return prevalidated.app(
        dialect="A",
        schema_version=doc.schema_version,
        version=str(version),
        declared_version=doc.version,
        id=doc.app.id,
        names=from_pipe_string(doc.app.name),
        description=doc.app.description,
        aliases=tuple(doc.app.aliases),
        sections=(
            prevalidated.section(platform=platform, declared_type=declared, channel=channel, tools=tools),
        ),
        platform=platform,
        tools=tools,
        tools_declared=True,
        source=source,
    )


def _channel(doc: ADescriptor) -> Channel:
    kind = execution_type(doc)
    if kind == ExecutionType.HTTP:
        assert doc.execution is not None and doc.execution.base_url is not None
        auth = None
        if doc.auth and doc.auth.oauth2:
            o = doc.auth.oauth2
            auth = OAuth2Auth(
                authorization_endpoint=o.authorization_endpoint,
                token_endpoint=o.token_endpoint,
                scopes=tuple(o.scopes),
                pkce_method=o.pkce.method if o.pkce else None,
            )
        return HttpChannel(
            base_url=doc.execution.base_url, default_headers=doc.execution.default_headers or {}, auth=auth
        )
    if kind == ExecutionType.APPLE_EVENTS:
        return AppleEventsChannel(bundle_id=doc.app.id)
    if kind == ExecutionType.DBUS:
        service, path, interface = derived_dbus_names(doc.app.id, None, None)
        return DbusChannel(service=service, object_path=path, interface=interface)
    return ComChannel(prog_id=doc.app.id)
