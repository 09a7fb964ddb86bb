"""An MCP server's progress, passed on to the caller of the call it belongs to.

A server may report progress as often as it likes, and say anything in it. What reaches the
caller is bounded: a burst of `BURST` reports, then at most `PER_SECOND` a second (the first
report that completes the work always passes; later ones, and a server that says each report
completes it, are held to the rate), each increasing on the last one passed (MCP requires it
of a server; one that goes back is not passed on, nor progress that is not a finite number, and
a total that is not one is passed on as unknown: JSON has neither NaN nor infinity), and its
message scrubbed of the call's secrets, then cleaned of what a reader cannot see and cut to
`MESSAGE_CHARS` on one line. A server that reports thousands of times a second costs the gateway
little and its caller nothing.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from typing import Final

from ..descriptor.shown_text import visible_text
from .base import ProgressReporter

logger = logging.getLogger(__name__)

BURST: Final = 20
PER_SECOND: Final = 10.0
MESSAGE_CHARS: Final = 500


def progress_forwarder(
    progress: ProgressReporter | None,
    scrub: Callable[[str], str],
    *,
    clock: Callable[[], float] = time.monotonic,
) -> ProgressReporter | None:
    """What takes the server's progress reports and passes them on to `progress` (the caller's;
    None when it asked for none). A caller that went away does not fail the call."""
    if progress is None:
        return None
    allowance = float(BURST)
    last_refill = clock()
    last_done = -math.inf
    completed = False  # a report that completes the work has passed: the next one waits its turn

    async def forward(done: float, total: float | None, message: str | None) -> None:
        nonlocal allowance, last_refill, last_done, completed
        if not math.isfinite(done):
            return
        if total is not None and not math.isfinite(total):
            total = None
        now = clock()
        allowance = min(float(BURST), allowance + (now - last_refill) * PER_SECOND)
        last_refill = now
        completes = not completed and total is not None and done >= total
        if done <= last_done or (allowance < 1 and not completes):
            return
        allowance = max(allowance - 1, 0.0)  # one that completes the work passes, and costs no more
        last_done = done
        completed = completed or completes
        shown = (
            visible_text(scrub(message), max_chars=MESSAGE_CHARS, one_line=True)[0] if message else message
        )
        try:
            await progress(done, total, shown)
        except Exception:
            logger.debug("progress could not be forwarded", exc_info=True)

    return forward
