"""``dreamd hook``: turn a Claude Code hook payload into an ``extract`` job (DESIGN §4, §10).

Claude Code runs this at SessionEnd, Stop, PreCompact and SubagentStop with a JSON payload on
stdin. We read the transcript file it names (the job carries the content: the daemon never
opens paths a job names) and enqueue it for the memory directory of the project:

* the project is the payload's ``cwd``, else ``$CLAUDE_PROJECT_DIR``;
* its memory directory is the ``[daemon] projects`` entry for that project or its nearest
  configured ancestor, else ``<project>/.memory`` when that directory is managed (has
  ``manifest.json``); otherwise the project does not use dreamd and nothing is enqueued;
* SubagentStop enqueues the *main* session transcript (``transcript_path``): a subagent's own
  log is the parent agent talking to a helper, not the user; the main log has the result.

Every enqueue is the whole transcript; per-session cursors in the manifest make the repeated
Stop/PreCompact/SessionEnd submissions of one session extract each turn once.

It must never disturb the agent: success, and any payload with nothing to enqueue
(SessionStart, no ``transcript_path``, a project without memory), is silent with exit 0; any
failure is one line on stderr and exit 1 — never 2, which Claude Code treats as "block". It
imports only the thin client (no anthropic, watchdog, apscheduler, YAML or filelock).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path

from memory.errors import DreamdError
from memory.jobformat import MAX_JOB_BYTES, SESSION_ID_RE

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: the hook must not pay for importing typing
if TYPE_CHECKING:
    from typing import Any

ENQUEUE_EVENTS = frozenset({"SessionEnd", "Stop", "PreCompact", "SubagentStop"})
MAX_PAYLOAD_BYTES = 1024 * 1024
TRANSCRIPT_FORMAT = "claude-code"


def _expand(path: str, env: Mapping[str, str]) -> str:
    if path == "~" or path.startswith("~/"):
        home = env.get("HOME") or os.path.expanduser("~")
        return home + path[1:]
    return os.path.expanduser(path)


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


def memory_dir_for(
    project: str, projects: Mapping[Path, Path], env: Mapping[str, str]
) -> Path | None:
    """The memory directory for ``project``: configured (nearest ancestor wins) or managed default."""
    expanded = _expand(project, env)
    if not os.path.isabs(expanded):
        return None
    candidates = {os.path.normpath(expanded), os.path.realpath(expanded)}
    best: tuple[int, Path] | None = None
    for key, memory_dir in projects.items():
        key_text = _expand(os.fspath(key), env)
        for base in {os.path.normpath(key_text), os.path.realpath(key_text)}:
            prefix = base.rstrip(os.sep) + os.sep
            if any(c == base or c.startswith(prefix) for c in candidates) and (
                best is None or len(base) > best[0]
            ):
                best = (len(base), Path(_expand(os.fspath(memory_dir), env)))
    if best is not None:
        return best[1]
    default = Path(expanded) / ".memory"
    return default if (default / "manifest.json").is_file() else None


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


def run_hook(
    stdin: bytes,
    *,
    spool: Path,
    projects: Mapping[Path, Path],
    env: Mapping[str, str],
    max_job_bytes: int = MAX_JOB_BYTES,
) -> str | None:
    """Enqueue the payload's transcript; return the job id, or None when there is nothing to do.

    Raises DreamdError (or OSError) with a one-line message on failure.
    """
    payload = _payload(stdin)
    event = payload.get("hook_event_name")
    if event is not None and event not in ENQUEUE_EVENTS:
        return None
    transcript_path = payload.get("transcript_path")
    if transcript_path is None or transcript_path == "":
        return None
    if not isinstance(transcript_path, str):
        raise DreamdError("hook payload: transcript_path is not a string")
    project = payload.get("cwd") or env.get("CLAUDE_PROJECT_DIR")
    if not isinstance(project, str) or not project:
        return None
    memory_dir = memory_dir_for(project, projects, env)
    if memory_dir is None:
        return None
    path = Path(_expand(transcript_path, env))
    try:
        with open(path, "rb") as f:
            content = f.read(max_job_bytes + 1)
    except OSError as exc:
        raise DreamdError(f"transcript {path}: {exc.strerror or exc}") from None
    if len(content) > max_job_bytes:
        raise DreamdError(f"transcript {path} is over the {max_job_bytes}-byte job limit")

    from memory.client import submit

    return submit(
        content,
        memory_dir=memory_dir,
        session_id=session_id_for(payload.get("session_id"), path),
        format=TRANSCRIPT_FORMAT,
        spool=spool,
        max_job_bytes=max_job_bytes,
    )


def _config_file(env: Mapping[str, str]) -> Path | None:
    """The config file ``dreamd.config`` would read, or None when there is none (DESIGN §10).

    Checked here so a hook in an unconfigured setup skips importing the config module
    (tomllib, dataclasses, typing: most of the hook's start-up time).
    """
    named = env.get("DREAMD_CONFIG", "")
    if named:
        return Path(_expand(named, env))
    xdg = env.get("XDG_CONFIG_HOME", "")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path(_expand("~/.config", env))
    path = base / "dreamd" / "config.toml"
    return path if path.exists() else None


def hook_settings(env: Mapping[str, str]) -> tuple[Path, dict[Path, Path], int]:
    """(spool, projects, max_job_bytes): the config's values, or its defaults without a file.

    ``$DREAMD_SPOOL`` wins over both, as it does for the client.
    """
    from memory.spool import default_spool_path

    if _config_file(env) is None:
        spool, projects, max_bytes = default_spool_path(env), {}, MAX_JOB_BYTES
    else:
        from dreamd.config import load_config

        cfg = load_config(None, env=env)
        spool = cfg.daemon.spool
        projects = dict(cfg.daemon.projects)
        max_bytes = int(cfg.retention.max_job_bytes)
    if env.get("DREAMD_SPOOL"):
        spool = Path(_expand(env["DREAMD_SPOOL"], env))
    return spool, projects, max_bytes


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text[:500]


def main() -> int:
    """Entry point for ``dreamd hook``: exit 0 (done or nothing to do) or 1 (one stderr line)."""
    try:
        stream = sys.stdin.buffer if sys.stdin is not None else None
        stdin = stream.read(MAX_PAYLOAD_BYTES + 1) if stream is not None else b""
        spool, projects, max_bytes = hook_settings(os.environ)
        run_hook(stdin, spool=spool, projects=projects, env=os.environ, max_job_bytes=max_bytes)
    except (Exception, KeyboardInterrupt) as exc:
        try:
            sys.stderr.write(f"dreamd hook: {_one_line(exc)}\n")
            sys.stderr.flush()
        except Exception:
            pass
        return 1
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
