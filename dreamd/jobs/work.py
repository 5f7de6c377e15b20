"""Job execution and dreams: where spool jobs, models and the store meet.

``execute`` applies one validated spool job to its memory directory; ``dream`` runs one
consolidation. Both speak the error hierarchy the daemon acts on: TransientError / LockTimeout
→ defer and retry, PermanentError → ``failed/``. A model answer that breaks the rules changes
nothing; it is retried (deferred) and, after ``max_attempts``, lands in ``failed/`` with the
gate's reason as ``last_error``. A misconfigured model (key or login refused, no such model,
no CLI) is not a bad answer: the job fails at once with "model misconfigured: …" (nothing is
lost: ``dreamd retry`` after fixing ``[model]``), a dream backs off, and the reason is kept for
``dreamd status``/``doctor`` (:mod:`dreamd.models.health`).

The extraction cursor and the job id are committed in the same commit as the records, so
re-running a job is a no-op and a PreCompact + SessionEnd pair of the same session extracts
each turn once.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from dreamd.config import Config
from dreamd.jobs import batches as _batches
from dreamd.jobs import state as _state
from dreamd.jobs.budget import check as check_budget
from dreamd.jobs.budget import commit_guard
from dreamd.jobs.gates import DirState, GateDecision, evaluate
from dreamd.logs import get_logger
from memory.errors import (
    ConflictError,
    LeaseLost,
    LockError,
    PermanentError,
    RecordError,
    StoreError,
    TransientError,
    UnmanagedError,
)
from memory.model.answer_gate import PlanOp
from memory.model.llm import Model, Usage
from memory.redact import redact_turns
from memory.spool.jobs import Job
from memory.store.locks import HEARTBEAT_EVERY, DreamLease
from memory.store.manifest import (
    EXTRACTED_KEY,
    Manifest,
    extracted_digest,
    extracted_ids,
    parse_iso,
)
from memory.store.records import Record, validate_fields
from memory.store.transaction import Change, FaultHook, MemoryStore

if TYPE_CHECKING:
    from dreamd.jobs.group import StoreView
    from dreamd.logs import EventLogger
    from dreamd.models.health import ModelHealth
    from dreamd.models.prompts import PlanRecord
    from dreamd.models.retention import Loss
    from dreamd.models.supersession import Heard
    from dreamd.models.usage import UsageLedger
    from memory.transcripts import Turn

log: EventLogger = get_logger("dreamd.work")

EXTRACT_MAX_CHARS = 60_000
USAGE_FLUSH_SECONDS = 1.0
"""How often the daemon's usage ledger is written (:class:`dreamd.models.usage.UsageLedger`)."""


class ModelOutcome(Protocol):
    """What :meth:`Context.note_model` reads of a model operation's outcome
    (:class:`dreamd.models.ops.ExtractOutcome` and ``PlanOutcome`` have it)."""

    @property
    def error(self) -> str | None: ...

    @property
    def transient(self) -> bool: ...

    @property
    def misconfigured(self) -> bool: ...


@dataclass
class Context:
    """What job execution needs from the daemon: settings, a model, a usage ledger, a clock."""

    config: Config
    model: Model
    ledger: UsageLedger | None = None
    """Where model usage is counted against the daily budget (None: not counted, e.g. in tests)."""
    clock: Callable[[], datetime] = field(default=lambda: datetime.now(UTC))
    fault: FaultHook | None = None
    """Test hook: called with step names (dream steps and the store's commit steps)."""
    health: ModelHealth | None = None
    """The model's standing for status/doctor (None: not persisted, e.g. in tests)."""
    _stores: dict[str, MemoryStore] = field(default_factory=dict, repr=False)

    @classmethod
    def create(cls, config: Config, *, model: Model | None = None) -> Context:
        from dreamd.models.factory import make_model
        from dreamd.models.health import ModelHealth, health_path
        from dreamd.models.usage import UsageLedger, default_ledger_path

        return cls(
            config=config,
            model=model or make_model(config.model.to_dict()),
            ledger=UsageLedger(default_ledger_path(), flush_after=USAGE_FLUSH_SECONDS),
            health=ModelHealth(health_path(config.daemon.spool)),
        )

    def store(self, memory_dir: str | Path) -> MemoryStore:
        """One store per directory, so its manifest cache survives between jobs (at 10,000
        records a fresh store re-parses a 3 MB manifest per commit). Thread-safe: the store
        only mutates its cache under the directory's lock."""
        key = os.path.realpath(memory_dir)
        store = self._stores.get(key)
        if store is None:
            store = self._stores.setdefault(
                key,
                MemoryStore(
                    memory_dir,
                    history_generations=self.config.retention.history_generations,
                    fault=self.fault,
                ),
            )
        return store

    def step(self, name: str) -> None:
        if self.fault is not None:
            self.fault(name)

    def record_usage(self, memory_dir: str | Path, usage: Usage | None) -> None:
        if self.ledger is None or usage is None:
            return
        try:
            self.ledger.record(str(memory_dir), usage, now=self.clock())
        except Exception as exc:  # accounting must never fail a job
            log.warning("usage.ledger_failed", memory_dir=str(memory_dir), error=str(exc))

    def note_model(self, memory_dir: str | Path, outcome: ModelOutcome) -> None:
        """Keep the model's standing for status/doctor: a misconfiguration is written down,
        any answer (even a refused one) proves the setup works; transient failures say
        nothing either way."""
        if self.health is None or outcome.transient:
            return
        try:
            if outcome.misconfigured:
                self.health.misconfigured(
                    str(outcome.error), model=self.model.name, memory_dir=str(memory_dir),
                    now=self.clock(),
                )  # fmt: skip
            else:
                self.health.ok()
        except Exception as exc:  # bookkeeping must never fail a job
            log.warning("model.health_unwritable", memory_dir=str(memory_dir), error=str(exc))

    def spent_today(self, memory_dir: str | Path) -> int:
        if self.ledger is None:
            return 0
        try:
            return self.ledger.spent_today(str(memory_dir), now=self.clock())
        except Exception:
            return 0


# ---------------------------------------------------------------------------- helpers


def _redact_record(rec: Record) -> Record:
    from memory.store.redaction import redact_record

    clean, kinds = redact_record(rec)  # name, description, title, metadata and body
    if kinds:
        log.info("record.redacted", name=clean.name, kinds=sorted(set(kinds)))
    return clean


# ---------------------------------------------------------------------------- execute


def execute(job: Job, ctx: Context) -> str:
    """Apply one validated job; returns an outcome word for the log.

    A job for a directory that is not managed fails at once (permanent, with the fix in the
    reason) instead of burning retries: ``dreamd adopt``/``init`` and then ``dreamd retry``.
    """
    try:
        return _execute(job, ctx)
    except UnmanagedError as exc:
        raise PermanentError(f"{exc}; then 'dreamd retry {job.id}'") from None


def execute_group(jobs: Sequence[Job], ctx: Context, *, running: Callable[[int], None] | None = None) -> list[str | Exception]:
    """Run several validated jobs of one directory as one group commit (DESIGN §3, §5); the
    outcome of each, in order: its outcome word, or the exception it would have raised alone.

    Each job runs over the set the ones before it staged (:class:`dreamd.jobs.group.StagedStore`)
    and all their changes commit in one :meth:`MemoryStore.commit_all`. A change that no longer
    applies there (a conflict, and every change after it, which was prepared over it) is not
    written: those jobs run again at once, alone, as :func:`execute` runs any job. An error of
    the whole commit (the lock, a full disk) is the outcome of every job that staged a change.
    ``running(i)`` is called as job ``i`` starts (the dispatcher's budget names the culprit).
    """
    from dreamd.jobs.group import GROUPED_KINDS, StagedStore

    if not jobs:
        return []
    directory = Path(jobs[0].memory_dir)
    if any(j.memory_dir != jobs[0].memory_dir or j.kind not in GROUPED_KINDS for j in jobs):
        raise PermanentError(f"{directory}: a group holds extract and remember jobs of one directory only")
    try:
        if any(j.adopt for j in jobs):
            adopt_on_first_use(directory)
        view = StagedStore(ctx.store(directory), clock=ctx.clock)
    except UnmanagedError as exc:
        return [PermanentError(f"{exc}; then 'dreamd retry {j.id}'") for j in jobs]
    outcomes: list[str | Exception] = []
    for i, job in enumerate(jobs):
        if running is not None:
            running(i)
        view.job = i
        try:
            check_budget()
            outcomes.append(_extract(job, ctx, view) if job.kind == "extract" else _remember(job, ctx, view))
        except UnmanagedError as exc:
            outcomes.append(PermanentError(f"{exc}; then 'dreamd retry {job.id}'"))
        except Exception as exc:
            outcomes.append(exc)
    if not view.changes:
        return outcomes
    staged = set(view.owners)
    prepared = time.monotonic()
    try:
        with commit_guard():
            results = ctx.store(directory).commit_all(view.changes, stop_at_failure=True)
    except Exception as exc:
        return [exc if i in staged and not isinstance(o, Exception) else o for i, o in enumerate(outcomes)]
    again: list[int] = []
    for owner, result in zip(view.owners, results, strict=True):
        if isinstance(result, Exception) and owner not in again:
            again.append(owner)
    for i in sorted(again):  # retried alone, in order: what they staged was not written
        if running is not None:
            running(i)
        try:
            outcomes[i] = execute(jobs[i], ctx)
        except Exception as exc:
            outcomes[i] = exc
    committed = {o for o, r in zip(view.owners, results, strict=True) if not isinstance(r, Exception)}
    log.info("group.committed", memory_dir=str(directory), jobs=len(jobs), changes=len(view.changes),
             committed=len(committed), retried_alone=len(again), commit_ms=round((time.monotonic() - prepared) * 1000, 1))
    return outcomes


def _execute(job: Job, ctx: Context) -> str:
    kind = job.kind
    if kind == "extract":
        return _extract(job, ctx)
    if kind == "remember":
        return _remember(job, ctx)
    if kind == "forget":
        return _forget(job, ctx)
    if kind == "consolidate":
        result = dream(Path(job.memory_dir), ctx, force=job.force)
        if result.status in ("transient", "lease-busy", "lease-unconfirmed", "conflict", "lease-lost"):
            raise TransientError(f"consolidation {result.status}: {result.reason}")
        if result.status == "misconfigured":
            raise PermanentError(f"{result.reason}; fix [model], then 'dreamd retry {job.id}'")
        return f"dream-{result.status}"
    raise PermanentError(f"job {job.id}: unknown kind {kind!r}")


def adopt_on_first_use(memory_dir: Path) -> str | None:
    """Take Claude Code's auto-memory directory under management the first time a job for it
    arrives (the job says ``adopt``, DESIGN §2.4); None when it already is managed.

    What Claude Code wrote is adopted byte for byte and its MEMORY.md archived
    (:func:`memory.store.adopt.adopt`); a directory that does not exist yet is created empty inside
    its existing parent (Claude Code's project folder). Another writer adopting first is fine.
    """
    from memory.store.adopt import adopt

    if (memory_dir / "manifest.json").is_file():
        return None
    if not memory_dir.is_dir():
        if not memory_dir.parent.is_dir():
            raise PermanentError(f"{memory_dir}: neither it nor its parent exists; nothing to adopt")
        memory_dir.mkdir(mode=0o700, exist_ok=True)
    try:
        with commit_guard():
            report = adopt(memory_dir)
    except StoreError:
        if (memory_dir / "manifest.json").is_file():
            return None  # adopted by someone else meanwhile
        raise
    log.info(
        "adopt.first_use",
        memory_dir=str(memory_dir),
        generation=report.generation,
        adopted=len(report.adopted),
        malformed=len(report.malformed),
        index_archived=report.index_archived,
    )
    return f"adopted {len(report.adopted)}"


def _extract(job: Job, ctx: Context, view: StoreView | None = None) -> str:
    """Extract a session's new turns, window by window, oldest first (DESIGN §5).

    Each window that ends on a turn boundary is committed with its records and the cursor
    just past it, so a crash or a refused later window keeps what was done and the retry
    starts where the cursor stopped. The last commit carries the job id (the job is applied
    once); earlier ones name the job in the records' sources.
    """
    from dreamd.jobs.batches import windows
    from dreamd.models import ops, supersession
    from memory.transcripts import new_turns, parse_transcript, source_ids

    if job.adopt and view is None:
        adopt_on_first_use(Path(job.memory_dir))
    store = view if view is not None else ctx.store(job.memory_dir)
    manifest = store.snapshot()  # read-only here: read()'s copy of every entry cost ~1 ms a job
    if job.id in manifest.applied_jobs:
        return "duplicate"
    carried = job.transcript
    if carried is None:
        raise PermanentError(f"job {job.id}: extract carries no transcript")
    transcript = parse_transcript(carried.content, carried.format or "auto")
    session = job.session_id or transcript.session_id or f"job-{job.id}"
    cursor = manifest.cursors.get(session, 0)
    fresh = new_turns(transcript.turns, cursor)
    end = len(transcript.turns)
    # A fork (--resume ID --fork-session) replays the original's turns, same uuids, under a new
    # session id whose cursor starts at 0: turns another session already extracted are skipped.
    done = extracted_ids(manifest.extra.get(EXTRACTED_KEY))
    if done:
        fresh = [t for t in fresh if extracted_digest(t.message_id) not in done]
    if not fresh:
        with commit_guard():
            store.commit(Change(actor="job", job_id=job.id, session_id=session, cursor=(session, end), note="no new turns"))
        return "nothing-new"
    # each turn, and a secret split across two turns ("the password is" / the value alone)
    texts = redact_turns([t.text for t in fresh], [t.role for t in fresh])
    redacted = [dataclasses.replace(t, text=text) for t, text in zip(fresh, texts, strict=True)]
    cut = windows(redacted, cursor, EXTRACT_MAX_CHARS)
    # the session's user turns, the new ones as redacted: where a correction's replaced value
    # may have been the user's earlier one (dreamd.models.supersession.carried_history)
    by_id = {t.message_id: t.text for t in redacted}
    said = supersession.Heard([by_id.get(t.message_id, t.text) for t in transcript.turns if t.role == "user"])
    bound = log.bind(job_id=job.id, memory_dir=str(job.memory_dir), session_id=session)
    added: list[str] = []
    held: list[Record] = []
    named: dict[str, str] = {}  # new record → the record the model said it supersedes
    since_commit: list[Turn] = []  # turns read since the last commit: their ids go with it
    for number, window in enumerate(cut, start=1):
        check_budget()
        last = number == len(cut)
        outcome = ops.extract(
            ctx.model,
            window.turns,
            manifest.records,
            today=_today(window.turns, ctx),
            max_tokens=ctx.config.model.max_tokens,
        )
        ctx.record_usage(job.memory_dir, outcome.usage)
        ctx.note_model(job.memory_dir, outcome)
        if outcome.transient:
            raise TransientError(f"model unavailable: {outcome.error}")
        if outcome.misconfigured:
            raise PermanentError(f"{outcome.error}; fix [model], then 'dreamd retry {job.id}'")
        if outcome.error:
            bound.warning("extract.rejected", window=number, windows=len(cut), reason=outcome.error)
            what = "model answer rejected" if outcome.rejected else "model call failed"
            raise TransientError(f"{what}: {outcome.error}")
        since_commit += window.turns
        known = {(e.type, e.description.strip().lower()) for e in manifest.records}
        known |= {(r.type, r.description.strip().lower()) for r in held}
        held += [_redact_record(r) for r in outcome.records if (r.type, r.description.strip().lower()) not in known]
        named.update(outcome.supersedes)
        bound.info(
            "extract.window",
            window=number,
            windows=len(cut),
            first_turn=window.start,
            end_turn=window.end,
            turns=len(window.turns),
            chars=window.chars,
            found=len(outcome.records),
        )
        if window.end is None:
            continue  # a slice of a long turn: its records wait for the turn's last slice
        fresh_records, merges, superseded = _superseding(store, manifest, held, named, said)
        change = Change(
            add=fresh_records,
            merges=merges,
            superseded=superseded,
            base={e.name: e.sha256 for e in manifest.records if e.name in superseded},
            actor="job",
            job_id=job.id if last else None,
            session_id=session,
            cursor=(session, end if last else window.end),
            sources=[] if last else [f"job:{job.id}"],
            note="" if last else f"window {number} of {len(cut)} of job {job.id}",
            extracted=source_ids(since_commit),
        )
        try:
            with commit_guard():
                result = store.commit(change)
        except ConflictError as exc:  # a record it supersedes changed meanwhile: extract again
            raise TransientError(f"extraction conflict: {exc}") from None
        if result.duplicate:
            return "duplicate"
        added += result.added
        held = []
        named = {}
        since_commit = []
        manifest = store.snapshot()
        replaced = {s: str(m["into"]) for m in manifest.change.get("merged", []) if m.get("superseded") for s in m["from"]}
        if replaced:
            bound.info("extract.superseded", generation=result.generation, superseded=replaced)
        bound.info("extract.committed", generation=result.generation, added=result.added, turns=len(window.turns),
                   window=number, windows=len(cut))
    return f"extracted {len(added)}"


def _superseding(
    store: StoreView, manifest: Manifest, records: Sequence[Record], named: dict[str, str], said: Heard | None = None
) -> tuple[list[Record], list[tuple[list[str], Record | None]], set[str]]:
    """Split newly extracted records into plain additions and supersessions of live records
    (:mod:`dreamd.models.supersession`): the record a model named (the gate checked it was in
    the set shown; it must still be live), else one whose value the new record replaces by
    structure. A record replacing an earlier one of the same batch takes its place, the earlier
    one's replaced words on its history line. Each live record is superseded once per commit;
    one that cannot be read is passed over (a hostile file stops nothing). A plain addition
    whose statement names the value it replaces, that value being the user's earlier one (in
    ``said``, the session's user turns, before the correction, or in a live record), carries
    its own history (:func:`dreamd.models.supersession.carried_history`); no other record changes."""
    from dreamd.models import supersession

    live = sorted(manifest.records, key=lambda e: (e.updated_at or e.created_at or "", e.name), reverse=True)
    by_name = {e.name: e for e in live}
    index = supersession.LiveIndex((e.name, e.description) for e in live) if records else None
    adds: list[Record] = []
    merges: list[tuple[list[str], Record | None]] = []
    taken: set[str] = set()
    heard: supersession.Heard | None = None

    def read(name: str) -> Record | None:
        try:
            return store.read_record(by_name[name])
        except (RecordError, StoreError, OSError):
            return None

    for rec in records:
        target = named.get(rec.name)
        # the earlier record of the batch the new one names (the statement it changes, by identity)
        mine = next((i for i, r in enumerate(adds) if r.name == target), None)
        if mine is not None and (by_id := supersession.linked(rec, adds[mine])) is not None:
            adds[mine] = by_id.result
            continue
        # a later record of the same batch replacing an earlier one (one session said both):
        # the earlier leaves the commit, its replaced words on the later one's history line
        earlier = next(((i, s) for i, r in enumerate(adds) if (s := supersession.supersede(rec, r)) is not None), None)
        if earlier is not None:
            adds[earlier[0]] = earlier[1].result
            continue
        within = next(((i, s) for i, (_, r) in enumerate(merges)
                       if r is not None and (s := supersession.supersede(rec, r)) is not None), None)
        if within is not None:
            merges[within[0]] = (merges[within[0]][0], within[1].result)
            continue
        found: supersession.Superseding | None = None
        if target in by_name and target not in taken and (old := read(target)) is not None:
            found = supersession.named(rec, old)
        if found is None:
            for name in index.candidates(rec) if index is not None else ():
                if name not in taken and (old := read(name)) is not None:
                    found = supersession.supersede(rec, old)
                    if found is not None:
                        break
        if found is None:
            if heard is None:
                heard = (said or supersession.Heard(())).with_records(index)
            adds.append(supersession.carried_history(rec, heard) or rec)
            continue
        taken.add(found.old)
        merges.append(([found.old], found.result))
    return adds, merges, taken


def _current_values(plan: Sequence[PlanOp], inputs: Sequence[Any], pairs: Sequence[tuple[Any, Record]],
                    *, today: date) -> list[PlanOp]:
    """A dream's supersessions (whichever model planned them) with the result's own statement
    stating the current value (:func:`dreamd.models.supersession.current_value`): the words of
    it naming the replaced value moved to the history line beside what the merge moved there.
    The quote (the user's words under the statement) elides them too when the retention gate
    still passes the op so rewritten; else the statement alone is rewritten. A merge planned
    plain over a source a newer one replaces by extraction's reading is first tried as that
    supersession (:func:`dreamd.models.supersession.superseding_merge`); an op the gate would
    refuse every way is kept as planned.

    A rewrite is checked against the op's own sources alone: a clause it moves out of the
    statement must be said by the op's result (or moved there by a newer statement), never kept
    only by a record outside the op, which another op of the plan may drop or merge."""
    from dreamd.models.prompts import plan_stamp
    from dreamd.models.retention import plan_losses
    from dreamd.models.supersession import current_merge, superseding_merge

    by_name = {rec.name: rec for _, rec in pairs}
    planned = {rec.name: rec for rec in inputs}
    stamps = {name: plan_stamp(rec) for name, rec in planned.items()}
    out: list[PlanOp] = []
    for op in plan:
        if op.result is None:
            out.append(op)
            continue
        sources = [by_name[n] for n in op.source_names if n in by_name]
        own = [planned[n] for n in op.source_names if n in planned]
        read = superseding_merge(op.result, [(stamps.get(r.name, ""), r) for r in sources])
        # the merge as extraction reads it (a replaced statement on the history line), then as
        # planned; each with the moved words out of the statement and the quote, of the statement
        # alone, or neither: the first the retention gate passes
        for base in ([read] if read is not None else []) + [op.result]:
            tried = [current_merge(base, sources, quote=True), current_merge(base, sources, quote=False), base]
            found = next((PlanOp(op.source_names, c) for c in tried if c is not None
                          and (c is op.result or not plan_losses([PlanOp(op.source_names, c)], own, today=today))), None)
            if found is not None:
                op = found
                break
        out.append(op)
    return out


def _superseded_in(plan: Sequence[PlanOp], pairs: Sequence[tuple[Any, Record]]) -> set[str]:
    """The sources of a dream's merges that supersede them (:func:`dreamd.models.supersession.is_supersession`)."""
    from dreamd.models.supersession import is_supersession

    by_name = {rec.name: rec for _, rec in pairs}
    out: set[str] = set()
    for op in plan:
        sources = [by_name[n] for n in op.source_names if n in by_name]
        if op.result is not None and is_supersession(op.result, sources):
            out.update(op.source_names)
    return out


def _today(turns: Sequence[Turn], ctx: Context) -> date:
    for turn in reversed(turns):
        ts = parse_iso(turn.timestamp)
        if ts is not None:
            return ts.date()
    return ctx.clock().date()


def _remember(job: Job, ctx: Context, view: StoreView | None = None) -> str:
    store = view if view is not None else ctx.store(job.memory_dir)
    manifest = store.read()
    if job.id in manifest.applied_jobs:
        return "duplicate"
    records: list[Record] = []
    for i, item in enumerate(job.records):
        try:
            rec = item if isinstance(item, Record) else validate_fields(item, where=f"job {job.id} records[{i}]")
        except RecordError as exc:
            raise PermanentError(str(exc)) from None
        records.append(_redact_record(rec))
    if not records:
        raise PermanentError(f"job {job.id}: remember carries no records")
    # A name may be a record's key or its own frontmatter name (Claude Code's feedback-db-tests
    # in feedback_db_tests.md): either replaces that record instead of adding a twin.
    keys, _ = _resolve(store, [r.name for r in records], manifest)
    change = Change(
        add=[r for r in records if r.name not in keys],
        replace={keys[r.name]: r for r in records if r.name in keys},
        actor="job",
        job_id=job.id,
        session_id=job.session_id,
    )
    with commit_guard():
        result = store.commit(change)
    return "duplicate" if result.duplicate else f"remembered {len(records)}"


def _forget(job: Job, ctx: Context) -> str:
    store = ctx.store(job.memory_dir)
    names = [str(n) for n in job.names]
    if not names:
        raise PermanentError(f"job {job.id}: forget carries no names")
    manifest = store.read()
    keys, unknown = _resolve(store, names, manifest)
    notes = []
    for name in unknown:
        into = merged_into(store, name)
        if into is None:
            notes.append(f"{name}: not present")
            continue
        # Forgetting the merge result could drop other facts merged into it: say so, loudly.
        notes.append(f"{name}: merged into {into} by a dream; forget {into} to remove the fact")
        log.warning(
            "forget.merged_away",
            job_id=job.id,
            memory_dir=str(job.memory_dir),
            name=name,
            merged_into=into,
        )
    with commit_guard():
        result = store.commit(
            Change(
                remove=list(dict.fromkeys(keys.get(n, n) for n in names)),
                actor="job",
                job_id=job.id,
                session_id=job.session_id,
                note="; ".join(notes),
            )
        )
    return "duplicate" if result.duplicate else f"forgot {len(result.removed)}"


def _resolve(store: StoreView, names: list[str], manifest: Manifest) -> tuple[dict[str, str], list[str]]:
    """:meth:`MemoryStore.resolve`; a name several records answer to fails the job for good."""
    try:
        return store.resolve(names, manifest)
    except StoreError as exc:
        raise PermanentError(str(exc)) from None


def merged_into(store: MemoryStore, name: str) -> str | None:
    """Where a record a dream merged away lives now (following later merges), if history
    still says; None when it was never merged, its last departure was not a merge, or the
    result was dropped or is gone.

    Reads only the change summaries of the kept manifests, newest first, and stops at the
    generation that merged ``name`` away (:func:`memory.store.history.follow_merges`): a forget must
    not parse hundreds of full manifests. An archived manifest that cannot be read is passed
    over, as ``dreamd log`` passes over it, and said so (``history.unreadable``).
    """
    from memory.store.history import Unreadable, change_summaries, follow_merges

    unreadable: list[Unreadable] = []
    into = follow_merges(change_summaries(store, unreadable=unreadable), name)
    if unreadable:
        log.warning(
            "history.unreadable",
            memory_dir=str(store.path),
            generations=[u.generation for u in unreadable],
            error=unreadable[0].reason,
        )
    return into if into is not None and any(e.name == into for e in store.snapshot().records) else None


# ---------------------------------------------------------------------------- gates & dreams


lease_state = _state.lease_state


def dir_state(memory_dir: Path, ctx: Context, *, last_scan_at: datetime | None) -> DirState:
    """The directory's gate inputs (:func:`dreamd.jobs.state.dir_state`, which status shares)."""
    return _state.dir_state(memory_dir, ctx, last_scan_at=last_scan_at)


PLAN_BATCH = _batches.PLAN_BATCH
MIN_PLAN_BATCH = _batches.MIN_PLAN_BATCH
plan_batches = _batches.plan_batches


@dataclass
class _Planned:
    """What planning every batch gave: accepted ops, refused batches (names, reason), and a
    transient failure that stops the dream (retry later, nothing applied)."""

    ops: list[PlanOp] = field(default_factory=list)
    accepted: int = 0
    refused: list[tuple[list[str], str]] = field(default_factory=list)
    transient: str | None = None
    misconfigured: str | None = None
    """A permanent backend error (bad key, unknown model): no batch could succeed."""


def describe_losses(losses: Sequence[Loss]) -> str:
    from dreamd.models.retention import describe

    return describe(losses)


ANSWER_CHARS_PER_TOKEN = 3.0
"""Characters of answer one output token is reckoned to hold when batches are filled (a
model writes about 4; the margin keeps a full batch's answer under ``max_tokens``)."""


def _answer_chars(unit: Sequence[PlanRecord]) -> int:
    """About how long the answer for one candidate group is: one merge result (the longest
    member's text, which a merge keeps, plus what the others add, bounded by their length)
    and the source names; an expired record alone is one short drop."""
    if len(unit) == 1:
        return len(unit[0].name) + 40
    texts = sorted((len(r.description) + len(r.body) for r in unit), reverse=True)
    return texts[0] + sum(texts[1:]) // 4 + sum(len(r.name) + 4 for r in unit) + 120


@dataclass
class DreamBatches:
    """The plan calls of one dream: the batches, in order, and each planned record's candidate
    group (a refused batch is split between groups, not through one)."""

    batches: list[list[PlanRecord]]
    group_of: dict[str, int] = field(default_factory=dict)


def dream_batches(
    inputs: Sequence[PlanRecord],
    entries: Sequence[Any],
    ctx: Context,
    memory_dir: Path,
    *,
    bound: EventLogger,
) -> DreamBatches:
    """The batches a dream plans (DESIGN §6): the whole set in one call when it fits one batch;
    else the candidate groups found over every record (:mod:`dreamd.models.candidates`, with
    the directory's embedding cache when it has one), each whole in one batch, and the
    records whose ``expires`` date has passed. A record nothing links to and that has not
    expired is left out: no plan could merge it with anything, nor drop it (the retention
    gate refuses dropping a fact no other record says), so sending it only costs tokens."""
    size = PLAN_BATCH
    if len(inputs) <= size:
        return DreamBatches(plan_batches(inputs, size))
    from dreamd.models.candidates import candidate_groups

    started = time.monotonic()
    try:
        vectors = cached_vectors(memory_dir, entries, ctx.config.recall.embeddings)
    except Exception as exc:  # a derived cache is never worth a dream
        bound.warning("dream.embeddings_unusable", error=f"{type(exc).__name__}: {exc}")
        vectors = None
    grouping = candidate_groups(inputs, limit=size, vectors=vectors)
    today = ctx.clock().date().isoformat()
    grouped = {i for g in grouping.groups for i in g}
    expired = [i for i, r in enumerate(inputs) if i not in grouped and r.expires is not None and r.expires < today]
    chosen = sorted(grouped) + expired
    at = {i: k for k, i in enumerate(chosen)}
    batches = plan_batches([inputs[i] for i in chosen], size, [[at[i] for i in g] for g in grouping.groups],
                           cost=_answer_chars, budget=int(ctx.config.model.max_tokens * ANSWER_CHARS_PER_TOKEN))
    bound.info(
        "dream.candidates",
        records=len(inputs),
        planned=len(chosen),
        groups=len(grouping.groups),
        expired=len(expired),
        batches=len(batches),
        links=dict(sorted(grouping.links.items())),
        embeddings=vectors is not None,
        duration_ms=round((time.monotonic() - started) * 1000, 1),
    )
    return DreamBatches(batches, {inputs[i].name: g for g, members in enumerate(grouping.groups) for i in members})


def cached_vectors(directory: Path, entries: Sequence[Any], configured: str) -> dict[str, Any] | None:
    """Record name → vector from the directory's embedding cache (the configured model's, else
    any known model's), or None when there is none or numpy is not installed. The cache is only
    read: a dream never loads a model; a record whose hash the cache lacks has no vector."""
    from dreamd.embeddings.model import MODELS
    from memory.retrieval.embed import cache_path

    for model in dict.fromkeys([configured] if configured else list(MODELS)):
        spec = MODELS.get(model)
        if spec is None or not cache_path(directory, model).exists():
            continue
        try:
            from memory.retrieval.embed import current_vectors

            cache = current_vectors(directory, model, spec.dim)
        except ImportError:  # numpy absent: no embeddings extra
            return None
        if cache is not None:
            return {e.name: cache.matrix[cache.rows[e.sha256]] for e in entries if e.sha256 in cache.rows}
    return None


def _plan_all(
    inputs: Sequence[PlanRecord],
    batches: DreamBatches,
    recent: set[str],
    ctx: Context,
    memory_dir: Path,
    *,
    lost: Callable[[], str | None],
    bound: EventLogger,
) -> _Planned:
    """Plan every batch; a batch the model refuses is split in halves and planned again
    (down to ``MIN_PLAN_BATCH``), so one oversized or unlucky batch cannot stop the dream.

    A refusal that splitting cannot fix (a permanent backend error) or a transient one stops
    at once: the first is reported as refused for the whole remaining set, the second defers
    the dream. Batches are planned in order, so the same set gives the same calls.
    """
    from dreamd.models import ops

    out = _Planned()
    queue = [list(b) for b in batches.batches]
    while queue:
        batch = queue.pop(0)
        if lost():
            break
        check_budget()
        outcome = ops.plan(
            ctx.model,
            batch,
            [r.name for r in batch if r.name in recent],
            today=ctx.clock().date(),
            max_tokens=ctx.config.model.max_tokens,
        )
        ctx.record_usage(memory_dir, outcome.usage)
        ctx.note_model(memory_dir, outcome)
        error, rejected = outcome.error, outcome.rejected
        if error is None:
            losses = _batch_losses(outcome.ops, batch, inputs, out.ops, ctx)
            if not losses:
                out.ops.extend(outcome.ops)
                out.accepted += 1
                continue
            error, rejected = describe_losses(losses), True
            bound.warning("dream.plan_lost_facts", records=len(batch), first=batch[0].name,
                          lost=[loss.as_dict() for loss in losses[:20]], reason=error)
        if outcome.transient:
            out.transient = error
            break
        if outcome.misconfigured:
            out.misconfigured = error
            break
        names = [r.name for r in batch]
        split = _batches.halves(batch, MIN_PLAN_BATCH, group=lambda r: batches.group_of.get(r.name)) \
            if rejected else None
        if split is not None:
            bound.info("dream.batch_split", records=len(batch), first=names[0] if names else None, reason=error)
            queue[:0] = split
            continue
        bound.warning("dream.batch_refused", records=len(batch), first=names[0] if names else None,
                      reason=error)
        out.refused.append((names, str(error)))
        if not rejected:  # the backend failed, not the answer: the rest would too
            out.refused.extend(([r.name for r in b], str(error)) for b in queue)
            break
    return out


def _batch_losses(
    ops: Sequence[PlanOp], batch: Sequence[PlanRecord], inputs: Sequence[PlanRecord],
    accepted: Sequence[PlanOp], ctx: Context,
) -> list[Loss]:
    """The retention gate on one batch's plan (:mod:`dreamd.models.retention`): what it would
    lose, with the records outside the batch that stay live (no accepted op consumed them) and
    the results of the ops accepted so far counting as still saying a fact."""
    from dreamd.models.retention import plan_losses

    def live() -> list[tuple[str, str]]:
        in_batch = {r.name for r in batch}
        consumed = {n for op in accepted for n in op.source_names}
        out = [(r.description, r.body) for r in inputs if r.name not in in_batch and r.name not in consumed]
        return out + [(op.result.description, op.result.body) for op in accepted if op.result is not None]

    return plan_losses(ops, batch, today=ctx.clock().date(), live=live)


@dataclass(frozen=True)
class DreamResult:
    status: str  # applied | nothing | conflict | lease-busy | rejected | gated | transient | misconfigured | lease-lost | dry-run
    reason: str | None = None
    plan: list[PlanOp] = field(default_factory=list)
    generation: int | None = None
    gates: GateDecision | None = None


class _Heartbeat:
    """Refresh the lease every 30 s while a plan is being made (model calls can be slow)."""

    def __init__(self, lease: DreamLease, every: float = HEARTBEAT_EVERY) -> None:
        self._lease = lease
        self._every = every
        self._stop = threading.Event()
        self.lost: str | None = None
        self._thread = threading.Thread(target=self._run, name="dream-heartbeat", daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(self._every):
            try:
                self._lease.heartbeat()
            except LeaseLost as exc:
                self.lost = str(exc)
                return

    def __enter__(self) -> _Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)


DREAM_GC_THRESHOLD = 50_000
"""Generation 0's collection threshold while a dream runs (CPython's default is 700). A cold
dream at 10,000 records allocates millions of short-lived objects (clauses, stems, gists) and
very few cycles: with the default, the cyclic collector ran 441 times in one such dream for
270-340 ms of CPU; at 10,000-50,000 it runs 5-27 times. Reference counting still frees every
acyclic object at once; only cycles wait a little longer."""

_gc_lock = threading.Lock()
_gc_dreams = 0
_gc_saved: tuple[int, int, int] = gc.get_threshold()


@contextlib.contextmanager
def _fewer_collections() -> Iterator[None]:
    """Raise generation 0's threshold for the time one or more dreams run (the threshold is the
    process's: the last dream to end puts back what was there before the first began)."""
    global _gc_dreams, _gc_saved
    with _gc_lock:
        if _gc_dreams == 0:
            _gc_saved = gc.get_threshold()
            gc.set_threshold(max(_gc_saved[0], DREAM_GC_THRESHOLD), _gc_saved[1], _gc_saved[2])
        _gc_dreams += 1
    try:
        yield
    finally:
        with _gc_lock:
            _gc_dreams -= 1
            if _gc_dreams == 0:
                gc.set_threshold(*_gc_saved)


def dream(
    memory_dir: Path,
    ctx: Context,
    *,
    force: bool = False,
    dry_run: bool = False,
    last_scan_at: datetime | None = None,
) -> DreamResult:
    """One consolidation: lease → snapshot → plan → validate → commit (base + fencing) → release.

    ``force`` bypasses the gates but never the lease. A conflict (the set changed while we
    planned) is not an error: nothing is written and a later tick re-plans. A directory synced
    with a team (``[sync]``) also needs the team's lease (:mod:`dreamd.sync.lease`), whoever
    asks for the dream (the daemon, a ``consolidate`` job, ``dreamd consolidate``): taken and
    confirmed on the remote before the plan, and checked again right before the commit (a lost
    one commits nothing). A dry run commits nothing and takes only the local lease.
    """
    memory_dir = Path(memory_dir)
    bound = log.bind(memory_dir=str(memory_dir))
    decision: GateDecision | None = None
    if not force:
        decision = evaluate(dir_state(memory_dir, ctx, last_scan_at=last_scan_at), ctx.config.gates, ctx.clock())
        if not decision.open:
            return DreamResult("gated", decision.reason, gates=decision)
    if dry_run:
        with _fewer_collections():
            return _consolidate(memory_dir, ctx, bound, decision, dry_run=True, fence=None)
    from dreamd.sync.lease import team_dream_lease  # git runs only for a synced directory

    with team_dream_lease(memory_dir, ctx.config) as team:
        if team.busy is not None:  # another machine of the team is dreaming this directory
            reason = f"team lease held by {team.busy.holder}"
            bound.info("dream.lease_busy", reason=reason)
            return DreamResult("lease-busy", reason, gates=decision)
        if team.unconfirmed is not None:  # no dream without a confirmed lease
            bound.warning("dream.lease_unconfirmed", reason=team.unconfirmed)
            return DreamResult("lease-unconfirmed", team.unconfirmed, gates=decision)
        with _fewer_collections():
            return _consolidate(memory_dir, ctx, bound, decision, dry_run=False, fence=team.fence)


def _consolidate(memory_dir: Path, ctx: Context, bound: Any, decision: GateDecision | None, *, dry_run: bool,
                 fence: Callable[[], None] | None) -> DreamResult:
    """The dream under its leases: snapshot, plan, validate, ``fence``, commit, release."""
    from dreamd.models.prompts import PlanRecord
    from dreamd.models.retention import plan_losses

    try:
        lease = DreamLease.acquire(memory_dir, stale_after=ctx.config.gates.lock_stale_after, clock=ctx.clock)
    except LockError as exc:
        bound.info("dream.lease_busy", reason=str(exc))
        return DreamResult("lease-busy", str(exc), gates=decision)
    started = time.monotonic()
    try:
        ctx.step("lease_taken")
        store = ctx.store(memory_dir)
        snapshot = store.read()
        pairs = store.records(snapshot)  # the records of the generation the plan is based on
        inputs = [PlanRecord.of(rec, e) for e, rec in pairs]  # a record read from the store has its entry's name
        recent = [
            e.name
            for e in snapshot.records
            if any(s.startswith("session:") and s[8:] in snapshot.sessions_since_consolidation for s in e.sources)
        ]
        bound.info("dream.started", records=len(inputs), generation=snapshot.generation)
        recent_set = set(recent)
        with _Heartbeat(lease) as beat:
            batches = dream_batches(inputs, [e for e, _ in pairs], ctx, memory_dir, bound=bound)
            planned = _plan_all(
                inputs, batches, recent_set, ctx, memory_dir, lost=lambda: beat.lost, bound=bound,
            )
        if beat.lost:
            bound.warning("dream.lease_lost", reason=beat.lost)
            return DreamResult("lease-lost", beat.lost)
        if planned.transient is not None:
            bound.warning("dream.deferred", reason=planned.transient)
            return DreamResult("transient", planned.transient)
        if planned.misconfigured is not None:
            bound.warning("dream.misconfigured", reason=planned.misconfigured)
            return DreamResult("misconfigured", planned.misconfigured)
        if planned.refused and not planned.accepted:
            reason = planned.refused[0][1]
            bound.warning("dream.rejected", reason=reason, refused_records=sum(len(n) for n, _ in planned.refused))
            return DreamResult("rejected", reason)
        plan = _current_values(planned.ops, inputs, pairs, today=ctx.clock().date())
        losses = plan_losses(plan, inputs, today=ctx.clock().date())
        if losses:  # each batch kept its facts, together they do not (one dropped what another said)
            reason = describe_losses(losses)
            bound.warning("dream.plan_lost_facts", records=len(inputs), first=None,
                          lost=[loss.as_dict() for loss in losses[:20]], reason=reason)
            return DreamResult("rejected", reason, plan=plan)
        ctx.step("planned")
        if dry_run:
            return DreamResult("dry-run", plan=plan, generation=snapshot.generation)
        by_name = {e.name: e for e in snapshot.records}
        base = {n: by_name[n].sha256 for op in plan for n in op.source_names if n in by_name}
        merges = [(list(op.source_names), _redact_record(op.result) if op.result else None) for op in plan]
        superseded = _superseded_in(plan, pairs)
        refused = "; ".join(
            f"plan refused for {len(names)} record(s) from {names[0] if names else '-'}: {why}"
            for names, why in planned.refused
        )
        try:
            with commit_guard():
                if fence is not None:
                    fence()
                result = store.commit(
                    Change(merges=merges, superseded=superseded, base=base, consolidated=True, lease=lease,
                           actor="dream", note=refused)
                )
        except ConflictError as exc:
            bound.info("dream.conflict", reason=str(exc))
            return DreamResult("conflict", str(exc), plan=plan)
        except LeaseLost as exc:
            bound.warning("dream.lease_lost", reason=str(exc))
            return DreamResult("lease-lost", str(exc), plan=plan)
        bound.info(
            "dream.committed",
            generation=result.generation,
            operations=len(plan),
            removed=result.removed,
            added=result.added,
            refused_records=sum(len(names) for names, _ in planned.refused),
            duration_ms=round((time.monotonic() - started) * 1000, 1),
        )
        return DreamResult(
            "applied" if plan else "nothing", refused or None, plan=plan, generation=result.generation
        )
    finally:
        lease.release()
