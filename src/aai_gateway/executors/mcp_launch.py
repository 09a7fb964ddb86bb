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
The program is looked up as the server starts (`with_program`), not for every call: a call checks
that it can run before anyone is asked for consent (`McpExecutor.unavailable`), and that is enough
for a server that already runs.
A Streamable HTTP server is reached at `url` with `headers` (see `mcp_http.http_transport`).

`Launch.fingerprint` tells two launches apart without keeping their values in the clear: the
session of an app is replaced when it changes (a new secret, an edited descriptor). It is taken of
the launch as the descriptor asks for it, before its program is found.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..descriptor import AppDescriptor, app_reference
from ..descriptor.model import McpChannel
from ..descriptor.model_auth import EnvironmentReference, McpValue, SecretReference
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
    """The command as the descriptor writes it, then its arguments."""
    env: tuple[tuple[str, str], ...]
    cwd: Path | None
    search_path: str | None = None
    """Where a bare command is looked up: the descriptor's `PATH` (None: the gateway's)."""
    base_dir: Path | None = None
    """What a relative command is relative to: the descriptor's folder."""
    program: str | None = field(default=None, repr=False, compare=False)
    """The program found for the command as the server starts (`with_program`)."""

    @property
    def command_line(self) -> tuple[str, ...]:
        """What is started: the program found, then the arguments."""
        if self.program is None:
            raise RuntimeError("a stdio server's program is found before it starts (with_program)")
        return (self.program, *self.argv[1:])


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
        """A stdio server's program (its command until the program is found)."""
        transport = self.transport
        return (transport.program or transport.argv[0]) if isinstance(transport, StdioLaunch) else None


def resolve_launch(
    app: AppDescriptor, tool: str, channel: McpChannel, secrets: Mapping[str, str], environ: Mapping[str, str]
) -> Launch:
    """The launch of `channel` of `app` (for a call of `tool`), with the keyring `secrets` the
    service resolved; SecretMissingError, SERVICE_UNAVAILABLE (a variable missing) or
    INVALID_REQUEST (a value its place cannot carry). A stdio server's program is not looked up
    yet (`with_program`)."""
    resolver = _Values(app, tool, channel, secrets, environ)
    if channel.url is not None:
        headers = tuple((name, resolver.header(name, value)) for name, value in channel.headers.items())
        return Launch(HttpLaunch(channel.url, headers), resolver.secret_values())
    assert channel.command is not None  # the model holds exactly one of command and url
    env = {name: resolver.environment(name, value) for name, value in channel.env.items()}
    cwd = Path(channel.cwd) if channel.cwd is not None else descriptor_dir(app)
    child_env = tuple(sorted(child_environment(environ, env).items()))
    transport = StdioLaunch(
        (channel.command, *channel.args),
        child_env,
        cwd,
        search_path=env.get("PATH") or None,
        base_dir=descriptor_dir(app),
    )
    return Launch(transport, resolver.secret_values())


def with_program(app_id: str, launch: Launch, environ: Mapping[str, str]) -> Launch:
    """`launch` with its stdio server's program found (`find_program`), as the server starts;
    SERVICE_UNAVAILABLE when there is none. A Streamable HTTP launch as it is."""
    transport = launch.transport
    if not isinstance(transport, StdioLaunch):
        return launch
    command = transport.argv[0]
    program, looked = find_program(
        command, environ, base_dir=transport.base_dir, search_path=transport.search_path
    )
    if program is None:
        raise ServiceUnavailableError(
            app_id,
            f"its MCP server command {command!r} was not found {looked}, or is not executable; "
            "install the server or set execution.command in the app's aai.json to its full path",
            command=command,
        )
    return replace(launch, transport=replace(transport, program=program))


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
