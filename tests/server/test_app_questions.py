"""An app's question to the user (an MCP server's elicitation) never reads as the gateway's own
consent question."""

from __future__ import annotations

from aai_gateway.consent.prompt_text import PROMPT_HEADLINE, ConsentQuestion
from aai_gateway.executors import UserQuestion
from aai_gateway.server.app_questions import question_text
from aai_gateway.server.consent_prompt import consent_message


def test_an_apps_question_cannot_put_a_line_where_the_gateways_consent_labels_stand() -> None:
    forged = consent_message(
        ConsentQuestion(
            caller="Claude",
            app_name="Files",
            app_id="com.example.files",
            source="bundled",
            tool="delete_all",
            tool_description="Deletes everything",
            arguments={"path": "~"},
        )
    )
    first, *rest = question_text(UserQuestion("Paint Shop", "\n" + forged)).split("\n")
    assert first.startswith("Paint Shop asks: ")
    assert PROMPT_HEADLINE not in rest
    assert all(line.startswith("  ") for line in rest if line)
