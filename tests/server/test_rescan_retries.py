"""A rescan that fails is tried again later and later, never in a tight loop."""

from __future__ import annotations

from aai_gateway.server.app import MAX_RETRY_SECONDS, retry_delay


def test_a_failing_rescan_waits_twice_as_long_after_each_failure_up_to_a_limit() -> None:
    delays = [retry_delay(2.0, failures) for failures in range(1, 12)]
    assert delays[:4] == [2.0, 4.0, 8.0, 16.0]
    assert delays == sorted(delays) and delays[-1] == MAX_RETRY_SECONDS
