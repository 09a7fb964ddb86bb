"""What an MCP server sends during a call besides its answer, in both protocol generations:
progress, questions to the user (elicitation), requests for the client's model (sampling), and
word that its tools changed."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest

from aai_gateway.descriptor import AppDescriptor
from aai_gateway.errors import AaiError, ErrorCode
from aai_gateway.executors import ToolResult, UserAnswer, UserQuestion
from aai_gateway.executors.mcp import McpExecutor
from aai_gateway.executors.mcp_sessions import NOBODY_ASKED
from tests.executors.mcp_support import (
    Progress,
    User,
    call,
    mcp_document,
    running_executor,
    write_app,
)

pytestmark = pytest.mark.anyio

FORM = {"type": "object", "properties": {"color": {"type": "string"}}, "required": ["color"]}


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
async def executor() -> AsyncIterator[McpExecutor]:
    async with running_executor() as executor:
        yield executor


@pytest.fixture(scope="module", params=[False, True], ids=["2026-07-28", "2025-11-25"])
def legacy(request: pytest.FixtureRequest) -> bool:
    value: bool = request.param
    return value


@pytest.fixture(scope="module")
def app(legacy: bool, tmp_path_factory: pytest.TempPathFactory) -> AppDescriptor:
    folder = tmp_path_factory.mktemp("questions")
    return write_app(
        folder,
        mcp_document(
            app_id=f"dev.test.questions{int(legacy)}",
            name="Paint Shop",
            args=["--legacy-only"] if legacy else [],
            timeout_ms=800,
        ),
    )


async def run(executor: McpExecutor, app: AppDescriptor, tool: str, user: User | None = None) -> ToolResult:
    result = await executor.execute(call(app, tool, ask_user=user))
    assert isinstance(result, ToolResult)
    return result


async def test_progress_of_the_server_reaches_the_caller(executor: McpExecutor, app: AppDescriptor) -> None:
    progress = Progress()

    result = await executor.execute(call(app, "progress", progress=progress))

    assert isinstance(result, ToolResult) and result.content[0]["text"] == "done"
    assert progress.seen == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]


async def test_a_question_of_the_server_is_put_to_the_user_naming_the_app_and_the_answer_goes_back(
    executor: McpExecutor, app: AppDescriptor
) -> None:
    user = User(UserAnswer("accept", {"color": "blue"}))

    result = await run(executor, app, "ask", user)

    assert user.questions == [UserQuestion("Paint Shop", "Which color?", schema=FORM)]
    assert result.structured_content == {"action": "accept", "content": {"color": "blue"}}


async def test_a_question_of_the_server_reaches_the_user_without_hidden_characters_or_secrets_and_bounded(
    executor: McpExecutor, legacy: bool, tmp_path: Path
) -> None:
    document = mcp_document(
        name="Paint Shop", args=["--legacy-only"] if legacy else [], env={"TOKEN": {"secret": "token"}}
    )
    app = write_app(tmp_path, document)
    user = User(UserAnswer("decline"))
    hidden = "Which color?\u202e\u200b\x1b[2J" + " (token sk-live-0123456789abcdef)" + "?" * 100_000

    result = await executor.execute(
        call(app, "ask", {"message": hidden}, ask_user=user, secrets={"token": "sk-live-0123456789abcdef"})
    )

    assert isinstance(result, ToolResult)
    [question] = user.questions
    assert question.message.startswith("Which color? (token [secret removed])???")
    assert len(question.message) <= 2_000


async def test_a_page_the_server_wants_opened_is_put_to_the_user_with_its_id(
    executor: McpExecutor, app: AppDescriptor, legacy: bool
) -> None:
    user = User(UserAnswer("accept"))

    result = await run(executor, app, "ask_url", user)

    elicitation_id = "sign-in-1" if legacy else None  # 2026-07-28 has no elicitation ids
    assert user.questions == [
        UserQuestion(
            "Paint Shop",
            "Sign in at the page",
            url="https://example.com/sign-in",
            elicitation_id=elicitation_id,
        )
    ]
    assert result.structured_content == {"action": "accept", "content": None}


async def test_the_calls_clock_stands_still_while_the_user_answers(
    executor: McpExecutor, app: AppDescriptor
) -> None:
    user = User(UserAnswer("decline"), delay=1.2)  # longer than the tool's timeout of 800 ms

    result = await run(executor, app, "ask", user)

    assert result.structured_content == {"action": "decline", "content": None}


@pytest.mark.parametrize("user", [None, User(None)], ids=["no asker", "the client cannot ask"])
async def test_a_question_nobody_can_put_to_the_user_is_refused_cleanly(
    executor: McpExecutor, app: AppDescriptor, legacy: bool, user: User | None
) -> None:
    result = await run(executor, app, "ask", user)

    if legacy:  # the server is answered with an error saying why, and decides itself
        assert result.is_error is True
        assert result.content == [{"type": "text", "text": f"elicitation refused: {NOBODY_ASKED}"}]
    else:  # its retry says declined: an error would end the call without the server hearing of it
        assert result.structured_content == {"action": "decline", "content": None}


async def test_a_request_for_the_clients_model_is_refused_with_a_clear_error(
    executor: McpExecutor, app: AppDescriptor, legacy: bool
) -> None:
    if legacy:
        result = await run(executor, app, "sample")
        assert result.is_error is True
        assert result.content == [{"type": "text", "text": "sampling refused: Sampling not supported"}]
        return
    with pytest.raises(AaiError) as caught:
        await run(executor, app, "sample")
    assert caught.value.code is ErrorCode.EXECUTION_FAILED
    assert caught.value.message.startswith(
        f"{app.id} sample: the MCP server asked to use the client's language model (sampling/createMessage)"
    )


async def test_word_that_the_servers_tools_changed_reaches_the_listeners(
    executor: McpExecutor, app: AppDescriptor
) -> None:
    heard: list[tuple[str, str]] = []
    changed = anyio.Event()

    def listener(binding: str, app_id: str) -> None:
        heard.append((binding, app_id))
        changed.set()

    executor.on_tools_changed(listener)
    await run(executor, app, "pid")  # the session is open (a 2026-07-28 one listens)
    await run(executor, app, "change_tools")

    with anyio.fail_after(5):
        await changed.wait()
    assert heard[0] == (str(app.binding), app.id)
