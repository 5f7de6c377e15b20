"""The checker: after a torture run has drained, hold the system to what it promised.

:func:`check` reads only the disk (spool, memory directories with their ``.history/``, daemon
logs) and the ledgers, and returns a :class:`Report` of violations plus how many times each
invariant was checked. The invariants (issue 6):

* **spool-terminal** — nothing is left in ``new/``, ``cur/`` or ``deferred/``; no job is in both
  ``done/`` and ``failed/``; every ``failed/X.json`` has ``X.error.json`` with a reason.
* **accepted-accounted** — every job a client was told was accepted is in ``done/`` or
  ``failed/``; a done extract/remember/forget was committed in exactly one generation
  (``change.job_id``) — or, when it changed no record, is among the current manifest's applied
  jobs (made in place) — and a failed one in none; ``applied_jobs`` holds no id twice.
* **hostile-outcome** — every hostile entry ends where it must (rejected ones in ``failed/`` with a
  reason, valid ones applied); nothing was ever written to the directory outside the roots.
* **remember-present** — every applied ``remember`` added or updated its own name, and the name
  is present at the end unless a later forget job, a logged dream merge (whose source file
  ``.history/`` holds) or a hand deletion explains its absence.
* **no-silent-loss** — more generally, every record that left any set at any generation left by
  a forget job naming it, a dream merge listing it, or a reconcile of a file deleted by hand.
* **dream-retention** — a dream never loses a fact (issue 10): every clause of every record a
  dream removed is still said by its merge result or another live record of that generation,
  unless the record was expired (``expires`` before the dream's day, importance under 0.8) or
  a strictly newer record of the set it was planned on explicitly superseded it
  (:mod:`dreamd.models.offline.compare.clauses`). A source whose recorded bytes no copy holds any more was
  edited in place by hand after the dream verified it: the edited version must then be said
  by a live record of a later generation (the store puts it back for adoption). And a merge result's history line (``**Previously:**``)
  holds only what an explicitly superseded source said, or what was history already. A
  removed record, or a merge result, whose file neither the
  directory nor ``.history/`` holds any more (chaos deletes files by hand) is counted as
  ``unverifiable`` in the ``dream_retention`` observation, not judged.
* **manifest-valid** — every manifest (current and in ``.history/``) parses, generations are
  contiguous, the current one names only existing files with their recorded sha256, every
  record parses, and ``MEMORY.md`` is the index rendered for it.
* **no-secret** — no planted secret (nor its distinctive tail) appears in any file of any memory
  directory (records, manifests, history) or any daemon log; dreamd-written records contain
  nothing the redactor would still replace.
* **no-lock-held** — no ``.dream.lock`` (or a half-broken one) is left, every ``.lock`` and the
  spool lock can be taken.
* **kill-logged** — after every daemon SIGKILL the next incarnation logged its start and put back
  exactly the claims the dead one left in ``cur/`` (``spool.recovered``), and every dream lease
  the dead one held was recovered with a ``lease.recovered`` entry.
* **history-log** — ``dreamd log`` lists the newest generations with the actor, job and removals
  their manifests record.
* **clean-stop** — the final SIGTERM made the daemon exit 0 within 10 s.
* **no-nested-md** — no ``*.md`` file below any subdirectory of a memory directory (Claude Code
  reads every one as a live memory; ``.history/`` archives end in ``.md.hist``).
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import json
import os
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memory.errors import DreamdError
from memory.redact import redact
from memory.store.manifest import Manifest
from memory.store.records import sha256_hex
from memory.store.transaction import OUR_FILE_RE, MemoryStore
from tests.torture.ledger import Ledger

SECRET_TAIL = 16
"""A leak of the last 16 characters of a planted secret counts as a leak."""


@dataclass(frozen=True)
class World:
    """Where a torture run keeps everything."""

    workdir: Path
    spool: Path
    mem_root: Path
    dirs: list[Path]
    outside: Path
    ledger_dir: Path
    logs_dir: Path
    full_dir: Path | None = None


@dataclass
class Report:
    violations: list[str] = field(default_factory=list)
    checks: Counter[str] = field(default_factory=Counter)
    notes: list[str] = field(default_factory=list)
    jobs: dict[str, int] = field(default_factory=dict)
    observations: dict[str, Any] = field(default_factory=dict)

    def ok(self, check: str, condition: bool, message: str) -> bool:
        self.checks[check] += 1
        if not condition:
            self.violations.append(f"[{check}] {message}")
        return condition

    def to_json(self) -> dict[str, Any]:
        return {
            "violations": list(self.violations),
            "checks": dict(sorted(self.checks.items())),
            "checks_total": sum(self.checks.values()),
            "notes": list(self.notes),
            "jobs": dict(self.jobs),
            "observations": self.observations,
        }


# ---------------------------------------------------------------------------- reading


def _job_files(directory: Path) -> set[str]:
    try:
        names = os.listdir(directory)
    except FileNotFoundError:
        return set()
    return {n[:-5] for n in names if n.endswith(".json") and not n.startswith(".")
            and not n.endswith(".error.json") and ".error-" not in n}


@dataclass(frozen=True)
class Gen:
    """What the checks need of one generation (whole manifests of a long run do not fit in
    memory): its record names, name → file, and the change summary that produced it."""

    names: frozenset[str]
    files: dict[str, str]
    change: dict[str, Any]


@dataclass
class DirHistory:
    """Every generation of one directory that is still on disk, oldest first."""

    path: Path
    gens: dict[int, Gen]
    current: Manifest | None
    broken: list[str]
    applied: frozenset[str] = frozenset()
    """Every job id any kept manifest lists as applied. A job that changed no record was
    applied in place into the generation current then (DESIGN §3), which a later commit may
    have kept in ``.history/``: the current manifest alone does not name it any more."""

    def commits_by_job(self) -> dict[str, list[int]]:
        out: dict[str, list[int]] = {}
        for gen, g in self.gens.items():
            job = g.change.get("job_id")
            if job:
                out.setdefault(str(job), []).append(gen)
        return out


def load_history(path: Path) -> DirHistory:
    """Parse (and so validate) the current manifest and every one kept in ``.history/``."""
    gens: dict[int, Gen] = {}
    broken: list[str] = []
    current: Manifest | None = None
    applied: set[str] = set()
    hist = path / ".history"
    files = [(path / "manifest.json")]
    with contextlib.suppress(FileNotFoundError):
        files += [hist / n for n in os.listdir(hist) if n.startswith("manifest-") and n.endswith(".json")]
    for f in files:
        try:
            m = Manifest.loads(f.read_bytes(), where=str(f))
        except (OSError, DreamdError, ValueError) as exc:
            broken.append(f"{f}: {exc}")
            continue
        if f.name != "manifest.json" and current is not None and m.generation >= current.generation:
            # a group commit killed before its commit point kept generations that never were
            # (DESIGN §3, "Group commit"): dreamd's readers pass over them, and so does this
            continue
        files_by_name = {e.name: e.file for e in m.records}
        change = m.change if isinstance(m.change, dict) else {}
        gens[m.generation] = Gen(frozenset(files_by_name), files_by_name, change)
        applied.update(m.applied_jobs)
        if f.name == "manifest.json":
            current = m
    return DirHistory(path, dict(sorted(gens.items())), current, broken, frozenset(applied))


def _in_history(path: Path, file: str) -> bool:
    hist = path / ".history"
    if (hist / file).exists():
        return True
    return bool(_archived_versions(path, file))


_HISTORY_INDEX: dict[Path, tuple[int, dict[str, list[str]]]] = {}


def _history_index(directory: Path) -> dict[str, list[str]]:
    """``.history/`` listed once per directory (again only when its mtime moved: a checker's
    own tests change a directory between two checks), its names by the record file they archive
    (the part up to the first ``.md.``; other names under their own). Listing ~7,600 names
    again for every record read was 70 % of a 20-minute run's check (py-spy), which then took
    longer than the run."""
    hist = directory / ".history"
    try:
        mtime = os.stat(hist).st_mtime_ns
    except FileNotFoundError:
        return {}
    cached = _HISTORY_INDEX.get(directory)
    if cached is not None and cached[0] == mtime:
        return cached[1]
    index: dict[str, list[str]] = {}
    with contextlib.suppress(FileNotFoundError):
        for n in os.listdir(hist):
            cut = n.find(".md.")
            index.setdefault(n[: cut + 3] if cut >= 0 else n, []).append(n)
    _HISTORY_INDEX[directory] = (mtime, index)
    return index


def _archived_versions(directory: Path, file: str) -> list[str]:
    """The names in ``.history/`` that start with ``file + "."``, sorted."""
    index = _history_index(directory)
    cut = file.find(".md.")
    if file.endswith(".md") and cut < 0:
        names = index.get(file, [])
    else:  # not a name the index keys on: every name, as before
        names = [n for group in index.values() for n in group]
    return sorted(n for n in names if n.startswith(file + "."))


def _log_events(path: Path) -> list[dict[str, Any]]:
    out = []
    with contextlib.suppress(FileNotFoundError):
        for line in path.read_bytes().splitlines():
            with contextlib.suppress(ValueError):
                event = json.loads(line)
                if isinstance(event, dict):
                    out.append(event)
    return out


# ---------------------------------------------------------------------------- the checks


def check_spool(world: World, report: Report) -> tuple[set[str], set[str]]:
    for sub in ("new", "cur", "deferred"):
        left = sorted(_job_files(world.spool / sub))
        report.ok("spool-terminal", not left, f"{len(left)} job(s) left in {sub}/ after the drain: {left[:5]}")
    done, failed = _job_files(world.spool / "done"), _job_files(world.spool / "failed")
    both = sorted(done & failed)
    report.ok("spool-terminal", not both, f"jobs both done and failed: {both[:5]}")
    for job_id in sorted(failed):
        err = world.spool / "failed" / f"{job_id}.error.json"
        reason = ""
        with contextlib.suppress(OSError, ValueError, AttributeError):
            reason = str(json.loads(err.read_bytes()).get("reason") or "")
        report.ok("spool-terminal", bool(reason.strip()), f"failed/{job_id}.json has no reason in {err.name}")
    return done, failed


def check_manifests(world: World, histories: dict[str, DirHistory], ledger: Ledger,
                    malformed_logged: set[str], report: Report) -> None:
    """Current manifests name existing files with their recorded sha256, and each parses.

    One exception, by design (DESIGN §2.4): a file a person broke by hand (the chaos touched it
    and it no longer parses) stays in the set with its last good sha256, and must have been
    logged as ``store.malformed``.
    """
    kept_broken: list[str] = []
    for key, h in histories.items():
        report.ok("manifest-valid", not h.broken, f"{key}: unreadable manifests {h.broken[:3]}")
        gens = list(h.gens)
        if gens:
            report.ok("manifest-valid", gens == list(range(gens[0], gens[-1] + 1)),
                      f"{key}: generations not contiguous ({len(gens)} kept, {gens[0]}..{gens[-1]})")
        m = h.current
        if not report.ok("manifest-valid", m is not None, f"{key}: no manifest"):
            continue
        assert m is not None
        names = [e.name for e in m.records]
        report.ok("manifest-valid", len(names) == len(set(names)), f"{key}: duplicate names in the manifest")
        jobs = m.applied_jobs
        report.ok("accepted-accounted", len(jobs) == len(set(jobs)), f"{key}: applied_jobs holds an id twice")
        store = MemoryStore(h.path)
        for e in m.records:
            path = h.path / e.file
            report.ok("manifest-valid", "/" not in e.file and ".." not in e.file, f"{key}: file {e.file!r} is a path")
            try:
                data = path.read_bytes()
            except OSError as exc:
                report.ok("manifest-valid", False, f"{key}: {e.name} names {e.file}, which cannot be read ({exc.strerror})")
                continue
            try:
                store.read_record(e)
                parses, problem = True, ""
            except DreamdError as exc:
                parses, problem = False, str(exc)
            touched = e.file in ledger.hand_written(key) | ledger.hand_deleted(key)
            if not parses and touched and sha256_hex(data) != e.sha256:
                kept_broken.append(f"{key}/{e.file}")
                report.ok("manifest-valid", f"{h.path / e.file}" in malformed_logged or e.file in malformed_logged,
                          f"{key}: {e.file} was broken by hand and kept, but no store.malformed was logged")
                continue
            report.ok("manifest-valid", sha256_hex(data) == e.sha256,
                      f"{key}: {e.file} does not have its recorded sha256")
            report.ok("manifest-valid", parses, f"{key}: {e.name}: {problem}")
        with contextlib.suppress(OSError):
            index = (h.path / "MEMORY.md").read_bytes()
            report.ok("manifest-valid", not m.index_sha256 or sha256_hex(index) == m.index_sha256,
                      f"{key}: MEMORY.md is not the index rendered for generation {m.generation}")
    report.observations["kept_broken_by_hand"] = kept_broken


def check_log(histories: dict[str, DirHistory], report: Report, limit: int = 200) -> None:
    """``dreamd log`` (:func:`memory.store.history.log_entries`) tells the same story as the manifests:
    the newest ``limit`` generations in order, each with its own actor, job and removals."""
    from memory.store.history import log_entries

    for key, h in histories.items():
        if h.current is None:
            continue
        try:
            entries = log_entries(MemoryStore(h.path), limit=limit)
        except DreamdError as exc:
            report.ok("history-log", False, f"{key}: dreamd log fails: {exc}")
            continue
        want = sorted(h.gens, reverse=True)[:limit]
        report.ok("history-log", [e.generation for e in entries] == want,
                  f"{key}: dreamd log lists generations {[e.generation for e in entries][:5]}…, "
                  f"the manifests {want[:5]}…")
        for e in entries:
            change = h.gens[e.generation].change if e.generation in h.gens else {}
            report.ok("history-log",
                      (e.actor, e.job_id, sorted(e.removed)) ==
                      (change.get("actor", "unknown"), change.get("job_id"), sorted(change.get("removed", []))),
                      f"{key}: dreamd log entry for generation {e.generation} differs from its manifest")


def _removal_reason(h: DirHistory, gen: int, name: str, ledger: Ledger, key: str) -> str | None:
    """Why ``name`` left the set at ``gen`` (None: unexplained)."""
    change = h.gens[gen].change
    prev = h.gens.get(gen - 1)
    actor = change.get("actor")
    prev_file = prev.files.get(name) if prev is not None else None
    job = change.get("job_id")
    if job and name in ledger.forget_names(key).get(str(job), set()):
        return "forget"
    for op in change.get("merged") or ():
        if name in (op.get("from") or ()):
            if prev_file is not None and not _in_history(h.path, prev_file):
                if prev_file in ledger.hand_deleted(key):
                    return "merge (file later deleted by hand)"
                return None
            return "merge"
    # A hand deletion leaves the set in the next commit of any kind (its change says "foreign").
    taken_in = actor == "reconcile" or name in ((change.get("foreign") or {}).get("dropped") or ())
    if taken_in and prev_file is not None and prev_file in ledger.hand_deleted(key):
        return "hand-delete"
    if actor == "rollback":
        return "rollback"
    return None


def check_history(world: World, histories: dict[str, DirHistory], ledger: Ledger, done: set[str],
                  failed: set[str], report: Report) -> None:
    accepted = ledger.accepted()
    hostile = ledger.ops("hostile")
    commits: dict[str, dict[str, list[int]]] = {k: h.commits_by_job() for k, h in histories.items()}
    applied = 0
    for e in accepted + [h for h in hostile if h.get("job_id") and h.get("expect") == "done"]:
        job = str(e["job_id"])
        key = str(e.get("memory_dir"))
        kind = e.get("kind")
        where = "done" if job in done else "failed" if job in failed else None
        if not report.ok("accepted-accounted", where is not None,
                         f"{kind} job {job} for {key} was accepted but is neither done nor failed"):
            continue
        if kind not in ("extract", "remember", "forget") or key not in commits:
            continue
        gens = commits[key].get(job, [])
        other = [k for k, c in commits.items() if k != key and job in c]
        report.ok("accepted-accounted", not other, f"{kind} job {job} was committed into another directory {other}")
        if where == "done":
            applied += 1
            # A job that changed no record rewrote the then current generation in place
            # (DESIGN §3): no generation's change names it, that manifest's applied jobs do —
            # the current one, or one a later commit kept in .history/.
            in_place = not gens and job in histories[key].applied
            report.ok("accepted-accounted", len(gens) == 1 or in_place,
                      f"{kind} job {job} is done but was committed {len(gens)} times in {key} (generations {gens})")
        else:
            report.ok("accepted-accounted", not gens,
                      f"{kind} job {job} is in failed/ but was committed in {key} at generations {gens}")
        if kind == "remember" and where == "done" and len(gens) == 1:
            _check_remember(histories[key], gens[0], _stored_name(e), ledger, key, report)
    report.jobs = {"accepted": len(accepted), "applied": applied,
                   "done": sum(1 for e in accepted if e["job_id"] in done),
                   "failed": sum(1 for e in accepted if e["job_id"] in failed)}
    for hx in hostile:
        hjob, expect = hx.get("job_id"), hx.get("expect")
        if not hjob:
            file = str(hx.get("file"))
            quarantined = False
            for err in (world.spool / "failed").glob("*.error.json"):
                with contextlib.suppress(OSError, ValueError):
                    if json.loads(err.read_bytes()).get("original_name") == file:
                        quarantined = True
                        break
            report.ok("hostile-outcome", quarantined, f"hostile {hx.get('case')}: {file} was not moved to failed/")
            continue
        if expect == "failed":
            report.ok("hostile-outcome", hjob in failed and hjob not in done,
                      f"hostile {hx.get('case')}: job {hjob} should be in failed/, is "
                      f"{'done' if hjob in done else 'missing'}")
        else:
            report.ok("hostile-outcome", hjob in done or _scripted_permanent(world, str(hjob), failed),
                      f"hostile {hx.get('case')}: valid job {hjob} was not applied")
    outside = load_history(world.outside)
    report.ok("hostile-outcome", outside.current is not None and outside.current.generation == 0,
              f"the directory outside the roots was written to (generation "
              f"{outside.current.generation if outside.current else None})")
    # nothing leaves a set without a reason
    reasons: Counter[str] = Counter()
    for key, h in histories.items():
        gens = list(h.gens)
        for prev_gen, gen in itertools.pairwise(gens):
            if gen != prev_gen + 1:
                continue
            before = h.gens[prev_gen].names
            after = h.gens[gen].names
            for name in sorted(before - after):
                reason = _removal_reason(h, gen, name, ledger, key)
                reasons[reason or "unexplained"] += 1
                change = h.gens[gen].change
                report.ok("no-silent-loss", reason is not None,
                          f"{key}: record {name!r} left the set at generation {gen} without a reason "
                          f"(change {json.dumps(change, sort_keys=True)[:300]})")
    report.observations["removals"] = dict(sorted(reasons.items()))
    report.observations["forgets"] = forget_outcomes(histories, ledger)


def _manifest_at(h: DirHistory, gen: int) -> Manifest | None:
    if h.current is not None and h.current.generation == gen:
        return h.current
    with contextlib.suppress(OSError, DreamdError, ValueError):
        path = h.path / ".history" / f"manifest-{gen}.json"
        return Manifest.loads(path.read_bytes(), where=str(path))
    return None


def _record_at(h: DirHistory, file: str) -> Any:
    """The record in ``file`` wherever a commit left it (the directory or ``.history/``), or None."""
    return _read_record(h.path, file)


@functools.lru_cache(maxsize=20_000)
def _read_record(directory: Path, file: str) -> Any:
    """Cached: the checker runs after the drain, so no file changes under it, and the
    supersession check reads the same newer records for every dropped one."""
    from memory.store.records import parse_record

    hist = directory / ".history"
    candidates = [directory / file, hist / file] + [hist / n for n in _archived_versions(directory, file)]
    for path in candidates:
        with contextlib.suppress(OSError, DreamdError, ValueError):
            return parse_record(path.read_bytes(), where=str(path), stem=Path(file).stem)
    return None


def _has_version(directory: Path, file: str, sha: str) -> bool:
    """Whether some copy of ``file`` (the directory or ``.history/``) holds the bytes ``sha``."""
    from memory.store.records import sha256_hex

    hist = directory / ".history"
    candidates = [directory / file, hist / file] + [hist / n for n in _archived_versions(directory, file)]
    for path in candidates:
        with contextlib.suppress(OSError):
            if sha256_hex(path.read_bytes()) == sha:
                return True
    return False


def _later_clauses(h: DirHistory, gen: int, clause_units: Any, clauses: Any) -> list[Any]:
    """The clauses every live record of every generation after ``gen`` says."""
    out: list[Any] = []
    for later in sorted(g for g in h.gens if g > gen):
        m = _manifest_at(h, later)
        for e in m.records if m is not None else ():
            r = _record_at(h, e.file)
            if r is not None:
                out.extend(clause_units(c) for c in clauses(r.description, r.body))
    return out


def check_dream_retention(histories: dict[str, DirHistory], report: Report) -> None:
    """Every clause of every record a dream removed is still said, or expiry or an explicit
    supersession explains its absence (see the module docstring)."""
    from dreamd.models.offline.compare.clauses import (
        clause_units,
        clauses,
        said_by,
        supersedes,
        unexplained_history,
    )

    _read_record.cache_clear()  # a fresh look at the disk for every check
    seen: Counter[str] = Counter()
    for key, h in histories.items():
        for gen, g in h.gens.items():
            ops = g.change.get("merged") or ()
            if g.change.get("actor") != "dream" or not ops or gen - 1 not in h.gens:
                continue
            before, after = _manifest_at(h, gen - 1), _manifest_at(h, gen)
            if before is None or after is None:
                seen["unverifiable"] += 1
                continue
            old_entries = before.by_name()
            new_entries = after.by_name()
            day = str(after.committed_at or "")[:10]
            live_cache: list[Any] | None = None
            for op in ops:
                into = op.get("into")
                result = _record_at(h, new_entries[into].file) if into in new_entries else None
                own = [clause_units(c) for c in clauses(result.description, result.body)] if result else []
                if result is not None:
                    _check_history(h, old_entries, op, result, report, f"{key}: the dream at generation {gen}",
                                   unexplained_history)
                for name in op.get("from") or ():
                    entry = old_entries.get(name)
                    rec = _record_at(h, entry.file) if entry is not None else None
                    if entry is None or rec is None or (into is not None and result is None):
                        seen["unverifiable"] += 1
                        continue
                    if into is None and rec.expires is not None and rec.expires < day and rec.importance < 0.8:
                        seen["expired"] += 1
                        continue
                    if into is None and _superseded(h, before, entry, rec, supersedes):
                        seen["superseded"] += 1
                        continue
                    lost = [c for c in clauses(rec.description, rec.body) if not said_by(c, own)]
                    if lost:
                        if live_cache is None:
                            live = [_record_at(h, e.file) for e in after.records]
                            live_cache = [clause_units(c) for r in live if r is not None
                                          for c in clauses(r.description, r.body)]
                        lost = [c for c in lost if not said_by(c, live_cache)]
                    if lost and not _has_version(h.path, entry.file, entry.sha256):
                        # Edited by hand after the dream verified it: the version the dream merged
                        # is gone (the editor wrote in place), and the edited one must have been
                        # put back and adopted — said by a live record of a later generation.
                        lost = [c for c in lost if not said_by(c, _later_clauses(h, gen, clause_units, clauses))]
                        seen["edited during the dream" if not lost else "lost"] += 1
                    else:
                        seen["kept" if not lost else "lost"] += 1
                    report.ok("dream-retention", not lost,
                              f"{key}: the dream at generation {gen} removed {name!r} "
                              f"({'merged into ' + repr(into) if into else 'dropped'}) and no live record "
                              f"still says {lost[:3]}")
    report.observations["dream_retention"] = dict(sorted(seen.items()))


def _check_history(h: DirHistory, old_entries: dict[str, Any], op: Mapping[str, Any], result: Any,
                   report: Report, where: str, unexplained_history: Any) -> None:
    """A merge result's history line (``**Previously:**``) holds only clauses an explicit
    newer source superseded, or that were history already: a dream may move a fact out of
    the present only on an explicit newer statement."""
    sources = []
    for name in op.get("from") or ():
        entry = old_entries.get(name)
        rec = _record_at(h, entry.file) if entry is not None else None
        if entry is None or rec is None:
            return  # unverifiable, counted by the caller
        sources.append((entry.updated_at or entry.created_at or "", rec.description, rec.body))
    demoted = unexplained_history((result.description, result.body), sources)
    report.ok("dream-retention", not demoted,
              f"{where} merged {list(op.get('from') or ())} into {op.get('into')!r} and moved "
              f"{demoted[:3]} to history without an explicit newer statement")


def _superseded(h: DirHistory, before: Manifest, entry: Any, rec: Any, supersedes: Any) -> bool:
    stamp = entry.updated_at or entry.created_at or ""
    for other in before.records:
        if other.name == entry.name or (other.updated_at or other.created_at or "") <= stamp:
            continue
        newer = _record_at(h, other.file)
        if newer is not None and supersedes((newer.description, newer.body), (rec.description, rec.body)):
            return True
    return False


def forget_outcomes(histories: dict[str, DirHistory], ledger: Ledger) -> dict[str, int]:
    """What each committed forget found: the name present (removed), already merged into
    another record by a dream (a no-op that leaves the fact alive in the merge result), or
    absent for another reason (forgotten twice, never applied, a name that never existed)."""
    out: Counter[str] = Counter()
    for key, h in histories.items():
        forgets = ledger.forget_names(key)
        merged_at: dict[str, int] = {}
        for g, gen in h.gens.items():
            for op in gen.change.get("merged") or ():
                for n in op.get("from") or ():
                    merged_at.setdefault(str(n), g)
        for g, gen in h.gens.items():
            names = forgets.get(str(gen.change.get("job_id")))
            if names is None or g - 1 not in h.gens:
                continue
            for n in names:
                if n in h.gens[g - 1].names:
                    out["removed"] += 1
                elif merged_at.get(n, g) < g:
                    out["already-merged-away"] += 1
                else:
                    out["absent"] += 1
        # A forget that removed nothing changed no record: it made no generation and is found
        # among the current manifest's applied jobs (DESIGN §3).
        committed = {str(gen.change.get("job_id")) for gen in h.gens.values()}
        applied = set(h.current.applied_jobs) if h.current is not None else set()
        for job, names in forgets.items():
            if job in committed or job not in applied:
                continue
            for n in names:
                out["already-merged-away" if n in merged_at else "absent"] += 1
    return dict(sorted(out.items()))


def _stored_name(entry: Mapping[str, Any]) -> tuple[str, str]:
    """A remember's name, and the name the store gives it: a name with a part sharing four
    characters with a secret the job carries is replaced by one made from the redacted
    description (``memory.store.redaction.clean_name``, issue 22), so ``c1-11-58`` with the key
    ``xoxb-8938115871…`` in its body is stored as ``deploys-go-through-staging``."""
    from memory.store.redaction import clean_name

    name = str(entry["name"])
    secrets = [str(s) for s in entry.get("secrets") or ()]
    return name, clean_name(name, str(entry.get("description") or ""), *secrets)


def _check_remember(h: DirHistory, gen: int, names: tuple[str, str], ledger: Ledger, key: str,
                    report: Report) -> None:
    change = h.gens[gen].change
    touched = list(change.get("added", [])) + list(change.get("updated", []))
    asked, redacted = names
    stored = [t for t in touched if t == asked or (redacted != asked and re.fullmatch(
        re.escape(redacted) + r"(-\d+)?", t))]
    report.ok("remember-present", bool(stored),
              f"{key}: remember of {asked!r} committed at generation {gen} touched {touched} instead")
    name = stored[0] if stored else asked
    current = h.current
    assert current is not None
    if name in h.gens[current.generation].names:
        report.ok("remember-present", True, "")
        return
    last_removal = None
    for g in range(gen + 1, current.generation + 1):
        if g in h.gens and g - 1 in h.gens and name in h.gens[g - 1].names and name not in h.gens[g].names:
            last_removal = g
    reason = _removal_reason(h, last_removal, name, ledger, key) if last_removal is not None else None
    report.ok("remember-present", reason is not None,
              f"{key}: remembered {name!r} (generation {gen}) is gone and nothing explains it "
              f"(last removal at generation {last_removal})")


_TOKEN = re.compile(rb"[A-Za-z0-9_-]{%d,}" % SECRET_TAIL)
_HEX = re.compile(rb"[0-9a-f]+")


def find_leaks(data: bytes, tails: set[bytes]) -> set[bytes]:
    """The planted-secret tails that occur in ``data`` (every 16-char window of every token).

    Linear in ``data``; pure lowercase-hex tokens (sha256 sums, ids) are skipped unless some
    tail is itself hex.
    """
    hex_tails = any(_HEX.fullmatch(t) for t in tails)
    found: set[bytes] = set()
    for m in _TOKEN.finditer(data):
        tok = m.group()
        if not hex_tails and _HEX.fullmatch(tok):
            continue
        for i in range(len(tok) - SECRET_TAIL + 1):
            window = tok[i : i + SECRET_TAIL]
            if window in tails:
                found.add(window)
    return found


def check_secrets(world: World, ledger: Ledger, extra: set[str], daemon_logs: list[Path],
                  histories: dict[str, DirHistory], report: Report) -> None:
    """No planted secret in any record file (current or in ``.history/``), manifest or log.

    Old manifests in ``.history/`` are not scanned: what they describe is in the record files
    kept next to them, which are.
    """
    secrets = {s for s in ledger.secrets() | extra if len(s) >= SECRET_TAIL}
    tails = {s[-SECRET_TAIL:].encode() for s in secrets}
    files: list[Path] = []
    for d in [*world.dirs, world.outside]:
        for root, _dirs, names in os.walk(d):
            files += [Path(root) / n for n in names
                      if not n.startswith((".ballast", "manifest-")) or n.endswith(".md")]
    files += daemon_logs
    files += sorted(world.logs_dir.glob("*.err"))
    for f in files:
        try:
            data = f.read_bytes()
        except OSError:
            continue
        leaks = find_leaks(data, tails) if tails else set()
        report.ok("no-secret", not leaks,
                  f"planted secret(s) found in {f}: " + ", ".join(sorted(f"…{t.decode()}" for t in leaks)))
    for key, h in histories.items():
        if h.current is None:
            continue
        hand = ledger.hand_written(key)
        for e in h.current.records:
            if not OUR_FILE_RE.match(e.file) or e.file in hand:
                continue
            with contextlib.suppress(OSError):
                text = (h.path / e.file).read_text(encoding="utf-8", errors="replace")
                _clean, kinds = redact(text)
                report.ok("no-secret", not kinds, f"{key}/{e.file}: the redactor still finds {kinds}")


def check_nested_md(world: World, report: Report) -> None:
    for d in world.dirs:
        nested = sorted(str(p.relative_to(d)) for p in d.rglob("*.md") if p.parent != d)
        report.ok("no-nested-md", not nested, f"{d}: *.md files Claude Code would read as memories: {nested[:5]}")


def check_locks(world: World, report: Report) -> None:
    import filelock

    for d in [*world.dirs, world.outside]:
        report.ok("no-lock-held", not (d / ".dream.lock").exists(), f"{d}: .dream.lock left behind")
        halves = sorted(n for n in os.listdir(d) if n.startswith(".dream.lock.break-"))
        report.ok("no-lock-held", not halves, f"{d}: half-broken lease files left: {halves}")
    for lock_path in [*(d / ".lock" for d in world.dirs), world.spool / ".lock"]:
        if not lock_path.exists():
            continue
        lock = filelock.FileLock(str(lock_path), timeout=0)
        try:
            lock.acquire(timeout=0)
            lock.release()
            report.ok("no-lock-held", True, "")
        except filelock.Timeout:
            report.ok("no-lock-held", False, f"{lock_path} is still held")


_STARTED = ("daemon.ready", "daemon.once_done", "job.claimed")


def startup_recovered(events: list[dict[str, Any]]) -> int | None:
    """Claims a run put back at start-up (``spool.recovered`` before it was ready), or None
    when the log shows no start at all (the run was killed before it got that far)."""
    if not any(e.get("event") in ("daemon.started", "daemon.once_done") for e in events):
        return None
    count = 0
    for e in events:
        if e.get("event") in _STARTED:
            break
        if e.get("event") == "spool.recovered":
            count += int(e.get("count", 0))
    return count


def check_kills(ledger: Ledger, daemon_logs: list[Path], report: Report) -> None:
    """After every SIGKILL, the next run that started put back exactly the claims left in cur/.

    A run killed before it logged its start recovered nothing; its own kill record (with the
    same claims still in cur/) is then checked against the run after it.
    """
    kills = {int(k["incarnation"]): k for k in ledger.ops("kill_daemon")}
    by_name = {p.name: i for i, p in enumerate(daemon_logs)}
    for inc, kill in sorted(kills.items()):
        pos = by_name.get(f"daemon-{inc}.log")
        if not report.ok("kill-logged", pos is not None, f"no log for killed incarnation {inc}"):
            continue
        assert pos is not None
        if not report.ok("kill-logged", pos + 1 < len(daemon_logs), f"nothing ran after the SIGKILL of incarnation {inc}"):
            continue
        nxt = daemon_logs[pos + 1]
        events = _log_events(nxt)
        recovered = startup_recovered(events)
        if recovered is None:
            report.ok("kill-logged", nxt.name == f"daemon-{inc + 1}.log" and inc + 1 in kills,
                      f"{nxt.name} (after killing incarnation {inc}) never started and was not killed either")
            continue
        cur = int(kill.get("cur", 0))
        report.ok("kill-logged", recovered == cur,
                  f"incarnation {inc} died with {cur} claim(s) in cur/; {nxt.name} put back {recovered} at start-up")
        for d in kill.get("leases") or ():
            later = daemon_logs[pos + 1:]
            found = any(
                e.get("event") == "lease.recovered" and e.get("memory_dir") == d
                for p in later for e in _log_events(p)
            )
            report.ok("kill-logged", found,
                      f"incarnation {inc} died holding the dream lease of {d}; no later lease.recovered")


def check_logs(daemon_logs: list[Path], report: Report) -> None:
    events = Counter[str]()
    unparsed = 0
    for p in daemon_logs:
        lines = p.read_bytes().splitlines()
        for i, line in enumerate(lines):
            try:
                e = json.loads(line)
                events[str(e.get("event"))] += 1
            except ValueError:
                if i != len(lines) - 1:  # a SIGKILL may tear the last line only
                    unparsed += 1
    report.ok("logs-json", unparsed == 0, f"{unparsed} daemon log line(s) are not JSON")
    report.observations["log_events"] = dict(sorted(events.items()))


def check(world: World, ledger: Ledger, *, daemon_logs: list[Path], extra_secrets: set[str] | None = None,
          final_term: tuple[int | None, float] | None = None) -> Report:
    """Run every invariant over a drained run; the report lists violations and check counts."""
    report = Report()
    done, failed = check_spool(world, report)
    histories = {str(d): load_history(d) for d in world.dirs}
    malformed_logged = {str(e.get("file")) for p in daemon_logs for e in _log_events(p)
                        if e.get("event") == "store.malformed"}
    check_manifests(world, histories, ledger, malformed_logged, report)
    check_history(world, histories, ledger, done, failed, report)
    check_dream_retention(histories, report)
    check_log(histories, report)
    check_secrets(world, ledger, extra_secrets or set(), daemon_logs, histories, report)
    check_locks(world, report)
    check_nested_md(world, report)
    check_kills(ledger, daemon_logs, report)
    check_logs(daemon_logs, report)
    if final_term is not None:
        code, took = final_term
        report.ok("clean-stop", code == 0 and took < 10.0,
                  f"the final SIGTERM: exit code {code} after {took:.1f}s (want 0 within 10 s)")
    reasons = Counter[str]()
    for job_id in failed:
        with contextlib.suppress(OSError, ValueError):
            reason = str(json.loads((world.spool / "failed" / f"{job_id}.error.json").read_bytes())["reason"])
            reasons[" ".join(reason.split()[:6])] += 1
    report.observations["failed_reasons"] = dict(reasons.most_common(30))
    report.observations["symlinked_records"] = sorted(
        f"{k}/{e.file}" for k, h in histories.items() if h.current
        for e in h.current.records if (h.path / e.file).is_symlink())
    report.observations["records"] = {k: len(h.current.records) if h.current else None for k, h in histories.items()}
    report.observations["generations"] = {k: h.current.generation if h.current else None for k, h in histories.items()}
    tmp_left = len(os.listdir(world.spool / "tmp")) if (world.spool / "tmp").is_dir() else 0
    report.observations["stray_tmp_files"] = tmp_left
    return report


def world_of(workdir: Path) -> tuple[World, list[Path]]:
    """The world and the run's logs (daemon incarnations, then drain runs, in order) of a
    finished run's ``workdir`` — for re-checking a run by hand."""
    mem = workdir / "mem"
    dirs = sorted(p for p in mem.glob("d*") if p.is_dir())
    if (mem / "full" / "manifest.json").exists():
        dirs.append(mem / "full")
    logs_dir = workdir / "logs"

    def numbered(prefix: str) -> list[Path]:
        found = [(int(p.stem.split("-")[1]), p) for p in logs_dir.glob(f"{prefix}-*.log")]
        return [p for _, p in sorted(found)]

    world = World(workdir=workdir, spool=workdir / "spool", mem_root=mem, dirs=dirs,
                  outside=workdir / "outside", ledger_dir=workdir / "ledger", logs_dir=logs_dir,
                  full_dir=mem / "full" if mem / "full" in dirs else None)
    return world, numbered("daemon") + numbered("once")


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m tests.torture.checker",
                                     description="Re-check the workdir of a finished torture run.")
    parser.add_argument("workdir", type=Path)
    args = parser.parse_args(argv)
    world, logs = world_of(args.workdir.resolve())
    report = check(world, Ledger.load(world.ledger_dir), daemon_logs=logs)
    print(json.dumps(report.to_json(), indent=1, sort_keys=True))
    return 1 if report.violations else 0


def _scripted_permanent(world: World, job: str, failed: set[str]) -> bool:
    """A valid job the fake model answered with its scripted permanent 400 (``fake_model.py``:
    2 % of calls) is rightly in failed/: a malformed-request answer is not retried."""
    if job not in failed:
        return False
    try:
        reason = str(json.loads((world.spool / "failed" / f"{job}.error.json").read_bytes()).get("reason", ""))
    except (OSError, ValueError):
        return False
    return "torture: scripted 400" in reason


if __name__ == "__main__":
    raise SystemExit(main())
