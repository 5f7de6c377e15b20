"""The strict answer gate: every rule of every check, table-driven (DESIGN §6)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from memory.model.answer_gate import (
    MAX_DEPTH,
    AnswerRejected,
    PlanOp,
    check_completion,
    check_extracted,
    check_plan,
    check_selection,
    parse_json_strict,
)
from memory.model.llm import Completion, ToolCall
from memory.store.records import Record


def done(
    text: str, stop_reason: str | None = "end_turn", tools: tuple[ToolCall, ...] = ()
) -> Completion:
    return Completion(text=text, stop_reason=stop_reason, tool_calls=tools)


def rec(name: str = "prefers-tabs", **over: Any) -> dict[str, Any]:
    item: dict[str, Any] = {
        "name": name,
        "type": "user",
        "description": "User prefers tabs",
        "body": "Use tabs.",
    }
    item.update(over)
    return item


def as_text(value: Any) -> str:
    return json.dumps(value)


# ----------------------------------------------------------------------------- envelope


def test_check_completion_returns_text_of_a_complete_answer() -> None:
    assert check_completion(done(' ["a"] ')) == ' ["a"] '


@pytest.mark.parametrize(
    ("completion", "reason"),
    [
        (done("[]", tools=(ToolCall("search", {"q": "x"}),)), "1 tool call(s) (search)"),
        (done("[]", stop_reason="max_tokens"), "truncated (stop_reason max_tokens)"),
        (done("[]", stop_reason="tool_use"), "stop_reason is 'tool_use'"),
        (done("[]", stop_reason="stop_sequence"), "stop_reason is 'stop_sequence'"),
        (done("[]", stop_reason="refusal"), "stop_reason is 'refusal'"),
        (done("[]", stop_reason=None), "stop_reason is None"),
        (done(""), "answer text is empty"),
        (done(" \n\t "), "answer text is empty"),
    ],
    ids=[
        "tool-call",
        "max-tokens",
        "tool-use-stop",
        "stop-sequence",
        "refusal",
        "no-stop",
        "empty",
        "blank",
    ],
)
def test_check_completion_rejects(completion: Completion, reason: str) -> None:
    with pytest.raises(AnswerRejected) as info:
        check_completion(completion)
    assert reason in str(info.value)
    assert "\n" not in str(info.value)


def test_max_tokens_stop_is_rejected_even_when_text_parses() -> None:
    good = as_text([rec()])
    assert check_extraction(done(good))[0].name == "prefers-tabs"
    with pytest.raises(AnswerRejected, match="truncated"):
        check_extraction(done(good, stop_reason="max_tokens"))


# ----------------------------------------------------------------------------- strict JSON


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("[]", []),
        ('  \n["a", 1, null, true]\n ', ["a", 1, None, True]),
        ('{"k": {"j": [1.5]}}', {"k": {"j": [1.5]}}),
        ('"just a string"', "just a string"),
        ('["brackets [ and { inside ] strings }"]', ["brackets [ and { inside ] strings }"]),
        ('["escaped \\" quote ["]', ['escaped " quote [']),
    ],
)
def test_parse_json_strict_accepts_whole_json(text: str, value: Any) -> None:
    assert parse_json_strict(text) == value


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ('```json\n["a"]\n```', "not JSON"),
        ('```\n["a"]\n```', "not JSON"),
        ('Here you go: ["a"]', "not JSON"),
        ('["a"]\nHope this helps!', "Extra data"),
        ('["a"] ["b"]', "Extra data"),
        ("['a']", "not JSON"),
        ('["a",]', "not JSON"),
        ('{"a": 1} // comment', "Extra data"),
        ("[NaN]", "NaN"),
        ("[Infinity]", "Infinity"),
        ("[-Infinity]", "-Infinity"),
        ('{"a": 1, "a": 2}', "repeats key 'a'"),
        ("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1), f"deeper than {MAX_DEPTH}"),
        ("[" * 100_000, f"deeper than {MAX_DEPTH}"),
        ("", "empty"),
    ],
    ids=[
        "json-fence",
        "bare-fence",
        "prose-before",
        "prose-after",
        "two-values",
        "single-quotes",
        "trailing-comma",
        "comment",
        "nan",
        "infinity",
        "neg-infinity",
        "duplicate-key",
        "too-deep",
        "very-deep-unclosed",
        "empty",
    ],
)
def test_parse_json_strict_rejects(text: str, reason: str) -> None:
    with pytest.raises(AnswerRejected) as info:
        parse_json_strict(text)
    assert reason in str(info.value)
    assert "\n" not in str(info.value)


def test_parse_json_strict_accepts_exactly_max_depth() -> None:
    text = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    value = parse_json_strict(text)
    for _ in range(MAX_DEPTH - 1):
        value = value[0]
    assert value == []


# ----------------------------------------------------------------------------- extraction


def check_extraction(c: Completion, **kwargs: Any) -> list[Record]:
    return [item.record for item in check_extracted(c, **kwargs)]


def test_check_extraction_returns_normalised_records() -> None:
    items = [
        rec(),
        rec(
            "release-freeze",
            type="project",
            description="Freeze on 2026-12-01",
            body="No merges.\n\n",
        ),
    ]
    records = check_extraction(done(as_text(items)))
    assert [(r.name, r.type, r.description, r.body) for r in records] == [
        ("prefers-tabs", "user", "User prefers tabs", "Use tabs.\n"),
        ("release-freeze", "project", "Freeze on 2026-12-01", "No merges.\n"),
    ]


def test_check_extraction_accepts_empty_array() -> None:
    assert check_extraction(done("[]")) == []


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        ({"name": "x"}, "must be a JSON array, got object"),
        ("null", "must be a JSON array, got null"),
        (["prefers-tabs"], "item 0: record must be an object, got str"),
        (
            [rec(), rec("b", extra="x")],
            "item 1: record fields must be exactly name, type, description, body (unexpected extra)",
        ),
        (
            [rec(), {k: v for k, v in rec("b").items() if k != "body"}],
            "item 1: record fields must be exactly name, type, description, body (missing body)",
        ),
        (
            [rec(type="preference")],
            "item 0: type 'preference' is not one of user, feedback, project, reference",
        ),
        ([rec(name="Prefers Tabs")], "item 0: name 'Prefers Tabs' must match"),
        ([rec(name="-lead")], "item 0: name '-lead' must match"),
        ([rec(name="a" * 65)], "must match"),
        ([rec(description="")], "item 0: description is empty"),
        ([rec(description="two\nlines")], "item 0: description must be one line"),
        ([rec(description="d" * 1025)], "item 0: description over 1024 characters"),
        ([rec(body="  \n")], "item 0: body is empty"),
        ([rec(body="x" * (64 * 1024 + 1))], "item 0: body over 65536 bytes"),
        ([rec(body=["not", "a", "string"])], "item 0: body must be a string"),
        ([rec(type=None)], "item 0: type must be a string"),
        ([rec("same"), rec("other"), rec("same")], "item 2: name 'same' repeats in the batch"),
    ],
    ids=[
        "object-not-array",
        "null",
        "string-item",
        "extra-key",
        "missing-key",
        "unknown-type",
        "name-not-slug",
        "name-leading-dash",
        "name-too-long",
        "empty-description",
        "multiline-description",
        "long-description",
        "empty-body",
        "huge-body",
        "body-not-string",
        "type-null",
        "duplicate-name",
    ],
)
def test_check_extraction_one_bad_item_rejects_the_batch(answer: Any, reason: str) -> None:
    text = answer if isinstance(answer, str) else as_text(answer)
    with pytest.raises(AnswerRejected) as info:
        check_extraction(done(text))
    assert reason in str(info.value)
    assert "\n" not in str(info.value)


def test_check_extraction_refuses_names_already_in_the_set() -> None:
    text = as_text([rec("new-one"), rec("prefers-tabs")])
    assert len(check_extraction(done(text), existing_names={"other"})) == 2
    with pytest.raises(AnswerRejected, match="item 1: name 'prefers-tabs' already exists"):
        check_extraction(done(text), existing_names={"prefers-tabs"})


def test_check_extraction_limit() -> None:
    items = [rec(f"r{i}") for i in range(4)]
    assert len(check_extraction(done(as_text(items)), limit=4)) == 4
    with pytest.raises(AnswerRejected, match="has 4 records, limit is 3"):
        check_extraction(done(as_text(items)), limit=3)


def test_check_extraction_applies_envelope_rules() -> None:
    with pytest.raises(AnswerRejected, match="tool call"):
        check_extraction(done(as_text([rec()]), tools=(ToolCall("save", {}),)))


# ----------------------------------------------------------------------------- plan

CANDIDATES = {"a", "b", "c", "d"}


def op(sources: Any, result: Any) -> dict[str, Any]:
    return {"source_names": sources, "result": result}


def test_check_plan_valid_merge_delete_and_rewrite() -> None:
    plan = [
        op(["a", "b"], rec("a")),  # merge; result reuses one of its own sources
        op(["c"], None),  # delete
        op(["d"], rec("d-clearer")),  # rewrite under a new name
    ]
    ops = check_plan(done(as_text(plan)), candidates=CANDIDATES)
    assert [(o.source_names, o.result.name if o.result else None) for o in ops] == [
        (("a", "b"), "a"),
        (("c",), None),
        (("d",), "d-clearer"),
    ]
    assert isinstance(ops[0], PlanOp)
    assert ops[0].result is not None and ops[0].result.body == "Use tabs.\n"


def test_check_plan_empty_plan_keeps_everything() -> None:
    assert check_plan(done("[]"), candidates=CANDIDATES) == []


def test_check_plan_result_may_take_a_name_consumed_by_another_op() -> None:
    plan = [op(["a"], rec("b")), op(["b"], None)]
    ops = check_plan(done(as_text(plan)), candidates=CANDIDATES)
    assert [o.result.name if o.result else None for o in ops] == ["b", None]


@pytest.mark.parametrize(
    ("plan", "reason"),
    [
        (
            {"source_names": ["a"], "result": None},
            "consolidation plan must be a JSON array, got object",
        ),
        (["a"], "plan op 0: must be an object, got string"),
        (
            [{"source_names": ["a"]}],
            "plan op 0: keys must be exactly source_names, result (missing result)",
        ),
        (
            [{"source_names": ["a"], "result": None, "why": "dup"}],
            "plan op 0: keys must be exactly source_names, result (unexpected why)",
        ),
        ([{"sources": ["a"], "result": None}], "(missing source_names; unexpected sources)"),
        ([op([], None)], "plan op 0: source_names must be a non-empty array"),
        ([op("a", None)], "plan op 0: source_names must be a non-empty array"),
        ([op(["a", 3], None)], "plan op 0: source_names must hold strings, got number"),
        ([op(["a", "zzz"], None)], "plan op 0: source 'zzz' is not a candidate record"),
        ([op(["a", "a"], rec("a"))], "plan op 0: source 'a' appears more than once"),
        ([op(["a"], None), op(["b", "a"], None)], "plan op 1: source 'a' appears more than once"),
        ([op(["a"], rec("a", type="misc"))], "plan op 0 result: type 'misc' is not one of"),
        ([op(["a"], rec("a", extra=1))], "plan op 0 result: record fields must be exactly"),
        ([op(["a"], "merged")], "plan op 0 result: record must be an object, got str"),
        (
            [op(["a"], rec("x")), op(["b"], rec("x"))],
            "plan op 1: result name 'x' repeats in the plan",
        ),
        ([op(["a"], rec("c"))], "plan op 0: result name 'c' collides with a kept record"),
    ],
    ids=[
        "not-array",
        "op-not-object",
        "missing-result",
        "extra-key",
        "wrong-key",
        "empty-sources",
        "sources-not-array",
        "source-not-string",
        "unknown-source",
        "source-twice-in-op",
        "source-in-two-ops",
        "bad-result-type",
        "result-extra-key",
        "result-not-object",
        "duplicate-result-names",
        "result-overwrites-kept",
    ],
)
def test_check_plan_rejects(plan: Any, reason: str) -> None:
    with pytest.raises(AnswerRejected) as info:
        check_plan(done(as_text(plan)), candidates=CANDIDATES)
    assert reason in str(info.value)
    assert "\n" not in str(info.value)


def test_check_plan_applies_envelope_rules() -> None:
    with pytest.raises(AnswerRejected, match="truncated"):
        check_plan(done("[]", stop_reason="max_tokens"), candidates=CANDIDATES)


# ----------------------------------------------------------------------------- selection

KNOWN = {"a", "b", "c", "d", "e", "f"}


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("[]", []),
        ('["c", "a"]', ["c", "a"]),
        ('["a", "b", "c", "d", "e"]', ["a", "b", "c", "d", "e"]),
    ],
)
def test_check_selection_keeps_order(text: str, names: list[str]) -> None:
    assert check_selection(done(text), known=KNOWN) == names


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ('{"names": ["a"]}', "selection must be a JSON array, got object"),
        ('["a", "b", "c", "d", "e", "f"]', "selection has 6 names, limit is 5"),
        ('["a", "zzz"]', "selection item 1: 'zzz' is not a known record"),
        ('["a", "a"]', "selection item 1: 'a' is selected twice"),
        ('["a", 2]', "selection item 1 must be a string, got number"),
        ('[["a"]]', "selection item 0 must be a string, got array"),
        ('Relevant: ["a"]', "not JSON"),
        ('```json\n["a"]\n```', "not JSON"),
    ],
    ids=["object", "over-limit", "unknown", "duplicate", "number", "nested", "prose", "fence"],
)
def test_check_selection_rejects(text: str, reason: str) -> None:
    with pytest.raises(AnswerRejected) as info:
        check_selection(done(text), known=KNOWN)
    assert reason in str(info.value)


def test_check_selection_custom_limit_and_envelope() -> None:
    assert check_selection(done('["a", "b"]'), known=KNOWN, limit=2) == ["a", "b"]
    with pytest.raises(AnswerRejected, match="limit is 1"):
        check_selection(done('["a", "b"]'), known=KNOWN, limit=1)
    with pytest.raises(AnswerRejected, match="tool call"):
        check_selection(done('["a"]', tools=(ToolCall("t", None),)), known=KNOWN)


def test_rejection_is_a_dreamd_error() -> None:
    from memory.errors import DreamdError

    assert issubclass(AnswerRejected, DreamdError)


def test_an_extraction_item_may_name_the_record_it_supersedes_only_if_the_set_holds_it() -> None:
    item = rec()
    text = as_text([{**item, "supersedes": "old-tabs"}])
    [got] = check_extracted(done(text), existing_names={"old-tabs"})
    assert (got.record.name, got.supersedes) == (item["name"], "old-tabs")
    assert check_extracted(done(as_text([item])))[0].supersedes is None
    with pytest.raises(AnswerRejected, match="supersedes 'old-tabs', which is not in the memory set"):
        check_extracted(done(text), existing_names={"other"})
    twice = as_text([{**item, "supersedes": "old-tabs"}, {**item, "name": "b", "supersedes": "old-tabs"}])
    with pytest.raises(AnswerRejected, match="which another item already supersedes"):
        check_extracted(done(twice), existing_names={"old-tabs"})
    with pytest.raises(AnswerRejected, match="supersedes must be a string, got null"):
        check_extracted(done(as_text([{**item, "supersedes": None}])))
