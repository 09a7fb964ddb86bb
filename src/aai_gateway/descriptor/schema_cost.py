"""How much work checking one value against a JSON Schema can take, found before a descriptor loads.

A schema is a graph: `$ref` lets many places share one definition. So a few hundred bytes can
describe `anyOf` alternatives that each lead to the next such `anyOf`, thirty levels deep: a
billion paths, and jsonschema-rs (which does not memoize) follows every one of them to reject a
single wrong value, in the guide's example builder or when an agent's arguments are checked.
It also compiles a chain of references in time that grows with the square of its length.

`costly_value` counts, for the values an argument can hold (the whole argument object, each
property, each array item, ... as the schema's keywords lead into them), how many subschemas
jsonschema-rs would check that value against: every path through `$ref`, `allOf`, `anyOf`,
`oneOf`, `not` and `if`/`then`/`else` counts, a path that comes back to where it started
(a recursive schema) counts once, and a value nested inside another is counted on its own. The
count is an upper bound (every alternative is assumed to be tried; keywords beside `$ref` are
counted although Draft-07 ignores them) and never takes more than `MAX_WORK` steps. Ordinary
schemas stay far below `MAX_CHECKS`, the bundled ones below 100.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from typing import Any, Final
from urllib.parse import unquote, urljoin

from ..errors import escape_pointer_token

MAX_CHECKS: Final = 2_000  # subschemas one value may be checked against
MAX_WORK: Final = 200_000  # steps this count may take (about half a second)
_SAME_VALUE_LISTS: Final = ("allOf", "anyOf", "oneOf")
_SAME_VALUE: Final = ("not", "if", "then", "else")
_ANY: Final = "*"  # a label standing for every property name, or every array index
_INNER_KEYWORDS: Final = frozenset(
    {
        "properties",
        "patternProperties",
        "additionalProperties",
        "propertyNames",
        "items",
        "additionalItems",
        "contains",
    }
)
# Keywords that lead to other schemas: a schema with none of them is a leaf (most are).
_STRUCTURAL: Final = frozenset(
    {*_SAME_VALUE_LISTS, *_SAME_VALUE, *_INNER_KEYWORDS, "$ref", "$id", "dependencies", "definitions"}
)
_LEAF: Final[tuple[list[Node], list[tuple[str, str, Node]]]] = ([], [])

Node = dict[str, Any]
State = dict[int, tuple[Node, int]]  # id(node) → (node, number of paths that reach it)


class CostlySchemaError(ValueError):
    """The schema is too costly to check, or to find out how costly it is."""


def costly_value(schema: Any) -> str | None:
    """None when every value is checked against at most `MAX_CHECKS` subschemas; else where one
    value that would be checked against more is (`/x/*/name`: a JSON-pointer-like path, `*` for
    any name or index). CostlySchemaError when counting takes more than `MAX_WORK` steps."""
    if not isinstance(schema, dict):
        return None
    return _Count(schema).run()


class _Count:
    def __init__(self, root: Node) -> None:
        self.root = root
        self.work = 0
        self.resources: dict[str, Node] = {"": root}  # `$id` without fragment → its schema
        self.anchors: dict[str, Node] = {}  # `$id` with a plain-name fragment → its schema
        self.bases: dict[int, str] = {}  # id(schema) → base URI its references are resolved against
        self.edges: dict[int, tuple[list[Node], list[tuple[str, str, Node]]]] = {}
        self._index()

    def spend(self, steps: int = 1) -> None:
        self.work += steps
        if self.work > MAX_WORK:
            raise CostlySchemaError(f"counting took more than {MAX_WORK} steps")

    # ------------------------------------------------------------------ the graph

    def _index(self) -> None:
        """Every subschema's base URI, and every `$id`, as jsonschema-rs resolves references."""
        pending: list[tuple[Node, str]] = [(self.root, "")]
        while pending:
            node, base = pending.pop()
            if id(node) in self.bases or not _STRUCTURAL.intersection(node):
                continue
            self.spend()
            declared = node.get("$id")
            if isinstance(declared, str):
                absolute = urljoin(base, declared)
                uri, _, fragment = absolute.partition("#")
                if fragment and not fragment.startswith("/"):
                    self.anchors[absolute] = node
                else:
                    self.resources.setdefault(uri, node)
                    base = uri
            self.bases[id(node)] = base
            pending.extend((child, base) for child in _subschemas(node))

    def _children(self, node: Node) -> tuple[list[Node], list[tuple[str, str, Node]]]:
        """The subschemas checked against the same value, and those checked against values inside
        it: (kind, label, subschema) with kind `p` (property), `i` (item) or `k` (key)."""
        if not _STRUCTURAL.intersection(node):
            return _LEAF
        key = id(node)
        if key not in self.edges:
            same = [s for name in _SAME_VALUE if isinstance(s := node.get(name), dict)]
            for name in _SAME_VALUE_LISTS:
                if isinstance(node.get(name), list):
                    same += [s for s in node[name] if isinstance(s, dict)]
            if isinstance(node.get("dependencies"), dict):
                same += [s for s in node["dependencies"].values() if isinstance(s, dict)]
            if isinstance(node.get("$ref"), str):
                target = self._resolve(node["$ref"], self.bases.get(key, ""))
                if target is not None:
                    same.append(target)
            below = list(_inner(node))
            self.spend(1 + len(same) + len(below))
            self.edges[key] = (same, below)
        return self.edges[key]

    def _resolve(self, ref: str, base: str) -> Node | None:
        absolute = urljoin(base, ref)
        if absolute in self.anchors:
            return self.anchors[absolute]
        uri, _, fragment = absolute.partition("#")
        node: Any = self.resources.get(uri)
        for raw in fragment.split("/")[1:] if fragment.startswith("/") else []:
            token = unquote(raw).replace("~1", "/").replace("~0", "~")
            self.spend()
            if isinstance(node, dict):
                node = node.get(token)
            elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
                node = node[int(token)]
            else:
                return None
        return node if isinstance(node, dict) else None

    # ------------------------------------------------------------------ counting

    def run(self) -> str | None:
        queue: deque[tuple[str, State]] = deque([("", {id(self.root): (self.root, 1)})])
        seen: set[frozenset[tuple[int, int]]] = set()
        while queue:
            where, state = queue.popleft()
            if len(state) == 1:
                node, count = next(iter(state.values()))
                if not _STRUCTURAL.intersection(node):  # a leaf: checked once per path to it
                    if count > MAX_CHECKS:
                        return where or "/"
                    continue
            closure = self._closure(state)
            if closure is None or sum(count for _, count in closure.values()) > MAX_CHECKS:
                return where or "/"
            for label, inner in self._inner_states(closure):
                signature = frozenset((key, count) for key, (_, count) in inner.items())
                if signature not in seen:
                    seen.add(signature)
                    queue.append((f"{where}/{label}", inner))
        return None

    def _closure(self, state: State) -> State | None:
        """`state` with everything checked against the same value, each with its number of paths
        (a reference back to a schema still being followed is a loop, and not followed again);
        None as soon as more than `MAX_CHECKS` different schemas are found (each costs a check)."""
        order: list[Node] = []  # finished last first: every non-loop edge points later in it
        position: dict[int, int] = {}
        started: set[int] = set()
        for start, _ in state.values():
            if id(start) in started:
                continue
            started.add(id(start))
            stack: list[tuple[Node, Iterator[Node]]] = [(start, iter(self._children(start)[0]))]
            while stack:
                node, pending = stack[-1]
                child = next(pending, None)
                if child is None:
                    stack.pop()
                    position[id(node)] = len(order)
                    order.append(node)
                elif id(child) not in started:
                    started.add(id(child))
                    if len(started) > MAX_CHECKS:
                        return None
                    stack.append((child, iter(self._children(child)[0])))
        counts = {key: count for key, (_, count) in state.items()}
        rank = {key: len(order) - 1 - at for key, at in position.items()}
        for node in reversed(order):
            count = counts.get(id(node), 0)
            if count == 0:
                continue
            for child in self._children(node)[0]:
                self.spend()
                if rank[id(child)] > rank[id(node)]:  # not a loop back to an enclosing schema
                    counts[id(child)] = min(counts.get(id(child), 0) + count, MAX_CHECKS + 1)
        return {id(node): (node, counts[id(node)]) for node in order if counts.get(id(node))}

    def _inner_states(self, closure: State) -> Iterator[tuple[str, State]]:
        """For each value inside the checked one (a named property, an item, any other property
        or item, a key): the subschemas it is checked against. A named value checked against
        leaf schemas only (most are) is not listed: a leaf costs one check per path to it, and
        those paths are already counted in `closure`."""
        below = [
            (kind, label, child, count)
            for node, count in closure.values()
            for kind, label, child in self._children(node)[1]
        ]
        self.spend(len(below))
        anything: dict[str, State] = {}
        for kind, label, child, count in below:
            if label == _ANY:
                _add(anything.setdefault(kind, {}), child, count)
        named: dict[tuple[str, str], State] = {}
        for kind, label, child, count in below:
            if label != _ANY and (kind in anything or _STRUCTURAL.intersection(child)):
                _add(named.setdefault((kind, label), {}), child, count)
        for (kind, label), state in named.items():
            merged = dict(state)
            for node, count in anything.get(kind, {}).values():
                _add(merged, node, count)
            self.spend(len(merged))
            yield escape_pointer_token(label), merged
        for state in anything.values():
            yield _ANY, state


def _add(state: State, node: Node, count: int) -> None:
    known = state.get(id(node))
    state[id(node)] = (node, min((known[1] if known else 0) + count, MAX_CHECKS + 1))


def _inner(node: Node) -> Iterator[tuple[str, str, Node]]:
    properties = node.get("properties")
    if isinstance(properties, dict):
        yield from (("p", str(name), s) for name, s in properties.items() if isinstance(s, dict))
    patterns = node.get("patternProperties")
    if isinstance(patterns, dict):
        yield from (("p", _ANY, s) for s in patterns.values() if isinstance(s, dict))
    for keyword, kind in (("additionalProperties", "p"), ("propertyNames", "k"), ("contains", "i")):
        if isinstance(node.get(keyword), dict):
            yield kind, _ANY, node[keyword]
    items = node.get("items")
    if isinstance(items, dict):
        yield "i", _ANY, items
    elif isinstance(items, list):
        yield from (("i", str(i), s) for i, s in enumerate(items) if isinstance(s, dict))
        if isinstance(node.get("additionalItems"), dict):
            yield "i", _ANY, node["additionalItems"]


def _subschemas(node: Node) -> Iterator[Node]:
    """Every schema directly inside `node`, wherever a keyword puts one (for finding `$id`s)."""
    for name in (
        *_SAME_VALUE,
        "additionalProperties",
        "propertyNames",
        "contains",
        "items",
        "additionalItems",
    ):
        value = node.get(name)
        if isinstance(value, dict):
            yield value
    for name in (*_SAME_VALUE_LISTS, "items"):
        if isinstance(node.get(name), list):
            yield from (s for s in node[name] if isinstance(s, dict))
    for name in ("properties", "patternProperties", "definitions", "dependencies"):
        if isinstance(node.get(name), dict):
            yield from (s for s in node[name].values() if isinstance(s, dict))
