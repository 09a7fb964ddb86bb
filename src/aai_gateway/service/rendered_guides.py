"""Guides and operation details as rendered, kept for the apps read most recently.

Rendering a guide works out every operation's example call and parameter table: 1 to 2 ms for an
app of a dozen operations, more than the rest of a guide read over stdio. The text is a pure
function of the app's descriptor object and the guide options (`guide/render.py`), so it is kept
under both: a descriptor that changed is a new object, options that changed (an operation that
can no longer run here, another reference, another entry name) are another key, and neither
finds the old text. What can change between two reads of an unchanged app is worked out again
at each read (the options: which operations can run here) before the text is looked up.
"""

from __future__ import annotations

import dataclasses
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence

from ..descriptor import AppDescriptor
from ..guide import GuideOptions

HELD_GUIDES = 32
"""Rendered texts kept (at most `GUIDE_MAX_CHARS` each: ~0.5 MB; the descriptors are not kept by
them): an agent works with a few apps."""

Key = tuple[int, tuple[str, ...] | None, Hashable]


def options_key(options: GuideOptions) -> Hashable:
    """Everything of `options` a rendered text depends on, hashable: the options themselves (a
    frozen dataclass, so a field added later is part of the key too) with the one mapping frozen."""
    unavailable = tuple(sorted(options.unavailable.items())) if options.unavailable else ()
    return (dataclasses.replace(options, unavailable=None), unavailable)


class RenderedGuides:
    """The texts of the `capacity` most recently read guides and operation details. Safe to
    share between threads (the CLI's and the server's reads of one gateway)."""

    def __init__(self, capacity: int = HELD_GUIDES) -> None:
        self.capacity = capacity
        self._lock = threading.Lock()
        # Each text with a weak reference to its descriptor: a hit is the very object whose id()
        # the key holds, while a descriptor that was replaced (an edited file, an MCP server's new
        # tools: up to tens of MB each) is freed as if its guide had never been read. Its entry
        # keeps only the text until it is the least recent; an object that gets the dead one's id
        # finds no hit and is rendered.
        self._texts: OrderedDict[Key, tuple[weakref.ref[AppDescriptor], str]] = OrderedDict()

    def text(
        self,
        app: AppDescriptor,
        options: GuideOptions,
        render: Callable[[], str],
        operations: Sequence[str] | None = None,
    ) -> str:
        """The text `render` gives for `app` with `options` (its guide, or the details of
        `operations`), rendered only when no text of the same app object and options is held."""
        key: Key = (id(app), None if operations is None else tuple(operations), options_key(options))
        with self._lock:
            held = self._texts.get(key)
            if held is not None and held[0]() is app:
                self._texts.move_to_end(key)
                return held[1]
        text = render()
        with self._lock:
            self._texts[key] = (weakref.ref(app), text)
            self._texts.move_to_end(key)
            while len(self._texts) > self.capacity:
                self._texts.popitem(last=False)
        return text

    def __len__(self) -> int:
        return len(self._texts)
