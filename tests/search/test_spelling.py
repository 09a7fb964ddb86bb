"""Names written in katakana meet their Latin spelling through a consonant skeleton."""

from __future__ import annotations

import pytest

from aai_gateway.search.spelling import Loanwords, katakana_key, latin_key


@pytest.mark.parametrize(
    ("latin", "katakana"),
    [
        ("github", "ギットハブ"),
        ("docker", "ドッカー"),
        ("notion", "ノーション"),
        ("slack", "スラック"),
        ("spotify", "スポティファイ"),
        ("dropbox", "ドロップボックス"),
        ("evernote", "エバーノート"),
        ("teams", "チームズ"),
        ("screenshot", "スクリーンショット"),
        ("whatsapp", "ワッツアップ"),
        ("paypal", "ペイパル"),
        ("snapchat", "スナップチャット"),
        ("chrome", "クローム"),
        ("excel", "エクセル"),
    ],
)
def test_a_name_and_its_katakana_have_the_same_skeleton(latin: str, katakana: str) -> None:
    assert latin_key(latin) == katakana_key(katakana)


def test_only_known_names_are_matched_and_short_katakana_is_ignored() -> None:
    names = Loanwords()
    names.add("github", app_name=True)
    names.add("skip", app_name=False)
    assert names.match("ギットハブ") == ["github"]
    assert names.match("スキップ") == ["skip"]
    assert names.match("ノーション") == []
    assert names.match("ギト") == []


def test_a_word_of_an_operation_needs_a_longer_skeleton_than_an_app_name() -> None:
    names = Loanwords()
    names.add("doc", app_name=False)  # skeleton `dk`: too short to be told apart
    names.add("docker", app_name=True)
    assert names.match("ドッカー") == ["docker"]


def test_katakana_with_other_characters_has_no_skeleton() -> None:
    assert katakana_key("ギットハブ1") is None


def test_a_name_whose_r_is_said_in_katakana_is_matched_either_way() -> None:
    names = Loanwords()
    names.add("mercari", app_name=True)  # メルカリ says the r that ドッカー leaves out of docker
    names.add("docker", app_name=True)
    assert names.match("メルカリ") == ["mercari"]
    assert names.match("ドッカー") == ["docker"]


def test_a_typo_keeps_its_first_letter() -> None:
    from aai_gateway.search.spelling import Speller

    speller = Speller(["calendar", "latencia"])
    assert speller.corrections("calender") == ["calendar"]
    assert speller.corrections("valencia") == []  # a city, not a typo of `latencia`


def test_letters_swapped_or_moved_are_one_edit_and_a_four_letter_word_is_corrected_only_so() -> None:
    from aai_gateway.search.spelling import Speller

    speller = Speller(["lydia", "cabify", "sncf", "snap", "lyric"])
    assert speller.corrections("lidya") == ["lydia"]  # two letters changed places
    assert speller.corrections("cabyfi") == ["cabify"]
    assert speller.corrections("snfc") == ["sncf"]  # four letters: a swap only
    assert speller.corrections("snip") == []  # four letters, one other edit: no guess


def test_a_long_word_with_its_first_letter_wrong_is_corrected_when_nothing_else_fits() -> None:
    from aai_gateway.search.spelling import Speller

    speller = Speller(["github", "notion", "calendar", "airtable"])
    assert speller.corrections("fithub") == ["github"]
    assert speller.corrections("irtable") == ["airtable"]  # the first letter dropped
    assert speller.corrections("kalendar") == ["calendar"]
    assert speller.corrections("zzzzzz") == []


def test_a_german_compound_splits_at_its_linking_letters_and_in_three_when_two_will_not_do() -> None:
    from aai_gateway.search.spelling import Speller

    words = [
        "kalender",
        "eintrag",
        "ubersicht",
        "bestellung",
        "nummer",
        "woche",
        "ende",
        "zahnarzt",
        "termin",
        "min",
    ]
    speller = Speller(words)
    assert speller.compound_parts("bestellungsnummer") == ["bestellung", "nummer"]
    assert speller.compound_parts("wochenende") == ["woche", "ende"]
    assert speller.compound_parts("kalendereintragsubersicht") == ["kalender", "eintrag", "ubersicht"]
    assert speller.compound_parts("zahnarzttermin") == ["zahnarzt", "termin"]  # not zahnarzt-ter-min


def test_when_several_words_are_as_near_an_app_name_among_them_is_the_correction() -> None:
    from aai_gateway.search.spelling import Speller

    speller = Speller(
        ["date", "dates", "dated", "deliver", "delivery", "delivered"], names=["datev", "deliveroo"]
    )
    assert speller.corrections("datef") == ["datev"]
    assert speller.corrections("delivero") == ["deliveroo"]
    assert Speller(["date", "dates", "dated", "datum"]).corrections("datef") == []  # no name: no guess


def test_a_compound_whose_first_part_is_a_form_of_a_known_word_is_split() -> None:
    from aai_gateway.search.spelling import Speller

    speller = Speller(["etikett"], also_known=lambda word: word == "rucksende")
    assert speller.compound_parts("rucksendeetikett") == ["rucksende", "etikett"]
    assert Speller(["etikett"]).compound_parts("rucksendeetikett") == []


def test_a_german_verb_prefix_is_no_first_part_of_a_compound() -> None:
    from aai_gateway.search.spelling import Speller

    speller = Speller(["ver", "chicken", "ent", "laden", "haus", "tur"])
    assert speller.compound_parts("verschicken") == []
    assert speller.compound_parts("entladen") == []
    assert speller.compound_parts("haustur") == ["haus", "tur"]


def test_a_compound_with_an_unknown_first_part_is_its_last_part() -> None:
    from aai_gateway.search.spelling import Speller

    speller = Speller([])
    assert speller.compound_head("fernbus", lambda word: word == "bus") == ["bus"]
    assert speller.compound_head("bus", lambda word: word == "bus") == []  # too short to be a compound


def test_an_app_name_spelt_by_ear_is_corrected_when_one_name_sounds_so() -> None:
    from aai_gateway.search.spelling import Speller

    speller = Speller(["gig", "event"], names=["fiverr", "eventbrite", "fever"])
    assert speller.corrections("eventbright") == ["eventbrite"]  # gh not said, ite/ight alike
    assert speller.corrections("fivver") == []  # fiverr and fever sound alike: no guess
    assert Speller([], names=["fiverr"]).corrections("fivver") == ["fiverr"]
    assert Speller([], names=["fiverr"]).corrections("forever") == []


def test_an_app_name_one_edit_away_keeps_its_first_letter_or_one_said_the_same() -> None:
    from aai_gateway.search.spelling import Speller

    speller = Speller(["valencia", "pies", "you"], names=["balearia", "yoopies", "bitpanda", "cinesa"])
    assert speller.near_names("valearia") == ["balearia"]  # b and v are said alike
    assert speller.near_names("sinesa") == ["cinesa"]
    assert speller.near_names("youpies") == ["yoopies"]
    assert speller.near_names("bitpander") == ["bitpanda"]  # two edits in a long word
    assert speller.near_names("malearia") == []  # m is no b
    assert speller.near_names("yoopi") == []  # two edits in a short word
    # a known word nearer than any name is what a long word misspells
    assert Speller(["content"], names=["contacts"]).near_names("contents") == []


def test_a_word_said_like_a_name_but_much_longer_is_not_that_name() -> None:
    from aai_gateway.search.spelling import Speller

    assert Speller([], names=["start"]).corrections("schlecht") == []  # `strt` to English rules
    assert Speller([], names=["start"]).corrections("stahrt") == ["start"]


def test_a_short_app_name_misspelt_is_corrected_when_one_name_fits() -> None:
    from aai_gateway.search.spelling import Speller

    speller = Speller([], whole_names=["edeka", "happn", "nequi", "cookidoo", "rappi"])
    assert speller.corrections("edka") == ["edeka"]  # a letter left out of a four-letter word
    assert speller.corrections("hapn") == ["happn"]
    assert speller.corrections("nekki") == ["nequi"]  # two edits, the same consonants said alike
    assert speller.corrections("cookidu") == ["cookidoo"]
    assert speller.corrections("ydka") == []  # another first letter
    assert speller.corrections("rapiditis") == []  # much longer than the name


def test_a_four_letter_word_is_a_short_name_only_with_a_letter_left_out() -> None:
    from aai_gateway.search.spelling import Speller

    speller = Speller([], whole_names=["helm", "list", "book", "happn"])
    assert speller.corrections("help") == []  # one letter changed: a word of its own
    assert speller.corrections("lost") == []
    assert speller.corrections("bock") == []
    assert speller.corrections("hapn") == ["happn"]


def test_words_of_longer_names_and_aliases_are_no_short_names() -> None:
    from aai_gateway.search.spelling import Speller

    # `home` of Home Assistant, the alias `helm`: words people write for themselves
    speller = Speller([], names=["home", "helm", "mail", "media"])
    assert [speller.corrections(word) for word in ("hope", "help", "main", "mudo")] == [[], [], [], []]


def test_a_word_said_like_a_short_name_but_spelt_otherwise_is_not_that_name() -> None:
    from aai_gateway.search.spelling import Speller

    speller = Speller([], whole_names=["media", "bikes"])
    assert speller.corrections("mudos") == []  # `md` as media, three edits away
    assert speller.corrections("bocks") == []


def test_a_short_misspelling_that_fits_two_names_is_no_correction() -> None:
    from aai_gateway.search.spelling import Speller

    assert Speller([], whole_names=["nequi", "nekko"]).corrections("nekki") == []
    assert Speller([], whole_names=["nequi"]).corrections("nekki") == ["nequi"]
