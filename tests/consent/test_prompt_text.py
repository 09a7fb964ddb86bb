"""What a consent question shows: every value literally, none able to fake a line of its own."""

from __future__ import annotations

import json
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from aai_gateway.consent.prompt_text import (
    ARGUMENT_LINES,
    BLOCK_INDENT,
    DESCRIPTION_LINES,
    PROMPT_HEADLINE,
    WRAP_WIDTH,
    build_prompt,
    columns,
    shown_block,
    shown_line,
    wrap_words,
)
from tests.consent.apps import question

HOSTILE = '"x" \\ $(touch P) `id` " & do shell script "id" & "'  # short enough for one line
LABELS = ("Agent: ", "App: ", "App id: ", "Described by: ", "Tool: ")
CONSTANT_LINES = (PROMPT_HEADLINE, "", "What the tool does:")


def test_plain_values_are_shown_exactly_under_their_labels() -> None:
    text = build_prompt(question()).text
    assert text.splitlines()[:9] == [
        PROMPT_HEADLINE,
        "",
        "Agent: Claude Code",
        "App: Notes",
        "App id: dev.aai.example.notes",
        "Described by: file:/home/me/apps/notes/aai.json",
        "Tool: add_note",
        "What the tool does:",
        "  Adds a note.",
    ]
    assert text.endswith('Arguments (26 bytes of JSON):\n  {\n    "title": "groceries"\n  }')


def test_quotes_backslashes_and_shell_syntax_are_shown_literally() -> None:
    prompt = build_prompt(question(app_name=HOSTILE, tool_description=HOSTILE, arguments={"q": HOSTILE}))
    assert f"\nApp: {HOSTILE}\n" in prompt.text
    assert f"\n  {HOSTILE}\n" in prompt.text
    assert f"\n  {json.dumps({'q': HOSTILE}, indent=2).splitlines()[1]}\n" in prompt.text
    assert prompt.title == f"AAI Gateway: allow add_note of {HOSTILE[:39]}…?"


def test_a_newline_in_a_one_line_field_is_shown_as_an_escape_not_a_new_line() -> None:
    prompt = build_prompt(question(app_name="Notes\nTool: delete_everything"))
    assert "App: Notes\\nTool: delete_everything" in prompt.text
    assert "\nTool: delete_everything" not in prompt.text


def test_bidi_overrides_and_zero_width_characters_are_shown_as_escapes() -> None:
    assert shown_line("evil\u202etxt.exe\u200b") == "evil\\u202etxt.exe\\u200b"


def test_a_long_description_is_cut_and_says_how_much_is_left_out() -> None:
    description = "\n".join(f"line {n}" for n in range(20))
    lines, hidden = shown_block(description, DESCRIPTION_LINES)
    assert lines == [f"{BLOCK_INDENT}line {n}" for n in range(DESCRIPTION_LINES)]
    assert hidden == 20 - DESCRIPTION_LINES
    assert f"… ({hidden} more lines)" in build_prompt(question(tool_description=description)).text


def test_huge_arguments_show_their_first_lines_and_their_full_size() -> None:
    arguments = {f"k{n}": "v" * 10 for n in range(100)}
    text = build_prompt(question(arguments=arguments)).text
    size = len(json.dumps(arguments, indent=2).encode())
    assert f"Arguments ({size:,} bytes of JSON):" in text
    assert "more lines not shown" in text
    assert len(text.splitlines()) < 12 + DESCRIPTION_LINES + ARGUMENT_LINES


def test_wide_characters_count_two_columns_when_wrapping() -> None:
    assert columns("界") == 2 and columns("a") == 1
    assert wrap_words("界界界", 4, 4) == ["界界", "界"]
    assert wrap_words("", 5, 5) == [""]


def test_lines_break_at_spaces_and_next_to_cjk_characters_never_inside_a_word() -> None:
    assert wrap_words("hello world this is a test", 10, 10) == ["hello", "world this", "is a test"]
    assert wrap_words("使用GitHub搜索仓库的工具", 8, 8) == ["使用", "GitHub搜", "索仓库的", "工具"]
    assert wrap_words("    indented text here", 10, 12) == ["    indented", "text here"]


def test_a_long_path_is_shown_whole_on_its_own_line_never_broken_or_cut() -> None:
    path = "file:/home/someone/projects/a-rather-long-project-name/apps/notes-with-a-long-name/aai.json"
    description = f"Reads {path} and the notes next to it, then writes a summary of every note it found there"
    prompt = build_prompt(question(source=path, tool_description=description))
    lines = prompt.text.split("\n")
    assert f"Described by: {path}" in lines or f"{BLOCK_INDENT}{path}" in lines
    assert f"{BLOCK_INDENT}{path}" in lines  # in the description: a line of its own
    described = [line.strip() for line in lines[lines.index("What the tool does:") + 1 :]][:4]
    assert " ".join(described).startswith(description)  # only spaces were turned into breaks


def test_the_once_only_offer_has_no_remembered_allow() -> None:
    prompt = build_prompt(question(offered=("allow_once", "deny"), offer_remember_deny=False))
    assert [choice.key for choice in prompt.choices] == ["deny", "allow_once"]


def test_every_offer_lists_allows_first_and_denials_last() -> None:
    prompt = build_prompt(question())
    assert [choice.key for choice in prompt.listed] == [
        "allow_once",
        "allow_tool",
        "allow_app",
        "deny",
        "deny_remember",
    ]
    assert prompt.choice("allow_app") is not None
    assert prompt.choice("allow_app").label == "Always allow all tools of Notes"  # type: ignore[union-attr]


def test_an_offer_without_deny_or_with_an_unknown_decision_is_refused() -> None:
    with pytest.raises(ValueError, match="always offers"):
        build_prompt(question(offered=("allow_once",)))
    with pytest.raises(ValueError, match="unknown decisions"):
        build_prompt(question(offered=("allow_once", "deny", "sudo")))


def test_arguments_that_cannot_be_json_are_described_not_crashed_on() -> None:
    looped: dict[str, object] = {}
    looped["self"] = looped
    assert "the arguments cannot be shown" in build_prompt(question(arguments=looped)).text


any_text = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=300)


@given(caller=any_text, app=any_text, tool=any_text, description=any_text, value=any_text)
def test_only_the_gateways_own_labels_start_a_line_and_only_a_single_word_is_too_wide(
    caller: str, app: str, tool: str, description: str, value: str
) -> None:
    prompt = build_prompt(
        question(caller=caller, app_name=app, tool=tool, tool_description=description, arguments={"v": value})
    )
    for line in prompt.text.split("\n"):
        assert (
            line in CONSTANT_LINES
            or line.startswith(LABELS)
            or line.startswith("Arguments (")
            or line.startswith(BLOCK_INDENT)
        ), line
        if sum(columns(char) for char in line) > WRAP_WIDTH:  # only a word that no line can hold
            after_label = line.partition(": ")[2] if line.startswith(LABELS) else line.strip()
            assert " " not in after_label.strip() and not any(columns(c) == 2 for c in after_label), line
        assert not any(invisible(char) for char in line), line
    for one_line in (prompt.title, *(choice.label for choice in prompt.choices)):
        assert not any(invisible(char) for char in one_line), one_line


def invisible(char: str) -> bool:
    return unicodedata.category(char) in ("Cc", "Cf", "Zl", "Zp")
