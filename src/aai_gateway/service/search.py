"""`aai_search` in the service: the index of one catalog version, built on first use (or ahead of
it, `Searcher.prepare`), and the answer an agent reads (markdown text, and the results as data).

The index holds every app tools/list could list (listed or not) with the operations that can
run here. A search restricted to an app answers that app's operations with their full details
(`guide.render_operations`); a blank query then means all of them, in the descriptor's order.
"""

from __future__ import annotations

import contextlib
import math
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import anyio

from .. import search as engine  # its index, hits and apps come with the first use: a start needs none
from ..bulk import return_free_memory
from ..descriptor import AppDescriptor, Tool
from ..descriptor.card import AppCard, AppIdentity, OperationText, card_of, texts_of
from ..descriptor.quoting import WHOLE_UP_TO, listed
from ..guide import GuideOptions, render_operations
from ..guide.operations import call_json
from ..guide.options import QUERY_PLACEHOLDER
from ..search import DEFAULT_LIMIT, MAX_LIMIT, MAX_OFFSET
from .app_entries import counted

MAX_RESULT_DESCRIPTION = 200  # characters of a result's description
MAX_QUERY_SHOWN = 200  # characters of the query quoted back in the text
MAX_UNREAD_NAMED = 5  # apps named whose operations a search could not see
TEXTS_BATCH = 500
"""Apps whose texts are read at once while an index is built."""

__all__ = ["DEFAULT_LIMIT", "MAX_LIMIT", "MAX_OFFSET", "SearchAnswer", "SearchResult", "Searcher"]


@dataclass(frozen=True, slots=True)
class SearchResult:
    app: str  # the reference that names the app exactly (its id, unless another app claims it)
    tool: str | None  # None: the app itself
    score: float
    description: str

    def as_dict(self) -> dict[str, Any]:
        return {"app": self.app, "tool": self.tool, "score": self.score, "description": self.description}


@dataclass(frozen=True, slots=True)
class SearchAnswer:
    results: tuple[SearchResult, ...]
    text: str  # what the agent reads
    more: bool = False  # results follow this page
    unread: tuple[str, ...] = ()
    """The apps (their references) whose operations the search could not see: their MCP
    servers have not been asked for them yet."""
    within: tuple[str, int] | None = None
    """A search within an app: its reference, and how many of its operations run here."""

    def structured(self) -> dict[str, Any]:
        return {"results": [result.as_dict() for result in self.results]}


TextsOf = Callable[[Sequence[AppCard]], Mapping[tuple[str, str], Sequence[OperationText]]]
"""The texts search indexes of each app of the catalog, by `AppCard.key` (read when an index is
built: the card cache holds them, not memory)."""


T = TypeVar("T")


class Background(Generic[T]):
    """`work` computed in a daemon thread of its own; its outcome is handed to the event loop
    (`value` or `error`, then `on_done`, then `done`) whether or not anyone still waits for it.

    An index build takes seconds at thousands of apps. A search that stops waiting (its client's
    timeout, a cancellation) leaves the build going, to be kept for the next search rather than
    started again; and a build nobody waits for any more never holds up the process's exit, as a
    worker thread of anyio's would (those are joined at exit)."""

    def __init__(self, work: Callable[[], T], on_done: Callable[[Background[T]], None] | None = None) -> None:
        self._work = work
        self._on_done = on_done
        self.value: T | None = None
        self.error: BaseException | None = None
        self.done = anyio.Event()

    def start(self) -> Background[T]:
        token = anyio.lowlevel.current_token()

        def run() -> None:
            try:
                self.value = self._work()
            except BaseException as exc:  # raised again in each waiting task
                self.error = exc
            with contextlib.suppress(RuntimeError):  # the event loop is gone: nobody waits any more
                anyio.from_thread.run_sync(self._finish, token=token)

        threading.Thread(target=run, name="aai-search-index", daemon=True).start()
        return self

    def _finish(self) -> None:
        if self._on_done is not None:
            self._on_done(self)
        self.done.set()

    async def result(self) -> T:
        """What `work` returned (or raises what it raised), once it is done."""
        await self.done.wait()
        if self.error is not None:
            raise self.error
        return self.value  # type: ignore[return-value]  # set when there is no error


class Searcher:
    """The index over the apps of one catalog version, built (in the `Background`) by the first
    search after `reset`, or ahead of it by `prepare`. One build at a time: searches wait for the
    build under way, which goes on when they stop waiting and is kept if the catalog is the same."""

    def __init__(self, texts_of: TextsOf) -> None:
        self._texts_of = texts_of
        self._apps: dict[tuple[str, str], tuple[AppCard, frozenset[str]]] = {}
        self._index: engine.SearchIndex | None = None
        self._version = 0
        self._building: tuple[int, Background[engine.SearchIndex]] | None = None  # its catalog version

    def reset(self, apps: Sequence[tuple[AppCard, Sequence[str]]]) -> None:
        """A new catalog version: the apps with the names of the operations the index should hold."""
        self._apps = {card.key: (card, frozenset(names)) for card, names in apps}
        self._index = None
        self._version += 1

    @property
    def size(self) -> int:
        """How many apps the index holds (or will, once built)."""
        return len(self._apps)

    async def prepare(self) -> None:
        """Builds the index now, if no search has (again if the catalog changed meanwhile)."""
        await self._current()
        if self._index is None:
            await self._current()

    async def search(self, query: str, limit: int, offset: int = 0) -> engine.SearchPage:
        """The best matches among every app, from the `offset`-th on."""
        index = await self._current()
        return await anyio.to_thread.run_sync(lambda: index.page(query, limit, offset=offset))

    async def search_app(
        self, query: str, limit: int, offset: int, app: AppDescriptor, tools: Sequence[Tool]
    ) -> engine.SearchPage:
        """The best matches among `tools` of `app`, from the `offset`-th on: from the shared
        index when it holds the app, else from an index of the app alone (a web app that is not
        pinned). A blank query: `tools` in order."""
        if not query.strip():
            card = card_of(app)
            page = tools[offset : offset + limit]
            hits = [engine.SearchHit(card, tool.name, 0.0, short(tool.description)) for tool in page]
            return engine.SearchPage(hits, more=len(tools) > offset + limit)
        names = {tool.name for tool in tools}
        alone = engine.IndexedApp(card_of(app), tuple(t for t in texts_of(app) if t.name in names))
        if app_key(app) not in self._apps:
            index = await anyio.to_thread.run_sync(lambda: engine.SearchIndex([alone]))
            return await anyio.to_thread.run_sync(lambda: index.page(query, limit, offset=offset, app=alone))
        shared = await self._current()
        return await anyio.to_thread.run_sync(lambda: shared.page(query, limit, offset=offset, app=alone))

    async def _current(self) -> engine.SearchIndex:
        if self._index is not None:
            return self._index
        if self._building is None or self._building[0] != self._version:
            apps = list(self._apps.values())
            self._building = (self._version, Background(lambda: self._built(apps), self._kept).start())
        # a build of an older catalog answers the search that waited for it, and is not kept
        return await self._building[1].result()

    def _kept(self, build: Background[engine.SearchIndex]) -> None:
        """In the event loop, when `build` is done: kept if it is of the catalog as it is now."""
        if self._building is not None and self._building[1] is build:
            version, _build = self._building
            self._building = None
            if build.error is None and version == self._version:
                self._index = build.value

    def _built(self, apps: list[tuple[AppCard, frozenset[str]]]) -> engine.SearchIndex:
        index = engine.SearchIndex(self._indexed(apps))
        return_free_memory()  # the build's scratch memory, freed but kept by the allocator
        return index

    def _indexed(self, apps: list[tuple[AppCard, frozenset[str]]]) -> Iterator[engine.IndexedApp]:
        """The apps with their texts, read a batch at a time: the index keeps no texts, so only
        a batch's are in memory at once (all of 10,000 apps' cost ~40 MB, which freed would leave
        the heap that much bigger)."""
        for start in range(0, len(apps), TEXTS_BATCH):
            batch = apps[start : start + TEXTS_BATCH]
            texts = self._texts_of([card for card, _ in batch])
            for card, names in batch:
                yield engine.IndexedApp(card, tuple(t for t in texts.get(card.key, ()) if t.name in names))


def app_key(app: AppIdentity) -> tuple[str, str]:
    return (str(app.binding), app.id)


@dataclass(frozen=True, slots=True)
class Asked:
    """What an `aai_search` call asked: its query, and the page (`offset`, `limit`)."""

    query: str
    limit: int = DEFAULT_LIMIT
    offset: int = 0

    def span(self, shown: int) -> str:
        """Which results a page of `shown` holds, counted from 1 (11 to 20: `11-20`)."""
        return f"{self.offset + 1}-{self.offset + shown}" if shown > 1 else str(self.offset + 1)

    def next_page(self, search_tool: str) -> str:
        following = self.offset + self.limit
        if following > MAX_OFFSET:
            return f"More follow, past the last place a page can start ({MAX_OFFSET}): ask in other words."
        # the same call again, not quoted back: a query may be long, and the agent has it
        return f"More follow: call {search_tool} again as before, with {call_json({'offset': following})}."


def answer_across(
    asked: Asked,
    page: engine.SearchPage,
    *,
    reference_of: Callable[[AppCard], str],
    listed_entry: Callable[[AppCard], str | None],
    search_tool: str,
    exec_tool: str,
    unread: Sequence[str] = (),
) -> SearchAnswer:
    """The answer to a search over every app: one line per result and what to call next; and
    the apps (`unread`: their references) whose operations it could not search, because their
    MCP servers have not been asked for them yet."""
    hits = page.hits
    results = tuple(_result(hit, reference_of(hit.app)) for hit in hits)
    not_searched = [_not_searched(unread, search_tool)] if unread and not asked.offset else []
    if not results:
        if asked.offset:
            text = f"No more results for {_quoted(asked.query)} after the first {asked.offset}."
            return SearchAnswer((), text + "\n", unread=tuple(unread))
        text = "\n".join([_nothing_found(asked.query), *not_searched]) + "\n"
        return SearchAnswer((), text, unread=tuple(unread))
    which = f", {asked.span(len(results))}" if asked.offset else ""
    lines = [f"Apps and operations matching {_quoted(asked.query)}, best first{which}:", ""]
    for number, (hit, result) in enumerate(zip(hits, results, strict=True), start=asked.offset + 1):
        what = f"`{result.tool}` of `{result.app}`" if result.tool else f"`{result.app}` (app)"
        lines.append(f"{number}. {what}: {result.description or '(no description)'}")
        lines.append(f"   Next: {_next_call(result, listed_entry(hit.app), search_tool)}")
    lines += [""] + ([asked.next_page(search_tool)] if page.more else []) + not_searched
    lines += [f"Read an operation's details (parameters, example) before running it with {exec_tool}."]
    return SearchAnswer(results, "\n".join(lines) + "\n", more=page.more, unread=tuple(unread))


def answer_in_app(
    asked: Asked, app: AppDescriptor, page: engine.SearchPage, options: GuideOptions, total: int
) -> SearchAnswer:
    """The answer to a search restricted to `app`: the details of each matching operation."""
    query = asked.query
    reference = options.reference_of(app)
    results = tuple(_result(hit, reference) for hit in page.hits)
    name = app.names.lookup(options.locale)
    if not results and total == 0:
        reasons = sorted({short(reason) for reason in (options.unavailable or {}).values()})
        why = f": {'; '.join(reasons[:3])}" if reasons else ""
        none_runs = (
            f"None of the {len(app.tools)} operations of {name} ({reference}) can run"
            if len(app.tools) > 1
            else f"The operation of {name} ({reference}) cannot run"
        )
        text = (
            f"{none_runs} on this machine{why}.\n"
            if app.tools
            else f"{name} ({reference}) has no operations.\n"
        )
        return SearchAnswer((), text, within=(reference, 0))
    if not results and asked.offset:
        first = f"after the first {asked.offset}"
        text = (
            f"No more operations of {name} ({reference}) match {_quoted(query)} {first}.\n"
            if query.strip()
            else f"{name} ({reference}) has {counted(total, 'operation')} that run here: none {first}.\n"
        )
        return SearchAnswer((), text, within=(reference, total))
    if not results:
        everything = call_json({"app": reference, "query": ""})
        text = (
            f"No operation of {name} ({reference}, {counted(total, 'operation')} that run here) matches "
            f"{_quoted(query)}. {options.search_tool}({everything}) lists them all.\n"
        )
        return SearchAnswer((), text, within=(reference, total))
    span = asked.span(len(results))
    if query.strip():
        which = f"matching {_quoted(query)}" + (f", {span}" if asked.offset or page.more else "")
    else:
        which = f"{span} of {total}"
    title = f"# {name} ({reference}): operations {which}"
    more = asked.next_page(options.search_tool) if page.more else None
    chosen = [r.tool for r in results if r.tool]
    text = render_operations(app, chosen, options, title=title, more=more)
    return SearchAnswer(results, text, more=page.more, within=(reference, total))


def short(text: str) -> str:
    """`text` on one line, at most `MAX_RESULT_DESCRIPTION` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= MAX_RESULT_DESCRIPTION else flat[: MAX_RESULT_DESCRIPTION - 1] + "…"


def _result(hit: engine.SearchHit, reference: str) -> SearchResult:
    score = float(hit.score)
    return SearchResult(
        reference, hit.tool, round(score, 4) if math.isfinite(score) else 0.0, short(hit.description)
    )


def _next_call(result: SearchResult, entry: str | None, search_tool: str) -> str:
    if result.tool is not None:  # that operation alone: it comes first, as the query names it
        details = call_json({"app": result.app, "query": result.tool, "limit": 1})
        return f"{search_tool}({details}) for its parameters and an example call"
    if entry is not None:
        return f"{entry}({{}}) for its guide"
    return f"{search_tool}({call_json({'app': result.app, 'query': ''})}) for its operations"


def _nothing_found(query: str) -> str:
    return (
        f"Nothing matches {_quoted(query)}. Try other words: the app's name in another language, or "
        "what the operation does. For a web service, web_discover finds its app by URL or domain."
    )


def _not_searched(unread: Sequence[str], search_tool: str) -> str:
    """What to say of apps whose operations are their MCP servers' and not read yet: a search
    finds them by name and description only."""
    named = listed((f"`{reference}`" for reference in unread), most=MAX_UNREAD_NAMED, whole_up_to=WHOLE_UP_TO)
    ask = call_json({"app": unread[0], "query": QUERY_PLACEHOLDER})
    apps = "1 app" if len(unread) == 1 else f"{len(unread)} apps"
    return (
        f"Not searched: the operations of {apps} whose MCP servers have not been asked for them "
        f"yet ({named}). {search_tool}({ask}) starts one and searches them."
    )


def _quoted(query: str) -> str:
    flat = " ".join(query.split())
    return call_json(flat if len(flat) <= MAX_QUERY_SHOWN else flat[: MAX_QUERY_SHOWN - 1] + "…")
