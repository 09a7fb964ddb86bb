"""The private parts of other packages the gateway relies on, each checked for the shape it relies on.

There is no public way to do these three things, so the gateway reaches inside: an upgrade that
changes one of them fails here, naming what changed and which module must change with it,
instead of degrading quietly (a guide without examples, a web app's request that escapes the
web network rules, a DBus message sent into a dead connection).
"""

from __future__ import annotations

import os
import re
import select
import signal
import stat
from collections.abc import Iterator

import httpcore
import httpx
import pytest
from dbus_fast.aio import MessageBus

from aai_gateway.discovery.web import RefusedAddressError, WebFetchPolicy
from aai_gateway.discovery.web_transport import GuardedTransport
from aai_gateway.guide.patterns import pattern_example
from tests.dbus_bus import PrivateBus, private_bus_or_fail
from tests.discovery.web_support import fixed_resolver


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # dbus-fast runs on asyncio


# --------------------------------------------------------------------------- re._parser


# One pattern per kind of piece guide/patterns.py reads from Python's regex parser, and the example
# it builds from it.
PATTERN_PIECES = {
    "^ab$": "ab",  # AT, LITERAL
    "[^a]": "b",  # NOT_LITERAL
    ".": "a",  # ANY
    "[A-Z]": "A",  # IN with RANGE
    r"\d": "0",  # IN with CATEGORY
    "[^a-z0-9]": "A",  # IN with NEGATE
    r"[^\s,]": "a",  # NEGATE, CATEGORY and LITERAL in one class
    "(ab|cd)": "ab",  # SUBPATTERN, BRANCH
    "(?>ab)": "ab",  # ATOMIC_GROUP
    "a{2,3}": "aa",  # MAX_REPEAT
    "a*?": "",  # MIN_REPEAT
    "a++": "a",  # POSSESSIVE_REPEAT
    r"(a)\1": "aa",  # GROUPREF
    r"(a)(?(1)b|c)": "ab",  # GROUPREF_EXISTS
    "(?=a)a": "a",  # ASSERT
    "(?!b)a": "a",  # ASSERT_NOT
}


def test_pythons_regex_parser_still_has_the_shape_the_guides_pattern_examples_read() -> None:
    parser = getattr(re, "_parser", None)
    assert callable(getattr(parser, "parse", None)), (
        "re._parser.parse is gone: guide/patterns.py walks Python's regex parser to build example "
        "strings for schema patterns and must find another parser"
    )
    built = {pattern: pattern_example(pattern) for pattern in PATTERN_PIECES}
    assert built == PATTERN_PIECES, (
        "re._parser gives another shape than guide/patterns.py reads (opcode names, or the "
        "arguments of BRANCH, SUBPATTERN, the repeats, IN or GROUPREF_EXISTS): adapt _emit and _pick"
    )


# --------------------------------------------------------------------------- httpx's _pool


@pytest.mark.anyio
async def test_httpx_still_sends_through_the_pool_that_the_guarded_transport_replaces() -> None:
    plain = httpx.AsyncHTTPTransport()
    try:
        assert isinstance(getattr(plain, "_pool", None), httpcore.AsyncConnectionPool), (
            "httpx.AsyncHTTPTransport keeps no httpcore pool in `_pool` any more: GuardedTransport "
            "(discovery/web_transport.py) must put its guarded network backend under httpx another way"
        )
    finally:
        await plain.aclose()
    # The guarded backend refuses a name that resolves to loopback before connecting; were the
    # request sent through a pool of httpx's own, it would try to connect instead.
    transport = GuardedTransport(WebFetchPolicy(), resolver=fixed_resolver("127.0.0.1"))
    try:
        async with httpx.AsyncClient(transport=transport) as client:
            with pytest.raises(RefusedAddressError):
                await client.get("https://app.example.test:1/")
    except httpx.TransportError as exc:
        pytest.fail(
            "httpx.AsyncHTTPTransport no longer sends through `_pool`: a web app's request went out "
            f"without the web network rules ({exc!r}); fix GuardedTransport (discovery/web_transport.py)"
        )
    finally:
        await transport.aclose()


# --------------------------------------------------------------------------- dbus-fast's _fd


@pytest.fixture
def bus() -> Iterator[PrivateBus]:
    with private_bus_or_fail() as private:
        yield private


@pytest.mark.anyio
async def test_dbus_fast_still_keeps_the_connections_socket_descriptor_in_fd(bus: PrivateBus) -> None:
    connection = await MessageBus(bus_address=bus.address).connect()
    try:
        descriptor = getattr(connection, "_fd", None)
        assert isinstance(descriptor, int) and stat.S_ISSOCK(os.fstat(descriptor).st_mode), (
            "dbus-fast's MessageBus keeps no socket descriptor in `_fd` any more: the DBus executor "
            "(executors/dbus.py, _hung_up) cannot see that the bus hung up and would send into a dead "
            "connection; find the connection's socket another way"
        )
        bus.stop(signal.SIGKILL)
        poller = select.poll()
        poller.register(descriptor, 0)
        assert poller.poll(10_000), (
            "the descriptor in dbus-fast's MessageBus._fd does not report that the bus hung up: it is "
            "not the connection's socket any more; fix _hung_up in executors/dbus.py"
        )
    finally:
        connection.disconnect()
