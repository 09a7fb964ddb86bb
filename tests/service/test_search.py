"""`Gateway.search`: every app tools/list could list is one search away, listed or not; a search
restricted to an app gives its operations' full details; the index is built once per catalog."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterable, Sequence

import anyio
import pytest

from aai_gateway.consent.listing_config import ListingConfig
from aai_gateway.descriptor import AppDescriptor, Source, load_descriptor
from aai_gateway.descriptor.card import AppCard, OperationText, card_of
from aai_gateway.errors import AaiError, ErrorCode
from aai_gateway.search import index as search_index
from aai_gateway.service import Gateway
from aai_gateway.service import search as service_search
from aai_gateway.service.resolve import resolve_tool
from tests.builders import c_descriptor

from .apps import catalog_of, gateway_of, http_app, many_apps, operation

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def notes_app() -> AppDescriptor:
    return http_app(
        "dev.test.notes",
        name="Notes",
        description="Personal notes",
        aliases=("memo",),
        tools=[
            operation("createNote", "Create a note with a title and a body", title="Title of the note"),
            operation("searchNotes", "Find notes whose text contains words", query="Words to look for"),
            operation("deleteNote", "Delete a note for good", note_id="Which note"),
        ],
    )


async def test_a_search_finds_an_app_that_is_not_listed_and_says_what_to_call_next() -> None:
    gateway = gateway_of([*many_apps(30), notes_app()], ListingConfig(max_apps=5))
    assert gateway.entry_for_tool_name("app_dev_test_notes") not in gateway.entries

    answer = await gateway.search("create note", 5)

    first = answer.results[0]
    assert (first.app, first.tool) == ("dev.test.notes", "createNote")
    assert first.description == "Create a note with a title and a body"
    assert set(answer.structured()["results"][0]) == {"app", "tool", "score", "description"}
    assert "`createNote` of `dev.test.notes`" in answer.text
    assert 'aai_search({"app": "dev.test.notes", "query": "createNote", "limit": 1})' in answer.text


async def test_an_app_found_by_search_is_offered_through_its_entry_only_when_it_is_listed() -> None:
    listed = gateway_of([notes_app()])
    unlisted = gateway_of([*many_apps(10), notes_app()], ListingConfig(max_apps=1))
    assert "app_dev_test_notes({}) for its guide" in (await listed.search("memo", 3)).text
    text = (await unlisted.search("memo", 3)).text
    assert 'aai_search({"app": "dev.test.notes", "query": ""}) for its operations' in text


async def test_a_search_restricted_to_an_app_gives_the_full_details_of_its_matches() -> None:
    gateway = gateway_of([notes_app()])
    answer = await gateway.search("delete", 10, app="memo")  # any reference aai_exec accepts

    assert [(r.app, r.tool) for r in answer.results] == [("dev.test.notes", "deleteNote")]
    assert "### deleteNote" in answer.text and "### createNote" not in answer.text
    assert "- note_id (string, required): Which note" in answer.text
    assert 'aai_exec({"app": "dev.test.notes", "tool": "deleteNote", "args": {"note_id": ' in answer.text


async def test_a_blank_query_with_an_app_gives_all_its_operations_in_order() -> None:
    gateway = gateway_of([notes_app()])
    answer = await gateway.search("  ", 10, app="dev.test.notes")
    assert [r.tool for r in answer.results] == ["createNote", "searchNotes", "deleteNote"]
    assert answer.text.index("### createNote") < answer.text.index("### deleteNote")
    assert [r.tool for r in (await gateway.search("", 2, app="dev.test.notes")).results] == [
        "createNote",
        "searchNotes",
    ]


async def test_an_operation_named_exactly_comes_first_in_a_search_of_its_app() -> None:
    gateway = gateway_of([notes_app()])
    answer = await gateway.search("DELETENOTE", 10, app="dev.test.notes")
    assert answer.results[0].tool == "deleteNote"


async def test_a_search_for_an_unknown_app_is_unknown_app() -> None:
    gateway = gateway_of([notes_app()])
    with pytest.raises(AaiError) as raised:
        await gateway.search("x", 10, app="dev.test.nowhere")
    assert raised.value.code == ErrorCode.UNKNOWN_APP


async def test_nothing_found_says_what_to_try_instead() -> None:
    answer = await gateway_of([notes_app()]).search("zebra xylophone", 10)
    assert answer.results == () and "Try other words" in answer.text and "web_discover" in answer.text


@pytest.fixture
def built(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The number of apps of each search index built from now on."""
    sizes: list[int] = []
    real = search_index.SearchIndex

    def counting(apps: Iterable[object]) -> object:
        apps = list(apps)
        sizes.append(len(apps))
        return real(apps)  # type: ignore[arg-type]

    monkeypatch.setattr(search_index, "SearchIndex", counting)
    return sizes


async def test_the_index_is_built_on_the_first_search_and_once_per_catalog_version(built: list[int]) -> None:
    gateway = gateway_of([notes_app()])
    assert built == []  # nothing at start
    await gateway.search("note", 5)
    await gateway.search("delete", 5)
    await gateway.search("delete", 5, app="dev.test.notes")
    assert built == [1]
    gateway.set_catalog(catalog_of([notes_app(), *many_apps(2)]))
    await gateway.search("note", 5)
    assert built == [1, 3]


def lookups_indexed(gateway: Gateway) -> bool:
    """Whether the gateway's app directory has built its lookup indexes (a call: mypy would take
    the property as unchanged between two reads)."""
    return gateway.directory.indexed


async def test_a_bounded_gateway_builds_its_search_and_lookup_indexes_ahead_and_a_full_one_does_not(
    built: list[int],
) -> None:
    listed_in_full = gateway_of([notes_app(), *many_apps(2)], ListingConfig(max_apps=5))
    assert await listed_in_full.prepare_search() is None
    assert built == []
    assert not lookups_indexed(listed_in_full)

    bounded = gateway_of([notes_app(), *many_apps(6)], ListingConfig(max_apps=5))
    assert not lookups_indexed(bounded)  # a start builds no lookup index
    assert await bounded.prepare_search() == 7
    assert built == [7]
    assert lookups_indexed(bounded)  # nor does the first search, guide or call
    answer = await bounded.search("delete a note", 5)
    assert answer.results[0].tool == "deleteNote"
    assert built == [7]  # the search used the index built ahead


async def test_an_index_build_that_fails_fails_the_search_that_waited_for_it_and_the_next_builds_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = search_index.SearchIndex
    attempts: list[int] = []

    def failing_once(apps: Iterable[object]) -> object:
        apps = list(apps)
        attempts.append(len(apps))
        if len(attempts) == 1:
            raise MemoryError("no room for the index")
        return real(apps)  # type: ignore[arg-type]

    monkeypatch.setattr(search_index, "SearchIndex", failing_once)
    gateway = gateway_of([notes_app(), *many_apps(6)], ListingConfig(max_apps=5))
    with pytest.raises(MemoryError, match="no room for the index"):
        await gateway.prepare_search()
    answer = await gateway.search("delete a note", 5)
    assert answer.results[0].tool == "deleteNote"
    assert attempts == [7, 7]


async def test_work_in_the_background_gives_back_its_value_or_its_exception() -> None:
    assert await service_search.Background(lambda: 6 * 7).start().result() == 42

    def failing() -> int:
        raise KeyError("gone")

    with pytest.raises(KeyError, match="gone"):
        await service_search.Background(failing).start().result()


def test_an_index_build_nobody_waits_for_does_not_hold_up_the_process_exit() -> None:
    """The client left during a build of minutes: the process ends now (an anyio worker thread
    would be joined at exit, and the process would end only when the build did)."""
    script = (
        "import time, anyio\n"
        "from aai_gateway.service.search import Background\n"
        "async def main():\n"
        "    with anyio.move_on_after(0.2):\n"
        "        await Background(lambda: time.sleep(300)).start().result()\n"
        "anyio.run(main)\n"
        "print('left')\n"
    )
    command = [sys.executable, "-c", script]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout == "left\n"


async def test_a_search_that_stops_waiting_leaves_the_build_going_and_the_next_search_uses_it(
    built: list[int],
) -> None:
    """An agent whose search times out during a long build asks again: one build, kept."""
    release = threading.Event()

    def slow_texts(cards: object) -> dict[tuple[str, str], list[object]]:
        release.wait(30)  # the texts of 10,000 apps
        return {}

    searcher = service_search.Searcher(slow_texts)  # type: ignore[arg-type]
    searcher.reset([(card_of(notes_app()), ["createNote"])])
    for _ in range(3):
        with anyio.move_on_after(0.05):
            await searcher.search("note", 5)
    assert not release.is_set() and built == []  # the searches stopped waiting: no index yet
    release.set()
    await searcher.search("note", 5)
    await searcher.search("delete", 5)
    assert built == [1]  # one build, kept for every search after it


async def test_an_index_reads_the_texts_of_its_apps_a_batch_at_a_time() -> None:
    """Texts of 10,000 apps at once would leave the heap ~20 MB bigger once freed."""
    apps = many_apps(service_search.TEXTS_BATCH * 2 + 1)
    gateway = gateway_of(apps)
    asked: list[int] = []

    def texts_by_batch(cards: Sequence[AppCard]) -> dict[tuple[str, str], Sequence[OperationText]]:
        asked.append(len(cards))
        return gateway._texts_of(cards)

    searcher = service_search.Searcher(texts_by_batch)
    searcher.reset([(card_of(app), [tool.name for tool in app.tools]) for app in apps])
    hits = (await searcher.search("app01000", 3)).hits
    assert asked == [service_search.TEXTS_BATCH, service_search.TEXTS_BATCH, 1]
    assert hits[0].app.id == "dev.test.app01000"
    pong = (await searcher.search("answer with pong", 1)).hits
    assert (pong[0].tool, pong[0].description) == ("ping", "Answer with pong")  # its one line, kept


async def test_operations_of_an_app_by_name_with_unknown_names_naming_the_closest() -> None:
    gateway = gateway_of([notes_app()])
    app = gateway.resolve("dev.test.notes")
    details = await gateway.operations_of(app, ["searchnotes"])
    assert "### searchNotes" in details and "### createNote" not in details
    with pytest.raises(AaiError) as raised:
        await gateway.operations_of(app, ["createNote", "deleteNotes"])
    assert raised.value.code == ErrorCode.UNKNOWN_TOOL
    assert raised.value.data["app"] == "dev.test.notes"
    assert raised.value.data["tools"] == ["deleteNotes"]
    assert raised.value.data["close_matches"]["deleteNotes"][0] == "deleteNote"
    assert "no operation 'deleteNotes' (did you mean 'deleteNote'" in raised.value.message


async def test_unknown_operation_names_are_named_once_cut_short_and_at_most_five() -> None:
    gateway = gateway_of([notes_app()])
    app = gateway.resolve("dev.test.notes")
    asked = ["deleteNotes", "deleteNotes", *(f"{n}" + "x" * 100_000 for n in range(48))]
    with pytest.raises(AaiError) as raised:
        await gateway.operations_of(app, asked)
    error = raised.value
    assert error.code == ErrorCode.UNKNOWN_TOOL
    assert error.data["tools"][0] == "deleteNotes"
    assert len(error.data["tools"]) == 5
    assert error.data["unlisted"] == 44  # 49 distinct names
    assert error.data["tools"][1] == "0" + "x" * 31 + "… (100001 characters)"
    assert len(error.message) + len(str(error.data)) < 2_000
    assert "and 44 other names" in error.message


async def test_a_search_of_an_app_none_of_whose_operations_run_here_says_why() -> None:
    document = c_descriptor("dev.test.tool", type="stdio", command="aai-test-missing-program")
    app = load_descriptor(json.dumps(document), Source(kind="file", location="/apps/tool.json"), "linux")
    gateway = gateway_of([app])
    answer = await gateway.search("", app="dev.test.tool")
    assert answer.results == ()
    assert "The operation of Test App (dev.test.tool) cannot run on this machine:" in answer.text
    assert "aai-test-missing-program" in answer.text
    assert "aai_search(" not in answer.text  # not the call that was just made


def test_the_last_page_a_search_can_reach_says_so_instead_of_an_offset_it_would_refuse() -> None:
    most = service_search.MAX_OFFSET
    within = service_search.Asked("list", 50, most - 50)
    last = service_search.Asked("list", 50, most)
    assert within.next_page("aai_search").endswith(f'with {{"offset": {most}}}.')
    assert last.next_page("aai_search") == (
        f"More follow, past the last place a page can start ({most}): ask in other words."
    )


async def test_a_name_that_two_operations_share_ignoring_case_is_answered_with_both() -> None:
    app = http_app(
        "dev.test.items",
        name="Items",
        tools=[operation("getItem", "Get one item"), operation("GetItem", "Get it another way")],
    )
    gateway = gateway_of([app])

    with pytest.raises(AaiError) as by_entry:
        await gateway.operations_of(gateway.resolve("dev.test.items"), ["GETITEM"])
    with pytest.raises(AaiError) as by_exec:
        resolve_tool(gateway.resolve("dev.test.items"), "getitem")

    assert by_entry.value.data["close_matches"] == {"GETITEM": ["getItem", "GetItem"]}
    assert "'GETITEM' (did you mean 'getItem', 'GetItem'" in by_entry.value.message
    assert by_exec.value.data["close_matches"][:2] == ["getItem", "GetItem"]
