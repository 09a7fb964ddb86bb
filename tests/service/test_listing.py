"""What tools/list shows of the apps: every app up to `[listing] max_apps`, only the pinned ones
above, entries found by name whether listed or not, and a change reported only when what is
listed changes."""

from __future__ import annotations

import json
import logging

import pytest

from aai_gateway.consent.listing_config import ListingConfig
from aai_gateway.descriptor import AppDescriptor, Source, load_descriptor
from aai_gateway.descriptor.card import card_of
from aai_gateway.service.app_entries import PINNED_ROOM
from aai_gateway.service.naming import MAX_ENTRY_DESCRIPTION
from tests.builders import c_descriptor
from tests.consent.apps import EVIL, GOOD, web_app

from .apps import catalog_of, gateway_of, http_app, many_apps


def ids(gateway: object) -> list[str]:
    return [entry.app.id for entry in gateway.entries]  # type: ignore[attr-defined]


def test_up_to_max_apps_every_runnable_app_is_listed() -> None:
    gateway = gateway_of(many_apps(3), ListingConfig(max_apps=3))
    assert gateway.listing.mode == "full"
    assert ids(gateway) == ["dev.test.app00000", "dev.test.app00001", "dev.test.app00002"]


def test_above_max_apps_only_the_pinned_apps_are_listed_and_unknown_pins_are_reported(
    caplog: pytest.LogCaptureFixture,
) -> None:
    settings = ListingConfig(max_apps=2, pinned=("dev.test.app00002", "dev.test.nowhere"))
    with caplog.at_level(logging.WARNING):
        gateway = gateway_of(many_apps(3), settings)
    assert gateway.listing.mode == "bounded"
    assert ids(gateway) == ["dev.test.app00002"]
    assert gateway.listing.unknown_pins == ("dev.test.nowhere",)
    assert "pinned but not an app listed here: dev.test.nowhere" in caplog.text


def test_a_pinned_app_that_cannot_run_here_is_reported_with_the_reason(
    caplog: pytest.LogCaptureFixture,
) -> None:
    document = c_descriptor("dev.test.tool", type="stdio", command="aai-test-missing-program")
    tool = load_descriptor(json.dumps(document), Source(kind="file", location="/apps/tool.json"), "linux")
    settings = ListingConfig(max_apps=2, pinned=("dev.test.tool", "dev.test.nowhere"))
    with caplog.at_level(logging.WARNING):
        gateway = gateway_of([*many_apps(3), tool], settings)
    assert gateway.listing.unknown_pins == ("dev.test.tool", "dev.test.nowhere")
    assert "pinned but not an app listed here: dev.test.tool (it cannot run here: " in caplog.text
    assert "aai-test-missing-program" in gateway.listing.why_unlisted["dev.test.tool"]
    assert "pinned but not an app listed here: dev.test.nowhere\n" in caplog.text


def test_an_app_entry_that_is_not_listed_is_still_found_by_its_name_in_either_style() -> None:
    gateway = gateway_of(many_apps(50), ListingConfig(max_apps=2))
    assert ids(gateway) == []
    for name in ("app_dev_test_app00049", "app:dev.test.app00049", "app_dev.test.app00049"):
        entry = gateway.entry_for_tool_name(name)
        assert entry is not None and entry.app.id == "dev.test.app00049", name
    assert gateway.entry_for_tool_name("app_dev_test_app99999") is None


def test_pins_beyond_the_room_of_a_bounded_list_are_reported_not_listed() -> None:
    long = "A long but honest description of what this app does for its users. " * 5
    apps = [http_app(f"dev.test.pin{i:02d}", description=long) for i in range(40)]
    pins = tuple(app.id for app in apps)
    gateway = gateway_of(apps, ListingConfig(max_apps=1, pinned=pins))
    listed = ids(gateway)
    assert 0 < len(listed) < 40
    assert listed == list(pins[: len(listed)])  # in the order of the pins, as many as fit
    assert gateway.listing.left_out == pins[len(listed) :]
    room = sum(len(e.tool_name) + len(e.description) for e in gateway.entries)
    assert room <= PINNED_ROOM


def test_a_hostile_description_is_cut_in_the_app_entry() -> None:
    gateway = gateway_of([http_app("dev.test.huge", description="word " * 20_000)])
    [entry] = gateway.entries
    assert len(entry.description) == MAX_ENTRY_DESCRIPTION
    assert entry.description.endswith("… Call to get guide.")


def test_a_change_is_reported_only_when_what_is_listed_changes() -> None:
    apps = many_apps(4)
    gateway = gateway_of(apps[:2], ListingConfig(max_apps=2, pinned=("dev.test.app00000",)))
    assert gateway.listing.mode == "full"
    assert gateway.set_catalog(catalog_of(apps[:3])) is True  # crossing the threshold: bounded
    assert gateway.listing.summary()[0].startswith("bounded (3 apps, more than max_apps = 2)")
    assert ids(gateway) == ["dev.test.app00000"]
    assert gateway.set_catalog(catalog_of(apps)) is False  # one more unpinned app: same list
    assert gateway.set_catalog(catalog_of(apps[:2])) is True  # back to every app
    assert ids(gateway) == ["dev.test.app00000", "dev.test.app00001"]


def test_the_listing_is_computed_once_per_catalog_version() -> None:
    gateway = gateway_of(many_apps(3))
    first = gateway.listing
    assert gateway.listing is first
    gateway.set_catalog(catalog_of(many_apps(3)))
    assert gateway.listing is not first


class CachedWeb:
    """Web discovery that knows `apps` from its cache and fetches nothing (a stand-in)."""

    def __init__(self, apps: list[AppDescriptor]) -> None:
        self.apps = apps

    def cached_apps(self) -> list[AppDescriptor]:
        return self.apps


def test_a_pinned_web_app_is_listed_under_a_name_of_its_own_when_a_local_app_has_its_id() -> None:
    local = http_app("dev.aai.example.notes")
    site = web_app(GOOD)  # claims the same id
    other_site = web_app(EVIL, "dev.test.elsewhere")  # known, not pinned
    gateway = gateway_of([local], ListingConfig(pinned=(GOOD,)), web=CachedWeb([site, other_site]))

    assert [(e.tool_name, e.app.binding.kind) for e in gateway.entries] == [
        ("app_dev_aai_example_notes", "file"),
        ("app_https___api_example_com", "web"),
    ]
    entry = gateway.entry_for_tool_name("app:dev.aai.example.notes")
    assert (
        entry is not None and entry.app.key == card_of(local).key
    )  # the id names the local app, as everywhere
    assert gateway.entry_for_tool_name("app_dev_test_elsewhere") is None
