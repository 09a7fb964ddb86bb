"""The bounds on an MCP server's progress on its way to the caller (mcp_progress.py): pure logic,
with a clock the test moves."""

from __future__ import annotations

import math

import pytest

from aai_gateway.executors.mcp_progress import BURST, MESSAGE_CHARS, PER_SECOND, progress_forwarder

pytestmark = pytest.mark.anyio

SECRET = "sk-secret-0123456789"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Caller:
    def __init__(self) -> None:
        self.seen: list[tuple[float, float | None, str | None]] = []
        self.now = 100.0

    async def __call__(self, done: float, total: float | None, message: str | None) -> None:
        self.seen.append((done, total, message))

    def clock(self) -> float:
        return self.now


def forwarder(caller: Caller):  # type: ignore[no-untyped-def]
    forward = progress_forwarder(caller, lambda text: text.replace(SECRET, "[redacted]"), clock=caller.clock)
    assert forward is not None
    return forward


async def test_a_caller_that_asked_for_no_progress_gets_no_forwarder() -> None:
    assert progress_forwarder(None, str) is None


async def test_a_burst_passes_then_reports_trickle_at_the_rate_and_the_last_always_passes() -> None:
    caller = Caller()
    forward = forwarder(caller)
    for step in range(1, 1001):  # all at the same instant
        await forward(step, 1000, None)
    assert [done for done, _, _ in caller.seen] == [*range(1, BURST + 1), 1000]
    caller.seen.clear()
    caller.now += 1.0  # a second later: PER_SECOND more may pass
    for step in range(1001, 2001):
        await forward(step, None, None)
    assert len(caller.seen) == int(PER_SECOND)


async def test_a_report_that_does_not_increase_on_the_last_one_passed_is_dropped() -> None:
    caller = Caller()
    forward = forwarder(caller)
    for done in (1, 3, 2, 3, 4):
        await forward(done, 10, None)
    assert [done for done, _, _ in caller.seen] == [1, 3, 4]


async def test_a_message_is_scrubbed_then_shown_on_one_line_and_cut() -> None:
    caller = Caller()
    forward = forwarder(caller)
    await forward(1, None, f"using {SECRET}\u202e\nnext line " + "x" * 10_000)
    message = caller.seen[0][2]
    assert message is not None and message.startswith("using [redacted] next line")
    assert len(message) <= MESSAGE_CHARS and SECRET not in message and "\u202e" not in message


async def test_a_caller_that_went_away_does_not_fail_the_call() -> None:
    async def gone(done: float, total: float | None, message: str | None) -> None:
        raise ConnectionResetError

    forward = progress_forwarder(gone, str)
    assert forward is not None
    await forward(1, 2, "step")


@pytest.mark.parametrize("total", [0, -1, None], ids=["total 0", "negative total", "its own total"])
async def test_a_server_that_says_every_report_completes_the_work_is_held_to_the_rate_all_the_same(
    total: float | None,
) -> None:
    """Only the first report that completes the work passes beyond the rate: a total of 0, a
    negative one, or each report's own total would otherwise let every report through."""
    caller = Caller()
    forward = forwarder(caller)
    for step in range(1, 1001):  # all at the same instant
        await forward(step, step if total is None else total, None)
    assert [done for done, _, _ in caller.seen] == list(range(1, BURST + 1))


async def test_progress_that_is_not_a_finite_number_is_dropped_and_such_a_total_is_unknown() -> None:
    """JSON has no NaN or infinity (the client would read null where a number must be); NaN would
    also pass every later report as increasing, and an infinite one would stop them all."""
    caller = Caller()
    forward = forwarder(caller)
    for done, total in ((math.nan, 10), (1, math.nan), (math.inf, None), (2, math.inf), (1.5, 10), (3, 3)):
        await forward(done, total, None)
    assert caller.seen == [(1, None, None), (2, None, None), (3, 3, None)]
