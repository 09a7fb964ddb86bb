"""Headless Chromium for the sign-in and local-page tests, driven with Playwright's async API.

Uses the system Chromium (`/usr/bin/chromium`): Playwright's own browser downloads are not
needed. Tests that need it skip, saying why, when that binary is absent.
"""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from playwright.async_api import Browser, Page, async_playwright

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def chromium_path() -> Path:
    """The Chromium binary, or skip the test with the reason."""
    if CHROMIUM.exists():
        return CHROMIUM
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found:
        return Path(found)
    pytest.skip("headless browser tests need Chromium at /usr/bin/chromium (apt install chromium)")


@asynccontextmanager
async def chromium() -> AsyncIterator[Browser]:
    """A fresh headless Chromium."""
    executable = chromium_path()
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=str(executable), headless=True, args=CHROMIUM_ARGS
        )
        try:
            yield browser
        finally:
            await browser.close()


@asynccontextmanager
async def browser_page() -> AsyncIterator[Page]:
    """A fresh page in a fresh headless Chromium (no shared cookies between tests)."""
    async with chromium() as browser:
        context = await browser.new_context()
        page = await context.new_page()
        page.set_default_timeout(15_000)
        yield page


async def assert_no_markup_ran(tab: Page) -> None:
    """Hostile text on the page stayed text: no script ran (`window.__pwned` unset), and no
    `<script>` or `<img>` element was made from it."""
    assert await tab.evaluate("typeof window.__pwned") == "undefined"
    assert await tab.locator("script").count() == 0
    assert await tab.locator("img").count() == 0
