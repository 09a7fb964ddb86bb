"""Which operations can run here is asked of the executors once per way of running them, never
once per operation or per app: thousands of web APIs are one question to the HTTP executor, and
operations that differ in what an executor reads still get answers of their own."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from aai_gateway.descriptor import AppDescriptor, Source, load_descriptor
from aai_gateway.descriptor.card import card_of
from aai_gateway.executors.base import ExecutorSettings
from aai_gateway.executors.defaults import default_registry
from aai_gateway.executors.registry import ExecutorRegistry
from aai_gateway.service.disclosure import RunsHere
from tests.builders import c_descriptor

from .apps import many_apps


class CountingRegistry(ExecutorRegistry):
    """The real registry, counting the questions it is asked."""

    def __init__(self, real: ExecutorRegistry) -> None:
        super().__init__()
        self._executors = real._executors
        self.asked = 0

    def unavailable_reason(self, tool):  # type: ignore[no-untyped-def]
        self.asked += 1
        return super().unavailable_reason(tool)


def registry(path: str = "/usr/bin:/bin") -> CountingRegistry:
    return CountingRegistry(default_registry(ExecutorSettings(environ={"PATH": path})))


def stdio_app(app_id: str, command: str, **env: str) -> AppDescriptor:
    document = c_descriptor(app_id)
    document["execution"] = {"type": "stdio", "command": command, **({"env": env} if env else {})}
    return load_descriptor(
        json.dumps(document), Source(kind="file", location=f"/apps/{app_id}.json"), "linux"
    )


def test_web_apis_at_hundreds_of_origins_are_one_question_to_the_http_executor() -> None:
    apps = [
        app.model_copy(
            update={
                "tools": tuple(
                    t.model_copy(
                        update={
                            "channel": t.channel.model_copy(
                                update={"base_url": f"https://api{n}.example.com"}
                            )
                        }
                    )
                    for t in app.tools
                )
            }
        )
        for n, app in enumerate(many_apps(300))
    ]
    asking = registry()
    runs = RunsHere(asking)
    assert all(runs.operations(card_of(app)) == ("ping",) for app in apps)
    assert asking.asked == 1


def test_stdio_apps_with_a_program_here_and_one_without_get_their_own_answers() -> None:
    here = stdio_app("dev.test.here", Path(sys.executable).name)
    gone = stdio_app("dev.test.gone", "no-such-program-anywhere")
    also_here = stdio_app("dev.test.also", Path(sys.executable).name)
    asking = registry(str(Path(sys.executable).parent))
    runs = RunsHere(asking)
    assert runs.operations(card_of(here)) == ("ping",)
    assert runs.operations(card_of(gone)) == ()
    assert runs.operations(card_of(also_here)) == ("ping",)
    assert asking.asked == 2  # the program is looked for once per command


def test_a_program_found_only_on_the_path_the_descriptor_gives_is_its_own_question() -> None:
    folder = str(Path(sys.executable).parent)
    plain = stdio_app("dev.test.plain", Path(sys.executable).name)
    with_path = stdio_app("dev.test.with", Path(sys.executable).name, PATH=folder)
    runs = RunsHere(registry("/nonexistent"))
    assert runs.operations(card_of(plain)) == ()
    assert runs.operations(card_of(with_path)) == ("ping",)
