"""Short spellings of the values the importing tests expect."""

from __future__ import annotations

from pathlib import Path

from aai_gateway.importing import ConfigValue, Reference
from aai_gateway.importing.model import FoundServer

SAMPLES = Path(__file__).parent / "samples"


def lit(text: str) -> ConfigValue:
    return ConfigValue.literal(text)


def lits(*texts: str) -> tuple[ConfigValue, ...]:
    return tuple(ConfigValue.literal(text) for text in texts)


def env(name: str, raw: str | None = None, default: str | None = None) -> Reference:
    return Reference("env", name, raw or f"${{{name}}}", default=default)


def variable(name: str) -> Reference:
    return Reference("variable", name, f"${{{name}}}")


def value(*parts: str | Reference) -> ConfigValue:
    return ConfigValue.joined(parts)


def problems_of(report_problems: object) -> list[tuple[str, str, str]]:
    """(pointer, severity, start of message) of each problem, for compact assertions."""
    assert isinstance(report_problems, tuple)
    return [(p.pointer, p.severity, p.message) for p in report_problems]


def names(servers: tuple[FoundServer, ...]) -> list[str]:
    return [server.name for server in servers]
