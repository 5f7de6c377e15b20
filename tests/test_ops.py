"""Model operations, prompts, the usage ledger and the backend factory (DESIGN §6)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import MutableMapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from structlog.testing import capture_logs

from dreamd.models import ops
from dreamd.models.factory import make_model
from dreamd.models.prompts import (
    CONSOLIDATE_SYSTEM,
    EXTRACT_SYSTEM,
    PlanRecord,
    consolidate_prompt,
    extract_prompt,
    split_for_cache,
)
from dreamd.models.usage import KEEP_DAYS, UsageLedger, default_ledger_path
from memory.errors import ConfigError, PermanentError, TransientError
from memory.model.llm import Completion, ToolCall, Usage, parse_payload
from memory.store.records import make_record
from tests.helpers.clock import FakeClock

REPO = Path(__file__).resolve().parents[1]
TODAY = date(2026, 11, 29)


@dataclass(frozen=True)
class Turn:
    role: str
    text: str
    timestamp: Any
    message_id: str = "m"


@dataclass(frozen=True)
class Entry:
    name: str
    type: str
    description: str
    created_at: str = "2026-11-01T00:00:00Z"
    updated_at: str = "2026-11-02T00:00:00Z"


@dataclass
class ScriptedModel:
    """A Model that replays completions or raises scripted exceptions, recording prompts."""

    script: list[Completion | Exception]
    name: str = "scripted"
    calls: list[tuple[str, str, int]] = field(default_factory=list)

    def complete(self, system: str, prompt: str, max_tokens: int) -> Completion:
        self.calls.append((system, prompt, max_tokens))
        item = self.script.pop(0)
        if isinstance(item, Exception):
            raise item
        return item


def answer(value: Any, *, stop_reason: str = "end_turn", usage: Usage | None = None) -> Completion:
    text = value if isinstance(value, str) else json.dumps(value)
    return Completion(
        text=text, stop_reason=stop_reason, usage=usage or Usage(100, 20, 5, 7), model="m-1"
    )


def rec(name: str, **over: str) -> dict[str, str]:
    return {
        "name": name,
        "type": "user",
        "description": f"About {name}",
        "body": f"{name} body",
        **over,
    }


TURNS = [
    Turn("user", "我们下周五发布。Remember: deploys happen on Fridays.", "2026-11-27T10:00:00Z"),
    Turn("assistant", "Got it.", datetime(2026, 11, 27, 10, 0, 5, tzinfo=UTC)),
    Turn("user", "Also tabs please.", None),
]
INDEX = [Entry("release-freeze", "project", "Code freeze starts 2026-12-01")]


def events(logs: list[MutableMapping[str, Any]], name: str) -> list[MutableMapping[str, Any]]:
    return [e for e in logs if e["event"] == name]


# ----------------------------------------------------------------------------- prompts


def test_extract_payload_has_exactly_the_shared_shape() -> None:
    system, prompt = extract_prompt(TURNS, INDEX, today=TODAY)
    assert system == EXTRACT_SYSTEM
    assert parse_payload(prompt) == {
        "task": "extract",
        "today": "2026-11-29",
        "index": [
            {
                "name": "release-freeze",
                "type": "project",
                "description": "Code freeze starts 2026-12-01",
            }
        ],
        "turns": [
            {
                "role": "user",
                "text": "我们下周五发布。Remember: deploys happen on Fridays.",
                "timestamp": "2026-11-27T10:00:00Z",
            },
            {"role": "assistant", "text": "Got it.", "timestamp": "2026-11-27T10:00:05Z"},
            {"role": "user", "text": "Also tabs please.", "timestamp": None},
        ],
    }
    assert prompt.endswith("</input>")
    assert "我们下周五发布" in prompt  # not \u-escaped: the model reads the real text


def test_consolidate_payload_has_exactly_the_shared_shape() -> None:
    record = make_record(
        "old-demo",
        "project",
        "Demo day",
        "Demo.",
        extra={"importance": 0.9, "expires": "2026-01-02"},
    )
    entry = Entry("old-demo", "project", "Demo day")
    records = [PlanRecord.of(record, entry), PlanRecord("b", "user", "B", "b\n")]
    system, prompt = consolidate_prompt(records, ["b"], today=TODAY)
    assert system == CONSOLIDATE_SYSTEM
    assert parse_payload(prompt) == {
        "task": "consolidate",
        "today": "2026-11-29",
        "records": [
            {
                "name": "old-demo",
                "type": "project",
                "description": "Demo day",
                "body": "Demo.\n",
                "created_at": "2026-11-01T00:00:00Z",
                "updated_at": "2026-11-02T00:00:00Z",
                "importance": 0.9,
                "expires": "2026-01-02",
            },
            {
                "name": "b",
                "type": "user",
                "description": "B",
                "body": "b\n",
                "created_at": None,
                "updated_at": None,
                "importance": 0.5,
                "expires": None,
            },
        ],
        "recent": ["b"],
    }


def test_system_prompts_are_byte_stable_and_carry_the_contract() -> None:
    s1, _ = extract_prompt(TURNS, INDEX, today=TODAY)
    s2, _ = extract_prompt(TURNS[:1], [], today=TODAY + timedelta(days=40))
    assert s1 == s2
    c1, _ = consolidate_prompt([PlanRecord("a", "user", "A", "a")], [], today=TODAY)
    c2, _ = consolidate_prompt([], ["x"], today=date(2031, 1, 1))
    assert c1 == c2
    for system in (EXTRACT_SYSTEM, CONSOLIDATE_SYSTEM):
        assert "2026-11-29" not in system
        for needle in (
            "user",
            "feedback",
            "project",
            "reference",
            "**Why:**",
            "**How to apply:**",
            "no code fences",
            "YYYY-MM-DD",
        ):
            assert needle in system
    for needle in ("secrets", "git history", "Do not duplicate the index", "Never reuse a name"):
        assert needle in EXTRACT_SYSTEM
    for needle in ("source_names", "null", "kept", "expiry"):
        assert needle in CONSOLIDATE_SYSTEM


def test_system_prompt_examples_pass_the_gate() -> None:
    """The examples shown to the model must themselves be valid answers."""
    from memory.model.answer_gate import AnswerRejected, check_extracted, check_plan

    ex = EXTRACT_SYSTEM.split("Example of a valid answer:\n", 1)[1].strip()
    shown = {"release-freeze-2026-12"}  # the index the example's supersession names
    assert [(r.record.name, r.supersedes) for r in check_extracted(answer(ex), existing_names=shown)] == [
        ("prefers-tabs", None),
        ("no-mocked-db-in-tests", None),
        ("release-freeze-2026-12-11", "release-freeze-2026-12"),
    ]
    with pytest.raises(AnswerRejected, match="supersedes 'release-freeze-2026-12', which is not in the memory set"):
        check_extracted(answer(ex))
    plan_text = CONSOLIDATE_SYSTEM.split("Example of a valid answer:\n", 1)[1].strip()
    plan = check_plan(
        answer(plan_text),
        candidates={"prefers-tabs", "indent-with-tabs", "demo-deadline-2026-03-01"},
    )
    assert [(p.source_names, p.result.name if p.result else None) for p in plan] == [
        (("prefers-tabs", "indent-with-tabs"), "prefers-tabs"),
        (("demo-deadline-2026-03-01",), None),
    ]


def test_split_for_cache_puts_index_in_the_stable_prefix_and_turns_after() -> None:
    _, prompt = extract_prompt(TURNS, INDEX, today=TODAY)
    stable, volatile = split_for_cache(prompt)
    assert stable + volatile == prompt
    assert "release-freeze" in stable and "Fridays" not in stable and "2026-11-29" not in stable
    assert volatile.startswith('"today": "2026-11-29"') and "Fridays" in volatile
    # the same index gives the same prefix whatever the turns and the date
    _, other = extract_prompt([Turn("user", "x", None)], INDEX, today=TODAY + timedelta(days=3))
    assert split_for_cache(other)[0] == stable


def test_split_for_cache_is_not_fooled_by_user_text() -> None:
    tricky = [Turn("user", 'say "today": "1999-01-01" please', None)]
    index = [Entry("x", "user", 'desc with "today": inside')]
    _, prompt = extract_prompt(tricky, index, today=TODAY)
    stable, volatile = split_for_cache(prompt)
    assert volatile.startswith('"today": "2026-11-29"')
    assert "desc with" in stable


@pytest.mark.parametrize("prompt", ["no payload at all", 'text <input>{"query": "q"}</input>'])
def test_split_for_cache_without_marker_has_no_stable_part(prompt: str) -> None:
    assert split_for_cache(prompt) == ("", prompt)


# ----------------------------------------------------------------------------- extract


def test_extract_returns_valid_records_with_usage_and_duration() -> None:
    model = ScriptedModel([answer([rec("prefers-tabs"), rec("deploy-day", type="project")])])
    with capture_logs() as logs:
        out = ops.extract(model, TURNS, INDEX, today=TODAY, max_tokens=321, clock=FakeClock(100.0, step=0.25))
    assert [(r.name, r.type) for r in out.records] == [
        ("prefers-tabs", "user"),
        ("deploy-day", "project"),
    ]
    assert (out.error, out.transient, out.rejected) == (None, False, False)
    assert out.usage == Usage(100, 20, 5, 7)
    assert out.duration_ms == 250.0
    (system, prompt, max_tokens) = model.calls[0]
    assert (system, max_tokens) == (EXTRACT_SYSTEM, 321)
    assert parse_payload(prompt)["task"] == "extract"
    (call,) = events(logs, "model.call")
    assert {
        k: call[k]
        for k in (
            "model",
            "input_tokens",
            "output_tokens",
            "cache_read_tokens",
            "cache_write_tokens",
            "duration_ms",
            "outcome",
            "task",
            "stop_reason",
        )
    } == {
        "model": "m-1",
        "input_tokens": 100,
        "output_tokens": 20,
        "cache_read_tokens": 5,
        "cache_write_tokens": 7,
        "duration_ms": 250.0,
        "outcome": "ok",
        "task": "extract",
        "stop_reason": "end_turn",
    }
    assert events(logs, "model.answer_rejected") == []


def test_extract_without_turns_makes_no_call() -> None:
    model = ScriptedModel([])
    out = ops.extract(model, [], INDEX, today=TODAY, max_tokens=100)
    assert (out.records, out.error, out.usage) == ([], None, Usage())
    assert model.calls == []


@pytest.mark.parametrize(
    ("completion", "reason"),
    [
        (answer([rec("a"), rec("a")]), "extraction item 1: name 'a' repeats in the batch"),
        (
            answer([rec("release-freeze")]),
            "extraction item 0: name 'release-freeze' already exists in the memory set",
        ),
        (
            answer([rec("a"), rec("b", mood="happy")]),
            "extraction item 1: record fields must be exactly name, type, description, body (unexpected mood)",
        ),
        (
            answer("```json\n[]\n```"),
            "answer is not JSON (Expecting value at char 0): '```json [] ```'",
        ),
        (
            answer([rec("a")], stop_reason="max_tokens"),
            "answer was truncated (stop_reason max_tokens)",
        ),
        (
            Completion("[]", "tool_use", (ToolCall("remember", {}),), Usage(3, 1)),
            "answer contains 1 tool call(s) (remember)",
        ),
    ],
    ids=["duplicate", "existing", "extra-key", "fence", "max-tokens", "tool-call"],
)
def test_extract_rejection_is_a_value_with_its_reason_logged(
    completion: Completion, reason: str
) -> None:
    model = ScriptedModel([completion])
    with capture_logs() as logs:
        out = ops.extract(model, TURNS, INDEX, today=TODAY, max_tokens=100)
    assert out.records == []
    assert out.error == reason
    assert out.rejected and not out.transient
    assert out.usage == completion.usage
    (rejected,) = events(logs, "model.answer_rejected")
    assert rejected["reason"] == reason and rejected["task"] == "extract"
    assert events(logs, "model.call")[0]["outcome"] == "rejected"


def test_extract_limit_is_passed_to_the_gate() -> None:
    items = [rec(f"r{i}") for i in range(3)]
    assert (
        len(
            ops.extract(
                ScriptedModel([answer(items)]), TURNS, [], today=TODAY, max_tokens=9
            ).records
        )
        == 3
    )
    out = ops.extract(ScriptedModel([answer(items)]), TURNS, [], today=TODAY, max_tokens=9, limit=2)
    assert out.error == "extraction answer has 3 records, limit is 2"


@pytest.mark.parametrize(
    ("exc", "transient", "error"),
    [
        (TransientError("model m: HTTP 529: Overloaded"), True, "model m: HTTP 529: Overloaded"),
        (PermanentError("model m: HTTP 400: bad"), False, "PermanentError: model m: HTTP 400: bad"),
        (
            RuntimeError("backend bug\nwith two lines"),
            False,
            "RuntimeError: backend bug with two lines",
        ),
    ],
    ids=["transient", "permanent", "bug"],
)
def test_backend_failures_never_raise_and_say_whether_to_retry(
    exc: Exception, transient: bool, error: str
) -> None:
    with capture_logs() as logs:
        out = ops.extract(
            ScriptedModel([exc]), TURNS, INDEX, today=TODAY, max_tokens=100, clock=FakeClock(100.0, step=1.0)
        )
        plan_out = ops.plan(
            ScriptedModel([exc]),
            [PlanRecord("a", "user", "A", "a")],
            [],
            today=TODAY,
            max_tokens=100,
        )
    assert (out.records, out.error, out.transient, out.rejected) == ([], error, transient, False)
    assert (plan_out.ops, plan_out.error, plan_out.transient, plan_out.rejected) == (
        [],
        error,
        transient,
        False,
    )
    assert out.usage == Usage() and out.duration_ms == 1000.0
    calls = events(logs, "model.call")
    assert [c["outcome"] for c in calls] == ["transient" if transient else "error"] * 2
    assert [e["error"] for e in events(logs, "model.error")] == [error, error]


# ----------------------------------------------------------------------------- plan

RECORDS = [
    PlanRecord(
        "prefers-tabs", "user", "Tabs", "Tabs.\n", "2026-01-01T00:00:00Z", "2026-01-01T00:00:00Z"
    ),
    PlanRecord("tabs-again", "user", "Tabs again", "Tabs!\n"),
    PlanRecord("keep-me", "reference", "Tracker", "Linear project X.\n", importance=0.9),
]


def test_plan_returns_ops_over_candidates() -> None:
    plan_answer = [{"source_names": ["prefers-tabs", "tabs-again"], "result": rec("prefers-tabs")}]
    model = ScriptedModel([answer(plan_answer)])
    out = ops.plan(model, RECORDS, ["tabs-again"], today=TODAY, max_tokens=2000)
    assert out.error is None and len(out.ops) == 1
    assert out.ops[0].source_names == ("prefers-tabs", "tabs-again")
    assert out.ops[0].result is not None and out.ops[0].result.body == "prefers-tabs body\n"
    payload = parse_payload(model.calls[0][1])
    assert payload["recent"] == ["tabs-again"] and [r["name"] for r in payload["records"]] == [
        "prefers-tabs",
        "tabs-again",
        "keep-me",
    ]
    assert model.calls[0][0] == CONSOLIDATE_SYSTEM


@pytest.mark.parametrize(
    ("plan_answer", "reason"),
    [
        (
            [{"source_names": ["ghost"], "result": None}],
            "plan op 0: source 'ghost' is not a candidate record",
        ),
        (
            [{"source_names": ["prefers-tabs"], "result": rec("keep-me")}],
            "plan op 0: result name 'keep-me' collides with a kept record",
        ),
        (
            [
                {"source_names": ["prefers-tabs"], "result": None},
                {"source_names": ["prefers-tabs"], "result": None},
            ],
            "plan op 1: source 'prefers-tabs' appears more than once in the plan",
        ),
    ],
    ids=["unknown-source", "overwrites-kept", "source-twice"],
)
def test_plan_rejection_keeps_everything(plan_answer: Any, reason: str) -> None:
    with capture_logs() as logs:
        out = ops.plan(
            ScriptedModel([answer(plan_answer)]), RECORDS, [], today=TODAY, max_tokens=100
        )
    assert (out.ops, out.error, out.rejected, out.transient) == ([], reason, True, False)
    assert events(logs, "model.answer_rejected")[0]["reason"] == reason


def test_plan_without_records_makes_no_call() -> None:
    model = ScriptedModel([])
    out = ops.plan(model, [], ["x"], today=TODAY, max_tokens=100)
    assert (out.ops, out.error) == ([], None) and model.calls == []


# ----------------------------------------------------------------------------- usage ledger


def at(day: int, hour: int = 12, tz: timezone = UTC) -> datetime:
    return datetime(2026, 11, day, hour, 0, tzinfo=tz)


def test_ledger_totals_and_spend_per_utc_day(tmp_path: Path) -> None:
    ledger = UsageLedger(tmp_path / "usage.json")
    ledger.record("/a", Usage(100, 10, 1000, 50), now=at(28, 23))
    ledger.record("/a", Usage(1, 2, 3, 4), now=at(29, 1))
    # 23:30 in UTC-5 is 04:30 UTC on the next day
    ledger.record(
        "/a",
        Usage(7, 0, 0, 0),
        now=datetime(2026, 11, 28, 23, 30, tzinfo=timezone(timedelta(hours=-5))),
    )
    ledger.record("/b", Usage(5, 5), now=at(29))
    assert ledger.spent_today("/a", now=at(28, 9)) == 1160
    assert ledger.spent_today("/a", now=at(29, 22)) == 10 + 7
    assert ledger.spent_today("/b", now=at(29)) == 10
    assert ledger.spent_today("/nobody", now=at(29)) == 0
    assert ledger.totals("/a") == {
        "calls": 3,
        "input_tokens": 108,
        "output_tokens": 12,
        "cache_read_tokens": 1003,
        "cache_write_tokens": 54,
    }
    assert ledger.totals("/nobody")["calls"] == 0
    assert UsageLedger(tmp_path / "usage.json").totals("/b")["input_tokens"] == 5  # persisted


def test_ledger_keeps_only_recent_days(tmp_path: Path) -> None:
    path = tmp_path / "usage.json"
    ledger = UsageLedger(path)
    start = datetime(2026, 10, 1, 12, tzinfo=UTC)
    for i in range(30):
        ledger.record("/a", Usage(1), now=start + timedelta(days=i))
    days = json.loads(path.read_text())["dirs"]["/a"]["days"]
    assert sorted(days) == [
        (start + timedelta(days=i)).date().isoformat() for i in range(30 - KEEP_DAYS, 30)
    ]
    assert ledger.totals("/a")["calls"] == 30
    assert oct_mode(path) == 0o600


def oct_mode(path: Path) -> int:
    return path.stat().st_mode & 0o777


def test_corrupt_ledger_is_set_aside_not_fatal(tmp_path: Path) -> None:
    path = tmp_path / "usage.json"
    path.write_text('{"format": 1, "dirs": {"/a": {"totals": {"calls": "many"}}}}')
    ledger = UsageLedger(path)
    with capture_logs() as logs:
        assert ledger.spent_today("/a", now=at(29)) == 0
        ledger.record("/a", Usage(2, 3), now=at(29))
    assert ledger.totals("/a")["calls"] == 1 and ledger.spent_today("/a", now=at(29)) == 5
    assert (tmp_path / "usage.json.corrupt").read_text().startswith('{"format": 1')
    assert [e["event"] for e in logs].count("usage.ledger_corrupt") == 2


def test_default_ledger_path_follows_xdg_state_home(tmp_path: Path) -> None:
    assert (
        default_ledger_path({"XDG_STATE_HOME": str(tmp_path)}) == tmp_path / "dreamd" / "usage.json"
    )
    assert default_ledger_path({}) == Path.home() / ".local" / "state" / "dreamd" / "usage.json"


def test_ledger_concurrent_writers_lose_no_update(tmp_path: Path) -> None:
    path = tmp_path / "state" / "usage.json"
    code = (
        "import sys; from datetime import datetime, UTC; from pathlib import Path;"
        "from dreamd.models.usage import UsageLedger; from memory.model.llm import Usage;"
        "led = UsageLedger(Path(sys.argv[1]));"
        "[led.record('/shared', Usage(1, 1), now=datetime(2026, 11, 29, tzinfo=UTC)) for _ in range(25)]"
    )
    procs = [subprocess.Popen([sys.executable, "-c", code, str(path)], cwd=REPO) for _ in range(3)]
    assert [p.wait(timeout=60) for p in procs] == [0, 0, 0]
    ledger = UsageLedger(path)
    assert ledger.totals("/shared")["calls"] == 75
    assert ledger.spent_today("/shared", now=datetime(2026, 11, 29, 8, tzinfo=UTC)) == 150


# ----------------------------------------------------------------------------- factory


def test_make_model_rejects_unknown_backend() -> None:
    with pytest.raises(
        ConfigError,
        match=r"\[model\] backend: unknown backend 'gpt'; expected one of offline, anthropic",
    ):
        make_model({"backend": "gpt"})


def test_make_model_offline_is_default_and_does_not_need_a_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pytest.importorskip("dreamd.models.offline.model")
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    model = make_model({})
    assert model.name == "offline"
    assert make_model({"backend": "offline", "model": "ignored"}).name == "offline"


def test_make_model_accepts_the_config_dataclass(monkeypatch: pytest.MonkeyPatch) -> None:
    from dreamd.config import ModelConfig

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    cfg = ModelConfig(
        backend="anthropic",
        model="claude-x",
        base_url="http://127.0.0.1:9",
        timeout=1.0,
        max_retries=0,
        max_tokens=10,
    )
    model = make_model(cfg)
    assert model.name == "claude-x"


def test_offline_backend_answers_pass_the_gate() -> None:
    """The shared payload contract: the offline backend reads what the prompts write."""
    pytest.importorskip("dreamd.models.offline.model")
    model = make_model({"backend": "offline"})
    turns = [
        Turn(
            "user",
            "Please remember that I prefer tabs over spaces for indentation.",
            "2026-11-27T10:00:00Z",
        )
    ]
    out = ops.extract(model, turns, [], today=TODAY, max_tokens=4096)
    assert out.error is None, out.error
    assert [r.type for r in out.records] == ["user"] and "tabs" in out.records[0].description
    paraphrase = PlanRecord(
        "tabs-pref", "user", "User prefers tabs over spaces for indentation", "Tabs, not spaces.\n"
    )
    candidates = [PlanRecord.of(r) for r in out.records] + [paraphrase]
    plan_out = ops.plan(model, candidates, [out.records[0].name], today=TODAY, max_tokens=4096)
    assert plan_out.error is None, plan_out.error
