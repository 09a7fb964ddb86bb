"""config.toml's [consent] table: defaults, every entry form, and problems that name file, key and line."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from aai_gateway.consent import (
    AutoAllow,
    ConfigProblem,
    ConsentConfig,
    ConsentTarget,
    LoadedConfig,
    describe,
    evaluate,
    load_config,
    parse_config_text,
)
from aai_gateway.consent import config as config_module
from tests.consent.apps import EVIL, GOOD, NOTES_ID, bundled_app, local_app, web_app

CALLER = "Claude Code"


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def only_problem(loaded: LoadedConfig) -> ConfigProblem:
    assert len(loaded.problems) == 1, [p.render() for p in loaded.problems]
    return loaded.problems[0]


# --------------------------------------------------------------------------- files


def test_a_missing_file_gives_the_defaults_and_no_problems(tmp_path: Path) -> None:
    loaded = load_config(tmp_path / "config.toml")
    assert loaded.config == ConsentConfig(always_ask=False, auto_allow=())
    assert loaded.problems == () and not loaded.found
    assert "no " in loaded.summary() and "consent defaults" in loaded.summary()


def test_a_full_file_is_read_into_settings_and_entries(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        f"""\
        [server]            # other tables belong to other parts of the gateway
        anything = 1

        [consent]
        always_ask = true

        [consent.auto_allow]
        apps = ["{NOTES_ID}", "https://API.Example.com:443/"]
        tools = ["com.github.api/searchRepositories", "https://api.example.com/search/deep"]
        """,
    )
    loaded = load_config(path)
    assert loaded.problems == () and loaded.found and loaded.path == str(path)
    assert loaded.config == ConsentConfig(
        always_ask=True,
        auto_allow=(
            AutoAllow(NOTES_ID, None, NOTES_ID),
            AutoAllow(GOOD, None, "https://API.Example.com:443/"),
            AutoAllow("com.github.api", "searchRepositories", "com.github.api/searchRepositories"),
            AutoAllow(GOOD, "search/deep", "https://api.example.com/search/deep"),
        ),
    )


def test_a_file_without_a_consent_table_gives_the_defaults(tmp_path: Path) -> None:
    loaded = load_config(write(tmp_path, "[server]\nport = 1\n"))
    assert loaded.config == ConsentConfig() and loaded.problems == () and loaded.found


def test_the_documented_example_parses_without_problems_and_means_what_the_text_says() -> None:
    text = describe()
    block = text[text.index("    [consent]\n") :].split("\n\n")
    example = textwrap.dedent("\n".join(block[:2]))
    loaded = parse_config_text(example)
    assert loaded.problems == ()
    assert loaded.config.always_ask is False
    assert {(e.app, e.tool) for e in loaded.config.auto_allow} == {
        ("dev.aai.example.notes", None),
        (GOOD, None),
        ("com.github.api", "searchRepositories"),
        (GOOD, "search"),
    }
    for words in ("always_ask", "auto_allow", "Unknown Client", "never a web descriptor", "first match wins"):
        assert words in text


def test_invalid_toml_names_the_file_and_line_and_falls_back_to_the_defaults(tmp_path: Path) -> None:
    path = write(tmp_path, "[consent]\n\nalways_ask = ture\n")
    loaded = load_config(path)
    problem = only_problem(loaded)
    assert loaded.config == ConsentConfig()
    assert problem.file == str(path) and problem.key == "" and problem.line == 3
    assert problem.render().startswith(f"{path}:3: is not valid TOML: ")
    assert "(at line 3, column" in problem.message and "using consent defaults" in problem.message


def test_toml_cut_short_is_reported_without_a_line_when_the_parser_gives_none() -> None:
    problem = only_problem(parse_config_text('[consent.auto_allow]\napps = ["a",\n', "config.toml"))
    assert problem.line is None
    assert problem.render().startswith("config.toml: is not valid TOML: ")
    assert "end of document" in problem.message


TRUSTING = '[consent.auto_allow]\napps = ["dev.aai.example.notes"]\n[elsewhere]\n'


@pytest.mark.parametrize(
    ("hostile", "reason"),
    [
        ("x = " + "[" * 2_000 + "]" * 2_000 + "\n", "arrays or tables nested too deep to read"),
        ("x = " + "{a=" * 2_000 + "1" + "}" * 2_000 + "\n", "arrays or tables nested too deep to read"),
        ("x = 1" + "0" * 5_000 + "\n", "an integer of more than 4300 digits"),
    ],
    ids=["arrays nested 2000 deep", "inline tables nested 2000 deep", "a 5001-digit integer"],
)
def test_content_the_toml_parser_cannot_take_gives_the_defaults_and_one_problem(
    tmp_path: Path, hostile: str, reason: str
) -> None:
    path = tmp_path / "config.toml"
    path.write_text(TRUSTING + hostile, encoding="utf-8")

    loaded = load_config(path)

    assert loaded.config == ConsentConfig()  # the trusted app in the same file is not trusted
    problem = only_problem(loaded)
    assert problem.render() == f"{path}: holds {reason}; using consent defaults"


def test_a_wrong_value_too_large_to_write_out_is_still_a_problem_of_its_key() -> None:
    loaded = parse_config_text("[consent]\nalways_ask = 0x" + "f" * 5_000 + "\n", "config.toml")

    assert loaded.config == ConsentConfig()
    assert only_problem(loaded).render() == (
        "config.toml:2: consent.always_ask: must be true or false, "
        "not a number (too large to show); using false"
    )


def test_a_value_no_check_foresaw_gives_the_defaults_not_a_crash(monkeypatch: pytest.MonkeyPatch) -> None:
    def explode(*_args: object) -> ConsentConfig:
        raise OverflowError("unforeseen")

    monkeypatch.setattr(config_module._Reader, "read", explode)

    loaded = parse_config_text(TRUSTING, "config.toml")

    assert loaded.config == ConsentConfig()
    assert only_problem(loaded).render() == (
        "config.toml: cannot be applied (OverflowError: unforeseen); using consent defaults"
    )


def test_a_file_that_is_not_utf8_is_a_problem_not_a_crash(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_bytes(b"[consent]\nalways_ask = \xff\n")
    loaded = load_config(path)
    assert "not UTF-8" in only_problem(loaded).message and loaded.config == ConsentConfig()


def test_a_path_that_cannot_be_read_is_a_problem_not_a_crash(tmp_path: Path) -> None:
    (tmp_path / "config.toml").mkdir()
    loaded = load_config(tmp_path / "config.toml")
    problem = only_problem(loaded)
    assert "cannot be read" in problem.message and str(tmp_path) in problem.render()
    assert loaded.config == ConsentConfig()


# --------------------------------------------------------------------------- keys and values


@pytest.mark.parametrize(
    ("text", "key", "line", "message_part"),
    [
        (
            '[consent]\nalways_ask = "yes"\n',
            "consent.always_ask",
            2,
            "must be true or false, not a string 'yes'",
        ),
        ("[consent]\nalways_ask = 1\n", "consent.always_ask", 2, "not a number"),
        ('consent = "on"\n', "consent", 1, "must be a table"),
        ("[consent]\nauto_allow = []\n", "consent.auto_allow", 2, "must be a table"),
        ('[consent.auto_allow]\napps = "dev.a"\n', "consent.auto_allow.apps", 2, "must be a list of strings"),
        (
            "[consent.auto_allow]\ntools = [1]\n",
            "consent.auto_allow.tools[0]",
            2,
            "must be a string, not a number",
        ),
        ('[consent.auto_allow]\napps = [" "]\n', "consent.auto_allow.apps[0]", 2, "is empty"),
        ('[consent.auto_allow]\napps = ["a/b"]\n', "consent.auto_allow.apps[0]", 2, "looks like a tool"),
        ('[consent.auto_allow]\napps = ["my app"]\n', "consent.auto_allow.apps[0]", 2, "whitespace"),
        (
            '[consent.auto_allow]\napps = ["http://api.example.com"]\n',
            "consent.auto_allow.apps[0]",
            2,
            "https only",
        ),
        (
            '[consent.auto_allow]\napps = ["https://api.example.com/search"]\n',
            "consent.auto_allow.apps[0]",
            2,
            "it has a path",
        ),
        (
            '[consent.auto_allow]\napps = ["https://api.example.com?x=1"]\n',
            "consent.auto_allow.apps[0]",
            2,
            "query or fragment",
        ),
        (
            '[consent.auto_allow]\napps = ["https://user@api.example.com"]\n',
            "consent.auto_allow.apps[0]",
            2,
            "is not a web origin",
        ),
        ('[consent.auto_allow]\ntools = ["dev.a"]\n', "consent.auto_allow.tools[0]", 2, "names no tool"),
        ('[consent.auto_allow]\ntools = ["dev.a/"]\n', "consent.auto_allow.tools[0]", 2, "names no tool"),
        ('[consent.auto_allow]\ntools = ["/tool"]\n', "consent.auto_allow.tools[0]", 2, "is not <app id"),
        (
            '[consent.auto_allow]\ntools = ["https://api.example.com"]\n',
            "consent.auto_allow.tools[0]",
            2,
            "names no tool",
        ),
        (
            '[consent.auto_allow]\ntools = ["ftp://api.example.com/x"]\n',
            "consent.auto_allow.tools[0]",
            2,
            "ftp origin never matches",
        ),
    ],
)
def test_a_wrong_value_is_a_problem_naming_the_key_and_line_and_grants_nothing(
    text: str, key: str, line: int, message_part: str
) -> None:
    loaded = parse_config_text(text, "/home/u/.config/aai-gateway/config.toml")
    problem = only_problem(loaded)
    assert (problem.key, problem.line, problem.severity) == (key, line, "error")
    assert message_part in problem.message
    assert problem.render().startswith(f"/home/u/.config/aai-gateway/config.toml:{line}: {key}: ")
    assert loaded.config == ConsentConfig()


def test_one_bad_entry_is_dropped_and_the_good_ones_are_kept() -> None:
    loaded = parse_config_text(
        '[consent.auto_allow]\napps = ["dev.good", 3, "http://x.example", "dev.also"]\n'
    )
    assert [p.key for p in loaded.problems] == ["consent.auto_allow.apps[1]", "consent.auto_allow.apps[2]"]
    assert [e.app for e in loaded.config.auto_allow] == ["dev.good", "dev.also"]


def test_unknown_keys_are_warnings_so_a_misspelt_setting_does_not_pass_silently() -> None:
    loaded = parse_config_text("[consent]\nalwaysask = true\n[consent.auto_allow]\napp = []\n")
    assert [(p.key, p.severity, p.line) for p in loaded.problems] == [
        ("consent.alwaysask", "warning", 2),
        ("consent.auto_allow.app", "warning", 4),
    ]
    assert "known in [consent]: always_ask, auto_allow" in loaded.problems[0].message
    assert "warning:" in loaded.problems[0].render()
    assert loaded.errors == ()
    assert loaded.config == ConsentConfig()


def test_a_problem_with_a_key_set_on_two_lines_has_no_line_rather_than_a_wrong_one() -> None:
    text = '[consent]\nalways_ask = "x"\n[other]\nalways_ask = 1\n'
    assert only_problem(parse_config_text(text)).line is None


def test_surrounding_whitespace_in_an_entry_is_ignored() -> None:
    loaded = parse_config_text('[consent.auto_allow]\napps = [" dev.a "]\ntools = [" dev.a/t "]\n')
    assert loaded.problems == ()
    assert [(e.app, e.tool) for e in loaded.config.auto_allow] == [("dev.a", None), ("dev.a", "t")]


def test_the_summary_lists_the_effective_settings_and_the_problems(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        f"""\
        [consent]
        always_ask = true
        [consent.auto_allow]
        apps = ["{NOTES_ID}", "{GOOD}", "http://bad.example"]
        tools = ["{NOTES_ID}/create"]
        """,
    )
    summary = load_config(path).summary()
    assert summary.splitlines()[0] == f"consent settings from {path}"
    assert "always_ask = true: every execution asks" in summary
    assert f"auto_allow: every tool of the local app {NOTES_ID}" in summary
    assert f"auto_allow: every tool of the web app at {GOOD}" in summary
    assert f"auto_allow: tool 'create' of the local app {NOTES_ID}" in summary
    assert "problem: " in summary and "http://bad.example" in summary
    assert "auto_allow: none" in ConsentConfig().summary()


# --------------------------------------------------------------------------- what entries match


def test_a_web_app_claiming_a_trusted_id_is_not_auto_allowed(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        f"""\
        [consent.auto_allow]
        apps = ["{NOTES_ID}"]
        tools = ["{NOTES_ID}/create"]
        """,
    )
    settings = load_config(path).config
    claimant = web_app(EVIL)
    assert claimant.id == NOTES_ID
    for tool in ("create", "list"):
        assert evaluate(None, ConsentTarget.of(CALLER, claimant, tool), settings).must_ask
        assert evaluate(None, ConsentTarget.of(CALLER, local_app(), tool), settings).allowed
        assert evaluate(None, ConsentTarget.of(CALLER, bundled_app(), tool), settings).allowed


def test_an_origin_entry_matches_the_web_app_there_whatever_id_it_claims_and_nothing_else() -> None:
    settings = parse_config_text(f'[consent.auto_allow]\ntools = ["{GOOD}/list"]\n').config
    assert evaluate(None, ConsentTarget.of(CALLER, web_app(GOOD, "com.any.id"), "list"), settings).allowed
    assert evaluate(None, ConsentTarget.of(CALLER, web_app(GOOD), "create"), settings).must_ask
    assert evaluate(None, ConsentTarget.of(CALLER, web_app(f"{GOOD}:8443"), "list"), settings).must_ask
    assert evaluate(None, ConsentTarget.of(CALLER, web_app(EVIL), "list"), settings).must_ask
