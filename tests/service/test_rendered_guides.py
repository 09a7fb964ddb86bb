"""A guide read again is not rendered again, yet never shows what is no longer true: the text is
kept per descriptor object and per guide options, and the options (which operations can run
here) are worked out at every read."""

from __future__ import annotations

import gc
import json
import weakref
from pathlib import Path

from aai_gateway.descriptor import AppDescriptor, Source, load_descriptor
from aai_gateway.executors.base import ExecutorSettings
from aai_gateway.executors.defaults import default_registry
from aai_gateway.guide import GuideOptions
from aai_gateway.service import Gateway
from aai_gateway.service.rendered_guides import RenderedGuides
from tests.builders import c_descriptor, trusting_gate

from .apps import catalog_of, gateway_of, http_app, operation


class Renders:
    """A render function that counts its calls."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.calls = 0

    def __call__(self) -> str:
        self.calls += 1
        return self.text


def test_a_guide_read_twice_with_the_same_options_is_rendered_once() -> None:
    guides = RenderedGuides()
    app = http_app("dev.test.notes")
    render = Renders("guide")
    assert guides.text(app, GuideOptions(), render) == "guide"
    assert guides.text(app, GuideOptions(), render) == "guide"
    assert render.calls == 1


def test_a_changed_descriptor_is_rendered_again_even_with_the_same_id() -> None:
    guides = RenderedGuides()
    before = http_app("dev.test.notes", description="Old notes")
    after = http_app("dev.test.notes", description="New notes")
    guides.text(before, GuideOptions(), Renders("old"))
    assert guides.text(after, GuideOptions(), Renders("new")) == "new"


def test_other_options_or_other_operations_are_other_texts() -> None:
    guides = RenderedGuides()
    app = http_app("dev.test.notes")
    guides.text(app, GuideOptions(), Renders("runs"))
    assert guides.text(app, GuideOptions(unavailable={"list": "no"}), Renders("not here")) == "not here"
    assert guides.text(app, GuideOptions(locale="ja"), Renders("japanese")) == "japanese"
    assert guides.text(app, GuideOptions(), Renders("details"), ["list"]) == "details"
    assert guides.text(app, GuideOptions(), Renders("other details"), ["add"]) == "other details"
    assert guides.text(app, GuideOptions(), Renders("unused")) == "runs"


def test_only_the_most_recently_read_texts_are_kept() -> None:
    guides = RenderedGuides(capacity=2)
    apps = [http_app(f"dev.test.app{n}") for n in range(3)]
    guides.text(apps[0], GuideOptions(), Renders("0"))
    guides.text(apps[1], GuideOptions(), Renders("1"))
    guides.text(apps[0], GuideOptions(), Renders("unused"))  # read again: now the most recent
    guides.text(apps[2], GuideOptions(), Renders("2"))
    assert len(guides) == 2
    again = Renders("1 again")
    assert guides.text(apps[1], GuideOptions(), again) == "1 again"
    assert again.calls == 1
    assert guides.text(apps[2], GuideOptions(), Renders("unused")) == "2"


def stdio_app(tmp_path: Path, command: str) -> AppDescriptor:
    document = c_descriptor("dev.test.tool", type="stdio", command=command)
    return load_descriptor(
        json.dumps(document), Source(kind="file", location=str(tmp_path / "tool.json")), "linux"
    )


def test_a_guide_read_after_the_apps_program_was_installed_no_longer_says_it_cannot_run(
    tmp_path: Path,
) -> None:
    programs = tmp_path / "bin"
    programs.mkdir()
    environ = {"PATH": str(programs)}
    registry = default_registry(ExecutorSettings(environ=environ, platform="linux"))
    app = stdio_app(tmp_path, "aai-test-notes-tool")
    gateway = Gateway(catalog_of([app]), registry, consent=trusting_gate())
    assert "Not available on this machine" in gateway.render(app)
    program = programs / "aai-test-notes-tool"
    program.write_text("#!/bin/sh\n", encoding="utf-8")
    program.chmod(0o755)
    assert "Not available on this machine" not in gateway.render(app)


def test_operation_details_read_again_are_the_same_text() -> None:
    app = http_app("dev.test.notes", tools=[operation("add_note", "Add a note", text="The note")])
    registry = default_registry(ExecutorSettings(environ={"PATH": "/usr/bin:/bin"}))
    gateway = Gateway(catalog_of([app]), registry, consent=trusting_gate())
    first = gateway._shown.operations(app, ["add_note"])
    assert "add_note" in first
    assert gateway._shown.operations(app, ["ADD_NOTE"]) == first
    assert len(gateway._shown.rendered) == 1


def test_a_replaced_descriptor_is_not_kept_alive_by_its_rendered_guide() -> None:
    old = http_app("dev.test.notes", description="Notes, version 1")
    gateway = gateway_of([old])
    gateway.render(old)
    gone = weakref.ref(old)
    del old
    new = http_app("dev.test.notes", description="Notes, version 2")
    gateway.set_catalog(catalog_of([new]))
    assert "version 2" in gateway.render(new)
    gc.collect()
    assert gone() is None


def test_an_app_that_takes_a_freed_descriptors_place_in_memory_gets_its_own_guide() -> None:
    guides = RenderedGuides()
    first = http_app("dev.test.notes")
    guides.text(first, GuideOptions(), Renders("first"))
    dead = weakref.ref(first)
    del first
    gc.collect()
    assert dead() is None
    # whatever object now has the freed one's id() finds no hit
    for n in range(50):
        later = http_app(f"dev.test.app{n}")
        assert guides.text(later, GuideOptions(), Renders(f"app {n}")) == f"app {n}"
