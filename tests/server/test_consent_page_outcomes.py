"""What the consent page's outcome means for the call (server/consent_prompt.py through the
consent gate): the user's "Deny" is CONSENT_DENIED; a page that fails after it opened is not the
user's answer, so the call fails closed with CONSENT_REQUIRED saying the page failed."""

from __future__ import annotations

import re
from typing import Any, cast

import anyio
import httpx
import mcp_types as types
import pytest

from aai_gateway.auth import MemorySecretStore
from aai_gateway.consent import ConsentStore
from aai_gateway.consent.gate import ConsentGate
from aai_gateway.consent.page import ConsentPage
from aai_gateway.consent.prompt_text import Answer
from aai_gateway.errors import AaiError, ErrorCode
from aai_gateway.server import consent_prompt
from aai_gateway.server.ask import Ask, CallMemory
from aai_gateway.server.consent_prompt import UrlConsentPrompter
from aai_gateway.server.pages import Pages
from tests.consent.apps import NOTES_FILE, NOTES_ID, local_app

pytestmark = pytest.mark.anyio

CALLER = "agent-c"


class LinkOnlyClient:
    """The `Ask` of a 2025-11-25 client that can open links for the user and show no forms. Its
    user opens each link and presses `button` on the page (None: presses nothing)."""

    can_ask_form = False
    can_ask_url = True
    modern = False

    def __init__(self, button: str | None) -> None:
        self.button = button
        self.memory = CallMemory((CALLER, "aai_exec"))
        self.opened: list[str] = []

    async def url(self, key: str, message: str, url: str, elicitation_id: str) -> types.ElicitResult:
        self.opened.append(url)
        if self.button is not None:
            async with httpx.AsyncClient() as browser:
                page = await browser.get(url)
                csrf = re.search(r'name="csrf" value="([^"]+)"', page.text)
                assert csrf is not None
                done = await browser.post(url, data={"csrf": csrf.group(1), "choice": self.button})
                assert done.status_code == 200, done.text
        return types.ElicitResult(action="accept")

    @property
    def ctx(self) -> Any:
        return self

    @property
    def session(self) -> Any:
        return self

    async def send_elicit_complete(self, elicitation_id: str) -> None:
        return None


class BrokenConsentPage(ConsentPage):
    """The consent page with a bug that ends it once it is open, before anyone answered it."""

    async def wait(self) -> Answer:
        raise ValueError("a bug in the consent page")


async def consent_outcome(client: LinkOnlyClient) -> AaiError:
    gate = ConsentGate(ConsentStore(MemorySecretStore()))
    app = local_app()
    tool = app.tool("create")
    assert tool is not None
    async with anyio.create_task_group() as tasks:
        prompter = UrlConsentPrompter(cast(Ask, client), Pages[Answer]("consent"), tasks)
        with pytest.raises(AaiError) as refused:
            await gate.check(CALLER, app, tool, {"title": "x"}, prompters=[prompter])
    assert client.opened  # the user was sent to the page each time
    return refused.value


async def test_deny_on_the_consent_page_is_consent_denied() -> None:
    assert (await consent_outcome(LinkOnlyClient("deny"))).code == ErrorCode.CONSENT_DENIED


async def test_a_consent_page_that_fails_after_it_opened_is_consent_required_naming_the_page_and_the_grant(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(consent_prompt, "ConsentPage", BrokenConsentPage)
    error = await consent_outcome(LinkOnlyClient(None))
    assert error.code == ErrorCode.CONSENT_REQUIRED  # fails closed, and never says the user denied
    grant = f"aai-gateway consent grant --caller={CALLER} --app={NOTES_ID} --tool=create"
    grant += f" --source=file:{NOTES_FILE}"
    assert error.data["command"] == grant
    assert error.data["asking_failed"] == consent_prompt.PAGE_FAILED
    assert error.message.startswith(f"the user has not allowed {CALLER!r} to use create of ")
    assert f"({NOTES_ID}), and they were asked, but the consent page failed" in error.message
    assert "the user did not deny it" in error.message
    assert f"run `{grant}` in a terminal" in error.message
