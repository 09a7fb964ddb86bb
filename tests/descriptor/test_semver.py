"""Semantic versions per semver.org 2.0.0, and the MAJOR.MINOR form only dialect B may use."""

from __future__ import annotations

import itertools
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from aai_gateway.descriptor import semver
from aai_gateway.descriptor.semver import Version, parse_version


def version(text: str) -> Version:
    parsed = parse_version(text)
    assert parsed is not None, text
    return parsed


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("0.0.0", Version(0, 0, 0)),
        ("1.2.3", Version(1, 2, 3)),
        ("10.20.30", Version(10, 20, 30)),
        ("1.0.0-alpha", Version(1, 0, 0, ("alpha",))),
        ("1.0.0-alpha.1", Version(1, 0, 0, ("alpha", "1"))),
        ("1.0.0-0.3.7", Version(1, 0, 0, ("0", "3", "7"))),
        ("1.0.0-x.7.z.92", Version(1, 0, 0, ("x", "7", "z", "92"))),
        ("1.0.0-x-y-z.--", Version(1, 0, 0, ("x-y-z", "--"))),
        ("1.0.0-alpha+001", Version(1, 0, 0, ("alpha",), "001")),
        ("1.0.0+20130313144700", Version(1, 0, 0, (), "20130313144700")),
        ("1.0.0-beta+exp.sha.5114f85", Version(1, 0, 0, ("beta",), "exp.sha.5114f85")),
        ("1.0.0+21AF26D3----117B344092BD", Version(1, 0, 0, (), "21AF26D3----117B344092BD")),
        ("99999999999999999999.0.0", Version(99999999999999999999, 0, 0)),
    ],
)
def test_a_semantic_version_parses_into_its_parts(text: str, expected: Version) -> None:
    parsed = parse_version(text)

    assert parsed is not None
    assert (parsed.major, parsed.minor, parsed.patch, parsed.prerelease, parsed.build) == (
        expected.major,
        expected.minor,
        expected.patch,
        expected.prerelease,
        expected.build,
    )
    assert str(parsed) == text


@pytest.mark.parametrize(
    "text",
    [
        "",
        "1",
        "1.2",
        "1.2.3.4",
        "01.1.1",
        "1.01.1",
        "1.1.01",
        "1.2.3-0123",
        "1.2.3-0123.0123",
        "1.2.3-",
        "1.2.3+",
        "1.2.3-alpha..1",
        "1.2.3-alpha_beta",
        "1.2.3+build+x",
        "+invalid",
        "-1.0.0",
        "v1.2.3",
        " 1.2.3",
        "1.2.3 ",
        "1.2.3\n",
        "1.2.3\r\n",
        "1.2",
        "1.2.3-é",
        "١.٢.٣",
        "1١.2.3",
        "1.2.3-1١",
        "1.2.3+١",
    ],
)
def test_text_that_is_not_a_semantic_version_is_refused(text: str) -> None:
    assert parse_version(text) is None


@pytest.mark.parametrize(("text", "expected"), [("1.0", "1.0.0"), ("0.9", "0.9.0"), ("12.345", "12.345.0")])
def test_two_part_versions_are_read_as_major_minor_zero_when_allowed(text: str, expected: str) -> None:
    parsed = parse_version(text, allow_two_part=True)

    assert parsed is not None
    assert str(parsed) == expected


@pytest.mark.parametrize("text", ["1.0", "0.9"])
def test_two_part_versions_are_refused_unless_allowed(text: str) -> None:
    assert parse_version(text) is None


@pytest.mark.parametrize(
    "text", ["1", "1.0.0.0", "01.0", "1.00", "1.0-beta", "1.0+build", "1.", ".1", "1.0\n"]
)
def test_only_plain_major_minor_is_accepted_as_the_two_part_form(text: str) -> None:
    assert parse_version(text, allow_two_part=True) is None


def test_full_semver_stays_accepted_when_two_parts_are_allowed() -> None:
    assert parse_version("1.0.0-rc.1", allow_two_part=True) == version("1.0.0-rc.1")


SEMVER_ORG_ORDER = [
    "1.0.0-alpha",
    "1.0.0-alpha.1",
    "1.0.0-alpha.beta",
    "1.0.0-beta",
    "1.0.0-beta.2",
    "1.0.0-beta.11",
    "1.0.0-rc.1",
    "1.0.0",
    "1.0.1",
    "1.1.0",
    "1.9.0",
    "1.10.0",
    "2.0.0-0",
    "2.0.0",
    "2.1.0",
    "2.1.1",
    "10.0.0",
]


def test_versions_order_by_semver_org_precedence_including_pre_releases() -> None:
    parsed = [version(text) for text in SEMVER_ORG_ORDER]

    assert sorted(random.Random(7).sample(parsed, k=len(parsed))) == parsed
    for lower, higher in itertools.pairwise(parsed):
        assert lower < higher
        assert higher > lower
        assert lower != higher


def test_numeric_pre_release_identifiers_compare_numerically_and_below_alphanumeric_ones() -> None:
    assert version("1.0.0-2") < version("1.0.0-10")
    assert version("1.0.0-beta.2") < version("1.0.0-beta.10")
    assert version("1.0.0-999") < version("1.0.0-a")
    assert version("1.0.0-a") < version("1.0.0-a.0")


def test_build_metadata_does_not_take_part_in_precedence() -> None:
    assert version("1.0.0+build.1") == version("1.0.0+build.2") == version("1.0.0")
    assert hash(version("1.0.0+a")) == hash(version("1.0.0"))
    assert not version("1.0.0+a") < version("1.0.0+b")


def test_versions_do_not_compare_with_other_types() -> None:
    assert version("1.0.0") != "1.0.0"
    with pytest.raises(TypeError):
        _ = version("1.0.0") < "2.0.0"


identifiers = st.one_of(
    st.integers(min_value=0, max_value=10**6).map(str),
    st.from_regex(r"[0-9]*[A-Za-z-][0-9A-Za-z-]{0,5}", fullmatch=True),
)
versions = st.builds(
    Version,
    st.integers(0, 10**6),
    st.integers(0, 10**6),
    st.integers(0, 10**6),
    st.lists(identifiers, max_size=3).map(tuple),
    st.just(""),
)


@given(versions)
def test_any_version_prints_as_text_that_parses_back_to_it(value: Version) -> None:
    assert parse_version(str(value)) == value


@given(versions, versions)
def test_precedence_is_a_total_order_consistent_with_equality(left: Version, right: Version) -> None:
    assert (left < right) + (left == right) + (left > right) == 1
    if (left.major, left.minor, left.patch) != (right.major, right.minor, right.patch):
        assert (left < right) == (
            (left.major, left.minor, left.patch) < (right.major, right.minor, right.patch)
        )
    elif bool(left.prerelease) != bool(right.prerelease):
        assert (left < right) == bool(left.prerelease)


@pytest.mark.parametrize(
    "text",
    ["1" + "0" * 5000 + ".0.0", "1.0.0-" + "1" + "0" * 5000, "1.0.0+" + "a" * 300, "1" + "0" * 300 + ".0"],
    ids=["5000-digit major", "5000-digit pre-release", "300-character build", "300-digit two-part"],
)
def test_a_version_longer_than_256_characters_is_refused_without_reading_its_numbers(text: str) -> None:
    assert parse_version(text, allow_two_part=True) is None


def test_a_string_too_long_to_be_a_version_is_refused_and_never_kept_by_the_parse_cache() -> None:
    # Versions are parsed through a small cache; a descriptor of megabytes must not park its
    # text there (1,024 of them would hold gigabytes).
    huge = "1." * 500_000 + "0"
    before = semver._parsed.cache_info()
    assert parse_version(huge) is None
    assert parse_version(huge, allow_two_part=True) is None
    after = semver._parsed.cache_info()
    assert (after.hits, after.misses) == (before.hits, before.misses)  # the cache was not even asked
