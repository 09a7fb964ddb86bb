"""The regular expressions that find a secret in any of the forms text can carry it in.

Each character of a secret may appear, independently of its neighbours, as:

- itself (and a space also as `+`, the form-encoding of a space; a non-ASCII character also
  as its UTF-8 bytes read as Latin-1 or Windows-1252, by an app that declares the wrong charset);
- percent-encoded: every UTF-8 byte as `%XX`, hex digits in either case, and `%25XX`, `%2525XX`
  when the encoded text was encoded again (a URL in the `next=` parameter of another URL);
- backslash-escaped, with one backslash or more (a JSON string inside a JSON string doubles
  them, up to 15): `\\uXXXX` (UTF-16 units, so surrogate pairs too; any case), `\\xXX` (the
  character below U+0100, or each UTF-8 byte as in a Python bytes repr), `\\u{X…}` and
  `\\UXXXXXXXX` for characters beyond U+FFFF (JavaScript, Python), the short
  escapes `\\n \\t \\r \\b \\f \\v \\0`, and any character that is not a letter or digit
  after a backslash (`\\"`, `\\/`, `\\'`, `\\+`), also as an HTML reference (`\\&quot;`: JSON
  inside HTML);
- an HTML character reference: `&#NN;` and `&#xHH;` (leading zeros, either case, the `;`
  optional as browsers read it), every named reference of HTML5 for that character (`&amp;`,
  `&lt;`, `&quot;`, `&apos;`, `&plus;`, `&sol;`, …), and all of them escaped again
  (`&amp;#43;`).

Base64 is not a per-character encoding: a secret inside a base64 value is found by the run of
characters its bytes produce at each of the three byte alignments, in the standard and the
URL-safe alphabet (`base64_cores`, plain substrings); the scrubber widens such a match to the
neighbouring base64 characters that the secret's bytes share with their neighbours.
"""

from __future__ import annotations

import base64
import contextlib
import html.entities
import re
from functools import lru_cache
from typing import Final

INTRODUCERS: Final = frozenset("%\\&")
"""Every encoded form of a character starts with one of these (or `+`, which stands for a
space): text without them can carry a secret only as it is."""

BASE64_CHARS: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/_-")

_BACKSLASHES: Final = r"\\{1,15}+"
_PERCENT_AGAIN: Final = "(?:25){0,3}"
_AMP_AGAIN: Final = "(?:amp;){0,3}"
# After the first backslash of an escape, the others are taken all at once (possessive): no
# escape body starts with a backslash, and a long run of backslashes must not make the search
# try every split of it.
_MORE_BACKSLASHES: Final = r"\\{0,14}+"
_SHORT_ESCAPES: Final = {"\b": "b", "\f": "f", "\n": "n", "\r": "r", "\t": "t", "\v": "v", "\0": "0"}


def _named_references() -> dict[str, list[str]]:
    by_character: dict[str, list[str]] = {}
    for name, value in html.entities.html5.items():
        if len(value) == 1:
            by_character.setdefault(value, []).append(name)
    return by_character


_NAMED_REFERENCES: Final = _named_references()


@lru_cache(maxsize=256)
def secret_pattern(secret: str) -> re.Pattern[str]:
    """The pattern of every textual form of `secret`. Each form of its first character starts
    with a literal character (the character itself, `%`, `\\`, `&` or `+`), so the regex
    engine skips quickly to the places where a match may start."""
    first = "|".join(re.escape(lead) + prefix + body for lead, prefix, body in _character_forms(secret[0]))
    return re.compile(f"(?:{first})" + "".join(_character_group(c) for c in secret[1:]))


def base64_cores(secret: str, min_chars: int) -> list[str]:
    """The base64 characters that encode `secret` whatever bytes come before and after it: for
    each alignment, the characters of the groups made of the secret's bytes alone (in both
    alphabets), when there are at least `min_chars` of them."""
    data = secret.encode("utf-8", "surrogatepass")
    cores: list[str] = []
    for offset in range(3):
        encoded = base64.b64encode(b"\0" * offset + data).decode("ascii")
        start = 4 if offset else 0
        end = (offset + len(data)) // 3 * 4
        core = encoded[start:end]
        if len(core) >= min_chars:
            cores += [core, core.replace("+", "-").replace("/", "_")]
    return list(dict.fromkeys(cores))


@lru_cache(maxsize=4096)
def _character_group(c: str) -> str:
    forms = (re.escape(lead) + prefix + body for lead, prefix, body in _character_forms(c))
    return "(?:" + "|".join(forms) + ")"


@lru_cache(maxsize=4096)
def _character_forms(c: str) -> tuple[tuple[str, str, str], ...]:
    """(first character, repeatable part, the rest) of every form of `c`, as regexes but the
    first character."""
    # A backslash is itself with any number of backslashes escaping it (not possessive: the
    # secret may hold several in a row).
    forms = [(c, r"\\{0,15}" if c == "\\" else "", "")]
    if c == " ":
        forms.append(("+", "", ""))
    data = c.encode("utf-8", "surrogatepass")
    for misread in _misread(data):
        forms.append((misread[0], "", re.escape(misread[1:])))
    percent = "%".join(_hex(b, 2) if i == 0 else _PERCENT_AGAIN + _hex(b, 2) for i, b in enumerate(data))
    forms.append(("%", _PERCENT_AGAIN, percent))
    forms.append(("\\", _MORE_BACKSLASHES, "(?:" + "|".join(_escapes(c, data)) + ")"))
    forms.append(("&", _AMP_AGAIN, "(?:" + "|".join(_references(c)) + ")"))
    return tuple(forms)


def _misread(data: bytes) -> list[str]:
    """A non-ASCII character's UTF-8 bytes read as Latin-1 or Windows-1252 (an app that
    declares the wrong charset)."""
    if len(data) == 1:
        return []
    found = [data.decode("latin-1")]
    with contextlib.suppress(UnicodeDecodeError):  # bytes Windows-1252 leaves undefined
        found.append(data.decode("cp1252"))
    return list(dict.fromkeys(found))


def _escapes(c: str, data: bytes) -> list[str]:
    """What may follow the backslashes that escape `c`."""
    code = ord(c)
    escapes = [
        _BACKSLASHES.join("u" + _hex(unit, 4) for unit in _utf16_units(c)),
        _BACKSLASHES.join("x" + _hex(b, 2) for b in data),
    ]
    if code > 0xFFFF:  # JavaScript's and Python's escapes of characters beyond 16 bits
        escapes += [r"u\{0{0,3}" + _hex(code, 1) + r"\}", "U" + _hex(code, 8)]
    if 0x80 <= code < 0x100:
        escapes.append("x" + _hex(code, 2))
    if c in _SHORT_ESCAPES:
        escapes.append(_SHORT_ESCAPES[c])
    if not c.isalnum() and c != "\\":  # `\"`, also in HTML made of JSON: `\&quot;`
        escapes += [re.escape(c), "&" + _AMP_AGAIN + "(?:" + "|".join(_references(c)) + ")"]
    return escapes


def _references(c: str) -> list[str]:
    """What may follow `&` in an HTML character reference to `c`."""
    code = ord(c)
    return [
        f"#0{{0,6}}{code};?",
        "#[xX]0{0,6}" + _hex(code, 1) + ";?",
        *(re.escape(name) for name in _NAMED_REFERENCES.get(c, [])),
    ]


def _hex(number: int, width: int) -> str:
    """`number` in hex, at least `width` digits, each letter in either case."""
    return "".join(f"[{d.upper()}{d}]" if d.isalpha() else d for d in f"{number:0{width}x}")


def _utf16_units(c: str) -> list[int]:
    data = c.encode("utf-16-be", "surrogatepass")
    return [int.from_bytes(data[i : i + 2], "big") for i in range(0, len(data), 2)]
