"""The supersession cue of ``dreamd.models.offline.compare.clauses`` is a prefilter, not a rule:
a clause it turns away is one none of the worded patterns would have matched."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dreamd.models.offline.compare import clauses as cl

FRAGMENTS = (
    "the api", "the staging db", "port 8080", "postgres 15", "Linear", "Jira", "we", "it", "is", "are", "has been",
    "was", "were", "got", "just", "now", "all", "over", "to", "onto", "from", "with", "by", "for", "in",
    "switched", "switching", "switch", "moved", "moving", "migrated", "migrating", "changed", "changing", "went",
    "gone", "upgraded", "upgrading", "relocated", "relocating", "instead of", "instead", "replaced", "replacing",
    "superseded", "no longer", "not", "n't", "never", "anymore", "any more", "uses", "use",
    "被", "让", "取代", "替代", "替换", "代替", "用", "了", "掉", "从", "由", "改成", "换成", "改为", "换为", "迁到",
    "迁移到了", "搬到", "切到", "切换到", "改到", "不再", "已经", "已", "都", "数据库", "端口", "我们",
)

texts = st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=9).flatmap(
    lambda parts: st.sampled_from([" ", ""]).map(lambda sep: sep.join(parts))
)


@settings(max_examples=600, deadline=None)
@given(texts)
def test_a_clause_any_worded_pattern_matches_has_the_cue(text: str) -> None:
    low = cl.normalize(text).lower()
    if any(pattern.search(low) for _, pattern in cl._PATTERNS):
        assert cl._PATTERN_CUE.search(low), text


@pytest.mark.parametrize(
    "clause",
    [
        "The API no longer uses port 8000; it moved to port 8443",
        "We switched the tracker from Jira to Linear",
        "Use pnpm instead of npm in the frontend repo",
        "Jenkins was replaced by GitHub Actions",
        "we are not on Heroku any more",
        "数据库从 MySQL 改成了 Postgres",
        "部署已迁到新机房",
        "不再用 Jenkins",
        "Jira 已经被 Linear 取代了",
        "用 pnpm 代替 npm",
        "The standup is at 9:30 on weekdays",
    ],
)
def test_the_cue_changes_no_clause_s_supersessions(clause: str, monkeypatch: pytest.MonkeyPatch) -> None:
    with_cue = cl._patterned(cl.normalize(clause))
    monkeypatch.setattr(cl, "_PATTERN_CUE", re.compile(""))
    assert cl._patterned(cl.normalize(clause)) == with_cue


def test_statements_are_memoised_but_each_caller_gets_its_own_list() -> None:
    first = cl.statements("The API no longer uses port 8000", "The API no longer uses port 8000.\n")
    assert first and first[0].kind == "no-longer"
    first.clear()
    assert cl.statements("The API no longer uses port 8000", "The API no longer uses port 8000.\n")


def test_the_one_search_for_either_cue_needs_no_ignorecase() -> None:
    """``_ANY_CUE`` reads lowercased text without ``re.I``: sound only while both cues' patterns
    are written in lowercase (an uppercase escape such as ``\\S`` would fail this too)."""
    assert cl._PATTERN_CUE.pattern == cl._PATTERN_CUE.pattern.lower()
    assert cl._CHANGE_CUE.pattern == cl._CHANGE_CUE.pattern.lower()


@pytest.mark.parametrize(
    ("description", "body"),
    [
        ("Deploys  no longer   use Helm", "Deploys no\nlonger use Helm.\n"),
        ("Standup", "**Note:**moved to 10:00 on Fridays.\n**Why:** the team asked.\n"),
        ("Metrics", "- metrics go to Prometheus now.\n"),
        ("The API listens on port 8000", "The API listens on port 8000, behind the proxy.\n"),
        ("部署", "部署已迁到新机房。\n"),
        ("Ｔhe ＡＰＩ ｎｏ ｌｏｎｇｅｒ uses port 8000", "Ｔhe ＡＰＩ ｎｏ ｌｏｎｇｅｒ uses port 8000.\n"),
    ],
)
def test_a_record_the_whole_text_cue_turns_away_states_nothing(
    description: str, body: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    got = cl.statements(description, body)
    cl._statements.cache_clear()
    monkeypatch.setattr(cl, "_may_state_a_change", lambda d, b: True)
    assert cl.statements(description, body) == got
    cl._statements.cache_clear()


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([*(f for f in FRAGMENTS if f.isascii()), ".", ";", "\n", "**Why:**", "- ", "  "]), min_size=1, max_size=12))
def test_the_whole_text_cue_never_hides_a_clause_s_statement(parts: list[str]) -> None:
    body = " ".join(parts)
    if not cl._may_state_a_change("", body):
        assert not [s for c in cl.fact_clauses("", body) + cl.line_clauses("") for s in cl.supersessions(c)]


ENGLISH = st.lists(
    st.sampled_from([
        "the", "API", "moved", "to", "port", "8080", "v2.3", "k8s", "on", "Dec", "15th", "2026-12-15", "at",
        "2pm", "10:30", "two", "PRs", "need", "approvals", "Dana", "owns", "https://x.example.com/a", "#infra",
        "`make test`", "a@b.io", "src/app.py", "don't", "never", "use", "mocks", "weekly", "Friday", "12 of May",
        ",", ".", ";", ":", "\n", "but", "instead", "of", "Postgres", "15", "no", "longer",
    ]),
    min_size=1, max_size=14,
).map(" ".join)


@settings(max_examples=150, deadline=None)
@given(ENGLISH)
def test_an_english_gist_is_the_same_without_the_chinese_patterns(text: str) -> None:
    from dreamd.models.offline.compare import paraphrase

    fast = paraphrase.gist.__wrapped__(text)
    original = paraphrase._chinese
    paraphrase._chinese = lambda t: True  # every Chinese pattern tried, as before the guard
    try:
        assert paraphrase.gist.__wrapped__(text) == fast
    finally:
        paraphrase._chinese = original


def test_real_record_files_have_the_same_gists_without_the_chinese_patterns(
    shared_data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dreamd.models.offline.compare import paraphrase

    texts = [p.read_text(encoding="utf-8", errors="replace")[:20_000]
             for p in sorted((shared_data / "memory_dirs").glob("*/*.md"))]
    assert texts
    fast = [paraphrase.gist.__wrapped__(t) for t in texts]
    monkeypatch.setattr(paraphrase, "_chinese", lambda t: True)
    assert [paraphrase.gist.__wrapped__(t) for t in texts] == fast
