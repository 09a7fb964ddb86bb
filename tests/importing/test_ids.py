"""App ids of imported servers: derived from the name, stable across runs, never a path, and
the same id for two servers only when they are the same server."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from aai_gateway.descriptor.checks import APP_ID
from aai_gateway.importing.ids import Existing, IdChooser, ImportSource, base_id, target_of

NPX_GITHUB = target_of({"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"]})
DOCKER_GITHUB = target_of({"command": "docker", "args": ["run", "ghcr.io/github/github-mcp-server"]})


def source(file: str, name: str = "github") -> ImportSource:
    return ImportSource("cursor", file, name, f"/mcpServers/{name}")


def usable(app_id: str) -> bool:
    return (
        bool(APP_ID.match(app_id)) and len(app_id) <= 60 and ".." not in app_id and app_id == app_id.lower()
    )


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("github", "github"),
        ("GitHub", "github"),
        ("my server", "my-server"),
        ("docs.internal", "docs.internal"),
        ("Café Notes", "cafe-notes"),
        ("../../etc/passwd", "etc-passwd"),
        ("a/b\\c", "a-b-c"),
        ("..", None),
        ("\x1b[31mred\x07", "31mred"),
        ("CON", "mcp-con"),
        ("nul.txt", "mcp-nul.txt"),
        ("日本語", None),
        ("", None),
    ],
)
def test_an_id_is_the_name_made_safe_for_a_folder_and_a_tool_name(name: str, expected: str | None) -> None:
    app_id = base_id(name)
    assert usable(app_id), app_id
    if expected is None:
        assert app_id.startswith("mcp-") and len(app_id) == 12
    else:
        assert app_id == expected
    assert base_id(name) == app_id  # the same name, the same id


def test_a_very_long_name_is_cut_and_two_such_names_still_get_their_own_ids() -> None:
    first, second = "x" * 500 + "a", "x" * 500 + "b"
    chooser = IdChooser({})
    one, _ = chooser.choose(first, source("f", first), NPX_GITHUB)
    two, _ = chooser.choose(second, source("f", second), DOCKER_GITHUB)
    assert usable(one) and usable(two) and one != two


@given(st.text(max_size=300))
def test_any_name_gives_an_id_with_no_path_separator_or_control_character(name: str) -> None:
    app_id = base_id(name)
    assert usable(app_id)
    assert not any(c in app_id for c in "/\\:\x00") and app_id.isprintable()


def test_the_same_name_with_another_command_gets_a_suffix_that_is_the_same_on_every_run() -> None:
    runs = []
    for _ in range(2):
        chooser = IdChooser({})
        runs.append(
            [
                chooser.choose("github", source("claude.json"), NPX_GITHUB),
                chooser.choose("github", source("config.toml"), DOCKER_GITHUB),
            ]
        )
    assert runs[0] == runs[1]
    [(first, first_choice), (second, second_choice)] = runs[0]
    assert (first, first_choice) == ("github", "new")
    assert second.startswith("github-") and second != first and second_choice == "new"


def test_the_same_server_in_two_files_is_imported_once() -> None:
    chooser = IdChooser({})
    assert chooser.choose("github", source("a.json"), NPX_GITHUB) == ("github", "new")
    assert chooser.choose("github", source("b.json"), NPX_GITHUB) == ("github", "same-server")


def test_an_entry_imported_before_keeps_its_id_even_when_its_command_changed() -> None:
    existing = {
        "github": Existing("github", source("other.json"), NPX_GITHUB),
        "github-1a2b3c4d": Existing("github-1a2b3c4d", source("mine.json"), "an older command"),
    }
    chooser = IdChooser(existing)
    assert chooser.choose("github", source("mine.json"), DOCKER_GITHUB) == ("github-1a2b3c4d", "update")


def test_a_folder_the_import_did_not_write_is_never_taken() -> None:
    chooser = IdChooser({"github": Existing("github", None, None)})
    app_id, choice = chooser.choose("github", source("a.json"), NPX_GITHUB)
    assert app_id.startswith("github-") and choice == "new"
