"""The gateway's executors: one per entry point of the group `aai_gateway.executors`.

The built-in executors are declared there too (pyproject.toml), so a package that ships an
execution type registers it exactly as the gateway does (docs/architecture.md, "Adding an
execution type"). An entry point names a factory, `factory(settings) -> (execution types,
executor)`, called once with the `ExecutorSettings` that `cli/` built.

A third-party entry point that fails to load, raises or returns something else is logged and
skipped: it never stops the gateway. Where two entry points claim one execution type the
built-in one wins (else the first by distribution and entry-point name) and the other is logged.
A built-in that fails is a bug in the gateway and raises.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Callable, Iterable
from importlib.metadata import Distribution, EntryPoint, entry_points
from typing import Any

from ..descriptor import ExecutionType
from .base import Executor, ExecutorSettings
from .registry import ExecutorRegistry

logger = logging.getLogger(__name__)

ENTRY_POINT_GROUP = "aai_gateway.executors"
GATEWAY_DISTRIBUTION = "aai-gateway"

Registration = tuple[Iterable[ExecutionType | str], Executor]
"""What a factory returns: the execution types its executor runs, and the executor."""
ExecutorFactory = Callable[[ExecutorSettings], Registration]


def default_registry(settings: ExecutorSettings) -> ExecutorRegistry:
    """Every executor of every installed `aai_gateway.executors` entry point."""
    points = entry_points(group=ENTRY_POINT_GROUP)
    if not any(_is_built_in(point) for point in points):
        logger.error(
            "the installed %s declares no executor entry points (group %s): its metadata is out of "
            "date. Reinstall it (pip install -e . in a checkout)",
            GATEWAY_DISTRIBUTION,
            ENTRY_POINT_GROUP,
        )
    return registry_from(points, settings)


def registry_from(points: Iterable[EntryPoint], settings: ExecutorSettings) -> ExecutorRegistry:
    """The executors of `points` (entry points of the group), built-in ones first."""
    registry = ExecutorRegistry()
    claimed_by: dict[ExecutionType, str] = {}
    ordered = sorted(points, key=lambda point: (not _is_built_in(point), _distribution(point), point.name))
    for point in ordered:
        loaded = _load(point, settings)
        if loaded is None:
            continue
        types, executor = loaded
        for execution_type in types:
            if execution_type in claimed_by:
                logger.warning(
                    "executor entry point %s also claims execution type %r; %s keeps it",
                    _describe(point),
                    execution_type.value,
                    claimed_by[execution_type],
                )
                continue
            claimed_by[execution_type] = _describe(point)
            registry.register(execution_type, executor)
    return registry


def _load(point: EntryPoint, settings: ExecutorSettings) -> tuple[list[ExecutionType], Executor] | None:
    try:
        factory = point.load()
        types, executor = factory(settings)
        return _checked(types, executor), executor
    except Exception as exc:
        if _is_built_in(point):
            raise
        logger.warning(
            "executor entry point %s failed and is skipped: %s: %s",
            _describe(point),
            type(exc).__name__,
            exc,
            exc_info=logger.isEnabledFor(logging.DEBUG),
        )
        return None


def _checked(types: Iterable[Any], executor: Any) -> list[ExecutionType]:
    if not isinstance(executor, Executor):
        raise TypeError(
            f"{executor!r} has not the methods of an Executor (unavailable_reason, execute, aclose)"
        )
    if isinstance(types, str | ExecutionType):
        raise TypeError(f"the execution types must be a list, not {types!r}")
    known = {member.value: member for member in ExecutionType}
    checked: list[ExecutionType] = []
    for each in types:
        if not isinstance(each, str) or each not in known:
            raise ValueError(f"{each!r} is not an execution type; known: {', '.join(sorted(known))}")
        checked.append(known[each])
    return checked


def _is_built_in(point: EntryPoint) -> bool:
    return _distribution(point) == GATEWAY_DISTRIBUTION


def _distribution(point: EntryPoint) -> str:
    """The normalized name of the distribution that declares `point` (PEP 503)."""
    return _distribution_name(point.dist) if point.dist is not None else ""


@functools.lru_cache(maxsize=64)  # by identity: the entry points of one distribution share it
def _distribution_name(dist: Distribution) -> str:
    """Reading a name parses the distribution's whole METADATA file (ours holds the README:
    ~10 ms a read), so each is read once."""
    return re.sub(r"[-_.]+", "-", dist.name).lower()


def _describe(point: EntryPoint) -> str:
    return f"{point.name!r} of {_distribution(point) or 'an unknown distribution'} ({point.value})"
