"""One server entry to a `FoundServer` (or the problems that keep it out).

Two shapes. The JSON clients share one: `command`/`args`/`env` for a local server, a URL and
`headers` for a remote one, with each client's own spellings (`type`, Windsurf's `serverUrl`,
Gemini's `httpUrl`, `envFile`, tool filters); an entry may use any of them. Codex's TOML tables
have their own keys (`env_vars`, `bearer_token_env_var`, `http_headers`, `env_http_headers`,
`enabled`), which become the same model: a named variable is an `env` reference.

Which transport: the entry's `type` when it has one; otherwise a command means stdio and a URL
a remote server. A URL without a type is Streamable HTTP, unless its path ends in `/sse` (the
convention of SSE servers, and what the clients without a type field must go by as well) —
except in Gemini CLI, which treats `url` without a type as Streamable HTTP and `httpUrl` always.
"""

from __future__ import annotations

import re
from typing import Any, Final

from ..descriptor.quoting import listed, quoted
from ..errors import Problem
from .fields import EntryFields, Setting, Token
from .model import GEMINI, WINDSURF, ConfigValue, FoundServer, Transport
from .values import env_reference

_IDENTIFIER: Final = re.compile(r"[A-Za-z][A-Za-z0-9_+.-]{0,31}")
"""A transport type or URL scheme that a message may quote; anything else might be a value
written in the wrong place (a token), so it is described instead."""
_TYPES: Final[dict[str, Transport]] = {
    "stdio": "stdio",
    "http": "http",
    "streamable-http": "http",
    "streamableHttp": "http",
    "streamable_http": "http",
    "sse": "sse",
}
_JSON_KEYS: Final = frozenset(
    {"type", "command", "args", "env", "envFile", "cwd", "url", "serverUrl", "httpUrl", "headers"}
    | {"disabled", "includeTools", "excludeTools", "disabledTools"}
)
_JSON_IGNORED: Final = frozenset(
    {"timeout", "trust", "description", "oauth", "auth", "authProviderType", "targetAudience"}
    | {"targetServiceAccount", "alwaysAllow", "autoApprove", "dev", "gallery", "version", "extensionName"}
)
_JSON_DROPPED_WITH_WARNING: Final = {
    "headersHelper": "headersHelper runs a command to make the request headers; the gateway does not run it, "
    "so set the headers the server needs in the app's credentials",
    "sandboxEnabled": "the client runs this server in its sandbox; the gateway runs it without one",
    "sandbox": "the client's sandbox rules for this server are not carried over",
}
_STDIO_KEYS: Final = ("command", "args", "env", "envFile", "cwd")
_REMOTE_KEYS: Final = ("url", "serverUrl", "httpUrl", "headers")
_CODEX_KEYS: Final = frozenset(
    {"command", "args", "env", "env_vars", "cwd", "url", "bearer_token_env_var", "http_headers"}
    | {"env_http_headers", "enabled", "enabled_tools", "disabled_tools", "bearer_token"}
)
_CODEX_IGNORED: Final = frozenset(
    {"startup_timeout_sec", "startup_timeout_ms", "tool_timeout_sec", "required", "scopes", "name"}
    | {"supports_parallel_tool_calls", "default_tools_approval_mode", "oauth", "oauth_resource"}
    | {"tools", "experimental_environment"}
)
_SSE_UNSUPPORTED: Final = (
    "uses the SSE transport, which the gateway does not speak (it speaks stdio and Streamable "
    "HTTP); if the server also offers Streamable HTTP (often at a URL ending in /mcp), change the "
    "client's entry to that and import again"
)


def read_json_entry(
    name: str,
    raw: dict[str, Any],
    tokens: tuple[Token, ...],
    setting: Setting,
    *,
    listed_off: bool = False,
    project: str | None = None,
) -> tuple[FoundServer | None, list[Problem]]:
    """`listed_off`: a list elsewhere in the file disables the server (Gemini CLI's
    `mcp.excluded`, Claude Code's `disabledMcpServers`); `project`: the Claude Code project
    the entry belongs to."""
    fields = EntryFields(raw, tokens, setting)
    ignored = _sort_keys(fields, _JSON_KEYS, _JSON_IGNORED, _JSON_DROPPED_WITH_WARNING)
    transport, url = _json_transport(fields)
    server_fields: dict[str, Any] = {}
    if transport == "stdio":
        server_fields = {
            "command": _command(fields),
            "args": fields.values("args"),
            "env": fields.environment("env"),
            "env_file": fields.value("envFile"),
            "cwd": fields.value("cwd", process=True),
        }
        _not_used(fields, _REMOTE_KEYS, "a stdio server")
    elif transport is not None:
        server_fields = {"url": _url(fields, url), "headers": fields.headers("headers")}
        _not_used(fields, _STDIO_KEYS, "a remote server")
    disabled = fields.boolean("disabled")
    include = fields.names("includeTools")
    exclude = (fields.names("excludeTools") or ()) + (fields.names("disabledTools") or ())
    if transport is None or fields.failed:
        return None, fields.problems
    server = FoundServer(
        client=setting.client,
        config_file=setting.config_file,
        json_pointer=setting.locate(tokens),
        name=name,
        transport=transport,
        disabled=bool(disabled) or listed_off,
        project=project,
        include_tools=include,
        exclude_tools=exclude,
        ignored_keys=ignored,
        **server_fields,
    )
    if transport == "sse":
        fields.error(tokens, f"server {quoted(name)} {_SSE_UNSUPPORTED}")
    return server, fields.problems


def read_codex_entry(
    name: str, raw: dict[str, Any], tokens: tuple[Token, ...], setting: Setting
) -> tuple[FoundServer | None, list[Problem]]:
    fields = EntryFields(raw, tokens, setting)
    ignored = _sort_keys(fields, _CODEX_KEYS, _CODEX_IGNORED, {})
    if fields.present("bearer_token"):
        fields.error(
            fields.at("bearer_token"),
            "Codex refuses an inline bearer_token; put the token in an environment variable and "
            "name it with bearer_token_env_var",
        )
    server_fields: dict[str, Any]
    if fields.present("command"):
        transport: Transport = "stdio"
        if fields.present("url"):
            fields.error(tokens, "has both command and url; Codex refuses such an entry")
        env = fields.environment("env")
        for variable in _codex_env_vars(fields):
            env.setdefault(variable, ConfigValue.joined([env_reference(variable)]))
        server_fields = {
            "command": _command(fields),
            "args": fields.values("args"),
            "env": env,
            "cwd": fields.value("cwd", process=True),
        }
        _not_used(fields, ("bearer_token_env_var", "http_headers", "env_http_headers"), "a stdio server")
    elif fields.present("url"):
        transport = "http"
        server_fields = {"url": _url(fields, "url"), "headers": _codex_headers(fields)}
        _not_used(fields, ("args", "env", "env_vars", "cwd"), "a remote server")
    else:
        fields.error(tokens, f"server {quoted(name)} has neither command nor url")
        return None, fields.problems
    enabled = fields.boolean("enabled")
    include = fields.names("enabled_tools")
    exclude = fields.names("disabled_tools") or ()
    if fields.failed:
        return None, fields.problems
    server = FoundServer(
        client=setting.client,
        config_file=setting.config_file,
        json_pointer=setting.locate(tokens),
        name=name,
        transport=transport,
        disabled=enabled is False,
        include_tools=include,
        exclude_tools=exclude,
        ignored_keys=ignored,
        **server_fields,
    )
    return server, fields.problems


def _sort_keys(
    fields: EntryFields, known: frozenset[str], ignored: frozenset[str], dropped: dict[str, str]
) -> tuple[str, ...]:
    """The keys the gateway does not carry over; unknown keys and dropped ones get a warning."""
    skipped: list[str] = []
    for key in fields.raw:
        if key in known:
            continue
        skipped.append(key)
        if key in dropped:
            fields.warning(fields.at(key), dropped[key])
        elif key not in ignored:
            fields.warning(fields.at(key), f"unknown key {quoted(key)}; ignored")
    return tuple(skipped)


def _json_transport(fields: EntryFields) -> tuple[Transport | None, str]:
    """The entry's transport and the key that holds its URL."""
    url_keys = [key for key in ("httpUrl", "serverUrl", "url") if fields.present(key)]
    url_key = url_keys[0] if url_keys else "url"
    if len(url_keys) > 1:
        fields.warning(fields.tokens, f"has {listed(url_keys)}; the client uses {url_key}")
    given = fields.text("type")
    client = fields.setting.client
    if given is not None:
        transport = _TYPES.get(given)
        if transport is None:
            shown = quoted(given) if _IDENTIFIER.fullmatch(given) else "of this entry"
            fields.error(
                fields.at("type"),
                f"transport type {shown} is not supported: the gateway speaks stdio and "
                "Streamable HTTP (type 'stdio' or 'http')",
            )
        elif transport == "stdio" and not fields.present("command"):
            fields.error(fields.tokens, "is a stdio server without a command")
            return None, url_key
        elif transport != "stdio" and not url_keys:
            fields.error(fields.tokens, f"is a remote ({given}) server without a url")
            return None, url_key
        return transport, url_key
    if url_keys and fields.present("command") and client != GEMINI:
        fields.error(fields.tokens, "has both a command and a URL; say which it is with 'type'")
        return None, url_key
    if url_keys:
        if url_key == "httpUrl" or client == GEMINI:
            return "http", url_key
        raw = fields.raw[url_key]
        path = raw.split("?", 1)[0].split("#", 1)[0].rstrip("/") if isinstance(raw, str) else ""
        return ("sse" if path.endswith("/sse") else "http"), url_key
    if fields.present("command"):
        return "stdio", url_key
    remote = "serverUrl" if client == WINDSURF else "url"
    fields.error(fields.tokens, f"has neither a command nor a {remote}; it describes no server")
    return None, url_key


def _command(fields: EntryFields) -> ConfigValue | None:
    command = fields.value("command", process=True)
    if command is not None and not command.raw.strip():
        fields.error(fields.at("command"), "command is empty")
    return command


def _url(fields: EntryFields, key: str) -> ConfigValue | None:
    url = fields.value(key)
    if url is None or not url.is_literal:
        return url  # a URL with references is checked once the client's values are known
    scheme, _, rest = url.raw.partition("://")
    if scheme.lower() in ("unix", "pipe"):
        fields.error(
            fields.at(key), f"{key} names a local socket or pipe, which the gateway cannot connect to"
        )
    elif not rest or scheme.lower() not in ("http", "https") or rest.startswith("/"):
        shown = f"scheme {quoted(scheme)}" if rest and _IDENTIFIER.fullmatch(scheme) else "no scheme"
        fields.error(fields.at(key), f"{key} is not an http or https URL ({shown})")
    return url


def _not_used(fields: EntryFields, keys: tuple[str, ...], what: str) -> None:
    present = [key for key in keys if fields.present(key)]
    if present:
        fields.warning(fields.tokens, f"{listed(present)} not used for {what}; ignored")


def _codex_env_vars(fields: EntryFields) -> list[str]:
    """`env_vars`: names of the client's environment variables passed on to the server, as
    strings or `{name, source}` tables."""
    items = fields.raw.get("env_vars", [])
    if not isinstance(items, list):
        fields.error(fields.at("env_vars"), "env_vars must be an array")
        return []
    names: list[str] = []
    for index, item in enumerate(items):
        name = item.get("name") if isinstance(item, dict) else item
        if isinstance(name, str) and name and "=" not in name and "\x00" not in name:
            names.append(name)
        else:
            fields.error((*fields.at("env_vars"), index), "must be a variable name or a table with a name")
    return names


def _codex_headers(fields: EntryFields) -> dict[str, ConfigValue]:
    """`http_headers` as they are, then `env_http_headers` (header → variable) and
    `bearer_token_env_var` (Authorization) replacing any header of the same name in any case,
    as Codex sends them."""
    headers = fields.headers("http_headers")
    named: list[tuple[str, Any, tuple[Token, ...]]] = [
        (header, variable, (*fields.at("env_http_headers"), header))
        for header, variable in (fields.table("env_http_headers") or {}).items()
    ]
    if fields.present("bearer_token_env_var"):
        named.append(("Authorization", fields.raw["bearer_token_env_var"], fields.at("bearer_token_env_var")))
    for header, variable, where in named:
        if not isinstance(variable, str) or not variable:
            fields.error(where, "must name an environment variable")
            continue
        prefix = "Bearer " if where[-1] == "bearer_token_env_var" else ""
        value = ConfigValue.joined([prefix, env_reference(variable)])
        checked = fields.header(header, value.raw, where, header)
        if checked is not None:
            for existing in [key for key in headers if key.lower() == header.lower()]:
                del headers[existing]
            headers[header] = value
    return headers
