"""Which literal values of a server's configuration are probably secrets.

The import moves those into the OS keyring instead of writing them into a descriptor, so the
test leans towards yes: a value wrongly taken for a secret costs a keyring entry, a secret
missed ends up in a file. A name is split into words (`GITHUB_TOKEN`, `x-api-key`,
`accessToken`); the long markers count anywhere in it (`DBPASSWORD`), the short ones only as
whole words, so `PATH`, `AUTHOR` and `KEYBOARD_LAYOUT` are not secrets while `GITHUB_PAT`,
`AUTH` and `PRIVATE_KEY` are.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final
from urllib.parse import parse_qsl, urlsplit

_MARKERS_ANYWHERE: Final = (
    "token",
    "secret",
    "password",
    "passwd",
    "authorization",
    "cookie",
    "credential",
    "apikey",
    "api_key",
)
_MARKER_WORDS: Final = frozenset({"key", "auth", "pat"})
_WORD_BOUNDARY: Final = re.compile(r"[^A-Za-z0-9]+|(?<=[a-z0-9])(?=[A-Z])")
_AUTH_SCHEME: Final = re.compile(r"(?i)bearer\s+\S+|(basic|token)\s+[A-Za-z0-9._~+/=:-]{8,}")
# Prefixes that well-known services give their keys, so a token is caught whatever it is named
# and wherever it is (a key in a URL's path, as some remote servers take it).
_KNOWN_PREFIXES: Final = re.compile(
    r"(?<![A-Za-z0-9])"
    r"(ghp_|gho_|ghu_|ghs_|ghr_|github_pat_|glpat-|sk-|sk_live_|rk_live_|xox[abpr]-|AKIA|AIza|hf_)"
    r"[A-Za-z0-9_\-]{8,}"
)


def looks_secret(key: str, value: str) -> bool:
    """Whether the literal `value` set under `key` (an environment variable, a header, an
    option name) is probably a secret: by the key's name, or by the value's shape (an HTTP
    authorization like `Bearer …`, a known service's key format anywhere in it, a URL with a
    password or with a query parameter of a secret name)."""
    return _secret_name(key) or _secret_value(value)


def secret_argument_indexes(args: Sequence[str]) -> list[int]:
    """Indexes of the command-line arguments that are probably secrets: the value of an option
    with a secret name (`--api-key=…`, or `--token` followed by its value) and any argument
    shaped like a secret (see `looks_secret`)."""
    found: list[int] = []
    for index, argument in enumerate(args):
        option, equals, _ = argument.partition("=")
        if (
            (argument.startswith("-") and equals and _secret_name(option))
            or _secret_value(argument)
            or (index > 0 and _is_secret_option(args[index - 1]) and not argument.startswith("-"))
        ):
            found.append(index)
    return found


def _is_secret_option(argument: str) -> bool:
    return argument.startswith("-") and "=" not in argument and _secret_name(argument)


def _secret_name(key: str) -> bool:
    lowered = key.lower()
    if any(marker in lowered for marker in _MARKERS_ANYWHERE):
        return True
    words = {word.lower() for word in _WORD_BOUNDARY.split(key) if word}
    return bool(words & _MARKER_WORDS)


def _secret_value(value: str) -> bool:
    text = value.strip()
    if _AUTH_SCHEME.fullmatch(text) or _KNOWN_PREFIXES.search(text):
        return True
    if "://" not in text:
        return False
    try:
        parts = urlsplit(text)
        password = parts.password
    except ValueError:  # not a URL after all (a bad port, brackets)
        return False
    query = parse_qsl(parts.query, keep_blank_values=True)
    return password is not None or any(_secret_name(name) and value for name, value in query)
