"""The web descriptor cache (spec "Local Storage"; docs/architecture.md).

Layout, under a root the caller chooses (the CLI passes `--cache-dir`, `$AAI_GATEWAY_CACHE_DIR`, else
`default_cache_root()`: `platformdirs.user_cache_dir("aai-gateway")`):

    <root>/<host>/aai.json        the descriptor exactly as fetched
    <root>/<host>/aai.json.meta   {"fetched_at": <epoch seconds>, "ttl_seconds": 86400, "source_url": "…"}

Entries are keyed by origin (scheme, host and port; web descriptors are fetched over https
only): `<host>` is the origin's host in lower case (IDNA-encoded), `_<port>` appended when the
port is not 443, and an IPv6 address written `[fe80--1]` (no `:`, which Windows refuses in file
names). The mapping is one-to-one, so a directory name always gives back its origin, and two
servers on one host (two ports) never share an entry.

Each file is replaced atomically (temporary file, fsync, rename). An entry that cannot be read
whole (meta that is not JSON, nested too deep to parse, with wrong types or a `source_url` that
is not a plain URL, a missing file, or anything else that fails while reading it) counts as
absent and is logged, never raised: the cache is a copy, the web is the truth, and one bad
entry must not stop `serve` or `cache list`. Nothing here parses descriptors; the caller
decides whether a body is still a usable descriptor.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import os
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Final

import platformdirs

from ..descriptor.origin import normalize_origin, split_origin
from ..errors import AaiError

logger = logging.getLogger(__name__)

DESCRIPTOR_FILE: Final = "aai.json"
META_FILE: Final = "aai.json.meta"
DEFAULT_TTL_SECONDS: Final = 24 * 60 * 60
_TMP_SUFFIX: Final = ".tmp"


def default_cache_root() -> Path:
    """Where the CLI keeps the cache by default (`~/.cache/aai-gateway` on Linux)."""
    return Path(platformdirs.user_cache_dir("aai-gateway"))


def cache_key(origin: str) -> str:
    """`https://API.example.com` → `api.example.com`; `https://127.0.0.1:8443` → `127.0.0.1_8443`;
    `https://[::1]` → `[--1]`. Accepts anything `normalize_origin` accepts."""
    host, port = split_origin(normalize_origin(origin))
    name = f"[{host.replace(':', '-')}]" if ":" in host else host
    return name if port is None else f"{name}_{port}"


def origin_for_key(key: str) -> str | None:
    """The origin a cache directory name stands for; None if the name is not one of ours."""
    name, _, port = key.partition("_")
    if port and not (port.isdigit() and len(port) <= 5):
        return None
    host = f"[{name[1:-1].replace('-', ':')}]" if name.startswith("[") and name.endswith("]") else name
    try:
        origin = normalize_origin(f"https://{host}" + (f":{port}" if port else ""))
        if cache_key(origin) != key:
            return None
    except AaiError:
        return None
    return origin


@dataclass(frozen=True)
class CacheInfo:
    """One entry as `cache list` shows it."""

    host: str  # the directory name (see the module docstring)
    origin: str
    source_url: str
    fetched_at: float
    ttl_seconds: float
    expires: float
    fresh: bool
    size: int


@dataclass(frozen=True)
class CachedEntry(CacheInfo):
    body: bytes


class WebCache:
    """`<root>/<host>/aai.json` + `.meta`. `clock` gives epoch seconds (tests move time)."""

    def __init__(
        self,
        root: Path,
        *,
        ttl_seconds: int = DEFAULT_TTL_SECONDS,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.root = Path(root)
        self.ttl_seconds = ttl_seconds
        self.clock = clock

    # ----------------------------------------------------------------- reading

    def key(self, origin: str) -> str:
        """The directory of `origin` (scheme, host and port: `https://host[:port]`, or a domain
        or `host:port`, which stand for their https origin), or of a listing's `host` name."""
        return origin if origin_for_key(origin) is not None else cache_key(origin)

    def get(self, origin: str) -> CachedEntry | None:
        """The entry of `origin`, fresh or not; None when there is none or it cannot be read whole."""
        key = self.key(origin)
        info = self._info(key)
        if info is None:
            return None
        try:
            body = (self.root / key / DESCRIPTOR_FILE).read_bytes()
        except OSError as exc:
            self._ignore(key, f"cannot read {DESCRIPTOR_FILE} ({exc.strerror or exc})")
            return None
        fields = {**asdict(info), "size": len(body)}
        return CachedEntry(**fields, body=body)

    def entries(self) -> list[CacheInfo]:
        """Every readable entry, sorted by host; unreadable ones are logged and left out."""
        try:
            children = sorted(self.root.iterdir()) if self.root.is_dir() else []
        except OSError as exc:
            logger.warning("cannot list the web cache %s: %s", self.root, exc.strerror or exc)
            return []
        found: list[CacheInfo] = []
        for child in children:
            if origin_for_key(child.name) is None or not child.is_dir():
                continue
            info = self._info(child.name)
            if info is not None:
                found.append(info)
        return found

    def _info(self, key: str) -> CacheInfo | None:
        """The entry's meta; None (logged) when there is no entry or it cannot be read whole."""
        try:
            return self._read_info(key)
        except Exception as exc:  # whatever one entry holds, it costs only itself
            self._ignore(key, f"cannot read it ({type(exc).__name__})")
            return None

    def _read_info(self, key: str) -> CacheInfo | None:
        origin = origin_for_key(key)
        directory = self.root / key
        if origin is None or not directory.is_dir():
            return None
        meta_path, body_path = directory / META_FILE, directory / DESCRIPTOR_FILE
        if not meta_path.exists() and not body_path.exists():
            return None
        try:
            meta_text = meta_path.read_text(encoding="utf-8")
            size = body_path.stat().st_size
        except FileNotFoundError as exc:
            self._ignore(key, f"{Path(exc.filename or '?').name} is missing")
            return None
        except (OSError, UnicodeDecodeError) as exc:
            self._ignore(key, f"cannot read it ({exc})")
            return None
        try:
            meta = json.loads(meta_text)
        except ValueError as exc:
            self._ignore(key, f"{META_FILE} is not valid JSON ({exc})")
            return None
        except RecursionError:
            self._ignore(key, f"{META_FILE} is nested too deep to read")
            return None
        problem = _meta_problem(meta)
        if problem is not None:
            self._ignore(key, f"{META_FILE} {problem}")
            return None
        fetched_at, ttl = float(meta["fetched_at"]), float(meta["ttl_seconds"])
        now = self.clock()
        return CacheInfo(
            host=key,
            origin=origin,
            source_url=meta["source_url"],
            fetched_at=fetched_at,
            ttl_seconds=ttl,
            expires=fetched_at + ttl,
            fresh=fetched_at <= now < fetched_at + ttl,
            size=size,
        )

    def _ignore(self, key: str, reason: str) -> None:
        logger.warning("ignoring the web cache entry %s: %s", self.root / key, reason)

    # ----------------------------------------------------------------- writing

    def put(self, origin: str, source_url: str, body: bytes) -> CachedEntry:
        """Store a fetched descriptor (OSError when the cache cannot be written)."""
        key = cache_key(origin)
        directory = self.root / key
        directory.mkdir(parents=True, exist_ok=True)
        fetched_at = self.clock()
        meta = {"fetched_at": fetched_at, "ttl_seconds": self.ttl_seconds, "source_url": source_url}
        write_atomic(directory / DESCRIPTOR_FILE, body)
        write_atomic(directory / META_FILE, json.dumps(meta, indent=2).encode("utf-8") + b"\n")
        return CachedEntry(
            host=key,
            origin=normalize_origin(origin),
            source_url=source_url,
            fetched_at=fetched_at,
            ttl_seconds=float(self.ttl_seconds),
            expires=fetched_at + self.ttl_seconds,
            fresh=True,
            size=len(body),
            body=body,
        )

    def clear(self, origin: str | None = None) -> int:
        """Remove one entry (`origin` as `get` takes it) or, without one, all of them; how many
        entries were removed. Only the cache's own files are deleted."""
        if origin is not None:
            return int(self._remove(self.key(origin)))
        if not self.root.is_dir():
            return 0
        return sum(
            self._remove(child.name)
            for child in sorted(self.root.iterdir())
            if child.is_dir() and origin_for_key(child.name) is not None
        )

    def _remove(self, key: str) -> bool:
        directory = self.root / key
        if not directory.is_dir():
            return False
        removed = False
        for path in directory.iterdir():
            ours = path.name in (DESCRIPTOR_FILE, META_FILE)
            leftover = path.name.startswith((f".{DESCRIPTOR_FILE}", f".{META_FILE}")) and path.name.endswith(
                _TMP_SUFFIX
            )
            if ours or leftover:
                path.unlink(missing_ok=True)
                removed = removed or ours
        with contextlib.suppress(OSError):  # not empty: someone else's files, left alone
            directory.rmdir()
        return removed


def _meta_problem(meta: Any) -> str | None:
    if not isinstance(meta, dict):
        return "is not a JSON object"
    for field in ("fetched_at", "ttl_seconds"):
        value = meta.get(field)
        if isinstance(value, bool) or not isinstance(value, int | float):
            return f"has no numeric {field!r}"
        if isinstance(value, int) and abs(value) > sys.float_info.max:  # float() of it would raise
            return f"has an impossible {field!r} (a number of {len(str(abs(value)))} digits)"
        if not math.isfinite(value) or value < 0:
            return f"has an impossible {field!r} ({value})"
    source_url = meta.get("source_url")
    if not isinstance(source_url, str) or not source_url.startswith("https://"):
        return "has no https 'source_url'"
    if any(_not_in_a_url(c) for c in source_url):  # the gateway never writes such a URL
        return "has a 'source_url' with control characters or text that is not Unicode"
    return None


def _not_in_a_url(char: str) -> bool:
    code = ord(char)
    return code < 0x20 or 0x7F <= code <= 0x9F or 0xD800 <= code <= 0xDFFF or char.isspace()


def write_atomic(path: Path, data: bytes) -> None:
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=_TMP_SUFFIX)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
