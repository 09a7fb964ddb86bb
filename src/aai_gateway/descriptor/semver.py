"""Semantic versions (semver.org 2.0.0): parsing, ordering, and the two-part form dialect B uses."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache, total_ordering

_SEMVER = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$",
    re.ASCII,  # \d must not match other scripts' digits ("1١.0.0")
)
_TWO_PART = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)$", re.ASCII)

MAX_VERSION_LENGTH = 256
"""Longer strings are not versions (npm's semver draws the same line). Without a limit, a
version of thousands of digits would reach `int()`, which refuses more than 4,300 digits."""


@total_ordering
@dataclass(frozen=True, slots=True)
class Version:
    major: int
    minor: int
    patch: int
    prerelease: tuple[str, ...] = ()
    build: str = ""

    def __str__(self) -> str:
        text = f"{self.major}.{self.minor}.{self.patch}"
        if self.prerelease:
            text += "-" + ".".join(self.prerelease)
        if self.build:
            text += "+" + self.build
        return text

    def _key(self) -> tuple[int, int, int, int, tuple[tuple[int, int | str], ...]]:
        # A release sorts after its pre-releases; numeric identifiers sort before alphanumeric ones.
        pre = tuple((0, int(p)) if p.isdigit() else (1, p) for p in self.prerelease)
        return (self.major, self.minor, self.patch, 0 if self.prerelease else 1, pre)

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, Version):
            return NotImplemented
        return self._key() < other._key()

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Version):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())


def parse_version(text: str, *, allow_two_part: bool = False) -> Version | None:
    """The version, or None if `text` is not semver (nor MAJOR.MINOR where that is allowed) or is
    longer than `MAX_VERSION_LENGTH`."""
    if len(text) > MAX_VERSION_LENGTH:  # before the cache: it must never hold a huge string
        return None
    return _parsed(text, allow_two_part)


@lru_cache(maxsize=1024)  # a first start parses ten thousand versions, most of them alike
def _parsed(text: str, allow_two_part: bool) -> Version | None:
    # A `Version` is immutable: the cache may hand out one twice.
    match = _SEMVER.fullmatch(text)  # not .match: "$" also matches before a trailing newline
    if match:
        major, minor, patch, pre, build = match.groups()
        return Version(int(major), int(minor), int(patch), tuple(pre.split(".")) if pre else (), build or "")
    if allow_two_part:
        two = _TWO_PART.fullmatch(text)
        if two:
            return Version(int(two.group(1)), int(two.group(2)), 0)
    return None
