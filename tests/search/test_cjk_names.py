"""App names misspelt in Chinese (a character of the same sound) or in kana (one edit) are
restored in the query before it is analysed."""

from __future__ import annotations

from aai_gateway.search.cjk_names import NameSounds, name_sounds


def sounds() -> NameSounds:
    return name_sounds(
        [
            "滴滴出行",
            "滴滴打车",
            "饿了么",
            "京东",
            "微信读书",
            "特斯拉",
            "ガーミン",
            "ホットペッパーグルメ",
            "记忆",
        ]
    )


def test_a_chinese_name_typed_with_characters_of_the_same_sound_is_restored() -> None:
    names = sounds()
    assert names.rewrite("地地打车") == "滴滴打车"
    assert names.rewrite("俄了么") == "饿了么"
    assert names.rewrite("京冬买的耳机") == "京东买的耳机"
    assert names.rewrite("特斯啦开空调") == "特斯拉开空调"


def test_a_name_written_right_and_words_that_only_sound_like_a_name_are_left_alone() -> None:
    names = sounds()
    assert names.rewrite("京东") == "京东"
    assert names.rewrite("记一下灵感") == "记一下灵感"  # 一 is a function word, not a typo of 忆
    assert names.rewrite("我想吃饭") == "我想吃饭"


def test_japanese_is_not_read_as_pinyin() -> None:
    assert name_sounds(["网易云音乐"]).rewrite("音楽を止めて") == "音楽を止めて"


def test_a_two_character_word_of_the_index_is_no_misspelt_name() -> None:
    assert name_sounds(["闲鱼"]).rewrite("闲余", known={"闲余"}) == "闲余"
    assert name_sounds(["闲鱼"]).rewrite("闲余") == "闲鱼"


def test_a_kana_name_one_edit_away_or_the_start_of_one_is_restored() -> None:
    names = sounds()
    assert names.rewrite("ガーミソで心拍数") == "ガーミンで心拍数"
    assert names.rewrite("ホットペパー") == "ホットペッパー"
    assert names.rewrite("レシピ") == "レシピ"


def test_a_chinese_name_written_in_pinyin_as_one_word_is_the_name() -> None:
    names = name_sounds(["微信", "闲鱼", "饿了么"])
    assert names.rewrite("weixin send message") == "微信 send message"
    assert names.rewrite("ELEME order") == "饿了么 order"
    assert names.rewrite("xianyu", known={"xianyu"}) == "xianyu"  # a word the index has
    assert names.rewrite("open the door") == "open the door"


def test_a_pinyin_word_the_index_has_by_stem_or_inside_an_identifier_is_not_a_name() -> None:
    names = name_sounds(["预约"])
    assert names.rewrite("yuyue") == "预约"
    assert names.rewrite("yuyue", known={"yuyu"}) == "yuyue"  # the English stem of a word it has
    assert names.rewrite("yuyue_qujian 明天上午") == "yuyue_qujian 明天上午"  # an operation's name
