"""Localized app names: pipe strings and BCP 47 maps become one map; lookup falls back in a fixed order."""

from __future__ import annotations

import pytest

from aai_gateway.descriptor.names import (
    LocalizedName,
    from_pipe_string,
    from_tag_map,
    guess_tag,
    normalize_tag,
    primary_language,
)

from .helpers import load, valid_a, valid_c, with_changes

REMINDERS = from_tag_map(
    {"en": "Reminders", "zh-CN": "提醒事项", "zh-TW": "提醒事項", "ja": "リマインダー", "fr": "Rappels"}, "en"
)


# --------------------------------------------------------------------------- pipe strings


def test_a_pipe_string_becomes_a_name_map_with_the_first_name_as_default() -> None:
    names = from_pipe_string("Reminders|提醒事项|Rappels|Erinnerungen")

    assert names.names == {
        "en": "Reminders",
        "zh": "提醒事项",
        "und-x-alt3": "Rappels",
        "und-x-alt4": "Erinnerungen",
    }
    assert names.default_lang == "en"
    assert names.primary == "Reminders"


def test_a_single_name_without_pipes_is_the_only_and_default_name() -> None:
    names = from_pipe_string("Mail")

    assert names.names == {"en": "Mail"}
    assert names.all_names() == ["Mail"]


def test_pipe_segments_are_trimmed_and_empty_ones_dropped() -> None:
    names = from_pipe_string(" Mail | | 邮件 |")

    assert names.all_names() == ["Mail", "邮件"]
    assert names.lookup("zh-CN") == "邮件"


@pytest.mark.parametrize(
    ("name", "tag"),
    [
        ("提醒事项", "zh"),
        ("リマインダー", "ja"),
        ("日本のメモ", "ja"),
        ("미리 알림", "ko"),
        ("Напоминания", "ru"),
        ("Υπενθυμίσεις", "el"),
        ("تذكيرات", "ar"),
        ("תזכורות", "he"),
        ("เตือนความจำ", "th"),
        ("अनुस्मारक", "hi"),
        ("Rappels", "und"),
        ("123", "und"),
    ],
)
def test_the_language_of_a_later_pipe_segment_is_guessed_from_its_script(name: str, tag: str) -> None:
    assert guess_tag(name, first=False) == tag


def test_a_latin_first_name_is_taken_as_english() -> None:
    assert guess_tag("Reminders", first=True) == "en"


def test_two_names_in_the_same_script_keep_both_names() -> None:
    names = from_pipe_string("Mail|邮件|郵件")

    assert names.all_names() == ["Mail", "邮件", "郵件"]
    assert names.lookup("zh-TW") == "邮件"


def test_a_pipe_string_may_start_with_a_non_english_name() -> None:
    names = from_pipe_string("提醒事项|Reminders")

    assert names.default_lang == "zh"
    assert names.primary == "提醒事项"
    assert names.lookup("en-US") == "提醒事项"
    assert names.all_names() == ["提醒事项", "Reminders"]


# --------------------------------------------------------------------------- lookup fallback order


@pytest.mark.parametrize(
    ("locale", "expected"),
    [
        ("zh-TW", "提醒事項"),
        ("zh-CN", "提醒事项"),
        ("ja", "リマインダー"),
        ("fr", "Rappels"),
        ("en", "Reminders"),
    ],
)
def test_an_exact_tag_finds_its_name(locale: str, expected: str) -> None:
    assert REMINDERS.lookup(locale) == expected


@pytest.mark.parametrize(
    ("locale", "expected"), [("ZH-tw", "提醒事項"), ("Fr", "Rappels"), ("zh-cn", "提醒事项")]
)
def test_tags_match_whatever_their_case(locale: str, expected: str) -> None:
    assert REMINDERS.lookup(locale) == expected


def test_a_tag_of_the_same_language_is_found_when_the_exact_one_is_missing() -> None:
    names = from_tag_map({"en": "Reminders", "zh-CN": "提醒事项"}, "en")

    assert names.lookup("zh-TW") == "提醒事项"
    assert names.lookup("zh-Hant-HK") == "提醒事项"
    assert names.lookup("zh") == "提醒事项"


def test_a_bare_language_finds_a_regional_name_and_a_region_finds_the_bare_language() -> None:
    names = from_tag_map({"en": "Color", "pt-BR": "Cor", "de": "Farbe"}, "en")

    assert names.lookup("pt") == "Cor"
    assert names.lookup("de-AT") == "Farbe"
    assert names.lookup("en-GB") == "Color"


@pytest.mark.parametrize("locale", ["ko", "es-ES", "x-klingon", "und", ""])
def test_an_unknown_language_falls_back_to_the_default_language(locale: str) -> None:
    names = from_tag_map({"zh-CN": "提醒事项", "en": "Reminders"}, "en")

    assert names.lookup(locale) == "Reminders"


def test_no_locale_means_the_default_language() -> None:
    names = from_tag_map({"zh-CN": "提醒事项", "en": "Reminders"}, "en")

    assert names.lookup(None) == "Reminders"
    assert names.lookup() == "Reminders"
    assert names.primary == "Reminders"


def test_a_default_language_without_a_name_falls_back_to_the_first_name() -> None:
    names = from_tag_map({"zh-CN": "提醒事项", "en": "Reminders"}, "fr")

    assert names.lookup("ko") == "提醒事项"
    assert names.primary == "提醒事项"


def test_the_exact_tag_wins_over_an_earlier_tag_of_the_same_language() -> None:
    names = from_tag_map({"zh-CN": "提醒事项", "zh-TW": "提醒事項"}, "zh-CN")

    assert names.lookup("zh-TW") == "提醒事項"


def test_the_same_language_wins_over_the_default_language() -> None:
    names = from_tag_map({"en": "Reminders", "fr-CA": "Rappels"}, "en")

    assert names.lookup("fr-FR") == "Rappels"


# --------------------------------------------------------------------------- POSIX locale strings


@pytest.mark.parametrize(
    ("locale", "expected"),
    [
        ("zh_CN.UTF-8", "提醒事项"),
        ("zh_TW.UTF-8", "提醒事項"),
        ("ja_JP.eucJP", "リマインダー"),
        ("fr_FR@euro", "Rappels"),
        ("fr_CA.UTF-8@euro", "Rappels"),
        ("en_US.UTF-8", "Reminders"),
        ("de_DE.UTF-8", "Reminders"),
        ("C", "Reminders"),
        ("POSIX", "Reminders"),
        ("C.UTF-8", "Reminders"),
    ],
)
def test_posix_locale_strings_are_read_as_language_tags(locale: str, expected: str) -> None:
    assert REMINDERS.lookup(locale) == expected


@pytest.mark.parametrize(
    ("tag", "normalized"),
    [
        ("zh_CN.UTF-8", "zh-CN"),
        ("zh-cn", "zh-CN"),
        ("ZH", "zh"),
        ("zh_hant_tw", "zh-Hant-TW"),
        ("sr_RS@latin", "sr-RS"),
        ("es-419", "es-419"),
        ("en-US-x-twain", "en-US-x-twain"),
        ("", "und"),
        (".UTF-8", "und"),
        ("--", "und"),
    ],
)
def test_tags_and_locale_names_normalize_to_bcp47_case(tag: str, normalized: str) -> None:
    assert normalize_tag(tag) == normalized


def test_the_primary_language_of_a_tag_is_its_first_subtag() -> None:
    assert primary_language("zh_TW.UTF-8") == "zh"
    assert primary_language("EN-gb") == "en"


# --------------------------------------------------------------------------- all_names


def test_all_names_puts_the_default_first_then_the_file_order() -> None:
    names = from_tag_map({"zh-CN": "提醒事项", "en": "Reminders", "fr": "Rappels"}, "en")

    assert names.all_names() == ["Reminders", "提醒事项", "Rappels"]


def test_all_names_drops_repeated_names() -> None:
    names = from_tag_map(
        {"en": "Mail", "en-GB": "Mail", "zh-CN": "邮件", "zh-SG": "邮件", "de": "Mail"}, "en"
    )

    assert names.all_names() == ["Mail", "邮件"]


def test_all_names_of_a_pipe_string_drops_repeats_too() -> None:
    assert from_pipe_string("Mail|邮件|Mail|邮件").all_names() == ["Mail", "邮件"]


def test_all_names_leaves_out_empty_names() -> None:
    assert from_tag_map({"en": "Mail", "fr": ""}, "en").all_names() == ["Mail"]


def test_a_localized_name_survives_a_json_round_trip() -> None:
    assert LocalizedName.model_validate_json(REMINDERS.model_dump_json()) == REMINDERS


# --------------------------------------------------------------------------- through the loader


def test_a_dialect_c_default_language_other_than_english_comes_first() -> None:
    document = with_changes(
        valid_c(), ("/app/name", {"en": "Notes", "zh-CN": "笔记"}), ("/app/defaultLang", "zh-CN")
    )

    descriptor = load(document).descriptor

    assert descriptor is not None
    assert descriptor.names.all_names() == ["笔记", "Notes"]
    assert descriptor.names.lookup("de") == "笔记"
    assert descriptor.names.lookup("en-AU") == "Notes"


def test_the_pipe_and_object_forms_of_the_same_names_agree_through_the_loader() -> None:
    a = load(with_changes(valid_a(), ("/app/name", "Notes|笔记|ノート"))).descriptor
    c = load(
        with_changes(valid_c(), ("/app/name", {"en": "Notes", "zh-CN": "笔记", "ja": "ノート"}))
    ).descriptor

    assert a is not None
    assert c is not None
    assert a.names.all_names() == c.names.all_names()
    for locale in ("en", "en_GB.UTF-8", "zh-CN", "zh_TW.UTF-8", "ja-JP", "ko", None):
        assert a.names.lookup(locale) == c.names.lookup(locale), locale


@pytest.mark.parametrize(
    ("locale", "expected"), [("zh-HK", "提醒事項"), ("zh-MO", "提醒事項"), ("zh-SG", "提醒事项")]
)
def test_a_chinese_region_prefers_a_name_in_its_own_script(locale: str, expected: str) -> None:
    names = from_tag_map({"en": "Reminders", "zh-CN": "提醒事项", "zh-TW": "提醒事項"}, "en")
    assert names.lookup(locale) == expected


def test_a_chinese_region_without_a_name_in_its_script_takes_any_chinese_name() -> None:
    names = from_tag_map({"en": "Reminders", "zh-CN": "提醒事项"}, "en")
    assert names.lookup("zh-HK") == "提醒事项"
