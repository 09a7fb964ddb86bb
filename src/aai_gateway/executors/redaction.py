"""Removing the credentials a call carried from everything that goes back to the agent.

An app may echo the request it received (httpbin's `/anything`, an error page quoting the
headers, a 401 naming the key it refused), so a result or an error could hand the agent the very
API key, token, App Secret or cookie the gateway added. The auth flow of a call says which values
it put on the request (`CarriesSecrets.secret_values`); a `Scrubber` replaces each of them with
`SECRET_MARKER` wherever it appears:

- as it is, percent-encoded (`quote` and `quote_plus`, any mix of encoded and plain characters,
  hex digits in either case) and JSON-escaped (`\\"`, `\\\\`, `\\/`, `\\uXXXX`, surrogate pairs):
  one pattern per secret in which every character may take any of those forms;
- base64-encoded (standard and URL-safe alphabets), also inside a longer encoded value such as
  `Basic base64(user:password)`: the run of base64 characters the secret produces at each of the
  three byte alignments it can have;
- in JSON results, in every string and object key (after parsing, so escapes are already gone).

Values shorter than `MIN_SECRET_CHARS` are not scrubbed: a cookie `lang=en` or `theme=dark`
travels with the session cookie, and replacing every `en` in a result would wreck it while hiding
nothing. A credential that short is not a secret worth the name; the auth layer warns when one
is configured (`too_short_to_scrub`).
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterable
from functools import lru_cache
from typing import Any, Final, Protocol, runtime_checkable

from ..errors import AaiError

SECRET_MARKER: Final = "[secret removed]"  # noqa: S105 (a marker, not a password)
MIN_SECRET_CHARS: Final = 6
_BASE64_RUN: Final = "[A-Za-z0-9+/_-]"


@runtime_checkable
class CarriesSecrets(Protocol):
    """An httpx auth flow that can say which secret values it put on requests."""

    def secret_values(self) -> Iterable[str]: ...


def too_short_to_scrub(value: str | None) -> bool:
    """A non-empty value shorter than the scrubber's minimum: it would come back unscrubbed."""
    return bool(value) and len(value or "") < MIN_SECRET_CHARS


class Scrubber:
    """Replaces the given secrets (see the module docstring for the forms it finds)."""

    def __init__(self, secrets: Iterable[str | None]) -> None:
        wanted = frozenset(s for s in secrets if s and len(s) >= MIN_SECRET_CHARS)
        self._pattern = _compiled(wanted) if wanted else None

    @classmethod
    def of(cls, auth: object) -> Scrubber:
        """The scrubber for what `auth` (an httpx auth flow, or None) put on its requests."""
        return cls(auth.secret_values() if isinstance(auth, CarriesSecrets) else ())

    def __bool__(self) -> bool:
        return self._pattern is not None

    def text(self, text: str) -> str:
        if self._pattern is None:
            return text
        return self._pattern.sub(SECRET_MARKER, text)

    def value(self, value: Any) -> Any:
        """A JSON value with every string (object keys too) scrubbed."""
        if self._pattern is None:
            return value
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list | tuple):
            return [self.value(item) for item in value]
        if isinstance(value, dict):
            return {self.value(k) if isinstance(k, str) else k: self.value(v) for k, v in value.items()}
        return value

    def error(self, error: AaiError) -> AaiError:
        """`error` with its message and data scrubbed (the same object, so its type, code and
        cause stay)."""
        if self._pattern is not None:
            error.message = self.text(error.message)
            error.args = (error.message,)
            error.data = self.value(error.data)
        return error


@lru_cache(maxsize=64)
def _compiled(secrets: frozenset[str]) -> re.Pattern[str]:
    """One pattern for every form of every secret, longest first (so a secret that contains
    another is removed whole)."""
    forms = sorted({form for secret in secrets for form in _forms(secret)}, key=len, reverse=True)
    return re.compile("|".join(forms))


def _forms(secret: str) -> list[str]:
    return [_textual(secret), *_base64_runs(secret)]


def _textual(secret: str) -> str:
    """The secret with each character as itself, percent-encoded, `+` for a space, or
    JSON-escaped."""
    return "".join(_character(c) for c in secret)


def _character(c: str) -> str:
    encoded = c.encode("utf-8")
    forms = [re.escape(c), "".join(f"%(?i:{b:02x})" for b in encoded)]
    if c == " ":
        forms.append(r"\+")
    json_form = json.dumps(c)[1:-1]  # \" \\ \n \uXXXX (and surrogate pairs for astral characters)
    if json_form != c:
        forms.append(re.escape(json_form))
    if c in '"\\/' or ord(c) > 0x7E or ord(c) < 0x20:
        forms.append("".join(rf"\\u(?i:{unit:04x})" for unit in _utf16_units(c)))
    if c == "/":
        forms.append(r"\\/")
    return "(?:" + "|".join(dict.fromkeys(forms)) + ")"


def _utf16_units(c: str) -> list[int]:
    data = c.encode("utf-16-be")
    return [int.from_bytes(data[i : i + 2], "big") for i in range(0, len(data), 2)]


def _base64_runs(secret: str) -> list[str]:
    """The base64 characters that encode `secret` whatever bytes come before and after it: for
    each alignment, the characters of the groups made of the secret's bytes alone, widened by up
    to three neighbouring base64 characters on each side (the groups it shares with its
    neighbours, and `=` padding)."""
    data = secret.encode("utf-8")
    runs: list[str] = []
    for offset in range(3):
        encoded = base64.b64encode(b"\0" * offset + data).decode("ascii")
        start = 4 if offset else 0
        end = (offset + len(data)) // 3 * 4
        core = encoded[start:end]
        if len(core) < MIN_SECRET_CHARS:
            continue
        for alphabet in (core, core.replace("+", "-").replace("/", "_")):
            runs.append(f"{_BASE64_RUN}{{0,3}}{re.escape(alphabet)}{_BASE64_RUN}{{0,3}}={{0,2}}")
    return runs
