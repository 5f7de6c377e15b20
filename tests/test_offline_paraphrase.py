"""Paraphrase by gist: one fact in other words merges, two facts that look alike never do."""

from __future__ import annotations

import pytest

from dreamd.models.offline.compare.paraphrase import gist, same_fact, value_kind
from dreamd.models.offline.plan.plan import plan


def _same(x: str, y: str) -> bool:
    verdict = same_fact(gist(x), gist(y))
    assert same_fact(gist(y), gist(x)) is verdict  # symmetric
    return verdict


@pytest.mark.parametrize(
    ("x", "y"),
    [
        # synonyms and stems
        ("Keep answers short.", "Keep replies brief and skip the intro."),
        ("Always run the test suite before pushing.", "Run all tests prior to every push."),
        ("The user is allergic to peanuts.", "User has a peanut allergy."),
        ("Never push directly to the release branch.", "Don't push straight to the release branch."),
        # restructured, the same names and values
        ("Maria is the tech lead for the mobile app.", "The mobile app's tech lead is Maria."),
        ("The user's daughter is named Mia.", "Mia is the user's daughter."),
        ("Use pnpm to install packages.", "Install dependencies with pnpm."),
        ("The project targets Python 3.11.", "We support Python 3.11 only."),
        # an acronym and its expansion are one value
        ("Keep PRs small.", "Pull requests should stay small."),
        # what one side adds under a negation is an extra clause, not a contradiction
        ("Prefer pytest rather than unittest.", "Use pytest, not unittest."),
        # Chinese: function words out, synonyms mapped, numbers in any script
        ("用户对花生过敏。", "用户花生过敏。"),
        ("回答尽量简短。", "回复要简洁，不要客套话。"),
        ("站会每天早上九点半。", "每天早上 9 点半开站会。"),
        ("移动端负责人是小刘。", "小刘负责移动端。"),
        ("文档统一放在 docs 目录。", "所有文档都放 docs 目录下。"),
        # one time or date, however it is written
        ("The weekly sync is on Thursdays at 2pm.", "We meet every Thursday at 14:00 for the weekly sync."),
        ("每周四下午两点开组会。", "组会定在每周四 14 点。"),
        ("The beta ships on Dec 15th, 2026.", "Beta release: 2026-12-15."),
        ("内测 2026 年 12 月 3 号开始。", "内测从 2026-12-03 开始。"),
        # British and American spelling; general words for one meaning
        ("The user's favourite colour is teal.", "User's favorite color is teal."),
        ("The user is based in Porto.", "User lives in Porto."),
        ("The user is learning Korean.", "User has been studying Korean."),
        ("用户住在大连。", "用户在大连生活。"),
        # a negation is about words: "不要写中文" is not against "用英文写"
        ("日志一律用英文写。", "日志不要写中文，统一用英语。"),
        ("评审意见用中文写。", "评审意见不要用英文，用中文写。"),
        # a token of letters and digits is one value; a borrowed lowercase word is a word
        ("密钥在 1Password 的 Infra 保险库。", "要找密钥就去 1Password 里的 Infra vault。"),
        # one side names one more thing (a team, a rate): it says more, not something else
        ("Ask Tomasz for VPN access.", "VPN access comes from Tomasz in IT."),
        ("The API is rate limited per key.", "The public API is rate limited to 100 requests a minute per key."),
        # two values in common pin the statement down: the wording around them may differ more
        ("Mobile app v5 launches on 2027-01-18.", "The v5 app goes live on the 18th of January 2027."),
        # one address with or without its scheme; 英文 and 英语 are one language
        ("Latency is charted at https://grafana.acme.io/d/lat.", "Latency board: grafana.acme.io/d/lat"),
        ("日志用英文写。", "日志用英语写。"),
        # a name that starts one sentence is the name the other uses
        ("Tomas handles the VPN setup.", "For VPN setup questions, Tomas handles them."),
    ],
)
def test_one_fact_in_other_words_is_one_fact(x: str, y: str) -> None:
    assert _same(x, y)


@pytest.mark.parametrize(
    ("x", "y"),
    [
        # a different value: number, version, date, name, address
        ("The staging database runs Postgres 14.", "The staging database runs Postgres 15."),
        ("Standup is at 9:30.", "Standup is at 10:00."),
        ("Dana owns the billing service.", "Priya owns the billing service."),
        ("The API docs are at https://a.example.com/api.", "The API docs are at https://b.example.com/api."),
        ("周会在周一。", "周会在周二。"),
        ("预算上限是每月五万。", "预算上限是每月八万。"),
        # negation
        ("Mocks are fine in unit tests.", "Don't use mocks in unit tests."),
        ("周五发布。", "周五不发布。"),
        # one frame, another filler: a different subject or value
        ("The alpha service owns the alpha queue.", "The beta service owns the beta queue."),
        ("Maria is the tech lead for the mobile app.", "Maria is the tech lead for the web app."),
        ("The user has a daughter.", "The user has a son."),
        ("Run the linter before pushing.", "Run the formatter before pushing."),
        ("The user lives in Lisbon.", "The user works in Lisbon."),
        ("用户喜欢喝咖啡。", "用户喜欢喝茶。"),
        ("小李负责搜索服务。", "小张负责推荐服务。"),
        # two facts about one subject
        ("The staging database is read-only on weekends.", "The staging database is backed up nightly."),
        ("The staging database is read-only on weekends.", "The staging database is Postgres 15."),
        ("User prefers dark mode in the editor.", "User prefers a large font in the editor."),
        ("测试数据库周末只读。", "测试数据库是 Postgres 15。"),
        ("Logs are kept for a week.", "Logs are kept in S3."),
        # a time or date in common and nothing else: two things at one time
        ("The design sync is every Thursday at 14:00.", "Retro is every Thursday at 2pm."),
        ("每周四下午两点开组会。", "周四 14 点打羽毛球。"),
        ("The beta ships on 2026-12-15.", "Code freeze begins Dec 15th, 2026."),
        # times and dates that differ however they are written
        ("The weekly sync is at 2pm.", "The weekly sync is at 15:00."),
        ("组会在下午两点。", "组会在晚上八点。"),
        ("The beta ships on Dec 15th.", "The beta ships on 2026-12-16."),
        # a value one side names only under a negation and the other states
        ("The pipeline runs on Jenkins; Kim owns it.", "The pipeline uses Buildkite instead of Jenkins."),
        # a value where the other has a word: one frame, another filler
        ("Backups are kept for a month.", "Backups are kept in GCS."),
        ("备份保留一个月。", "备份放在 OSS。"),
        # a borrowed word inside Chinese still names what differs
        ("前端用 pnpm 管依赖。", "前端用 npm 管依赖。"),
        ("日志不要写中文。", "日志用中文写。"),
        # a different place or relation to one name
        ("The user's partner is called Sam.", "The user's brother is called Sam."),
        ("The user has a dog named Max.", "The user has a cat named Max."),
    ],
)
def test_two_facts_that_look_alike_stay_two(x: str, y: str) -> None:
    assert not _same(x, y)


def test_the_gist_keeps_values_apart_from_wording() -> None:
    g = gist("Ask Dana about the PRs; the freeze starts 2026-12-10 at 9:30 on Friday.\n周会改到周二下午两点。")
    assert g.values == {"dana", "pr", "2026-12-10", "9:30", "friday", "周二", "14:00"}
    assert {v: value_kind(v) for v in g.values} == {
        "dana": "name", "pr": "name", "2026-12-10": "date", "9:30": "time", "friday": "when",
        "周二": "when", "14:00": "time"}
    assert "dana" not in g.content and "ask" in g.content
    # a weekday at the end of a sentence is a weekday, not the number one
    assert gist("周会在周一。").values == {"周一"} and gist("星期天休息。").values == {"周日"}
    # "一点" is "a little", not one o'clock; a year is one number with or without 年
    assert gist("回答简短一点。").values == frozenset()
    assert gist("推迟到 2027 年下半年。").values == {"2027"}
    # a letter next to a digit makes one value ("v2.3" is version 2.3); a region keeps its word
    assert gist("Secrets live in 1Password; the SDK is v2.3 on k8s.").values >= {"1password", "2.3", "k8s"}
    assert "eu-west-1" not in gist("Staging moved to eu-west-1.").values
    # a lowercase word borrowed into Chinese is a word, a capitalised one a name
    assert gist("写 commit message 时用 Bytebase。").values == {"bytebase"}
    # a capitalised word that starts a sentence is not a name
    assert gist("Keep answers short.").values == frozenset()


def test_negation_covers_what_follows_it() -> None:
    g = gist("User likes brief replies without preamble.")
    assert g.negated == (frozenset({"intro"}),)
    assert "short" in g.plain[0] and "answer" in g.plain[0]
    assert gist("Run it in Podman instead of Docker.").negated_values == {"docker"}


def _rec(name: str, description: str, body: str, day: int, type_: str = "user") -> dict[str, object]:
    stamp = f"2026-11-{day:02d}T10:00:00Z"
    return {"name": name, "type": type_, "description": description, "body": body,
            "created_at": stamp, "updated_at": stamp}


def test_the_planner_merges_a_reworded_record_into_the_newer_and_keeps_every_clause() -> None:
    ops = plan({"today": "2026-11-30", "records": [
        _rec("short-answers", "User wants short answers", "Keep answers short.\n**Why:** they read on a phone.\n", 3),
        _rec("brief-replies", "Brief replies, no intro", "Keep replies brief and skip the intro.\n", 9),
        _rec("dark-editor", "User prefers dark mode in the editor", "Dark mode in the editor.\n", 4),
        _rec("large-font", "User prefers a large font in the editor", "A large font in the editor.\n", 5),
    ]})
    assert ops == [{"source_names": ["brief-replies", "short-answers"], "result": {
        "name": "brief-replies", "type": "user", "description": "Brief replies, no intro",
        "body": "Keep replies brief and skip the intro.\nKeep answers short.\n**Why:** they read on a phone.\n"}}]


def test_a_paraphrase_of_another_type_is_left_alone() -> None:
    """A result keeps one type, and the daemon plans each type in its own batches."""
    ops = plan({"today": "2026-11-30", "records": [
        _rec("short-answers", "User wants short answers", "Keep answers short.\n", 3),
        _rec("brief-replies", "Brief replies", "Keep replies brief.\n", 9, type_="feedback"),
    ]})
    assert ops == []


def test_long_tokens_are_read_in_linear_time() -> None:
    """A pasted hash, a minified line or a long hyphen run once made the value patterns scan
    quadratically (a 40,000-character token took half a minute): they are anchored now. No
    timing is asserted; a regression shows as this test taking minutes."""
    for text in ("x" * 60000, "a-" * 20000, "deadbeef" * 2000, "a/" * 20000, "a." * 20000):
        gist(text)
    assert "src/app/main.py" in gist("the entry point is src/app/main.py").values


def test_records_whose_summaries_agree_merge_though_their_bodies_are_worded_apart() -> None:
    """The description is the record's one-line summary; the bodies keep each speaker's own
    words. One part stating the same fact is enough when nothing in the whole differs."""
    ops = plan({"today": "2026-11-30", "records": [
        _rec("sqlfluff-first", "Format SQL with sqlfluff before committing",
             "Run sqlfluff over each changed .sql file ahead of a commit.\n", 3, type_="feedback"),
        _rec("sql-style", "Format SQL files with sqlfluff before commits",
             "The pipeline lints the SQL and fails the build on style drift.\n", 8, type_="feedback"),
        _rec("sql-review", "SQL changes need a DBA review", "Every migration touching SQL gets a DBA review.\n",
             9, type_="feedback"),
    ]})
    assert [op["source_names"] for op in ops] == [["sql-style", "sqlfluff-first"]]
    body = ops[0]["result"]["body"]
    assert "style drift" in body and "ahead of a commit" in body


def test_a_summary_in_common_does_not_outweigh_a_differing_value() -> None:
    ops = plan({"today": "2026-11-30", "records": [
        _rec("pg-staging", "Staging database version", "Staging runs Postgres 15.\n", 3, type_="project"),
        _rec("pg-staging-b", "Staging database version", "Staging runs Postgres 16.\n", 8, type_="project"),
    ]})
    assert ops == []


def test_no_stem_or_word_belongs_to_two_equivalence_groups() -> None:
    """The stemmer cuts to six letters, so "directory" and "directly" meet, as "generate" and
    "generally" do: a word in two groups would silently join the wrong one."""
    from dreamd.models.offline.compare.paraphrase import _EN_SYNONYMS, _ZH_SYNONYMS, _stem

    for table, key in ((_EN_SYNONYMS, _stem), (_ZH_SYNONYMS, str)):
        owner: dict[str, str] = {}
        for group in table:
            for word in group.split():
                assert owner.setdefault(key(word), group) == group, (word, owner[key(word)], group)
