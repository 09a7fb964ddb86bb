"""Work that makes many objects which all live on: without the cyclic garbage collector.

Loading thousands of descriptors, indexing them for search or listing them makes millions of
small objects and frees almost none, so each of the collector's passes over the older ones is
waste: up to half the time of a big start (measured in docs/performance.md). Reference counting
still frees what becomes garbage; only the search for reference cycles waits until the end.

Such work also frees much scratch memory at its end, which the C allocator keeps:
`return_free_memory` hands it back to the system.
"""

from __future__ import annotations

import ctypes
import gc
import sys
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def without_cyclic_gc() -> Iterator[None]:
    """The cyclic collector off within; back on after (if it was on), with what was built moved
    out of its view (`gc.freeze`), or turning it on would start passes over all of it at once."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.freeze()
            gc.enable()


def return_free_memory() -> None:
    """Hand the memory the C allocator holds free back to the system (glibc's `malloc_trim`; a
    no-op elsewhere). After a search index of 10,000 apps is built in a thread of its own, its
    scratch memory (per-entry term lists, sorted keys) is ~80 MB of the process's RSS otherwise."""
    if not sys.platform.startswith("linux"):
        return
    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):  # another C library (musl has no malloc_trim)
        return
    trim(0)
