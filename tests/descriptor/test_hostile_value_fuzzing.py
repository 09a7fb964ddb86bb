"""One hostile scalar in any field of a valid descriptor never stops the gateway.

A valid descriptor of each dialect (the spec examples, the C spec's execution/auth fragments, and
seeds whose `parameters` use every JSON Schema keyword the guide reads) gets one value, at any
JSON pointer of the document, replaced by something hostile: integers of thousands of digits,
numbers at and beyond the float limits, NaN and Infinity, strings of up to 100,000 characters
(versions, placeholders, URLs, descriptions quoting values), nesting up to and past the limit,
lone surrogates, values of the wrong type. The result goes through every consumer of a
descriptor file, in process, the way the commands use them:

- `load_text` (everything loads through it): problems with pointers and short messages, and
  never the safety net's "bug in aai-gateway" problem: every failure has a root-cause check;
- the catalog (`serve`, `scan` and their rescans) with a good app next to it, which stays;
- `validate` (`validate_file` and its report);
- `web_discover` (`accept_descriptor`): the app, or INVALID_REQUEST with its problems;
- for an app that loaded: its guide, and compiling and applying its argument validator.

The subprocess-level tests (serve over stdio, the CLI, web_discover over HTTPS, rescans) are in
tests/server/test_hostile_descriptors.py and tests/cli/test_hostile_descriptors.py. Example
counts come from the Hypothesis profile (tests/conftest.py).
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import functools
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aai_gateway.cli.validate import FileReport, validate_file
from aai_gateway.descriptor import AppDescriptor, LoadResult, Platform, load_text
from aai_gateway.descriptor.limits import MAX_DESCRIPTOR_BYTES
from aai_gateway.discovery.catalog import build_catalog
from aai_gateway.discovery.sources import Pattern, SourceSpec
from aai_gateway.discovery.web_discovery import accept_descriptor
from aai_gateway.discovery.web_fetch import FetchedDescriptor
from aai_gateway.errors import DescriptorError, InvalidParamsError, Problem
from aai_gateway.guide import example_arguments, render_guide
from aai_gateway.service.arguments import ArgumentValidator
from tests.builders import c_descriptor

from .helpers import JsonDict, source, valid_a, valid_b, valid_c, with_changes
from .test_loader_fuzzing import SEEDS, all_paths, assert_keeps_its_promises, put

SAFETY_NET = "bug in aai-gateway"
LONGEST_MESSAGE = 400
GOOD_APP = "dev.test.good"
WEB_ORIGIN = "https://example.com"

# --------------------------------------------------------------------------- seeds


def every_keyword_parameters() -> JsonDict:
    """Parameters using every keyword the guide, the example builder and the validator read."""
    return {
        "type": "object",
        "definitions": {"tag": {"type": "string", "minLength": 1, "maxLength": 20, "pattern": "^[a-z]+$"}},
        "properties": {
            "query": {
                "type": "string",
                "description": "What to find, e.g. quarterly report",
                "minLength": 1,
                "maxLength": 100,
                "pattern": "^[A-Za-z ]+$",
                "default": "report",
                "examples": ["report"],
            },
            "email": {"type": "string", "format": "email"},
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": 100,
                "exclusiveMinimum": 0,
                "multipleOf": 2,
                "default": 10,
            },
            "ratio": {"type": "number", "minimum": -1.5, "exclusiveMaximum": 2, "multipleOf": 0.5},
            "tags": {
                "type": "array",
                "items": {"$ref": "#/definitions/tag"},
                "minItems": 1,
                "maxItems": 5,
                "uniqueItems": True,
            },
            "mode": {"enum": ["fast", "full"], "const": "fast"},
            "nested": {
                "type": "object",
                "properties": {"pair": {"type": "array", "items": [{"type": "integer"}, {"type": "string"}]}},
                "required": ["pair"],
                "additionalProperties": {"type": "string"},
                "minProperties": 1,
            },
            "choice": {"oneOf": [{"type": "string"}, {"type": "integer", "minimum": 3}], "allOf": [{}]},
        },
        "required": ["query", "limit", "tags"],
    }


def _every_keyword_seed(document: Callable[[], JsonDict], *pointers: str) -> JsonDict:
    return with_changes(document(), *((p, every_keyword_parameters()) for p in pointers))


HOSTILE_SEEDS: dict[str, Callable[[], JsonDict]] = {
    **SEEDS,
    "a-every-keyword": functools.partial(
        _every_keyword_seed, functools.partial(valid_a, "web"), "/tools/0/parameters"
    ),
    "b-every-keyword": functools.partial(
        _every_keyword_seed,
        valid_b,
        "/platforms/linux/tools/0/parameters",
        "/platforms/macos/tools/0/parameters",
        "/platforms/web/tools/0/parameters",
    ),
    "c-every-keyword": functools.partial(
        _every_keyword_seed, functools.partial(valid_c, "web"), "/tools/0/parameters"
    ),
}


# --------------------------------------------------------------------------- hostile scalars (as JSON text)

SIZES = (65, 257, 4_301, 100_000)
STRING_SHAPES: tuple[Callable[[int], str], ...] = (
    lambda n: "a" * n,
    lambda n: "1" + "0" * n + ".0.0",
    lambda n: "1.0.0-" + "1" * n,
    lambda n: "${" + "a" * n + "}",
    lambda n: "e.g. 1" + "0" * n,
    lambda n: "for example " + "[" * n,
    lambda n: "https://example.com/" + "a" * n,
    lambda n: "x" * n + "\ud800",
)

huge_integers = st.integers(310, 6_000).flatmap(
    lambda digits: st.sampled_from(["1" + "0" * (digits - 1), "-" + "9" * digits])
)
edge_numbers = st.sampled_from(
    [
        str(int(1.7976931348623157e308)),
        "1.7976931348623157e308",
        "-1.7976931348623157e308",
        "1e308",
        "5e-324",
        "1e-400",
        "123456789012345678901234567890",
        "-0",
        "0.1",
    ]
)
non_finite = st.sampled_from(["NaN", "Infinity", "-Infinity", "1e999", "-1e999"])
huge_strings = st.tuples(st.sampled_from(STRING_SHAPES), st.sampled_from(SIZES)).map(
    lambda shape_and_size: json.dumps(shape_and_size[0](shape_and_size[1]))
)
nesting = st.integers(1, 80).flatmap(
    lambda depth: st.sampled_from(
        [
            "[" * depth + "]" * depth,
            '{"a": ' * depth + "1" + "}" * depth,
            "[" * depth + '"${query}"' + "]" * depth,
        ]
    )
)
lone_surrogates = st.sampled_from(['"\\ud800"', '"a\\udfff"', '"\\udc00\\ud800"', '{"\\ud800": 1}'])
wrong_types = st.sampled_from(
    [
        "{}",
        "[]",
        "true",
        "false",
        "null",
        "0",
        "-1",
        "0.5",
        '""',
        '"x"',
        "[1, 2]",
        '{"a": 1}',
        '"\\u0000\\r\\n"',
    ]
)
hostile_scalars = st.one_of(
    huge_integers, edge_numbers, non_finite, huge_strings, nesting, lone_surrogates, wrong_types
)
hosts = st.sampled_from(["linux", "macos", "windows", "web", "android", "ios"])

_MARK = "\u2063hostile\u2063"


def with_hostile(document: JsonDict, path: tuple[str | int, ...], literal: str) -> str:
    """The document as JSON text with the value at `path` written as the JSON text `literal`."""
    marked = put(copy.deepcopy(document), path, _MARK)
    return json.dumps(marked, ensure_ascii=False).replace(json.dumps(_MARK, ensure_ascii=False), literal)


# --------------------------------------------------------------------------- what every consumer must do


def assert_reported_well(problems: list[Problem]) -> None:
    for problem in problems:
        assert SAFETY_NET not in problem.message, f"needs a root-cause check: {problem.render()}"
        assert len(problem.message) <= LONGEST_MESSAGE, problem.render()[:1000]


def assert_usable(app: AppDescriptor) -> None:
    """The guide renders, and every tool's arguments validator compiles and checks its example."""
    render_guide(app)
    validator = ArgumentValidator()
    for tool in app.tools:
        # InvalidParamsError: an example the builder could not make valid, a poor guide, not a crash
        with contextlib.suppress(InvalidParamsError):
            validator.prepare(app, tool, example_arguments(tool.parameters))


def load_everywhere(text: str, host: Platform, folder: Path) -> LoadResult:
    data = text.encode("utf-8")
    result = load_text(data, source("hostile/aai.json"), host)
    assert_keeps_its_promises(result)
    assert_reported_well(result.problems)
    if result.descriptor is not None:
        assert_usable(result.descriptor)

    (folder / "hostile.json").write_bytes(data)
    catalog = build_catalog([SourceSpec("test", folder, Pattern.FILES, explicit=True)], host)
    assert GOOD_APP in {e.descriptor.id for e in catalog.entries}
    for skipped in catalog.skipped:
        assert_reported_well(list(skipped.problems))

    report = FileReport(
        str(folder / "hostile.json"), validate_file(folder / "hostile.json", _args(host)), True
    )
    assert report.render()
    assert_reported_well(report.problems)

    fetched = FetchedDescriptor(WEB_ORIGIN, WEB_ORIGIN + "/.well-known/aai.json", data, 200)
    try:
        accept_descriptor(fetched)
    except DescriptorError as refused:
        assert_reported_well(refused.problems)
    return result


def _args(host: Platform) -> argparse.Namespace:
    return argparse.Namespace(platform=host if host != "web" else None)


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A discovery folder with a good app; each example writes its hostile file next to it."""
    path = tmp_path_factory.mktemp("hostile")
    good = c_descriptor(GOOD_APP, type="http", baseUrl="http://127.0.0.1:9")
    (path / "good.json").write_text(json.dumps(good), encoding="utf-8")
    return path


# --------------------------------------------------------------------------- properties

# Each seed gets a sixth of the profile's examples (the seeds are many: every dialect's shapes).
PER_SEED = settings(max_examples=max(10, settings().max_examples // 6))


@pytest.mark.parametrize("seed", HOSTILE_SEEDS, ids=str)
@PER_SEED
@given(data=st.data(), host=hosts)
def test_a_hostile_scalar_in_any_field_is_that_files_problem_everywhere_it_is_loaded(
    seed: str, folder: Path, data: st.DataObject, host: Platform
) -> None:
    document = HOSTILE_SEEDS[seed]()
    # Last paths first: Hypothesis shrinks towards early choices, which should be the deep fields.
    path = data.draw(st.sampled_from(all_paths(document)[:0:-1]), label="path")
    literal = data.draw(hostile_scalars, label="hostile")

    load_everywhere(with_hostile(document, path, literal), host, folder)


# Deterministic sweep: each of these in every field of every seed, through the loader and, when the
# app loads, its guide and argument validator. Cheap enough for every run.
SWEEP = (
    "1" + "0" * 5000,
    "9" * 400,
    "-1.7976931348623157e308",
    "5e-324",
    "NaN",
    json.dumps("1" + "0" * 5000 + ".0.0"),
    json.dumps("x" * 5000),
    json.dumps("${" + "a" * 5000 + "}"),
    json.dumps("e.g. 1" + "0" * 5000),
    "[" * 70 + "]" * 70,
    '"\\ud800"',
    "{}",
    "null",
)


@pytest.mark.parametrize("seed", HOSTILE_SEEDS, ids=str)
def test_every_field_of_every_seed_survives_each_hostile_scalar(seed: str) -> None:
    document = HOSTILE_SEEDS[seed]()
    for path in all_paths(document)[1:]:
        for literal in SWEEP:
            text = with_hostile(document, path, literal)
            assert len(text) < MAX_DESCRIPTOR_BYTES
            result = load_text(text, source("hostile/aai.json"), "linux")
            assert_keeps_its_promises(result)
            assert_reported_well(result.problems)
            if result.descriptor is not None:
                assert_usable(result.descriptor)


def test_the_every_keyword_seeds_load_and_render() -> None:
    for name in ("a-every-keyword", "b-every-keyword", "c-every-keyword"):
        result = load_text(json.dumps(HOSTILE_SEEDS[name]()), source(), "linux")
        assert result.errors == [], name
        assert result.descriptor is not None
        assert_usable(result.descriptor)


def test_a_good_file_next_to_the_hostile_one_is_what_the_catalog_check_relies_on(folder: Path) -> None:
    (folder / "hostile.json").write_text("{}", encoding="utf-8")

    catalog = build_catalog([SourceSpec("test", folder, Pattern.FILES, explicit=True)], "linux")

    assert [e.descriptor.id for e in catalog.entries] == [GOOD_APP]
    assert [Path(s.path).name for s in catalog.skipped] == ["hostile.json"]
