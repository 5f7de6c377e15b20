"""A correcting turn's record (issue 23): kept, and typed as the record it corrects.

A change that names the value it replaces ("…, not 09:00 to 17:00"), typed by no rule of its own,
takes the type of the record holding that value, so the link to it (one of its type) is made and
the job supersedes it; a change no rule takes and no turn marks is kept when it shares two words
with the earlier statement holding a value of its kind, unless it is a fragment or a feeling.
Examples are invented for this test."""

from __future__ import annotations

from pathlib import Path

from dreamd.models.offline.extract.pipeline import extract_from_turns
from tests.test_supersession import _said_in_two_runs

RULE = "Never run deploys outside 09:00 to 17:00 on weekdays."
WIDENED = "The deploy window is 08:00 to 18:00 now, not 09:00 to 17:00."
PERMIT = "A parking permit costs £30 a year for the second car."
RAISED = "the council approved the new charges last night: the second car is £38 from June"


def _run(*texts: str) -> list[dict[str, str]]:
    turns = [{"role": "user" if i % 2 == 0 else "assistant", "text": t, "timestamp": "2026-11-20T10:00:00Z"}
             for i, t in enumerate(texts)]
    return extract_from_turns(turns, today="2026-11-20")


def test_a_change_naming_the_replaced_value_takes_the_type_of_the_record_holding_it() -> None:
    rule, widened = _run(RULE, "Ok.", WIDENED, "Ok.")
    assert rule["type"] == "feedback" and "09:00" in rule["description"]
    assert widened["type"] == "feedback" and "08:00" in widened["description"]  # typed by the record it changes
    assert widened["name"].startswith("rule-") and "**How to apply:**" in widened["body"]
    assert widened["supersedes"] == rule["name"]  # of one type now, so the change names what it replaces


def test_a_change_no_rule_takes_is_kept_when_it_shares_the_subject_of_a_value_of_its_kind() -> None:
    permit, raised = _run(PERMIT, "Ok.", RAISED, "Ok.")
    assert "£30" in permit["description"] and "£38" in raised["description"]
    assert raised["supersedes"] == permit["name"]
    zh = _run("我们的灰度环境 12 月 3 号开。", "好的。", "刚开完会，灰度环境推到 9 号了，证书还没下来", "好的。")
    assert len(zh) == 2 and "灰度环境推到" in zh[1]["description"] and zh[1]["supersedes"] == zh[0]["name"]
    # pasted output sharing the subject's words and a number is a fragment: it states no change, nor supersedes
    for pasted in ("/opt/ledger/service/logs/purge.go:45 +0x2c", "ledger service logs purge.go:45 panic"):
        [only] = _run("Our ledger service keeps 30 days of logs.", "Ok.", pasted, "Ok.")
        assert "30 days" in only["description"]


def test_dreamd_once_supersedes_the_rule_a_mistyped_change_corrects(tmp_path: Path) -> None:
    turns = (RULE, "Ok.", "The release notes go in docs/releases.md.", "Ok.", WIDENED, "Ok.")
    records, superseded = _said_in_two_runs(tmp_path, turns, "The deploy window")  # the rule is changed later
    [widened] = [n for n, r in records.items() if "08:00" in r.description]
    [notes] = [n for n, r in records.items() if "release notes" in r.description.lower()]
    assert len(records) == 2 and records[widened].type == "feedback" and "**Previously:**" not in records[notes].body
    current, _, history = records[widened].body.partition("**Previously:**")
    assert "09:00 to 17:00 on weekdays" not in current and "09:00" in history
    [line] = superseded
    assert line.startswith("superseded never-run-deploys-outside") and line.endswith(f"-> {widened}")
