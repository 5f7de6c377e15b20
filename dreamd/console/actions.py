"""What the console changes, each a normal commit through the store (a new generation that
``dreamd log`` lists and ``dreamd rollback`` undoes) or a normal spool operation. The same
calls the CLI makes; the console adds nothing of its own to the formats."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from dreamd.config import Config
from memory.errors import StoreError
from memory.store.change import Change
from memory.store.transaction import MemoryStore


@dataclass(frozen=True)
class Outcome:
    ok: bool
    message: str
    generation: int | None = None


def rollback(store: MemoryStore, to: int) -> Outcome:
    from memory.store.history import rollback as do_rollback

    result = do_rollback(store, to=to)
    return Outcome(
        True,
        f"rolled back to generation {to} as generation {result.generation}: {len(result.added)} restored, "
        f"{len(result.updated)} reverted, {len(result.removed)} removed",
        result.generation,
    )


def forget(store: MemoryStore, name: str) -> Outcome:
    keys, unknown = store.resolve([name])
    if unknown:
        raise StoreError(f"{store.path}: no record named {name}")
    result = store.commit(Change(remove=[keys[name]], note="forgotten in the console"))
    return Outcome(True, f"removed {', '.join(result.removed)} ({result.archive_note()})", result.generation)


def edit(store: MemoryStore, name: str, *, description: str, body: str) -> Outcome:
    """A new version of a live record: description and body as given (secrets redacted), its
    type and optional fields kept."""
    from memory.redact import redact
    from memory.store.records import make_record

    entry = next((e for e in store.read().records if e.name == name), None)
    if entry is None:
        raise StoreError(f"{store.path}: no record named {name}")
    old = store.read_record(entry)
    fresh = make_record(name, old.type, redact(description)[0], redact(body)[0], where="console edit")
    rec = fresh.replace(extra={**old.extra, **fresh.extra})
    result = store.commit(Change(replace={name: rec}, note="edited in the console"))
    return Outcome(True, f"updated {name}", result.generation)


def dream(memory_dir: Path, config: Config, *, dry_run: bool) -> tuple[Outcome, str]:
    """Preview (the ``dreamd consolidate --dry-run`` diff) or run one dream, gates bypassed
    (a person asked) but never the lease."""
    from dreamd.jobs.preview import render_plan
    from dreamd.jobs.work import Context
    from dreamd.jobs.work import dream as run_dream

    ctx = Context.create(config)
    result = run_dream(memory_dir, ctx, force=True, dry_run=dry_run)
    if dry_run and result.status == "dry-run":
        return Outcome(True, f"a dream would make {len(result.plan)} change(s)"), render_plan(memory_dir, result.plan)
    if result.status in ("applied", "nothing"):
        return Outcome(True, f"dream {result.status}: {len(result.plan)} operation(s)", result.generation), ""
    return Outcome(False, f"dream {result.status}: {result.reason}"), ""


def retry(config: Config, job: str) -> Outcome:
    from memory.spool.queue import Spool

    moved = Spool(config.daemon.spool).retry([job])
    if not moved:
        return Outcome(False, f"job {job} is not in failed/")
    return Outcome(True, f"requeued {', '.join(moved)}")
