"""Property tests: whatever the entries of a configuration hold, reading answers with servers and
located problems, never an exception, and no problem message repeats a value."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from aai_gateway.importing import CLIENTS, read_config
from aai_gateway.importing.entries import _CODEX_KEYS, _JSON_KEYS

MARK = "Q7~SECRET~MARK"
"""In every generated string value and never in a key: a message that repeats a value shows it.
(`~` keeps it from passing for a transport type or URL scheme, which messages may quote.)"""

KEYS = st.sampled_from(sorted(_JSON_KEYS | _CODEX_KEYS | {"timeout", "sandbox", "oddKey"}))
NAMES = st.text(st.characters(exclude_categories=["Cs"]), max_size=8)
TEXTS = st.sampled_from(
    ["", "npx", "https://a.example/mcp", "http://x/sse", "${A}", "$B", "${env:C}", "${input:d}"]
)
STRINGS = st.builds(lambda text, tail: text + MARK + tail, TEXTS, st.text(max_size=6))
LEAVES = st.one_of(
    st.none(), st.booleans(), st.integers(-5, 5), st.floats(allow_nan=False, allow_infinity=False), STRINGS
)
VALUES = st.recursive(
    LEAVES,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(NAMES, inner, max_size=3),
    max_leaves=8,
)
ENTRIES = st.dictionaries(KEYS, VALUES, max_size=6) | VALUES
DOCUMENTS = st.one_of(
    st.builds(lambda servers: {"mcpServers": servers}, st.dictionaries(NAMES, ENTRIES, max_size=3)),
    st.builds(
        lambda servers, inputs: {"servers": servers, "inputs": inputs},
        st.dictionaries(NAMES, ENTRIES, max_size=3),
        VALUES,
    ),
    st.builds(
        lambda project, servers: {
            "projects": {project: {"mcpServers": servers, "disabledMcpServers": ["a"]}}
        },
        NAMES,
        st.dictionaries(NAMES, ENTRIES, max_size=3),
    ),
)


def assert_keeps_its_promises(path: Path, document: dict[str, Any], client: str | None) -> None:
    report = read_config(path, client)
    assert report.format is not None
    for problem in report.problems:
        assert problem.severity in ("error", "warning")
        assert problem.file == str(path)
        assert problem.pointer.startswith("/")
        assert MARK not in problem.message, problem
        problem.render()
    for server in report.servers:
        assert server.transport in ("stdio", "http", "sse")
        assert (server.command is not None) == (server.transport == "stdio")
        assert (server.url is not None) == (server.transport != "stdio")
        if server.transport == "sse":
            assert any(p.pointer == server.json_pointer and p.severity == "error" for p in report.problems)


@given(DOCUMENTS, st.sampled_from([None, *CLIENTS]))
def test_any_entries_give_servers_and_located_problems_never_an_exception(
    document: dict[str, Any], client: str | None
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "config.json"
        path.write_text(json.dumps(document), encoding="utf-8")
        assert_keeps_its_promises(path, document, client)


@given(st.dictionaries(NAMES, st.dictionaries(KEYS, VALUES, max_size=6), max_size=3))
def test_any_codex_tables_give_servers_and_located_problems_never_an_exception(
    servers: dict[str, Any],
) -> None:
    lines: list[str] = []
    for name, entry in servers.items():
        lines.append(f"[mcp_servers.{json.dumps(name)}]")
        lines += [f"{json.dumps(key)} = {_toml(value)}" for key, value in entry.items() if value is not None]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "config.toml"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        report = read_config(path)
        if report.format is None:  # a generated document TOML cannot hold (null inside an array)
            return
        for problem in report.problems:
            assert MARK not in problem.message, problem
            assert problem.pointer.startswith("mcp_servers")


def _toml(value: Any) -> str:
    """A value as a TOML inline value (null, which TOML lacks, spelled so that parsing fails)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml(item) for item in value) + "]"
    return "{" + ", ".join(f"{json.dumps(k)} = {_toml(v)}" for k, v in value.items()) + "}"
