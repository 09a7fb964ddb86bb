"""What a query says by its form, whatever its words: a calculation (`17.5% of 2340`), a file
name (`config.yaml`), a web address (`example.com`), a flight number (`LH 400`), each a unit of
concepts (query.py); capitalized words after the first, names of people; and a name spelt out
(`Allgemeiner Deutscher Automobil-Club`), whose initials may be an app's."""

from __future__ import annotations

import re
from collections.abc import Iterator

from .concept_files import CONCEPT_PREFIX

_ARITHMETIC = re.compile(r"\d\s*[-+*/×÷^%=]|[-+*/×÷^=]\s*\d|√\s*\d")
"""A number next to an arithmetic sign (`17.5% of 2340`, `3*7`): a calculation, whatever the words."""
MATH_CONCEPT = CONCEPT_PREFIX + "math"
_FILE_NAME = re.compile(
    r"[\w-]\.(?:ya?ml|json|txt|md|csv|tsv|pdf|docx?|xlsx?|pptx?|py|js|ts|go|rs|java|html?|xml|log|ini|toml|"
    r"conf|cfg|env|sh|sql|png|jpe?g|gif|svg|webp|mp3|mp4|mov|wav|zip|tar|gz)\b",
    re.IGNORECASE,
)
"""A file name (`config.yaml`, `報告.pdf`): the query is about a file, whatever the words."""
FILE_CONCEPT = CONCEPT_PREFIX + "file"
_ADDRESS = re.compile(r"https?://|\bwww\.|\b[\w-]+\.(?:com|org|net|io|dev|app|ai)(?:/|\b)", re.IGNORECASE)
"""A web address (`https://…`, `example.com`): the query is about a web page."""
ADDRESS_CONCEPTS = (CONCEPT_PREFIX + "link", CONCEPT_PREFIX + "browser")


_FLIGHT_NUMBER = re.compile(r"(?<![A-Za-z0-9])([A-Z]{2}) ?([0-9]{2,4})(?![A-Za-z0-9])")
"""An airline's two-letter code and a number (`UA 837`, `NH10便`, `IB6251`), as typed: a flight."""
_NOT_AIRLINES = frozenset(
    {"PR", "ID", "TV", "PC", "IP", "QR", "PS", "HD", "CD", "OS", "MR", "NR", "PO", "NO", "EN", "XP", "RS"}
    | {"EU", "US", "UK", "GB", "DE", "FR", "IT", "ES", "AT", "IN", "NY"}  # places: `EU 27`, `US 2024`
    | {"KB", "MB", "TB", "AM", "PM", "AC", "DC", "PG"}  # units, times, ratings: `MB 100`, `AC 220`
    | {"HP", "LG", "WD", "OK"}  # brands and words: `HP 100`, `WD 40`, `OK 200`
)
"""Two capitals before a number that name something else far more often (`PR 123`, `EU 27`),
though some are airlines too (Air Canada's `AC`): a flight number there needs the word."""
_YEAR = re.compile(r"(?:19|20)[0-9]{2}")
FLIGHT_CONCEPT = CONCEPT_PREFIX + "flight"


def concepts_of_form(text: str, clipped: str) -> Iterator[list[str]]:
    """The concepts `text` names by its form, one list per unit: `text` as typed (signs kept, for
    arithmetic), `clipped` as normalized (normalize.py)."""
    if _ARITHMETIC.search(text):
        yield [MATH_CONCEPT]
    if _FILE_NAME.search(clipped):
        yield [FILE_CONCEPT]
    if _ADDRESS.search(clipped):
        yield list(ADDRESS_CONCEPTS)
    if any(
        code not in _NOT_AIRLINES and not _YEAR.fullmatch(number)
        for code, number in _FLIGHT_NUMBER.findall(text)
    ):
        yield [FLIGHT_CONCEPT]


_CAPITALIZED = re.compile(r"(?<=\S)\s+([A-Z][a-z]{2,})\b")


def person_names(text: str) -> frozenset[str]:
    """Capitalized words after the first of a query (not in German, which capitalizes every
    noun): names of people or places, folded (`text Sarah`, `Rembourser Paul`)."""
    return frozenset(word.casefold() for word in _CAPITALIZED.findall(text))


_NAME_BREAKS = re.compile(r"[\s\-–—.,;:!?¿¡\"'()]+")
_SPELT_OUT = re.compile(r"[A-ZÀ-ÖØ-Þ][^\W\d_]*")
MIN_INITIALS = 3


def initials(text: str) -> str | None:
    """The initials of a query made only of three or more capitalized words (a hyphen also parts
    words): `Allgemeiner Deutscher Automobil-Club`, adac. A name spelt out whose short form is
    what the app is called (written in capitals: query.py); lowercase words (`für`, `de`) may
    come between them, and a letter alone (`Book A Hotel Now`) is no word of a name."""
    words = [word for word in _NAME_BREAKS.split(text) if word]
    capitalized = [word for word in words if len(word) > 1 and _SPELT_OUT.fullmatch(word)]
    if len(capitalized) < MIN_INITIALS or any(
        not (word in capitalized or (word.isalpha() and word.islower() and len(word) <= 3)) for word in words
    ):
        return None
    return "".join(word[0] for word in capitalized).casefold()
