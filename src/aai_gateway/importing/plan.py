"""What `aai-gateway import` does, decided without touching anything: the plan.

`plan_import` takes what was read (`ConfigReport`s), what the target folder already holds
(`Existing`, by folder name) and the settings, and returns one outcome per server:

- `Written`: a descriptor to write at `<target>/<id>/aai.json` (new, or updating one the import
  wrote before), with the secrets that move into the keyring and what the user must still do;
- `SameServer`: a server already imported under that id from another entry (the same command
  and arguments, or the same URL): imported once;
- `Skipped`: not imported, with the reason (disabled, SSE, the gateway itself, a reference the
  import cannot fill in, a descriptor the gateway's own loader refuses).

Every planned descriptor is checked with the gateway's loader, so what is written is what the
gateway accepts. Carrying out the plan is `apply.py`'s work; printing it, the command line's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any, Final, Literal

from ..descriptor import Source, load_document
from .conversion import (
    ImportSettings,
    SecretToSet,
    UnimportableError,
    ValueConverter,
    VariableNames,
    VariableToSet,
    process_fields,
    process_warnings,
)
from .description import describe_from_server, display_name
from .ids import Existing, IdChooser, ImportSource, base_id, target_of
from .model import ConfigReport, FoundServer

MARKER: Final = "x-imported-from"
"""The descriptor field that says the import wrote it, and from which client entry."""
DESCRIPTOR_FILE: Final = "aai.json"
_GATEWAY_PROGRAMS: Final = frozenset({"aai-gateway", "aai-gateway.exe"})


@dataclass(frozen=True)
class Written:
    server: FoundServer = field(repr=False)  # its values may be credentials
    app_id: str
    path: Path
    document: dict[str, Any]
    choice: Literal["new", "update"]
    moved: dict[str, str] = field(repr=False)
    """Secret name → literal value, for the keyring. Never printed."""
    secrets_to_set: tuple[SecretToSet, ...] = ()
    variables_to_set: tuple[VariableToSet, ...] = ()
    warnings: tuple[str, ...] = ()

    @property
    def referenced_secrets(self) -> tuple[str, ...]:
        execution = self.document["execution"]
        values = [*execution.get("env", {}).values(), *execution.get("headers", {}).values()]
        return tuple(v["secret"] for v in values if isinstance(v, dict) and "secret" in v)


@dataclass(frozen=True)
class SameServer:
    server: FoundServer = field(repr=False)
    app_id: str
    path: Path


@dataclass(frozen=True)
class Skipped:
    server: FoundServer = field(repr=False)
    reason: str


@dataclass
class ImportPlan:
    written: list[Written] = field(default_factory=list)
    same: list[SameServer] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)

    def served_by_gateway(self, config_file: Path) -> list[FoundServer]:
        """The servers of one client file that the gateway serves once the plan is carried out."""
        outcomes: list[Written | SameServer] = [*self.written, *self.same]
        return [o.server for o in outcomes if o.server.config_file == config_file]

    @property
    def moved_values(self) -> list[str]:
        return [value for written in self.written for value in written.moved.values()]


def source_of(server: FoundServer) -> ImportSource:
    return ImportSource(server.client, str(server.config_file), server.name, server.json_pointer)


def plan_import(
    reports: Sequence[ConfigReport], existing: Mapping[str, Existing], settings: ImportSettings
) -> ImportPlan:
    plan = ImportPlan()
    chooser = IdChooser(existing)
    variables = VariableNames()
    servers = [(report, server) for report in reports for server in report.servers]
    # Entries imported before first, so they keep their ids whatever else this run finds.
    servers.sort(key=lambda pair: chooser.previous_id(source_of(pair[1])) is None)
    for report, server in servers:
        reason = _skip_reason(report, server)
        if reason is not None:
            plan.skipped.append(Skipped(server, reason))
            continue
        try:
            execution = process_fields(server, settings)
        except UnimportableError as exc:
            plan.skipped.append(Skipped(server, str(exc)))
            continue
        app_id, choice = chooser.choose(server.name, source_of(server), target_of(execution))
        path = settings.target_dir / app_id / DESCRIPTOR_FILE
        if choice == "same-server":
            plan.same.append(SameServer(server, app_id, path))
            continue
        try:
            values = ValueConverter(server, app_id, settings, variables).convert()
        except UnimportableError as exc:
            plan.skipped.append(Skipped(server, str(exc)))
            continue
        if values.env:
            execution["env"] = values.env
        if values.headers:
            execution["headers"] = values.headers
        document = _document(server, app_id, execution)
        problems = load_document(document, Source(kind="file", location=str(path))).problems
        errors = [p.render() for p in problems if p.severity == "error"]
        if errors:
            plan.skipped.append(Skipped(server, "the descriptor would be refused: " + "; ".join(errors)))
            continue
        warnings = [
            *_passed_over(server, app_id, existing, settings),
            *process_warnings(server, app_id, execution),
        ]
        warnings += values.warnings
        warnings += [
            p.render() for p in problems if p.severity == "warning" and p.pointer != "/execution/url"
        ]
        plan.written.append(
            Written(
                server,
                app_id,
                path,
                document,
                choice,
                values.moved,
                tuple(values.secrets_to_set),
                tuple(values.variables_to_set),
                tuple(warnings),
            )
        )
    return plan


def _document(server: FoundServer, app_id: str, execution: dict[str, Any]) -> dict[str, Any]:
    return {
        "schemaVersion": "1.0",
        "version": "1.0.0",
        "app": {
            "id": app_id,
            "name": {"en": display_name(server.name, app_id)},
            "defaultLang": "en",
            "description": describe_from_server(server.name, execution),
        },
        "execution": execution,
        MARKER: source_of(server).marker(),
    }


def _passed_over(
    server: FoundServer, app_id: str, existing: Mapping[str, Existing], settings: ImportSettings
) -> list[str]:
    """Says so when the id the name gives is a folder the import did not write."""
    base = base_id(server.name)
    found = existing.get(base)
    if app_id == base or found is None or found.source is not None:
        return []
    path = settings.target_dir / base / DESCRIPTOR_FILE
    return [
        f"{path} was not written by aai-gateway import; left as it is: this server is imported as {app_id}"
    ]


def _skip_reason(report: ConfigReport, server: FoundServer) -> str | None:
    if _is_the_gateway(server):
        return "this is the AAI gateway itself"
    errors = [p.message for p in report.errors if _within(p.pointer, server.json_pointer)]
    if errors:
        return "; ".join(errors)
    if server.disabled:
        return f"disabled in {server.client}'s configuration; enable it there and import again to add it"
    return None


def _is_the_gateway(server: FoundServer) -> bool:
    if server.command is None:
        return False
    words = [server.command.raw, *(arg.raw for arg in server.args)]
    programs = {(PureWindowsPath(w).name if "\\" in w else PurePosixPath(w).name).lower() for w in words}
    module = any(words[i : i + 2] == ["-m", "aai_gateway"] for i in range(len(words)))
    return bool(programs & _GATEWAY_PROGRAMS) or module


def _within(pointer: str, server_pointer: str) -> bool:
    return pointer == server_pointer or pointer.startswith((server_pointer + "/", server_pointer + "."))
