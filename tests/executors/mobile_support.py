"""Loading the seed example for the Android and iOS hosts, and stand-in helper programs."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from aai_gateway.descriptor import AppDescriptor, Platform, Source, load_text
from aai_gateway.executors import Invocation

ROOT = Path(__file__).resolve().parents[2]
PLANWISE = ROOT / "examples" / "com.example.planwise" / "aai.json"

EVENT = {
    "title": "Dentist",
    "start": "2025-06-03T14:00:00+02:00",
    "end": "2025-06-03T15:00:00+02:00",
    "calendar": "Personal",
    "location": "",
    "notes": "",
}

ADVERSARIAL = [
    "",
    "'",
    "''",
    '"',
    "\\",
    "\\'",
    "$(touch /tmp/pwned)",
    "`id`",
    "; rm -rf /",
    "a && b || c",
    "line one\nline two",
    "\n",
    " leading and trailing ",
    "tab\there",
    "*",
    "~",
    "$HOME",
    "${x}",
    "-n",
    "--es",
    "日程 会议 ✓",
    "100% & a=b #frag ?q /path",
    "%20%2F",
    "é\u0301",
]


def planwise(host: Platform) -> AppDescriptor:
    result = load_text(
        PLANWISE.read_text(encoding="utf-8"), Source(kind="file", location=str(PLANWISE)), host
    )
    assert result.descriptor is not None, [p.render() for p in result.problems]
    return result.descriptor


def call(
    app: AppDescriptor, tool: str, arguments: dict[str, Any], *, timeout_ms: int | None = None
) -> Invocation:
    found = app.tool(tool)
    assert found is not None
    if timeout_ms is not None:
        found = found.model_copy(update={"timeout_ms": timeout_ms})
    return Invocation(app, found, dict(arguments), request_id="test-1")


def stand_in(directory: Path, name: str, body: str) -> Path:
    """An executable Python script `directory/name` running `body` (with `sys`, `os`, `json`,
    `time` imported, `here` its folder, `args` its arguments, calls appended to `calls.jsonl`)."""
    directory.mkdir(parents=True, exist_ok=True)
    script = directory / name
    script.write_text(
        f"#!{sys.executable}\n"
        "import json, os, sys, time\n"
        "here = os.path.dirname(os.path.abspath(__file__))\n"
        "args = sys.argv[1:]\n"
        "with open(os.path.join(here, 'calls.jsonl'), 'a', encoding='utf-8') as log:\n"
        "    log.write(json.dumps(args) + '\\n')\n" + body,
        encoding="utf-8",
    )
    script.chmod(0o755)
    return script


def calls(directory: Path) -> list[list[str]]:
    import json

    log = directory / "calls.jsonl"
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
