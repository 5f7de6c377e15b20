"""Secret detector libraries scored on the secrets sets, alone and as a second pass (issue 22).

Each library runs in its own environment, outside the repository's (CredSweeper in a scratch
venv given by ``--credsweeper PYTHON``, secretlint in an npm folder given by ``--secretlint
DIR`` holding ``node_modules`` and a ``.secretlintrc.json``), on every item of every set written
to a file of its own, once as the item's text and once as the text our redactor left
(``memory.redact.redact(text)[0]``). Nothing here is a dependency of dreamd.

What a library's output is taken to cover: CredSweeper reports, per finding, the line number, the
line and the value's offsets in it (``value_start``, ``value_end``); the span is the line's offset
in the file plus those, kept when the file holds the reported value there, and otherwise every
place the file holds the value. secretlint reports ``range`` (UTF-16 offsets of the file's text,
converted to character offsets).

Scoring, as ``bench_secrets.py`` scores its redactor point: **ours** is the bench's own criterion
on ``redact(text)[0]``. **library**: a secret is caught only when every place the text holds it
lies inside the union of the library's spans; a look-alike item (no secrets) is altered when a
span overlaps a place one of its ``survive`` substrings occupies. **union** (ours first, the
library on what ours left, as a daemon-side second pass would run): the library's spans on our
output are replaced by markers and the bench's criterion (``caught``, ``survive`` substrings
still present) is applied to the result.

Run: ``.venv/bin/python benchmarks/bench_secrets_lib.py --credsweeper /tmp/s31lib/venv/bin/python
--secretlint /tmp/s31lib/npm [--splits dev,blind] [--json OUT]``.
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
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from bench_secrets import SPLITS, caught, load  # noqa: E402

from memory.redact import redact  # noqa: E402

Span = tuple[int, int]

_CREDSWEEPER = r"""
import json, sys, time
t0 = time.process_time()
from credsweeper.app import CredSweeper
from credsweeper.file_handler.files_provider import FilesProvider
imported = time.process_time() - t0
paths = [line for line in open(sys.argv[1], encoding="utf-8").read().splitlines() if line]
doc = sys.argv[3] == "doc"
found = {p: [] for p in paths}
mapped = {"offsets": 0, "searched": 0}
t1 = time.process_time()
sweeper = CredSweeper(doc=doc)
sweeper.run(FilesProvider(paths))
scanned = time.process_time() - t1
texts = {}
for cred in sweeper.credential_manager.get_credentials():
    for ld in cred.line_data_list:
        path = str(ld.path)
        if path not in texts:
            texts[path] = open(path, encoding="utf-8", newline="").read()
        text = texts[path]
        value = ld.value or ""
        if not value:
            continue
        lines = text.split("\n")
        at = sum(len(x) + 1 for x in lines[: ld.line_num - 1])
        start = at + ld.value_start
        if 0 <= ld.line_num - 1 < len(lines) and ld.value_start >= 0 and text[start : start + len(value)] == value:
            found[path].append((start, start + len(value), cred.rule_name))
            mapped["offsets"] += 1
            continue
        mapped["searched"] += 1
        pos = text.find(value)
        while pos != -1:
            found[path].append((pos, pos + len(value), cred.rule_name))
            pos = text.find(value, pos + 1)
json.dump({"found": found, "import_cpu": imported, "scan_cpu": scanned, "mapped": mapped},
          open(sys.argv[2], "w", encoding="utf-8"))
"""


def _utf16_to_chars(text: str) -> list[int]:
    """Character index of every UTF-16 offset of ``text`` (JavaScript's string offsets)."""
    index: list[int] = []
    for i, ch in enumerate(text):
        index.append(i)
        if ord(ch) > 0xFFFF:
            index.append(i)
    index.append(len(text))
    return index


def run_credsweeper(python: str, paths: list[Path], doc: bool) -> tuple[dict[str, list[Span]], dict[str, Any]]:
    with tempfile.TemporaryDirectory(prefix="s31lib-cs-") as tmp:
        listing = Path(tmp) / "paths.txt"
        listing.write_text("\n".join(map(str, paths)) + "\n", encoding="utf-8")
        out = Path(tmp) / "out.json"
        subprocess.run(
            _offline([python, "-c", _CREDSWEEPER, str(listing), str(out), "doc" if doc else "plain"]),
            check=True,
            capture_output=True,
        )
        data = json.loads(out.read_text(encoding="utf-8"))
    spans = {p: [(s, e) for s, e, _rule in v] for p, v in data["found"].items()}
    return spans, {k: data[k] for k in ("import_cpu", "scan_cpu", "mapped")}


def run_secretlint(folder: str, paths: list[Path]) -> tuple[dict[str, list[Span]], dict[str, Any]]:
    with tempfile.TemporaryDirectory(prefix="s31lib-sl-") as tmp:
        out = Path(tmp) / "out.json"
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        cli = str(Path(folder) / "node_modules" / ".bin" / "secretlint")
        proc = subprocess.run(
            _offline([cli, "--format=json", f"--output={out}", "--no-color", *map(str, paths)]),
            cwd=folder,
            capture_output=True,
        )
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if proc.returncode not in (0, 1):
            raise RuntimeError(proc.stderr.decode()[-2000:])
        results = json.loads(out.read_text(encoding="utf-8") or "[]")
    found: dict[str, list[Span]] = {str(p): [] for p in paths}
    for result in results:
        text = Path(result["filePath"]).read_text(encoding="utf-8")
        index = _utf16_to_chars(text)
        for message in result["messages"]:
            start, end = message["range"]
            found.setdefault(result["filePath"], []).append((index[start], index[end]))
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return found, {"process_cpu": cpu}


def run_trufflehog3(cli: str, paths: list[Path]) -> tuple[dict[str, list[Span]], dict[str, Any]]:
    """trufflehog3 over the items' folder (it takes folders, not a file list): each finding
    names a file, a line and the value; the span is every place that line holds the value."""
    root = Path(os.path.commonpath([str(p) for p in paths]))
    with tempfile.TemporaryDirectory(prefix="s31lib-th-") as tmp:
        out = Path(tmp) / "out.json"
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(
            _offline([cli, "--no-history", "-z", "-p", "1", "--format", "JSON", "-o", str(out), str(root)]),
            check=True,
            capture_output=True,
        )
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        results = json.loads(out.read_text(encoding="utf-8") or "[]")
    found: dict[str, list[Span]] = {str(p): [] for p in paths}
    texts: dict[str, str] = {}
    for hit in results:
        path = str(root / hit["path"])
        if path not in texts:
            texts[path] = Path(path).read_text(encoding="utf-8")
        lines = texts[path].split("\n")
        number = int(hit["line"]) - 1
        at = sum(len(x) + 1 for x in lines[:number])
        found.setdefault(path, []).extend(
            (at + s, at + e) for s, e in _places(lines[number], hit["secret"])
        )
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return found, {"process_cpu": cpu, "findings": len(results)}


def _offline(argv: list[str]) -> list[str]:
    """``argv`` in a network namespace of its own (no interface but lo), when the machine lets
    us make one: a library that tries to reach a host fails instead of reaching it."""
    if os.environ.get("S31LIB_NETNS", "1") == "1":
        return ["unshare", "-n", *argv]
    return argv


def _places(text: str, value: str) -> list[Span]:
    out: list[Span] = []
    at = text.find(value)
    while at != -1 and value:
        out.append((at, at + len(value)))
        at = text.find(value, at + 1)
    return out


def _covered(place: Span, spans: list[Span]) -> bool:
    pos = place[0]
    for start, end in sorted(spans):
        if start <= pos < end:
            pos = end
        if pos >= place[1]:
            return True
    return pos >= place[1]


def _overlaps(place: Span, spans: list[Span]) -> bool:
    return any(s < place[1] and place[0] < e for s, e in spans)


def _apply(text: str, spans: list[Span]) -> str:
    merged: list[list[int]] = []
    for s, e in sorted(spans):
        if merged and s <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], e)
        else:
            merged.append([s, e])
    pieces, last = [], 0
    for s, e in merged:
        pieces += [text[last:s], "[REDACTED:lib]"]
        last = e
    return "".join(pieces) + text[last:]


def score(items: list[dict[str, Any]], ours: list[str], lib_orig: list[list[Span]],
          lib_ours: list[list[Span]]) -> dict[str, Any]:  # fmt: skip
    row = {k: 0 for k in ("secrets", "lookalikes", "ours", "lib", "union",
                          "ours_fp", "lib_fp", "union_fp", "lib_only")}  # fmt: skip
    added: list[str] = []
    for item, out, spans, spans2 in zip(items, ours, lib_orig, lib_ours, strict=True):
        final = _apply(out, spans2)
        for secret in item["secrets"]:
            row["secrets"] += 1
            o = caught(secret, out)
            lib = all(_covered(p, spans) for p in _places(item["text"], secret))
            u = caught(secret, final)
            row["ours"] += o
            row["lib"] += lib
            row["union"] += u
            if u and not o:
                row["lib_only"] += 1
                added.append(f"{item['id']} ({item['form']})")
        if not item["secrets"]:
            row["lookalikes"] += 1
            row["ours_fp"] += any(s not in out for s in item["survive"])
            row["lib_fp"] += any(
                _overlaps(p, spans) for s in item["survive"] for p in _places(item["text"], s)
            )
            row["union_fp"] += any(s not in final for s in item["survive"])
    row["added"] = added  # type: ignore[assignment]
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--splits", default=",".join(SPLITS))
    parser.add_argument("--credsweeper", help="a Python with credsweeper installed")
    parser.add_argument("--credsweeper-doc", action="store_true", help="CredSweeper's --doc mode")
    parser.add_argument("--secretlint", help="an npm folder with secretlint and its config")
    parser.add_argument("--trufflehog3", help="the trufflehog3 command of its venv")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    libraries: dict[str, Any] = {}
    if args.credsweeper:
        name = "credsweeper-doc" if args.credsweeper_doc else "credsweeper"
        libraries[name] = lambda paths: run_credsweeper(args.credsweeper, paths, args.credsweeper_doc)
    if args.secretlint:
        libraries["secretlint"] = lambda paths: run_secretlint(args.secretlint, paths)
    if args.trufflehog3:
        libraries["trufflehog3"] = lambda paths: run_trufflehog3(args.trufflehog3, paths)
    report: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="s31lib-items-") as tmp:
        sets: dict[str, tuple[list[dict[str, Any]], list[str], list[Path], list[Path]]] = {}
        for split in args.splits.split(","):
            items = load(split)
            ours = [redact(it["text"])[0] for it in items]
            orig_paths: list[Path] = []
            ours_paths: list[Path] = []
            for i, (item, out) in enumerate(zip(items, ours, strict=True)):
                for kind, text, paths in (("orig", item["text"], orig_paths), ("ours", out, ours_paths)):
                    path = Path(tmp) / split / kind / f"{i:04d}.txt"
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.write_text(text, encoding="utf-8", newline="")
                    paths.append(path)
            sets[split] = (items, ours, orig_paths, ours_paths)
        for name, run in libraries.items():
            every = [p for _i, _o, a, b in sets.values() for p in a + b]
            start = time.perf_counter()
            found, cost = run(every)
            cost["wall"] = time.perf_counter() - start
            cost["files"] = len(every)
            rows = {}
            for split, (items, ours, orig_paths, ours_paths) in sets.items():
                rows[split] = score(
                    items, ours, [found.get(str(p), []) for p in orig_paths],
                    [found.get(str(p), []) for p in ours_paths],
                )  # fmt: skip
            report[name] = {"cost": cost, "rows": rows}
            print(f"{name}: {json.dumps(cost)}")
            print(f"{'set':<8} {'secrets':>7} {'ours':>5} {'lib':>5} {'union':>5}   {'look-alikes':>11} "
                  f"{'ours':>4} {'lib':>4} {'union':>5}")  # fmt: skip
            for split, r in rows.items():
                print(f"{split:<8} {r['secrets']:>7} {r['ours']:>5} {r['lib']:>5} {r['union']:>5}   "
                      f"{r['lookalikes']:>11} {r['ours_fp']:>4} {r['lib_fp']:>4} {r['union_fp']:>5}")  # fmt: skip
    if args.json:
        args.json.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
