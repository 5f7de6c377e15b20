"""``dreamd hook``: Claude Code's hooks in, memory out (DESIGN §4, §7, §10).

Claude Code runs this with a JSON payload on stdin. By ``hook_event_name``:

* ``Stop``, ``SubagentStop``, ``PreCompact``, ``SessionEnd``: enqueue the session's transcript
  as ``extract`` job(s). SubagentStop sends the *main* transcript (``transcript_path``): a
  subagent's own log is the parent talking to a helper; the main log has the result. The job
  carries what extraction reads (:mod:`dreamd.hook.transcript`), split at turn boundaries into
  several jobs when it is over ``max_job_bytes``; part 1 keeps the session id, part *k* is
  ``<session>:part<k>``, so each part has its own extraction cursor and a growing session
  keeps its earlier parts' boundaries. Per-session cursors make repeated submissions of one
  session extract each turn once, and an unclaimed older job of the session that a new one
  contains is taken out of ``new/`` (``Spool.supersede``), so the spool holds one copy.
* ``SessionStart``: print the index of a managed memory Claude Code does not load itself.
* ``UserPromptSubmit``: print the records relevant to the prompt (:mod:`dreamd.hook.context`).
  Neither answers for Claude Code's own auto-memory directory: Claude Code puts its MEMORY.md
  in front of the model and recalls its records itself (as ``<system-reminder>`` blocks).
* ``SessionEnd`` also forgets what the session was shown and the cached lines of its file.

The memory directory of a session is :func:`dreamd.hook.placement.place` (the rule ``dreamd
mcp`` and the CLI follow too): the nearest managed ``.memory`` up to the git root, then
``[daemon] projects``, then Claude Code's auto-memory directory when it lies inside the roots
(its job says ``"adopt": true``: the daemon adopts what Claude Code wrote on first use). A
session it cannot place is counted in ``<state>/unplaced.json`` for ``status`` and ``doctor``.

Every call appends one JSON line to ``<state>/hook.log`` saying what it decided (the state dir
is ``$XDG_STATE_HOME/dreamd``); stdout carries only the hook output Claude Code reads.

It never disturbs the agent: nothing to do (a transcript not written yet included) is exit 0;
``SessionStart``/``UserPromptSubmit`` failures are exit 0 with a log line (a prompt is never
blocked); a failure to enqueue is one line on stderr and exit 1 — never 2, which Claude Code
treats as "block" — because a transcript that cannot be queued is memory lost. It imports only
light modules (no anthropic, watchdog, apscheduler, YAML, filelock or typing; dataclasses only
to check an auto-memory directory against the roots before enqueueing for it).
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path

from dreamd.hook import claude_paths
from dreamd.hook.placement import (
    AUTO_MEMORY,
    CONFIGURED,
    DEFAULT_ROOTS,
    DOT_SOURCE,
    Target,
    configured_dir,
    has_manifest,
    manifest_problem,
    memory_dir_for,
    note_unplaced,
    place,
)
from memory.errors import DreamdError
from memory.spool.jobformat import MAX_JOB_BYTES, SESSION_ID_RE

__all__ = [
    "DEFAULT_ROOTS", "HOOK_EVENTS", "Settings", "Target", "configured_dir", "enqueue", "handle",
    "hook_settings", "main", "memory_dir_for", "resolve_target", "run_hook", "session_id_for",
]  # fmt: skip

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: the hook must not pay for importing typing
if TYPE_CHECKING:
    from typing import Any

HOOK_EVENTS = ("SessionStart", "UserPromptSubmit", "Stop", "PreCompact", "SessionEnd")
"""The events the README's hooks snippet sends (``dreamd doctor`` checks for all of them)."""
ENQUEUE_EVENTS = frozenset({"SessionEnd", "Stop", "PreCompact", "SubagentStop"})
CONTEXT_EVENTS = frozenset({"SessionStart", "UserPromptSubmit"})
MAX_PAYLOAD_BYTES = 1024 * 1024
TRANSCRIPT_FORMAT = "claude-code"
JOB_ENVELOPE_BYTES = 64 * 1024
"""Room kept in every job for its JSON envelope (the parts are sized after redaction)."""
LOG_NAME = "hook.log"
LOG_MAX_BYTES = 1024 * 1024


class Settings:
    """What the hook takes from the config (or its defaults when there is no config file)."""

    __slots__ = (
        "code_cache",
        "limit",
        "max_job_bytes",
        "projects",
        "record_bytes",
        "record_lines",
        "roots",
        "session_bytes",
        "spool",
        "state_dir",
        "transcript_cache",
    )

    def __init__(
        self,
        *,
        spool: Path,
        state_dir: Path,
        projects: Mapping[Path, Path] | None = None,
        roots: tuple[str, ...] | None = None,
        max_job_bytes: int = MAX_JOB_BYTES,
        limit: int = 5,
        record_bytes: int = 4096,
        record_lines: int = 200,
        session_bytes: int = 61440,
        cache: bool = True,
    ) -> None:
        self.spool = spool
        self.state_dir = state_dir
        self.transcript_cache = state_dir / "hook-transcripts" if cache else None
        # the redactor's compiled patterns, apart from the transcripts' cache (which a
        # session's first Stop finds empty): read_conversation's code_dir
        self.code_cache = state_dir / "hook-regex" if cache else None
        self.projects = dict(projects or {})
        self.roots = roots
        self.max_job_bytes = max_job_bytes
        self.limit = limit
        self.record_bytes = record_bytes
        self.record_lines = record_lines
        self.session_bytes = session_bytes


def _expand(path: str, env: Mapping[str, str]) -> str:
    return os.path.expanduser(claude_paths.expand_home(path, env))


def _payload(stdin: bytes) -> dict[str, Any]:
    if len(stdin) > MAX_PAYLOAD_BYTES:
        raise DreamdError(f"hook payload is over {MAX_PAYLOAD_BYTES} bytes")
    try:
        data = json.loads(stdin.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise DreamdError("hook payload on stdin is not JSON") from None
    if not isinstance(data, dict):
        raise DreamdError(f"hook payload on stdin is not a JSON object (got {type(data).__name__})")
    return data


def resolve_target(
    payload: Mapping[str, Any],
    settings: Settings,
    env: Mapping[str, str],
    *,
    check_roots: bool = True,
) -> tuple[Target | None, str]:
    """The session's memory directory (:func:`dreamd.hook.placement.place`), or None and why."""
    transcript = payload.get("transcript_path")
    return place(
        payload.get("cwd") or env.get("CLAUDE_PROJECT_DIR"),
        projects=settings.projects,
        roots=settings.roots,
        env=env,
        transcript=transcript if isinstance(transcript, str) else None,
        check_roots=check_roots,
    )


def session_id_for(raw: Any, transcript: Path) -> str | None:
    """The payload's session id when it has the job shape; else a stable substitute.

    Ids are used as cursor keys, so a substitute must be the same for every hook call of one
    session: the transcript's file stem when that fits, else a hash of the raw id.
    """
    if isinstance(raw, str) and SESSION_ID_RE.match(raw):
        return raw
    if isinstance(raw, str) and raw:
        import hashlib

        return "h-" + hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    stem = transcript.stem
    return stem if SESSION_ID_RE.match(stem) else None


def part_session_id(session_id: str | None, part: int) -> str | None:
    """Part 1 keeps the session id (its cursor continues); part k gets ``<id>:part<k>``."""
    if part == 1 or session_id is None:
        return session_id
    suffix = f":part{part}"
    if len(session_id) + len(suffix) > 128:
        import hashlib

        session_id = "h-" + hashlib.sha256(session_id.encode()).hexdigest()[:32]
    return session_id + suffix


# ----------------------------------------------------------------------------- enqueue


def enqueue(
    payload: Mapping[str, Any], settings: Settings, env: Mapping[str, str], log: dict[str, Any]
) -> list[str]:
    """Enqueue the payload's transcript; the job ids (empty when there is nothing to do).

    Raises DreamdError (or OSError) with a one-line message when a job cannot be written.
    """
    transcript_path = payload.get("transcript_path")
    if transcript_path is None or transcript_path == "":
        log["reason"] = "no transcript_path"
        return []
    if not isinstance(transcript_path, str):
        raise DreamdError("hook payload: transcript_path is not a string")
    target, why = resolve_target(payload, settings, env)
    if target is None:
        log.update(reason=why, unplaced=True)
        return []
    log.update(memory_dir=str(target.memory_dir), source=target.source)
    path = Path(_expand(transcript_path, env))
    from dreamd.hook.transcript import read_conversation, split_parts

    try:
        lines, cost = read_conversation(
            path, settings.transcript_cache, code_dir=settings.code_cache
        )
    except FileNotFoundError:
        log["reason"] = f"transcript {path} does not exist (yet)"
        return []
    except OSError as exc:
        raise DreamdError(f"transcript {path}: {exc.strerror or exc}") from None
    log.update(cost, records=len(lines))
    if not lines:
        log["reason"] = "transcript has no conversation records yet"
        return []
    budget = max(1024, settings.max_job_bytes - JOB_ENVELOPE_BYTES)
    parts = split_parts(lines, budget)

    from memory.client import submit_parts

    session = session_id_for(payload.get("session_id"), path)
    now = datetime.now(UTC)
    jobs = submit_parts(
        [
            (
                b"\n".join(part).decode("utf-8", errors="replace") + "\n",
                part_session_id(session, i),
                now + timedelta(microseconds=i),
            )
            for i, part in enumerate(parts, start=1)
        ],
        memory_dir=target.memory_dir,
        format=TRANSCRIPT_FORMAT,
        spool=settings.spool,
        max_job_bytes=settings.max_job_bytes,
        adopt=target.adopt,
        redacted=True,
    )
    log["job_bytes"] = sum(sum(len(x) + 1 for x in part) for part in parts)
    _supersede(settings.spool, jobs, log)
    return jobs


def _supersede(spool: Path, jobs: list[str], log: dict[str, Any]) -> None:
    """Take out of ``new/`` the unclaimed older jobs of this session that the new ones contain
    (``Spool.supersede``): every Stop sends the whole session again, so without this the spool
    holds one copy per turn. A failure here costs spool space, never a turn: logged, not raised."""
    from memory.spool.queue import Spool

    superseded: list[str] = []
    try:
        queue = Spool(spool)
        for job_id in jobs:
            superseded += queue.supersede(job_id)
    except (OSError, DreamdError) as exc:
        log["supersede_error"] = _one_line(exc)
    if superseded:
        log["superseded"] = superseded


def run_hook(
    stdin: bytes,
    *,
    spool: Path,
    projects: Mapping[Path, Path],
    env: Mapping[str, str],
    max_job_bytes: int = MAX_JOB_BYTES,
    roots: tuple[str, ...] | None = None,
) -> str | None:
    """Enqueue the payload's transcript; the first job id, or None when there is nothing to do.

    The library form of the enqueue events (tests, other harnesses): no hook log and no
    prefix cache. Raises DreamdError (or OSError) with a one-line message on failure.
    """
    payload = _payload(stdin)
    event = payload.get("hook_event_name")
    if event is not None and event not in ENQUEUE_EVENTS:
        return None
    settings = Settings(
        spool=spool,
        state_dir=spool.parent,
        cache=False,
        projects=projects,
        roots=roots,
        max_job_bytes=max_job_bytes,
    )
    jobs = enqueue(payload, settings, env, {})
    return jobs[0] if jobs else None


# ----------------------------------------------------------------------------- context


def context(
    event: str, payload: Mapping[str, Any], settings: Settings, env: Mapping[str, str],
    log: dict[str, Any],
) -> str | None:  # fmt: skip
    """The stdout for ``SessionStart``/``UserPromptSubmit``, or None when there is nothing."""
    target, why = resolve_target(payload, settings, env, check_roots=False)
    if target is None:
        log["reason"] = why
        return None
    memory_dir = target.memory_dir
    log.update(memory_dir=str(memory_dir), source=target.source)
    if not has_manifest(memory_dir):
        log["reason"] = "memory directory not managed yet (adopted on the first job)"
        return None
    problem = manifest_problem(memory_dir)
    if problem is not None:
        log["reason"] = f"memory directory unusable: {problem}"
        return None
    from dreamd.hook import context as hook_context

    if target.auto_dir is not None and os.path.realpath(target.auto_dir) == os.path.realpath(
        memory_dir
    ):
        log["reason"] = "Claude Code loads and recalls its auto-memory itself"
        return None
    if event == "SessionStart":
        text = hook_context.index_context(memory_dir)
        if not text.strip():
            log["reason"] = "empty index"
            return None
        log["context_bytes"] = len(text.encode("utf-8"))
        return hook_context.output(event, text)
    prompt = payload.get("prompt")
    session = payload.get("session_id")
    if not isinstance(prompt, str) or not prompt.strip():
        log["reason"] = "no prompt"
        return None
    sid = session if isinstance(session, str) and session else "no-session"
    state = hook_context.load_session(settings.state_dir, sid)
    transcript = payload.get("transcript_path")
    if (state["new"] or state.get("fork")) and isinstance(transcript, str) and transcript:
        seeded = hook_context.seed_conversation(state, Path(_expand(transcript, env)), memory_dir)
        if seeded:
            log["shown_before"] = seeded
    refused: list[str] = []
    block, names = hook_context.relevant_memories(
        memory_dir,
        prompt,
        state,
        state_dir=settings.state_dir,
        limit=settings.limit,
        record_bytes=settings.record_bytes,
        record_lines=settings.record_lines,
        session_bytes=settings.session_bytes,
        refused=refused,
    )
    hook_context.save_session(settings.state_dir, sid, state)
    log["recalled"] = names
    if refused:
        log["refused"] = refused[:5]
    if not block:
        log["reason"] = "nothing relevant and not shown before"
        return None
    return hook_context.output(event, block)


# ----------------------------------------------------------------------------- settings and log


def _config_file(env: Mapping[str, str]) -> Path | None:
    """The config file ``dreamd.config`` would read, or None when there is none (DESIGN §10).

    Checked here so a hook in an unconfigured setup skips importing the config module
    (tomllib, dataclasses, typing: most of the hook's start-up time).
    """
    from memory.settings import config_file

    return config_file(env)


def hook_settings(env: Mapping[str, str]) -> Settings:
    """The config's values, or its defaults without a config file.

    The spool follows the one rule (:func:`memory.spool.queue.resolve_spool`): ``$DREAMD_SPOOL``, else
    ``[daemon] spool``, else the XDG default.
    """
    from memory.spool.queue import resolve_spool, state_home

    state = state_home(env)
    if _config_file(env) is None:
        return Settings(spool=resolve_spool(None, env), state_dir=state)
    from dreamd.config import load_config

    cfg = load_config(None, env=env)
    return Settings(
        spool=cfg.daemon.spool,
        state_dir=state,
        projects=cfg.daemon.projects,
        roots=cfg.daemon.roots,
        max_job_bytes=int(cfg.retention.max_job_bytes),
        limit=cfg.recall.limit,
        record_bytes=cfg.recall.record_bytes,
        record_lines=cfg.recall.record_lines,
        session_bytes=cfg.recall.session_bytes,
    )


def log_path(env: Mapping[str, str]) -> Path:
    """``<state>/hook.log``: one JSON line per hook call."""
    from memory.spool.queue import state_home

    return state_home(env) / LOG_NAME


def write_log(path: Path, entry: Mapping[str, Any]) -> None:
    """Append one line; past :data:`LOG_MAX_BYTES` the file becomes ``hook.log.1`` first.

    Never raises: the log is for the person checking the setup, not a reason to fail a hook.
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        try:
            if path.stat().st_size > LOG_MAX_BYTES:
                os.replace(path, path.with_name(path.name + ".1"))
        except FileNotFoundError:
            pass
        line = json.dumps(entry, ensure_ascii=False, default=str) + "\n"
        if "memory.redact" in sys.modules or not _plain(entry):
            from memory.redact import redact_found, scrub_fragments

            # a path or an error may quote a secret (issue 22); a marker never spans a quote.
            # The auto-memory directory is the cwd with "_" made "-": "ghp-…" is no token by
            # its shape any more, so what was found elsewhere in the line goes there too.
            line, _kinds, found = redact_found(line)
            line = scrub_fragments(line, found)[0]
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line.encode("utf-8", "replace"))
        finally:
            os.close(fd)
    except Exception:
        pass


_PLAIN = re.compile(r"(?![\s\S]*[A-Za-z0-9]{16})[A-Za-z0-9._/~+:-]{0,4096}")
"""A value no detector could take for a secret: no space, quote, ``=``, ``@`` or non-ASCII
letter to give it context, and no letter-digit run long enough to be a token by its shape. A
session id (a UUID), a time and most working directories are plain."""

_SAID = frozenset(
    {
        "no transcript_path",
        "transcript has no conversation records yet",
        "memory directory not managed yet (adopted on the first job)",
        "Claude Code loads and recalls its auto-memory itself",
        "empty index",
        "no prompt",
        "nothing relevant and not shown before",
        "no working directory (no cwd in the payload and no CLAUDE_PROJECT_DIR)",
        DOT_SOURCE,
        CONFIGURED,
        *(f"{AUTO_MEMORY} ({how})" for how in ("cwd", "git root", "transcript folder", "autoMemoryDirectory")),
    }
)
"""Reasons the hook writes as they are, holding nothing from the payload."""


def _plain(value: Any) -> bool:
    """``value`` (a log entry) holds nothing the redactor could change (issue 22).

    ``UserPromptSubmit`` and ``SessionStart`` never load :mod:`memory.redact` (~30 ms of
    imports, a tenth of the hook's budget), yet their log line carries the payload's ``cwd``,
    ``session_id`` and event name, and reasons and errors that quote them: any string that is
    neither plain (:data:`_PLAIN`) nor one of the hook's own reasons sends the line through
    the redactor."""
    if isinstance(value, str):
        known = value in _SAID or value in CONTEXT_EVENTS or value in ENQUEUE_EVENTS
        return known or _PLAIN.fullmatch(value) is not None
    if isinstance(value, Mapping):
        return all(_plain(v) for v in value.values())  # the keys are the hook's own
    if isinstance(value, list | tuple):
        return all(_plain(v) for v in value)
    return value is None or isinstance(value, bool | int | float)


def _one_line(exc: BaseException) -> str:
    """The error as one line (``memory.textutil.one_line``), its type when it has no text."""
    from memory.textutil import one_line

    return one_line(exc, 500) or type(exc).__name__


def _end_session(payload: Mapping[str, Any], settings: Settings, env: Mapping[str, str]) -> None:
    """Forget what the session was shown and the cached lines of its transcript."""
    from dreamd.hook.context import end_session
    from dreamd.hook.transcript import forget_cached

    if isinstance(payload.get("session_id"), str):
        end_session(settings.state_dir, payload["session_id"])
    transcript = payload.get("transcript_path")
    if isinstance(transcript, str) and transcript and settings.transcript_cache is not None:
        forget_cached(Path(_expand(transcript, env)), settings.transcript_cache)


def handle(stdin: bytes, env: Mapping[str, str], log: dict[str, Any]) -> tuple[int, str, str]:
    """One hook call: ``(exit code, stdout, stderr)``; ``log`` is filled with the decision."""
    event: Any = None
    payload: Any = None
    try:
        payload = _payload(stdin)
        event = payload.get("hook_event_name")
        log.update(hook=event, session_id=payload.get("session_id"), cwd=payload.get("cwd"))
        settings = hook_settings(env)
        if event == "SessionStart" and payload.get("source") == "fork" and isinstance(payload.get("session_id"), str):
            from dreamd.hook.context import mark_fork

            mark_fork(settings.state_dir, payload["session_id"])
        if event in CONTEXT_EVENTS:
            out = context(event, payload, settings, env, log)
            log["outcome"] = "context" if out else "nothing"
            return 0, _answer_probe(payload, (out + "\n") if out else ""), ""
        if event is not None and event not in ENQUEUE_EVENTS:
            log.update(outcome="nothing", reason=f"event {event} needs nothing")
            return 0, "", ""
        jobs = enqueue(payload, settings, env, log)
        log.update(outcome="enqueued" if jobs else "nothing", jobs=jobs)
        if log.get("unplaced"):
            note_unplaced(
                settings.state_dir, reason=log["reason"], cwd=payload.get("cwd"),
                session_id=payload.get("session_id"), event=event, transcript=payload.get("transcript_path"),
            )  # fmt: skip
        if event == "SessionEnd":
            _end_session(payload, settings, env)
        return 0, "", ""
    except (Exception, KeyboardInterrupt) as exc:
        message = _one_line(exc)
        log.update(outcome="error", error=message)
        if event in CONTEXT_EVENTS:
            return 0, _answer_probe(payload, "", message), ""
        return 1, "", f"dreamd hook: {message}\n"


PROBE_KEY = "dreamd_probe"
"""doctor's probe field (dreamd.cli.doctor.PROBE_KEY): echoed back so doctor sees dreamd ran."""


def _answer_probe(payload: Any, out: str, error: str | None = None) -> str:
    """``out`` with doctor's probe token added, and the error a context event swallowed (a
    payload without a token: ``out`` unchanged)."""
    if not isinstance(payload, dict):
        return out
    token = payload.get(PROBE_KEY)
    if not isinstance(token, str) or len(token) > 100:
        return out
    try:
        answer = json.loads(out) if out.strip() else {}
    except ValueError:
        return out
    if not isinstance(answer, dict):
        return out
    answer[PROBE_KEY] = token
    if error is not None:
        answer["dreamd_error"] = error
    return json.dumps(answer, ensure_ascii=False) + "\n"


def main() -> int:
    """Entry point for ``dreamd hook``: exit 0 (done or nothing to do) or 1 (one stderr line)."""
    started = time.perf_counter()
    log: dict[str, Any] = {"time": datetime.now(UTC).isoformat(timespec="milliseconds")}
    try:
        stream = sys.stdin.buffer if sys.stdin is not None else None
        stdin = stream.read(MAX_PAYLOAD_BYTES + 1) if stream is not None else b""
    except Exception as exc:
        stdin = b""
        log["stdin_error"] = _one_line(exc)
    code, out, err = handle(stdin, os.environ, log)
    log["ms"] = round((time.perf_counter() - started) * 1000, 1)
    write_log(log_path(os.environ), log)
    try:
        if out:
            sys.stdout.write(out)
            sys.stdout.flush()
        if err:
            sys.stderr.write(err)
            sys.stderr.flush()
    except Exception:
        pass
    return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
