"""The offline consolidation planner: real near-duplicates, generated sets, plan rules."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dreamd.models.offline.contradiction import statements_contradict
from dreamd.models.offline.model import OfflineModel
from dreamd.models.offline.plan.plan import plan
from memory.model.answer_gate import check_plan
from memory.model.llm import render_payload
from memory.store.records import parse_record, validate_fields

TODAY = "2026-11-29"


def rec(
    name: str,
    type_: str,
    description: str,
    body: str,
    day: int,
    *,
    importance: float = 0.5,
    expires: str | None = None,
) -> dict[str, Any]:
    stamp = f"2026-11-{day:02d}T10:00:00Z"
    return {
        "name": name, "type": type_, "description": description, "body": body,
        "created_at": stamp, "updated_at": stamp, "importance": importance, "expires": expires,
    }


def consolidate(records: list[dict[str, Any]], today: str = TODAY) -> list[dict[str, Any]]:
    """Plan through the model interface and check it with the real gate and our own rules."""
    payload = {"task": "consolidate", "today": today, "records": records, "recent": []}
    c = OfflineModel().complete("Consolidate.", "prose\n" + render_payload(payload), 32000)
    assert c.stop_reason == "end_turn"
    ops: list[dict[str, Any]] = json.loads(c.text)
    check_plan(c, candidates=[r["name"] for r in records])
    validate_plan(ops, records)
    shuffled = list(records)
    random.Random(7).shuffle(shuffled)
    assert plan({**payload, "records": shuffled}) == ops  # input order does not matter
    return ops


def validate_plan(ops: list[dict[str, Any]], records: list[dict[str, Any]]) -> None:
    """The contract rules, written out independently of memory.model.answer_gate."""
    by_name = {r["name"]: r for r in records}
    used: list[str] = []
    for op in ops:
        assert set(op) == {"source_names", "result"}
        assert op["source_names"] and all(n in by_name for n in op["source_names"])
        used.extend(op["source_names"])
        if op["result"] is not None:
            validate_fields(op["result"], where="result")
            assert op["result"]["name"] in op["source_names"]  # reuses a source's name
            assert {by_name[n]["type"] for n in op["source_names"]} == {op["result"]["type"]}
    assert len(used) == len(set(used))
    kept = set(by_name) - set(used)
    results = [op["result"]["name"] for op in ops if op["result"]]
    assert len(results) == len(set(results)) and not set(results) & kept


def load_dir(path: Path, stamps: dict[str, int]) -> list[dict[str, Any]]:
    out = []
    for f in sorted(path.glob("*.md")):
        if f.name == "MEMORY.md":
            continue
        r = parse_record(f.read_bytes(), where=str(f), stem=f.stem)
        out.append(rec(r.name, r.type, r.description, r.body, stamps.get(r.name, 1),
                       importance=r.importance, expires=r.expires))
    return out


ZBIGBEAR = "learn-claude-code__ZBIGBEAR__my-learn-claude-code__.memory"


# ----------------------------------------------------------------------------- real directories

def test_alex_near_duplicates_merge_into_the_newer_wording(shared_data: Path) -> None:
    records = load_dir(shared_data / "memory_dirs" / ZBIGBEAR, {"alex_basketball": 1, "alex_volleyball": 2})
    assert [r["name"] for r in records] == ["alex_basketball", "alex_volleyball"]
    assert consolidate(records) == [{
        "source_names": ["alex_volleyball", "alex_basketball"],
        "result": {
            "name": "alex_volleyball",
            "type": "user",
            "description": "用户 Alex 的运动爱好",
            "body": "名字叫 Alex，喜欢打篮球、乒乓球和排球。\n",
        },
    }]


def test_alex_when_the_older_record_knows_more_its_fact_is_kept(shared_data: Path) -> None:
    """Basketball is newer here, but the volleyball record's 排球 is a distinct fact: kept."""
    records = load_dir(shared_data / "memory_dirs" / ZBIGBEAR, {"alex_basketball": 3, "alex_volleyball": 2})
    [op] = consolidate(records)
    assert op["source_names"] == ["alex_basketball", "alex_volleyball"]
    assert op["result"] == {
        "name": "alex_basketball",
        "type": "user",
        "description": "用户 Alex 的基本信息",
        "body": "名字叫 Alex，喜欢打篮球和乒乓球。\n名字叫 Alex，喜欢打篮球、乒乓球和排球。\n",
    }


def test_distinct_real_memories_are_left_alone(shared_data: Path) -> None:
    """17 hand-written Claude Code memories on different topics: nothing to merge or drop."""
    path = shared_data / "memory_dirs" / "4444J99__application-pipeline__.claude-memory"
    names = sorted(f.stem for f in path.glob("*.md") if f.name != "MEMORY.md")
    records = load_dir(path, {n.replace("_", "_"): i + 1 for i, n in enumerate(names)})
    assert len(records) == 17
    assert consolidate(records) == []


# ----------------------------------------------------------------------------- generated sets

def generated_set() -> list[dict[str, Any]]:
    return [
        # near-duplicates (paraphrase): merged into the newest wording
        rec("dark-mode", "user", "User prefers dark mode in the editor",
            "User prefers dark mode in the editor.\n", 3),
        rec("dark-mode-terminals", "user", "User prefers dark mode in the editor and terminals",
            "User prefers dark mode in the editor and in terminals.\n", 9),
        # duplicates with distinct facts and reasons: union
        rec("lint-before-commit", "feedback", "Run the linters before committing",
            "Run the linters before committing.\n**Why:** CI rejects lint errors.\n"
            "**How to apply:** run `make lint` first.\n", 2),
        rec("lint-before-push", "feedback", "Run the linters before committing and pushing",
            "Run the linters before committing and pushing.\nRun the type checker too.\n"
            "**Why:** keeps the main branch green.\n**How to apply:** run `make check` first.\n", 8),
        # conflicting wording without an explicit newer statement: both stay, untouched
        rec("prefers-tabs", "user", "User prefers tabs for indentation",
            "User prefers tabs for indentation.\n", 4),
        rec("prefers-spaces", "user", "User prefers spaces for indentation",
            "User prefers spaces for indentation.\n", 10),
        rec("mock-payments", "feedback", "Use mocks for the payment gateway in tests",
            "Use mocks for the payment gateway in tests.\n", 11),
        rec("no-mock-payments", "feedback", "Don't use mocks for the payment gateway in tests",
            "Don't use mocks for the payment gateway in tests.\n**Why:** a mock hid a broken refund.\n", 5),
        rec("freeze-date", "project", "The release freeze is 2026-12-04",
            "The release freeze is 2026-12-04.\n", 6),
        # an explicit newer statement: the newer record absorbs the older, kept as history
        rec("freeze-date-moved", "project", "The release freeze moved to 2026-12-11",
            "The release freeze moved to 2026-12-11.\n", 12),
        # two true facts about one subject: never a contradiction
        rec("staging-weekends", "project", "The staging database is read-only on weekends",
            "The staging database is read-only on weekends.\n", 3),
        rec("staging-version", "project", "The staging database is Postgres 15",
            "The staging database is Postgres 15.\n", 8),
        # expiry
        rec("old-incident", "project", "Incident war room for the ingest outage",
            "Incident war room for the ingest outage.\n", 1, expires="2026-11-15"),
        rec("key-incident", "project", "Postmortem of the billing outage",
            "Postmortem of the billing outage.\n", 1, importance=0.9, expires="2026-11-15"),
        rec("future-trip", "project", "Offsite in Lisbon", "Offsite in Lisbon.\n", 1, expires="2026-12-30"),
        # unrelated, and same words in a different type: untouched
        rec("ref-grafana", "reference", "Grafana dashboard for ingest latency",
            "https://grafana.example.com/d/ingest\n", 7),
        rec("user-role", "user", "User is a data scientist", "User is a data scientist.\n", 7),
        rec("fb-dark-mode", "feedback", "User prefers dark mode in the editor",
            "Show screenshots in dark mode.\n", 7),
    ]


def test_generated_set_plan_is_exactly_right() -> None:
    """Changed by issue 10: tabs/spaces and mock/no-mock are no longer resolved toward the
    newer record (no explicit newer statement), the freeze date is replaced only because the
    newer record says it moved (and the old date stays as history), and merges keep every
    clause of the older record."""
    ops = consolidate(generated_set())
    assert ops == [
        {"source_names": ["old-incident"], "result": None},
        {"source_names": ["dark-mode-terminals", "dark-mode"], "result": {
            "name": "dark-mode-terminals", "type": "user",
            "description": "User prefers dark mode in the editor and terminals",
            "body": "User prefers dark mode in the editor and in terminals.\n"}},
        {"source_names": ["freeze-date-moved", "freeze-date"], "result": {
            "name": "freeze-date-moved", "type": "project",
            "description": "The release freeze moved to 2026-12-11",
            "body": "The release freeze moved to 2026-12-11.\n**Previously:** The release freeze is 2026-12-04.\n"}},
        {"source_names": ["lint-before-push", "lint-before-commit"], "result": {
            "name": "lint-before-push", "type": "feedback",
            "description": "Run the linters before committing and pushing",
            "body": "Run the linters before committing and pushing.\nRun the type checker too.\n"
                    "**Why:** keeps the main branch green. CI rejects lint errors.\n"
                    "**How to apply:** run `make check` first. run `make lint` first.\n"}},
    ]


def test_nothing_else_is_touched() -> None:
    records = generated_set()
    ops = consolidate(records)
    named = {n for op in ops for n in op["source_names"]}
    assert sorted(r["name"] for r in records if r["name"] not in named) == [
        "fb-dark-mode", "future-trip", "key-incident", "mock-payments",
        "no-mock-payments", "prefers-spaces", "prefers-tabs", "ref-grafana", "staging-version",
        "staging-weekends", "user-role",
    ]


def test_expiry_is_relative_to_the_payload_today() -> None:
    records = [rec("trip", "project", "Offsite in Lisbon", "Offsite in Lisbon.\n", 1, expires="2026-12-30")]
    assert consolidate(records, today="2026-12-30") == []
    assert consolidate(records, today="2026-12-31") == [{"source_names": ["trip"], "result": None}]
    records[0]["expires"] = "not a date"
    assert consolidate(records, today="2027-06-01") == []


def test_groups_compare_with_the_newest_record_only_so_they_do_not_chain() -> None:
    records = [
        rec("a", "project", "alpha beta gamma delta", "alpha beta gamma delta\n", 3),
        rec("b", "project", "alpha beta gamma delta epsilon zeta", "alpha beta gamma delta epsilon zeta\n", 2),
        rec("c", "project", "gamma delta epsilon zeta eta theta", "gamma delta epsilon zeta eta theta\n", 1),
    ]
    ops = consolidate(records)
    assert [op["source_names"] for op in ops] == [["a", "b"]]
    assert ops[0]["result"]["body"] == "alpha beta gamma delta\nalpha beta gamma delta epsilon zeta\n"


@pytest.mark.parametrize(
    ("x", "y", "expected"),
    [
        ("User prefers tabs for indentation", "User prefers spaces for indentation", True),
        ("User prefers tabs over spaces", "User prefers spaces over tabs", True),
        ("Always use pnpm", "Never use pnpm", True),
        ("Use pnpm instead of npm", "Use npm", True),
        ("The API docs are at https://a.example.com", "The API docs are at https://b.example.com", True),
        ("Bugs are tracked in Linear", "Bugs are tracked in Jira", True),
        ("用户喜欢用中文回复", "用户喜欢用英文回复", True),
        ("不要用 mock 测试数据库", "用 mock 测试数据库", True),
        ("Always run tests before committing", "Always run linters before committing", False),
        ("Decision: use Postgres for the event store", "Decision: deploy on Fridays only", False),
        ("User prefers dark mode", "User is a data scientist", False),
        ("Don't use mocks in integration tests", "Use mocks in unit tests", False),
    ],
)
def test_contradiction_detection(x: str, y: str, expected: bool) -> None:
    assert statements_contradict(x, y) is expected
    assert statements_contradict(y, x) is expected


def test_large_generated_set_merges_every_paraphrase_and_loses_no_fact() -> None:
    """40 topics with their own vocabulary; 15 get a paraphrase (newer, one word added), 5
    get a second record with an extra fact line. Each pair must be one op with the newer
    name, no op may mix topics, and every topic's facts survive somewhere."""
    rng = random.Random(2026)
    records: list[dict[str, Any]] = []
    words = [f"w{i:03d}" for i in range(400)]
    rng.shuffle(words)
    expect_pairs: dict[str, str] = {}
    facts: dict[str, list[str]] = {}
    for t in range(40):
        vocab = words[t * 10 : t * 10 + 10]
        type_ = ("user", "feedback", "project", "reference")[t % 4]
        line = " ".join(vocab[:5])
        name = f"topic-{t}"
        records.append(rec(name, type_, f"topic {vocab[0]} {vocab[1]} {vocab[2]}", line + "\n", 1 + t % 9))
        facts[name] = [line]
        if t < 15:
            newer = f"topic-{t}-again"
            records.append(rec(newer, type_, f"topic {vocab[0]} {vocab[1]} {vocab[2]} {vocab[5]}",
                               f"{line} {vocab[5]}\n", 20))
            expect_pairs[newer] = name
            facts[newer] = [f"{line} {vocab[5]}"]
        elif t < 20:
            newer = f"topic-{t}-more"
            extra = " ".join(vocab[5:9])
            records.append(rec(newer, type_, f"topic {vocab[0]} {vocab[1]} {vocab[2]}",
                               f"{line}\n{extra}\n", 21))
            expect_pairs[newer] = name
            facts[newer] = [line, extra]
    ops = consolidate(records)
    got = {op["source_names"][0]: op["source_names"][1:] for op in ops}
    assert got == {newer: [older] for newer, older in expect_pairs.items()}
    surviving = {r["name"]: r["body"] for r in records if r["name"] not in {n for op in ops for n in op["source_names"]}}
    surviving.update({op["result"]["name"]: op["result"]["body"] for op in ops})
    all_text = "\n".join(surviving.values())
    for name, lines in facts.items():
        for line in lines:
            assert set(line.split()) <= set(all_text.split()), (name, line)


def test_unusable_records_in_the_payload_are_ignored() -> None:
    payload = {"task": "consolidate", "today": TODAY, "records": [
        "not an object",
        {"name": 3, "type": "user"},
        rec("only", "user", "User is a data scientist", "User is a data scientist.\n", 1),
    ]}
    assert plan(payload) == []
    assert plan({"task": "consolidate"}) == []


def test_results_stay_valid_records_even_from_odd_inputs() -> None:
    """Records no valid result could be made of (a description over the cap, a name that is
    not a slug, an unknown type) are left alone; the rest still merge."""
    long_desc = "User prefers dark mode " + "very " * 300 + "much"
    records = [
        rec("dark-a", "user", long_desc, "User prefers dark mode.\n", 2),
        rec("dark-b", "user", long_desc, "", 3),
        rec("Not A Slug", "user", "User prefers dark mode", "User prefers dark mode.\n", 4),
        rec("odd-type", "opinion", "User prefers dark mode", "User prefers dark mode.\n", 5),
        rec("dark-c", "user", "User prefers dark mode", "", 6),  # no body: the description stands in
        rec("dark-d", "user", "Dark mode", "User prefers dark mode in every app.\n", 1),
    ]
    ops = consolidate(records)
    assert ops == [{"source_names": ["dark-c", "dark-d"], "result": {
        "name": "dark-c", "type": "user", "description": "User prefers dark mode",
        "body": "User prefers dark mode\nUser prefers dark mode in every app.\n"}}]


_WORDS = ["tabs", "spaces", "never", "use", "pnpm", "npm", "deploy", "main", "is", "at", "docs", "不要", "喜欢",
          "篮球", "Alex", "the", "release", "freeze", "2026-12-04", "2026-12-11", ":", "dark", "light", "mode"]


@settings(max_examples=120, deadline=None)
@given(st.lists(
    st.tuples(
        st.sampled_from(["user", "feedback", "project", "reference"]),
        st.lists(st.sampled_from(_WORDS), min_size=1, max_size=7),
        st.lists(st.sampled_from(_WORDS), min_size=0, max_size=9),
        st.integers(min_value=1, max_value=28),
        st.sampled_from([None, "2026-11-01", "2026-12-31"]),
        st.sampled_from([0.5, 0.9]),
    ),
    max_size=12,
))
def test_any_record_set_gives_a_gate_valid_plan(
    items: list[tuple[str, list[str], list[str], int, str | None, float]],
) -> None:
    records = [
        rec(f"r{i}", t, " ".join(desc), " ".join(body) + "\n" if body else "", day,
            importance=imp, expires=exp)
        for i, (t, desc, body, day, exp, imp) in enumerate(items)
    ]
    ops = consolidate(records)
    expired = {r["name"] for r in records if r["expires"] == "2026-11-01" and r["importance"] < 0.8}
    assert {op["source_names"][0] for op in ops if op["result"] is None} == expired


def test_extracted_records_from_two_sessions_consolidate_cleanly() -> None:
    """The extractor's own output, a week apart: a paraphrased rule merges without stacking
    placeholder reasons, and a changed preference replaces the old one."""
    from dreamd.models.offline.extract.pipeline import extract

    def session(day: int, *texts: str) -> list[dict[str, str]]:
        turns = [{"role": "user", "text": t, "timestamp": f"2026-11-{day:02d}T09:00:00Z"} for t in texts]
        return extract({"task": "extract", "today": TODAY, "index": [], "turns": turns})

    first = session(10, "Never commit directly to main.", "I prefer tabs over spaces.")
    second = session(17, "Never commit directly to the main branch.", "I prefer spaces over tabs.",
                     "The API docs live at https://docs.example.com/api.")
    records = [rec(r["name"], r["type"], r["description"], r["body"], day)
               for day, batch in ((10, first), (17, second)) for r in batch]
    assert [r["name"] for r in records] == [
        "never-commit-directly-main", "prefers-tabs-spaces", "never-commit-directly-main-branch",
        "prefers-spaces-tabs", "ref-api-docs",
    ]
    ops = consolidate(records)
    assert [(op["source_names"], op["result"]["name"]) for op in ops] == [
        (["never-commit-directly-main-branch", "never-commit-directly-main"], "never-commit-directly-main-branch"),
        (["prefers-spaces-tabs", "prefers-tabs-spaces"], "prefers-spaces-tabs"),
    ]
    assert ops[0]["result"]["body"] == (
        "Never commit directly to the main branch.\n"
        "**Why:** the user gave this as explicit feedback on 2026-11-17; no reason was stated.\n"
        "**How to apply:** treat this as a standing rule: check for it before acting and do not do "
        "it unless the user explicitly asks.\n"
    )
    assert ops[1]["result"]["description"] == "User prefers spaces over tabs"


def test_a_statement_in_the_description_counts_too() -> None:
    from dreamd.models.offline.compare.clauses import supersedes

    newer = ("Standup moved to 10:00", "The team standup is at 10:00 on weekdays.\n")
    assert supersedes(newer, ("Standup at 9:30", "The team standup is at 9:30 on weekdays.\n"))
    assert not supersedes(("Standup at 10:00", newer[1]), ("Standup at 9:30", "The team standup is at 9:30 on weekdays.\n"))


@pytest.mark.parametrize(
    ("older", "newer", "expected"),
    [
        ("The staging database is hosted in us-east-1.", "The staging database moved to eu-west-1.", True),
        ("The staging database is read-only on weekends.", "The staging database moved to eu-west-1.", False),
        ("The staging database runs Postgres 14.", "The staging database moved to eu-west-1.", False),
        ("The release freeze is 2026-12-04.", "The release freeze moved to 2026-12-11.", True),
        ("The CI pipeline runs on Jenkins.", "We switched the CI pipeline from Jenkins to Buildkite.", True),
        ("Jenkins admin is Bob.", "We switched the CI pipeline from Jenkins to Buildkite.", False),
        ("Use npm to install packages in the web app.", "Use pnpm instead of npm in the web app.", True),
        ("We deploy the mobile backend on Fridays.", "We no longer deploy the mobile backend on Fridays.", True),
        ("We deploy the mobile backend on Fridays. Kim approves each deploy.",
         "We no longer deploy the mobile backend on Fridays.", False),  # one more, unrelated fact
        ("User sessions are stored in Redis.", "User sessions are not stored in Redis anymore.", True),
        ("The staging database is read-only on weekends.", "The staging database is Postgres 15.", False),
        ("测试库在老机房的 db-07 上。", "测试库已迁到新机房的 db-21。", True),
        ("测试库周末只读。", "测试库已迁到新机房。", False),
        ("测试库是 MySQL 8。", "测试库已迁到新机房。", False),
        ("周会定在每周四上午十点。", "周会改成每周三下午两点。", True),
        ("移动端在周末发布新版本。", "移动端不再在周末发布新版本。", True),
        ("我们的 CI 用 GitLab Runner。", "我们的 CI 从 GitLab Runner 换成了 GitHub Actions。", True),
        # the general test: a change word, the older wording kept, a value of the same kind replaced
        ("Standup is at 9:30.", "Standup is now at 10:00.", True),
        ("Backups run on Sundays.", "Backups run on Saturdays from now on.", True),
        ("Code freeze starts 2026-12-10.", "Code freeze was pushed to 2026-12-14.", True),
        ("The team chats on Slack.", "The team now chats on Discord instead of Slack.", True),
        ("The team uses Jira for tickets.", "We replaced Jira with Linear for tickets.", True),
        ("Metrics go to Datadog.", "We dropped Datadog; metrics go to Prometheus now.", True),
        ("The user drives to work.", "The user stopped driving to work; they cycle now.", True),
        ("周会在周一上午。", "周会现在改到周二下午了。", True),
        ("测试环境用 MySQL。", "测试环境现在改用 PostgreSQL 了。", True),
        ("预算上限是每月五万。", "预算上限调整为每月八万。", True),
        ("每天早上跑步。", "用户现在不跑步了，改成游泳。", True),
        ("文档放在 Confluence。", "文档不再放 Confluence，统一放到语雀。", True),
        ("The app is hosted on Heroku.", "We're not using Heroku anymore; everything runs on Fly.io.", True),
        ("Use yarn in the frontend repo.", "Use pnpm in the frontend repo from now on.", True),
        ("The on-call phone number is 555-0100.", "The on-call number is now 555-0199.", True),
        ("我们用 Jenkins 做 CI。", "我们不再用 Jenkins 了，改用 GitHub Actions。", True),
        ("项目经理是小李。", "项目经理换成了小王。", True),
        ("上线时间定在 12 月 15 日。", "上线时间推迟到 12 月 20 日。", True),
        ("前端用 yarn 装依赖。", "前端以后统一用 pnpm 装依赖。", True),
        ("The user lives in Berlin.", "The user moved to Munich.", True),
        ("用户住在北京。", "用户已经搬到上海了。", True),
        ("The user likes Berlin.", "The user moved to Munich.", False),
        ("用户喜欢北京。", "用户已经搬到上海了。", False),
        ("The team uses Jira for tickets.", "Jira has been replaced by Linear for tickets.", True),
        ("The CI pipeline runs on Jenkins.", "We switched the CI pipeline to Buildkite from Jenkins.", True),
        ("We deploy the mobile backend on Fridays.", "No more Friday deploys for the mobile backend.", True),
        ("我们用 Jenkins 做 CI。", "我们的 CI 不用 Jenkins 了。", True),
        ("我们的 CI 用 GitLab。", "我们的 CI 工具 GitLab 已经被 GitHub Actions 取代了。", True),
        ("前端用 npm 装依赖。", "前端用 pnpm 代替 npm 装依赖。", True),
        ("The design review is on Tuesdays.", "The design review is now on Thursdays (it used to be Tuesdays).", True),
        ("设计评审在周二。", "设计评审现在改到周四（原来是周二）。", True),
        ("The app is hosted on Heroku.", "We moved off Heroku last month.", True),
        # a Chinese "sent/pushed to" states a destination, which "改到" replaces
        ("构建通知推送到企业微信的「前端」群。", "构建通知已经改到 Slack 的 #web-builds 频道。", True),
        ("构建通知推送到企业微信的「前端」群。", "周报改到周五下午发。", False),
        # a change word alone is not enough: another kind of value, an added fact, "also"
        ("The staging database is read-only on weekends.", "The staging database now runs Postgres 16.", False),
        ("The team chats on Slack.", "The team now also uses Zoom for calls.", False),
        ("Standup is at 9:30.", "Standup now includes the QA team.", False),
        ("The service has a 99.9% SLO.", "The service now has 3 replicas.", False),
        ("The team standup is in room 4.", "The team standup is now at 10:00.", False),
        ("The user drinks coffee in the morning.", "The user stopped drinking coffee in the evening.", False),
        ("用户住在北京。", "用户现在在学日语。", False),
        ("测试库周末只读。", "测试库改成 PostgreSQL 了。", False),
        ("The weekly sync is on Tuesday.", "The weekly sync now has a shared agenda doc.", False),
        ("Alice is the PM for Atlas.", "Bob is now the tech lead for Atlas.", False),
        ("The launch deadline is 2026-12-15.", "The beta deadline moved to 2026-12-01.", False),
        ("项目经理是小李。", "测试负责人换成了小王。", False),
        ("The billing service runs on Heroku.", "Staging no longer uses Heroku.", False),
        ("We deploy the mobile backend on Fridays.", "No more meetings on Fridays.", False),
        ("每个 PR 不超过 400 行改动。", "每个 PR 不超过 300 行改动。", False),  # 改动 is a diff, not a change word
        ("变量名用英文。", "变量名用中文。", False),
        ("我们用 Jenkins 做 CI。", "小王不再负责 Jenkins 了。", False),
        # a worded old value of a named subject: not a clause holding that value for another one
        ("Start the marlin proxy on port 9421 before running tests.", "The kestrel worker no longer uses port 9421.", False),
        ("The kestrel worker listens on port 9421.", "The kestrel worker no longer uses port 9421.", True),
        # the same statement twice replaces nothing
        ("User sessions are not stored in Redis anymore.", "User sessions are not stored in Redis anymore.", False),
    ],
)
def test_only_an_explicit_newer_statement_supersedes(older: str, newer: str, expected: bool) -> None:
    from dreamd.models.offline.compare.clauses import supersedes

    assert supersedes(("d", newer), ("d", older)) is expected
    if older != newer:
        assert supersedes(("d", older), ("d", newer)) is False  # never the other way round


def test_a_supersession_is_a_merge_that_keeps_the_replaced_value_as_history() -> None:
    """The newer record absorbs the older (convention of benchmarks/quality/README.md): its
    own text first, then what the older said that it does not, on a **Previously:** line (in
    Chinese **此前：**); a chain lands in the newest record; nothing is dropped."""
    records = [
        rec("standup-930", "project", "Standup at 9:30", "The team standup is at 9:30.\n**Why:** the US team joins.\n", 1),
        rec("standup-1000", "project", "Standup moved to 10:00", "The team standup moved to 10:00.\n", 5),
        rec("standup-1030", "project", "Standup now at 10:30", "The team standup is now at 10:30.\n", 9),
        rec("zh-weekly", "project", "周会在周一", "周会在周一上午。\n", 2),
        rec("zh-weekly-new", "project", "周会改到周二", "周会现在改到周二下午了。\n", 6),
        rec("ci-jenkins", "reference", "CI runs on Jenkins", "The CI pipeline runs on Jenkins.\n", 2),
        rec("ci-buildkite", "project", "CI moved to Buildkite", "We switched the CI pipeline from Jenkins to Buildkite.\n", 6),
    ]
    ops = consolidate(records)
    assert ops == [
        {"source_names": ["standup-1030", "standup-1000", "standup-930"], "result": {
            "name": "standup-1030", "type": "project", "description": "Standup now at 10:30",
            "body": "The team standup is now at 10:30.\n"
                    "**Previously:** The team standup moved to 10:00. The team standup is at 9:30. "
                    "Why: the US team joins.\n"}},
        {"source_names": ["zh-weekly-new", "zh-weekly"], "result": {
            "name": "zh-weekly-new", "type": "project", "description": "周会改到周二",
            "body": "周会现在改到周二下午了。\n**此前：** 周会在周一上午。\n"}},
    ]  # a supersession across types (ci-*) is left alone: a result keeps one type


@pytest.mark.parametrize(
    ("clause", "said", "expected"),
    [
        ("User prefers dark mode in the editor.", "User prefers dark mode in the editor and in terminals.", True),
        ("Never commit to main.", "Commit to main.", False),
        ("User prefers tabs over spaces.", "User prefers spaces over tabs.", False),
        ("The staging database is Postgres 15.", "The staging database is Postgres 16.", False),
        ("喜欢打篮球和乒乓球", "喜欢打篮球、乒乓球和排球", True),
        ("周五下午不上线", "周五下午上线", False),
    ],
)
def test_a_clause_is_still_said_only_with_every_word_in_order(clause: str, said: str, expected: bool) -> None:
    from dreamd.models.offline.compare.clauses import clause_units, said_by

    assert said_by(clause, [clause_units(said)]) is expected


def test_a_partly_superseded_record_keeps_its_other_facts_current() -> None:
    """Only the clause the newer statement replaces goes to history; the older record's other
    fact joins the result as a current fact. Only the general test (the older wording kept,
    one value replaced) may single out one clause of a longer record: "runs on" and "uses"
    are one wording, "deploys with" another."""
    records = [
        rec("standup", "project", "Standup at 9:30", "Standup is at 9:30. The standup link is pinned in #team.\n", 1),
        rec("standup-new", "project", "Standup now at 10:00", "Standup is now at 10:00.\n", 5),
        rec("ci", "project", "CI and its owner", "The CI pipeline runs on Jenkins. Kim owns the pipeline.\n", 1),
        rec("ci-new", "project", "Buildkite instead of Jenkins", "The CI pipeline uses Buildkite instead of Jenkins.\n", 5),
        rec("cd", "project", "CD and its owner", "The CD pipeline deploys with Argo. Lee owns the pipeline.\n", 1),
        rec("cd-new", "project", "Spinnaker instead of Argo", "The CD pipeline uses Spinnaker instead of Argo.\n", 5),
    ]
    assert consolidate(records) == [
        {"source_names": ["ci-new", "ci"], "result": {
            "name": "ci-new", "type": "project", "description": "Buildkite instead of Jenkins",
            "body": "The CI pipeline uses Buildkite instead of Jenkins.\nKim owns the pipeline.\n"
                    "**Previously:** The CI pipeline runs on Jenkins.\n"}},
        {"source_names": ["standup-new", "standup"], "result": {
            "name": "standup-new", "type": "project", "description": "Standup now at 10:00",
            "body": "Standup is now at 10:00.\nThe standup link is pinned in #team.\n"
                    "**Previously:** Standup is at 9:30.\n"}},
    ]


def test_history_holds_only_what_an_explicit_newer_statement_replaced() -> None:
    from dreamd.models.offline.compare.clauses import unexplained_history

    sources = [
        ("2026-11-05T10:00:00Z", "Standup now at 10:00", "Standup is now at 10:00.\n"),
        ("2026-11-01T10:00:00Z", "Standup", "Standup is at 9:30. The standup link is pinned in #team.\n**Why:** the US team joins.\n"),
    ]
    ok = "Standup is now at 10:00.\nThe standup link is pinned in #team.\n**Previously:** Standup is at 9:30.\n"
    assert unexplained_history(("d", ok), sources) == []
    demoted = "Standup is now at 10:00.\n**Previously:** Standup is at 9:30. The standup link is pinned in #team.\n"
    assert unexplained_history(("d", demoted), sources) == ["The standup link is pinned in #team."]
    # a partly superseded record keeps its reasons current: they explain the facts still held
    assert unexplained_history(("d", ok + "**Previously:** Why: the US team joins.\n"), sources) == [
        "Why: the US team joins."]
    # the older record is not replaced by a record older than itself
    assert unexplained_history(("d", ok), [(s, d, b) for (_, d, b), s in zip(sources, ["1", "2"], strict=True)]) == [
        "Standup is at 9:30."]


def test_duplicate_detection_meets_derived_forms_of_a_word() -> None:
    """Dedup compares the one tokenizer's terms: "deploy" and "deployment" are one term."""
    from dreamd.models.offline.text import jaccard, tokens

    a, b = tokens("Deployment to staging needs the VPN"), tokens("deploying to staging needs the VPN")
    assert a == b and jaccard(a, b) == 1.0
