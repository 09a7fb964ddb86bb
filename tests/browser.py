"""Headless Chromium for the sign-in and local-page tests, driven with Playwright's async API.

Uses the system Chromium (`/usr/bin/chromium`): Playwright's own browser downloads are not
needed. Tests that need it skip, saying why, when that binary is absent. Each browser gets a
HOME of its own: Chromium writes crash-report settings and GTK's dconf database there, which
must be neither the developer's nor shared with a browser in another pytest-xdist worker.
"""

from __future__ import annotations

import os
import shutil
import tempfile
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
    with tempfile.TemporaryDirectory(prefix="aai-chromium-home-", ignore_cleanup_errors=True) as home:
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(
                executable_path=str(executable), headless=True, args=CHROMIUM_ARGS, env=_private_home(home)
            )
            try:
                yield browser
            finally:
                await browser.close()


def _private_home(home: str) -> dict[str, str | float | bool]:
    """This process's environment with HOME, and the XDG folders under it, moved to `home`."""
    moved = {"HOME": home, "XDG_CONFIG_HOME": f"{home}/.config", "XDG_CACHE_HOME": f"{home}/.cache"}
    return {**os.environ, **moved}


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
