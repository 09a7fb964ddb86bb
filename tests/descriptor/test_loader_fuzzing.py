"""Property tests: whatever bytes or JSON arrive, the loader answers with problems, never an exception.

Three sources of input: arbitrary JSON values, arbitrary bytes, and valid descriptors (the spec
examples and the C spec's execution/auth fragments) broken by random mutations. Every load must
give a `LoadResult` that keeps the loader's promises (see `assert_keeps_its_promises`), and
`load_descriptor` may raise `DescriptorError` and nothing else.

Sizes come from the Hypothesis profile (tests/conftest.py): `HYPOTHESIS_PROFILE=ci` runs thousands
of examples per property.
"""

from __future__ import annotations

import copy
import functools
import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from aai_gateway.descriptor import (
    AppDescriptor,
    LoadResult,
    Platform,
    dialect_a,
    dialect_b,
    dialect_c,
    load_descriptor,
    load_text,
)
from aai_gateway.descriptor.platforms import PLATFORMS
from aai_gateway.errors import DescriptorError

from .helpers import (
    JsonDict,
    fragments,
    source,
    spec_fixture_paths,
    valid_a,
    valid_b,
    valid_c,
    valid_mcp,
    with_changes,
)

# --------------------------------------------------------------------------- the promises


def assert_keeps_its_promises(result: LoadResult) -> None:
    assert isinstance(result, LoadResult)
    for problem in result.problems:
        assert problem.pointer == "" or problem.pointer.startswith("/"), problem
        assert problem.severity in ("error", "warning"), problem
        assert isinstance(problem.message, str)
        assert problem.message, problem
        problem.render()
    if result.descriptor is None:
        assert result.errors, "a rejected descriptor must come with at least one error"
        return
    assert result.errors == [], "a descriptor with errors must not be returned"
    assert isinstance(result.descriptor, AppDescriptor)
    dumped = result.descriptor.model_dump(mode="json")
    json.dumps(dumped)
    assert AppDescriptor.model_validate(dumped) == result.descriptor


def load_and_check(data: str | bytes, host: Platform) -> LoadResult:
    result = load_text(data, source("fuzz/aai.json"), host)
    assert_keeps_its_promises(result)
    return result


def fuzz_load(data: str | bytes, host: Platform) -> LoadResult:
    """`load_and_check` in a property, tallying how far each example got (--hypothesis-show-statistics)."""
    result = load_and_check(data, host)
    if result.descriptor is not None:
        event(f"loaded, dialect {result.dialect}")
    elif result.dialect is None:
        event("refused before a dialect was recognized")
    else:
        event(f"rejected, dialect {result.dialect}")
    return result


# --------------------------------------------------------------------------- strategies


def _raw_field_names() -> list[str]:
    """Every field name the three dialects' raw models know, as written in files."""
    names: set[str] = set()
    for module in (dialect_a, dialect_b, dialect_c):
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and issubclass(value, BaseModel)
                and value.__module__ == module.__name__
            ):
                names.update(info.alias or name for name, info in value.model_fields.items())
    return sorted(names)


FIELD_NAMES = (
    *_raw_field_names(),
    *("properties", "required", "items", "$ref", "$schema", "definitions", "pattern", "minimum", "enum"),
    *("x-ext", "$comment", "macos", "linux", "windows", "web", "android", "ios", "zh-CN", "en"),
)

INTERESTING_STRINGS = (
    "",
    " ",
    "1.0",
    "1.0.0",
    "1",
    "1.0.0-rc.1+b",
    "01.0.0",
    "http",
    "https",
    "ipc",
    "stdio",
    "acp",
    "apple-events",
    "dbus",
    "com",
    "restapi",
    "applescript",
    "jxa",
    "intent",
    "url_scheme",
    "mcp",
    "oauth2",
    "apiKey",
    "api_key",
    "bearer",
    "appCredential",
    "cookie",
    "header",
    "query",
    "session",
    "system",
    "object",
    "string",
    "array",
    "integer",
    "macos",
    "linux",
    "windows",
    "web",
    "android",
    "ios",
    "en",
    "zh-CN",
    "${query}",
    "${x}",
    "${}",
    "{x}",
    "/items/{query}",
    "https://api.example.com/v1",
    "http://[::1",
    "http://[",
    "https://u:p@example.com",
    "http://127.0.0.1:8080/mcp",
    "GITHUB_TOKEN",
    "ftp://x",
    "a\r\nX: y",
    "\x00",
    "#/definitions/x",
    "https://example.com/schema.json",
    "(",
    "AAI ",
    "call",
    "org.example.Mail",
    "/org/example/Mail",
    "GET",
    "post",
    "create",
    "set",
    "return",
    "result as text",
    "Mail|邮件|Courrier",
    "tenantAccessToken",
    "Infinity",
    "1e999",
    "~1/~0",
)


def rarely(common: st.SearchStrategy[Any], rare: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """`rare` one time in ten: values the JSON reader refuses would otherwise hide everything behind them."""
    return st.integers(0, 9).flatmap(lambda n: rare if n == 0 else common)


keys = rarely(
    st.one_of(st.sampled_from(FIELD_NAMES), st.text(max_size=10), st.just("")),
    st.text(st.characters(exclude_categories=()), max_size=4),  # lone surrogates included
)
any_text = rarely(
    st.one_of(st.sampled_from(INTERESTING_STRINGS), st.text(max_size=20)),
    st.one_of(
        st.sampled_from(["\ud800", "a\udfff"]), st.text(st.characters(exclude_categories=()), max_size=8)
    ),
)
numbers = st.one_of(
    st.integers(-5, 5),
    st.integers(),
    st.integers(min_value=-(10**400), max_value=10**400),
    rarely(st.floats(allow_nan=False, allow_infinity=False), st.floats(allow_nan=False)),  # inf: see `dumps`
    st.sampled_from([0.5, -0.0, 1e-320, 1e308, 2**53 + 1, 120000, 7200]),
)
scalars = st.one_of(st.none(), st.booleans(), numbers, any_text)
json_values = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(keys, children, max_size=4),
    ),
    max_leaves=20,
)

DUPLICATE_MARK = "\u2063dup\u2063"


def dumps(document: Any, *, ascii_only: bool) -> str:
    """JSON text of `document`; infinities become overflowing literals, marked keys repeat a sibling."""
    text = json.dumps(document, ensure_ascii=ascii_only)
    text = text.replace("-Infinity", "-1e999").replace("Infinity", "1e999")
    mark = json.dumps(DUPLICATE_MARK, ensure_ascii=ascii_only)[1:-1]
    return text.replace('"' + mark, '"')


@st.composite
def encoded(draw: st.DrawFn, document: Any) -> str | bytes:
    """The document as str, UTF-8, UTF-8 with BOM, or (for lone surrogates) invalid UTF-8."""
    form = draw(st.sampled_from(["str", "str-ascii", "utf8", "utf8-bom", "surrogatepass"]))
    text = dumps(document, ascii_only=form in ("str-ascii", "utf8", "utf8-bom"))
    if form.startswith("str"):
        return text
    raw = text.encode("utf-8", "surrogatepass")
    return b"\xef\xbb\xbf" + raw if form == "utf8-bom" else raw


hosts = st.sampled_from(PLATFORMS)


# --------------------------------------------------------------------------- mutations

JsonPath = tuple[str | int, ...]


def all_paths(value: Any, path: JsonPath = ()) -> list[JsonPath]:
    found = [path]
    if isinstance(value, dict):
        for key, item in value.items():
            found += all_paths(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += all_paths(item, (*path, index))
    return found


def get(document: Any, path: JsonPath) -> Any:
    for token in path:
        document = document[token]
    return document


def put(document: Any, path: JsonPath, value: Any) -> Any:
    if not path:
        return value
    get(document, path[:-1])[path[-1]] = value
    return document


def other_type(value: Any) -> Any:
    """A value of a different JSON type that still carries the original's content."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float) and math.isinf(value):
        return [value]
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return {str(i): item for i, item in enumerate(value)}
    if isinstance(value, dict):
        return list(value.values())
    return {}


@st.composite
def mutation(draw: st.DrawFn, document: Any) -> Any:
    """One random change somewhere below the root of `document` (changed in place and returned).

    The root itself is left alone (other properties feed arbitrary roots), and the paths are offered
    last-first: Hypothesis favours early choices, which would otherwise mostly hit the dialect marker."""
    path = draw(st.sampled_from(all_paths(document)[:0:-1] or [()]))
    target = get(document, path)
    op = draw(
        st.sampled_from(
            [
                "delete",
                "replace",
                "retype",
                "insert",
                "duplicate",
                "nest",
                "text",
                "number",
                "dupkey",
                "tweak",
            ]
        )
    )
    if op == "delete" and path:
        parent = get(document, path[:-1])
        del parent[path[-1]]
        return document
    if op == "replace":
        return put(document, path, draw(json_values))
    if op == "retype":
        return put(document, path, other_type(target))
    if op == "insert" and isinstance(target, dict):
        target[draw(keys)] = draw(json_values)
        return document
    if op == "insert" and isinstance(target, list):
        target.insert(draw(st.integers(0, len(target))), draw(json_values))
        return document
    if op == "duplicate" and isinstance(target, list) and target:
        target.append(copy.deepcopy(draw(st.sampled_from(target))))
        return document
    if op == "nest":
        depth = draw(rarely(st.integers(1, 60), st.integers(61, 80)))
        nested = target
        for _ in range(depth):
            nested = [nested] if draw(st.booleans()) else {"a": nested}
        return put(document, path, nested)
    if op == "text":
        return put(document, path, draw(any_text))
    if op == "number":
        return put(document, path, draw(rarely(numbers, st.sampled_from([math.inf, -math.inf]))))
    if op == "dupkey" and isinstance(target, dict) and target:
        key = draw(st.sampled_from(sorted(target)))
        target[DUPLICATE_MARK + key] = draw(json_values)
        return document
    if op == "tweak" and isinstance(target, str):
        insert = draw(
            rarely(
                st.sampled_from(["${query}", "${x}", "{x}", "\n", "|", "-rc.1", ".0", "~", "/"]),
                st.just("\ud800"),
            )
        )
        at = draw(st.integers(0, len(target)))
        return put(document, path, target[:at] + insert + target[at:])
    return put(document, path, draw(json_values))


@st.composite
def mutated(draw: st.DrawFn, seed: JsonDict) -> Any:
    document: Any = copy.deepcopy(seed)
    for _ in range(draw(st.integers(1, 3))):
        document = draw(mutation(document))
    return document


def _execution_seed(execution: JsonDict) -> JsonDict:
    platform = {"http": "web", "apple-events": "macos", "dbus": "linux", "com": "windows"}.get(
        execution["type"], "linux"
    )
    return with_changes(valid_c("macos"), ("/platform", platform), ("/execution", execution))


def _read_seed(path: Path) -> JsonDict:
    document: JsonDict = json.loads(path.read_text(encoding="utf-8"))
    return document


def _auth_seed(auth: JsonDict) -> JsonDict:
    return with_changes(valid_c("web"), ("/auth", auth))


def _mcp_with_tools(transport: str) -> JsonDict:
    """An mcp descriptor that declares its tools, with MCP annotations, for one platform."""
    annotations = {"title": "Search", "readOnlyHint": True, "openWorldHint": False}
    tools = [{**tool, "annotations": annotations} for tool in valid_c("macos")["tools"]]
    return with_changes(valid_mcp(transport), ("/platform", "linux"), ("/tools", tools))


SEEDS: dict[str, Callable[[], JsonDict]] = {
    **{path.name: functools.partial(_read_seed, path) for path in spec_fixture_paths()},
    **{f"c-execution-{e['type']}": functools.partial(_execution_seed, e) for e in fragments()["execution"]},
    **{f"c-auth-{a['type']}": functools.partial(_auth_seed, a) for a in fragments()["auth"]},
    "a-web-minimal": functools.partial(valid_a, "web"),
    "b-minimal": valid_b,
    "c-mcp-stdio": valid_mcp,
    "c-mcp-http-with-tools": functools.partial(_mcp_with_tools, "http"),
}


# --------------------------------------------------------------------------- properties


@given(document=json_values, host=hosts, data=st.data())
def test_any_json_value_is_answered_with_problems_never_an_exception(
    document: Any, host: Platform, data: st.DataObject
) -> None:
    result = fuzz_load(data.draw(encoded(document)), host)

    if not isinstance(document, dict):
        assert result.descriptor is None


markers = st.fixed_dictionaries(
    {},
    optional={
        "schemaVersion": scalars,
        "schema_version": scalars,
        "appId": scalars,
        "platforms": json_values,
        "platform": st.sampled_from([*PLATFORMS, "beos"]),
        "app": json_values,
        "tools": json_values,
    },
)


@given(
    document=st.tuples(markers, st.dictionaries(keys, json_values, max_size=4)).map(
        lambda t: {**t[1], **t[0]}
    ),
    host=hosts,
    data=st.data(),
)
def test_any_object_that_names_a_dialect_is_answered_with_problems_never_an_exception(
    document: JsonDict, host: Platform, data: st.DataObject
) -> None:
    fuzz_load(data.draw(encoded(document)), host)


@given(data=st.binary(max_size=300), host=hosts)
def test_any_bytes_are_answered_with_problems_never_an_exception(data: bytes, host: Platform) -> None:
    fuzz_load(data, host)


@given(
    prefix=st.sampled_from([b"", b"\xef\xbb\xbf", b"\xff\xfe", b"{", b'{"schemaVersion": ']),
    data=st.binary(max_size=100),
    host=hosts,
)
def test_valid_looking_starts_followed_by_junk_bytes_never_raise(
    prefix: bytes, data: bytes, host: Platform
) -> None:
    fuzz_load(prefix + data, host)


@given(
    depth=st.one_of(st.integers(1, 130), st.integers(130, 5000)),
    opener=st.sampled_from(["[", '{"a": ', '[{"a": ', '{"schemaVersion": [']),
    closed=st.booleans(),
    host=hosts,
)
def test_deeply_nested_json_is_refused_without_exhausting_the_stack(
    depth: int, opener: str, closed: bool, host: Platform
) -> None:
    closer = {"[": "]", '{"a": ': "}", '[{"a": ': "}]", '{"schemaVersion": [': "]}"}[opener]
    inner = "1" if opener.endswith(": ") else ""
    text = opener * depth + inner + (closer * depth if closed else "")

    result = fuzz_load(text, host)

    assert result.descriptor is None


# Each seed gets a fifth of the profile's examples: 30 seeds x 40 in the default profile, x 140 in
# CI's (4,200 mutated descriptors in all).
PER_SEED = settings(max_examples=max(25, settings().max_examples // 5))


@pytest.mark.parametrize("seed", SEEDS, ids=str)
@PER_SEED
@given(data=st.data(), host=hosts)
def test_a_mutated_valid_descriptor_is_answered_with_problems_never_an_exception(
    seed: str, data: st.DataObject, host: Platform
) -> None:
    document = data.draw(mutated(SEEDS[seed]()), label="document")

    fuzz_load(data.draw(encoded(document), label="encoded"), host)


@given(
    document=st.one_of(
        json_values,
        st.sampled_from(sorted(SEEDS)).flatmap(lambda name: mutated(SEEDS[name]())),
    ),
    host=hosts,
    data=st.data(),
)
def test_load_descriptor_raises_nothing_but_descriptor_error(
    document: Any, host: Platform, data: st.DataObject
) -> None:
    try:
        descriptor = load_descriptor(data.draw(encoded(document)), source("fuzz/aai.json"), host)
    except DescriptorError as error:
        assert any(p.severity == "error" for p in error.problems)
        assert all(p.file == "fuzz/aai.json" for p in error.problems)
        assert error.message.startswith("invalid aai.json: fuzz/aai.json: ")
    else:
        assert isinstance(descriptor, AppDescriptor)


# --------------------------------------------------------------------------- seeds and edge cases


@pytest.mark.parametrize("seed", SEEDS, ids=str)
def test_every_seed_loads_before_it_is_mutated(seed: str) -> None:
    result = load_and_check(json.dumps(SEEDS[seed]()), "linux")

    assert result.descriptor is not None


def test_an_integer_longer_than_python_converts_is_refused_where_it_is_written() -> None:
    result = load_and_check('{"schemaVersion": ' + "9" * 5000 + "}", "linux")

    assert result.descriptor is None
    assert [(p.pointer, "too large" in p.message) for p in result.errors] == [("/schemaVersion", True)]


@pytest.mark.parametrize("host", PLATFORMS)
def test_every_seed_loads_on_every_host_platform(host: Platform) -> None:
    for name, seed in SEEDS.items():
        result = load_and_check(json.dumps(seed()), host)
        assert result.errors == [], name


def test_the_seeds_cover_every_dialect_and_every_dialect_c_execution_type() -> None:
    loaded = [load_text(json.dumps(seed()), source(), "linux").descriptor for seed in SEEDS.values()]
    descriptors = [d for d in loaded if d is not None]

    assert {d.dialect for d in descriptors} == {"A", "B", "C"}
    c_types = {s.declared_type for d in descriptors if d.dialect == "C" for s in d.sections}
    assert c_types == {"http", "stdio", "acp", "apple-events", "dbus", "com", "mcp"}


def test_the_mutation_helpers_can_repeat_a_key_in_the_json_text() -> None:
    text = dumps({"a": 1, DUPLICATE_MARK + "a": 2}, ascii_only=True)

    assert text == '{"a": 1, "a": 2}'
