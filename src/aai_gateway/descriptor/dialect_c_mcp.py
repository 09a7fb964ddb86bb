"""Dialect C's execution type `mcp`: an MCP server as an app (docs/aai-json.md, "Execution type
mcp"). The raw form of its env and header values, the checks only this type has, and its
canonical channel.

A value of `env` or `headers` is a literal string, `{"secret": NAME}` (a secret in the OS
keyring, bound to this descriptor like every credential) or `{"env": VAR}` (a variable of the
gateway's own environment). Messages never quote a literal value: it may be a credential.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import PurePosixPath, PureWindowsPath
from typing import TYPE_CHECKING, Annotated, Any, Final
from urllib.parse import parse_qsl, urlsplit

from pydantic import PlainValidator, ValidationInfo
from pydantic_core import PydanticCustomError

from ..errors import Problem, json_pointer
from . import prevalidated
from .checks import APP_ID
from .http_headers import header_name_problem, header_value_problem
from .model import McpChannel
from .model_auth import EnvironmentReference, McpValue, SecretReference
from .quoting import WHOLE_UP_TO, quoted
from .raw import CamelRawModel, describe_json, extra_of
from .secret_shapes import looks_like_secret

if TYPE_CHECKING:
    from .dialect_c import CExecution

SECRET_NAME: Final = re.compile(r"^[A-Za-z0-9_.-]{1,128}\Z")
ENV_NAME: Final = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\Z")
LOOPBACK_HOSTS: Final = frozenset({"127.0.0.1", "::1", "localhost"})
MAX_ARGS: Final = 1024
MAX_COMMAND_LINE: Final = 32_767
"""Characters in the command and its arguments: Windows's limit, the smallest desktop one."""
MCP_CLIENT_HEADERS: Final = frozenset({"mcp-session-id", "mcp-protocol-version"})
STDIO_FIELDS: Final = ("args", "env", "cwd")

_PLACEHOLDER: Final = re.compile(r"\$\{[^}]*\}")


class CSecretRef(CamelRawModel):
    secret: str


class CEnvRef(CamelRawModel):
    env: str


def _value(raw: Any, info: ValidationInfo) -> Any:
    """A literal string, or the one reference object a dict must be (its errors at its fields)."""
    if isinstance(raw, str):
        return raw
    if isinstance(raw, dict) and ("secret" in raw) != ("env" in raw):
        reference = CSecretRef if "secret" in raw else CEnvRef
        return reference.model_validate(raw, extra=extra_of(info), context=info.context)
    if isinstance(raw, dict):
        raise PydanticCustomError(
            "value_reference",
            "a reference holds exactly one of 'secret' (the name of a secret in the OS keyring) "
            "or 'env' (a variable of the gateway's environment)",
        )
    raise PydanticCustomError(
        "value_type",
        'value must be a string, {"secret": "NAME"} or {"env": "VARIABLE"}, not {given}',
        {"given": describe_json(raw)},
    )


CValue = Annotated[
    str | CSecretRef | CEnvRef, PlainValidator(_value, json_schema_input_type=str | CSecretRef | CEnvRef)
]


# --------------------------------------------------------------------------- checks


def check_execution(ex: CExecution, app_id: str) -> Iterator[Problem]:
    """The transport (exactly one of command and url), its own fields, and env and headers."""
    if ex.command is None and ex.url is None:
        yield Problem(
            "/execution",
            "execution type 'mcp' needs command (a server the gateway starts over stdio) or url "
            "(a Streamable HTTP server)",
        )
    elif ex.command is not None and ex.url is not None:
        yield Problem(
            "/execution/url",
            "execution type 'mcp' takes command (a server started over stdio) or url (a Streamable "
            "HTTP server), not both; keep one",
        )
    else:
        for key in STDIO_FIELDS if ex.url is not None else ():
            if getattr(ex, key) is not None:
                yield Problem(
                    f"/execution/{key}",
                    f"{key} applies to an MCP server started with command, not to one at a url",
                )
        if ex.command is not None and ex.headers is not None:
            yield Problem(
                "/execution/headers",
                "headers apply to an MCP server at a url, not to one started with command "
                "(pass its settings in env)",
            )
    if ex.command is not None:
        yield from _check_command_line(ex.command, ex.args or [])
    if ex.cwd is not None and not _is_absolute(ex.cwd):
        yield Problem(
            "/execution/cwd",
            f"cwd {quoted(ex.cwd)} must be an absolute path (like /home/me/project or C:\\work); "
            "'~' and relative paths are not expanded",
        )
    if ex.url is not None:
        yield from _check_url(ex.url)
    for name, value in (ex.env or {}).items():
        yield from _check_entry(name, value, json_pointer("execution", "env", name), app_id, header=False)
    for name, value in (ex.headers or {}).items():
        yield from _check_entry(name, value, json_pointer("execution", "headers", name), app_id, header=True)


def check_literal_env(env: Mapping[str, Any] | None, kind: str) -> Iterator[Problem]:
    """Only `mcp` resolves references; other types pass env values as written."""
    for name, value in (env or {}).items():
        if not isinstance(value, str):
            yield Problem(
                json_pointer("execution", "env", name),
                f"secret and environment references are for execution type 'mcp'; {kind!r} takes "
                "env values as strings",
            )


def _check_command_line(command: str, args: list[str]) -> Iterator[Problem]:
    if not command.strip():
        yield Problem("/execution/command", "command must name the program that starts the MCP server")
    texts = [("/execution/command", command), *((f"/execution/args/{i}", a) for i, a in enumerate(args))]
    for pointer, text in texts:
        if "\x00" in text:
            yield Problem(pointer, "contains a NUL character, which a command line cannot carry")
    if len(args) > MAX_ARGS:
        yield Problem("/execution/args", f"args holds {len(args)} arguments; at most {MAX_ARGS} are allowed")
        return
    length = len(command) + sum(len(a) + 1 for a in args)
    if length > MAX_COMMAND_LINE:
        yield Problem(
            "/execution/args" if args else "/execution/command",
            f"the command line is {length} characters long; at most {MAX_COMMAND_LINE} fit "
            "(the limit of Windows, the smallest of the desktop systems)",
        )


def _is_absolute(path: str) -> bool:
    """Absolute on some desktop system: the descriptor need not be tied to one."""
    return "\x00" not in path and (PurePosixPath(path).is_absolute() or PureWindowsPath(path).is_absolute())


def _check_url(url: str) -> Iterator[Problem]:
    pointer = "/execution/url"
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 (raises ValueError for a port out of range)
    except ValueError:
        yield Problem(pointer, "url is not a valid URL (check the brackets of an IPv6 address and the port)")
        return
    if "@" in parts.netloc:  # never quoted: it holds a password or token
        yield Problem(
            pointer,
            "url must not carry credentials (user:password@); send them as a header whose value is "
            '{"secret": "NAME"}, a secret in the OS keyring',
        )
    elif parts.scheme not in ("http", "https") or not parts.hostname:
        yield Problem(
            pointer, f"url {quoted(url)} must be an absolute https:// URL of a Streamable HTTP MCP server"
        )
    elif parts.scheme == "http" and parts.hostname not in LOOPBACK_HOSTS:
        yield Problem(
            pointer,
            f"url {quoted(url)} must be https://: plain http:// is only allowed to this computer "
            "(127.0.0.1, ::1 or localhost)",
        )
    else:
        query = parse_qsl(parts.query, keep_blank_values=True)
        secret_keys = sorted({key for key, value in query if value and looks_like_secret(key, value)})
        if secret_keys:
            yield Problem(
                pointer,
                f"the url's query parameter {quoted(secret_keys[0])} looks like a secret written in plain "
                "text, readable by anyone who can read this file; if the server accepts it in a header, "
                'send it there with the value {"secret": "NAME"} (guides never show the query)',
                "warning",
            )


def _check_entry(name: str, value: Any, pointer: str, app_id: str, *, header: bool) -> Iterator[Problem]:
    what = "header" if header else "environment variable"
    if header:
        problem = header_name_problem(name)
        if problem is None and name.lower() in MCP_CLIENT_HEADERS:
            problem = "is set by the MCP client itself (the session and protocol version); remove it"
        if problem is not None:
            yield Problem(pointer, f"header name {quoted(name)} {problem}")
    elif not ENV_NAME.match(name):
        yield Problem(
            pointer,
            f"environment variable name {quoted(name)} must use only letters, digits and '_', "
            "and not start with a digit",
        )
    if isinstance(value, CSecretRef) and not SECRET_NAME.match(value.secret):
        yield Problem(
            f"{pointer}/secret",
            f"secret name {quoted(value.secret)} must be 1 to 128 letters, digits, '_', '.' or '-'",
        )
    elif isinstance(value, CEnvRef) and not ENV_NAME.match(value.env):
        yield Problem(
            f"{pointer}/env",
            f"{quoted(value.env)} is not an environment variable name: use letters, digits and '_', "
            "not starting with a digit",
        )
    elif isinstance(value, str):
        yield from _check_literal(name, value, pointer, app_id, what=what, header=header)


def _check_literal(
    name: str, value: str, pointer: str, app_id: str, *, what: str, header: bool
) -> Iterator[Problem]:
    problem = header_value_problem(value) if header else None
    if problem is not None:
        yield Problem(pointer, f"header value {problem}")
    elif not header and "\x00" in value:
        yield Problem(pointer, "value contains a NUL character, which an environment variable cannot carry")
    elif _PLACEHOLDER.search(value):
        yield Problem(
            pointer,
            "the value holds ${...}, which the gateway passes as written (it replaces nothing); "
            'write {"env": "VARIABLE"} to read a variable of the gateway\'s environment, or '
            '{"secret": "NAME"} for a secret in the OS keyring',
            "warning",
        )
    elif looks_like_secret(name, value) and value.strip():
        # The command as the user would type it, when the names fit in a message.
        app = app_id if APP_ID.match(app_id) and len(app_id) <= WHOLE_UP_TO else "<app>"
        secret = name if SECRET_NAME.match(name) and len(name) <= WHOLE_UP_TO else "NAME"
        yield Problem(
            pointer,
            f"{what} {quoted(name)} looks like a secret written in plain text, readable by anyone who "
            f"can read this file; keep it in the OS keyring: run `aai-gateway auth set {app} "
            f'--secret {secret}` and write {{"secret": "{secret}"}} here (or {{"env": "VARIABLE"}} '
            "to read it from the gateway's environment where no keyring is usable)",
            "warning",
        )


# --------------------------------------------------------------------------- canonical channel


def channel(ex: CExecution, timeout_ms: int | None) -> McpChannel:
    return prevalidated.mcp_channel(
        command=ex.command,
        args=tuple(ex.args or ()),
        env={name: _canonical(value) for name, value in (ex.env or {}).items()},
        cwd=ex.cwd,
        url=ex.url,
        headers={name: _canonical(value) for name, value in (ex.headers or {}).items()},
        timeout_ms=timeout_ms,
    )


def literal_env(env: Mapping[str, str | CSecretRef | CEnvRef] | None) -> dict[str, str]:
    """The env of a type that takes strings only (`check_literal_env` refused anything else)."""
    literal = {name: value for name, value in (env or {}).items() if isinstance(value, str)}
    assert len(literal) == len(env or {}), "a reference in env passed the checks of a non-mcp type"
    return literal


def _canonical(value: str | CSecretRef | CEnvRef) -> McpValue:
    if isinstance(value, CSecretRef):
        return SecretReference(name=value.secret)
    if isinstance(value, CEnvRef):
        return EnvironmentReference(name=value.env)
    return value
