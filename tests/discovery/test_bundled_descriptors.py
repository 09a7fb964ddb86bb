"""The descriptors shipped in `src/aai_gateway/bundled/`: they load strictly, and every tool builds
the request that GitHub's and Notion's API references document for it."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema_rs
import pytest

from aai_gateway.descriptor import AppDescriptor, Source, load_text
from aai_gateway.descriptor.model import HttpCall, HttpChannel, Tool
from aai_gateway.descriptor.model_auth import ApiKeyAuth
from aai_gateway.discovery.sources import BUNDLED_DIR
from aai_gateway.executors.http_request import HttpRequestSpec, build_request
from aai_gateway.guide import example_arguments

GITHUB = "com.github.api"
NOTION = "com.notion.api"
FILES = {GITHUB: BUNDLED_DIR / "com.github.api.json", NOTION: BUNDLED_DIR / "com.notion.api.json"}
PLACEHOLDER = re.compile(r"\$?\{([^{}]*)\}")

PAGE_ID = "59833787cf944fdf8782e53db20768a5"
DATA_SOURCE_ID = "f336d0bc-b841-465b-8045-024475c079dd"
PARAGRAPH = {
    "object": "block",
    "type": "paragraph",
    "paragraph": {"rich_text": [{"type": "text", "text": {"content": "Hello"}}]},
}
REPO = {"owner": "octocat", "repo": "Hello-World"}


@dataclass(frozen=True)
class Call:
    """One sample call and the request the API reference documents for it."""

    app: str
    tool: str
    args: dict[str, Any]
    method: str
    url: str
    body: Any = field(default=None)


CALLS = [
    # GitHub REST API, version 2022-11-28 (docs.github.com/rest)
    Call(
        GITHUB,
        "searchRepositories",
        {"q": "tetris language:assembly", "sort": "stars", "order": "desc", "per_page": 10},
        "GET",
        "https://api.github.com/search/repositories?q=tetris%20language%3Aassembly&sort=stars&order=desc&per_page=10",
    ),
    Call(
        GITHUB,
        "searchIssues",
        {"q": "repo:octocat/Hello-World is:issue is:open", "sort": "updated", "page": 2},
        "GET",
        "https://api.github.com/search/issues?q=repo%3Aoctocat%2FHello-World%20is%3Aissue%20is%3Aopen"
        "&sort=updated&page=2",
    ),
    Call(GITHUB, "getRepository", REPO, "GET", "https://api.github.com/repos/octocat/Hello-World"),
    Call(
        GITHUB,
        "getRepositoryReadme",
        {**REPO, "ref": "main"},
        "GET",
        "https://api.github.com/repos/octocat/Hello-World/readme?ref=main",
    ),
    Call(
        GITHUB,
        "listRepositoryIssues",
        {"owner": "octocat", "repo": "hello-world", "state": "open", "per_page": 30},
        "GET",
        "https://api.github.com/repos/octocat/hello-world/issues?state=open&per_page=30",
    ),
    Call(
        GITHUB,
        "getIssue",
        {**REPO, "issue_number": 1347},
        "GET",
        "https://api.github.com/repos/octocat/Hello-World/issues/1347",
    ),
    Call(
        GITHUB,
        "listIssueComments",
        {**REPO, "issue_number": 1347, "since": "2024-01-01T00:00:00Z"},
        "GET",
        "https://api.github.com/repos/octocat/Hello-World/issues/1347/comments?since=2024-01-01T00%3A00%3A00Z",
    ),
    Call(
        GITHUB,
        "createIssue",
        {**REPO, "title": "Found a bug", "body": "It crashes.", "labels": ["bug"], "assignees": ["octocat"]},
        "POST",
        "https://api.github.com/repos/octocat/Hello-World/issues",
        {"title": "Found a bug", "body": "It crashes.", "labels": ["bug"], "assignees": ["octocat"]},
    ),
    Call(
        GITHUB,
        "updateIssue",
        {**REPO, "issue_number": 1347, "state": "closed", "state_reason": "completed"},
        "PATCH",
        "https://api.github.com/repos/octocat/Hello-World/issues/1347",
        {"state": "closed", "state_reason": "completed"},
    ),
    Call(
        GITHUB,
        "commentOnIssue",
        {**REPO, "issue_number": 1347, "body": "Fixed in #1350."},
        "POST",
        "https://api.github.com/repos/octocat/Hello-World/issues/1347/comments",
        {"body": "Fixed in #1350."},
    ),
    Call(
        GITHUB,
        "listPullRequests",
        {**REPO, "state": "all", "base": "main", "sort": "updated"},
        "GET",
        "https://api.github.com/repos/octocat/Hello-World/pulls?state=all&base=main&sort=updated",
    ),
    Call(
        GITHUB,
        "getPullRequest",
        {**REPO, "pull_number": 42},
        "GET",
        "https://api.github.com/repos/octocat/Hello-World/pulls/42",
    ),
    Call(GITHUB, "getAuthenticatedUser", {}, "GET", "https://api.github.com/user"),
    # Notion API (developers.notion.com/reference), the version in the descriptor's Notion-Version
    Call(
        NOTION,
        "searchByTitle",
        {"query": "Roadmap", "filter": {"property": "object", "value": "page"}, "page_size": 10},
        "POST",
        "https://api.notion.com/v1/search",
        {"query": "Roadmap", "filter": {"property": "object", "value": "page"}, "page_size": 10},
    ),
    Call(NOTION, "retrievePage", {"page_id": PAGE_ID}, "GET", f"https://api.notion.com/v1/pages/{PAGE_ID}"),
    Call(
        NOTION,
        "retrievePageMarkdown",
        {"page_id": PAGE_ID, "include_transcript": False},
        "GET",
        f"https://api.notion.com/v1/pages/{PAGE_ID}/markdown?include_transcript=false",
    ),
    Call(
        NOTION,
        "retrieveBlockChildren",
        {"block_id": PAGE_ID, "page_size": 50},
        "GET",
        f"https://api.notion.com/v1/blocks/{PAGE_ID}/children?page_size=50",
    ),
    Call(
        NOTION,
        "appendBlockChildren",
        {"block_id": PAGE_ID, "children": [PARAGRAPH], "position": {"type": "start"}},
        "PATCH",
        f"https://api.notion.com/v1/blocks/{PAGE_ID}/children",
        {"children": [PARAGRAPH], "position": {"type": "start"}},
    ),
    Call(
        NOTION,
        "createPage",
        {
            "parent": {"data_source_id": DATA_SOURCE_ID},
            "properties": {"Name": {"title": [{"text": {"content": "Weekly sync"}}]}},
            "children": [PARAGRAPH],
        },
        "POST",
        "https://api.notion.com/v1/pages",
        {
            "parent": {"data_source_id": DATA_SOURCE_ID},
            "properties": {"Name": {"title": [{"text": {"content": "Weekly sync"}}]}},
            "children": [PARAGRAPH],
        },
    ),
    Call(
        NOTION,
        "updatePageProperties",
        {"page_id": PAGE_ID, "properties": {"Status": {"status": {"name": "Done"}}}},
        "PATCH",
        f"https://api.notion.com/v1/pages/{PAGE_ID}",
        {"properties": {"Status": {"status": {"name": "Done"}}}},
    ),
    Call(
        NOTION,
        "updatePageMarkdown",
        {"page_id": PAGE_ID, "type": "insert_content", "insert_content": {"content": "- [ ] Follow up"}},
        "PATCH",
        f"https://api.notion.com/v1/pages/{PAGE_ID}/markdown",
        {"type": "insert_content", "insert_content": {"content": "- [ ] Follow up"}},
    ),
    Call(
        NOTION,
        "retrieveDatabase",
        {"database_id": PAGE_ID},
        "GET",
        f"https://api.notion.com/v1/databases/{PAGE_ID}",
    ),
    Call(
        NOTION,
        "retrieveDataSource",
        {"data_source_id": DATA_SOURCE_ID},
        "GET",
        f"https://api.notion.com/v1/data_sources/{DATA_SOURCE_ID}",
    ),
    Call(
        NOTION,
        "queryDataSource",
        {
            "data_source_id": DATA_SOURCE_ID,
            "filter": {"property": "Status", "status": {"equals": "Done"}},
            "sorts": [{"timestamp": "last_edited_time", "direction": "descending"}],
            "page_size": 100,
        },
        "POST",
        f"https://api.notion.com/v1/data_sources/{DATA_SOURCE_ID}/query",
        {
            "filter": {"property": "Status", "status": {"equals": "Done"}},
            "sorts": [{"timestamp": "last_edited_time", "direction": "descending"}],
            "page_size": 100,
        },
    ),
    Call(NOTION, "retrieveBotUser", {}, "GET", "https://api.notion.com/v1/users/me"),
    Call(NOTION, "listUsers", {"page_size": 100}, "GET", "https://api.notion.com/v1/users?page_size=100"),
]


def load(app_id: str) -> AppDescriptor:
    path = FILES[app_id]
    result = load_text(path.read_bytes(), Source(kind="bundled", location=str(path)))
    assert result.descriptor is not None, [str(p) for p in result.problems]
    return result.descriptor


def tool_of(app: AppDescriptor, name: str) -> Tool:
    return next(t for t in app.tools if t.name == name)


def channel_of(tool: Tool) -> HttpChannel:
    assert isinstance(tool.channel, HttpChannel)
    return tool.channel


def call_of(tool: Tool) -> HttpCall:
    assert isinstance(tool.call, HttpCall)
    return tool.call


def request_for(app: AppDescriptor, tool: Tool, args: dict[str, Any]) -> HttpRequestSpec:
    return build_request(channel_of(tool), call_of(tool), tool.name, args, app_id=app.id)


def errors_of(schema: dict[str, Any], value: Any) -> list[str]:
    validator = jsonschema_rs.Draft7Validator(schema, validate_formats=True)
    return [f"{list(e.instance_path)}: {e.message}" for e in validator.iter_errors(value)]


@pytest.mark.parametrize("path", sorted(BUNDLED_DIR.glob("*.json")), ids=lambda p: p.name)
def test_every_bundled_descriptor_loads_without_a_single_error_or_warning(path: Path) -> None:
    result = load_text(path.read_bytes(), Source(kind="bundled", location=str(path)))
    assert result.problems == []
    assert result.descriptor is not None and result.dialect == "C"
    assert result.descriptor.id == path.stem


@pytest.mark.parametrize("app_id", [GITHUB, NOTION])
def test_github_and_notion_are_web_apps_reached_over_https_with_a_bearer_api_key(app_id: str) -> None:
    app = load(app_id)
    assert app.platform == "web" and app.names.lookup("en") and app.names.lookup("zh-CN")
    for tool in app.tools:
        channel = channel_of(tool)
        assert channel.base_url.startswith("https://")
        assert isinstance(channel.auth, ApiKeyAuth)
        assert (channel.auth.location, channel.auth.name, channel.auth.prefix) == (
            "header",
            "Authorization",
            "Bearer",
        )
        assert channel.auth.obtain_url and channel.auth.instructions and channel.auth.instructions.help_url


@pytest.mark.parametrize("app_id", [GITHUB, NOTION])
def test_every_path_placeholder_is_a_required_string_or_integer_parameter(app_id: str) -> None:
    for tool in load(app_id).tools:
        path = call_of(tool).path
        assert path is not None and path.startswith("/"), tool.name
        properties = tool.parameters.get("properties", {})
        for name in PLACEHOLDER.findall(path):
            assert name in tool.parameters.get("required", []), f"{tool.name}: {name}"
            assert properties[name]["type"] in ("string", "integer"), f"{tool.name}: {name}"


def test_every_tool_of_both_apps_has_a_sample_call_below() -> None:
    declared = {(app_id, t.name) for app_id in FILES for t in load(app_id).tools}
    assert declared == {(c.app, c.tool) for c in CALLS}


@pytest.mark.parametrize("call", CALLS, ids=lambda c: f"{c.app}.{c.tool}")
def test_a_sample_call_builds_the_method_url_and_body_the_api_reference_documents(call: Call) -> None:
    app = load(call.app)
    tool = tool_of(app, call.tool)
    assert errors_of(tool.parameters, call.args) == []
    spec = request_for(app, tool, call.args)
    assert (spec.method, spec.full_url) == (call.method, call.url)
    if call.body is None:
        assert spec.body is None
    else:
        assert spec.body is not None and json.loads(spec.body) == call.body


@pytest.mark.parametrize("call", CALLS, ids=lambda c: f"{c.app}.{c.tool}")
def test_every_request_carries_the_api_version_and_media_type_headers(call: Call) -> None:
    app = load(call.app)
    tool = tool_of(app, call.tool)
    spec = request_for(app, tool, call.args)
    if call.app == GITHUB:
        assert spec.header("X-GitHub-Api-Version") == "2022-11-28"
        raw = call.tool == "getRepositoryReadme"
        assert spec.header("Accept") == (
            "application/vnd.github.raw+json" if raw else "application/vnd.github+json"
        )
    else:
        assert spec.header("Notion-Version") == channel_of(tool).default_headers["Notion-Version"]
        assert spec.header("Content-Type") == "application/json"
    assert len({name.lower() for name, _ in spec.headers}) == len(spec.headers)


def test_the_notion_version_is_one_that_has_data_sources_and_block_positions() -> None:
    """Data sources (`/data_sources/...`, `data_source_id` parents) arrived in 2025-09-03; the
    `position` object of Append block children replaced `after` in 2026-03-11."""
    app = load(NOTION)
    version = channel_of(app.tools[0]).default_headers["Notion-Version"]
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", version) and version >= "2026-03-11"
    append = tool_of(app, "appendBlockChildren").parameters["properties"]
    assert "position" in append and "after" not in append


@pytest.mark.parametrize("app_id", [GITHUB, NOTION])
def test_the_example_arguments_of_every_tool_satisfy_its_parameter_schema(app_id: str) -> None:
    app = load(app_id)
    for tool in app.tools:
        example = example_arguments(tool.parameters)
        assert errors_of(tool.parameters, example) == [], tool.name
        request_for(app, tool, example)  # and they can be sent


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("updateIssue", {**REPO, "issue_number": 1347}),
        ("createIssue", {**REPO, "title": ""}),
        ("getIssue", {**REPO, "issue_number": 0}),
        ("listRepositoryIssues", {**REPO, "per_page": 101}),
        ("listRepositoryIssues", {**REPO, "state": "merged"}),
        ("getRepository", {"owner": "octocat", "repo": "a/b"}),
    ],
)
def test_github_arguments_the_api_would_refuse_are_refused_by_the_schema(
    tool: str, args: dict[str, Any]
) -> None:
    assert errors_of(tool_of(load(GITHUB), tool).parameters, args) != []


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("retrievePage", {"page_id": "https://www.notion.so/Plan-59833787cf944fdf8782e53db20768a5"}),
        ("createPage", {"parent": {"page_id": PAGE_ID}, "markdown": "# A", "children": [PARAGRAPH]}),
        ("createPage", {"parent": {"database": PAGE_ID}}),
        ("appendBlockChildren", {"block_id": PAGE_ID, "children": []}),
        ("appendBlockChildren", {"block_id": PAGE_ID, "children": [PARAGRAPH], "after": PAGE_ID}),
        ("searchByTitle", {"sort": {"timestamp": "last_edited_time"}}),
        ("queryDataSource", {"data_source_id": DATA_SOURCE_ID, "page_size": 101}),
        (
            "updatePageMarkdown",
            {"page_id": PAGE_ID, "type": "replace_content", "insert_content": {"content": "x"}},
        ),
        ("updatePageProperties", {"page_id": PAGE_ID}),
    ],
)
def test_notion_arguments_the_api_would_refuse_are_refused_by_the_schema(
    tool: str, args: dict[str, Any]
) -> None:
    assert errors_of(tool_of(load(NOTION), tool).parameters, args) != []
