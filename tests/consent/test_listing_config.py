"""config.toml's [listing] table: the threshold and the pins, read with the [consent] table by one
reader, and every mistake reported (file, key, line) without stopping anything."""

from __future__ import annotations

import textwrap

from aai_gateway.consent import LoadedConfig, parse_config_text
from aai_gateway.consent.listing_config import DEFAULT_MAX_APPS, ListingConfig


def parsed(text: str) -> LoadedConfig:
    return parse_config_text(textwrap.dedent(text), "config.toml")


def test_a_file_without_a_listing_table_gives_the_default_threshold_and_no_pins() -> None:
    loaded = parsed("[consent]\nalways_ask = true\n")
    assert loaded.listing == ListingConfig(max_apps=DEFAULT_MAX_APPS, pinned=())
    assert loaded.problems == ()


def test_the_listing_table_sets_the_threshold_and_pins_apps_by_id_or_web_origin() -> None:
    loaded = parsed(
        """\
        [listing]
        max_apps = 5
        pinned = ["com.github.api", "https://API.Example.com:443/"]
        """
    )
    assert loaded.problems == ()
    assert loaded.listing == ListingConfig(max_apps=5, pinned=("com.github.api", "https://api.example.com"))


def test_each_mistake_in_listing_is_reported_with_its_key_and_line_and_the_rest_still_applies() -> None:
    loaded = parsed(
        """\
        [consent.auto_allow]
        apps = ["dev.aai.example.notes"]

        [listing]
        max_apps = "many"
        pinned = ["", "http://api.example.com", "https://api.example.com/v1", "com example", 7, "dev.ok"]
        pined = ["typo"]
        """
    )
    problems = {p.key: p for p in loaded.problems}
    assert problems["listing.max_apps"].line == 5
    assert f"using {DEFAULT_MAX_APPS}" in problems["listing.max_apps"].message
    assert problems["listing.pinned[0]"].message == "is empty; ignored"
    assert "https only" in problems["listing.pinned[1]"].message
    assert "has a path" in problems["listing.pinned[2]"].message
    assert "not an app id" in problems["listing.pinned[3]"].message
    assert "must be a string" in problems["listing.pinned[4]"].message
    assert problems["listing.pined"].severity == "warning"
    assert loaded.listing == ListingConfig(max_apps=DEFAULT_MAX_APPS, pinned=("dev.ok",))
    assert [a.app for a in loaded.config.auto_allow] == ["dev.aai.example.notes"]


def test_a_threshold_that_is_no_whole_number_of_apps_takes_the_default() -> None:
    for value in ("-1", "true", "2.5", "100001"):
        loaded = parsed(f"[listing]\nmax_apps = {value}\n")
        assert loaded.listing.max_apps == DEFAULT_MAX_APPS, value
        assert [p.key for p in loaded.problems] == ["listing.max_apps"], value
    assert parsed("[listing]\nmax_apps = 0\n").listing.max_apps == 0  # always bounded


def test_a_listing_value_of_the_wrong_kind_gives_the_listing_defaults() -> None:
    assert parsed("listing = 3\n").listing == ListingConfig()
    assert [p.key for p in parsed("listing = 3\n").problems] == ["listing"]
    loaded = parsed('[listing]\npinned = "com.github.api"\n')
    assert loaded.listing.pinned == () and [p.key for p in loaded.problems] == ["listing.pinned"]


def test_a_file_the_parser_cannot_read_gives_the_listing_defaults_too() -> None:
    loaded = parsed("[listing\nmax_apps = 3\n")
    assert loaded.listing == ListingConfig() and len(loaded.problems) == 1


def test_an_app_pinned_twice_is_listed_once_and_the_second_pin_is_reported() -> None:
    loaded = parsed(
        """\
        [listing]
        pinned = ["dev.ok", "https://api.example.com", " dev.ok ", "https://API.example.com:443"]
        """
    )
    problems = {p.key: p for p in loaded.problems}
    assert loaded.listing.pinned == ("dev.ok", "https://api.example.com")
    assert problems["listing.pinned[2]"].message == "pins 'dev.ok' again (an earlier entry pins it); ignored"
    assert problems["listing.pinned[2]"].severity == "warning"
    assert "pins 'https://api.example.com' again" in problems["listing.pinned[3]"].message
