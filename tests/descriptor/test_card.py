"""An app's card: what the gateway keeps of every app, read back exactly from its record, and a
record that is not exactly what was written is refused."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from aai_gateway.descriptor import AppDescriptor, Source, load_descriptor
from aai_gateway.descriptor.card import AppCard, card_of, texts_of
from aai_gateway.descriptor.card_records import card_from_record, card_record, texts_from_record, texts_record
from aai_gateway.descriptor.mcp_tools import server_probe
from tests.builders import c_descriptor, mcp_descriptor

from .helpers import spec_fixture_paths

SPEC_FILES = [p for p in spec_fixture_paths() if p.suffix == ".json"]


def loaded(path: Path, host: str = "linux") -> AppDescriptor:
    return load_descriptor(path.read_bytes(), Source(kind="file", location=str(path)), host)  # type: ignore[arg-type]


def http_app() -> AppDescriptor:
    document = c_descriptor(
        "dev.test.api", platform="web", type="http", baseUrl="https://api.example.com:8443/v1"
    )
    document["tools"].append(
        {
            "name": "other",
            "description": "Another",
            "parameters": {"type": "object", "properties": {}},
            "execution": {"path": "/other", "method": "POST"},
        }
    )
    return load_descriptor(json.dumps(document), Source(kind="file", location="/apps/api.json"), "web")


def through_json(record: Any) -> Any:
    return json.loads(json.dumps(record, ensure_ascii=False))


@pytest.mark.parametrize("path", SPEC_FILES, ids=lambda p: p.name)
@pytest.mark.parametrize("host", ["linux", "macos", "windows"])
def test_the_card_of_every_spec_example_reads_back_equal_from_its_record(path: Path, host: str) -> None:
    try:
        app = loaded(path, host)
    except Exception:
        pytest.skip("not an app on this host")
    card = card_of(app)
    assert card_from_record(through_json(card_record(card))) == card
    assert texts_from_record(through_json(texts_record(texts_of(app)))) == texts_of(app)


def test_a_card_names_the_app_its_operations_and_the_origins_its_api_is_at() -> None:
    app = http_app()
    card = card_of(app)
    assert (card.id, card.description, card.binding, card.key) == (
        app.id,
        app.description,
        app.binding,
        ("file:/apps/api.json", "dev.test.api"),
    )
    assert card.operations == ("ping", "other")
    assert [(o.scheme, o.host, o.port) for o in card.api_origins] == [("https", "api.example.com", 8443)]


def test_operations_that_share_a_channel_and_a_kind_of_call_share_one_run() -> None:
    card = card_of(http_app())
    assert len(card.runs) == 1
    assert card.operation_runs == (0, 0)
    stand_in = card.runs[0].stand_in("ping")
    assert stand_in.channel == http_app().tools[0].channel
    assert stand_in.call is not None and stand_in.call.kind == "http"


def test_an_app_whose_operations_are_its_servers_keeps_its_servers_run() -> None:
    app = load_descriptor(
        json.dumps(mcp_descriptor("dev.test.server")), Source(kind="file", location="/apps/s.json"), "linux"
    )
    card = card_of(app)
    assert card.operations == () and not card.tools_declared
    probe = server_probe(app)
    assert card.server_run is not None and probe is not None
    assert card.server_run.stand_in("probe").channel == probe.channel


def test_search_texts_keep_names_titles_descriptions_and_at_most_64_parameters() -> None:
    document = c_descriptor("dev.test.texts")
    document["tools"][0]["parameters"]["properties"] = {
        f"p{n}": {"type": "string", "title": f"P {n}", "description": f"the {n}th"} for n in range(70)
    }
    app = load_descriptor(json.dumps(document), Source(kind="file", location="/t.json"), "linux")
    (text,) = texts_of(app)
    assert (text.name, text.description) == ("ping", "Answer with pong")
    assert len(text.parameters) == 64
    assert (text.parameters[3].name, text.parameters[3].title, text.parameters[3].description) == (
        "p3",
        "P 3",
        "the 3th",
    )


def test_search_texts_say_which_operations_only_read_as_their_app_declares_it() -> None:
    document = c_descriptor("dev.test.reads", platform="web", type="http", baseUrl="https://api.example.com")
    operation = {"description": "An operation", "parameters": {"type": "object", "properties": {}}}
    document["tools"] = [
        {**operation, "name": "got", "execution": {"path": "/a", "method": "GET"}},
        {**operation, "name": "posted", "execution": {"path": "/b", "method": "POST"}},
        {
            **operation,
            "name": "hinted",
            "execution": {"path": "/c", "method": "POST"},
            "annotations": {"readOnlyHint": True},
        },
        {
            **operation,
            "name": "denied",
            "execution": {"path": "/d", "method": "GET"},
            "annotations": {"readOnlyHint": False},
        },
    ]
    app = load_descriptor(json.dumps(document), Source(kind="file", location="/r.json"), "web")
    texts = texts_of(app)
    # an HTTP GET changes nothing by definition, unless the app says otherwise
    assert [(t.name, t.reads_only) for t in texts] == [
        ("got", True),
        ("posted", False),
        ("hinted", True),
        ("denied", False),
    ]
    record = through_json(texts_record(texts))
    assert texts_from_record(record) == texts
    with pytest.raises(ValueError):  # a row of the format before: read again, not trusted
        texts_from_record([operation[:4] for operation in record])
    with pytest.raises(ValueError):
        texts_from_record([[*operation[:4], "yes"] for operation in record])


def _valid_record() -> list[Any]:
    return through_json(card_record(card_of(http_app())))  # type: ignore[no-any-return]


def _paths(value: Any, path: tuple[int, ...] = ()) -> list[tuple[int, ...]]:
    found = [path]
    if isinstance(value, list):
        for index, item in enumerate(value):
            found += _paths(item, (*path, index))
    return found


@given(st.data())
def test_a_record_with_any_part_replaced_by_another_kind_of_value_is_refused_or_reads_back_typed(
    data: st.DataObject,
) -> None:
    record = _valid_record()
    path = data.draw(st.sampled_from(_paths(record)[1:]))
    replacement = data.draw(
        st.one_of(
            st.integers(),
            st.booleans(),
            st.none(),
            st.dictionaries(st.text(), st.text()),
            st.lists(st.integers(), max_size=2),
            st.text(max_size=3),
        )
    )
    broken = copy.deepcopy(record)
    target = broken
    for index in path[:-1]:
        target = target[index]
    target[path[-1]] = replacement
    try:
        card = card_from_record(broken)
    except ValueError:
        return
    # accepted: every field still has the type the card promises
    assert isinstance(card, AppCard)
    assert isinstance(card.id, str) and isinstance(card.description, str) and isinstance(card.version, str)
    assert all(isinstance(name, str) for name in card.operations)
    assert all(0 <= n < len(card.runs) for n in card.operation_runs)
    assert card.source_kind in ("file", "web", "bundled", "inline")


@pytest.mark.parametrize("record", [None, [], {}, "card", [1] * 15, _valid_record()[:-1]])
def test_a_record_that_is_not_a_card_is_refused(record: Any) -> None:
    with pytest.raises(ValueError):
        card_from_record(record)
