"""Structured logs: one JSON object per line on stdout, or a console view on a terminal (§9).

Every line carries ``timestamp`` (ISO 8601, UTC), ``level`` and ``event`` plus context
(``job_id``, ``memory_dir``, ``session_id`` on job lines; ``model``, ``input_tokens``,
``output_tokens``, ``duration_ms`` on model lines; ``gate``, ``reason`` on gate lines).
Third-party libraries' stdlib ``logging`` (watchdog, apscheduler, anthropic, httpx, filelock)
and our own ``memory.*`` loggers go through the same renderer, so the stream stays one format.

Tracebacks never include local variables: they may hold transcripts or API keys. JSON lines
use structlog's dict tracebacks with ``show_locals=False``; the console uses the plain
traceback formatter (never rich's, which shows locals).

:data:`EVENTS` is the stable, documented catalogue of event names; a test checks every event
the code emits is in it, and :func:`render_event_table` produces the README table.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # not typing's: importing typing is a start-up cost (issue 20)
if TYPE_CHECKING:
    from typing import IO, Any, Protocol

    from structlog.types import Processor

__all__ = ["EVENTS", "EventLogger", "configure", "get_logger", "render_event_table"]

EVENTS: dict[str, str] = {
    # daemon lifecycle
    "console.started": "The daemon serves the web console ([ui] enabled) at this address; the URL with its token is in dreamd status (url, remote).",
    "daemon.started": "The daemon took the spool lock and is starting (spool, roots, workers, config).",
    "daemon.ready": "Watchers, scheduler and workers are running (managed_dirs, queue).",
    "daemon.reloading": "SIGHUP received: re-reading the config (config).",
    "daemon.reloaded": "Config reloaded (roots, managed_dirs).",
    "daemon.reload_failed": "SIGHUP reload refused; the old config stays (error).",
    "daemon.stopping": "SIGTERM/SIGINT received: no new jobs are claimed (signal).",
    "daemon.stopped": "Clean exit (exit_code).",
    "daemon.component_died": "A watcher, the scheduler or a worker thread died; the daemon exits non-zero (component).",
    "daemon.already_running": "Another daemon holds the spool lock (spool).",
    "daemon.once_done": "A `dreamd once` run finished (jobs, dreams).",
    "daemon.hook_code_written": "The redactor's compiled patterns were written where the hook reads them, so the next hook compiles none (path, patterns).",
    "daemon.hook_code_unwritten": "The hook's code file could not be written; the daemon starts anyway and hooks compile their patterns (path, error).",
    # spool / jobs
    "spool.recovered": "Jobs left in cur/ by a previous run were taken back (count): each counts as an attempt, so one out of attempts goes to failed/ (a job.failed line), the rest to new/.",
    "spool.released": "Deferred jobs whose backoff ended went back to new/ (count).",
    "spool.pruned": "Old done/ entries were removed (count).",
    "spool.error": "A spool maintenance step failed (step, error).",
    "job.claimed": "A job was claimed from new/ (job_id, memory_dir, kind).",
    "job.done": "A job finished and moved to done/ (job_id, memory_dir, session_id, outcome, duration_ms; group: "
                "how many jobs it was committed with, when it ran in a group commit).",
    "group.committed": "A group commit of one directory's queued jobs (memory_dir, jobs, changes, committed, "
                       "retried_alone: jobs whose change no longer applied and ran again alone, commit_ms).",
    "job.deferred": "A job failed transiently and goes to deferred/ with backoff (job_id, memory_dir, error, attempt).",
    "job.failed": "A job failed permanently and moved to failed/ (job_id, memory_dir, reason).",
    "job.over_budget": "A job was still running when its work budget ran out: moved to failed/ with the reason, its directory's next job starts (job_id, memory_dir, budget_s, size_bytes, reason).",
    "job.overran_returned": "An over-budget job's abandoned worker finally returned; nothing it did after its budget counted (job_id, memory_dir, elapsed_s, error).",
    "spool.dir_held": "A job found its memory directory's disk full: the directory's other jobs wait in new/ for a while, doubling up to 5 minutes while it stays full (job_id, memory_dir, seconds, reason).",
    "job.rejected": "A job failed validation and moved to failed/ (job_id, reason).",
    "job.requeued": "Shutdown grace period ended while a job ran; it goes back to new/ (job_id).",
    "job.error": "A job raised an unexpected exception (job_id, memory_dir, traceback).",
    # dreams and gates
    "gate.changed": "A directory's gate decision changed (memory_dir, open, gate, reason).",
    "gate.error": "Reading a directory's gate state failed (memory_dir, error).",
    "dream.started": "A consolidation began (memory_dir, force).",
    "dream.finished": "A consolidation ended (memory_dir, status, duration_ms).",
    "dream.backoff": "A dream's plan was refused or the model was out; the directory is not planned again before retry_in_s (memory_dir, status, retry_in_s).",
    "dream.error": "A consolidation raised (memory_dir, error).",
    "dream.committed": "A consolidation plan was committed (memory_dir, generation, operations, added, removed, duration_ms).",
    "dream.conflict": "The set changed while the plan was made; nothing written, a later tick re-plans (memory_dir, reason).",
    "dream.deferred": "The model failed transiently while planning; tried again later (memory_dir, reason).",
    "dream.lease_busy": "Another holder has the dream lease (memory_dir, reason).",
    "dream.lease_lost": "Our lease was broken or replaced; the dream commits nothing (memory_dir, reason).",
    "dream.lease_unconfirmed": "A synced directory's team dream lease could not be confirmed on the remote (unreachable); no dream until a later tick can (memory_dir, reason).",
    "dream.rejected": "The model's plan failed validation; the set is unchanged (memory_dir, reason).",
    "dream.misconfigured": "The model refused the setup itself (key, login, model id, CLI); the set is unchanged and the directory backs off (memory_dir, reason).",
    "dream.candidates": "A dream over more records than one plan batch linked its candidates over the whole set (duplicates, explicit supersessions, the embedding cache when there is one) and planned only the linked and the expired records (memory_dir, records, planned, groups, expired, batches, links: {same, terms, supersedes, embedding}, embeddings, duration_ms).",
    "dream.embeddings_unusable": "A dream could not read the directory's embedding cache for its candidate index; it goes on without that signal (memory_dir, error).",
    "dream.batch_split": "A plan batch was refused; its halves are planned again (memory_dir, records, first, reason).",
    "dream.plan_lost_facts": "The retention gate refused a well-formed plan that would lose facts: a removed record's clause no live record still says, or a current fact moved to history; nothing of it is committed, the batch is split and planned again (memory_dir, records, first, lost: [{name, into, clauses, demoted}], reason).",
    "dream.batch_refused": "A plan batch was refused and could not be split further; the rest of the plan is applied (memory_dir, records, first, reason).",
    "lease.recovered": "A stale dream lease was broken and archived (memory_dir, previous_holder, reason).",
    # extraction
    "adopt.first_use": "Claude Code's auto-memory directory was taken under management by its first job (memory_dir, generation, adopted, malformed, index_archived).",
    "extract.committed": "Memories extracted from a transcript were committed (job_id, memory_dir, session_id, ...).",
    "extract.superseded": "Extracted memories superseded live ones in the same commit: each old record merged into the new one, its value kept on the **Previously:** line (job_id, memory_dir, session_id, generation, superseded: old name → new name).",
    "extract.window": "One window of a long session was extracted, oldest first (job_id, memory_dir, session_id, window, windows, first_turn, end_turn, turns, chars, found).",
    "extract.rejected": "The model's extraction failed validation; nothing written (job_id, memory_dir, session_id, reason).",
    "record.redacted": "Secrets were redacted from a record before it was written (name, kinds).",
    "usage.ledger_failed": "Recording model usage failed; the job goes on (memory_dir, error).",
    "usage.ledger_corrupt": "The usage ledger file was unreadable; set aside and started afresh (path, moved_to, reason).",
    # reconcile and watchers
    "reconcile.done": "Hand edits / new files in a directory were reconciled (memory_dir, changes).",
    "reconcile.error": "Reconciling a directory failed (memory_dir, error).",
    "embeddings.loaded": "The embedding model of [recall] embeddings is loaded; the daemon keeps it warm and answers the hook's socket (model).",
    "embeddings.unavailable": "The embedding model of [recall] embeddings cannot be loaded; recall stays keyword-only (model, error).",
    "embeddings.updated": "A directory's vector cache caught up with its manifest (memory_dir, embedded, records).",
    "embeddings.failed": "Updating a directory's vector cache failed; the set is untouched and the next pass retries (memory_dir, error).",
    "embeddings.socket_error": "The embedding socket could not be created; the hook selects by keyword (path, error).",
    "embeddings.query_failed": "One socket query could not be answered (error).",
    "watch.added": "A managed directory is now watched (memory_dir).",
    "watch.removed": "A directory is no longer managed or present (memory_dir).",
    "watch.error": "A watcher could not be started or a handler raised (path, error).",
    "watch.unmanaged": "A directory under a root has records but no manifest (run dreamd adopt) (memory_dir).",
    # sync (issue 12)
    "sync.done": "A synced directory fetched, merged and pushed (memory_dir, reason, generation, merged, pushed, commits, duration_ms).",
    "sync.failed": "A sync failed; local work goes on and it is retried with backoff (memory_dir, reason, error, failures, retry_in_s).",
    # scheduler
    "tick.done": "A scheduler tick finished (duration_ms, managed_dirs, queue).",
    "tick.error": "A tick step raised; the next tick runs anyway (step, error).",
    # stdlib logging from libraries and memory.*
    "log.message": "A plain stdlib log line from a library or memory.* (logger, message).",
    "store.index_archived": "A MEMORY.md dreamd did not render (a person's or Claude Code's edit) was kept in .history/ before the index was rewritten (message).",
    "store.malformed": "A record file in a managed directory is malformed or unsafe (a link, a FIFO, over its size cap, a hard link, a non-UTF-8 name, a value YAML refuses) and left in place (file, message).",
    "store.index_blocked": "MEMORY.md is a directory: the set committed without writing its index, which waits until the directory is moved away (path).",
    "store.history_pruned": "Generations older than [retention] history_generations were deleted from .history/: every manifest and archived file removed is named (memory_dir, kept_from, generations, files).",
    "store.edit_kept": "A record file was edited while a commit replaced it: the edited version was put back under a name of its own, for the next scan to adopt (file, restored_as).",
    "history.unreadable": "An archived manifest in .history/ could not be read and was passed over while looking up where a forgotten name went (memory_dir, generations, error: the first reason).",
    "forget.merged_away": "A forget named a record a dream merged into another; the fact lives on there (job_id, memory_dir, name, merged_into).",
    # model
    "model.call": "One model call (task, model, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, duration_ms, stop_reason, outcome).",
    "model.error": "A model call failed (task, model, error, transient, misconfigured).",
    "model.health_unwritable": "The spool's .model-health.json (what status/doctor show about a misconfigured model) could not be written; the job goes on (path or memory_dir, error).",
    "model.answer_rejected": "A model answer broke the strict answer rules and was not used (task, model, reason).",
}

_QUIET_LIBRARIES = ("watchdog", "apscheduler", "anthropic", "httpx", "httpcore", "filelock")
_HANDLER_NAME = "dreamd"
"""The name of the handler :func:`configure` installs, so configuring again replaces it."""


def _name_foreign_event(logger: Any, method: str, event_dict: Any) -> Any:
    """A stdlib record keeps the catalogue's shape: ``event`` is a stable name, text goes to ``message``.

    ``log.warning("text %s", x, extra={"event": "store.malformed", ...})`` keeps its event name;
    a plain library line becomes event ``log.message`` with ``logger`` and ``message``.
    """
    record = event_dict.get("_record")
    if record is None:
        return event_dict
    event_dict["message"] = event_dict.get("event")  # already %-formatted by ProcessorFormatter
    named = record.__dict__.get("event")
    event_dict["event"] = named if isinstance(named, str) and named else "log.message"
    return event_dict


def _order_keys(logger: Any, method: str, event_dict: Any) -> Any:
    """``timestamp``, ``level``, ``event`` first: the line reads well in a terminal and in jq."""
    head = {k: event_dict.pop(k) for k in ("timestamp", "level", "event") if k in event_dict}
    head.update(event_dict)
    return head


def _timestamper() -> Processor:
    import structlog

    return structlog.processors.TimeStamper(fmt="iso", utc=True, key="timestamp")


def configure(log_format: str = "auto", stream: IO[str] | None = None, *, level: int = 20) -> None:
    """Route structlog and stdlib logging to ``stream`` as JSON lines or console text.

    structlog is imported here and at a logger's first call (:func:`get_logger`), never at
    import: a command that logs nothing (status, log, recall) does not pay for it.

    ``log_format``: ``auto`` (console when ``stream`` is a terminal), ``json`` or ``console``;
    ``level`` a stdlib level (20 = ``logging.INFO``: :mod:`logging` too is imported here, not
    at import). Safe to call again (e.g. on SIGHUP); the last call wins.
    """
    import logging

    import structlog

    out = stream if stream is not None else sys.stdout
    if log_format == "auto":
        isatty = getattr(out, "isatty", None)
        log_format = "console" if isatty is not None and isatty() else "json"

    shared: list[Processor] = [
        structlog.contextvars.merge_contextvars,
        structlog.stdlib.add_log_level,
        _timestamper(),
    ]
    renderer: Processor
    if log_format == "console":
        isatty = getattr(out, "isatty", None)
        renderer = structlog.dev.ConsoleRenderer(
            colors=bool(isatty and isatty()),
            exception_formatter=structlog.dev.plain_traceback,
        )
        exc: list[Processor] = []
    else:
        renderer = structlog.processors.JSONRenderer(ensure_ascii=False)
        exc = [
            structlog.processors.ExceptionRenderer(
                structlog.tracebacks.ExceptionDictTransformer(show_locals=False)
            )
        ]

    structlog.configure(
        processors=[
            *shared,
            structlog.processors.StackInfoRenderer(),
            structlog.stdlib.ProcessorFormatter.wrap_for_formatter,
        ],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=False,
    )
    formatter = structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=[
            *shared,
            structlog.stdlib.add_logger_name,
            _name_foreign_event,
            structlog.stdlib.ExtraAdder(),
        ],
        processors=[
            structlog.stdlib.ProcessorFormatter.remove_processors_meta,
            *exc,
            _order_keys,
            renderer,
        ],
    )
    handler = logging.StreamHandler(out)
    handler.setFormatter(formatter)
    root = logging.getLogger()
    for old in list(root.handlers):
        if old.get_name() == _HANDLER_NAME:
            root.removeHandler(old)
    handler.set_name(_HANDLER_NAME)
    root.addHandler(handler)
    root.setLevel(level)
    for name in _QUIET_LIBRARIES:
        logging.getLogger(name).setLevel(logging.WARNING)


if TYPE_CHECKING:  # a protocol for the type checker only: typing is not imported at run time

    class EventLogger(Protocol):
        """What dreamd calls on a logger: an event name and its fields, or more fields bound for
        every later line (``log.bind(job_id=...)``). structlog's bound loggers have it."""

        def bind(self, **fields: Any) -> EventLogger: ...
        def debug(self, event: str, *args: Any, **fields: Any) -> None: ...
        def info(self, event: str, *args: Any, **fields: Any) -> None: ...
        def warning(self, event: str, *args: Any, **fields: Any) -> None: ...
        def error(self, event: str, *args: Any, **fields: Any) -> None: ...
        def critical(self, event: str, *args: Any, **fields: Any) -> None: ...
        def exception(self, event: str, *args: Any, **fields: Any) -> None: ...


class _LazyLogger:
    """A module-level logger that imports structlog at its first call, not at import."""

    __slots__ = ("_context", "_logger", "_name")

    def __init__(self, name: str | None, context: dict[str, Any]) -> None:
        self._name, self._context, self._logger = name, context, None

    def __getattr__(self, attr: str) -> Any:
        logger = self._logger
        if logger is None:
            import structlog

            logger = self._logger = structlog.get_logger(self._name, **self._context)
        return getattr(logger, attr)


def get_logger(name: str | None = None, **context: Any) -> EventLogger:
    """A structlog logger; call as ``log.info("job.done", job_id=...)``. structlog itself is
    imported at the first call."""
    logger: EventLogger = _LazyLogger(name, context)
    return logger


def render_event_table() -> str:
    """The Markdown table of every event name (pasted into the README)."""
    rows = ["| Event | Meaning (fields) |", "|---|---|"]
    for name in sorted(EVENTS):
        rows.append(f"| `{name}` | {EVENTS[name].replace('|', chr(92) + '|')} |")
    return "\n".join(rows) + "\n"
