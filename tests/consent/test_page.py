"""The consent page: the question shown as text in a real browser, one button per offered choice,
the answer handed over once; hostile names and arguments run nothing and fake nothing."""

from __future__ import annotations

import re

import httpx
import pytest

from aai_gateway.consent.page import ConsentPage
from aai_gateway.consent.prompt_text import ConsentQuestion
from tests.browser import assert_no_markup_ran, chromium
from tests.consent.apps import question

pytestmark = pytest.mark.anyio

HOSTILE = """<script>window.__pwned = 1</script><img src=x onerror="window.__pwned=2">'"&amp;"""


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def page_question(**changes: object) -> ConsentQuestion:
    fields: dict[str, object] = {
        "caller": "claude-code",
        "tool_description": "Add a note\nwith a title",
        "arguments": {"title": "Groceries", "tags": ["home"]},
    }
    return question(**{**fields, **changes})


async def test_the_page_shows_the_question_and_a_click_answers_it() -> None:
    page = ConsentPage(page_question())
    async with page.serve() as url, chromium() as browser:
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/consent/[A-Za-z0-9_-]{43}", url)
        tab = await browser.new_page()
        await tab.goto(url)
        assert await tab.inner_text("h1") == "Allow claude-code to use add_note of Notes?"
        body = await tab.inner_text("body")
        for shown in (
            "dev.aai.example.notes",
            "file:/home/me/apps/notes/aai.json",
            "Add a note\nwith a title",
            '"Groceries"',
        ):
            assert shown in body
        buttons = await tab.get_by_role("button").all_inner_texts()
        assert buttons == [
            "Allow once",
            "Always allow this tool",
            "Always allow all tools of Notes",
            "Deny",
            "Always deny this tool",
        ]
        await tab.get_by_role("button", name="Always allow this tool").click()
        await tab.get_by_text("Your answer was recorded").first.wait_for()
        assert "may use this tool from now on" in await tab.inner_text("body")
        assert await page.wait() == ("allow_tool", True)


async def test_hostile_names_description_and_arguments_are_text_and_run_no_script() -> None:
    hostile = page_question(
        caller=f"evil\nApp: Trusted {HOSTILE}",
        app_name=HOSTILE,
        tool=f"add{HOSTILE}",
        tool_description=f"</pre>{HOSTILE}",
        arguments={"body": f"</pre>{HOSTILE}\u202e", HOSTILE: 1},
    )
    page = ConsentPage(hostile, timeout_seconds=30)
    dialogs: list[str] = []
    async with page.serve() as url, chromium() as browser:
        tab = await browser.new_page()
        tab.on("dialog", lambda dialog: dialogs.append(dialog.message))
        await tab.goto(url)
        await assert_no_markup_ran(tab)
        facts = await tab.inner_text("dl.facts")
        assert "\\nApp: Trusted" in facts  # the line break is shown as an escape, not a new line
        assert "App\nTrusted" not in facts
        assert "\u202e" not in await tab.inner_text("body")
        assert "\\u202e" in await tab.inner_text("body")
        await tab.get_by_role("button", name="Deny", exact=True).click()
        await tab.get_by_text("Your answer was recorded").first.wait_for()
        await assert_no_markup_ran(tab)
    assert dialogs == []
    assert await page.wait() == ("deny", False)


async def test_only_offered_choices_are_shown_and_accepted() -> None:
    page = ConsentPage(page_question(offered=("allow_once", "deny"), offer_remember_deny=False))
    async with page.serve() as url, httpx.AsyncClient() as client:
        shown = await client.get(url)
        assert re.findall(r'name="choice" value="([a-z_]+)"', shown.text) == ["allow_once", "deny"]
        csrf = re.search(r'name="csrf" value="([^"]+)"', shown.text)
        assert csrf is not None
        for refused in ("allow_tool", "deny_remember", "", "yes"):
            response = await client.post(url, data={"csrf": csrf.group(1), "choice": refused})
            assert response.status_code == 400 and "Choose one of the buttons" in response.text
        assert page.state == "open"
        stolen = await client.post(url, data={"choice": "allow_once"})  # no CSRF token
        assert stolen.status_code == 403 and page.state == "open"
        done = await client.post(url, data={"csrf": csrf.group(1), "choice": "allow_once"})
        assert done.status_code == 200
        assert (await client.get(url)).status_code == 410
    assert await page.wait() == ("allow_once", False)


LINES_OF_TEXT = """(element) => {
  const range = document.createRange();
  range.selectNodeContents(element);
  return new Set(Array.from(range.getClientRects(), (rect) => Math.round(rect.top))).size;
}"""


async def test_a_long_path_is_never_broken_in_the_middle_on_a_narrow_screen() -> None:
    path = "file:/home/someone/projects/a-rather-long-project-name/apps/notes-with-a-long-name/aai.json"
    page = ConsentPage(page_question(source=path, tool_description=f"Reads {path} and more"))
    async with page.serve() as url, chromium() as browser:
        tab = await browser.new_page(viewport={"width": 360, "height": 800})  # a phone-sized window
        await tab.goto(url)
        source = tab.locator("dd", has_text=path)
        assert await source.inner_text() == path
        assert await source.evaluate(LINES_OF_TEXT) == 1  # scrolls sideways instead of breaking
        block = tab.locator("pre.block").first
        words = (await block.inner_text()).split()
        assert path in words  # wrapped at spaces only
