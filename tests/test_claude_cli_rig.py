"""The real-client rig itself: the pinned Claude Code CLI streams from the fake API and runs tools."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.claude_cli import ClaudeHome, claude_binary, project_key
from tests.fake_anthropic import FakeAnthropic, Request, ScriptItem, message


def _tool_results(req: Request) -> list[dict[str, object]]:
    last = req.body["messages"][-1]
    content = last.get("content") if isinstance(last, dict) else None
    if not isinstance(content, list):
        return []
    return [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]


@pytest.fixture
def writes_a_file(tmp_path: Path) -> Iterator[tuple[FakeAnthropic, Path]]:
    target = tmp_path / "project" / "notes.txt"

    def respond(req: Request) -> ScriptItem:
        if _tool_results(req):
            return message("Done.")
        tools = {t.get("name") for t in req.body.get("tools") or []}
        if "Write" in tools:
            return message(
                None, stop_reason="tool_use",
                tool_use=[("Write", {"file_path": str(target), "content": "written by the CLI\n"})],
            )  # fmt: skip
        return message("ok")

    server = FakeAnthropic(responder=respond)
    try:
        yield server, target
    finally:
        server.close()


def test_cli_streams_from_the_fake_api_and_runs_a_write_tool(
    tmp_path: Path, writes_a_file: tuple[FakeAnthropic, Path]
) -> None:
    fake, target = writes_a_file
    project = target.parent
    project.mkdir()
    home = ClaudeHome(home=tmp_path / "home", exe=claude_binary(), base_url=fake.url)
    home.settings = {"permissions": {"allow": ["Write"]}}
    run = home.run("-p", "write the notes file", "--permission-mode", "acceptEdits", cwd=project)
    assert run.returncode == 0, run.stderr
    assert "Done." in run.stdout
    assert target.read_text() == "written by the CLI\n"
    assert any(r.streamed for r in fake.requests), "the CLI should stream (SSE)"
    assert all(r.headers.get("x-api-key") == "sk-ant-test-fake-key-0000" for r in fake.requests)
    sessions = home.transcripts()
    assert [p.parent.name for p in sessions] == [project_key(project)]
    types = [json.loads(line).get("type") for line in sessions[0].read_text().splitlines()]
    assert "user" in types and "assistant" in types
