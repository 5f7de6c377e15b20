"""Transcript parsing (DESIGN §5): golden files, cursor semantics, budget, robustness.

Golden values were checked by hand against the files in ``shared/data`` (read with ``jq``
and a line dump): counts of user prompts, tool results and merged assistant messages.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory.errors import JobRejected
from memory.transcripts import (
    Transcript,
    Turn,
    budget_turns,
    detect_format,
    is_noise,
    new_turns,
    parse_transcript,
    render_turns,
)

# file, format, turns, assistant turns, skipped, first user prose, last user prose (prefixes).
GOLDEN = [
    ("claude_code/Mai0313__VibeCodingTracker__claude_code.jsonl", "claude-code", 71, 32, 0,
     "幫我檢查一下 go.mod 裡面 為何 go版本是 1.23, toolchain 卻是 1.24?", "[command] /exit"),
    ("claude_code/NobitaYuan__claudecode-web__b.ts.converted.jsonl", "claude-code", 22, 10, 0,
     "vue的双向绑定我该怎么编写代码", "帮我生成一个最佳事件文档，找我确认需要哪些实践"),
    ("claude_code/NobitaYuan__claudecode-web__q2.ts.converted.jsonl", "claude-code", 9, 3, 0,
     "帮我规划一个旅行计划", "[Request interrupted by user]"),
    ("claude_code/daaain__claude-code-log__dag_compact_after_rewind.jsonl", "claude-code", 11, 5, 0,
     "Start", "After compaction"),
    ("claude_code/daaain__claude-code-log__edge_cases.jsonl", "claude-code", 11, 4, 6,
     "Here's a message with some **markdown** formatting", "wow error"),
    ("claude_code/daaain__claude-code-log__representative_messages.jsonl", "claude-code", 11, 5, 0,
     "Hello Claude! Can you help me understand how Python decorators work?",
     "This is really helpful! Let me try to implement a timing decorator myself."),
    ("claude_code/daaain__claude-code-log__todowrite_examples.jsonl", "claude-code", 11, 6, 0,
     "Can you help me implement a new feature with proper task management?",
     "Can you add a task for security review as well?"),
    ("claude_code/marot__spotter__4d5611e5-241a-462a-8d15-5122611a9569.jsonl", "claude-code", 303, 149,
     0, "Work on bead spotter-dov. Run bd show spotter-dov",
     "[compact summary] This session is being continued from a previous conversation"),
    ("claude_code/marot__spotter__4d5611e5__subagents__agent-a2898e3.jsonl", "claude-code", 67, 33, 0,
     "Very thorough exploration. I need to understand:", "Very thorough exploration."),
    ("claude_code/marot__spotter__4d5611e5__subagents__agent-acompact-e1f845.jsonl", "claude-code", 2,
     1, 0, "Your task is to create a detailed summary of the conversation so far",
     "Your task is to create a detailed summary"),
    ("claude_code/marot__spotter__short.jsonl", "claude-code", 5, 1, 0,
     "mix phx.server doesnt seem to start", "[Request interrupted by user]"),
    ("claude_code/marot__spotter__subagent.jsonl", "claude-code", 32, 13, 0,
     "[command] /handgemacht:create-beads websearch to learn how", "create the beads"),
    ("claude_code/marot__spotter__tool_heavy.jsonl", "claude-code", 17, 5, 0,
     "start phoenix in background", "[Request interrupted by user]"),
    ("claude_code/simonw__claude-code-transcripts__sample_session.jsonl", "claude-code", 7, 3, 0,
     "Create a hello world function", "Now add a goodbye function"),
    ("claude_code/yaleh__meta-cc__sample-session.jsonl", "claude-code", 3, 1, 0,
     "帮我修复这个认证 bug", "帮我修复这个认证 bug"),
    ("claude_code/yaleh__meta-cc__session-with-errors.jsonl", "claude-code", 15, 7, 0,
     "Fix the build errors", "Fix the build errors"),
    ("other_formats/codex_cli__Mai0313__VibeCodingTracker__codex.jsonl", "codex", 48, 28, 0,
     "幫我檢查一下 go.mod 裡面 為何 go版本是 1.24?", "幫我檢查一下 go.mod 裡面 為何 go版本是 1.24?"),
    ("other_formats/codex_cli__daaain__claude-code-log__rollout-2026-01-02T03-04-05-11111111.jsonl",
     "codex", 8, 4, 0, "List the synthetic files.", "List the synthetic files."),
    ("other_formats/codex_cli__yaleh__meta-cc__rollout-legacy-reasoning-tokens-sample.jsonl", "codex",
     4, 2, 0, "solve and explain", "solve and explain"),
    ("other_formats/copilot_cli__Mai0313__VibeCodingTracker__copilot.jsonl", "copilot", 20, 6, 0,
     "請不要修改任何代碼 我希望你幫我調查一下", "請不要修改任何代碼 我希望你幫我調查一下"),
    ("other_formats/gemini_cli__Mai0313__VibeCodingTracker__gemini.jsonl", "gemini", 9, 6, 0,
     "You are an AI agent that brings the power of Gemini directly into the terminal.",
     "幫我做一個小修改 請幫我將上面確保執行時要透過 uv run 來執行 避免環境有問題"),
    ("other_formats/gemini_cli_legacy_json__Mai0313__VibeCodingTracker__test_conversation_gemini.json",
     "gemini", 14, 13, 0, '## 任務：將專案描述中的 "Vibe Coding Tracker" 改為 "Vibe Code Tracker"',
     '## 任務：將專案描述中的 "Vibe Coding Tracker"'),
    ("other_formats/simonw__claude-code-transcripts__sample_codex_session.jsonl", "codex", 2, 1, 0,
     "Write a hello world function", "Write a hello world function"),
    ("other_formats/simonw__claude-code-transcripts__sample_session_loglines.json", "claude-code", 33,
     15, 0, "Create a simple Python function to add two numbers", "Add a multiply function too"),
]  # fmt: skip


def _parse(shared_data: Path, name: str, fmt: str = "auto") -> Transcript:
    return parse_transcript((shared_data / name).read_bytes(), fmt)


def _prose(turns: list[Turn], role: str = "user") -> list[Turn]:
    return [t for t in turns if t.role == role and not is_noise(t)]


# --- golden files ----------------------------------------------------------------------------


def test_golden_table_covers_every_transcript_file(shared_data: Path) -> None:
    on_disk = {
        f"{d}/{p.name}"
        for d in ("claude_code", "other_formats")
        for p in (shared_data / d).iterdir()
        if p.is_file()
    }
    assert on_disk == {row[0] for row in GOLDEN}


@pytest.mark.parametrize(
    ("name", "fmt", "n_turns", "n_assistant", "skipped", "first_user", "last_user"),
    GOLDEN,
    ids=[row[0].split("/")[1][:48] for row in GOLDEN],
)
def test_golden_file(
    shared_data: Path,
    name: str,
    fmt: str,
    n_turns: int,
    n_assistant: int,
    skipped: int,
    first_user: str,
    last_user: str,
) -> None:
    content = (shared_data / name).read_text(encoding="utf-8")
    assert detect_format(content) == fmt
    transcript = parse_transcript(content)
    assert transcript.format == fmt
    assert len(transcript.turns) == n_turns
    assert sum(t.role == "assistant" for t in transcript.turns) == n_assistant
    assert transcript.skipped == skipped
    users = _prose(transcript.turns)
    assert users[0].text.startswith(first_user)
    assert users[-1].text.startswith(last_user)
    # canonical form: known roles, no empty text, unique ids, forced format agrees with auto
    assert {t.role for t in transcript.turns} <= {"user", "assistant"}
    assert all(t.text.strip() for t in transcript.turns)
    assert len({t.message_id for t in transcript.turns}) == n_turns
    assert parse_transcript(content, fmt) == transcript


@pytest.mark.parametrize(
    ("name", "session_id"),
    [
        ("claude_code/marot__spotter__short.jsonl", "55604662-cf2a-4331-851a-ec234028f8ca"),
        ("other_formats/codex_cli__Mai0313__VibeCodingTracker__codex.jsonl",
         "01996135-afde-7911-97f0-d863511eca56"),
        ("other_formats/gemini_cli__Mai0313__VibeCodingTracker__gemini.jsonl",
         "0ab84937-9fe7-4284-986a-33c832af0b6a"),
        ("other_formats/gemini_cli_legacy_json__Mai0313__VibeCodingTracker__test_conversation_gemini.json",
         "2d9ea14f-1e4e-44f6-8bf5-7a7819cb1cd9"),
        ("other_formats/copilot_cli__Mai0313__VibeCodingTracker__copilot.jsonl",
         "96ef38f0-9d09-45c3-8124-6448c36090ed"),
        ("other_formats/simonw__claude-code-transcripts__sample_session_loglines.json", None),
    ],
)  # fmt: skip
def test_session_id_comes_from_the_source(shared_data: Path, name: str, session_id: str) -> None:
    assert _parse(shared_data, name).session_id == session_id


# --- Claude Code specifics -------------------------------------------------------------------


def test_edge_cases_skip_and_count_garbage_keep_duplicate_uuid_once(shared_data: Path) -> None:
    t = _parse(shared_data, "claude_code/daaain__claude-code-log__edge_cases.jsonl")
    # 4 non-object / untyped lines ("massive error", {"silly"}, 42, [1]), the "contenst" typo
    # and the string-valued message = 6.
    assert t.skipped == 6
    by_id = {turn.message_id: turn for turn in t.turns}
    assert by_id["edge_011"].text.startswith("Testing special characters: café")
    assert by_id["edge_010"].text == "wow error"  # its first copy had no content
    assert by_id["edge_005"].text == (
        "[tool error] Error: Tool execution failed with error: Command not found"
    )
    assert by_id["edge_007"].text == "[command] test-command --verbose --output /tmp/test.log"
    assert by_id["edge_008"].text == "[command output] Command output here:"
    assert not any("Caveat:" in turn.text for turn in t.turns)
    assert any(
        turn.text.startswith('[tool: TodoWrite] {"todos": ["broken_todo"') for turn in t.turns
    )


def test_split_assistant_message_merges_and_noise_is_summarised(shared_data: Path) -> None:
    t = _parse(shared_data, "claude_code/NobitaYuan__claudecode-web__q2.ts.converted.jsonl")
    assert [turn.role for turn in t.turns] == [
        "user", "assistant", "user", "assistant", "user", "user", "assistant", "user", "user",
    ]  # fmt: skip
    assert t.turns[0].text == "帮我规划一个旅行计划"  # <ide_opened_file> block removed
    merged = t.turns[3]
    assert merged.message_id == "68500cb5-503b-4274-ad7e-e8ff0d468b60"  # first part's uuid
    assert merged.text == (
        "明白了！您想在聊天应用中实现旅行计划功能。让我先探索代码库，了解现有架构和用户打开的文件。\n"
        "[tool: Task] 探索questionSelecter组件\n[tool: Task] 探索聊天应用架构"
    )
    assert not any("用户用中文请求我" in turn.text for turn in t.turns)  # thinking dropped
    assert t.turns[7].text.startswith("[tool error] The user doesn't want to proceed")
    assert t.turns[8].text == "[Request interrupted by user]"  # "... for tool use" kept short
    assert t.turns[0].timestamp == "2026-01-29T11:03:38Z"


def test_compact_summary_is_one_marked_user_turn(shared_data: Path) -> None:
    t = _parse(shared_data, "claude_code/daaain__claude-code-log__dag_compact_after_rewind.jsonl")
    texts = [turn.text for turn in t.turns]
    assert texts == [
        "Start",
        "Ready",
        "First attempt",
        "First answer",
        "Second attempt",
        "Second answer",
        "Keep going",
        "Kept going",
        "[compact summary] This session is being continued from a previous conversation that ran "
        "out of context. Summary: the user asked for a plan.",
        "After compaction",
        "Final answer",
    ]  # fmt: skip  (rewound branch kept, in file order)


def test_resumed_session_replayed_uuid_is_kept_once(shared_data: Path) -> None:
    t = _parse(shared_data, "claude_code/Mai0313__VibeCodingTracker__claude_code.jsonl")
    ids = [turn.message_id for turn in t.turns]
    assert ids.count("562d6805-363d-4bf4-aba6-7c6ec68a291d") == 1
    assert t.session_id == "e9f146fa-3b20-48d0-9be4-d99ca901cae4"  # the first one seen


def test_sidechains_kept_in_subagent_file_dropped_from_main_file() -> None:
    def line(uuid: str, role: str, text: str, side: bool) -> str:
        return json.dumps(
            {"type": role, "uuid": uuid, "isSidechain": side, "sessionId": "s",
             "message": {"role": role, "content": text}}
        )  # fmt: skip

    main = "\n".join(
        [line("1", "user", "hi", False), line("2", "user", "sub prompt", True),
         line("3", "assistant", "sub answer", True), line("4", "assistant", "hello", False)]
    )  # fmt: skip
    assert [t.text for t in parse_transcript(main).turns] == ["hi", "hello"]
    sub = "\n".join([line("2", "user", "sub prompt", True), line("3", "assistant", "ok", True)])
    assert [t.text for t in parse_transcript(sub).turns] == ["sub prompt", "ok"]


def test_is_meta_and_system_lines_are_dropped(shared_data: Path) -> None:
    t = _parse(shared_data, "claude_code/marot__spotter__tool_heavy.jsonl")
    texts = "\n".join(turn.text for turn in t.turns)
    assert "<local-command-caveat>" not in texts and "Caveat:" not in texts
    assert "MCP dialog dismissed" not in texts  # system/local_command echo
    assert "[command] /mcp" in texts
    assert "[command output] Reconnected to tidewave." in texts


def test_tool_use_and_result_summaries(shared_data: Path) -> None:
    name = "other_formats/simonw__claude-code-transcripts__sample_session_loglines.json"
    t = _parse(shared_data, name)
    assert t.turns[1].text == (
        "I'll create a simple Python function for you. Let me write it now.\n"
        "[tool: Write] /project/math_utils.py"
    )
    assert "[tool: Bash] python -m pytest tests/ -v" in [x.text for x in t.turns]
    assert "[tool error] Exit code 1" in [x.text for x in t.turns]
    assert all(x.message_id.startswith("h:") for x in t.turns)  # loglines carry no ids


# --- cursor / prefix property ------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "claude_code/marot__spotter__4d5611e5-241a-462a-8d15-5122611a9569.jsonl",
        "claude_code/marot__spotter__4d5611e5__subagents__agent-a2898e3.jsonl",
        "claude_code/Mai0313__VibeCodingTracker__claude_code.jsonl",
        "claude_code/daaain__claude-code-log__edge_cases.jsonl",
        "other_formats/codex_cli__Mai0313__VibeCodingTracker__codex.jsonl",
        "other_formats/copilot_cli__Mai0313__VibeCodingTracker__copilot.jsonl",
    ],
)
def test_cursor_from_a_prefix_yields_exactly_the_unseen_turns(shared_data: Path, name: str) -> None:
    lines = (shared_data / name).read_text(encoding="utf-8").splitlines(keepends=True)
    full = parse_transcript("".join(lines)).turns
    cuts = sorted({len(lines) * k // 9 for k in range(1, 9)} | {1, len(lines) - 1})
    for cut in cuts:
        earlier = parse_transcript("".join(lines[:cut])).turns
        n = len(earlier)
        assert full[: max(n - 1, 0)] == earlier[: max(n - 1, 0)], cut
        if n:
            # the last turn may be a shorter version of the same (split) message
            assert full[n - 1].message_id == earlier[-1].message_id
            assert full[n - 1].text.startswith(earlier[-1].text)
        assert new_turns(full, n) == full[n:]


def test_cut_at_a_user_prompt_is_an_exact_prefix(shared_data: Path) -> None:
    """Hooks fire between turns: cut right before each user prompt, the parses agree exactly."""
    name = "claude_code/marot__spotter__4d5611e5-241a-462a-8d15-5122611a9569.jsonl"
    lines = (shared_data / name).read_text(encoding="utf-8").splitlines(keepends=True)
    full = parse_transcript("".join(lines)).turns
    records = [json.loads(line) for line in lines]
    prompts = [
        i
        for i, r in enumerate(records)
        if r.get("type") == "user"
        and isinstance(r["message"]["content"], str)
        and not r.get("isMeta")
    ]
    assert prompts == [6, 279, 754, 1501]  # two prompts, the compact summary, a task notification
    seen = 0
    for cut in prompts:
        earlier = parse_transcript("".join(lines[:cut])).turns
        assert earlier == full[: len(earlier)]
        fresh = new_turns(full, len(earlier))
        assert fresh[0].role == "user" and fresh == full[len(earlier) :]
        assert len(earlier) > seen or cut == prompts[0]
        seen = len(earlier)


def test_new_turns_clamps_the_cursor() -> None:
    turns = [Turn("user", str(i), None, f"h:{i}") for i in range(3)]
    assert new_turns(turns, 0) == turns
    assert new_turns(turns, -5) == turns
    assert new_turns(turns, 2) == turns[2:]
    assert new_turns(turns, 3) == []
    assert new_turns(turns, 99) == []


# --- other formats -----------------------------------------------------------------------------


def test_openai_chat_with_system_tool_calls_and_tool_role() -> None:
    doc = {
        "model": "gpt-4o",
        "messages": [
            {"role": "system", "content": "You are helpful."},
            {"role": "user", "content": [{"type": "text", "text": "Weather in Paris?"},
                                         {"type": "image_url", "image_url": {"url": "x"}}]},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "c1", "type": "function",
                 "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "18C, sunny"},
            {"role": "assistant", "content": "It is 18C and sunny."},
        ],
    }  # fmt: skip
    content = json.dumps(doc)
    assert detect_format(content) == "openai"
    t = parse_transcript(content)
    assert [(x.role, x.text) for x in t.turns] == [
        ("user", "Weather in Paris?\n[image]"),
        ("assistant", '[tool: get_weather] {"city": "Paris"}'),
        ("user", "[tool result] 18C, sunny"),
        ("assistant", "It is 18C and sunny."),
    ]
    assert t.skipped == 0


def test_anthropic_messages_blocks_and_request_response_pairs() -> None:
    request = {
        "system": [{"type": "text", "text": "Be brief."}],
        "messages": [
            {"role": "user", "content": "List files"},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "secret plan"},
                {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls\n-la"}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "a.txt"}]}]},
        ],
    }  # fmt: skip
    response = {
        "id": "msg_9",
        "role": "assistant",
        "content": [{"type": "text", "text": "One file."}],
    }
    for doc in (request, request["messages"], [{"request": request, "response": response}]):
        content = json.dumps(doc)
        assert detect_format(content) == "anthropic"
        texts = [x.text for x in parse_transcript(content).turns]
        assert texts[:3] == ["List files", "[tool: Bash] ls", "[tool result] a.txt"]
    paired = parse_transcript(json.dumps([{"request": request, "response": response}]))
    assert paired.turns[-1] == Turn("assistant", "One file.", None, "msg_9")


def test_plain_text_role_split_and_fallbacks() -> None:
    text = "User: I prefer tabs.\nPlease remember.\nAssistant: Noted.\nSystem: ignore me\n用户：用中文回答\n助手：好的"
    t = parse_transcript(text)
    assert t.format == "text"
    assert [(x.role, x.text) for x in t.turns] == [
        ("user", "I prefer tabs.\nPlease remember."),
        ("assistant", "Noted."),
        ("user", "用中文回答"),
        ("assistant", "好的"),
    ]
    one = parse_transcript("just a note\nwith two lines")
    assert [(x.role, x.text) for x in one.turns] == [("user", "just a note\nwith two lines")]
    assert parse_transcript("   \n").turns == []
    markdown = parse_transcript("**Human:** hi there\n\n## Assistant\nhello")
    assert [(x.role, x.text) for x in markdown.turns] == [
        ("user", "hi there"),
        ("assistant", "hello"),
    ]


def test_rendered_turns_parse_back() -> None:
    turns = [
        Turn("user", "remember: deploy on Fridays is banned", "2026-11-29T10:22:05Z", "a"),
        Turn("assistant", "Noted.\nI will not deploy on Fridays.", None, "b"),
    ]
    rendered = render_turns(turns)
    assert rendered == (
        "[user 2026-11-29T10:22:05Z] remember: deploy on Fridays is banned\n"
        "[assistant] Noted.\nI will not deploy on Fridays."
    )
    back = parse_transcript(rendered).turns
    assert [(t.role, t.text, t.timestamp) for t in back] == [
        (t.role, t.text, t.timestamp) for t in turns
    ]


# --- forced formats, encodings ---------------------------------------------------------------


def test_forced_format_rejects_content_with_nothing_parseable() -> None:
    with pytest.raises(JobRejected, match="nothing parseable as claude-code"):
        parse_transcript("hello there\nnot json", "claude-code")
    with pytest.raises(JobRejected, match="nothing parseable as openai"):
        parse_transcript('{"weather": "sunny"}', "openai")
    with pytest.raises(JobRejected, match="unknown format"):
        parse_transcript("hi", "markdown")
    assert parse_transcript("", "claude-code").turns == []
    assert parse_transcript("hello there", "auto").turns[0].text == "hello there"


def test_unrecognised_json_falls_back_to_text_in_auto_mode() -> None:
    t = parse_transcript('{"weather": "sunny"}')
    assert t.format == "text"
    assert [x.text for x in t.turns] == ['{"weather": "sunny"}']


def test_non_utf8_bytes_are_replaced_and_counted() -> None:
    line = json.dumps({"type": "user", "uuid": "u1", "message": {"role": "user", "content": "caf"}})
    t = parse_transcript(line.encode().replace(b"caf", b"caf\xe9"))
    assert t.format == "claude-code"
    assert t.turns[0].text == "caf\ufffd"
    assert t.skipped == 1
    utf16 = parse_transcript("\ufeffUser: 你好".encode("utf-16"))
    assert [(x.role, x.text) for x in utf16.turns] == [("user", "你好")]
    assert utf16.skipped == 0


def test_truncated_last_line_is_skipped_and_counted(shared_data: Path) -> None:
    name = "claude_code/simonw__claude-code-transcripts__sample_session.jsonl"
    content = (shared_data / name).read_text(encoding="utf-8").rstrip("\n")
    t = parse_transcript(content[:-40])  # a live file read mid-write
    assert t.skipped == 1
    assert len(t.turns) == 6


def test_timestamps_are_normalised_to_utc_seconds() -> None:
    def ts(value: object) -> str | None:
        line = json.dumps({"type": "user", "timestamp": value, "message": {"content": "x"}})
        return parse_transcript(line).turns[0].timestamp

    assert ts("2026-02-10T21:11:56.381Z") == "2026-02-10T21:11:56Z"
    assert ts("2026-04-24T01:11:16.237+08:00") == "2026-04-23T17:11:16Z"
    assert ts("yesterday") is None
    assert ts(None) is None


# --- budget --------------------------------------------------------------------------------------


def _turns(*texts: str) -> list[Turn]:
    return [
        Turn("user" if i % 2 == 0 else "assistant", t, None, f"h:{i}") for i, t in enumerate(texts)
    ]


def test_budget_keeps_most_recent_turns_and_truncates_the_oldest_kept() -> None:
    turns = _turns("a" * 50, "b" * 10, "c" * 10)  # rendered: "[user] ", "[assistant] ", "[user] "
    assert budget_turns(turns, 10_000) == turns
    last_two = len(render_turns(turns[1:]))
    assert last_two == 12 + 10 + 1 + 7 + 10
    assert budget_turns(turns, last_two) == turns[1:]
    kept = budget_turns(turns, last_two + 1 + 7 + 5)  # room for "[user] " + "…" + 4 chars
    assert kept[1:] == turns[1:]
    assert kept[0] == Turn("user", "…aaaa", None, "h:0")
    assert budget_turns(turns, 0) == []
    assert budget_turns(turns, 5) == []  # not even the newest turn's header fits
    assert budget_turns(turns, 9) == [Turn("user", "…c", None, "h:2")]


_turn_strategy = st.builds(
    Turn,
    role=st.sampled_from(["user", "assistant"]),
    text=st.text(min_size=1, max_size=60),
    timestamp=st.sampled_from([None, "2026-11-29T10:22:05Z"]),
    message_id=st.text(max_size=5),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(_turn_strategy, max_size=12), st.integers(min_value=-5, max_value=600))
def test_budget_rendering_never_exceeds_the_budget(turns: list[Turn], max_chars: int) -> None:
    kept = budget_turns(turns, max_chars)
    assert len(render_turns(kept)) <= max(max_chars, 0)
    if kept:
        assert kept[1:] == turns[len(turns) - len(kept) + 1 :]  # a suffix, only the oldest cut
        oldest = turns[len(turns) - len(kept)]
        assert kept[0] == oldest or (
            kept[0].text.startswith("…") and oldest.text.endswith(kept[0].text[1:])
        )


# --- robustness ------------------------------------------------------------------------------

_KEYS = ["type", "message", "content", "role", "uuid", "text", "payload", "data", "id",
         "tool_calls", "function", "name", "input", "messages", "isSidechain", "loglines",
         "toolCalls", "output", "result", "sessionId", "request", "response", "$set"]  # fmt: skip
_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(st.sampled_from(_KEYS), children, max_size=5)
    ),
    max_leaves=12,
)
_type_names = st.sampled_from(
    ["user", "assistant", "summary", "system", "response_item", "session_meta", "gemini",
     "user.message", "assistant.message", "tool.execution_complete", "message", "function_call"]
)  # fmt: skip


def _check(t: object) -> None:
    assert isinstance(t, Transcript)
    assert t.skipped >= 0
    assert all(x.role in ("user", "assistant") and x.text.strip() for x in t.turns)
    assert len({x.message_id for x in t.turns}) == len(t.turns)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=400))
def test_arbitrary_text_never_raises(content: str) -> None:
    _check(parse_transcript(content))


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=400))
def test_arbitrary_bytes_never_raise(content: bytes) -> None:
    _check(parse_transcript(content))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(_type_names, _json_values, _json_values), max_size=8), st.booleans())
def test_arbitrary_json_records_never_raise(
    records: list[tuple[str, object, object]], as_document: bool
) -> None:
    objects = [
        {"type": kind, "message": a, "payload": a, "data": b, "content": b}
        for kind, a, b in records
    ]
    content = json.dumps(objects) if as_document else "\n".join(json.dumps(o) for o in objects)
    _check(parse_transcript(content))
    for fmt in ("claude-code", "anthropic", "openai", "codex", "gemini", "copilot", "text"):
        with contextlib.suppress(JobRejected):
            _check(parse_transcript(content, fmt))


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_damaged_real_lines_never_raise(shared_data: Path, data: st.DataObject) -> None:
    name = data.draw(
        st.sampled_from([row[0] for row in GOLDEN if "marot__spotter__4d56" not in row[0]])
    )
    lines = (shared_data / name).read_text(encoding="utf-8").splitlines()
    picked = data.draw(st.lists(st.sampled_from(lines), min_size=1, max_size=6))
    damaged = [line[: data.draw(st.integers(0, len(line)))] for line in picked]
    _check(parse_transcript("\n".join(damaged)))


def test_deeply_nested_json_does_not_raise() -> None:
    _check(parse_transcript("[" * 100_000 + "]" * 100_000))
    _check(parse_transcript('{"messages": ' + "[" * 5000 + "]" * 5000 + "}"))


def test_import_is_stdlib_only() -> None:
    code = (
        "import sys, memory.transcripts; "
        "print(sorted({m.split('.')[0] for m in sys.modules} & "
        "{'anthropic', 'watchdog', 'apscheduler', 'yaml', 'filelock', 'structlog'}))"
    )
    repo = Path(__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, "-c", code], cwd=repo, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_hash_ids_depend_on_occurrence_not_position() -> None:
    """Without source ids, a turn's id survives other turns appearing before it."""
    short = parse_transcript("User: a\nAssistant: b\nUser: a").turns
    longer = parse_transcript("User: z\nAssistant: y\nUser: a\nAssistant: b\nUser: a").turns
    assert [t.message_id for t in short] == [t.message_id for t in longer[2:]]
    assert short[0].message_id != short[2].message_id  # second "a" is occurrence 1
    assert all(t.message_id.startswith("h:") and len(t.message_id) == 18 for t in longer)


def test_jsonl_chat_messages_and_gemini_api_parts() -> None:
    lines = [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "I use Go 1.23"},
        {"role": "model", "parts": [{"text": "Noted: Go 1.23."}]},
        "not an object",
    ]
    content = "\n".join(json.dumps(line) for line in lines)
    assert detect_format(content) == "openai"
    t = parse_transcript(content)
    assert [(x.role, x.text) for x in t.turns] == [
        ("user", "I use Go 1.23"),
        ("assistant", "Noted: Go 1.23."),
    ]
    assert t.skipped == 1


def test_every_marker_the_parsers_write_is_listed(shared_data: Path) -> None:
    from memory.transcripts import MARKERS

    written = set()
    for name, *_ in GOLDEN:
        for turn in _parse(shared_data, name).turns:
            for line in turn.text.splitlines():
                if line.startswith("[") and "]" in line:
                    head = line[: line.index("]") + 1]
                    written.add("[tool: " if head.startswith("[tool: ") else head)
    known = set(MARKERS)
    assert {
        w for w in written if w.startswith(("[tool", "[command", "[bash", "[compact", "[task"))
    } <= known
    assert {"[tool: ", "[tool result]", "[tool error]", "[command]", "[compact summary]"} <= written


def test_forced_text_accepts_anything_non_blank() -> None:
    assert parse_transcript("System: be terse", "text").turns == []  # system text is dropped
    assert [t.text for t in parse_transcript('{"a": 1}', "text").turns] == ['{"a": 1}']


def test_repeated_source_ids_get_unique_suffixes_quickly() -> None:
    event = {"type": "user.message", "id": "same", "data": {"content": "hi"}}
    content = "\n".join(json.dumps(event) for _ in range(20_000))
    ids = [t.message_id for t in parse_transcript(content).turns]
    assert ids[:3] == ["same", "same#2", "same#3"]
    assert len(set(ids)) == 20_000


@pytest.mark.timeout(10)  # quadratic tag scanning took over a minute here
@pytest.mark.parametrize("tag", ["<bash-stdout>", "<command-name>", "<summary>", "<ide_selection>"])
def test_unclosed_tags_do_not_make_parsing_quadratic(tag: str) -> None:
    content = json.dumps({"type": "user", "message": {"content": "hi " + tag * 20_000}})
    if tag == "<summary>":
        content = content.replace("hi ", "<task-notification>", 1)
    t = parse_transcript(content)
    assert len(t.turns) <= 1


def test_legacy_codex_rollout_without_wrappers() -> None:
    lines = [
        {"id": "d5e5f0a1", "timestamp": "2025-05-01T10:00:00Z", "instructions": None},
        {"record_type": "state"},
        {"type": "message", "id": None, "role": "user",
         "content": [{"type": "input_text", "text": "fix the bug"}]},
        {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": None},
        {"type": "function_call", "id": "fc_1", "name": "shell", "call_id": "call_1",
         "arguments": json.dumps({"command": ["bash", "-lc", "ls -la"]})},
        {"type": "function_call_output", "call_id": "call_1",
         "output": json.dumps({"output": "ls: denied\n", "metadata": {"exit_code": 2}})},
        {"type": "message", "id": "msg_1", "role": "assistant",
         "content": [{"type": "output_text", "text": "Done."}]},
    ]  # fmt: skip
    content = "\n".join(json.dumps(line) for line in lines)
    assert detect_format(content) == "codex"
    t = parse_transcript(content)
    assert t.session_id == "d5e5f0a1"
    assert [x.text for x in t.turns] == [
        "fix the bug",
        "[tool: shell] ls -la",
        "[tool error] ls: denied",
        "Done.",
    ]


def test_harness_wrappers_only_recognised_at_the_start() -> None:
    def user(text: str) -> list[str]:
        line = json.dumps({"type": "user", "message": {"role": "user", "content": text}})
        return [t.text for t in parse_transcript(line).turns]

    prose = "Why does <command-name> show up in my <bash-stdout> logs?"
    assert user(prose) == [prose]
    assert user("<bash-input>ls</bash-input>") == ["[bash] ls"]
    assert user("<bash-stdout>a.txt\nb.txt</bash-stdout><bash-stderr></bash-stderr>") == [
        "[bash output] a.txt"
    ]
    assert user("<local-command-stdout>(no content)</local-command-stdout>") == []
    assert user("<system-reminder>\nHook said hi\n</system-reminder>\nPlease use tabs.") == [
        "Please use tabs."
    ]
