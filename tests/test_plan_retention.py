"""A model's consolidation plan is untrusted input (issue 21 §6): the retention gate.

The real Anthropic SDK talks to a scripted Messages API on 127.0.0.1 and answers with
well-formed plans — every one passes the answer gate — that drop, truncate, rewrite or demote
facts. Each is refused before anything is committed: the dream ends ``rejected``, the memory
directory is byte for byte what it was, and ``dream.plan_lost_facts`` says what the plan would
have lost. A faithful plan over the same set still commits.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from structlog.testing import capture_logs

from dreamd.config import default_config
from dreamd.jobs.work import Context, dream
from dreamd.models.anthropic_backend import AnthropicModel
from dreamd.models.prompts import PlanRecord
from dreamd.models.retention import plan_losses
from memory.model.answer_gate import PlanOp
from memory.store.records import make_record
from memory.store.transaction import Change, MemoryStore
from tests.fake_anthropic import FakeAnthropic, fake_anthropic, message

__all__ = ["fake_anthropic"]  # the fixture, imported for pytest

TODAY = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)
RECORDS = {
    "deploy-day": ("Deploys happen on Tuesdays", "Deploys happen on Tuesdays.\n"),
    "deploy-owner": ("Platform team owns deploys", "The platform team owns deploys.\n"),
    "editor": ("User edits in Neovim", "The user edits code in Neovim.\n"),
    "ci": ("CI runs on Buildkite", "The CI pipeline runs on Buildkite.\n"),
}


def _result(name: str, body: str) -> dict[str, str]:
    return {"name": name, "type": "project", "description": "How deploys work", "body": body}


BAD_PLANS: dict[str, tuple[list[dict[str, Any]], str, str]] = {
    "drop": ([{"source_names": ["deploy-owner"], "result": None}],
             "deploy-owner", "The platform team owns deploys"),
    "truncate": ([{"source_names": ["deploy-day", "deploy-owner"],
                   "result": _result("deploys", "Deploys happen on Tuesdays.")}],
                 "deploy-owner", "The platform team owns deploys"),
    "rewrite": ([{"source_names": ["deploy-day", "deploy-owner"],
                  "result": _result("deploys", "Deploys happen on Thursdays. The platform team owns deploys.")}],
                "deploy-day", "Deploys happen on Tuesdays"),
    "negate": ([{"source_names": ["deploy-day", "deploy-owner"],
                 "result": _result("deploys", "It is not true that deploys happen on Tuesdays.\n"
                                              "The platform team owns deploys.")}],
               "deploy-day", "Deploys happen on Tuesdays"),
    "negate-inside": ([{"source_names": ["deploy-day", "deploy-owner"],
                        "result": _result("deploys", "Deploys don't happen on Tuesdays. The platform team owns deploys.")}],
                      "deploy-day", "Deploys happen on Tuesdays"),
    "html-comment": ([{"source_names": ["deploy-day", "deploy-owner"],
                       "result": _result("deploys", "<!-- Deploys happen on Tuesdays. The platform team owns deploys. -->\n"
                                                    "Nothing to note.")}],
                     "deploy-owner", "The platform team owns deploys"),
    "no-longer": ([{"source_names": ["deploy-day", "deploy-owner"],
                    "result": _result("deploys", "Deploys no longer happen on Tuesdays.\n"
                                                 "The platform team owns deploys.")}],
                  "deploy-day", "Deploys happen on Tuesdays"),
    "script": ([{"source_names": ["deploy-day", "deploy-owner"],
                 "result": _result("deploys", "Deploys happen on Tuesdays.\n"
                                              "<script>The platform team owns deploys.</script>")}],
               "deploy-owner", "The platform team owns deploys"),
    "template": ([{"source_names": ["deploy-day", "deploy-owner"],
                   "result": _result("deploys", "<template>\nDeploys happen on Tuesdays.\n</template>\n"
                                                "The platform team owns deploys.")}],
                 "deploy-day", "Deploys happen on Tuesdays"),
    "link-definition": ([{"source_names": ["deploy-day", "deploy-owner"],
                          "result": _result("deploys", "Deploys happen on Tuesdays.\n\n"
                                                       "[note]: # (The platform team owns deploys.)")}],
                        "deploy-owner", "The platform team owns deploys"),
    "style": ([{"source_names": ["deploy-day", "deploy-owner"],
                "result": _result("deploys", "<style>/* Deploys happen on Tuesdays. */</style>\n"
                                             "The platform team owns deploys.")}],
              "deploy-day", "Deploys happen on Tuesdays"),
    "never": ([{"source_names": ["deploy-day", "deploy-owner"],
                "result": _result("deploys", "Deploys never happen on Tuesdays. The platform team owns deploys.")}],
              "deploy-day", "Deploys happen on Tuesdays"),
    "demote": ([{"source_names": ["deploy-day", "deploy-owner"],
                 "result": _result("deploys", "The platform team owns deploys.\n"
                                              "**Previously:** Deploys happen on Tuesdays.")}],
               "deploy-day,deploy-owner", "Deploys happen on Tuesdays"),
}


@pytest.fixture
def mdir(tmp_path: Path) -> Path:
    d = tmp_path / "mem"
    store = MemoryStore.init(d)
    store.commit(Change(add=[make_record(n, "project", desc, body) for n, (desc, body) in RECORDS.items()]))
    return d


@pytest.fixture
def ctx(fake_anthropic: FakeAnthropic, monkeypatch: pytest.MonkeyPatch) -> Context:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-0123456789")
    model = AnthropicModel(model="claude-test-model", base_url=fake_anthropic.url, timeout=5.0, max_retries=0)
    return Context(config=default_config(env={"HOME": "/nonexistent"}), model=model, ledger=None,
                   clock=lambda: TODAY)


def _tree(d: Path) -> dict[str, bytes]:
    """Every file of the directory (history included) but the dream lease, with its bytes."""
    out = {}
    for root, _, files in os.walk(d):
        for name in files:
            path = Path(root) / name
            if name != ".dream.lock":
                out[str(path.relative_to(d))] = path.read_bytes()
    return out


@pytest.mark.parametrize("case", sorted(BAD_PLANS))
def test_a_well_formed_plan_that_loses_a_fact_is_refused_and_changes_nothing(
    case: str, mdir: Path, ctx: Context, fake_anthropic: FakeAnthropic
) -> None:
    plan, victim, clause = BAD_PLANS[case]
    fake_anthropic.push(message(json.dumps(plan)))
    before = _tree(mdir)
    with capture_logs() as logs:
        result = dream(mdir, ctx, force=True)
    assert result.status == "rejected", result
    assert "plan would lose facts" in (result.reason or "") and clause in (result.reason or "")
    assert _tree(mdir) == before
    lost = [e for e in logs if e["event"] == "dream.plan_lost_facts"]
    assert lost and lost[0]["memory_dir"] == str(mdir)
    assert any(item["name"] == victim and clause in " ".join(item["clauses"]) for item in lost[0]["lost"]), lost
    assert len(fake_anthropic.requests) == 1  # four records: one batch, too small to split


def test_a_faithful_plan_still_commits(mdir: Path, ctx: Context, fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.push(message(json.dumps([{
        "source_names": ["deploy-day", "deploy-owner"],
        "result": _result("deploys", "Deploys happen on Tuesdays.\nThe platform team owns deploys."),
    }])))
    with capture_logs() as logs:
        result = dream(mdir, ctx, force=True)
    assert result.status == "applied", result
    assert sorted(e.name for e in MemoryStore(mdir).read().records) == ["ci", "deploys", "editor"]
    assert not [e for e in logs if e["event"] == "dream.plan_lost_facts"]


def test_an_expired_record_may_be_dropped(mdir: Path, ctx: Context, fake_anthropic: FakeAnthropic) -> None:
    store = MemoryStore(mdir)
    store.commit(Change(replace={"ci": make_record("ci", "project", "CI runs on Buildkite",
                                                   "The CI pipeline runs on Buildkite.\n",
                                                   extra={"expires": "2026-11-01"})}))
    fake_anthropic.push(message(json.dumps([{"source_names": ["ci"], "result": None}])))
    assert dream(mdir, ctx, force=True).status == "applied"
    assert "ci" not in {e.name for e in store.read().records}


def test_a_batch_that_loses_a_fact_is_left_out_and_the_faithful_batches_commit(
    mdir: Path, ctx: Context, fake_anthropic: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Planned in batches of two: the batch holding ``ci`` is answered with a plan dropping it
    (refused, too small to split: left out, with the reason in the commit's note), the other
    batch's faithful merge of its two records is committed."""
    import dreamd.jobs.work
    from tests.fake_anthropic import Request, ScriptItem

    monkeypatch.setattr(dreamd.jobs.work, "PLAN_BATCH", 2)
    # every record planned, in name order (the pre-candidate batching): what is under test is
    # the gate on each batch, not which records share one
    monkeypatch.setattr(dreamd.jobs.work, "dream_batches",
                        lambda inputs, *_, **__: dreamd.jobs.work.DreamBatches(dreamd.jobs.work.plan_batches(inputs, 2)))

    def respond(req: Request) -> ScriptItem:
        text = json.dumps(req.body)
        batch = sorted(n for n in RECORDS if f'\\"name\\": \\"{n}\\"' in text)
        if "ci" in batch:
            return message(json.dumps([{"source_names": ["ci"], "result": None}]))
        return message(json.dumps([{"source_names": batch, "result": _result(
            "merged", "\n".join(RECORDS[n][1].strip() for n in batch))}]))

    fake_anthropic.responder = respond
    with capture_logs() as logs:
        result = dream(mdir, ctx, force=True)
    assert result.status == "applied", result
    m = MemoryStore(mdir).read()
    assert "ci" in {e.name for e in m.records} and "merged" in {e.name for e in m.records}
    assert len(m.records) == 3
    assert "plan would lose facts" in str(m.change.get("note"))
    assert [e["lost"][0]["name"] for e in logs if e["event"] == "dream.plan_lost_facts"] == ["ci"]


def test_a_plan_may_drop_a_record_a_strictly_newer_one_supersedes_but_not_the_newer_one(
    mdir: Path, ctx: Context, fake_anthropic: FakeAnthropic
) -> None:
    """The gate's other exception (issue 21 §6): a record a strictly newer record of the set
    explicitly supersedes may be dropped. The same drop the other way round (the newer record
    dropped, the older one kept) loses the newer fact and is refused."""
    from datetime import timedelta

    later = MemoryStore(mdir, clock=lambda: datetime.now(UTC) + timedelta(days=1))
    later.commit(Change(add=[make_record("deploy-move", "project", "Deploys moved to Thursdays",
                                         "Deploys moved to Thursdays.\n")]))  # fmt: skip
    before = _tree(mdir)
    fake_anthropic.push(message(json.dumps([{"source_names": ["deploy-move"], "result": None}])))
    refused = dream(mdir, ctx, force=True)
    assert refused.status == "rejected" and "'deploy-move' (dropped)" in (refused.reason or ""), refused
    assert _tree(mdir) == before
    fake_anthropic.push(message(json.dumps([{"source_names": ["deploy-day"], "result": None}])))
    assert dream(mdir, ctx, force=True).status == "applied"
    assert {e.name for e in MemoryStore(mdir).read().records} == {"deploy-move", "deploy-owner", "editor", "ci"}


def test_a_merge_may_say_a_clause_as_a_strictly_newer_record_stopped_it(
    mdir: Path, ctx: Context, fake_anthropic: FakeAnthropic
) -> None:
    """The newer record's own words ("no longer") keep the older clause they stop (design §7):
    the merge into the newer record commits; the same merge with the stop written the day
    before the older record is refused, and changes nothing."""
    from datetime import timedelta

    stop = make_record("deploy-stop", "project", "Deploys stopped on Tuesdays", "Deploys no longer happen on Tuesdays.\n")
    plan = [{"source_names": ["deploy-stop", "deploy-day"],
             "result": _result("deploy-stop", "Deploys no longer happen on Tuesdays.")}]
    earlier = mdir.parent / "earlier"
    MemoryStore.init(earlier, clock=lambda: datetime.now(UTC) - timedelta(days=1)).commit(Change(add=[stop]))
    MemoryStore(earlier).commit(Change(add=[make_record(n, "project", d, b) for n, (d, b) in RECORDS.items()]))
    before = _tree(earlier)
    fake_anthropic.push(message(json.dumps(plan)))
    refused = dream(earlier, ctx, force=True)
    assert refused.status == "rejected" and "'deploy-day'" in (refused.reason or ""), refused
    assert _tree(earlier) == before
    MemoryStore(mdir, clock=lambda: datetime.now(UTC) + timedelta(days=1)).commit(Change(add=[stop]))
    fake_anthropic.push(message(json.dumps(plan)))
    assert dream(mdir, ctx, force=True).status == "applied"
    assert "deploy-day" not in {e.name for e in MemoryStore(mdir).read().records}


def _rec(name: str, body: str, day: int = 1) -> PlanRecord:
    stamp = f"2026-11-{day:02d}T10:00:00Z"
    return PlanRecord(name, "project", body.split(".")[0], body, created_at=stamp, updated_at=stamp)


def _losses(sources: dict[str, str], result: str, days: dict[str, int] | None = None) -> list[str]:
    records = [_rec(n, b, (days or {}).get(n, 1)) for n, b in sources.items()]
    op = PlanOp(tuple(sources), make_record("merged", "project", "Merged", result))
    return [c for loss in plan_losses([op], records, today=TODAY.date()) for c in loss.clauses]


@pytest.mark.parametrize(("sources", "result", "lost"), [
    ({"a": "部署在周二。"}, "部署不在周二。", "部署在周二"),
    ({"a": "部署在周二。"}, "别以为部署在周二。", "部署在周二"),
    ({"a": "Use tabs for indentation."}, "Never use tabs for indentation.", "Use tabs for indentation"),
    ({"a": "Use tabs for indentation."}, "[//]: # (Use tabs for indentation.)\nNothing here.", "Use tabs for indentation"),
    ({"a": "Use tabs for indentation."}, "<style>Use tabs for indentation.</style>", "Use tabs for indentation"),
    ({"a": "周会在周一。"}, "周会不再在周一。", "周会在周一"),
    ({"a": "Use tabs for indentation."}, "Nothing here. <template Use tabs for indentation.", "Use tabs for indentation"),
    ({"a": "Use tabs for indentation."}, "Nothing here.\n\n[x]: /u\n'Use tabs for indentation.'", "Use tabs for indentation"),
    ({"a": "Use tabs for indentation."}, "- Nothing here.\n- [x]: /u\n  (Use tabs for indentation.)", "Use tabs for indentation"),
    ({"a": "Use tabs for indentation."}, "> [x]:\n> /u 'Use tabs for indentation.'\n> Nothing here.", "Use tabs for indentation"),
    ({"a": "Use tabs for indentation."}, "[x]: Use tabs for indentation.", None),
    ({"a": "Use tabs for indentation."}, "Some notes.\n[x]: /u\n'Use tabs for indentation.'", None),
    ({"a": "The build uses Bazel."}, "The build uses Bazel? It isn't so: the build uses Make.", None),
    ({"a": "部署在周二。"}, "部署在周二，不在周五。", None),
    ({"a": "Don't use tabs.", "b": "Use spaces."}, "Don't use tabs, use spaces.", None),
    ({"a": "Deploys happen on Tuesdays."}, "Deploys happen on Tuesdays, not Mondays.", None),
    ({"a": "Never force-push to main."}, "Never force-push to main.", None),
    ({"a": "Use tabs for indentation."}, "Use tabs for indentation <!-- since 2024 -->.", None),
], ids=["zh-negated", "zh-negated-before", "en-never", "link-reference", "style", "zh-no-longer", "tag-left-open",
        "link-title-next-line", "link-in-list-item", "link-in-quote", "not-a-link-definition",
        "definition-cannot-interrupt-a-paragraph", "restated-plainly",
        "zh-negation-after", "negation-in-another-segment", "negation-after", "negation-kept", "comment-aside"])
def test_a_clause_is_still_said_only_plainly_not_negated_or_hidden(
    sources: dict[str, str], result: str, lost: str | None
) -> None:
    losses = _losses(sources, result)
    if lost is None:
        assert losses == []
    else:
        assert any(lost in c for c in losses), losses


SELF = "The billing service no longer pages the SRE channel. The billing service pages the SRE channel."
PAGES, STOPPED = "The billing service pages the SRE channel.", "The billing service no longer pages the SRE channel."


@pytest.mark.parametrize(("sources", "days", "result", "lost"), [
    # the record contradicts itself: its plain clause is held to its own negation, kept
    ({"a": SELF}, {}, STOPPED, None),
    ({"a": SELF, "b": STOPPED}, {"b": 2}, STOPPED, None),
    # ... but not to a negation the record never says
    ({"a": SELF}, {}, "The billing service never pages the SRE channel.", "no longer pages"),
    ({"a": "The billing service pages the SRE channel. The billing service keeps logs."}, {},
     "The billing service never pages the SRE channel. The billing service keeps logs.", "pages the SRE"),
    # a strictly newer record explicitly replaces the clause: the merge may say it the newer way
    ({"a": PAGES, "b": STOPPED}, {"b": 2}, STOPPED, None),
    # an older record, or one of the same time, replaces nothing: the newer fact is contradicted
    ({"a": PAGES, "b": STOPPED}, {"a": 2}, STOPPED, "pages the SRE"),
    ({"a": PAGES, "b": STOPPED}, {}, STOPPED, "pages the SRE"),
], ids=["self", "self-and-restated", "self-other-negation", "plain-negated", "newer-replaces",
        "older-replaces-nothing", "tie-replaces-nothing"])
def test_a_clause_the_set_itself_negates_is_held_to_that_negation(
    sources: dict[str, str], days: dict[str, int], result: str, lost: str | None
) -> None:
    """What the offline dream does with a record that says a clause and its negation, or with
    one a newer record stops (issue 21 §6, the property test's counterexamples): the result
    says the negation the set says, and that is not a loss; any other negation still is."""
    losses = _losses(sources, result, days)
    if lost is None:
        assert losses == []
    else:
        assert any(lost in c for c in losses), losses
