"""The web descriptor cache: the spec's layout and meta format, freshness, atomic writes, and
corrupted entries that count as absent instead of crashing."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

import pytest

from aai_gateway.discovery import web_cache
from aai_gateway.discovery.web_cache import (
    DEFAULT_TTL_SECONDS,
    WebCache,
    cache_key,
    default_cache_root,
    origin_for_key,
)
from aai_gateway.errors import AaiError
from tests.discovery.web_support import Clock

BODY = b'{"schemaVersion": "1.0"}'
SOURCE = "https://notion.com/.well-known/aai.json"


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def cache(tmp_path: Path, clock: Clock) -> WebCache:
    return WebCache(tmp_path / "cache", clock=clock)


@pytest.mark.parametrize(
    ("origin", "key"),
    [
        ("https://notion.com", "notion.com"),
        ("https://API.Notion.com/v1", "api.notion.com"),
        ("notion.com", "notion.com"),
        ("https://127.0.0.1:8443", "127.0.0.1_8443"),
        ("https://example.com:443", "example.com"),
        ("https://[::1]:8443", "[--1]_8443"),
        ("https://[fe80::1]", "[fe80--1]"),
        ("bücher.example", "xn--bcher-kva.example"),
    ],
)
def test_each_origin_has_one_directory_name_that_gives_it_back(origin: str, key: str) -> None:
    assert cache_key(origin) == key
    assert origin_for_key(key) is not None
    assert cache_key(origin_for_key(key) or "") == key


@pytest.mark.parametrize(
    "name", ["..", ".", "a..b", "foo bar", "Notion.com", "x_y_z", "notion.com_99999999", ""]
)
def test_names_that_are_not_cache_keys_are_not_taken_for_entries(name: str) -> None:
    assert origin_for_key(name) is None


@pytest.mark.skipif(sys.platform != "linux", reason="the XDG base directories are Linux's")
def test_the_default_root_is_the_user_cache_directory_of_aai_gateway(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    assert default_cache_root() == home / ".cache" / "aai-gateway"

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    assert default_cache_root() == tmp_path / "xdg-cache" / "aai-gateway"
    assert default_cache_root().name == "aai-gateway"
    WebCache(default_cache_root()).put("https://notion.com", SOURCE, BODY)
    assert (tmp_path / "xdg-cache" / "aai-gateway" / "notion.com" / "aai.json").read_bytes() == BODY


def test_an_entry_is_stored_as_the_spec_says(cache: WebCache, clock: Clock) -> None:
    cache.put("https://notion.com", SOURCE, BODY)
    directory = cache.root / "notion.com"
    assert (directory / "aai.json").read_bytes() == BODY
    meta = json.loads((directory / "aai.json.meta").read_text(encoding="utf-8"))
    assert meta == {"fetched_at": clock.now, "ttl_seconds": 86400, "source_url": SOURCE}
    assert sorted(p.name for p in directory.iterdir()) == ["aai.json", "aai.json.meta"]


def test_a_stored_entry_reads_back_fresh_until_its_ttl_runs_out(cache: WebCache, clock: Clock) -> None:
    cache.put("https://notion.com", SOURCE, BODY)
    entry = cache.get("notion.com")
    assert entry is not None
    assert (entry.body, entry.source_url, entry.origin, entry.fresh) == (
        BODY,
        SOURCE,
        "https://notion.com",
        True,
    )
    assert entry.expires == clock.now + DEFAULT_TTL_SECONDS
    clock.advance(DEFAULT_TTL_SECONDS - 1)
    assert (cache.get("https://notion.com") or entry).fresh is True
    clock.advance(1)
    stale = cache.get("https://notion.com")
    assert stale is not None and stale.fresh is False and stale.body == BODY


def test_an_entry_from_the_future_is_not_fresh(cache: WebCache, clock: Clock) -> None:
    cache.put("https://notion.com", SOURCE, BODY)
    clock.advance(-3600)
    entry = cache.get("notion.com")
    assert entry is not None and entry.fresh is False


def test_a_missing_entry_is_none(cache: WebCache) -> None:
    assert cache.get("https://notion.com") is None
    assert cache.entries() == []


def test_a_reference_that_is_no_origin_is_refused(cache: WebCache) -> None:
    with pytest.raises(AaiError):
        cache.get("http://notion.com")


def test_a_rewrite_replaces_both_files_and_leaves_no_temporary_files(cache: WebCache, clock: Clock) -> None:
    cache.put("https://notion.com", SOURCE, BODY)
    clock.advance(10)
    cache.put("https://notion.com", SOURCE + "?v=2", b"{}")
    entry = cache.get("notion.com")
    assert entry is not None and entry.body == b"{}" and entry.source_url == SOURCE + "?v=2"
    assert entry.fetched_at == clock.now
    assert sorted(p.name for p in (cache.root / "notion.com").iterdir()) == ["aai.json", "aai.json.meta"]


CORRUPTIONS: dict[str, tuple[bytes | None, bytes | None]] = {
    # name: (aai.json, aai.json.meta); None = the file is missing
    "meta-not-json": (BODY, b'{"fetched_at": 17'),
    "meta-empty": (BODY, b""),
    "meta-not-utf8": (BODY, b"\xff\xfe\x00"),
    "meta-an-array": (BODY, b"[]"),
    "fetched-at-a-string": (
        BODY,
        b'{"fetched_at": "yesterday", "ttl_seconds": 86400, "source_url": "https://a.b/"}',
    ),
    "ttl-a-boolean": (BODY, b'{"fetched_at": 1, "ttl_seconds": true, "source_url": "https://a.b/"}'),
    "ttl-negative": (BODY, b'{"fetched_at": 1, "ttl_seconds": -5, "source_url": "https://a.b/"}'),
    "fetched-at-infinite": (BODY, b'{"fetched_at": 1e999, "ttl_seconds": 5, "source_url": "https://a.b/"}'),
    "ttl-beyond-every-float": (
        BODY,
        b'{"fetched_at": 1, "ttl_seconds": 1' + b"0" * 400 + b', "source_url": "https://a.b/"}',
    ),
    "source-url-http": (BODY, b'{"fetched_at": 1, "ttl_seconds": 5, "source_url": "http://a.b/"}'),
    "source-url-missing": (BODY, b'{"fetched_at": 1, "ttl_seconds": 5}'),
    "descriptor-missing": (None, b'{"fetched_at": 1, "ttl_seconds": 5, "source_url": "https://a.b/"}'),
    "meta-nested-past-the-parser": (BODY, b"[" * 100_000 + b"]" * 100_000),
    "source-url-a-lone-surrogate": (
        BODY,
        b'{"fetched_at": 1, "ttl_seconds": 5, "source_url": "https://\\ud800.example/"}',
    ),
    "source-url-terminal-controls": (
        BODY,
        b'{"fetched_at": 1, "ttl_seconds": 5, "source_url": "https://a.b/\\u001b]0;owned\\u0007"}',
    ),
    "meta-missing": (BODY, None),
}


@pytest.mark.parametrize("corruption", list(CORRUPTIONS))
def test_a_corrupted_entry_counts_as_absent_and_is_logged(
    cache: WebCache, corruption: str, caplog: pytest.LogCaptureFixture
) -> None:
    body, meta = CORRUPTIONS[corruption]
    directory = cache.root / "notion.com"
    directory.mkdir(parents=True)
    if body is not None:
        (directory / "aai.json").write_bytes(body)
    if meta is not None:
        (directory / "aai.json.meta").write_bytes(meta)
    with caplog.at_level(logging.WARNING, logger="aai_gateway.discovery.web_cache"):
        assert cache.get("https://notion.com") is None
        assert cache.entries() == []
    assert "ignoring the web cache entry" in caplog.text
    assert str(directory) in caplog.text
    assert BODY.decode() not in caplog.text


def test_anything_failing_while_one_entry_is_read_costs_only_that_entry(
    cache: WebCache, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    cache.put("https://notion.com", SOURCE, BODY)
    cache.put("https://example.com", "https://example.com/.well-known/aai.json", BODY)
    original = web_cache._meta_problem

    def fails_for_notion(meta: object) -> str | None:
        if isinstance(meta, dict) and meta.get("source_url") == SOURCE:
            raise MemoryError("no room")
        return original(meta)

    monkeypatch.setattr(web_cache, "_meta_problem", fails_for_notion)
    with caplog.at_level(logging.WARNING, logger="aai_gateway.discovery.web_cache"):
        assert cache.get("https://notion.com") is None
        assert [e.origin for e in cache.entries()] == ["https://example.com"]
    assert "notion.com: cannot read it (MemoryError)" in caplog.text


def test_a_corrupted_entry_is_overwritten_by_the_next_put(cache: WebCache) -> None:
    directory = cache.root / "notion.com"
    directory.mkdir(parents=True)
    (directory / "aai.json.meta").write_bytes(b"garbage")
    cache.put("https://notion.com", SOURCE, BODY)
    assert cache.get("notion.com") is not None


def test_a_leftover_temporary_file_does_not_disturb_reading(cache: WebCache) -> None:
    cache.put("https://notion.com", SOURCE, BODY)
    (cache.root / "notion.com" / ".aai.json.abc123.tmp").write_bytes(b"half a desc")
    entry = cache.get("notion.com")
    assert entry is not None and entry.body == BODY


def test_the_listing_shows_every_readable_entry_with_its_times_and_size(
    cache: WebCache, clock: Clock
) -> None:
    cache.put("https://notion.com", SOURCE, BODY)
    fetched_notion = clock.now
    clock.advance(DEFAULT_TTL_SECONDS)
    cache.put("https://127.0.0.1:8443", "https://127.0.0.1:8443/.well-known/aai.json", b"{}")
    (cache.root / "broken.example").mkdir()
    (cache.root / "broken.example" / "aai.json.meta").write_text("nope", encoding="utf-8")
    (cache.root / "not a key").mkdir()
    (cache.root / "stray.txt").write_text("x", encoding="utf-8")
    listing = cache.entries()
    assert [(e.host, e.origin, e.fresh, e.size) for e in listing] == [
        ("127.0.0.1_8443", "https://127.0.0.1:8443", True, 2),
        ("notion.com", "https://notion.com", False, len(BODY)),
    ]
    notion = listing[1]
    assert (notion.source_url, notion.fetched_at, notion.expires) == (
        SOURCE,
        fetched_notion,
        fetched_notion + DEFAULT_TTL_SECONDS,
    )


def test_clearing_one_host_removes_only_that_entry(cache: WebCache) -> None:
    cache.put("https://notion.com", SOURCE, BODY)
    cache.put("https://api.example.com", "https://api.example.com/.well-known/aai.json", BODY)
    assert cache.clear("https://notion.com/anything") == 1
    assert cache.clear("notion.com") == 0
    assert [e.host for e in cache.entries()] == ["api.example.com"]
    assert not (cache.root / "notion.com").exists()


def test_clearing_everything_removes_entries_but_not_other_files(cache: WebCache) -> None:
    cache.put("https://notion.com", SOURCE, BODY)
    cache.put("https://127.0.0.1:8443", "https://127.0.0.1:8443/.well-known/aai.json", BODY)
    broken = cache.root / "broken.example"
    broken.mkdir()
    (broken / "aai.json.meta").write_text("nope", encoding="utf-8")
    (cache.root / "notion.com" / "keep.me").write_text("someone else's", encoding="utf-8")
    (cache.root / "stray.txt").write_text("x", encoding="utf-8")
    assert cache.clear() == 3
    assert cache.entries() == []
    assert not broken.exists() and not (cache.root / "127.0.0.1_8443").exists()
    assert (cache.root / "notion.com" / "keep.me").exists()
    assert (cache.root / "stray.txt").exists()
    assert cache.clear() == 0


def test_clearing_a_cache_that_was_never_written_removes_nothing(tmp_path: Path) -> None:
    assert WebCache(tmp_path / "nowhere").clear() == 0
    assert WebCache(tmp_path / "nowhere").entries() == []


def test_two_servers_on_one_host_are_two_origins_with_entries_of_their_own(cache: WebCache) -> None:
    cache.put("https://127.0.0.1:8443", "https://127.0.0.1:8443/.well-known/aai.json", b'{"a": 1}')
    cache.put("https://127.0.0.1:9443", "https://127.0.0.1:9443/.well-known/aai.json", b'{"b": 2}')
    first, second = cache.get("https://127.0.0.1:8443"), cache.get("https://127.0.0.1:9443")
    assert first is not None and second is not None
    assert (first.body, second.body) == (b'{"a": 1}', b'{"b": 2}')
    assert cache.get("https://127.0.0.1") is None
    assert cache.clear("https://127.0.0.1:9443") == 1
    assert [entry.origin for entry in cache.entries()] == ["https://127.0.0.1:8443"]
