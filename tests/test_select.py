"""Selection: the tokenizer, the keyword index and the strict gate on a model's selection."""

from __future__ import annotations

import random
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from memory.model.llm import Completion, ToolCall, parse_payload
from memory.retrieval.select import (
    MODEL_CANDIDATES,
    AnswerRejected,
    Candidate,
    KeywordIndex,
    check_selection,
    keyword_select,
    model_select,
    plain_tokens,
    selection_prompt,
    stem,
    tokenize,
)
from memory.store.records import parse_record


@dataclass
class ScriptedModel:
    """A Model that answers with scripted completions (or raises) and records its prompts."""

    answers: list[Completion | Exception]
    name: str = "scripted"
    prompts: list[tuple[str, str, int]] = field(default_factory=list)

    def complete(self, system: str, prompt: str, max_tokens: int) -> Completion:
        self.prompts.append((system, prompt, max_tokens))
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer


def ok(text: str) -> Completion:
    return Completion(text=text, stop_reason="end_turn")


CANDIDATES = [
    Candidate("prefers-tabs", "user", "User prefers tabs for indentation"),
    Candidate("deploy-staging", "project", "Staging deploys run through the release script"),
    Candidate("bug-tracker", "reference", "Bugs are tracked in the Linear project INGEST"),
    Candidate("no-mocks", "feedback", "Integration tests must hit a real database, not mocks"),
]
KNOWN = {c.name for c in CANDIDATES}


# ----------------------------------------------------------------------------- tokenizer


def test_tokenize_english_lowercases_drops_stopwords_and_stems() -> None:
    assert tokenize("The User's Preferences: painting, painted PAINTS") == ["prefer", "paint", "paint", "paint"]
    assert tokenize("a an to go is it") == []
    assert tokenize("Deploy on 2023-05-07 via k8s v2") == ["deploy", "2023-05-07", "2023", "via", "k8s"]


def test_tokenize_chinese_gives_character_bigrams_and_splits_from_latin() -> None:
    assert tokenize("我们喜欢制表符") == ["们喜", "喜欢", "欢制", "制表", "表符"]  # 我们 says nothing
    assert tokenize("使用tabs缩进") == ["使用", "tab", "缩进"]
    assert tokenize("我") == ["我"]
    assert tokenize("名字叫 Alex，喜欢打篮球") == ["名字", "字叫", "alex", "喜欢", "欢打", "打篮", "篮球"]


def test_plain_tokens_keep_design_rule_without_stemming_or_stopwords() -> None:
    assert plain_tokens("The paints, 用户喜欢 ok") == ["the", "paints", "用户", "户喜", "喜欢"]


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("stories", "stori"),
        ("running", "run"),
        ("classes", "class"),
        ("boxes", "box"),
        ("makes", "make"),
        ("making", "make"),
        ("status", "status"),
        ("indentation", "indent"),
        ("use", "use"),
        ("bed", "bed"),
        ("café", "café"),
    ],
)
def test_stem_is_snowball_english(word: str, expected: str) -> None:
    assert stem(word) == expected


def test_a_query_finds_a_record_that_says_another_form_of_its_word() -> None:
    cands = [
        Candidate("style-indentation", "feedback", "Indentation is four spaces, never tabs"),
        Candidate("ci-lint", "project", "Lint runs before every merge"),
        Candidate("release-helm", "project", "Releases go out through a Helm chart"),
        Candidate("deployment-window", "project", "Deployments happen on Tuesday mornings"),
    ]
    assert keyword_select("how should I indent my code?", cands, 1) == ["style-indentation"]
    assert keyword_select("when do we deploy?", cands, 1) == ["deployment-window"]


def test_an_index_state_from_another_tokenizer_version_is_refused() -> None:
    """The hook keeps an index on disk between prompts: one built by an older tokenizer
    holds terms a query no longer makes, so it must be rebuilt, never trusted."""
    state = KeywordIndex([Candidate("style-indentation", "feedback", "Indentation is four spaces")]).state()
    assert KeywordIndex.from_state(state).select("indent", 1) == ["style-indentation"]
    with pytest.raises(ValueError, match="tokenizer version"):
        KeywordIndex.from_state((state[0] - 1, *state[1:]))  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        KeywordIndex.from_state(state[1:])  # type: ignore[arg-type]  # before versions


# ----------------------------------------------------------------------------- keyword index


def test_keyword_select_finds_by_description_and_name() -> None:
    assert keyword_select("how do we deploy to staging?", CANDIDATES) == ["deploy-staging"]
    assert keyword_select("indentation: tabs or spaces", CANDIDATES) == ["prefers-tabs"]
    assert keyword_select("tracker", CANDIDATES) == ["bug-tracker"]  # only in the name


def test_keyword_select_returns_nothing_when_no_term_is_shared() -> None:
    assert keyword_select("what is the weather like", CANDIDATES) == []
    assert keyword_select("", CANDIDATES) == []
    assert keyword_select("tabs", []) == []
    assert keyword_select("tabs", CANDIDATES, limit=0) == []


def test_keyword_ties_break_by_importance_then_name_whatever_the_input_order() -> None:
    cands = [
        Candidate("zeta", "project", "coffee order"),
        Candidate("alpha", "project", "coffee order"),
        Candidate("mike", "project", "coffee order"),
        Candidate("bravo", "project", "coffee order", importance=0.9),
    ]
    expected = ["bravo", "alpha", "mike", "zeta"]
    assert keyword_select("coffee", cands) == expected
    rng = random.Random(7)
    for _ in range(5):
        shuffled = cands[:]
        rng.shuffle(shuffled)
        assert keyword_select("coffee", shuffled) == expected
    assert keyword_select("coffee", cands, limit=2) == ["bravo", "alpha"]


def test_rarity_weighting_beats_plain_overlap() -> None:
    """Five records share the common words of the query; one shares only its two rare words.
    Plain overlap (DESIGN §7's count of shared tokens) ranks a common one first; the index
    ranks the rare match first."""
    cands = [Candidate(f"deploy-note-{i}", "project", f"deploy the server with the script {i}") for i in range(5)]
    cands.append(Candidate("kube", "reference", "kubectl context for staging"))
    query = "deploy the staging server with kubectl"

    qt = set(plain_tokens(query))
    overlap = sorted(
        (-len(qt & set(plain_tokens(c.name + " " + c.description))), c.name) for c in cands
    )
    assert overlap[0][1] == "deploy-note-0"
    assert overlap[0][0] == -4 and (-2, "kube") in overlap

    assert keyword_select(query, cands, limit=1) == ["kube"]


def test_name_field_outweighs_body_mention() -> None:
    cands = [
        Candidate("postgres-upgrade", "project", "Database upgrade plan", body="Steps for the move."),
        Candidate("weekly-notes", "project", "Weekly notes", body="Also touched postgres briefly."),
    ]
    assert keyword_select("postgres", cands) == ["postgres-upgrade", "weekly-notes"]


def test_select_excludes_names_and_still_fills_the_limit() -> None:
    cands = [Candidate(f"tea-{i}", "project", "green tea") for i in range(4)]
    index = KeywordIndex(cands)
    assert index.select("tea", 2) == ["tea-0", "tea-1"]
    assert index.select("tea", 2, exclude={"tea-0", "tea-1"}) == ["tea-2", "tea-3"]


def test_keyword_select_over_real_chinese_and_english_memory_files(shared_data: Path) -> None:
    cands = []
    for folder in [
        "learn-claude-code__ZBIGBEAR__my-learn-claude-code__.memory",
        "learn-claude-code__JinxinWu__learn-claude-code__.memory",
        "4444J99__application-pipeline__.claude-memory",
    ]:
        for path in sorted((shared_data / "memory_dirs" / folder).glob("*.md")):
            if path.name == "MEMORY.md":
                continue
            rec = parse_record(path.read_bytes(), where=str(path), stem=path.stem)
            cands.append(Candidate(rec.name, rec.type, rec.description, rec.body, rec.importance))
    index = KeywordIndex(cands)
    assert index.select("排球", 1) == ["alex_volleyball"]
    assert index.select("代码注释", 1) == ["prefer_clear_comments"]
    assert index.select("Alex 喜欢什么运动", 2) == ["alex_volleyball", "alex_basketball"]
    assert index.select("working with Gemini", 1) == ["feedback_gemini_collaboration"]


# ----------------------------------------------------------------------------- the model and its gate


def test_selection_prompt_ends_with_the_payload() -> None:
    system, prompt = selection_prompt("deploy?", CANDIDATES[:2], 3)
    assert "at most 3 names" in system
    assert prompt.endswith("</input>")
    assert parse_payload(prompt) == {
        "task": "select",
        "query": "deploy?",
        "limit": 3,
        "candidates": [
            {"name": "prefers-tabs", "type": "user", "description": "User prefers tabs for indentation"},
            {
                "name": "deploy-staging",
                "type": "project",
                "description": "Staging deploys run through the release script",
            },
        ],
    }


def test_model_answer_used_when_it_passes_the_gate() -> None:
    model = ScriptedModel([ok('["no-mocks", "prefers-tabs"]')])
    assert model_select(model, "anything", CANDIDATES, 5) == (["no-mocks", "prefers-tabs"], None)
    model = ScriptedModel([ok(" []\n")])
    assert model_select(model, "deploy staging", CANDIDATES, 5) == ([], None)
    assert model.prompts[0][2] == 512


BAD_ANSWERS = [
    ("tool call", Completion('["no-mocks"]', "tool_use", (ToolCall("recall", {}),)), "tool call"),
    ("max_tokens stop", Completion('["no-mocks"]', "max_tokens"), "truncated"),
    ("no stop reason", Completion('["no-mocks"]', None), "stop_reason"),
    ("stop sequence", Completion('["no-mocks"]', "stop_sequence"), "stop_reason"),
    ("empty text", ok("  \n"), "empty"),
    ("fenced JSON", ok('```json\n["no-mocks"]\n```'), "not JSON"),
    ("prose around JSON", ok('Here you go: ["no-mocks"]'), "not JSON"),
    ("two values", ok('["no-mocks"] ["bug-tracker"]'), "not JSON"),
    ("not an array", ok('{"names": ["no-mocks"]}'), "array"),
    ("a bare string", ok('"no-mocks"'), "array"),
    ("duplicates", ok('["no-mocks", "no-mocks"]'), "twice"),
    ("unknown name", ok('["no-mocks", "made-up"]'), "not a known record"),
    ("non-string item", ok('["no-mocks", 3]'), "string"),
    ("over the limit", ok('["no-mocks", "prefers-tabs", "bug-tracker"]'), "limit"),
    ("NaN", ok("[NaN]"), "NaN"),
]


@pytest.mark.parametrize(("label", "completion", "reason_part"), BAD_ANSWERS, ids=[b[0] for b in BAD_ANSWERS])
def test_bad_model_answer_falls_back_to_keyword_selection(
    label: str, completion: Completion, reason_part: str
) -> None:
    with pytest.raises(AnswerRejected):
        check_selection(completion, KNOWN, 2)
    model = ScriptedModel([completion])
    names, reason = model_select(model, "deploy staging", CANDIDATES, 2)
    assert names == ["deploy-staging"]
    assert reason is not None and reason.startswith("model answer rejected: ")
    assert reason_part in reason


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (TimeoutError("read timed out"), "model call failed: TimeoutError: read timed out"),
        (RuntimeError(), "model call failed: RuntimeError"),
        (ConnectionError("refused\nsecond line"), "model call failed: ConnectionError: refused"),
    ],
)
def test_model_error_or_timeout_falls_back_and_never_raises(error: Exception, expected: str) -> None:
    names, reason = model_select(ScriptedModel([error]), "tabs", CANDIDATES, 5)
    assert names == ["prefers-tabs"]
    assert reason == expected


def test_model_sees_neither_excluded_names_nor_may_it_pick_them() -> None:
    model = ScriptedModel([ok('["prefers-tabs"]')])
    names, reason = model_select(model, "tabs", CANDIDATES, 5, exclude={"prefers-tabs"})
    shown = [c["name"] for c in parse_payload(model.prompts[0][1])["candidates"]]
    assert "prefers-tabs" not in shown and len(shown) == 3
    assert names == []  # fallback: the only tab record is excluded
    assert reason is not None and "not a known record" in reason


def test_large_sets_are_narrowed_by_the_index_before_the_model_sees_them() -> None:
    cands = [Candidate(f"rec-{i:05d}", "project", f"note number {i} about topic{i % 7}") for i in range(1000)]
    model = ScriptedModel([ok('["rec-00003"]')])
    names, reason = model_select(model, "topic3", cands, 5)
    shown = parse_payload(model.prompts[0][1])["candidates"]
    assert (names, reason) == (["rec-00003"], None)
    assert len(shown) == min(MODEL_CANDIDATES, 143)
    assert all(c["description"].endswith("topic3") for c in shown)

    silent = ScriptedModel([])
    assert model_select(silent, "nothing matches", cands, 5) == ([], None)
    assert silent.prompts == []


def test_keyword_index_beats_bm25_on_locomo_recall_at_5(
    shared_data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Quality guard with an honest baseline: the benchmark's own loader and scorer, the dreamd
    selector against BM25 over the project's own tokenizer (``bm25-tok``), question by question."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "bench_recall_locomo", Path(__file__).resolve().parents[1] / "benchmarks" / "bench_recall_locomo.py"
    )
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, bench)
    spec.loader.exec_module(bench)
    assert bench.dialogue_ids(["D4:17, D4:19"]) == {"D4:17", "D4:19"}
    assert bench.dialogue_ids("D8:6; D9:17") == {"D8:6", "D9:17"}
    assert bench.dialogue_ids("D:11:26") == {"D11:26"}

    convs = bench.load(shared_data / "eval" / "locomo10.json")
    assert sum(len(c.questions) for c in convs) == 1536
    results = bench.evaluate(
        convs, {"dreamd": bench.dreamd_selector, "bm25-tok": bench.bm25_tok_selector}
    )
    ours, baseline = results["dreamd"], results["bm25-tok"]
    assert ours["recall_at_5"]["overall"] >= 0.60
    assert baseline["questions"] == ours["questions"] == 1536
    assert baseline["hits"] > 800, "the baseline must be a real BM25, not a strawman"
    assert ours["hits"] > baseline["hits"], (ours["hits"], baseline["hits"])
    versus = bench.paired(results, "dreamd", "bm25-tok")
    assert versus["dreamd_only"] > versus["bm25-tok_only"], versus


def test_the_hook_rebuilds_an_index_cached_by_an_older_tokenizer(tmp_path: Path) -> None:
    """A hook cache written before the tokenizer changed (same manifest, old terms, no version)
    is rebuilt: the prompt's stems meet the records' stems, not the old cache's words."""
    import marshal

    from dreamd.hook.context import _ranked_set
    from memory.store.records import make_record
    from memory.store.transaction import Change, MemoryStore

    memdir, state = tmp_path / "m", tmp_path / "st"
    MemoryStore.init(memdir).commit(Change(add=[
        make_record("style-width", "feedback", "Indentation is two spaces", "Two spaces."),
        make_record("coffee", "user", "The user drinks flat whites", "Oat milk."),
    ], actor="manual"))  # fmt: skip
    _ranked_set(memdir, state)
    (cache,) = (state / "hook-index").iterdir()
    key, entries, _current = marshal.loads(cache.read_bytes())
    docs = [(e[0], e[1], e[2], 0.5, {"indentation": 1.5}, 1.5) for e in entries]
    cache.write_bytes(marshal.dumps([key, entries, (docs, {"indentation": {d[0]: 1.5 for d in docs}}, 3.0)]))
    _, index = _ranked_set(memdir, state)
    assert index.select("how should I indent?", 1) == ["style-width"]
