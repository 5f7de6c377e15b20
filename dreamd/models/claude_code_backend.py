"""The ``claude-code`` backend: model calls through the user's own ``claude`` CLI (DESIGN §6).

Most Claude Code users have a subscription login, not an API key. This backend runs the CLI
they already have in headless print mode, so that login is enough. One call is one child
process::

    claude -p --output-format json --no-session-persistence --tools "" --max-turns 1
           --strict-mcp-config --disable-slash-commands --settings '{"disableAllHooks": true}'
           --system-prompt SYSTEM --model MODEL          (the prompt on stdin)

and what each part guarantees:

- same prompts, same gate: the product's system prompt replaces Claude Code's default one and
  the user prompt goes in on stdin (no argument-length limit); the JSON ``result`` is mapped
  into a :class:`~memory.model.llm.Completion` and judged by :mod:`memory.model.answer_gate` like any other;
- no tools: ``--tools ""`` offers none and ``--max-turns 1`` stops the CLI from looping if
  the model asks for one anyway; such an answer comes back as a tool call and is refused;
- nothing persisted, nothing re-extracted: ``--no-session-persistence`` writes no session
  file under ``~/.claude/projects`` (so no transcript of dreamd's own calls ever exists for a
  hook or a scan to pick up) and ``disableAllHooks`` runs none of the user's hooks, dreamd's
  own ``SessionEnd`` hook included. The child also gets ``DREAMD_MODEL_CALL=1``, so any hook
  that does run can tell;
- no leakage of the user's context: the child runs in an empty private directory with the
  user's CLAUDE.md files, auto memory and MCP servers off;
- ``[model] max_tokens``, ``max_retries`` and ``timeout`` map to
  ``CLAUDE_CODE_MAX_OUTPUT_TOKENS``, ``CLAUDE_CODE_MAX_RETRIES`` and a wall-clock limit after
  which the whole process group is killed; thinking is off (``MAX_THINKING_TOKENS=0``): the
  answer is plain JSON and the output budget is for it.

Failures are classified as for the ``anthropic`` backend: HTTP 400/401/403/404, a missing
login, a CLI that cannot be found or does not understand these flags are
:class:`~memory.errors.ModelMisconfigured`; timeouts, 408/409/429/5xx/529 and connection
failures are :class:`~memory.errors.TransientError`; anything else the CLI reports is a
:class:`~memory.errors.PermanentError`. Imports nothing heavy.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from dreamd.models.options import (
    DEFAULT_MAX_RETRIES,
    DEFAULT_MAX_TOKENS,
    DEFAULT_MODEL,
    DEFAULT_TIMEOUT,
    common_options,
    string,
)
from memory.errors import ConfigError, ModelMisconfigured, PermanentError, TransientError
from memory.model.llm import Completion, ToolCall, Usage
from memory.textutil import one_line

__all__ = ["MODEL_CALL_ENV", "ClaudeCodeModel", "resolve_claude"]

MODEL_CALL_ENV = "DREAMD_MODEL_CALL"
"""Set to ``1`` in the environment of every CLI child: dreamd is calling a model."""

NO_HOOKS = json.dumps({"disableAllHooks": True})
MISCONFIGURED_STATUS = frozenset({400, 401, 403, 404})
_TRANSIENT_STATUS = frozenset({408, 409, 429})
_LOGIN_HINT = (
    "log in as the user dreamd runs as: run `claude` and /login, or `claude setup-token` "
    "and set CLAUDE_CODE_OAUTH_TOKEN where the daemon runs"
)


def resolve_claude(claude_path: str, env: Mapping[str, str]) -> Path:
    """The CLI to run: ``[model] claude_path`` (a path, or a name looked up on PATH), else
    ``claude`` on the daemon's PATH. Raises ModelMisconfigured naming where it looked."""
    wanted = claude_path or "claude"
    path_var = env.get("PATH", os.defpath)
    if os.sep in wanted:
        candidate = Path(os.path.expanduser(wanted))
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
        raise ModelMisconfigured(
            f"claude CLI {candidate}: not an executable file ([model] claude_path)"
        )
    found = shutil.which(wanted, path=path_var)
    if found is None:
        raise ModelMisconfigured(
            f"claude CLI {wanted!r} not found on PATH ({path_var}); install Claude Code "
            "(npm install -g @anthropic-ai/claude-code) or set [model] claude_path"
        )
    return Path(found)


def _tokens(usage: Any, key: str) -> int:
    value = usage.get(key) if isinstance(usage, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


class ClaudeCodeModel:
    """:class:`memory.model.llm.Model` over ``claude -p`` (see the module docstring)."""

    def __init__(
        self,
        *,
        model: str = DEFAULT_MODEL,
        claude_path: str = "",
        timeout: float = DEFAULT_TIMEOUT,
        max_retries: int = DEFAULT_MAX_RETRIES,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        env: Mapping[str, str] | None = None,
    ) -> None:
        if not model.strip():
            raise ConfigError("[model] model: empty; name a model the claude CLI knows ('sonnet')")
        self.model = model
        self.name = f"claude-code/{model}"
        self.claude_path = claude_path
        self.timeout = timeout
        self.max_retries = max_retries
        self.max_tokens = max_tokens
        self._env = env

    @classmethod
    def from_config(
        cls, section: Mapping[str, Any], *, env: Mapping[str, str] | None = None
    ) -> ClaudeCodeModel:
        """From a ``[model]`` config section (missing keys take the documented defaults)."""
        opts = common_options(section)
        return cls(
            model=opts.model,
            claude_path=string(section, "claude_path", ""),
            timeout=opts.timeout,
            max_retries=opts.max_retries,
            max_tokens=opts.max_tokens,
            env=env,
        )

    # ------------------------------------------------------------------ the child

    def environ(self) -> Mapping[str, str]:
        return os.environ if self._env is None else self._env

    def command(self, exe: Path, system: str) -> list[str]:
        """The argument vector of one call (the prompt goes on stdin)."""
        return [
            str(exe), "-p", "--output-format", "json",
            "--no-session-persistence",
            "--tools", "", "--max-turns", "1",
            "--strict-mcp-config", "--disable-slash-commands",
            "--settings", NO_HOOKS,
            "--system-prompt", system,
            "--model", self.model,
        ]  # fmt: skip

    def child_env(self, max_tokens: int) -> dict[str, str]:
        env = dict(self.environ())
        env.update(
            {
                MODEL_CALL_ENV: "1",
                "CLAUDE_CODE_MAX_OUTPUT_TOKENS": str(max_tokens),
                "CLAUDE_CODE_MAX_RETRIES": str(self.max_retries),
                "MAX_THINKING_TOKENS": "0",
                "CLAUDE_CODE_DISABLE_CLAUDE_MDS": "1",
                "CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1",
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            }
        )
        return env

    def complete(self, system: str, prompt: str, max_tokens: int) -> Completion:
        """One call; the CLI retries transient API failures ``max_retries`` times itself."""
        exe = resolve_claude(self.claude_path, self.environ())
        started = time.monotonic()
        with tempfile.TemporaryDirectory(prefix="dreamd-claude-") as workdir:
            returncode, stdout, stderr = self._run(
                self.command(exe, system), prompt, self.child_env(max_tokens), workdir
            )
        duration_ms = (time.monotonic() - started) * 1000.0
        doc = _result_document(stdout)
        if doc is None:
            raise self._no_result(exe, returncode, stdout, stderr)
        return self._completion(doc, duration_ms)

    def _run(
        self, argv: Sequence[str], prompt: str, env: Mapping[str, str], cwd: str
    ) -> tuple[int, str, str]:
        """Run the child in its own process group; past the timeout the whole group dies."""
        try:
            proc = subprocess.Popen(
                list(argv), cwd=cwd, env=dict(env), stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                encoding="utf-8", errors="replace", start_new_session=True,
            )  # fmt: skip
        except OSError as exc:
            raise ModelMisconfigured(f"claude CLI {argv[0]}: cannot run it: {exc.strerror}") from None
        try:
            stdout, stderr = proc.communicate(prompt, timeout=self.timeout)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            proc.communicate()
            raise TransientError(
                f"model {self.name}: the claude CLI did not answer within {self.timeout:g}s "
                "(killed)"
            ) from None
        except BaseException:
            _kill_group(proc)
            proc.communicate()
            raise
        return proc.returncode, stdout, stderr

    # ------------------------------------------------------------------ the answer

    def _no_result(self, exe: Path, returncode: int, stdout: str, stderr: str) -> Exception:
        """Why the CLI printed no JSON result, as the error class the daemon acts on."""
        said = one_line(stderr.strip() or stdout.strip() or f"exit status {returncode}")
        lowered = said.lower()
        if "unknown option" in lowered or "unknown argument" in lowered:
            return ModelMisconfigured(
                f"claude CLI {exe} does not understand dreamd's flags ({said}); "
                "update Claude Code (claude update)"
            )
        if "not logged in" in lowered or "/login" in lowered:
            return ModelMisconfigured(f"claude CLI is not logged in ({said}); {_LOGIN_HINT}")
        if returncode < 0:
            return TransientError(
                f"model {self.name}: the claude CLI died of signal {-returncode}: {said}"
            )
        return TransientError(f"model {self.name}: the claude CLI printed no result: {said}")

    def _completion(self, doc: dict[str, Any], duration_ms: float) -> Completion:
        usage_doc = doc.get("usage")
        usage = Usage(
            input_tokens=_tokens(usage_doc, "input_tokens"),
            output_tokens=_tokens(usage_doc, "output_tokens"),
            cache_read_input_tokens=_tokens(usage_doc, "cache_read_input_tokens"),
            cache_creation_input_tokens=_tokens(usage_doc, "cache_creation_input_tokens"),
        )
        model_usage = doc.get("modelUsage")
        answered_by = next(iter(model_usage), "") if isinstance(model_usage, dict) else ""
        model = str(answered_by or self.model)
        result = doc.get("result")
        text = result if isinstance(result, str) else ""
        if doc.get("is_error") is not True:
            stop = doc.get("stop_reason")
            return Completion(
                text=text,
                stop_reason=stop if isinstance(stop, str) else None,
                usage=usage,
                model=model,
                duration_ms=duration_ms,
            )
        if doc.get("subtype") == "error_max_turns" or doc.get("stop_reason") == "tool_use":
            # The model asked for a tool it was not offered; the CLI does not say which.
            return Completion(
                text="",
                stop_reason="tool_use",
                tool_calls=(ToolCall(name="unnamed", input=None),),
                usage=usage,
                model=model,
                duration_ms=duration_ms,
            )
        if doc.get("api_error") == "max_output_tokens":
            return Completion(
                text="", stop_reason="max_tokens", usage=usage, model=model, duration_ms=duration_ms
            )
        raise self._api_failure(doc, text)

    def _api_failure(self, doc: dict[str, Any], text: str) -> Exception:
        status = doc.get("api_error_status")
        kind = doc.get("api_error_type") or doc.get("api_error") or doc.get("subtype")
        errors = doc.get("errors")
        said = one_line(
            text or ("; ".join(map(str, errors)) if isinstance(errors, list) else "") or kind
        )
        where = f"model {self.name}"
        if isinstance(status, int) and not isinstance(status, bool):
            detail = f"{where}: HTTP {status} ({kind}) via the claude CLI: {said}"
            if status in _TRANSIENT_STATUS or status >= 500:
                return TransientError(detail)
            if status in MISCONFIGURED_STATUS:
                if status in (401, 403):
                    return ModelMisconfigured(f"{detail}; {_LOGIN_HINT}")
                return ModelMisconfigured(detail)
            return PermanentError(detail)
        lowered = said.lower()
        if "not logged in" in lowered or "/login" in lowered or "invalid api key" in lowered:
            return ModelMisconfigured(f"{where}: the claude CLI is not logged in ({said}); {_LOGIN_HINT}")
        if kind in ("connection_failed", "timeout") or "connection" in lowered or "timed out" in lowered:
            return TransientError(f"{where}: {said}")
        return PermanentError(f"{where}: the claude CLI reported an error ({kind}): {said}")


def _result_document(stdout: str) -> dict[str, Any] | None:
    """The ``{"type": "result", …}`` object the CLI prints last (None when there is none).

    ``--output-format json`` prints that one object; with ``verbose`` on (a user setting) it
    prints an array of every message instead, the result last.
    """
    text = stdout.strip()
    candidates: list[Any] = []
    try:
        whole = json.loads(text) if text else None
    except ValueError:
        whole = None
    if isinstance(whole, list):
        candidates = list(whole)
    elif whole is not None:
        candidates = [whole]
    else:  # tolerate stray lines before the result (warnings some versions print)
        for line in text.splitlines():
            with contextlib.suppress(ValueError):
                candidates.append(json.loads(line))
    for doc in reversed(candidates):
        if isinstance(doc, dict) and doc.get("type") == "result":
            return doc
    return None


def _kill_group(proc: subprocess.Popen[str]) -> None:
    """SIGKILL the child's whole session (the CLI may have started helpers of its own)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
