"""Headless Chromium for the sign-in and local-page tests, driven with Playwright's async API, and
the user who signs in with it: `press_allow` at a sign-in URL, `auth_login_in_browser` at the URL
an `aai-gateway auth login --no-browser` prints.

Uses the system Chromium (`/usr/bin/chromium`): Playwright's own browser downloads are not
needed. Tests that need it skip, saying why, when that binary is absent. Each browser gets a
HOME of its own: Chromium writes crash-report settings and GTK's dconf database there, which
must be neither the developer's nor shared with a browser in another pytest-xdist worker.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
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


async def press_allow(url: str) -> None:
    """The user opens a sign-in URL in a fresh Chromium and presses Allow (`#allow`) on the
    authorization server's consent page; returns once the gateway's loopback page says the tab
    can be closed."""
    async with browser_page() as page:
        await page.goto(url)
        await page.click("#allow")
        await page.wait_for_selector("text=close")


async def auth_login_in_browser(command: Sequence[str], env: dict[str, str], *, stdin: bytes = b"") -> str:
    """Runs `command` (an `aai-gateway auth login … --no-browser`), writing `stdin` to it; the user
    signs in at the authorization URL it prints on stderr (`press_allow`). Returns its stdout once
    it has exited with status 0."""
    async with await anyio.open_process(list(command), env=env) as process:
        assert process.stdin is not None and process.stderr is not None and process.stdout is not None
        if stdin:
            await process.stdin.send(stdin)
        printed = b""
        with anyio.fail_after(60):
            while b"/authorize?" not in printed or not printed.endswith(b"\n"):
                printed += await process.stderr.receive()
        url = next(line.strip() for line in printed.decode().splitlines() if "/authorize?" in line)
        await press_allow(url)
        with anyio.fail_after(30):
            assert await process.wait() == 0
        out = b""
        async for chunk in process.stdout:
            out += chunk
        return out.decode()
