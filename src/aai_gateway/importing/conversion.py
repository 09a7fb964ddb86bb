"""One server of a client's configuration to the `execution` of an `mcp` descriptor.

Two steps, because the app id depends on the first: `process_fields` gives the command,
arguments and folder (or the URL), which identify the server; `ValueConverter` then turns its
`env` and `headers` into what a descriptor may hold:

- a literal that is not a secret stays as it is;
- a literal secret (`descriptor.secret_shapes`) moves into the OS keyring as `{"secret": NAME}`;
  with no usable keyring it becomes `{"env": VAR}`, a variable the user sets for the gateway;
- a reference to one variable of the client's environment (`${env:X}`, `${X}`) becomes
  `{"env": X}`: the gateway's environment must have it, as the client's had;
- anything else the client fills in when it starts the server (a VS Code `${input:…}`, a
  Windsurf `${file:…}`, text around a reference like `Bearer ${env:X}`) cannot be written in a
  descriptor: it becomes a secret the user stores with `aai-gateway auth set ID --secret NAME`
  (or, with no keyring, a variable to set).

The client's other variables (`${userHome}`, `${workspaceFolder}`, …) are filled in where the
import knows them; a server needing one it does not know is not imported, with the reason.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any, Final

from ..descriptor.dialect_c_mcp import ENV_NAME, SECRET_NAME
from ..descriptor.quoting import quoted
from ..descriptor.secret_shapes import looks_like_secret, secret_argument_indexes, secret_name, secret_shaped
from .model import ConfigValue, FoundServer, Reference

_PROJECT_FOLDERS: Final = frozenset({".vscode", ".cursor", ".gemini", ".codex"})
_NOT_SECRET_NAME: Final = re.compile(r"[^A-Za-z0-9_.-]")
_NOT_ENV_NAME: Final = re.compile(r"[^A-Za-z0-9_]")


class UnimportableError(Exception):
    """The server cannot be described as it is; the message says why and what to do."""


@dataclass(frozen=True)
class ImportSettings:
    """What the import needs to know about this machine and run, passed in by the command line:
    `keyring` is whether a usable OS keyring exists; `environ` fills in the client's environment
    references outside env and headers; `workspace` is the project folder (`--project`)."""

    target_dir: Path
    keyring: bool
    home: Path
    environ: Mapping[str, str] = field(default_factory=dict)
    workspace: Path | None = None
    path_separator: str = "/"


@dataclass(frozen=True)
class SecretToSet:
    """A secret the user stores with `aai-gateway auth set ID --secret NAME`."""

    name: str
    what: str


@dataclass(frozen=True)
class VariableToSet:
    """A variable of the gateway's environment the user sets."""

    variable: str
    what: str


@dataclass
class ConvertedValues:
    env: dict[str, Any] = field(default_factory=dict)
    headers: dict[str, Any] = field(default_factory=dict)
    moved: dict[str, str] = field(default_factory=dict, repr=False)
    """Secret name → the literal value that moves into the keyring. Never printed."""
    secrets_to_set: list[SecretToSet] = field(default_factory=list)
    variables_to_set: list[VariableToSet] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def workspace_of(server: FoundServer, settings: ImportSettings) -> Path | None:
    """The project folder the client fills `${workspaceFolder}` with, where the import can tell."""
    if settings.workspace is not None:
        return settings.workspace
    if server.project is not None:
        return Path(server.project)
    folder = server.config_file.parent
    if folder.name in _PROJECT_FOLDERS and folder.parent != settings.home:
        return folder.parent
    return folder if server.config_file.name == ".mcp.json" else None


def process_fields(server: FoundServer, settings: ImportSettings) -> dict[str, Any]:
    """The execution's command, arguments and folder, or its URL, with every reference filled in."""
    resolve = _Resolver(server, settings)
    if server.transport != "stdio":
        assert server.url is not None
        return {"type": "mcp", "url": resolve.text(server.url, "url")}
    assert server.command is not None
    execution: dict[str, Any] = {"type": "mcp", "command": resolve.text(server.command, "command")}
    if server.args:
        execution["args"] = [resolve.text(arg, f"args[{index}]") for index, arg in enumerate(server.args)]
    if server.cwd is not None:
        execution["cwd"] = _absolute_cwd(resolve.text(server.cwd, "cwd"), workspace_of(server, settings))
    return execution


def process_warnings(server: FoundServer, app_id: str, execution: Mapping[str, Any]) -> list[str]:
    """What stays in the descriptor although it looks like a secret, and what is not carried over."""
    warnings = []
    how = (
        f"make the server read it from an environment variable instead, set that variable in the "
        f'descriptor\'s env as {{"secret": "NAME"}} and store it with `aai-gateway auth set {app_id} '
        "--secret NAME`"
    )
    for index in secret_argument_indexes(list(execution.get("args", []))):
        warnings.append(f"args[{index}] looks like a secret; it stays in the descriptor as written: {how}")
    url = execution.get("url")
    if isinstance(url, str) and secret_shaped(url):
        warnings.append(
            "the url looks like it carries a key; it stays in the descriptor as written: if the "
            'server accepts the key in a header, put it there as {"secret": "NAME"} and store it '
            f"with `aai-gateway auth set {app_id} --secret NAME`"
        )
    if server.env_file is not None:
        warnings.append(
            "the client loads variables from an envFile; the gateway does not: add those the server "
            "needs to the descriptor's env"
        )
    if server.include_tools is not None or server.exclude_tools:
        warnings.append("the client's tool filter is not carried over: the gateway offers every tool")
    if server.ignored_keys:
        warnings.append(f"not carried over: {', '.join(quoted(key) for key in server.ignored_keys)}")
    return warnings


class VariableNames:
    """Names of the gateway's environment variables given out in one run, one app each."""

    def __init__(self) -> None:
        self.owners: dict[str, str] = {}

    def claim(self, preferred: str, app_id: str, *, prefixed: bool = False) -> str:
        """`preferred` as a variable name (`APP_ID_PREFERRED` when `prefixed`, or when another
        app of this run has it)."""
        name = _env_name(f"{app_id}_{preferred}" if prefixed else preferred, upper=prefixed)
        if self.owners.setdefault(name, app_id) != app_id:
            name = _env_name(f"{app_id}_{preferred}", upper=True)
            self.owners.setdefault(name, app_id)
        return name


class ValueConverter:
    """Turns one server's env and headers into descriptor values (see the module docstring)."""

    def __init__(
        self, server: FoundServer, app_id: str, settings: ImportSettings, variables: VariableNames
    ) -> None:
        self.server = server
        self.app_id = app_id
        self.settings = settings
        self.variables = variables
        self.result = ConvertedValues()
        self._secret_names: set[str] = set()

    def convert(self) -> ConvertedValues:
        for key, value in self.server.env.items():
            self.result.env[key] = self._value("env", key, value)
        for key, value in self.server.headers.items():
            self.result.headers[key] = self._value("header", key, value)
        return self.result

    def _value(self, kind: str, key: str, value: ConfigValue) -> Any:
        where = f"{kind} {quoted(key)} of server {quoted(self.server.name)} in {self.server.config_file}"
        references = value.references
        if all(ref.kind == "variable" for ref in references):
            text = _Resolver(self.server, self.settings).text(value, f"{kind} {quoted(key)}")
            if not (text.strip() and looks_like_secret(key, text)):
                return text
            if self.settings.keyring:
                name = self._secret_name(key)
                self.result.moved[name] = text
                return {"secret": name}
            return self._variable(kind, key, f"the value of {where}")
        if len(value.parts) == 1 and references[0].kind == "env":
            reference = references[0]
            if reference.default is not None:
                self.result.warnings.append(
                    f"{kind} {quoted(key)}: the default after ':-' is not carried over; set "
                    f"{reference.name} in the gateway's environment"
                )
            self.result.variables_to_set.append(
                VariableToSet(reference.name, f"as the client's environment had it ({where})")
            )
            return {"env": reference.name}
        what = _needed_value(references, value, where)
        if self.settings.keyring:
            name = self._secret_name(key)
            self.result.secrets_to_set.append(SecretToSet(name, what))
            return {"secret": name}
        return self._variable(kind, key, what)

    def _variable(self, kind: str, key: str, what: str) -> dict[str, str]:
        variable = self.variables.claim(key, self.app_id, prefixed=kind != "env")
        self.result.variables_to_set.append(VariableToSet(variable, what))
        return {"env": variable}

    def _secret_name(self, key: str) -> str:
        base = _NOT_SECRET_NAME.sub("_", key)[:120] or "SECRET"
        name, number = base, 2
        while name in self._secret_names:
            name, number = f"{base}_{number}", number + 1
        self._secret_names.add(name)
        assert SECRET_NAME.match(name)
        return name


class _Resolver:
    """Fills in the references of a value that must be literal in a descriptor."""

    def __init__(self, server: FoundServer, settings: ImportSettings) -> None:
        self.server = server
        self.settings = settings
        workspace = workspace_of(server, settings)
        self.variables = {
            "userHome": str(settings.home),
            "pathSeparator": settings.path_separator,
            "/": settings.path_separator,
        }
        if workspace is not None:
            self.variables |= {"workspaceFolder": str(workspace), "workspaceFolderBasename": workspace.name}

    def text(self, value: ConfigValue, where: str) -> str:
        return "".join(
            part if isinstance(part, str) else self._reference(part, where) for part in value.parts
        )

    def _reference(self, reference: Reference, where: str) -> str:
        if reference.kind == "variable" and reference.name in self.variables:
            return self.variables[reference.name]
        if reference.kind == "variable":
            hint = (
                " (import again with --project DIR, the project folder)"
                if "workspace" in reference.name
                else ""
            )
            raise UnimportableError(f"{where} uses {reference.raw}, which only the client knows{hint}")
        if reference.kind == "env":
            found = self.settings.environ.get(reference.name, reference.default)
            if secret_name(reference.name) or (found is not None and secret_shaped(found)):
                raise UnimportableError(
                    f"{where} uses {reference.raw}, a secret that would have to be written into the "
                    "descriptor; change the client's entry so the server reads it from an environment "
                    "variable (env), then import again"
                )
            if found is None:
                raise UnimportableError(
                    f"{where} uses {reference.raw}, which is not set here; set it (or write the value "
                    "in the client's entry) and import again"
                )
            return found
        raise UnimportableError(
            f"{where} uses {reference.raw}, which the client asks for or reads when it starts the "
            "server; the gateway can fill in only env and headers: move it there and import again"
        )


def _absolute_cwd(cwd: str, workspace: Path | None) -> str:
    if PurePosixPath(cwd).is_absolute() or PureWindowsPath(cwd).is_absolute():
        return cwd
    if workspace is None:
        raise UnimportableError(
            f"cwd {quoted(cwd)} is relative to the folder the client runs in; import again with "
            "--project DIR (that folder)"
        )
    return str(workspace / cwd)


def _needed_value(references: tuple[Reference, ...], value: ConfigValue, where: str) -> str:
    if len(value.parts) == 1 and references[0].kind == "input":
        reference = references[0]
        about = f" ({reference.description})" if reference.description else ""
        return f"the VS Code input {quoted(reference.name)}{about}, for {where}"
    if len(value.parts) == 1 and references[0].kind == "file":
        return f"the content of the file {quoted(references[0].name)}, for {where}"
    literal = "".join(part for part in value.parts if isinstance(part, str))
    if secret_shaped(literal):
        return f"the value of {where}, with its references filled in"
    return f"the value of {where}, written there as {quoted(value.raw)} with its references filled in"


def _env_name(text: str, *, upper: bool) -> str:
    name = _NOT_ENV_NAME.sub("_", text)
    name = name.upper() if upper or name != text else name
    name = name if ENV_NAME.match(name) else f"_{name}"
    return name[:120]
