"""What a 2026-07-28 call keeps between its rounds (server/ask.py): pure logic."""

from __future__ import annotations

from aai_gateway.server import ask
from aai_gateway.server.ask import CallMemories, CallMemory


def test_a_retry_takes_its_calls_memory_and_a_second_retry_with_the_same_state_starts_over() -> None:
    memories = CallMemories()
    state, memory = memories.for_call(None, ("client", "call"))
    memories.keep(state, memory)
    assert memories.for_call(state, ("client", "call")) == (state, memory)
    again, other = memories.for_call(state, ("client", "call"))
    assert again != state and other is not memory


def test_a_state_of_another_call_finds_nothing_and_leaves_that_calls_memory_to_it() -> None:
    memories = CallMemories()
    state, memory = memories.for_call(None, ("client", "call"))
    memories.keep(state, memory)
    assert memories.for_call(state, ("client", "another call"))[0] != state
    assert memories.for_call(state, ("client", "call")) == (state, memory)


def test_no_more_calls_wait_for_a_retry_than_the_limit_and_the_longest_waiting_is_forgotten() -> None:
    memories = CallMemories()
    kept: list[tuple[str, CallMemory]] = []
    for number in range(ask.MEMORIES_KEPT + 5):
        state, memory = memories.for_call(None, ("client", f"call {number}"))
        memories.keep(state, memory)
        kept.append((state, memory))
    oldest, newest = kept[0], kept[-1]
    assert memories.for_call(oldest[0], oldest[1].binding)[1] is not oldest[1]
    assert memories.for_call(newest[0], newest[1].binding) == newest


def test_a_state_presented_by_another_call_does_not_keep_its_memory_past_those_waiting_less_long() -> None:
    memories = CallMemories()
    kept: list[tuple[str, CallMemory]] = []
    for number in range(ask.MEMORIES_KEPT):
        state, memory = memories.for_call(None, ("client", f"call {number}"))
        memories.keep(state, memory)
        kept.append((state, memory))
    oldest, second = kept[0], kept[1]
    memories.for_call(oldest[0], ("client", "another call"))  # finds nothing of its own
    state, memory = memories.for_call(None, ("client", "one call more"))
    memories.keep(state, memory)
    assert memories.for_call(second[0], second[1].binding) == second
    assert memories.for_call(oldest[0], oldest[1].binding)[1] is not oldest[1]
