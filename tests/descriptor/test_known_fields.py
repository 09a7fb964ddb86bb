"""The loader parses a file asking for known fields only (`raw.validated`): a file it so takes
has no unknown field to warn of, and its raw model is the one the ordinary parse makes."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, ValidationError

from aai_gateway.descriptor.loader import _DIALECTS, detect_dialect
from aai_gateway.descriptor.raw import raw_model, unknown_field_warnings

from .helpers import (
    JsonDict,
    read_fixture,
    spec_fixture_paths,
    valid_a,
    valid_b,
    valid_c,
    valid_mcp,
    with_changes,
)

_FIXTURES = [path.name for path in spec_fixture_paths()]


@pytest.mark.parametrize("name", _FIXTURES)
def test_a_file_parsed_with_known_fields_only_has_the_ordinary_raw_model_and_no_unknown_field(
    name: str,
) -> None:
    document = read_fixture(name)
    dialect = detect_dialect(document)
    if dialect is None:
        return
    parse = _DIALECTS[dialect].parse
    try:
        ordinary = parse(document, known_fields_only=False)
    except ValidationError:
        with pytest.raises(ValidationError):
            parse(document, known_fields_only=True)
        return
    try:
        known_only = parse(document, known_fields_only=True)
    except ValidationError as exc:  # for an unknown field only, warned of or not ($schema, x-...)
        assert {error["type"] for error in exc.errors()} == {"extra_forbidden"}
        return
    assert known_only == ordinary
    assert known_only.model_dump() == ordinary.model_dump()
    assert unknown_field_warnings(ordinary) == []


@pytest.mark.parametrize(
    ("document", "pointer"),
    [
        (valid_a(), "/tools/0/parameters/note"),  # in a schema: any key is known there
        (valid_a(), "/tools/0/note"),
        (valid_b(), "/platforms/linux/tools/0/note"),
        (valid_c(), "/app/note"),
        (valid_c(), "/$comment"),  # not warned of, but not a field of the model either
        (valid_mcp(), "/execution/env"),
    ],
)
def test_any_unknown_field_anywhere_fails_the_known_fields_only_parse(
    document: JsonDict, pointer: str
) -> None:
    if pointer == "/execution/env":  # a reference's own field: validated by hand (`extra_of`)
        changed = with_changes(document, (pointer, {"A": {"secret": "A", "note": "x"}}))
    else:
        changed = with_changes(document, (pointer, "x"))
    dialect = detect_dialect(changed)
    assert dialect is not None
    parse = _DIALECTS[dialect].parse
    ordinary = parse(changed, known_fields_only=False)
    if pointer.startswith("/tools/0/parameters/"):
        assert parse(changed, known_fields_only=True) == ordinary
        return
    with pytest.raises(ValidationError):
        parse(changed, known_fields_only=True)


@pytest.mark.parametrize("extras", [{"$schema": "./aai.schema.json"}, {"$comment": "x", "$schema": 1}])
def test_a_top_level_schema_or_comment_costs_no_second_parse_and_no_warning(extras: JsonDict) -> None:
    """Editors put `$schema` at the top (the README says how): such a file is parsed once."""
    document = {**valid_c(), **extras}
    calls: list[bool] = []
    parse = _DIALECTS["C"].parse

    def counted(document: JsonDict, *, known_fields_only: bool = False) -> BaseModel:
        calls.append(known_fields_only)
        return parse(document, known_fields_only=known_fields_only)

    model, warnings = raw_model(counted, document)
    assert (calls, warnings) == ([True], [])
    assert model.model_dump() == {
        key: value for key, value in parse(document).model_dump().items() if key not in extras
    }
