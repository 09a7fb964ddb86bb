"""A response body's content codings undone a bounded piece at a time.

httpx decodes each chunk it reads in one call, and its decoders have no output limit: a few
hundred bytes of `Content-Encoding: gzip, gzip` expand to hundreds of megabytes before the
executor can count a single byte. Here each coding's decompressor gives at most `STEP` bytes per
call and the next one pulls from it lazily, so at most about `STEP` bytes per coding exist at
once whatever the ratio, and the reader can stop as soon as its limit is passed.

The codings undone here are `gzip`, `x-gzip` and `deflate` (zlib-wrapped or, as some servers
send it, raw), the ones the gateway's clients ask for (`ACCEPTED_CODINGS`). A body with any other
coding (a server that sends brotli unasked) is left to httpx, which decodes what it can, as before.
"""

from __future__ import annotations

import zlib
from collections.abc import AsyncIterator, Iterable, Iterator
from typing import Final

import httpx

STEP: Final = 64 * 1024
ACCEPTED_CODINGS: Final = "gzip, deflate"
"""The `Accept-Encoding` of the gateway's HTTP clients: only codings undone here."""
_UNDONE: Final = frozenset({"gzip", "x-gzip", "deflate"})


class _Inflater:
    """One coding: compressed bytes in, pieces of at most STEP bytes out."""

    def __init__(self, coding: str) -> None:
        self.coding = coding
        self.first = True
        wbits = zlib.MAX_WBITS | 16 if coding in ("gzip", "x-gzip") else zlib.MAX_WBITS
        self.decompressor = zlib.decompressobj(wbits)

    def feed(self, data: bytes) -> Iterator[bytes]:
        while True:
            try:
                piece = self.decompressor.decompress(data, STEP)
            except zlib.error as exc:
                if self.first and self.coding == "deflate":  # raw deflate, without zlib's header
                    self.first = False
                    self.decompressor = zlib.decompressobj(-zlib.MAX_WBITS)
                    continue
                raise httpx.DecodingError(f"the body does not decode as {self.coding}: {exc}") from exc
            self.first = False
            data = self.decompressor.unconsumed_tail
            if piece:
                yield piece
            if len(piece) < STEP and not data:  # input used up and no output held back
                return
            if not piece:  # pragma: no cover - zlib keeps input only when its output is full
                raise httpx.DecodingError(f"the body does not decode as {self.coding}")

    def finish(self) -> Iterator[bytes]:
        try:
            tail = self.decompressor.flush(STEP)
        except zlib.error as exc:  # pragma: no cover - flush after a successful stream
            raise httpx.DecodingError(f"the body does not decode as {self.coding}: {exc}") from exc
        if tail:
            yield tail


def codings(response: httpx.Response) -> list[str] | None:
    """The compressing codings of the response, in the order they must be undone; None when one
    of them is not undone here."""
    declared = response.headers.get_list("content-encoding", split_commas=True)
    found = [value.strip().lower() for value in declared if value.strip().lower() not in ("", "identity")]
    if not _UNDONE.issuperset(found):
        return None
    return found[::-1]


async def decoded_chunks(response: httpx.Response) -> AsyncIterator[bytes]:
    """The body with its content codings undone, in pieces of at most STEP bytes (except an
    uncompressed body's chunks, which come as read)."""
    if response.is_stream_consumed:  # read when it was made (an in-memory transport's answer)
        yield response.content
        return
    undone = codings(response)
    if undone is None:  # a coding the gateway did not ask for: httpx's decoders, as they are
        async for chunk in response.aiter_bytes():
            yield chunk
        return
    stages = [_Inflater(coding) for coding in undone]
    async for raw in response.aiter_raw():
        for piece in _through(stages, [raw]):
            yield piece
    for index, stage in enumerate(stages):
        for piece in _through(stages[index + 1 :], stage.finish()):
            yield piece


def _through(stages: list[_Inflater], pieces: Iterable[bytes]) -> Iterator[bytes]:
    for stage in stages:
        pieces = _fed(stage, pieces)
    yield from pieces


def _fed(stage: _Inflater, pieces: Iterable[bytes]) -> Iterator[bytes]:
    for piece in pieces:
        yield from stage.feed(piece)
