"""Which names and values probably carry a credential: the one detector of the gateway.

The descriptor checks use it to warn about a secret written in plain text in an `mcp`
execution's `env`, `headers` or url; `aai-gateway import` uses it to decide which values of a
client's configuration move into the OS keyring instead of a file. Both lean towards yes: a value
wrongly taken for a secret costs a warning or a keyring entry, a secret missed ends up in a file.

A name is split into words (`GITHUB_TOKEN`, `x-api-key`, `accessToken`, `GHPat`, `KEY2`); the long
markers count anywhere in it (`DBPASSWORD`), the short ones only as whole words, so `PATH`,
`AUTHOR`, `KEYS_DIR` and `KEYBOARD_LAYOUT` are not secrets while `GITHUB_PAT`, `X_AUTH` and
`PRIVATE_KEY` are. A value is a secret by its shape, whatever its name: an HTTP authorization
(`Bearer …`), a key in a well-known service's format anywhere in it, a URL with a password or with
a query parameter of a secret name.
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
    "credential",
    "apikey",
    "api_key",
    "cookie",
)
_MARKER_WORDS: Final = frozenset({"key", "auth", "pat"})  # whole words only: not KEYBOARD, AUTHOR, PATH
_WORDS: Final = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_AUTH_SCHEME: Final = re.compile(r"(?i)bearer\s+\S+|(basic|token)\s+[A-Za-z0-9._~+/=:-]{8,}")
# Prefixes that well-known services give their keys, so a token is caught whatever it is named
# and wherever it is (a key in a URL's path, as some remote servers take it).
_KNOWN_PREFIXES: Final = re.compile(
    r"(?<![A-Za-z0-9])"
    r"(ghp_|gho_|ghu_|ghs_|ghr_|github_pat_|glpat-|sk-|sk_live_|rk_live_|xox[abpr]-|AKIA|AIza|hf_)"
    r"[A-Za-z0-9_\-]{8,}"
)


def looks_like_secret(name: str, value: str = "") -> bool:
    """Whether the literal `value` set under `name` (an environment variable, a header, an
    option, a query parameter) is probably a credential: by the name, or by the value's shape.
    Without a value, the name alone decides."""
    return secret_name(name) or secret_shaped(value)


def secret_name(name: str) -> bool:
    """Whether a value of this name probably carries a credential."""
    lowered = name.lower()
    if any(marker in lowered for marker in _MARKERS_ANYWHERE):
        return True
    return any(word.lower() in _MARKER_WORDS for word in _WORDS.findall(name))


def secret_shaped(value: str) -> bool:
    """Whether a value is shaped like a credential whatever its name (see the module docstring)."""
    text = value.strip()
    if not text:
        return False
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
    return password is not None or any(secret_name(key) and found for key, found in query)


def secret_argument_indexes(args: Sequence[str]) -> list[int]:
    """Indexes of the command-line arguments that are probably secrets: the value of an option
    with a secret name (`--api-key=…`, or `--token` followed by its value) and any argument
    shaped like a secret."""
    found: list[int] = []
    for index, argument in enumerate(args):
        option, equals, _ = argument.partition("=")
        if (
            (argument.startswith("-") and equals and secret_name(option))
            or secret_shaped(argument)
            or (index > 0 and _is_secret_option(args[index - 1]) and not argument.startswith("-"))
        ):
            found.append(index)
    return found


def _is_secret_option(argument: str) -> bool:
    return argument.startswith("-") and "=" not in argument and secret_name(argument)
