"""One record per fact: how a sentence is cut into clauses and which clauses become records."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

from dreamd.models.offline.extract.clauses import clauses, lasting_part
from dreamd.models.offline.extract.pipeline import extract_from_turns

TODAY = "2026-12-01"


def records(*texts: str) -> list[dict[str, str]]:
    turns: list[dict[str, Any]] = [
        {"role": "user", "text": t, "timestamp": f"{TODAY}T10:00:00Z"} for t in texts
    ]
    return extract_from_turns(turns, today=TODAY)


def kinds(items: list[dict[str, str]]) -> list[str]:
    return [r["type"] for r in items]


def holding(items: list[dict[str, str]], word: str) -> list[dict[str, str]]:
    return [r for r in items if word.lower() in (r["description"] + r["body"]).lower()]


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        # a new subject after "and"/"but" or a comma starts a clause
        ("I'm in the data team and our warehouse is on BigQuery",
         ["I'm in the data team", "our warehouse is on BigQuery"]),
        ("I've done Java for a decade but I'm new to Elixir",
         ["I've done Java for a decade", "I'm new to Elixir"]),
        ("I'm pescatarian, my husband is vegan", ["I'm pescatarian", "my husband is vegan"]),
        ("errors go to Rollbar, uptime goes to Pingdom",
         ["errors go to Rollbar", "uptime goes to Pingdom"]),
        ("Kofi handles billing and Ines owns the iOS app", ["Kofi handles billing", "Ines owns the iOS app"]),
        ("reply in British English and always cite the file you changed",
         ["reply in British English", "always cite the file you changed"]),
        # a pronoun or a causal clause goes on about the clause before it
        ("I keep two rabbits, Pip and Moss, and they're both house rabbits", None),
        ("don't add new linters; our CI budget is tight", None),
        ("the cache is warmed at 6, which is why the first deploy is slow", None),
        # one rule said both ways, with no "and", stays one clause
        ("always pin versions exactly, never use caret ranges", None),
        ("never squash release commits, and always sign the tags",
         ["never squash release commits", "always sign the tags"]),
        # two subjects of one verb are one clause
        ("Nia and Theo go to the same nursery", None),
        # never inside brackets or quotes
        ("I'm Rosa, two dogs (Bo is 4 and Tig is 2) and a cat", None),
        ('my mentor says "ship it and then fix it" a lot', None),
    ],
)
def test_a_sentence_is_cut_where_a_new_clause_starts(sentence: str, expected: list[str] | None) -> None:
    """``None``: the sentence stays one clause (:func:`clauses` gives at most the whole, rejoined)."""
    if expected is None:
        assert len(clauses(sentence)) <= 1
    else:
        assert clauses(sentence) == expected


def test_a_self_description_and_a_pointer_in_one_sentence_are_two_records() -> None:
    items = records("I'm in the data team and our warehouse config is in the infra/bq folder.")
    assert sorted(kinds(items)) == ["reference", "user"]
    ref = next(r for r in items if r["type"] == "reference")
    assert "infra/bq" in ref["description"]


def test_two_pointers_with_their_own_subjects_are_two_records() -> None:
    items = records("The wiki is at https://wiki.corp.example and the status page is at https://status.corp.example.")
    assert kinds(items) == ["reference", "reference"]
    assert holding(items, "wiki.corp.example") and holding(items, "status.corp.example")


def test_a_tool_and_where_its_config_lives_are_one_pointer() -> None:
    items = records("The Android build uses Gradle, the signing configs are in android/signing.")
    assert kinds(items) == ["reference"]
    assert "Gradle" in items[0]["body"] and "android/signing" in items[0]["body"]


def test_two_rules_joined_by_and_are_two_records_and_one_said_both_ways_is_one() -> None:
    two = records("Never squash release commits, and always sign the tags.")
    assert kinds(two) == ["feedback", "feedback"]
    one = records("Always pin versions exactly, never use caret ranges.")
    assert kinds(one) == ["feedback"]
    assert "caret" in one[0]["body"]


def test_every_clause_record_keeps_the_words_the_user_said() -> None:
    items = records("I've been writing Java for a decade but I'm new to Elixir.")
    assert len(items) == 2
    for r in items:
        assert "Java" in r["body"] and "Elixir" in r["body"]


def test_a_correction_fixes_the_record_that_states_the_old_value() -> None:
    items = records(
        "Two notes: the backups run every Tuesday morning, and the status page is at https://status.acme.example.",
        "Sorry, I meant Thursday morning, not Tuesday.",
    )
    backups = next(r for r in items if "backups" in r["description"])
    assert "every Thursday morning" in backups["description"]
    assert "Tuesday" not in backups["body"] and "morning morning" not in backups["body"]
    status = next(r for r in items if r["type"] == "reference")
    assert "status.acme.example" in status["description"]
    assert "Tuesday" not in status["body"]  # the sentence it quotes is put right too


def test_a_label_and_a_place_finish_the_clause_before_as_one_pointer() -> None:
    en = records("Our uptime checks run on Gatus, dashboard at https://gatus.ops.example.")
    assert kinds(en) == ["reference"]
    assert "Gatus" in en[0]["description"] and "gatus.ops.example" in en[0]["description"]
    zh = records("配置中心用的是自建的 Apollo，地址 apollo.ops.internal。")
    assert kinds(zh) == ["reference"]
    assert "apollo.ops.internal" in zh[0]["description"]


def test_a_list_of_a_setup_a_pointer_and_a_rule_gives_three_records_and_no_borrowed_reason() -> None:
    items = records("Three things: we build with Bazel; the BUILD files are in tools/build; never edit the lockfile by hand.")
    assert kinds(items) == ["project", "reference", "feedback"]
    rule = items[2]
    assert "lockfile" in rule["description"]
    assert "tools/build" not in rule["body"].split("**How to apply:**")[0]  # where a thing lives is no reason


def test_a_schedule_is_a_value_of_the_work() -> None:
    items = records("The demo database gets reset every Monday morning.", "演示数据库每周一早上重置。")
    assert kinds(items) == ["project", "project"]


def test_a_consequence_about_the_user_stays_in_the_record_of_the_clause_before() -> None:
    for sentence in ("I'm a baker, so I get up really early.", "I'm a baker, so I sleep from 8pm to 3am."):
        items = records(sentence)
        assert kinds(items) == ["user"]
        assert sentence.split(", so ")[1].rstrip(".") in items[0]["body"]  # in the user's words


def test_a_named_thing_and_where_it_lives_are_one_pointer() -> None:
    en = records("The job scheduler is called Conductor and its web console is at https://conductor.ops.example.")
    assert kinds(en) == ["reference"]
    assert "Conductor" in en[0]["description"] and "conductor.ops.example" in en[0]["body"]
    zh = records("任务调度服务叫 Conductor，控制台在 https://conductor.ops.example。")
    assert kinds(zh) == ["reference"]
    assert "Conductor" in zh[0]["body"]


def test_the_name_of_a_part_of_a_place_stays_with_the_pointer() -> None:
    items = records("Crash reports go to Bugsnag, and the project key is mobile-ios.")
    assert kinds(items) == ["reference"]
    assert "mobile-ios" in items[0]["description"]


def test_two_places_each_with_its_own_subject_are_two_pointers_in_chinese_too() -> None:
    items = records("构建日志在 ci.acme.example/logs，报警发到企业微信的 #build-alert 群。")
    assert kinds(items) == ["reference", "reference"]
    assert holding(items, "ci.acme.example/logs") and holding(items, "#build-alert")


def test_a_pronoun_further_in_the_sentence_brings_its_antecedent_into_the_record() -> None:
    items = records("Our search service is written in Rust. We host it on Hetzner.")
    hosted = next(r for r in items if "Hetzner" in r["description"])
    assert "search service" in hosted["body"]
    rule = [r for r in records("The shared GPU box is fragile. Never run load tests there.") if r["type"] == "feedback"]
    assert len(rule) == 1 and "GPU box" in rule[0]["body"]


def test_numbered_chinese_rules_after_a_header_are_one_record_each_without_the_numbers() -> None:
    items = records("三条规矩：一、不要用 any；二、组件不超过 200 行；三、合并前跑 e2e。")
    assert kinds(items) == ["feedback", "feedback", "feedback"]
    # the first item may keep the label it was given under ("三条规矩：不要用 any"); no item keeps its number
    assert [r["description"].split("：")[-1] for r in items] == ["不要用 any", "组件不超过 200 行", "合并前跑 e2e"]
    assert not any(n in r["description"] for r in items for n in ("一、", "二、", "三、"))


def test_a_limit_with_chao_guo_is_a_rule_not_a_past_event() -> None:
    items = records("以后每个 PR 的改动不超过 300 行。")
    assert kinds(items) == ["feedback"]


def test_a_rule_is_never_the_reason_for_the_next_rule() -> None:
    items = records("Two rules: no trailing whitespace, and keep functions under 60 lines.")
    assert kinds(items) == ["feedback", "feedback"]
    assert "whitespace" not in items[1]["body"].split("**How to apply:**")[0]


def test_the_date_of_a_plan_said_after_it_stays_with_the_plan() -> None:
    en = records("We're moving the docs to Mintlify, and the deadline is January 15.")
    assert kinds(en) == ["project"]
    assert "Mintlify" in en[0]["description"] and "2027-01-15" in en[0]["description"]
    zh = records("我们要把文档站迁到 Mintlify，截止日期是 1 月 15 号。")
    assert kinds(zh) == ["project"]
    assert "2027-01-15" in zh[0]["description"]


def test_a_topic_label_stays_in_the_record_and_a_lead_in_does_not() -> None:
    shipped = records("Desktop app: we release on Wednesdays.")
    assert kinds(shipped) == ["project"]
    assert "Desktop app" in shipped[0]["body"]
    it = records("Re the message queue: it's RabbitMQ 3.13 on our own hosts.")
    assert it and it[0]["description"].startswith("The message queue is RabbitMQ 3.13")
    zh = records("关于缓存：我们用的是 Redis 7。")
    assert zh and "缓存" in zh[0]["body"]
    lead = records("Here's the deal: we release on Wednesdays.")
    assert lead and "deal" not in lead[0]["body"]


def test_a_number_in_words_is_a_value_of_the_work() -> None:
    items = records("Our release train is three weeks long and retros are on Fridays.")
    assert kinds(items) == ["project", "project"]


def test_a_chinese_clause_without_a_subject_of_its_own_carries_on_the_one_before() -> None:
    db = records("我们的日志库是 ClickHouse 23，部署在自建机房。")
    assert kinds(db) == ["project"]
    assert "自建机房" in db[0]["description"]
    me = records("我是做测试开发的，主要写 Pytest 和 Playwright。")
    assert kinds(me) == ["user"]
    assert "Playwright" in me[0]["description"]


def test_a_chinese_clause_after_but_is_read_without_the_conjunction() -> None:
    items = records("我是做数据的，但是报表代码都在 apps/reports 目录里。")
    assert sorted(kinds(items)) == ["reference", "user"]
    code = next(r for r in items if r["type"] == "reference")
    assert code["description"].startswith("报表代码")


def test_a_chinese_clause_about_who_a_rule_is_for_is_its_reason_not_a_second_record() -> None:
    rule = records("以后给我推荐零食的时候都别放坚果，我和女儿都不吃。")
    assert kinds(rule) == ["feedback"]
    assert "不吃" in rule[0]["body"]
    condition = records("推荐运动的时候不要安排跑步，我膝盖不好。")
    assert sorted(kinds(condition)) == ["feedback", "user"]


def test_a_sentence_after_a_version_number_is_a_sentence_of_its_own() -> None:
    from dreamd.models.offline.extract.pipeline import sentences

    assert sentences("We run Vue 3. The components live in src/ui.") == [
        "We run Vue 3.", "The components live in src/ui."]
    assert sentences("House rules: 1. tabs. 2. no emojis.") == ["House rules: 1. tabs.", "2. no emojis."]
    assert sentences("说几个规矩：1. 不准提交密钥") == ["说几个规矩：1. 不准提交密钥"]


def test_only_a_prohibition_takes_the_next_sentence_as_its_alternative() -> None:
    banned = records("Never call the billing API from the frontend, because keys would leak. "
                     "Use the backend proxy instead.")
    assert kinds(banned) == ["feedback"]
    assert "backend proxy" in banned[0]["body"]
    two = records("Always add a changelog entry for user-facing changes. "
                  "Write changelog entries in the past tense, always.")
    assert kinds(two) == ["feedback", "feedback"]


def test_a_pronoun_subject_takes_what_the_sentence_before_names() -> None:
    from dreamd.models.offline.extract.clauses import with_subject

    assert with_subject("She's a pharmacist", "My sister is Lou.") == "My sister is a pharmacist"
    assert with_subject("It lives in infra/pulumi", "We use Pulumi.") == "Pulumi lives in infra/pulumi"
    assert with_subject("It was late", "I went home.") == "It was late"
    items = records("My brother is Tomas. He's a paramedic in Porto.")
    assert kinds(items) == ["user", "user"]
    assert "paramedic" in items[1]["description"] and "brother" in items[1]["description"]


def test_a_rule_with_its_alternative_after_a_reason_is_still_a_rule() -> None:
    items = records("I'm dyslexic, so never use justified text in documents, use left-aligned instead.")
    assert sorted(kinds(items)) == ["feedback", "user"]
    rule = next(r for r in items if r["type"] == "feedback")
    assert "left-aligned" in rule["body"] and "dyslexic" in rule["body"]


def test_a_pronoun_clause_after_a_semicolon_takes_the_subject_before_it() -> None:
    items = records("Our build box is a Mac mini; it runs the nightly iOS builds at 2am.")
    assert any(r["description"].startswith("Our build box runs the nightly iOS builds") for r in items), items


def test_the_lasting_side_of_a_temporary_sentence_is_kept() -> None:
    items = records("Just this once skip the changelog, but never skip it on release branches.")
    assert kinds(items) == ["feedback"]
    assert items[0]["description"].startswith("Never skip it on release branches")
    assert "changelog" in items[0]["body"]  # what "it" is, in the user's words
    assert records("Skip the changelog for now.") == []


def test_my_partner_and_i_stays_one_subject_in_the_third_person() -> None:
    from dreamd.models.offline.text import third_person

    assert third_person("My husband and I run a bakery") == "their husband and the user run a bakery"
    assert third_person("I know and I care") == "they know and they care"


def test_two_word_rules_after_a_rules_header_are_clauses() -> None:
    assert clauses("no emojis; keep PRs small", min_words=2) == ["no emojis", "keep PRs small"]
    assert clauses("no emojis; keep PRs small") == ["keep PRs small"]


def test_the_lasting_side_loses_its_own_standing_lead() -> None:
    items = records("这次先不加缓存，但是以后所有列表接口都要分页。")
    assert kinds(items) == ["feedback"]
    assert items[0]["description"] == "所有列表接口都要分页"


def test_a_moment_after_and_leaves_the_lasting_side() -> None:
    from dreamd.models.offline.extract.clauses import lasting_part

    assert lasting_part("I tutor, mostly chemistry, and right now I've got three students") == "I tutor, mostly chemistry"
    assert lasting_part("we use Gradle; for now skip the lint step") == "we use Gradle"
    assert lasting_part("right now I'm busy, and for now it can wait") is None


# ----------------------------------------------------------------------------- standing by structure


@pytest.mark.parametrize(
    ("text", "word"),
    [
        # a scope over every case, with no "always"/"never"
        ("we don't restart the queue consumers by hand on any host", "consumers"),
        ("Please keep release notes under 300 words.", "300"),
        ("whenever you write anything for the landlord keep it formal, dates spelled out", "landlord"),
        ("dates in ISO format pls, everything", "ISO"),
        # the sentence after names it a rule, or the same sentence does after a semicolon
        ("Sign off those emails with the team name; that is standing procedure.", "team name"),
    ],
)
def test_a_directive_holds_for_good_by_its_scope_or_its_label(text: str, word: str) -> None:
    got = holding(records(text), word)
    assert kinds(got) == ["feedback"]


def test_a_standing_directive_naming_an_address_is_kept_as_a_reference() -> None:
    text = "Forward anything like that to abuse@pinecrest.example; that is standing procedure."
    assert kinds(holding(records(text), "abuse@pinecrest")) == ["reference"]


def test_the_next_sentence_naming_it_a_rule_makes_it_standing() -> None:
    got = records("We don't hotfix the kiosk firmware over ssh. That's policy.")
    assert kinds(holding(got, "firmware")) == ["feedback"]


@pytest.mark.parametrize(
    "text",
    [
        "every time I open the settings page it freezes",  # a complaint, not a directive
        "Rename fetchRows to loadRows in every file",  # one edit, however wide
        "Check all the links for now",  # for the moment
        "Please keep this reply short",  # no scope: this reply
    ],
)
def test_scope_alone_makes_no_rule(text: str) -> None:
    assert "feedback" not in kinds(records(text))


@pytest.mark.parametrize(
    ("text", "word"),
    [
        # a rule said of a kind of thing, named first as its topic
        ("周报别写成流水账，列三点就够", "周报"),
        ("提交说明统一用英文写", "提交说明"),
        # its reason in the same sentence
        ("依赖只用 poetry 装，别混用 pip，环境会乱", "poetry"),
        # without exception
        ("含酒精的菜谱一概别推荐", "酒精"),
        # "长距离别排": 离 before 别 is no word 离别
        ("连续两天长距离别排", "长距离"),
    ],
)
def test_a_chinese_directive_about_a_kind_of_thing_is_standing(text: str, word: str) -> None:
    assert kinds(holding(records(text), word)) == ["feedback"]


@pytest.mark.parametrize(
    "text",
    [
        "先别提交",  # for now
        "这个函数别改",  # this one thing
        "别管",  # no topic, no reason
        "面试的事别灰心",  # comfort
        "把文档里的错别字改一下",  # 错别字 is a word, not "don't"
        "周一总是特别累",  # 特别 is "very"
    ],
)
def test_a_chinese_directive_for_now_or_this_thing_is_no_rule(text: str) -> None:
    assert "feedback" not in kinds(records(text))


@pytest.mark.parametrize(
    ("sentence", "kept"),
    [
        # a temporary clause of its own beside a lasting one, with no "but": the lasting one is kept
        ("the new flat's lease starts on March 1 and I haven't packed a single box yet",
         "the new flat's lease starts on March 1"),
        ("民宿预算一晚 400 以内，这次跟同事一起去", "民宿预算一晚 400 以内"),
    ],
)
def test_a_temporary_clause_leaves_the_lasting_clause_beside_it(sentence: str, kept: str) -> None:
    assert lasting_part(sentence) == kept


@pytest.mark.parametrize(
    "sentence",
    [
        "for now, use npm",  # the moment heads the directive
        "use yarn this time, keep the lockfile",
        "从现在开始我去开个会，一会儿回来",  # an errand of the moment beside it
    ],
)
def test_a_moment_heading_the_rest_keeps_nothing(sentence: str) -> None:
    assert lasting_part(sentence) is None


def test_a_plain_statement_after_a_rule_found_by_its_scope_is_its_reason() -> None:
    got = holding(records("Please keep pitch emails under 150 words. Editors skim on their phones."), "150")
    assert kinds(got) == ["feedback"]
    assert "Editors skim on their phones" in got[0]["body"].split("**How to apply:**")[0]


def test_a_second_directive_after_it_is_no_reason() -> None:
    got = holding(records("Please keep pitch emails under 150 words. Send them before noon."), "150")
    assert kinds(got) == ["feedback"]
    assert "**Why:** Send them" not in got[0]["body"]


def test_a_long_word_is_no_labelled_place_and_reading_it_finishes() -> None:
    """The label before a place ("console at nomad.internal") was read as up to three words that
    could each end anywhere inside a long word, so a 400-letter word took seconds and a 4,000-letter
    one far longer. Words are now whole: run in a child with a generous limit (a hang guard, not a
    timing), and the labels still read as before."""
    code = (
        "from dreamd.models.offline.extract.clauses import _labelled_place\n"
        "print(_labelled_place('gravel' * 600))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert (done.returncode, done.stdout.strip()) == (0, "False"), done.stderr
    from dreamd.models.offline.extract.clauses import _labelled_place

    assert _labelled_place("kiln log at kiln.example.net")
    assert _labelled_place("scans: files.example.org/scans")
    assert _labelled_place("票据在 /srv/receipts")
    assert not _labelled_place("one two three four five.example.net")


def test_a_scope_inside_the_one_thing_at_hand_is_no_standing_rule() -> None:
    """"Anything"/"everything" makes a directive standing only when it ranges over a kind of work;
    inside "that file" or "this one" it is one request."""
    assert records("Check that file for anything odd.") == []
    assert records("Reply in Welsh to this one, everything in it.") == []
    assert kinds(records("Check every invoice for anything odd before it goes out.")) == ["feedback"]
    assert kinds(records("Make sure that every crate label has a lot number, on any shipment.")) == ["feedback"]
