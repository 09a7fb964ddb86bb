"""Descriptor text as agents and people are shown it: without what a reader cannot see, whichever
dialect wrote it, with a warning at the pointer of each text that changed."""

from __future__ import annotations

import json

import pytest

from aai_gateway.descriptor.shown_text import check_shown_text, escaped_hidden, shown_text, visible_text
from tests.descriptor.helpers import load, valid_a, valid_b, valid_c, with_changes

HIDDEN = "\x07\u202e\u200b\u2060\ufeff\u00ad\u180e\u2063\u206a\ufff9\U000e0041"
"""BEL, a bidi override, a zero-width space, a word joiner, a byte-order mark, a soft hyphen, the
Mongolian vowel separator, an invisible separator, a deprecated format character, an interlinear
annotation anchor and a tag character."""


def test_every_character_a_reader_cannot_see_is_removed_and_escape_sequences_whole() -> None:
    assert shown_text(f"Re{HIDDEN}ad \x1b[31mred\x1b]0;title\x07 now") == "Read red now"


def test_the_joiners_emoji_and_scripts_need_stay() -> None:
    family, persian = "👨\u200d👩\u200d👧", "می\u200cخواهم"
    assert shown_text(f"{family} {persian}") == f"{family} {persian}"


def tagged(letters: str) -> str:
    """The black flag, `letters` as tag characters, and the cancel tag."""
    return "\U0001f3f4" + "".join(chr(0xE0000 + ord(letter)) for letter in letters) + "\U000e007f"


def test_the_three_flags_spelt_with_tag_characters_stay_and_any_other_tag_text_goes() -> None:
    flags = f"{tagged('gbeng')} {tagged('gbsct')} {tagged('gbwls')}"
    assert shown_text(f"English {flags}") == f"English {flags}"
    assert escaped_hidden(flags) == flags
    assert list(check_shown_text(flags, "/description", "description")) == []
    assert shown_text(f"x{tagged('ignoreall')}y") == "x\U0001f3f4y"
    assert shown_text(f"x{tagged('gbengx')}y") == "x\U0001f3f4y"


def test_printable_text_is_returned_as_it_is_and_one_line_text_loses_its_line_breaks() -> None:
    text = "Plain text — 中文, déjà vu"
    assert shown_text(text) is text
    assert shown_text("two\r\nlines\tand a tab") == "two\nlines\tand a tab"
    assert shown_text("two\r\nlines\tand a tab", one_line=True) == "two lines and a tab"


def test_a_warning_says_what_was_removed_where_and_that_a_one_line_text_loses_its_breaks() -> None:
    warnings = list(
        check_shown_text(f"a{HIDDEN}\x1b[2J\nb", "/app/description", "description", one_line=True)
    )

    assert [(p.pointer, p.severity) for p in warnings] == [("/app/description", "warning")] * 3
    assert [p.message for p in warnings] == [
        "description: 1 terminal escape sequence removed where agents read it",
        f"description: {len(HIDDEN)} invisible or control characters removed where agents read it",
        "description: shown on one line (its line breaks and tabs as spaces)",
    ]
    assert list(check_shown_text("plain", "/x", "name")) == list(check_shown_text(None, "/x", "name")) == []


@pytest.mark.parametrize(
    ("document", "pointers"),
    [
        (
            with_changes(
                valid_c(),
                ("/app/name/en", f"Notes{HIDDEN}"),
                ("/app/description", f"Note\ntaking{HIDDEN}"),
                ("/app/aliases", [f"me{HIDDEN}mo"]),
                ("/tools/0/description", f"Search{HIDDEN}\nnotes"),
                ("/tools/0/annotations", {"title": f"Search\n{HIDDEN}"}),
            ),
            [
                "/app/name/en",
                "/app/description",
                "/app/aliases/0",
                "/tools/0/description",
                "/tools/0/annotations/title",
            ],
        ),
        (
            with_changes(
                valid_a(),
                ("/app/name", f"Notes{HIDDEN}|笔记"),
                ("/app/description", f"Note\ntaking{HIDDEN}"),
                ("/app/aliases", [f"me{HIDDEN}mo"]),
                ("/tools/0/description", f"Search{HIDDEN}\nnotes"),
            ),
            ["/app/name", "/app/description", "/app/aliases/0", "/tools/0/description"],
        ),
        (
            with_changes(
                valid_b(),
                ("/name", f"Notes{HIDDEN}|笔记"),
                ("/description", f"Note\ntaking{HIDDEN}"),
                ("/aliases", [f"me{HIDDEN}mo"]),
                ("/platforms/linux/tools/0/description", f"Search{HIDDEN}\nnotes"),
            ),
            ["/name", "/description", "/aliases/0", "/platforms/linux/tools/0/description"],
        ),
    ],
    ids=["dialect C", "dialect A", "dialect B"],
)
def test_each_dialects_texts_load_cleaned_with_a_warning_at_each_pointer(
    document: dict[str, object], pointers: list[str]
) -> None:
    result = load(document)

    app = result.descriptor
    assert app is not None, result.problems
    assert app.names.primary == "Notes" and app.description == "Note taking" and app.aliases == ("memo",)
    tool = next(t for t in app.tools if t.name == "search")
    assert tool.description == "Search\nnotes"  # an operation's description keeps its lines
    if tool.annotations is not None:
        assert tool.annotations.title == "Search"
    warned = {p.pointer for p in result.warnings if "where agents read it" in p.message}
    assert warned == set(pointers)


def test_invisible_characters_str_isprintable_lets_through_are_removed_too() -> None:
    """Variation selectors beyond U+E0100 spell 256 invisible byte values ("variation-selector
    smuggling"); Hangul fillers and the combining grapheme joiner show nothing either."""
    smuggled = "Sly" + "".join(chr(0xE0100 + byte) for byte in b"hi") + "\u3164\u115f\u034f\U0001d173"
    assert shown_text(smuggled) == "Sly"
    assert shown_text("✔\ufe0f ok") == "✔\ufe0f ok"  # emoji presentation stays


def test_what_is_shown_as_it_is_escapes_what_a_reader_cannot_see_as_the_same_json_value() -> None:
    value = {"enum": [f"a{HIDDEN}b", "line\u2028break", "😀 é 中"]}
    text = escaped_hidden(json.dumps(value, ensure_ascii=False))

    assert json.loads(text) == value
    assert all(char.isprintable() for char in text) and "😀 é 中" in text
    assert escaped_hidden("two\nlines\tand a tab") == "two\nlines\tand a tab"


def test_a_name_of_nothing_but_invisible_characters_is_an_error() -> None:
    result = load(with_changes(valid_c(), ("/app/name/en", "\u200b\u2060")))

    assert result.descriptor is None
    assert [(p.pointer, p.message) for p in result.errors] == [
        ("/app/name/en", "name holds only characters a reader cannot see; write it in letters")
    ]


def test_a_cut_through_a_flag_leaves_none_of_its_tag_characters() -> None:
    flag = tagged("gbeng")
    for keep in range(1, len(flag) + 1):
        text, _ = visible_text("ab" + flag, max_chars=2 + keep)
        assert not any(0xE0000 <= ord(char) <= 0xE0FFF for char in text) or text == "ab" + flag, keep
    assert visible_text("ab" + flag + "cd", max_chars=10)[0] == "ab" + flag + "…"
