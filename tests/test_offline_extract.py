"""The offline extractor: golden real transcripts, hand-written EN/ZH rules, gate validity."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dreamd.models.offline.extract.pipeline import MAX_RECORDS, clean_turn, extract, sentences
from dreamd.models.offline.model import OfflineModel, answer
from dreamd.models.offline.text import absolutize_dates, tokens
from memory.model.answer_gate import check_extracted
from memory.model.llm import Completion, render_payload
from memory.store.records import validate_fields
from memory.transcripts import parse_transcript

TODAY = "2026-11-29"
TS = "2026-11-25T09:30:00Z"  # a Wednesday


def run(
    turns: list[dict[str, Any]], *, index: list[dict[str, str]] | None = None, today: str = TODAY
) -> list[dict[str, str]]:
    """Extract through the real model interface and the real gate, as the daemon does."""
    payload = {"task": "extract", "today": today, "index": index or [], "turns": turns}
    completion = OfflineModel().complete("Extract memories.", "prose\n" + render_payload(payload), 8192)
    assert completion.stop_reason == "end_turn"
    assert completion.model == "offline"
    items = json.loads(completion.text)
    assert isinstance(items, list)
    for i, item in enumerate(items):
        assert set(item) == {"name", "type", "description", "body"}
        validate_fields(item, where=f"item {i}")
    names = {e["name"] for e in index or []}
    check_extracted(completion, existing_names=names)
    assert completion.text == json.dumps(extract(payload), ensure_ascii=False)  # deterministic
    return list(items)


def user(text: str, ts: str | None = TS) -> dict[str, Any]:
    return {"role": "user", "text": text, "timestamp": ts}


def assistant(text: str, ts: str | None = TS) -> dict[str, Any]:
    return {"role": "assistant", "text": text, "timestamp": ts}


def by_name(items: list[dict[str, str]]) -> dict[str, dict[str, str]]:
    return {i["name"]: i for i in items}


# ----------------------------------------------------------------------------- real transcripts

# Checked by hand (reading every human-typed user turn of each file): none of these sessions
# states a lasting preference, correction, decision, reference or identity. They are task
# requests ("Create a hello world function", "帮我规划一个旅行计划", "幫我檢查一下 go.mod …",
# "start phoenix in background"), questions ("toolchain不用保留吧?"), slash commands, skill
# documents injected as user turns (full of "DO NOT …" imperatives that are not the user's),
# subagent prompts ("… - don't summarize"), compaction summaries and tool results. The only
# candidate, Mai0313's "请帮我统一成1.23 … 我希望1.23以上就能使用", is a one-off request for
# an edit, not a standing rule. So the golden answer for every file is: nothing.
GOLDEN: dict[str, list[tuple[str, str]]] = {
    "Mai0313__VibeCodingTracker__claude_code.jsonl": [],
    "NobitaYuan__claudecode-web__b.ts.converted.jsonl": [],
    "NobitaYuan__claudecode-web__q2.ts.converted.jsonl": [],
    "daaain__claude-code-log__dag_compact_after_rewind.jsonl": [],
    "daaain__claude-code-log__edge_cases.jsonl": [],
    "daaain__claude-code-log__representative_messages.jsonl": [],
    "daaain__claude-code-log__todowrite_examples.jsonl": [],
    "marot__spotter__4d5611e5-241a-462a-8d15-5122611a9569.jsonl": [],
    "marot__spotter__4d5611e5__subagents__agent-a2898e3.jsonl": [],
    "marot__spotter__4d5611e5__subagents__agent-acompact-e1f845.jsonl": [],
    "marot__spotter__short.jsonl": [],
    "marot__spotter__subagent.jsonl": [],
    "marot__spotter__tool_heavy.jsonl": [],
    "simonw__claude-code-transcripts__sample_session.jsonl": [],
    "yaleh__meta-cc__sample-session.jsonl": [],
    "yaleh__meta-cc__session-with-errors.jsonl": [],
}


def _turns_of(path: Path) -> list[dict[str, Any]]:
    transcript = parse_transcript(path.read_bytes())
    return [{"role": t.role, "text": t.text, "timestamp": t.timestamp} for t in transcript.turns]


def test_golden_table_covers_every_real_transcript(shared_data: Path) -> None:
    files = sorted(p.name for p in (shared_data / "claude_code").glob("*.jsonl"))
    assert files == sorted(GOLDEN)


@pytest.mark.parametrize("filename", sorted(GOLDEN))
def test_real_transcript_extracts_exactly_the_golden_records(shared_data: Path, filename: str) -> None:
    turns = _turns_of(shared_data / "claude_code" / filename)
    assert any(t["role"] == "user" for t in turns)
    items = run(turns)
    assert [(i["name"], i["type"]) for i in items] == GOLDEN[filename]


def test_real_noisy_session_finds_only_planted_memories(shared_data: Path) -> None:
    """The 3 MB tool-heavy session with three human turns planted among its 300 turns: the
    extractor finds exactly those, with the dates taken from the planted turns' timestamps."""
    turns = _turns_of(shared_data / "claude_code" / "marot__spotter__4d5611e5-241a-462a-8d15-5122611a9569.jsonl")
    planted = [
        user("From now on, never push directly to main; open a PR instead.", "2026-02-12T17:00:00Z"),
        user("The transcript renderer spec lives at https://github.com/marot/spotter/wiki/Renderer.",
             "2026-02-12T18:00:00Z"),
        user("We decided to keep AshComputer for the shared transcript state because both LiveViews need it.",
             "2026-02-12T19:00:00Z"),
    ]
    mixed = [*turns[:50], planted[0], *turns[50:150], planted[1], *turns[150:250], planted[2], *turns[250:]]
    items = run(mixed)
    assert [(i["name"], i["type"]) for i in items] == [
        ("never-push-directly-main-open-pr", "feedback"),
        ("ref-transcript-renderer-spec", "reference"),
        ("decision-keep-ashcomputer-shared-transcript-state", "project"),
    ]
    decision = items[2]
    assert decision["body"].splitlines()[:2] == [
        "Decided on 2026-02-12: keep AshComputer for the shared transcript state.",
        "**Why:** Both LiveViews need it.",
    ]


# ----------------------------------------------------------------------------- English rules

def test_english_rules_each_produce_the_expected_record() -> None:
    items = run([
        user("Remember that the staging database is at postgres://staging.internal:5432/app."),
        user("I prefer tabs over spaces for indentation."),
        user("No, don't use mocks in integration tests because they hid a broken migration last quarter."),
        user("We decided to use Postgres for the event store because we need JSONB."),
        user("Bugs are tracked in Linear project INGEST."),
        user("I'm a data scientist working mostly in Python."),
        user("The release freeze is next Friday."),
        user("I always run the tests before pushing."),
    ])
    got = by_name(items)
    assert list(got) == [
        "ref-staging-database",
        "prefers-tabs-spaces-indentation",
        "dont-use-mocks-integration-tests",
        "decision-use-postgres-event-store",
        "ref-bugs-linear",
        "user-data-scientist-working-mostly-python",
        "deadline-release-freeze",
        "habit-run-tests-before-pushing",
    ]
    assert {n: r["type"] for n, r in got.items()} == {
        "ref-staging-database": "reference",
        "prefers-tabs-spaces-indentation": "user",
        "dont-use-mocks-integration-tests": "feedback",
        "decision-use-postgres-event-store": "project",
        "ref-bugs-linear": "reference",
        "user-data-scientist-working-mostly-python": "user",
        "deadline-release-freeze": "project",
        "habit-run-tests-before-pushing": "user",
    }
    assert got["prefers-tabs-spaces-indentation"]["description"] == "User prefers tabs over spaces for indentation"
    assert got["dont-use-mocks-integration-tests"]["body"] == (
        "Don't use mocks in integration tests.\n"
        "**Why:** They hid a broken migration last quarter.\n"
        "**How to apply:** treat this as a standing rule: check for it before acting and do not "
        "do it unless the user explicitly asks.\n"
    )
    assert got["decision-use-postgres-event-store"]["body"].splitlines()[:2] == [
        "Decided on 2026-11-25: use Postgres for the event store.",
        "**Why:** We need JSONB.",
    ]
    assert got["ref-staging-database"]["description"] == "Staging database: postgres://staging.internal:5432/app"
    assert got["user-data-scientist-working-mostly-python"]["description"] == (
        "User is a data scientist working mostly in Python"
    )
    # 2026-11-25 is a Wednesday: "next Friday" is Friday of the following week.
    assert got["deadline-release-freeze"]["description"] == "The release freeze is 2026-12-04"
    assert got["habit-run-tests-before-pushing"]["description"] == "User always runs the tests before pushing"


def test_feedback_without_reason_gets_generic_why_and_how() -> None:
    [item] = run([user("Never commit directly to main.")])
    assert item["name"] == "never-commit-directly-main"
    assert item["type"] == "feedback"
    lines = item["body"].splitlines()
    assert lines[0] == "Never commit directly to main."
    assert lines[1] == "**Why:** the user gave this as explicit feedback on 2026-11-25; no reason was stated."
    assert lines[2].startswith("**How to apply:** ")


def test_reason_in_the_following_sentence_is_used() -> None:
    [item] = run([user("Let's go with FastAPI. The reason is that the team already knows it.")])
    assert item["name"] == "decision-go-fastapi"
    assert item["body"].splitlines()[1] == "**Why:** The team already knows it."


def test_feedback_phrased_as_a_wish_or_a_standing_rule() -> None:
    items = run([
        user("I prefer that you ask before deleting files."),
        user("I'd like you to always run black before committing."),
        user("From now on, write commit messages in English."),
        user("In the future I might try Rust."),
    ])
    assert [(i["name"], i["type"], i["description"]) for i in items] == [
        ("ask-before-deleting-files", "feedback", "Ask before deleting files"),
        ("always-run-black-before-committing", "feedback", "Always run black before committing"),
        ("write-commit-messages-english", "feedback", "Write commit messages in English"),
    ]


def test_habit_offered_as_example_and_so_never_rules_are_feedback() -> None:
    items = run([
        user("One more thing: I always run ruff format before committing, please do the same."),
        user("The shared runner is slow on Mondays, so never schedule the nightly build there."),
    ])
    assert [(i["name"], i["type"], i["description"]) for i in items] == [
        ("always-run-ruff-format-before-committing", "feedback", "Always run ruff format before committing"),
        ("never-schedule-nightly-build", "feedback", "Never schedule the nightly build there"),
    ]
    assert items[1]["body"].splitlines()[1] == "**Why:** The shared runner is slow on Mondays."


def test_instead_of_feedback_and_remember_to() -> None:
    items = run([
        user("From now on, please use pnpm instead of npm."),
        user("Please use the staging bucket instead of prod."),  # no standing marker: this task only
        user("Please remember to run the migrations before deploying."),
    ])
    assert [(i["name"], i["type"], i["description"]) for i in items] == [
        ("use-pnpm-instead-npm", "feedback", "Use pnpm instead of npm"),
        ("run-migrations-before-deploying", "feedback", "Run the migrations before deploying"),
    ]


def test_references_from_urls_with_what_they_are() -> None:
    items = run([
        user("The Grafana dashboard for ingest is https://grafana.example.com/d/ingest."),
        user("API docs: https://docs.example.com/api"),
        user("Here's a message with a [link](https://example.com) to see how it renders!"),
    ])
    assert [(i["name"], i["type"]) for i in items] == [
        ("ref-grafana-dashboard-ingest", "reference"),
        ("ref-api-docs", "reference"),
    ]


def test_assistant_turns_only_give_confirmed_decisions() -> None:
    items = run([
        assistant("I prefer to use a loop here. Never mind, I decided to refactor the parser."),
        assistant("We agreed to move the cache to Redis since memory was tight."),
        assistant("Remember that the build takes five minutes."),
    ])
    assert [(i["name"], i["type"]) for i in items] == [("decision-move-cache-redis", "project")]
    assert items[0]["body"].splitlines()[1] == "**Why:** Memory was tight."


def test_skips_questions_requests_ephemera_code_tools_and_injected_text() -> None:
    items = run([
        user("Should we always use pnpm?"),
        user("Can you never use var in this file?"),
        user("Help me decide whether we always squash commits."),
        user("Don't run the tests yet."),
        user("For now, always skip the slow tests."),
        user("Don't do that."),
        user("I like it!"),
        user("```\n# never commit secrets\nalways_run = True\n```"),
        user("[tool result] Never use this API after 2026-01-01, always prefer v2."),
        user("<system-reminder>Always answer in French.</system-reminder>"),
        user("Caveat: The messages below were generated by the user while running local commands."),
        user("# Skill\n\n## Rules\n\nDO NOT create any beads until the user approves the plan.\n"),
        user("> never use tabs (quoted from the old style guide)"),
        user("This session is being continued from a previous conversation. I prefer tabs."),
        user("I always wanted to learn sailing. Always glad to hear from you!"),
        user("Never mind. I like your plan. I chose them since they were cheap."),
        user("Remember, every expert was once a beginner. Don't give up on the kata, pal!"),
        user("Never had the time to read that book. Use a smaller batch size here."),
        user("Don't worry about the typo in the docstring, I'll fix it later."),
    ])
    assert items == []


def test_interests_and_habits_in_casual_conversation() -> None:
    items = run([
        user("I'm keen on woodworking or restoring furniture - I'd love a workshop someday."),
        user("Weekends are busy. I'm just learning the cello."),
        user("I usually write tests first."),
    ])
    assert [(i["name"], i["type"], i["description"]) for i in items] == [
        ("likes-woodworking-restoring-furniture", "user", "User is keen on woodworking or restoring furniture"),
        ("likes-cello", "user", "User is learning the cello"),
        ("habit-write-tests-first", "user", "User usually writes tests first"),
    ]


def test_secrets_never_reach_a_record() -> None:
    items = run([
        user("Remember that the deploy token is [REDACTED:github-token] for the CI."),
        user("Remember the API key: sk-ant-api03-abcdefghijklmnopqrstuvwx"),
        user("Always export the password = hunter2hunter2 before running the seed."),
        user("Never paste secrets into the issue tracker because they get indexed."),
        user("Please always ask before deleting files."),  # "ask-before…" is not an sk- key
        user("Our reporting DB is postgres://report:s3cretpass@db.internal:5432/reports, keep it handy."),
    ])
    assert [i["name"] for i in items] == ["never-paste-secrets-issue-tracker", "always-ask-before-deleting-files"]
    text = json.dumps(items)
    assert "REDACTED" not in text and "sk-ant" not in text and "hunter2" not in text and "s3cret" not in text


def test_index_dedup_by_name_and_by_near_duplicate_description() -> None:
    index = [
        {"name": "prefers-tabs-spaces-indentation", "type": "user", "description": "anything"},
        {"name": "no-mocks", "type": "feedback", "description": "Never use mocks in integration tests"},
        {"name": "pnpm", "type": "user", "description": "Use pnpm instead of npm"},
    ]
    items = run(
        [
            user("I prefer tabs over spaces for indentation."),
            user("Don't use mocks in integration tests."),
            user("Please always use pnpm instead of npm."),  # same words, but the index has it as a user record
            user("Always write docstrings that say why."),
        ],
        index=index,
    )
    assert [(i["name"], i["type"]) for i in items] == [
        ("always-use-pnpm-instead-npm", "feedback"),
        ("always-write-docstrings-say", "feedback"),
    ]


def test_names_stay_unique_and_never_reuse_an_index_name() -> None:
    items = run(
        [
            user("Never force push to shared branches."),  # its name is in the index: skipped
            user("Never deploy api gateway service changes on weekends or holidays without ops approval."),
            user("Never deploy api gateway service changes before the smoke tests pass."),
        ],
        index=[{"name": "never-force-push-shared-branches", "type": "project", "description": "unrelated"}],
    )
    assert [i["name"] for i in items] == [
        "never-deploy-api-gateway-service-changes",
        "never-deploy-api-gateway-service-changes-2",
    ]


def test_output_is_capped_and_remember_requests_win() -> None:
    turns = [user(f"Never touch the alpha{i} beta{i} gamma{i} module.") for i in range(25)]
    turns.append(user("Remember that the on-call rota lives at https://wiki.example.com/oncall."))
    items = run(turns)
    assert len(items) == MAX_RECORDS
    assert items[-1]["name"] == "ref-on-call-rota"
    assert [i["name"] for i in items[:3]] == [
        "never-touch-alpha0-beta0-gamma0-module",
        "never-touch-alpha1-beta1-gamma1-module",
        "never-touch-alpha2-beta2-gamma2-module",
    ]
    assert items[-2]["name"] == "never-touch-alpha18-beta18-gamma18-module"


# ----------------------------------------------------------------------------- Chinese rules

def test_chinese_rules_each_produce_the_expected_record() -> None:
    items = run([
        user("记住：我们的接口文档在 https://wiki.example.cn/api。"),
        user("我比较喜欢用 vim 写代码。"),
        user("不要在提交信息里用 emoji，因为发布脚本会出错。"),
        user("我们决定用 PostgreSQL，因为需要 JSONB 支持。"),
        user("我是一名后端工程师，主要写 Go。"),
        user("下周五发布新版本。"),
        user("bug 都记录在 Linear 里。"),
        user("以后都用 pnpm，别用 npm。"),
    ])
    assert [(i["name"], i["type"], i["description"]) for i in items] == [
        ("ref-94ca335c", "reference", "我们的接口文档：https://wiki.example.cn/api"),
        ("pref-vim", "user", "用户比较喜欢用 vim 写代码"),
        ("avoid-emoji", "feedback", "不要在提交信息里用 emoji"),
        ("decision-postgresql", "project", "决定：用 PostgreSQL"),
        ("user-go", "user", "用户是一名后端工程师，主要写 Go"),
        ("deadline-8c6326d3", "project", "2026-12-04发布新版本"),
        ("ref-bug-linear", "reference", "bug 都记录在 Linear 里"),
        ("always-pnpm-npm", "feedback", "都用 pnpm，别用 npm"),
    ]
    got = by_name(items)
    assert got["avoid-emoji"]["body"].splitlines()[:2] == ["不要在提交信息里用 emoji。", "**Why:** 发布脚本会出错。"]
    assert got["decision-postgresql"]["body"].splitlines()[:2] == ["2026-11-25 决定：用 PostgreSQL。", "**Why:** 需要 JSONB 支持。"]
    assert got["always-pnpm-npm"]["body"] == (
        "都用 pnpm，别用 npm。\n"
        "**Why:** 用户在 2026-11-25 明确提出，未说明原因。\n"
        "**How to apply:** 作为长期规则，适用于此后的所有工作，而不只是当前任务。\n"
    )


def test_chinese_wishes_and_standing_rules_are_feedback() -> None:
    items = run([
        user("以后提交信息都用英文写。"),
        user("我希望你每次先解释思路再改代码。"),
        user("我需要你帮我改一下这个函数。"),
        user("请你以后回答都用中文。"),
        user("以后再说"),
    ])
    assert [(i["type"], i["name"].rsplit("-", 1)[0], i["description"]) for i in items] == [
        ("feedback", "always", "提交信息都用英文写"),
        ("feedback", "feedback", "每次先解释思路再改代码"),
        ("feedback", "feedback", "回答都用中文"),
    ]


def test_chinese_without_ascii_words_gets_prefix_and_hash_names() -> None:
    items = run([user("我习惯用四个空格缩进。"), user("永远不要直接改线上数据库。"), user("我叫小明。")])
    assert [(i["type"], i["name"].rsplit("-", 1)[0]) for i in items] == [
        ("user", "pref"),
        ("feedback", "avoid"),
        ("user", "user"),
    ]
    assert all(len(i["name"].rsplit("-", 1)[1]) == 8 for i in items)
    assert items[2]["description"] == "用户叫小明"


def test_traditional_chinese_requests_and_questions_are_skipped() -> None:
    items = run([
        user("幫我查一下pydantic文檔的Field用法 整理成markdown保存"),
        user("toolchain不用保留吧?"),
        user("这次先不要跑测试。"),
        user("为什么不要用 npm"),
    ])
    assert items == []


def test_chinese_relative_dates_use_the_turn_timestamp_or_today() -> None:
    items = run([
        user("明天上线支付功能。", "2026-03-02T08:00:00Z"),
        user("3天后交付给客户。", None),
    ])
    assert [i["description"] for i in items] == ["2026-03-03上线支付功能", "2026-12-02交付给客户"]


def test_alex_style_identity_and_preferences() -> None:
    items = run([user("名字叫 Alex，喜欢打篮球和乒乓球。"), user("我喜欢打篮球、乒乓球和排球。")])
    assert [(i["name"], i["type"], i["description"]) for i in items] == [
        ("user-alex", "user", "用户名字叫 Alex，喜欢打篮球和乒乓球"),
        ("pref-03720786", "user", "用户喜欢打篮球、乒乓球和排球"),
    ]


# ----------------------------------------------------------------------------- dates

@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("ship it tomorrow", "ship it 2026-11-26"),
        ("the freeze is next Friday", "the freeze is 2026-12-04"),
        ("demo on Friday", "demo on 2026-11-27"),
        ("we broke it yesterday", "we broke it 2026-11-24"),
        ("due in 3 days", "due 2026-11-28"),
        ("merged two weeks ago", "merged 2026-11-11"),
        ("every friday we sync", "every friday we sync"),
        ("never on a Saturday or Sunday", "never on a Saturday or Sunday"),
        ("Friday works for me", "Friday works for me"),
        ("the report is due Friday", "the report is due 2026-11-27"),
        ("明天上线", "2026-11-26上线"),
        ("下周五截止", "2026-12-04截止"),
        ("周五开会", "2026-11-27开会"),
        ("每周五开会", "每周五开会"),
        ("昨天坏了", "2026-11-24坏了"),
        ("next week", "the week of 2026-11-30"),
    ],
)
def test_relative_dates_become_absolute(text: str, expected: str) -> None:
    assert absolutize_dates(text, dt.date(2026, 11, 25)) == expected


def test_relative_date_in_a_feedback_body_is_absolute() -> None:
    [item] = run([user("From now on, don't merge anything into release after tomorrow's cut because QA needs it frozen.")])
    assert item["description"] == "Don't merge anything into release after 2026-11-26's cut"


# ----------------------------------------------------------------------------- the model interface

def test_unknown_task_and_missing_payload_answer_empty_text() -> None:
    model = OfflineModel()
    for prompt in ("no payload here", render_payload({"task": "summarise"}), "<input>[1]</input>",
                   "<input>{not json</input>"):
        c = model.complete("s", prompt, 1000)
        assert c == Completion(text="", stop_reason="end_turn", usage=c.usage, model="offline",
                               duration_ms=c.duration_ms)


def test_usage_is_rough_token_counts() -> None:
    prompt = render_payload({"task": "extract", "today": TODAY, "index": [], "turns": [user("Never use var.")]})
    c = OfflineModel().complete("abcd" * 10, prompt, 1000)
    assert c.usage.input_tokens == 10 + (len(prompt) + 3) // 4
    assert c.usage.output_tokens == (len(c.text) + 3) // 4
    assert c.usage.output_tokens > 0


def test_answer_longer_than_max_tokens_is_reported_truncated() -> None:
    payload = {"task": "extract", "today": TODAY, "index": [],
               "turns": [user("Never deploy on Fridays because the on-call team is thin.")]}
    full = answer(payload)
    c = OfflineModel().complete("s", render_payload(payload), 10)
    assert c.stop_reason == "max_tokens"
    assert c.text == full[:40]


def test_select_task_returns_known_names_only() -> None:
    candidates = [
        {"name": "prefers-tabs", "type": "user", "description": "User prefers tabs for indentation"},
        {"name": "ref-grafana", "type": "reference", "description": "Grafana dashboard for ingest latency"},
        {"name": "decision-postgres", "type": "project", "description": "Use Postgres for the event store"},
    ]
    c = OfflineModel().complete(
        "s", render_payload({"task": "select", "query": "where is the ingest dashboard?", "limit": 9,
                             "candidates": candidates}), 100)
    names = json.loads(c.text)
    assert names[0] == "ref-grafana"
    assert len(names) <= 5 and set(names) <= {c["name"] for c in candidates}


def test_clean_turn_keeps_what_the_person_typed() -> None:
    text = ("<ide_opened_file>The user opened x.md in the IDE.</ide_opened_file>\nvue的双向绑定我该怎么编写代码\n"
            "```js\nnever()\n```\n[tool: Read] /x\n- always use pnpm")
    assert clean_turn(text) == "vue的双向绑定我该怎么编写代码\nalways use pnpm"


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["user", "assistant"]), st.text(max_size=300)), max_size=6))
def test_any_text_gives_a_gate_valid_answer(pairs: list[tuple[str, str]]) -> None:
    prefixes = ["", "I prefer ", "Never ", "记住", "我喜欢", "We decided to ", "Remember that ", "不要"]
    turns = [{"role": r, "text": prefixes[len(t) % len(prefixes)] + t, "timestamp": None} for r, t in pairs]
    items = run(turns)
    assert len(items) <= MAX_RECORDS
    for item in items:
        assert "[REDACTED:" not in item["body"]
        assert tokens(item["description"]) or item["description"].strip()


def _cc_line(role: str, content: Any, ts: str, uid: str) -> str:
    return json.dumps({"type": role, "timestamp": ts, "sessionId": "s1", "uuid": uid,
                       "message": {"role": role, "content": content}}, ensure_ascii=False)


def test_hand_written_claude_code_session_through_the_real_parser() -> None:
    """A Claude Code JSONL session (tool calls, tool results, thinking, EN and ZH turns) goes
    through memory.transcripts and then the extractor, as the daemon's jobs do."""
    lines = [
        json.dumps({"type": "summary", "summary": "Payments work", "leafUuid": "x"}),
        _cc_line("user", "Remember that the payments runbook is at https://wiki.example.com/payments.",
                 "2026-03-02T09:00:00Z", "u1"),
        _cc_line("assistant", [{"type": "thinking", "thinking": "Never use the cache, always think."},
                               {"type": "text", "text": "Noted. I'll check the runbook."},
                               {"type": "tool_use", "id": "t1", "name": "Bash",
                                "input": {"command": "curl https://wiki.example.com/payments"}}],
                 "2026-03-02T09:00:05Z", "a1"),
        _cc_line("user", [{"type": "tool_result", "tool_use_id": "t1",
                           "content": "Always retry twice. Never page on-call before 9am."}],
                 "2026-03-02T09:00:06Z", "u2"),
        _cc_line("user", "No, don't retry failed refunds automatically because customers get charged twice.",
                 "2026-03-02T09:01:00Z", "u3"),
        _cc_line("user", "The refund freeze starts tomorrow.", "2026-03-02T09:02:00Z", "u4"),
        _cc_line("user", "我们决定把退款服务迁移到 Go，因为现在的 Python 版本太慢。", "2026-03-02T09:03:00Z", "u5"),
        _cc_line("user", "我是支付团队的后端工程师。", "2026-03-02T09:04:00Z", "u6"),
        _cc_line("assistant", "We agreed to keep the old refund API until the migration is done.",
                 "2026-03-02T09:05:00Z", "a2"),
        "not json at all",
    ]
    transcript = parse_transcript("\n".join(lines) + "\n")
    assert transcript.format == "claude-code"
    turns = [{"role": t.role, "text": t.text, "timestamp": t.timestamp} for t in transcript.turns]
    items = run(turns)
    assert [(i["name"], i["type"]) for i in items] == [
        ("ref-payments-runbook", "reference"),
        ("dont-retry-failed-refunds-automatically", "feedback"),
        ("deadline-refund-freeze-starts", "project"),
        ("decision-go", "project"),
        ("user-33a5417c", "user"),
        ("decision-keep-old-refund-api-until", "project"),
    ]
    got = by_name(items)
    assert got["deadline-refund-freeze-starts"]["description"] == "The refund freeze starts 2026-03-03"
    assert got["dont-retry-failed-refunds-automatically"]["body"].splitlines()[1] == (
        "**Why:** Customers get charged twice."
    )
    assert got["decision-go"]["description"] == "决定：把退款服务迁移到 Go"
    assert got["decision-go"]["body"].splitlines()[:2] == [
        "2026-03-02 决定：把退款服务迁移到 Go。", "**Why:** 现在的 Python 版本太慢。"]
    assert got["user-33a5417c"]["description"] == "用户是支付团队的后端工程师"


def test_the_demo_sample_session_yields_the_memories_a_person_would_keep() -> None:
    """The session ``dreamd demo`` ships (EN + 中文, tool calls, a pasted key), read by hand:
    every lasting fact below is in it, and nothing else is (the key, the tool output, "let's
    chat in Chinese"-style asides and thanks are not memories)."""
    sample = Path(__file__).resolve().parents[1] / "dreamd" / "data" / "sample_transcript.jsonl"
    if not sample.is_file():
        pytest.skip("demo sample not present")
    turns = [{"role": t.role, "text": t.text, "timestamp": t.timestamp}
             for t in parse_transcript(sample.read_bytes()).turns]
    items = run(turns)
    assert [(i["name"], i["type"]) for i in items] == [
        ("user-backend-engineer-payments-team-mostly", "user"),
        ("prefers-small-reviewable-commits-one-logical", "user"),
        ("decision-store-idempotency-keys-postgres-redis", "project"),
        ("dont-mock-database-tests", "feedback"),
        ("project-staging-database-read-only-weekends", "project"),
        ("never-schedule-migrations-saturday-sunday", "feedback"),
        ("ref-bugs-work-linear", "reference"),
        ("deadline-merge-freeze-q4-release-starts", "project"),
        ("feedback-42e361e2", "feedback"),
        ("always-make-check", "feedback"),
        ("decision-uv", "project"),
        ("avoid-print-logging", "feedback"),
        ("ref-ledger-api-grafana", "reference"),
        ("always-run-ruff-format-before-committing", "feedback"),
    ]
    got = by_name(items)
    assert got["dont-mock-database-tests"]["body"].splitlines()[:3] == [
        "Don't mock the database in these tests.",
        "Use the real Postgres from docker compose.",
        "**Why:** Last quarter the mocked tests passed while the real migration failed in prod.",
    ]
    assert got["never-schedule-migrations-saturday-sunday"]["body"].splitlines()[:2] == [
        "Never schedule migrations there on a Saturday or Sunday.",
        "**Why:** The staging database is read-only on weekends.",
    ]
    assert got["feedback-42e361e2"]["description"] == "用中文解释代码，但代码注释和提交信息保持英文"
    assert "sk-ant" not in json.dumps(items)


def test_a_correction_of_an_indexed_rule_is_kept_not_deduplicated() -> None:
    """ "Don't mock the DB" looks like the indexed "Mock the DB"; dropping it would lose the fix."""
    from dreamd.models.offline.extract.pipeline import extract

    index = [{"name": "mock-db", "type": "feedback", "description": "Mock the database in these tests"}]
    said = "Don't mock the database in these tests, because mocks hid a broken migration."
    turns = [{"role": "user", "text": said, "timestamp": "2026-11-29T10:00:00Z"}]
    out = extract({"task": "extract", "today": "2026-11-29", "index": index, "turns": turns})
    assert [(r["type"], r["description"]) for r in out] == [("feedback", "Don't mock the database in these tests")]
    assert out[0]["name"] != "mock-db"
    same = [{"role": "user", "text": "Never mock the database in these tests.", "timestamp": None}]
    index2 = [{"name": "never-mock", "type": "feedback", "description": "Never mock the database in these tests"}]
    assert extract({"task": "extract", "today": "2026-11-29", "index": index2, "turns": same}) == []


@pytest.mark.parametrize(
    ("text", "ref", "expected"),
    [
        ("ship it before xmas", dt.date(2026, 11, 20), "ship it before 2026-12-25"),
        ("freeze until New Year's Eve", dt.date(2026, 11, 20), "freeze until 2026-12-31"),
        ("docs due after Halloween", dt.date(2026, 11, 20), "docs due after 2027-10-31"),
        ("we close over Christmas", dt.date(2026, 11, 20), "we close over Christmas"),
        ("the week after next", dt.date(2026, 11, 20), "the week of 2026-11-30"),
        ("下下周交稿", dt.date(2026, 11, 20), "the week of 2026-11-30交稿"),
        ("元旦前搬完", dt.date(2026, 11, 20), "2026-12-31搬完"),
        ("圣诞节之后放假", dt.date(2026, 11, 20), "2026-12-25之后放假"),
        ("每年国庆都回老家", dt.date(2026, 11, 20), "每年国庆都回老家"),
    ],
)
def test_holidays_as_a_bound_and_the_week_after_next_are_dates(text: str, ref: dt.date, expected: str) -> None:
    assert absolutize_dates(text, ref) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("the patch is due a week from yesterday", "the patch is due 2026-11-26"),
        ("renewal lands three days from tomorrow", "renewal lands 2026-11-24"),
        ("a week from now", "2026-11-27"),
        ("the tiler comes on the 16th", "the tiler comes on 2026-12-16"),
        ("the recital is on the 7th of December", "the recital is on 2026-12-07"),
        ("the lab is on the 3rd floor", "the lab is on the 3rd floor"),
    ],
)
def test_offsets_from_a_resolved_date_and_ordinals_after_the(text: str, expected: str) -> None:
    assert absolutize_dates(text, dt.date(2026, 11, 20)) == expected


def test_third_person_keeps_the_verb_in_agreement() -> None:
    from dreamd.models.offline.text import third_person

    assert third_person("retired now (I was a pilot for 20 years)") == "retired now (they were a pilot for 20 years)"
    assert third_person("I am on the rota") == "they are on the rota"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # that weekday of that month, in Chinese
        ("验收定在十二月最后一个周四", "验收定在2026-12-31"),
        ("下个月第二个周三搬家", "2026-12-09搬家"),
        ("3 月的第一个星期一开学", "2027-03-01开学"),
        ("这个月最后一个礼拜天聚餐", "2026-11-29聚餐"),
        # a year said as 今年/明年/后年 is part of the date, not a word left before it
        ("明年 4 月 2 号答辩", "2027-04-02答辩"),
        ("后年 1 月 6 日到期", "2028-01-06到期"),
        ("今年 12 月 3 号交房", "2026-12-03交房"),
        ("版本号 2026 不是年份，12 月 3 号发", "版本号 2026 不是年份，2026-12-03发"),
    ],
)
def test_chinese_nth_weekday_and_relative_years(text: str, expected: str) -> None:
    assert absolutize_dates(text, dt.date(2026, 11, 20)) == expected


@pytest.mark.parametrize(
    ("text", "word"),
    [
        ("以后帮我整理会议纪要一律先写结论", "结论"),
        ("From now on help me keep the release notes in plain English.", "release notes"),
    ],
)
def test_help_asked_for_good_is_a_rule(text: str, word: str) -> None:
    got = run([user(text)])
    assert [r["type"] for r in got if word in r["description"]] == ["feedback"]


def test_help_asked_for_now_is_no_rule() -> None:
    assert run([user("帮我把这段代码格式化一下")]) == []


def test_a_correction_with_nothing_to_correct_leaves_no_record_of_its_marker() -> None:
    got = run([user("The retention window is 30 days."), user("No wait, we cut it to 14 in March.")])
    assert not any(r["description"].lower().startswith(("no wait", "wait")) for r in got)


@pytest.mark.parametrize(
    ("text", "word"),
    [
        ("对了我是做嵌入式的工程师，主要写 C", "嵌入式"),
        ("哦对了我女儿对芒果过敏", "芒果"),
    ],
)
def test_a_chinese_lead_in_without_its_comma_is_still_peeled(text: str, word: str) -> None:
    got = [r for r in run([user(text)]) if word in r["description"]]
    assert [r["type"] for r in got] == ["user"]
    assert not got[0]["description"].startswith(("对了", "哦对了"))


def test_a_space_between_chinese_clauses_separates_them_like_a_comma() -> None:
    assert sentences("我在苏州上班 做结构设计 周末带娃") == ["我在苏州上班，做结构设计，周末带娃"]
    # a space beside Latin words or numbers stays a space
    assert sentences("我们用 Postgres 15 跑 账单") == ["我们用 Postgres 15 跑 账单"]


def test_one_space_in_a_chinese_sentence_is_left_alone() -> None:
    # "…吐一点 正常吗": a single space before an ask or a laugh does not cut the sentence in two
    assert sentences("她每次吃完饭都打嗝 正常吗") == ["她每次吃完饭都打嗝 正常吗"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("the lease renewal is in a fortnight", "the lease renewal is 2026-12-04"),
        ("the move is next weekend", "the move is 2026-11-28"),
        ("the fair is this weekend", "the fair is 2026-11-21"),
        ("rent goes up on the 5th of next month", "rent goes up on 2026-12-05"),
        ("probation ends in three months", "probation ends 2027-02-20"),
        ("下周末搬家", "2026-11-28搬家"),
        ("下下周末回老家", "2026-12-05回老家"),
        ("两个月后交房", "2027-01-20交房"),
        ("半个月后复查", "2026-12-05复查"),
        ("下月 8 号发工资", "2026-12-08发工资"),
        ("每个周末都去爬山", "每个周末都去爬山"),  # every weekend: no date
    ],
)
def test_weekends_months_and_fortnights_are_dates(text: str, expected: str) -> None:
    assert absolutize_dates(text, dt.date(2026, 11, 20)) == expected


_HOSTILE_TURNS = (
    "a, " * 200,  # a comma list: every comma-led prefix of the sentence was once tried 2^n ways
    "on the shed, the loft, " * 60 + "KV is 2.4.1",
)


def test_hostile_comma_lists_finish_and_a_setting_after_commas_is_still_read() -> None:
    """A turn of many short comma-separated pieces must not hang the daemon's extraction (the
    setting rule "…, NAME is 1.2" once backtracked exponentially over the pieces). Run in a child
    with a generous limit: the old pattern never finished, so this is a hang guard, not a timing."""
    code = (
        "import json, sys\n"
        "from dreamd.models.offline.extract.pipeline import extract_from_turns\n"
        "for text in json.loads(sys.argv[1]):\n"
        "    extract_from_turns([{'role': 'user', 'text': text, 'timestamp': None}], today='2026-11-29')\n"
    )
    done = subprocess.run([sys.executable, "-c", code, json.dumps(list(_HOSTILE_TURNS))],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    items = run([user("On the kiln controller in the shed, the old one, FW is 2.0.7")])
    assert [(i["type"], i["description"]) for i in items] == [
        ("project", "On the kiln controller in the shed, the old one, FW is 2.0.7")
    ]


@pytest.mark.parametrize("text", [
    "The greenhouse refit is in 99999999999 days",
    "We repaint the barn in 99999999999 weeks",
    "The orchard lease renews in 120000 months",
    "We plant the hedge in 99999999999 fortnights",
    "温室翻新 99999999 个月后开工",
    "The kiln check is 99999999999 days from now",
])
def test_a_count_past_the_calendars_end_never_raises(text: str) -> None:
    """A relative date no calendar can hold is left as said: the extractor answers every
    payload, so "in 99999999999 days" once raised OverflowError and "120000 个月后" ValueError."""
    items = run([user(text)])
    assert all(i["description"] for i in items)
    assert run([user("The greenhouse refit is in 3 days")])[0]["description"] == "The greenhouse refit is 2026-11-28"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("the offsite is Wednesday the 16th", "the offsite is 2026-12-16"),
        ("code freeze starts thursday 10th", "code freeze starts 2026-12-10"),
        ("the audit lands on Friday, January 8", "the audit lands on 2027-01-08"),
        ("评审定在周二 15 号", "评审定在2026-12-15"),
        ("18号（周五）交付", "2026-12-18交付"),
        ("1月8日（周五）年会", "2027-01-08年会"),
        # no date near is both: the phrase stays as said, never two dates
        ("the retro is Tuesday the 16th", "the retro is Tuesday the 16th"),
        ("the demo is Friday, January 9", "the demo is Friday, January 9"),
    ],
)
def test_a_weekday_with_a_day_of_the_month_is_the_one_date_that_has_both(text: str, expected: str) -> None:
    assert absolutize_dates(text, dt.date(2026, 12, 7)) == expected  # a Monday


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("the cache node died on Thursday", "the cache node died on 2026-12-03"),
        ("the import broke on the 20th", "the import broke on 2026-11-20"),
        ("the rollout stalled on Sunday the 6th", "the rollout stalled on 2026-12-06"),
        ("服务周四挂了", "服务2026-12-03挂了"),
    ],
)
def test_a_past_event_resolves_backwards(text: str, expected: str) -> None:
    assert absolutize_dates(text, dt.date(2026, 12, 7), past=True) == expected


def test_a_record_telling_a_past_event_gets_the_last_weekday_not_the_next() -> None:
    items = run([user("The payments outage happened on Thursday; the postmortem is due next Monday.",
                      "2026-12-07T09:00:00Z")], today="2026-12-07")
    descriptions = " | ".join(i["description"] for i in items)
    assert "2026-12-03" in descriptions and "2026-12-10" not in descriptions
    assert "2026-12-14" in descriptions  # the plan after it still looks ahead


@pytest.mark.parametrize(
    "said",
    [
        "don't use mocks for the repository layer.",
        "use ruff, not flake8.",
        "avoid global state in the handlers.",
        "别用 var 声明变量。",
        "不要用 any 类型。",
    ],
)
def test_a_plain_imperative_about_the_work_is_a_rule(said: str) -> None:
    items = run([user(said)])
    assert [i["type"] for i in items] == ["feedback"]
    assert items[0]["description"].rstrip("。.") == said.rstrip("。.").capitalize()[:1] + said.rstrip("。.")[1:]


@pytest.mark.parametrize(
    "said",
    [
        "don't touch that file.",
        "don't rename it.",
        "use a smaller batch size here.",
        "这个函数别改。",
        "先别提交。",
        "别让我忘了交报告。",
        "take care of yourself.",
    ],
)
def test_a_plain_imperative_bound_to_the_thing_at_hand_or_the_listener_is_no_rule(said: str) -> None:
    assert run([user(said)]) == []


@pytest.mark.parametrize("said", ["never merge anything yourself.", "never run migrations yourself.", "never merge anything."])
def test_a_rule_about_the_assistant_doing_the_work_itself_is_kept(said: str) -> None:
    items = run([user(said)])
    assert [(i["type"], i["description"]) for i in items] == [("feedback", said.rstrip(".").capitalize())]


@pytest.mark.parametrize("said", ["本轮实验先把 dropout 固定成 0.3。", "这一轮先把 seed 设成 7。", "那批数据先把阈值定为 0.8。"])
def test_a_setting_for_this_run_only_is_no_record(said: str) -> None:
    assert run([user(said)]) == []


def test_what_the_team_uses_now_is_still_the_state_of_the_work() -> None:
    assert [i["type"] for i in run([user("我们现在用 Postgres 16。")])] == ["project"]


@pytest.mark.parametrize("said, rule", [
    ("responses go out as JSON:API documents, never bare arrays", "Responses go out as JSON:API documents, never bare arrays"),
    ("接口文档用 OpenAPI 3.1 写，别用 Word 文档。", "接口文档用 OpenAPI 3.1 写，别用 Word 文档"),
])
def test_a_way_of_working_said_from_the_other_side_too_is_one_rule(said: str, rule: str) -> None:
    """A don't after a statement of how the work is done, with no verb of its own ("…, never bare
    arrays") or a Chinese don't after a do, is the same rule said both ways: one feedback record,
    not a project statement and a fragment of a rule."""
    records = extract({"task": "extract", "today": "2026-11-20", "turns": [{"role": "user", "text": said}]})
    assert [(r["type"], r["description"]) for r in records] == [("feedback", rule)]


def test_a_never_with_a_verb_of_its_own_after_a_statement_is_a_second_rule() -> None:
    records = extract({"task": "extract", "today": "2026-11-20",
                       "turns": [{"role": "user", "text": "we use tabs in the Go code, never commit generated files"}]})
    assert [(r["type"], r["description"]) for r in records] == [
        ("project", "We use tabs in the Go code"), ("feedback", "Never commit generated files")]


def test_what_follows_a_request_for_now_in_one_sentence_is_about_that_task() -> None:
    """ "先…" opening a request to the assistant binds the sentence to the task at hand: the limit
    and the don't after it are for that run, not standing rules; the same don't said for good is."""
    def said(text: str) -> list[tuple[str, str]]:
        turns = [{"role": "user", "text": text}]
        return [(r["type"], r["description"]) for r in extract({"task": "extract", "today": "2026-11-20", "turns": turns})]

    assert said("先在测试环境把报表重算一下，只算 10 月 5 号到 7 号这三天，别动线上的表。") == []
    assert said("以后重算报表别动线上的表。") != []


@pytest.mark.parametrize(
    "text",
    [
        "never run helm rollback yourself.",
        "不要自己去合并发布分支。",
        "改完配置你别自己 kubectl apply，等我确认。",
    ],
)
def test_a_rule_about_who_does_the_work_is_kept(text: str) -> None:
    """The assistant doing the work itself ("… yourself", 自己 before the work it does) is a rule of the
    work, not advice to the listener about their own self."""
    out = extract({"today": "2026-12-01", "turns": [{"role": "user", "text": text, "timestamp": None}], "index": []})
    assert [r["type"] for r in out] == ["feedback"]


@pytest.mark.parametrize("text", ["别太累了，照顾好自己。", "don't be so hard on yourself."])
def test_the_listeners_own_self_is_still_no_rule(text: str) -> None:
    assert extract({"today": "2026-12-01", "turns": [{"role": "user", "text": text, "timestamp": None}], "index": []}) == []
