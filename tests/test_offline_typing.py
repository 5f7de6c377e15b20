"""The type a record gets (offline_typing and the rules' type choices), read from the clause's structure.

Every sentence here was invented for these tests; none comes from a benchmark split or a data file.
"""

from __future__ import annotations

import datetime as dt

import pytest

from dreamd.models.offline.extract.kinds import future_dates, is_pointer, statement_type
from dreamd.models.offline.extract.pipeline import extract

DAY = dt.date(2026, 11, 24)  # a Tuesday
TS = "2026-11-24T10:00:00Z"


def types_of(*texts: str) -> list[tuple[str, str]]:
    turns = [{"role": "user", "text": t, "timestamp": TS} for t in texts]
    records = extract({"task": "extract", "today": "2026-11-24", "index": [], "turns": turns})
    return [(r["type"], r["description"]) for r in records]


# ----------------------------------------------------------------------------- where a thing is, where a person is


@pytest.mark.parametrize(
    "clause",
    [
        "Our grant reports are all in Dropbox",
        "The seed data lives in the fixtures folder",
        "Invoices are stored in the finance drive",
        "Design reviews are written up in Confluence",
    ],
)
def test_a_thing_kept_somewhere_is_a_pointer(clause: str) -> None:
    assert is_pointer(clause)
    assert statement_type(clause, DAY) == "reference"


@pytest.mark.parametrize(
    ("clause", "kind"),
    [
        # "is/are <property> in <scope>" says how things are there, not where anything is kept
        ("The checkout service has been live in production since spring", "project"),
        ("Image names are lowercase on the registry", "project"),
        # a relative living somewhere is their situation, not where to find something
        ("My brother Tomasz lives in Gdańsk", "user"),
        ("my aunt lives in Leeds", "user"),
    ],
)
def test_a_property_or_a_person_somewhere_is_no_pointer(clause: str, kind: str) -> None:
    assert not is_pointer(clause)
    assert statement_type(clause, DAY) == kind


def test_a_house_style_said_as_a_description_is_a_rule() -> None:
    assert statement_type("Migration files are numbered by date in this repo", DAY) == "feedback"
    assert statement_type("Migration files are numbered by date", DAY) != "feedback"


@pytest.mark.parametrize(
    "clause",
    [
        "设计稿都在 Figma",
        "会议记录同步在飞书 Docs",
        "报销的单据都在财务后台",
        "装修合同放在 Notion",
    ],
)
def test_zh_a_record_kept_in_a_named_tool_is_a_pointer(clause: str) -> None:
    assert statement_type(clause, DAY) == "reference"


@pytest.mark.parametrize("clause", ["我们公司总部在 Munich", "我在 Stripe", "她现在在 Oslo"])
def test_zh_where_a_company_or_person_is_is_no_pointer(clause: str) -> None:
    assert statement_type(clause, DAY) != "reference"


@pytest.mark.parametrize(
    "clause",
    ["报销找行政的小周", "合同的事直接问我们的律师", "服务器权限找运维", "续签签证找 Helen"],
)
def test_zh_a_task_and_the_person_who_handles_it_is_a_pointer(clause: str) -> None:
    assert statement_type(clause, DAY) == "reference"


def test_zh_finding_a_thing_is_no_pointer() -> None:
    assert statement_type("我最近在找房子，想住近一点", DAY) != "reference"


# ----------------------------------------------------------------------------- dates


def test_a_wedding_anniversary_is_personal_and_a_launch_is_the_work() -> None:
    assert statement_type("下个月 3 号是我们结婚十周年", DAY) == "user"
    assert statement_type("下个月 3 号是新版本上线", DAY) == "project"


def test_zh_a_bare_condition_split_from_its_rule_states_nothing() -> None:
    assert statement_type("给我推荐电影的时候", DAY) is None
    assert statement_type("出差的时候，我习惯住地铁站旁边", DAY) is not None


# ----------------------------------------------------------------------------- rules and deadlines


def test_a_must_tied_to_one_date_is_a_deadline_not_a_rule() -> None:
    assert types_of("The vendor contract has to be signed by December 18.") == [
        ("project", "The vendor contract has to be signed by 2026-12-18")
    ]
    got = types_of("旧机房下个月 10 号之前必须全部下线。")
    assert [t for t, _ in got] == ["project"]
    # a recurring day or a standing marker keeps it a rule
    assert [t for t, _ in types_of("Invoices must always go out by the 5th of each month.")] == ["feedback"]
    assert [t for t, _ in types_of("每周五之前必须交周报。")] == ["feedback"]


@pytest.mark.parametrize(
    "text",
    [
        "账单类的提醒都放在早上发我",  # every thing of a kind
        "这类周报都按项目分段写",  # "这类", "这种" name a kind, not a pronoun subject
        "这种对账表格都按月份拆成多个 sheet",
    ],
)
def test_zh_a_directive_over_every_thing_of_a_kind_is_a_rule(text: str) -> None:
    assert [t for t, _ in types_of(text)] == ["feedback"]


def test_zh_a_condition_on_the_assistants_work_makes_a_rule_and_stays_in_it() -> None:
    got = types_of("你改我的简历的时候别动排版。")
    assert got and got[0][0] == "feedback"
    assert "简历" in got[0][1] and "排版" in got[0][1]


# ----------------------------------------------------------------------------- conventions said as descriptions


@pytest.mark.parametrize(
    "clause",
    [
        "We mock the payment API in tests, never the real sandbox",
        "Any database migration requires a review from the platform team",
        "Anything customer-facing goes through the copy review before release",
    ],
)
def test_a_convention_of_the_work_said_as_a_description_is_a_rule(clause: str) -> None:
    assert statement_type(clause, DAY) == "feedback"


@pytest.mark.parametrize("clause", ["we eat pizza, not pasta", "We migrated the API to Go, not Rust"])
def test_a_habit_or_a_past_choice_is_no_convention(clause: str) -> None:
    assert statement_type(clause, DAY) != "feedback"


@pytest.mark.parametrize("clause", ["构建走 Bazel，缓存放在远端", "设备都走 Zigbee 网关"])
def test_zh_what_the_work_goes_through_is_no_pointer(clause: str) -> None:
    assert statement_type(clause, DAY) != "reference"


def test_zh_a_process_system_is_still_a_pointer() -> None:
    assert statement_type("请假走 OA 流程", DAY) == "reference"


def test_zh_a_requirement_someone_else_set_is_the_state_of_the_work() -> None:
    assert "feedback" not in [t for t, _ in types_of("法务要求所有合同模板都保留英文版。")]
    assert [t for t, _ in types_of("客户要求登录页 3 月 1 号前改完。")] == ["project"]
    assert [t for t, _ in types_of("所有合同模板都要保留英文版。")] == ["feedback"]  # the user's own rule


@pytest.mark.parametrize(
    "text",
    [
        "I'm the release manager until the end of January.",
        "I'm on call until Friday.",
        "下周值班轮到我，一直到 12 月 20 号。",
        "下个月 3 号是我们结婚十周年。",
    ],
)
def test_the_users_role_until_a_date_or_their_anniversary_is_about_them(text: str) -> None:
    assert [t for t, _ in types_of(text)] == ["user"]


def test_the_users_work_on_a_date_is_still_the_work() -> None:
    assert [t for t, _ in types_of("I'm presenting the roadmap to the board on the 12th.")] == ["project"]


def test_the_users_circumstance_then_what_to_do_about_it_gives_both_records() -> None:
    got = types_of("I'm a baker on early shifts, so I'm usually asleep by nine, keep evening plans short.")
    assert [t for t, _ in got] == ["user", "feedback"]
    assert "evening plans short" in got[1][1].lower()
    assert types_of("I'm so tired, thanks for sorting that out") == []


def test_a_self_description_with_get_says_it_once() -> None:
    assert types_of("I get carsick easily.") == [("user", "User gets carsick easily")]


@pytest.mark.parametrize(
    "clause",
    ["女儿明年 9 月上初中", "老房子下半年要重新装修", "We want the new kiln installed by next spring"],
)
def test_a_plan_dated_without_a_day_is_still_a_dated_plan(clause: str) -> None:
    assert statement_type(clause, DAY) == "project"


def test_a_birthday_without_a_day_is_still_personal() -> None:
    assert statement_type("我妈明年过七十大寿生日", DAY) == "user"


def test_a_directive_naming_the_address_it_sends_the_work_to_is_a_reference() -> None:
    got = types_of("Always upload release builds to artifacts.corp.internal/mobile.")
    assert [t for t, _ in got] == ["reference"]
    assert "artifacts.corp.internal/mobile" in got[0][1]
    got = types_of("合同统一走法务的 legal.corp.internal 审批，不要邮件发。")
    assert got[0][0] == "reference" and "legal.corp.internal" in got[0][1]
    # without an address it stays a rule
    assert [t for t, _ in types_of("Always upload release builds before tagging.")] == ["feedback"]


def test_a_hex_colour_is_no_channel() -> None:
    assert not is_pointer("The brand colours are #1A2B3C and #FACADE")
    assert is_pointer("Deploy notices go to #release-notes")


@pytest.mark.parametrize(
    "clause",
    [
        "For weather I check the station page on meteo.fr",
        "Our shop's orders come in through shopline.io",
        "Priya is the DBA on payments; ask her for anything schema-related",
    ],
)
def test_a_bare_domain_or_the_person_to_ask_is_a_pointer(clause: str) -> None:
    assert statement_type(clause, DAY) == "reference"


@pytest.mark.parametrize("clause", ["We moved the API to ASP.NET last year", "The team standardised on Vue.Draggable"])
def test_a_dotted_tool_name_is_no_domain(clause: str) -> None:
    assert not is_pointer(clause)


@pytest.mark.parametrize("text", ["演示环境的数据全部用假的", "新服务的配置全部写进 Helm chart"])
def test_zh_everything_done_one_way_is_a_rule(text: str) -> None:
    assert [t for t, _ in types_of(text)] == ["feedback"]


@pytest.mark.parametrize(
    "clause", ["项目名叫 shop-admin", "用户名 trail_mia", "The index is called app-logs", "the bucket name is raw-uploads"]
)
def test_the_name_a_thing_goes_by_in_a_tool_is_part_of_the_pointer(clause: str) -> None:
    assert statement_type(clause, DAY) == "reference"


def test_a_pointer_with_the_name_to_look_up_keeps_both_in_one_record() -> None:
    turns = [{"role": "user", "text": "构建日志都看 Buildkite，项目名叫 shop-admin", "timestamp": TS}]
    records = extract({"task": "extract", "today": "2026-11-24", "index": [], "turns": turns})
    assert [r["type"] for r in records] == ["reference"]
    assert "Buildkite" in records[0]["body"] and "shop-admin" in records[0]["body"]


@pytest.mark.parametrize("clause", ["周二是书法课", "星期四有乐团排练"])
def test_zh_what_a_weekday_holds_each_week_is_a_routine_not_a_date(clause: str) -> None:
    assert statement_type(clause, DAY) == "user"
    assert future_dates(clause, DAY) == []


def test_zh_a_weekday_named_once_is_still_a_date() -> None:
    assert future_dates("下周二去体检", DAY) == [dt.date(2026, 12, 1)]


@pytest.mark.parametrize(
    "clause",
    ["SQL is fine but go easy on the window functions", "the old API still works, so don't migrate callers yet"],
)
def test_a_statement_that_ends_in_an_instruction_is_about_how_to_work(clause: str) -> None:
    assert statement_type(clause, DAY) == "feedback"


def test_a_statement_with_but_and_no_instruction_is_not_a_rule() -> None:
    assert statement_type("I love hiking but my knees are bad", DAY) == "user"


def test_who_takes_over_a_topic_named_in_full_is_a_pointer() -> None:
    """A person who covers or takes over a topic is someone to ask, whether named by a first name or
    by a first and last name."""
    for text in ("Rosa Delgado takes over the vendor invoices while I'm away.", "Ivo Petrov handles the print queue."):
        assert [kind for kind, _ in types_of(text)] == ["reference"], text


@pytest.mark.parametrize(
    "text",
    ["Every new endpoint gets a rate limit.", "Every release gets a changelog entry, support reads them."],
)
def test_what_every_instance_of_the_work_gets_is_a_rule(text: str) -> None:
    """"every <thing> gets <something>" binds each instance, as "every <thing> carries …" does."""
    assert [kind for kind, _ in types_of(text)] == ["feedback"]


def test_zh_a_path_after_a_full_width_colon_is_a_pointer() -> None:
    """"…在 NAS 上：/volume2/…": the path the label leads to is where the thing lives, as after a space."""
    assert [kind for kind, _ in types_of("周报的底稿在组里 NAS 上：/volume2/team/weekly.xlsx")] == ["reference"]
