"""Removing the credentials a call carried from everything that goes back to the agent.

An app may echo the request it received (httpbin's `/anything`, an error page quoting the
headers, a 401 naming the key it refused), so a result or an error could hand the agent the very
API key, token, App Secret or cookie the gateway added. The auth flow of a call says which values
it put on the request (`CarriesSecrets.secret_values`); a `Scrubber` replaces each of them with
`SECRET_MARKER` wherever it appears:

- in text, in every form secret_forms.py lists: as it is, percent-encoded (also encoded twice),
  backslash-escaped (JSON, JavaScript, Python; also escaped twice), as HTML character
  references, base64-encoded (also inside a longer base64 value), each character in any of
  these forms independently of its neighbours;
- in JSON values, in every string and object key (after parsing, so the JSON escapes are gone)
  and in every number whose digits hold a secret (a numeric key echoed as `{"key": 12345678}`):
  such a number becomes the string with the secret removed.

Scrubbing must not cost much even on a 10 MB answer: before the patterns run, a cheap test finds
which secrets may be there at all. Text without `%`, `\\` or `&` (nor `+` when a secret holds a
space) can carry an ASCII secret only as it is, and a base64 form only holds the secret's base64
core as it is: both are plain substring searches; only the patterns of what may be present run,
a window at a time (`SEARCH_WINDOW_CHARS`).

Values shorter than `MIN_SECRET_CHARS` are not scrubbed: a cookie `lang=en` or `theme=dark`
travels with the session cookie, and replacing every `en` in a result would wreck it while hiding
nothing. A credential that short is not a secret worth the name; the auth layer warns when one
is configured (`too_short_to_scrub`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any, Final, Protocol, runtime_checkable

from ..errors import AaiError
from .secret_forms import BASE64_CHARS, INTRODUCERS, base64_cores, secret_pattern

SECRET_MARKER: Final = "[secret removed]"  # noqa: S105 (a marker, not a password)
MIN_SECRET_CHARS: Final = 6
PRECHECK_MIN_CHARS: Final = 4096
"""Shorter text goes straight through the patterns: the substring tests would cost more."""
SEARCH_WINDOW_CHARS: Final = 256 * 1024


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
        wanted = {s for s in secrets if s and len(s) >= MIN_SECRET_CHARS}
        self._secrets = tuple(sorted(wanted, key=lambda s: (-len(s), s)))
        cores = (core for s in self._secrets for core in base64_cores(s, MIN_SECRET_CHARS))
        self._cores = tuple(dict.fromkeys(cores))
        self._introducers = INTRODUCERS | ({"+"} if any(" " in s for s in wanted) else set())

    @classmethod
    def of(cls, auth: object) -> Scrubber:
        """The scrubber for what `auth` (an httpx auth flow, or None) put on its requests."""
        if auth is None:  # most calls: no need to ask the (slow) protocol check
            return NO_SECRETS
        return cls(auth.secret_values() if isinstance(auth, CarriesSecrets) else ())

    def __bool__(self) -> bool:
        return bool(self._secrets)

    def text(self, text: str) -> str:
        plan = self._plan(text)
        return text if plan is None else plan.apply(text)

    def value(self, value: Any) -> Any:
        """A JSON value with every string (object keys too) scrubbed, and every number that
        holds a secret replaced by its scrubbed text.

        Its strings and numbers are searched together first, joined into one text: only when a
        secret is found there is the value rebuilt (most answers hold none)."""
        if not self._secrets:
            return value
        whole = "\0".join(_texts(value))
        plan = self._plan(whole)
        found = plan.found_in(whole) if plan is not None else None
        return value if found is None else found.walk(value)

    def error(self, error: AaiError) -> AaiError:
        """`error` with its message and data scrubbed (the same object, so its type, code and
        cause stay)."""
        if self._secrets:
            error.message = self.text(error.message)
            error.args = (error.message,)
            error.data = self.value(error.data)
        return error

    def _plan(self, text: str) -> _Plan | None:
        """What to look for in `text`: None when it cannot hold any of the secrets."""
        if not self._secrets or not text:
            return None
        textual = self._secrets
        if len(text) >= PRECHECK_MIN_CHARS and not any(c in text for c in self._introducers):
            textual = tuple(s for s in self._secrets if s in text or not s.isascii())
        cores = tuple(core for core in self._cores if core in text)
        if not textual and not cores:
            return None
        return _Plan(tuple(secret_pattern(s) for s in textual), cores)


NO_SECRETS: Final = Scrubber(())
"""The scrubber of a call that carries no credentials: it changes nothing."""


class _Plan:
    """The patterns of the secrets' textual forms and the base64 runs to remove from a text."""

    def __init__(self, patterns: tuple[re.Pattern[str], ...], cores: tuple[str, ...]) -> None:
        self.patterns = patterns
        self.cores = cores

    def found_in(self, text: str) -> _Plan | None:
        """This plan narrowed to what `text` holds (None: nothing)."""
        patterns = tuple(p for p in self.patterns if next(_matches(p, text), None))
        return _Plan(patterns, self.cores) if patterns or self.cores else None

    def walk(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.apply(value)
        if isinstance(value, bool) or value is None:
            return value
        if isinstance(value, int | float):
            digits = _digits(value)
            scrubbed = self.apply(digits) if digits is not None else None
            return value if scrubbed == digits else scrubbed
        if isinstance(value, list | tuple):
            return [self.walk(item) for item in value]
        if isinstance(value, dict):
            return {self.walk(k) if isinstance(k, str) else k: self.walk(v) for k, v in value.items()}
        return value

    def apply(self, text: str) -> str:
        """Every match replaced by the marker; a base64 run also takes the base64 characters
        (and `=` padding) next to it, which encode the secret's first and last bytes together
        with their neighbours."""
        spans = [span for pattern in self.patterns for span in _matches(pattern, text)]
        for core in self.cores:
            found = text.find(core)
            while found >= 0:
                spans.append(_widened(text, found, found + len(core)))
                found = text.find(core, found + 1)
        if not spans:
            return text
        pieces: list[str] = []
        kept = 0
        for start, end in _merged(spans):
            pieces += [text[kept:start], SECRET_MARKER]
            kept = end
        pieces.append(text[kept:])
        return "".join(pieces)


def _matches(pattern: re.Pattern[str], text: str) -> Iterator[tuple[int, int]]:
    """The spans `pattern` matches, searched a window at a time: the regex engine holds the
    GIL while it searches, so a long text searched in one go (in a worker thread) would stop
    the event loop as surely as searching it there. Windows overlap by more than any match of
    the pattern can be long, so a match across a window's end is found whole in that window."""
    overlap = 2 * len(pattern.pattern)  # each character's group is longer than any form it matches
    for start in range(0, len(text), SEARCH_WINDOW_CHARS):
        stop = start + SEARCH_WINDOW_CHARS
        for match in pattern.finditer(text, start, stop + overlap):
            if match.start() >= stop:
                break
            yield match.span()


def _texts(value: Any) -> Iterator[str]:
    """Every string, object key and number in `value`, as `_Plan.walk` will see them."""
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, int | float) and not isinstance(item, bool):
            digits = _digits(item)
            if digits is not None:
                yield digits
        elif isinstance(item, list | tuple):
            pending.extend(item)
        elif isinstance(item, dict):
            pending.extend(k for k in item if isinstance(k, str))
            pending.extend(item.values())


def _digits(number: float) -> str | None:
    try:
        return repr(number)
    except ValueError:  # an integer too long to write out
        return None


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Overlapping spans joined (a secret inside another, a base64 run widened over a match);
    adjacent ones stay apart."""
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def _widened(text: str, start: int, end: int) -> tuple[int, int]:
    """Up to three base64 characters before and after, then up to two `=`."""
    low = max(0, start - 3)
    while start > low and text[start - 1] in BASE64_CHARS:
        start -= 1
    high = min(len(text), end + 3)
    while end < high and text[end] in BASE64_CHARS:
        end += 1
    padding = min(len(text), end + 2)
    while end < padding and text[end] == "=":
        end += 1
    return start, end


class SignInSecrets(Protocol):
    """A sign-in whose tokens are secrets (`base.UpstreamAuth`)."""

    def secret_values(self) -> list[str]: ...


class CallScrubber:
    """What a call's errors, results and logs are cleaned of: its resolved `secrets`, and the
    tokens of the sign-ins its requests went through, asked for each time it is used. A
    sign-in's tokens are known only once a request has loaded them, a refresh during the call
    replaces them, and a running session's requests carry the sign-in of the call that started
    it: secrets taken before the call would miss all three."""

    def __init__(self, secrets: Iterable[str], sign_in: SignInSecrets | None) -> None:
        self._secrets = tuple(secrets)
        self._sign_ins: list[SignInSecrets] = [sign_in] if sign_in is not None else []
        self._tokens: tuple[str, ...] = ()
        self._scrubber = Scrubber(self._secrets)

    def also(self, sign_in: SignInSecrets | None) -> None:
        """Also the tokens of `sign_in` (a running session's own)."""
        if sign_in is not None and all(sign_in is not known for known in self._sign_ins):
            self._sign_ins.append(sign_in)

    def now(self) -> Scrubber:
        tokens = tuple(value for sign_in in self._sign_ins for value in sign_in.secret_values())
        if tokens != self._tokens:
            self._tokens = tokens
            self._scrubber = Scrubber([*self._secrets, *tokens])
        return self._scrubber

    def text(self, text: str) -> str:
        return self.now().text(text)
