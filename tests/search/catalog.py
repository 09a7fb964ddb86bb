"""A small fixed catalog for the search tests, built here: apps in several languages whose
operations are near enough to each other that ranking matters."""

from __future__ import annotations

from typing import Any

from aai_gateway.descriptor import Source
from aai_gateway.descriptor.card import card_of, texts_of
from aai_gateway.descriptor.loader import load_document
from aai_gateway.search import IndexedApp


def tool(name: str, description: str, **parameters: str) -> dict[str, Any]:
    properties = {key: {"type": "string", "description": text} for key, text in parameters.items()}
    return {
        "name": name,
        "description": description,
        "parameters": {"type": "object", "properties": properties},
    }


def app(
    app_id: str, names: dict[str, str], description: str, tools: list[dict[str, Any]], **extra: Any
) -> IndexedApp:
    """The app as an index holds it: its card and its operations' texts."""
    document = {
        "schemaVersion": "1.0",
        "version": "1.0.0",
        "platform": "linux",
        "app": {
            "id": app_id,
            "name": names,
            "defaultLang": next(iter(names)),
            "description": description,
            **extra,
        },
        "execution": {"type": "stdio", "command": "adapter"},
        "tools": tools,
    }
    result = load_document(document, Source(kind="inline", location=f"test:{app_id}"), "linux")
    assert result.descriptor is not None, result.problems
    return IndexedApp(card_of(result.descriptor), texts_of(result.descriptor))


def catalog() -> list[IndexedApp]:
    return [
        app(
            "tasks",
            {"en": "Tasks", "zh-CN": "待办", "ja": "タスク"},
            "A to-do list: tasks with due dates",
            [
                tool(
                    "create_task",
                    "Create a task with a title and a due date",
                    title="Task title",
                    due="Due date",
                ),
                tool("list_tasks", "List open tasks"),
                tool("complete_task", "Mark a task as done", task_id="Task id"),
            ],
            aliases=["to-do app"],
        ),
        app(
            "notes",
            {"en": "Notes", "de": "Notizen"},
            "Write and search notes",
            [
                tool("createNote", "Create a note", body="Text of the note"),
                tool("searchNotes", "Search notes"),
            ],
        ),
        app(
            "calendar",
            {"en": "Calendar", "zh-CN": "日历", "ja": "カレンダー", "de": "Kalender"},
            "Events and appointments",
            [
                tool("create-event", "Create an event in the calendar", start="Start time", end="End time"),
                tool("list-events", "List the events of a day or week"),
            ],
        ),
        app(
            "github",
            {"en": "GitHub"},
            "GitHub repositories, issues and pull requests",
            [
                tool(
                    "create_issue", "Create an issue in a repository", repo="owner/name", title="Issue title"
                ),
                tool(
                    "list_pull_requests",
                    "List pull requests of a repository",
                    repo="owner/name",
                    state="open or closed",
                ),
                tool("search_code", "Search code across GitHub repositories", q="Search query"),
            ],
        ),
        app(
            "weather",
            {"zh-CN": "天气", "en": "Weather"},
            "天气预报与实时天气",
            [
                tool("get_forecast", "未来几天的天气预报", latitude="纬度", longitude="经度"),
                tool("get_alerts", "Weather alerts for a region", region="Region code"),
            ],
        ),
        app(
            "mail",
            {"en": "Mail"},
            "Read and send e-mail",
            [
                tool("send_email", "Send an email", to="Recipient", subject="Subject line"),
                tool("list_inbox", "List the messages in the inbox"),
            ],
        ),
        app(
            "slack",
            {"en": "Slack"},
            "Team chat",
            [
                tool(
                    "post_message",
                    "Post a message to a channel",
                    channel="Channel id",
                    thread_ts="Reply in this thread",
                )
            ],
        ),
        app(
            "transit",
            {"ja": "乗換案内", "en": "Transit"},
            "電車の乗り換えと時刻表",
            [
                tool(
                    "search_route",
                    "出発駅から到着駅までの経路を検索",
                    from_station="出発駅",
                    to_station="到着駅",
                )
            ],
        ),
    ]
