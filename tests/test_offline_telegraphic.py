"""Telegraphic and labelled statements (dreamd.models.offline.extract.telegraphic), on invented sentences."""

from __future__ import annotations

import datetime as dt

import pytest

from dreamd.models.offline.extract.pipeline import extract_from_turns
from dreamd.models.offline.extract.telegraphic import (
    bare_constraint,
    items,
    label_type,
    labelled,
    verbless_intro,
)
from dreamd.models.offline.extract.types import Ctx

TODAY = "2026-03-02"
CTX = Ctx(role="user", day=dt.date(2026, 3, 2), next_sentence=None)


def user(text: str) -> dict[str, str]:
    return {"role": "user", "text": text, "timestamp": f"{TODAY}T10:00:00Z"}


def assistant(text: str) -> dict[str, str]:
    return {"role": "assistant", "text": text, "timestamp": f"{TODAY}T10:01:00Z"}


def run(turns: list[dict[str, str]]) -> list[dict[str, str]]:
    return extract_from_turns(turns, today=TODAY)


def typed(records: list[dict[str, str]]) -> list[tuple[str, str]]:
    return [(r["type"], r["description"]) for r in records]


@pytest.mark.parametrize(
    ("label", "kind"),
    [
        ("house style", "feedback"),
        ("Rules for anything you draft", "feedback"),
        ("repo conventions", "feedback"),
        ("规矩", "feedback"),
        ("代码规范", "feedback"),
        ("our SLA", "project"),
        ("release plan", "project"),
        ("排期", "project"),
        ("pets", "user"),
        ("about me", "user"),
        ("背景", "user"),
        ("useful links", "reference"),
        ("文档", "reference"),
        ("lol", None),
        ("Q", None),
        ("edit", None),
    ],
)
def test_label_type_comes_from_the_head_noun(label: str, kind: str | None) -> None:
    assert label_type(label) == kind


def test_a_clause_before_a_colon_is_not_a_label() -> None:
    assert labelled("I prefer small rules: one change per commit") is None
    assert labelled("The rule is: never squash") is None
    assert labelled("我的规矩是：不加班") is None
    found = labelled("house style: kebab-case files, two-space indent")
    assert found is not None and found.type == "feedback" and found.rest.startswith("kebab-case")


def test_items_split_at_commas_but_keep_parentheses_and_short_tails_together() -> None:
    assert items("Otto (7) swims on Mondays, Ada (4) hates loud noises so warn me, flag it") == [
        "Otto (7) swims on Mondays",
        "Ada (4) hates loud noises so warn me, flag it",
    ]
    assert items("court interpreter here in Lyon, FR<>DE, mostly asylum cases") == [
        "court interpreter here in Lyon, FR<>DE",
        "mostly asylum cases",
    ]
    assert items("提交信息用英文，注释用中文；变量名用驼峰") == ["提交信息用英文", "注释用中文", "变量名用驼峰"]


def test_a_rules_list_gives_one_feedback_record_per_item() -> None:
    records = run([user("ok. house style: early returns over nested ifs, one class per file, snake_case modules.")])
    assert typed(records) == [
        ("feedback", "House style: early returns over nested ifs"),
        ("feedback", "House style: one class per file"),
        ("feedback", "House style: snake_case modules"),
    ]
    assert 'In their words: "house style: early returns over nested ifs, one class per file, snake_case modules"' in records[0]["body"]


def test_a_chinese_rules_label_gives_one_rule_per_item() -> None:
    records = run([user("规矩：接口名用英文，文档一律用中文写")])
    assert [r["type"] for r in records] == ["feedback", "feedback"]
    assert "接口名用英文" in records[0]["description"] and "文档一律用中文写" in records[1]["description"]


def test_a_family_label_gives_one_user_record_per_person() -> None:
    records = run([user("pets: Pilot (3) is scared of thunder, Mochi needs her insulin at 8 so remind me")])
    assert [r["type"] for r in records] == ["user", "user"]
    assert "Pilot (3) is scared of thunder" in records[0]["description"]
    assert "Mochi needs her insulin" in records[1]["description"]


def test_a_context_label_over_a_verbless_self_description() -> None:
    records = run([user("context: court interpreter here in Lyon, FR<>DE, mostly asylum cases")])
    assert [r["type"] for r in records] == ["user", "user"]
    assert "court interpreter here in Lyon" in records[0]["description"]
    assert "asylum cases" in records[1]["description"]


def test_a_context_label_over_the_work_is_left_to_the_other_rules() -> None:
    # "context:" heads facts about the work as often as about the person: not typed user here
    records = run([user("context: monolith, yarn berry, nx for builds.")])
    assert all(r["type"] != "user" for r in records)


def test_a_bare_label_heads_the_lines_after_it() -> None:
    records = run([
        user("Rules for anything you draft for me:\nAmerican spelling, no exclamation marks, short paragraphs."),
        assistant("Noted."),
        user("the report went well btw"),
    ])
    assert typed(records) == [
        ("feedback", "Rules for anything you draft for me: American spelling"),
        ("feedback", "Rules for anything you draft for me: no exclamation marks"),
        ("feedback", "Rules for anything you draft for me: short paragraphs"),
    ]


def test_a_bare_label_closing_a_turn_heads_the_next_user_turn_only_until_the_assistant_speaks() -> None:
    records = run([
        user("our SLA:"),
        user("P1 acknowledged within 15 minutes, P2 within four hours"),
        assistant("Got it."),
        user("the dashboards are slow today, weird"),
    ])
    assert [r["type"] for r in records] == ["project", "project"]
    assert "P1 acknowledged within 15 minutes" in records[0]["description"]


def test_small_talk_questions_and_temporary_labels_give_nothing() -> None:
    assert run([user("lol: that demo went sideways fast")]) == []
    assert run([user("house style: should we use tabs or spaces?")]) == []
    assert run([user("house style for now: skip the type hints")]) == []
    assert run([user("context: so tired today, sorry for the typos")]) == []


def test_a_reason_after_a_rules_list_is_the_reason_of_each_rule() -> None:
    records = run([user("hosting rules: ap-southeast-2 only, no public buckets, data sovereignty")])
    assert [r["type"] for r in records] == ["feedback", "feedback"]
    for record in records:
        assert "**Why:** Data sovereignty." in record["body"]


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("payroll analyst here, at a brewery in Ghent", ["payroll analyst", "brewery"]),
        ("back from the ward (night nurse) so keep it brief", ["nurse"]),
        ("mobile developer, 4 years in", ["mobile developer"]),
        ("training for the Dublin marathon", ["training for the Dublin marathon"]),
        ("做嵌入式的，主要写 C", ["嵌入式"]),
        ("在苏州一家外企做会计", ["会计"]),
    ],
)
def test_verbless_self_introductions(text: str, words: list[str]) -> None:
    found = verbless_intro(text, CTX)
    assert found and found[0].type == "user"
    for word in words:
        assert word in found[0].description


@pytest.mark.parametrize(
    "text",
    [
        "back in 10, grabbing coffee",
        "my brother (a plumber) says the pipe is fine",
        "在 README 里加一段安装说明",
        "帮我在周报里加一行",
        "fixing the flaky test now",
    ],
)
def test_not_a_self_introduction(text: str) -> None:
    assert verbless_intro(text, CTX) == []


@pytest.mark.parametrize(
    ("text", "fact", "reason"),
    [
        ("ca-central-1 only, data residency.", "Ca-central-1 only", "data residency"),
        ("named exports over default exports", "Named exports over default exports", None),
        ("no inline styles anywhere", "No inline styles anywhere", None),
        ("Postgres or nothing", "Postgres or nothing", None),
        ("WCAG AA minimum on everything we publish", "WCAG AA minimum on everything we publish", None),
    ],
)
def test_bare_constraints_are_rules(text: str, fact: str, reason: str | None) -> None:
    found = bare_constraint(text, CTX)
    assert found is not None and found.type == "feedback"
    assert found.description == fact
    assert found.reason == reason


@pytest.mark.parametrize(
    "text",
    ["no worries", "no idea, sorry", "No problem, just do it", "game over", "it's over", "that one only?",
     "no more questions, just do it", "metric only for now", "mind over matter", "one question only",
     "No reply from the vendor, still"],
)
def test_not_a_bare_constraint(text: str) -> None:
    assert bare_constraint(text, CTX) is None


def test_bare_constraint_through_extract_keeps_its_reason() -> None:
    records = run([user("tf thing. ca-central-1 only, data residency.")])
    assert typed(records) == [("feedback", "Ca-central-1 only")]
    assert "**Why:** Data residency." in records[0]["body"]


def test_assistant_labels_never_become_records() -> None:
    assert run([assistant("house style: tabs over spaces, one class per file")]) == []


def test_a_chinese_rules_announcement_heads_the_next_turns_and_a_statement_item_is_the_reason() -> None:
    records = run([
        user("先讲几点要求。"),
        user("接口名用英文；文档用中文写，客户那边的运维看不懂英文。"),
        user("第二，缓存用 Redis，不要用本地内存。"),
        assistant("好的，记下了。"),
        user("今天的会挺长的"),
    ])
    assert [r["type"] for r in records] == ["feedback", "feedback", "feedback"]
    assert "**Why:** 客户那边的运维看不懂英文。" in records[1]["body"]
    # one rule said both ways is one record
    assert "缓存用 Redis，不要用本地内存" in records[2]["description"]


def test_a_topic_sentence_stays_with_the_fact_after_it() -> None:
    records = run([user("payroll. I run it on the 25th of each month through Xero")])
    assert records and "payroll" in records[0]["body"].lower()


def test_greetings_are_not_topics() -> None:
    from dreamd.models.offline.extract.telegraphic import is_topic

    assert is_topic("invoices") and is_topic("wedding admin time")
    assert not is_topic("morning") and not is_topic("ok cool") and not is_topic("I moved")


@pytest.mark.parametrize(
    ("text", "kind", "words"),
    [
        ("node floor is 20 so no newer syntax", "feedback", ["node floor is 20"]),
        ("plan is to cut the release branch once CI is green, by the 12th", "project", ["2026-03-12"]),
        ("my tutor said pytest not unittest so lets stick to pytest", "feedback", ["pytest"]),
    ],
)
def test_limits_plans_and_choices_without_a_full_sentence(text: str, kind: str, words: list[str]) -> None:
    records = run([user(text)])
    assert [r["type"] for r in records] == [kind]
    for word in words:
        assert word in (records[0]["description"] + records[0]["body"]).lower()


def test_a_telegraphic_reply_keeps_the_question_it_answers() -> None:
    records = run([
        assistant("Which accessibility level are you aiming for?"),
        user("AA minimum on every page we publish. we got a complaint once"),
    ])
    assert [r["type"] for r in records] == ["feedback"]
    assert "Asked: Which accessibility level are you aiming for?" in records[0]["body"]


def test_a_reason_after_the_list_ending_in_otherwise_is_the_reason_of_each_rule() -> None:
    records = run([user("Rules for anything you draft: Oxford commas, no passive voice. The style checker rejects it otherwise.")])
    assert [r["type"] for r in records][:2] == ["feedback", "feedback"]
    for record in records[:2]:
        assert "**Why:** The style checker rejects it otherwise." in record["body"]


def test_an_answer_listing_conventions_gives_one_rule_per_item_and_keeps_the_question() -> None:
    records = run([
        assistant("Any conventions I should follow in this repo?"),
        user("kebab-case file names, named exports only, no default exports"),
    ])
    assert typed(records) == [
        ("feedback", "Kebab-case file names"),
        ("feedback", "Named exports only"),
        ("feedback", "No default exports"),
    ]
    assert "Asked: Any conventions I should follow in this repo?" in records[0]["body"]


def test_a_reply_word_or_a_later_turn_is_not_an_answer_to_the_conventions_question() -> None:
    assert run([assistant("Any conventions I should follow?"), user("nope, that's it")]) == []
    records = run([
        assistant("Any conventions I should follow?"),
        user("none really"),
        user("thanks, coffee, then the meeting"),
    ])
    assert all(r["type"] != "feedback" for r in records)


def test_a_bare_constraint_keeps_the_sentence_it_leans_on() -> None:
    records = run([user("icons come from the glyph package, @acme/glyphs. no inline svg anywhere")])
    rule = [r for r in records if r["type"] == "feedback"]
    assert len(rule) == 1 and "@acme/glyphs" in rule[0]["body"]


def test_a_question_with_a_version_number_is_kept_whole() -> None:
    records = run([
        assistant("Should I aim for Python 3.12 compatibility?"),
        user("3.11 minimum on every service we run"),
    ])
    assert records and "Asked: Should I aim for Python 3.12 compatibility?" in records[0]["body"]


def test_a_household_member_label_types_its_items_as_the_users_circumstances() -> None:
    records = run([user("my husband: pescatarian, allergic to sesame")])
    assert [r["type"] for r in records] == ["user", "user"]
    assert "allergic to sesame" in records[1]["description"]
    assert [r["type"] for r in run([user("老公：不吃香菜，对芒果过敏")])] == ["user", "user"]


def test_preferences_label_is_left_to_the_other_rules() -> None:
    # "preferences" heads rules for the assistant as often as personal tastes: not typed here
    assert label_type("preferences") is None


def test_a_chinese_subjectless_intro_with_a_wish_after_it() -> None:
    found = verbless_intro("业余在玩帆船，想这几天多练练", CTX)
    assert [f.type for f in found] == ["user"]
    assert "帆船" in found[0].description


def test_a_stack_or_status_line_is_one_record_and_keeps_names_with_dots() -> None:
    records = run([user("stack: Next.js 15, Drizzle, Postgres on Supabase")])
    assert typed(records) == [("project", "Stack: Next.js 15, Drizzle, Postgres on Supabase")]
    records = run([user("status update: the billing rewrite is about two thirds done, the export part is finished")])
    assert [r["type"] for r in records] == ["project"]
    assert "billing rewrite is about two thirds done" in records[0]["description"]


def test_a_name_with_a_dot_is_not_a_lead_in() -> None:
    from dreamd.models.offline.extract.structure import peel

    assert peel("Next.js 15 is the framework here").core == "Next.js 15 is the framework here"
    assert peel("next, the cron runs hourly").core == "the cron runs hourly"


def test_an_instruction_ending_in_here_is_not_a_role() -> None:
    assert verbless_intro("Use a longer retry window here.", CTX) == []
    assert verbless_intro("swap the old logo here", CTX) == []


@pytest.mark.parametrize(
    "turns",
    [
        [user("supper plan: lasagne")],
        [user("rules of the game: loser buys the pastries, no peeking")],
        [user("kids: both asleep finally, the house is quiet")],
        [assistant("ok"), user("Rules:\nwhatever works, you decide")],
    ],
)
def test_labels_over_one_offs_moments_and_games_give_nothing(turns: list[dict[str, str]]) -> None:
    records = run(turns)
    assert not [r for r in records if ":" in r["description"]]


def test_a_rule_opening_with_no_is_not_a_reply_word() -> None:
    records = run([user("deploy rules: no weekend deploys, no force pushes")])
    assert [r["type"] for r in records] == ["feedback", "feedback"]


@pytest.mark.parametrize("text", ["刚到家", "一直在加班，好累", "现在在机场", "只吃素，不吃蛋", "在开会，晚点回你"])
def test_chinese_moments_moods_and_personal_diets_are_not_telegraphic_rules_or_intros(text: str) -> None:
    from dreamd.models.offline.extract.telegraphic import telegraphic

    assert telegraphic(text, CTX) == []


def test_a_two_character_ask_under_a_rules_label_is_not_a_rule() -> None:
    assert run([user("要求：尽快")]) == []


def test_a_dash_label_and_a_numbered_list() -> None:
    records = run([user("lint rules — no wildcard imports, sorted imports")])
    assert [r["type"] for r in records] == ["feedback", "feedback"]
    records = run([user("merge rules: 1) two approvals 2) no self-merges 3) rebase before merge")])
    assert [r["description"] for r in records] == [
        "Merge rules: two approvals",
        "Merge rules: no self-merges",
        "Merge rules: rebase before merge",
    ]
    assert len(run([user("规范：①接口用 gRPC ②时间一律 UTC")])) == 2


def test_a_name_here_with_an_apology_is_not_an_intro() -> None:
    assert verbless_intro("Ravi here, sorry I'm late", CTX) == []


def test_an_update_label_keeps_a_relayed_dated_plan_but_not_what_was_done() -> None:
    records = run([user("garden update: the landscaper says the fence goes up on the 27th")])
    assert [r["type"] for r in records] == ["project"] and "2026-03-27" in records[0]["description"]
    assert run([user("update: fixed the flaky login test")]) == []
    assert run([user("quick update: so tired today lol")]) == []


def test_an_answer_to_the_conventions_question_may_open_with_no() -> None:
    records = run([assistant("Any house rules for the CSS?"), user("no inline styles, no !important")])
    assert [r["type"] for r in records] == ["feedback", "feedback"]


@pytest.mark.parametrize(
    "text",
    ["just for this run. py3.10 only.", "just this once. house style: skip the docstrings, no tests",
     "today's rules: no merges, no deploys"],
)
def test_a_sentence_beside_that_scopes_to_now_keeps_telegraphic_rules_out(text: str) -> None:
    records = run([user(text)])
    assert not [r for r in records if r["description"].startswith(("Py3.10", "House style"))]


def test_a_rule_with_an_end_is_not_standing() -> None:
    from dreamd.models.offline.extract.telegraphic import telegraphic

    assert telegraphic("no deploys until Friday, freeze week", CTX) == []
    records = run([user("deploy rules this sprint: no Friday merges, no schema changes")])
    assert not [r for r in records if r["description"].startswith("Deploy rules")]


@pytest.mark.parametrize(
    ("text", "fact", "reason"),
    [
        ("别用 moment.js，包太大", "别用 moment.js", "包太大"),
        ("不要用 ORM，查询不好调", "不要用 ORM", "查询不好调"),
        ("UTC everywhere", "UTC everywhere", None),
        ("metric units, always", "Metric units, always", None),
        ("Tailwind only, no CSS-in-JS", "Tailwind only, no CSS-in-JS", None),
    ],
)
def test_more_bare_constraints(text: str, fact: str, reason: str | None) -> None:
    found = bare_constraint(text, CTX)
    assert found is not None and found.type == "feedback"
    assert (found.description, found.reason) == (fact, reason)


@pytest.mark.parametrize("text", ["别有压力，你已经很好了", "别熬夜，身体要紧", "不要这个，换一个", "same everywhere", "Thanks, always"])
def test_encouragement_wellbeing_and_replies_are_not_bare_constraints(text: str) -> None:
    assert bare_constraint(text, CTX) is None


def test_one_thing_over_another_is_a_rule() -> None:
    assert run([user("yarn, not npm")])[0]["description"] == "Yarn, not npm"


@pytest.mark.parametrize(
    "turns",
    [
        [user("Friday, not Thursday")],
        [user("me, not him")],
        [user("16, not 15")],
        [assistant("Which bundler should I use here?"), user("vite, not webpack")],
    ],
)
def test_a_correction_or_a_choice_for_the_task_is_not_a_rule(turns: list[dict[str, str]]) -> None:
    assert not [r for r in run(turns) if r["type"] == "feedback"]


def test_this_is_a_must_names_nothing() -> None:
    assert bare_constraint("this is a must", CTX) is None


@pytest.mark.parametrize("text", ["UTC for all timestamps", "ruff in every package", "US spelling for all client docs"])
def test_a_value_for_every_thing_of_the_work(text: str) -> None:
    found = bare_constraint(text, CTX)
    assert found is not None and found.type == "feedback"


@pytest.mark.parametrize("text", ["thanks for everything", "good luck for everything", "same for everyone"])
def test_thanks_and_wishes_for_everything_are_not_rules(text: str) -> None:
    assert bare_constraint(text, CTX) is None


@pytest.mark.parametrize("text", ["named exports wherever possible"])
def test_whenever_it_can_be(text: str) -> None:
    found = bare_constraint(text, CTX)
    assert found is not None and found.type == "feedback"


@pytest.mark.parametrize("text", ["能来就来", "能睡就多睡"])
def test_when_you_can_without_a_rule_for_the_work(text: str) -> None:
    assert bare_constraint(text, CTX) is None


def test_a_label_about_the_user_heads_a_verbless_list_of_facts() -> None:
    """"<anything> about me: <age>, <job>, <city>" is a self-description whatever its first item is;
    a moment or a reply under the same label is still nothing."""
    from dreamd.models.offline.extract.pipeline import extract

    def run(text: str) -> list[dict[str, str]]:
        turn = {"role": "user", "text": text, "timestamp": "2026-11-24T10:00:00Z"}
        return extract({"task": "extract", "today": "2026-11-24", "index": [], "turns": [turn]})

    records = run("Quick facts about me: 52, welder, Gdansk")
    assert [r["type"] for r in records] == ["user"]
    assert "welder" in records[0]["description"] and "Gdansk" in records[0]["description"]
    assert [r["type"] for r in run("关于我：四十岁，厨师，住在昆明")] and all(r["type"] == "user" for r in run("关于我：四十岁，厨师，住在昆明"))
    assert run("About me: whatever") == []


def test_a_name_and_what_it_is_to_the_speaker_is_a_fact() -> None:
    from dreamd.models.offline.extract.pipeline import extract

    def run(text: str) -> list[dict[str, str]]:
        turn = {"role": "user", "text": text, "timestamp": "2026-11-24T10:00:00Z"}
        return extract({"task": "extract", "today": "2026-11-24", "index": [], "turns": [turn]})

    records = run("Copper Kettle, my tea room on Mill Lane.")
    assert len(records) == 1 and "Copper Kettle" in records[0]["description"]
    assert run("Thanks, my friend") == []


@pytest.mark.parametrize(
    "text",
    [
        "三条规矩你记一下：\n1. 报价一律含税\n2. 周日不接单\n3. 样品只寄顺丰",
        "A few rules for the bakery, note them down:\n- loaves are priced per kilo\n- no orders ship on Mondays",
    ],
)
def test_a_rules_header_that_asks_to_note_the_list_still_heads_it(text: str) -> None:
    got = extract_from_turns([user(text)], today=TODAY)
    assert len(got) >= 2
    assert all(r["type"] == "feedback" for r in got)
    # a weekday in a rule names every such day: never resolved to one date
    assert not any("2026-03" in r["description"] for r in got)


def test_a_request_to_note_something_is_not_a_header_without_a_rules_noun() -> None:
    got = extract_from_turns([user("记一下：\n明天下午三点去取快递")], today=TODAY)
    assert not any(r["type"] == "feedback" for r in got)


@pytest.mark.parametrize(
    ("text", "rule", "why"),
    [
        ("gradle kotlin dsl here, not groovy — the old scripts confused everyone", "Gradle kotlin dsl here, not groovy",
         "the old scripts confused everyone"),
        ("UTC everywhere; the cron hosts sit in three timezones", "UTC everywhere", "the cron hosts sit in three timezones"),
    ],
)
def test_a_bare_constraint_keeps_its_reason_after_a_dash(text: str, rule: str, why: str) -> None:
    found = bare_constraint(text, CTX)
    assert found is not None and found.type == "feedback"
    assert found.description == rule
    assert found.reason == why


def test_a_dash_does_not_make_a_rule_of_a_remark() -> None:
    assert bare_constraint("long day - the build kept failing", CTX) is None


@pytest.mark.parametrize(
    "text", ["no calls on Sundays", "no caffeine after 4pm", "no long rides the day after a double shift"]
)
def test_no_thing_at_a_time_that_comes_round_again_is_a_rule(text: str) -> None:
    found = bare_constraint(text, CTX)
    assert found is not None and found.type == "feedback"


@pytest.mark.parametrize("text", ["no worries on weekends", "no idea after a while", "no luck on mondays"])
def test_an_idiom_with_a_time_is_still_no_rule(text: str) -> None:
    assert bare_constraint(text, CTX) is None
