"""How text becomes terms: the same for descriptors and queries."""

from __future__ import annotations

from aai_gateway.search.tokens import analyze, fold_word


def terms(text: str, *, pairs: bool = False) -> list[str]:
    return analyze(text, pairs=pairs).terms


def test_camel_snake_and_kebab_names_give_their_words_and_their_words_joined() -> None:
    assert set(terms("createTodoTask")) >= {"creat", "todo", "task", "createtodotask"}
    assert set(terms("jira_create_issue")) >= {"jira", "creat", "issu", "jiracreateissu"}
    assert set(terms("send-channel-message")) >= {"send", "channel", "messag"}
    assert set(terms("HassTurnOff")) >= {"hass", "turn", "off", "hassturnoff", "turnoff"}


def test_a_hyphenated_word_is_also_its_joined_form() -> None:
    assert "todo" in terms("to-do")
    assert "email" in terms("e-mail")


def test_words_written_apart_are_joined_only_when_asked_for_queries() -> None:
    assert "todo" not in terms("to do")
    assert "todo" in terms("to do", pairs=True)


def test_words_are_case_and_accent_folded_and_stemmed() -> None:
    assert terms("Tasks") == terms("task")
    assert fold_word("Tâche") == "tache"
    assert terms("k8s S3 12306") == ["k8s", "s3", "12306"]


def test_chinese_gives_characters_and_pairs_of_characters() -> None:
    assert terms("待办事项") == ["待", "办", "事", "项", "待办", "办事", "事项"]


def test_traditional_chinese_is_folded_to_simplified() -> None:
    assert terms("待辦") == terms("待办")
    assert terms("日曆") == terms("日历")


def test_kana_gives_the_word_and_its_pairs_and_hiragana_meets_katakana() -> None:
    assert terms("タスク") == ["タスク", "タス", "スク"]
    assert terms("りまいんだー") == terms("リマインダー")


def test_a_particle_is_not_a_term_and_does_not_stick_to_the_next_word() -> None:
    assert terms("次の曲にスキップ") == ["次", "曲", "スキップ", "スキ", "キッ", "ップ"]


def test_scripts_never_share_a_term() -> None:
    analyzed = analyze("S3バケット一覧")
    assert analyzed.words == ["s3"]
    assert {"バケット", "一", "覧", "一覧"} <= set(analyzed.terms)


def test_an_elided_article_and_an_english_ending_after_an_apostrophe_are_no_terms() -> None:
    assert analyze("l'agenda d'aujourd'hui").words == ["agenda", "aujourd", "hui"]
    assert analyze("what's on").words == ["what", "on"]
    assert analyze("don't forget, I'll").words == ["don", "forget", "i"]
    assert "lagenda" not in terms("l'agenda")


def test_a_word_that_stems_to_an_english_function_word_keeps_its_form() -> None:
    assert analyze("Withings").words == ["withings"]  # not `with`
    assert analyze("others").words == ["other"]


def test_every_word_of_the_shipped_lexicon_has_the_shape_the_tokenizer_gives_it() -> None:
    from aai_gateway.search.concept_files import load_source
    from aai_gateway.search.normalize import clip_field
    from aai_gateway.search.tokens import word_shape

    source = load_source()
    words = {word for concept in source.concepts for terms in concept.terms.values() for word in terms}
    words |= {word for concept in source.concepts for terms in concept.query_terms.values() for word in terms}
    words |= set(source.plain_words) | {"Éclair", "e-mail", "pull request", "Zug fahren", "naïve café"}
    words |= {"ǆungla", "abŀcd", "ªb"}  # letters the tokenizer rewrites (NFKC)
    # capitalized Latin words and phrases, and what is not one (camelCase, capitals)
    words |= {"Mittelohrentzündung", "Continuous Integration", "Île", "McDonald", "PDF", "Straße"}
    words |= {"a" * 4001, "Straße " * 700 + "Zug", "予" * 4001}  # longer than a field is read
    # CJK words: scripts joined, hiragana with a long vowel, Traditional Chinese, Hangul, and
    # characters NFKC rewrites (half-width katakana, a compatibility ideograph)
    words |= {"予約する", "らーめん", "電子郵件", "메시지", "ｶﾀｶﾅ", "豈", "ノート型pc", "東京 駅"}
    for word in sorted(words):
        analyzed = analyze(clip_field(word))
        assert word_shape(word) == (analyzed.words, analyzed.surfaces, analyzed.stretches), word
