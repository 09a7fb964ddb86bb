"""App ids for imported servers: derived from the server's name, stable, collision-safe.

- **Derived**: the name folded to ASCII and lowercased (ids are folder names, and macOS and
  Windows do not tell `GitHub` from `github`), anything but letters, digits, `.`, `_` and `-`
  turned into `-`, no leading or trailing punctuation, no `..`, at most `MAX_BASE` characters, not
  a name Windows reserves for devices; a name with nothing usable in it gets `mcp-<hash>`. So an
  id never holds a path separator or a control character and always matches the descriptor's id
  pattern.
- **Stable**: a server imported before keeps the id recorded in its descriptor's
  `x-imported-from` marker (same client, file and entry), whatever else changed.
- **Collision-safe**: the same id for two servers only when they are the same server (the same
  command and arguments, or the same URL): it is imported once. Another server whose name gives
  an id already taken (here, on disk, or by a descriptor the import did not write) gets
  `<id>-<hash of its command or URL>`, the same on every run.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

MAX_BASE: Final = 40
"""Leaves room for the suffix within the 64 characters of a tool name (`app_<id>`)."""
_UNUSABLE: Final = re.compile(r"[^a-z0-9._-]+")
_REPEATED: Final = re.compile(r"([._-])[._-]+")
_WINDOWS_DEVICES: Final = frozenset(
    {"con", "prn", "aux", "nul", *(f"com{n}" for n in range(10)), *(f"lpt{n}" for n in range(10))}
)


@dataclass(frozen=True, slots=True)
class ImportSource:
    """Where an imported server came from: what the `x-imported-from` marker records."""

    client: str
    file: str
    server: str
    pointer: str

    def marker(self) -> dict[str, str]:
        return {"client": self.client, "file": self.file, "server": self.server, "pointer": self.pointer}

    @classmethod
    def from_marker(cls, raw: Any) -> ImportSource | None:
        if not isinstance(raw, dict):
            return None
        fields = [raw.get(key) for key in ("client", "file", "server", "pointer")]
        texts = [value for value in fields if isinstance(value, str)]
        return cls(*texts) if len(texts) == len(fields) else None


@dataclass(frozen=True, slots=True)
class Existing:
    """A folder of the target directory: `source` is None when its descriptor was not written
    by the import (or cannot be read); `target` identifies the server it runs."""

    app_id: str
    source: ImportSource | None
    target: str | None


IdChoice = Literal["new", "update", "same-server"]


def base_id(name: str) -> str:
    folded = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode("ascii").lower()
    text = _REPEATED.sub(r"\1", _UNUSABLE.sub("-", folded)).strip("._-")
    text = text[:MAX_BASE].rstrip("._-")
    if not text:
        return f"mcp-{_digest(name)}"
    return f"mcp-{text}" if text.split(".")[0] in _WINDOWS_DEVICES else text


def target_of(execution: Mapping[str, Any]) -> str:
    """What identifies the server an `mcp` execution runs: its command and arguments, or its URL."""
    if execution.get("url") is not None:
        return json.dumps(["url", execution["url"]])
    return json.dumps(["command", execution.get("command"), list(execution.get("args") or [])])


class IdChooser:
    """Chooses ids for the servers of one import run, given the folders already there."""

    def __init__(self, existing: Mapping[str, Existing]) -> None:
        self.existing = existing
        self.claimed: dict[str, str] = {}  # id → target, in this run

    def previous_id(self, source: ImportSource) -> str | None:
        """The id this very entry was imported under before."""
        return next((e.app_id for e in self.existing.values() if e.source == source), None)

    def choose(self, name: str, source: ImportSource, target: str) -> tuple[str, IdChoice]:
        previous = self.previous_id(source)
        if previous is not None and self.claimed.get(previous, target) == target:
            self.claimed[previous] = target
            return previous, "update"
        for candidate in _candidates(base_id(name), target):
            if candidate in self.claimed:
                if self.claimed[candidate] == target:
                    return candidate, "same-server"
                continue
            found = self.existing.get(candidate)
            if found is None:
                self.claimed[candidate] = target
                return candidate, "new"
            if found.source is not None and found.target == target:
                self.claimed[candidate] = target
                return candidate, "same-server"
        raise AssertionError("unreachable: the candidates never end")


def _candidates(base: str, target: str) -> Iterator[str]:
    yield base
    suffixed = f"{base}-{_digest(target)}"
    yield suffixed
    number = 2
    while True:
        yield f"{suffixed}-{number}"
        number += 1


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:8]
