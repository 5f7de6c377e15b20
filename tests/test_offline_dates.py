"""Dates resolve the way the sentence means (issue 23): each clause's date as its own verb tells it,
a date a change moves to as where the event lies now, and a weekday with a day of the month as
the date that has both. Invented sentences only."""

from __future__ import annotations

import datetime as dt

import pytest

from dreamd.models.offline.extract.distractors import told_past
from dreamd.models.offline.extract.pipeline import extract_from_turns
from dreamd.models.offline.text import absolutize_dates


def _said(text: str, today: str) -> str:
    turns = [{"role": "user", "text": text, "timestamp": f"{today}T10:00:00Z"}]
    records = extract_from_turns(turns, today=today)
    return " ".join(r["description"] + " " + r["body"] for r in records)


@pytest.mark.parametrize(
    ("text", "today", "meant", "not_meant"),
    [
        # the moving is past, the date it moves to is not
        ("The conference talk got pushed to the 19th.", "2027-03-10", "2027-03-19", "2027-02-19"),
        ("上线推到 25 号了，客户那边还在走流程", "2027-03-10", "2027-03-25", "2027-02-25"),
        # a past tense in another clause is not the date's
        ("开会定了，项目评审在 26 号，这之前别合大的改动，出了问题来不及修",
         "2027-03-10", "2027-03-26", "2027-02-26"),
        # a change of state is still an event that happened
        ("the outage started on Monday during the load test, that's the one I care about",
         "2027-03-10", "2027-03-08", "2027-03-15"),
        # the past verb governs the date though a present one follows in another clause
        ("Our last migration corrupted the ledger on Friday the 5th, so now every migration "
         "gets a dry run first.", "2027-03-15", "2027-03-05", "Friday the 5th"),
        # the only date near that is both a Thursday and the 15th, whatever tense 过 seems to say
        ("周四 15 号要跟法务过一遍合同。", "2027-04-12", "2027-04-15", "周四 15 号"),
        # a day of the month after a named month is in that month
        ("We arrive in Lisbon on May 3rd and fly home on the 17th.",
         "2027-03-10", "2027-05-17", "2027-03-17"),
    ],
)
def test_a_record_holds_the_date_the_sentence_means(
    text: str, today: str, meant: str, not_meant: str
) -> None:
    said = _said(text, today)
    assert meant in said and not_meant not in said, said


def test_each_clause_resolves_its_dates_by_its_own_tense() -> None:
    ref = dt.date(2027, 3, 10)  # a Wednesday
    text = "the vendor called yesterday, the audit starts on Monday"
    expected = "the vendor called 2027-03-09, the audit starts on 2027-03-15"
    assert absolutize_dates(text, ref, past=told_past) == expected
    shipped = absolutize_dates("we shipped it on Monday", ref, past=told_past)
    assert shipped == "we shipped it on 2027-03-08"
    # a span keeps one tense for both ends; "Friday, March 19" is one date, not two clauses
    assert absolutize_dates("我下周二到周四出差", ref, past=told_past) == "我2027-03-16到2027-03-18出差"
    moved = absolutize_dates("the demo moved to Friday, March 19", ref, past=told_past)
    assert moved == "the demo moved to 2027-03-19"


def test_a_weekday_before_a_day_and_month_is_one_date() -> None:
    """"Thursday 3 December" is the 3rd, a Thursday: not the next Thursday beside it."""
    ref = dt.date(2026, 11, 3)
    assert absolutize_dates("the recital is on Thursday 3 December", ref).endswith("on 2026-12-03")
    said = "the recital is on Friday 3 December"  # no Friday is the 3rd: as said
    assert absolutize_dates(said, ref) == said
