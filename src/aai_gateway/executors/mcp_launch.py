"""How the `mcp` executor reaches one MCP server, with every value of its channel resolved.

A value of `env` or `headers` is a literal, a keyring secret (`{"secret": NAME}`, resolved by the
service into `Invocation.secrets`) or a variable of the gateway's own environment (`{"env":
VAR}`, from `ExecutorSettings.environ`). A resolved value is checked for what it is going into: a
header value must not hold CR, LF or NUL (it would end the header and start another), an
environment value must not hold NUL. Messages name the header or variable and where its value
came from, never the value.

A stdio server is started with the program `programs.find_program` finds (the descriptor's `PATH`
in `env`, when it sets one, is where a bare name is looked up), the allow-listed variables of the
gateway's environment plus the descriptor's `env`, in `cwd` (default: the descriptor's folder).
A Streamable HTTP server is reached at `url` with `headers` (see `mcp_http.http_transport`).

`Launch.fingerprint` tells two launches apart without keeping their values in the clear: the
session of an app is replaced when it changes (a new secret, an edited descriptor).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ..descriptor import AppDescriptor, app_reference
from ..descriptor.model import EnvironmentReference, McpChannel, McpValue, SecretReference
from ..errors import SecretMissingError, ServiceUnavailableError, UnsendableRequestError
from .base import descriptor_dir
from .programs import child_environment, find_program


@dataclass(frozen=True)
class SessionSettings:
    start_seconds: float
    """Starting the server and the protocol handshake."""
    idle_seconds: float
    """A session with no call for this long is stopped."""
    grace: float
    """Between SIGTERM and SIGKILL when a stdio server is stopped."""
    ask_seconds: float
    """How long a question of the server may wait for the user."""
    max_message_bytes: int
    ca_file: str | None = None


@dataclass(frozen=True)
class StdioLaunch:
    argv: tuple[str, ...]
    env: tuple[tuple[str, str], ...]
    cwd: Path | None


@dataclass(frozen=True)
class HttpLaunch:
    url: str
    headers: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Launch:
    """One way of reaching a server. `secret_values`: what came from the keyring or the
    gateway's environment, to be scrubbed from everything the server sends back."""

    transport: StdioLaunch | HttpLaunch
    secret_values: tuple[str, ...]

    @property
    def fingerprint(self) -> str:
        return hashlib.sha256(repr(self.transport).encode("utf-8", "surrogatepass")).hexdigest()

    @property
    def command(self) -> str | None:
        return self.transport.argv[0] if isinstance(self.transport, StdioLaunch) else None


def resolve_launch(
    app: AppDescriptor, tool: str, channel: McpChannel, secrets: Mapping[str, str], environ: Mapping[str, str]
) -> Launch:
    """The launch of `channel` of `app` (for a call of `tool`), with the keyring `secrets` the
    service resolved; SecretMissingError, SERVICE_UNAVAILABLE (a variable or the program
    missing) or INVALID_REQUEST (a value its place cannot carry)."""
    resolver = _Values(app, tool, channel, secrets, environ)
    if channel.url is not None:
        headers = tuple((name, resolver.header(name, value)) for name, value in channel.headers.items())
        return Launch(HttpLaunch(channel.url, headers), resolver.secret_values())
    assert channel.command is not None  # the model holds exactly one of command and url
    env = {name: resolver.environment(name, value) for name, value in channel.env.items()}
    program, looked = find_program(
        channel.command, environ, base_dir=descriptor_dir(app), search_path=env.get("PATH") or None
    )
    if program is None:
        raise ServiceUnavailableError(
            app.id,
            f"its MCP server command {channel.command!r} was not found {looked}, or is not executable; "
            "install the server or set execution.command in the app's aai.json to its full path",
            command=channel.command,
        )
    cwd = Path(channel.cwd) if channel.cwd is not None else descriptor_dir(app)
    child_env = tuple(sorted(child_environment(environ, env).items()))
    return Launch(StdioLaunch((program, *channel.args), child_env, cwd), resolver.secret_values())


class _Values:
    def __init__(
        self,
        app: AppDescriptor,
        tool: str,
        channel: McpChannel,
        secrets: Mapping[str, str],
        environ: Mapping[str, str],
    ) -> None:
        self.app = app
        self.tool = tool
        self.channel = channel
        self.secrets = secrets
        self.environ = environ
        self._secret_values: list[str] = []

    def secret_values(self) -> tuple[str, ...]:
        return tuple(self._secret_values)

    def header(self, name: str, value: McpValue) -> str:
        resolved = self._resolve(value)
        if not isinstance(value, str) and any(c in resolved for c in "\r\n\x00"):
            problem = "a line break or NUL, which a header cannot carry"
            raise self._unusable(f"header {name!r}", value, problem)
        return resolved

    def environment(self, name: str, value: McpValue) -> str:
        resolved = self._resolve(value)
        if not isinstance(value, str) and "\x00" in resolved:
            raise self._unusable(
                f"environment variable {name}", value, "a NUL character, which an environment cannot carry"
            )
        return resolved

    def _resolve(self, value: McpValue) -> str:
        if isinstance(value, str):
            return value
        app = self.app
        if isinstance(value, SecretReference):
            found = self.secrets.get(value.name)
            if not found:  # the service resolves them; without an auth provider it has none
                names = [name for name in self.channel.secret_names if not self.secrets.get(name)]
                raise SecretMissingError(
                    app.id, app.names.lookup(None), names, app_reference(app.binding, app.id)
                )
        else:
            found = self.environ.get(value.name)
            if found is None:
                raise ServiceUnavailableError(
                    app.id,
                    f"its MCP server needs the variable {value.name} of the gateway's own environment "
                    '(an {"env": …} value in its aai.json), and it is not set; set it where the gateway '
                    "is started (the MCP client's configuration of the gateway, its `env`) and restart "
                    "the gateway",
                    variable=value.name,
                )
        self._secret_values.append(found)
        return found

    def _unusable(self, what: str, value: SecretReference | EnvironmentReference, problem: str) -> Exception:
        app = self.app
        if isinstance(value, SecretReference):
            where = f"the secret {value.name}"
            fix = (
                f"store it again with `aai-gateway auth set {app_reference(app.binding, app.id)} "
                f"--secret {value.name}`"
            )
        else:
            where = f"the variable {value.name} of the gateway's environment"
            fix = f"set {value.name} again where the gateway is started"
        return UnsendableRequestError(
            app.id, self.tool, f"the value of {what} ({where}) holds {problem}; {fix}"
        )
