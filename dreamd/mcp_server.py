"""``dreamd mcp``: the memory as Model Context Protocol tools and resources over stdio (DESIGN §7, §10).

Every agent host people use (Claude Desktop, Claude Code, Codex CLI, Gemini CLI, Cursor) speaks
MCP, so this is the one door through which any of them reads and writes a memory directory.

Two layers, so the rules are testable without the protocol:

* :class:`MemoryTools` — the six tools as plain synchronous functions: JSON arguments in, a
  :class:`ToolAnswer` (text for the model, structured data for programs) out, a
  :class:`~memory.errors.DreamdError` with one sentence for bad input. No SDK import.
* :func:`serve` — the official SDK's low-level ``Server`` over stdio. The SDK is imported only
  there: it costs about a second, and ``import memory`` / ``dreamd hook`` must never pay it.

Invariants:

* Only directories the operator chose are served: the start-up directory (``--memory-dir``,
  else the ``[daemon] projects`` mapping, ``<cwd>/.memory`` or Claude Code's auto-memory
  directory) and any directory a tool call names whose real path lies inside ``[daemon] roots``
  (the same check a spool job's ``memory_dir`` gets). Anything else is refused.
* Writes go through :meth:`memory.store.MemoryStore.commit` — lock, re-read, merge, atomic
  rename — exactly as ``dreamd remember``/``forget`` do, so other servers, the daemon and hand
  edits are merged, never lost. Every write answer names the generation it made.
* Bad input is a tool error of one sentence and nothing is written; an unexpected exception is
  a tool error too (its traceback goes to stderr). Neither ends the session.
* stdout carries protocol messages only; logs go to stderr.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import re
import threading
import urllib.parse
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memory.errors import DreamdError, StoreError, UsageError

if TYPE_CHECKING:
    from dreamd.config import Config
    from memory.llm import Model
    from memory.store import MemoryStore

__all__ = [
    "TOOLS",
    "MemoryTools",
    "ResourceInfo",
    "ToolAnswer",
    "auto_memory_dir",
    "main",
    "resolve_memory_dir",
    "serve",
]

log = logging.getLogger("dreamd.mcp")

SERVER_NAME = "dreamd"
INDEX_FILE = "MEMORY.md"
LIST_LIMIT = 1000
"""Entries ``list_memories`` shows at most; the answer says how many it left out."""
RESOURCE_PAGE = 500
MAX_QUERY_CHARS = 4096
MAX_RECALL_LIMIT = 20
MAX_LOG_LIMIT = 100
MAX_PATH_CHARS = 4096
TYPES = ("user", "feedback", "project", "reference")
NAME_PATTERN = "^[a-z0-9][a-z0-9_-]{0,63}$"
AUTO_MEMORY = "Claude Code auto-memory"

INSTRUCTIONS = (
    "Long-term memory kept as Markdown records (types: user, feedback, project, reference) that "
    "survive across sessions. Call recall with the user's request before answering anything that "
    "may depend on earlier sessions; call remember for durable facts worth keeping (who the user "
    "is, how they want you to work, project decisions, where things are); call forget when the "
    "user asks you to drop something. Record bodies are shown for the current request only."
)

# ---------------------------------------------------------------------------- tool schemas

_MEMORY_DIR: dict[str, Any] = {
    "type": "string",
    "maxLength": MAX_PATH_CHARS,
    "description": (
        "Absolute path of the memory directory to use. Omit it to use this server's own "
        "directory; another one must lie inside the roots the user configured."
    ),
}
_NAME: dict[str, Any] = {
    "type": "string",
    "pattern": NAME_PATTERN,
    "description": "Record name: lowercase letters, digits, '-' or '_', at most 64 characters (e.g. 'prefers-tabs').",
}


def _schema(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {**properties, "memory_dir": _MEMORY_DIR},
        "required": required,
        "additionalProperties": False,
    }


@dataclass(frozen=True)
class ToolSpec:
    name: str
    title: str
    description: str
    input_schema: dict[str, Any]
    read_only: bool
    destructive: bool = False
    idempotent: bool = True


TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "recall",
        "Recall memories",
        "Find the memories relevant to a request. Returns at most `limit` records, each with its "
        "name, type, one-line description and body (long bodies are cut; the answer then gives "
        "the path of the full file). Use it before answering anything that may depend on what "
        "the user said or decided in earlier sessions.",
        _schema(
            {
                "query": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": MAX_QUERY_CHARS,
                    "description": "What you need to know, in the user's words (e.g. 'how do we deploy?').",
                },
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_RECALL_LIMIT,
                    "description": "Most records to return (default: the configured recall limit, 5).",
                },
            },
            ["query"],
        ),
        read_only=True,
    ),
    ToolSpec(
        "list_memories",
        "List memories",
        "List every record in the memory directory: name, type and one-line description, no "
        "bodies. Use it to see what is known before remembering something new or to find the "
        "name to pass to get_memory or forget.",
        _schema(
            {
                "type": {
                    "type": "string",
                    "enum": list(TYPES),
                    "description": "Only records of this type.",
                }
            },
            [],
        ),
        read_only=True,
    ),
    ToolSpec(
        "get_memory",
        "Read one memory",
        "Read one record in full (name, type, description, whole body, file path).",
        _schema({"name": _NAME}, ["name"]),
        read_only=True,
    ),
    ToolSpec(
        "remember",
        "Remember",
        "Save one memory as a record file, committed at once. Types: 'user' (who the user is, "
        "their role and preferences), 'feedback' (how to work: what to avoid, what to keep "
        "doing), 'project' (goals, deadlines, decisions and why), 'reference' (where things "
        "are: trackers, dashboards, documents). Giving the `name` of an existing record "
        "replaces that record (the old version stays in history); without `name` a new record "
        "is always added. Secrets (API keys, tokens, private keys) are redacted before writing. "
        "The answer names the record and the generation committed.",
        _schema(
            {
                "type": {"type": "string", "enum": list(TYPES), "description": "The kind of memory."},
                "description": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": 1024,
                    "description": "One line saying what this memory is (shown in every listing).",
                },
                "body": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": 65536,
                    "description": (
                        "The memory itself, in Markdown (at most 64 KiB). For feedback and project "
                        "records add a '**Why:**' and a '**How to apply:**' line."
                    ),
                },
                "name": {**_NAME, "description": _NAME["description"] + " Omit it to derive one from the description."},
            },
            ["type", "description", "body"],
        ),
        read_only=False,
        idempotent=False,
    ),
    ToolSpec(
        "forget",
        "Forget",
        "Remove one record from the memory set, committed at once. The file is kept in the "
        "directory's history, so the user can undo it with `dreamd rollback`.",
        _schema({"name": _NAME}, ["name"]),
        read_only=False,
        destructive=True,
        idempotent=False,
    ),
    ToolSpec(
        "memory_log",
        "Memory history",
        "The most recent generations of the memory set, newest first: what each one added, "
        "updated, merged or removed, and by what (a session's extraction, a dream, a manual or "
        "MCP write, a rollback).",
        _schema(
            {
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_LOG_LIMIT,
                    "description": "Most generations to show (default 10).",
                }
            },
            [],
        ),
        read_only=True,
    ),
)
_SPECS = {t.name: t for t in TOOLS}


# ---------------------------------------------------------------------------- argument checks

_JSON_TYPES = {"string": "a string", "integer": "an integer"}


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def check_arguments(spec: ToolSpec, arguments: Any) -> dict[str, Any]:
    """``arguments`` checked against the tool's own input schema (the subset it uses).

    Raises UsageError with one sentence naming the tool and the argument.
    """
    tool = spec.name
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise UsageError(f"{tool}: arguments must be an object, got {_json_type(arguments)}")
    props: dict[str, Any] = spec.input_schema["properties"]
    unknown = sorted(k for k in arguments if k not in props)
    if unknown:
        raise UsageError(f"{tool}: unknown argument {unknown[0]!r} (expected {', '.join(props)})")
    for name in spec.input_schema["required"]:
        if arguments.get(name) is None:
            raise UsageError(f"{tool}: missing required argument {name!r}")
    out: dict[str, Any] = {}
    for name, value in arguments.items():
        if value is None:
            continue  # an explicit null is the same as leaving an optional argument out
        rule = props[name]
        if rule["type"] == "integer":
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            if isinstance(value, bool) or not isinstance(value, int):
                raise UsageError(f"{tool}: {name} must be an integer, got {_json_type(value)}")
            low, high = rule.get("minimum"), rule.get("maximum")
            if (low is not None and value < low) or (high is not None and value > high):
                raise UsageError(f"{tool}: {name} must be between {low} and {high}, got {value}")
        else:
            if not isinstance(value, str):
                raise UsageError(f"{tool}: {name} must be a string, got {_json_type(value)}")
            if "enum" in rule and value not in rule["enum"]:
                raise UsageError(f"{tool}: {name} {value[:40]!r} is not one of {', '.join(rule['enum'])}")
            if len(value) < rule.get("minLength", 0) or not value.strip():
                raise UsageError(f"{tool}: {name} is empty")
            if "maxLength" in rule and len(value) > rule["maxLength"]:
                raise UsageError(f"{tool}: {name} is over {rule['maxLength']} characters")
            if "pattern" in rule and not re.match(rule["pattern"], value):
                raise UsageError(f"{tool}: {name} {value[:70]!r} must match {rule['pattern']}")
        out[name] = value
    return out


# ---------------------------------------------------------------------------- directory resolution


def auto_memory_dir(cwd: str, env: Mapping[str, str]) -> Path:
    """Claude Code's auto-memory directory for a working directory (DESIGN §2.4)."""
    home = env.get("HOME") or os.path.expanduser("~")
    return Path(home) / ".claude" / "projects" / re.sub(r"[^A-Za-z0-9]", "-", cwd) / "memory"


def _expand(path: str, env: Mapping[str, str]) -> str:
    if path == "~" or path.startswith("~/"):
        return (env.get("HOME") or os.path.expanduser("~")) + path[1:]
    return path


def _project_dir(cwd: str, projects: Mapping[Path, Path]) -> Path | None:
    """The ``[daemon] projects`` entry for ``cwd`` or its nearest configured ancestor."""
    candidates = {os.path.normpath(cwd), os.path.realpath(cwd)}
    best: tuple[int, Path] | None = None
    for key, memory_dir in projects.items():
        for base in {os.path.normpath(key), os.path.realpath(key)}:
            prefix = base.rstrip(os.sep) + os.sep
            if any(c == base or c.startswith(prefix) for c in candidates) and (best is None or len(base) > best[0]):
                best = (len(base), Path(memory_dir))
    return None if best is None else best[1]


def resolve_memory_dir(
    explicit: str | None,
    *,
    cwd: str,
    projects: Mapping[Path, Path],
    roots: tuple[str, ...] | list[str],
    env: Mapping[str, str],
) -> tuple[Path | None, str]:
    """The start-up directory and how it was found: ``--memory-dir``, else the rules of the hook.

    Order: ``--memory-dir``; the ``[daemon] projects`` mapping; ``<cwd>/.memory`` when it is
    managed; Claude Code's auto-memory directory for ``cwd`` when it exists inside the roots
    (adopted on first use, as the hook does). ``(None, reason)`` when none applies: the server
    still starts and every tool call must then name its ``memory_dir``.
    """
    from memory.jobs import dir_allowed

    if explicit:
        return Path(os.path.abspath(_expand(explicit, env))), "--memory-dir"
    mapped = _project_dir(cwd, projects)
    if mapped is not None:
        return mapped, "[daemon] projects"
    local = Path(cwd) / ".memory"
    if (local / "manifest.json").is_file():
        return local, "<cwd>/.memory"
    auto = auto_memory_dir(cwd, env)
    if auto.is_dir() and dir_allowed(auto, roots):
        return auto, AUTO_MEMORY
    return None, (
        f"no memory directory for {cwd} (no --memory-dir, no [daemon] projects entry, no managed "
        f"{local}, no {auto} inside the roots)"
    )


# ---------------------------------------------------------------------------- the tools

RECORD_CACHE_SIZE = 4096


def _caching_store(path: Path, **kwargs: Any) -> MemoryStore:
    """A MemoryStore that keeps parsed records while their files are unchanged.

    A server lives for a whole agent session and recalls from the same set again and again;
    parsing each record's YAML again is most of a recall's cost. The cache is keyed by file
    name and validated by (inode, mtime, size) of the file and the manifest's sha256, so a
    hand edit or a new commit is read afresh.
    """
    from collections import OrderedDict

    from memory.manifest import ManifestEntry
    from memory.records import Record
    from memory.store import MemoryStore

    class _Store(MemoryStore):
        _records: OrderedDict[str, tuple[tuple[int, int, int, str], Record]]

        def read_record(self, entry: ManifestEntry) -> Record:
            try:
                st = os.lstat(self.path / entry.file)
            except OSError:
                return super().read_record(entry)  # the store's own error, file named
            stamp = (st.st_ino, st.st_mtime_ns, st.st_size, entry.sha256)
            hit = self._records.get(entry.file)
            if hit is not None and hit[0] == stamp:
                self._records.move_to_end(entry.file)
                return hit[1] if hit[1].name == entry.name else dataclasses.replace(hit[1], name=entry.name)
            record = super().read_record(entry)
            self._records[entry.file] = (stamp, record)
            while len(self._records) > RECORD_CACHE_SIZE:
                self._records.popitem(last=False)
            return record

    store = _Store(path, **kwargs)
    store._records = OrderedDict()
    return store



@dataclass(frozen=True)
class ToolAnswer:
    """What a tool returns: ``text`` for the model, ``data`` for programs (structured content)."""

    text: str
    data: dict[str, Any]


@dataclass(frozen=True)
class ResourceInfo:
    uri: str
    name: str
    description: str
    mime_type: str = "text/markdown"


@dataclass
class MemoryTools:
    """The tools and resources of one server process, over the directories it may serve.

    Calls are serialised by one lock: a stdio session is one client, and the store's commit
    lock would serialise writes anyway.
    """

    config: Config
    default_dir: Path | None
    default_reason: str = ""
    adopt_default: bool = False
    """Adopt the start-up directory on first use when it is unmanaged (Claude Code's own)."""
    model_section: dict[str, Any] | None = None
    """The ``[model]`` config when recall should ask a model (backend not ``offline``)."""
    _models: list[Model | None] = field(default_factory=list, init=False, repr=False)
    _model_error: str | None = field(default=None, init=False, repr=False)
    _stores: dict[str, MemoryStore] = field(default_factory=dict, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    @classmethod
    def for_config(cls, config: Config, default_dir: Path | None, how: str) -> MemoryTools:
        """The tools for ``config`` serving ``default_dir`` (found by rule ``how``, or the
        reason there is none)."""
        return cls(
            config,
            default_dir,
            default_reason=how if default_dir is None else "",
            adopt_default=default_dir is not None and how == AUTO_MEMORY,
            model_section=dataclasses.asdict(config.model) if config.model.backend != "offline" else None,
        )

    # ------------------------------------------------------------------ dispatch

    def call(self, tool: str, arguments: Any) -> ToolAnswer:
        """Run one tool. DreamdError (one sentence) for bad input; nothing is written then."""
        spec = _SPECS.get(tool)
        if spec is None:
            raise UsageError(f"unknown tool {tool[:64]!r} (tools: {', '.join(_SPECS)})")
        args = check_arguments(spec, arguments)
        handler: Callable[[dict[str, Any]], ToolAnswer] = getattr(self, f"_tool_{tool}")
        with self._lock:
            return handler(args)

    # ------------------------------------------------------------------ directories

    def directory(self, value: str | None) -> Path:
        """The directory a call is about, refused unless it is served."""
        from memory.jobs import dir_allowed

        if value is None:
            if self.default_dir is None:
                raise UsageError(
                    f"{self.default_reason}; pass memory_dir, or start the server with --memory-dir DIR"
                )
            return self.default_dir
        if "\x00" in value:
            raise UsageError("memory_dir contains a NUL byte")
        expanded = _expand(value, os.environ)
        if not os.path.isabs(expanded):
            raise UsageError(f"memory_dir {value!r} is not an absolute path")
        path = Path(os.path.normpath(expanded))
        real = os.path.realpath(path)
        if self.default_dir is not None and real == os.path.realpath(self.default_dir):
            return self.default_dir
        if not dir_allowed(real, self.config.daemon.roots):
            shown = value if real == value else f"{value} (resolves to {real})"
            raise UsageError(
                f"memory_dir {shown} is outside the configured roots ([daemon] roots); this server does not serve it"
            )
        return path

    def store(self, path: Path) -> MemoryStore:
        """The store of a served directory (UnmanagedError when it has no manifest)."""
        key = os.path.realpath(path)
        store = self._stores.get(key)
        if store is None:
            store = _caching_store(path, history_generations=self.config.retention.history_generations)
            if not store.is_managed() and self.adopt_default and path == self.default_dir:
                from memory.adopt import adopt

                adopt(path, history_generations=self.config.retention.history_generations)
                log.warning("adopted %s on first use", path)
            store.snapshot()
            self._stores[key] = store
        return store

    def _model(self) -> Model | None:
        """The selection model, made on first use; None (keyword selection) when offline or
        when it cannot be made (the reason goes into every recall answer, not an error)."""
        if self.model_section is None:
            return None
        if not self._models:
            from dreamd.models.factory import make_model

            try:
                self._models.append(make_model(self.model_section))
            except DreamdError as exc:
                self._model_error = f"model unavailable ({exc}); keyword selection used"
                log.warning("recall: %s", self._model_error)
                self._models.append(None)
        return self._models[0]

    # ------------------------------------------------------------------ read tools

    def _tool_recall(self, args: dict[str, Any]) -> ToolAnswer:
        from memory.retrieval import recall

        path = self.directory(args.get("memory_dir"))
        store = self.store(path)
        cfg = self.config.recall
        result = recall(
            store.path,
            args["query"],
            model=self._model(),
            limit=args.get("limit", cfg.limit),
            record_bytes=cfg.record_bytes,
            record_lines=cfg.record_lines,
            store=store,
        )
        manifest = store.snapshot()
        data = {"memory_dir": str(path), "generation": manifest.generation, **result.to_json()}
        if data["fallback_reason"] is None and self._model_error is not None:
            data["fallback_reason"] = self._model_error
        if not result.records:
            text = (
                f"No memory in {path} matches this query ({len(manifest.records)} record(s) in "
                "the set; try other words, or list_memories)."
            )
        else:
            text = result.block
        return ToolAnswer(text, data)

    def _tool_list_memories(self, args: dict[str, Any]) -> ToolAnswer:
        path = self.directory(args.get("memory_dir"))
        manifest = self.store(path).snapshot()
        wanted = args.get("type")
        entries = [e for e in manifest.records if wanted is None or e.type == wanted]
        shown = sorted(entries, key=lambda e: e.name)[:LIST_LIMIT]
        what = f"{wanted} record(s)" if wanted else "record(s)"
        lines = [f"{len(entries)} {what} in {path} (generation {manifest.generation})"]
        lines += [f"- {e.name} [{e.type}]: {e.description}" for e in shown]
        if len(entries) > len(shown):
            lines.append(f"… {len(entries) - len(shown)} more not listed; use recall or filter by type")
        data = {
            "memory_dir": str(path),
            "generation": manifest.generation,
            "total": len(entries),
            "records": [
                {"name": e.name, "type": e.type, "description": e.description, "file": str(path / e.file)}
                for e in shown
            ],
        }
        return ToolAnswer("\n".join(lines) + "\n", data)

    def _unknown(self, store: MemoryStore, name: str) -> StoreError:
        """The error for a name the set does not hold, saying where a dream put it if one did."""
        from dreamd.work import merged_into

        into = merged_into(store, name)
        if into is not None:
            return StoreError(
                f"no record named {name!r} in {store.path}: a dream merged it into {into!r} (use that name)"
            )
        return StoreError(f"no record named {name!r} in {store.path} (list_memories shows the names)")

    def _tool_get_memory(self, args: dict[str, Any]) -> ToolAnswer:
        from memory.retrieval import RecalledRecord, render_element

        path = self.directory(args.get("memory_dir"))
        store = self.store(path)
        entry = store.snapshot().by_name().get(args["name"])
        if entry is None:
            raise self._unknown(store, args["name"])
        record = store.read_record(entry)
        file = str(Path(os.path.realpath(path)) / entry.file)
        shown = RecalledRecord(entry.name, entry.type, entry.description, file, record.body.rstrip("\n"), False)
        data = {
            "memory_dir": str(path),
            "name": entry.name,
            "type": entry.type,
            "description": entry.description,
            "body": record.body,
            "file": file,
            "created_at": entry.created_at,
            "updated_at": entry.updated_at,
            "sources": list(entry.sources),
        }
        return ToolAnswer(render_element(shown), data)

    def _tool_memory_log(self, args: dict[str, Any]) -> ToolAnswer:
        from memory.history import log_entries, render_log

        path = self.directory(args.get("memory_dir"))
        entries = log_entries(self.store(path), limit=args.get("limit", 10))
        data = {"memory_dir": str(path), "generations": [e.to_json() for e in entries]}
        return ToolAnswer(render_log(entries), data)

    # ------------------------------------------------------------------ write tools

    def _tool_remember(self, args: dict[str, Any]) -> ToolAnswer:
        from memory.records import make_record, slugify
        from memory.redact import redact
        from memory.store import Change, unique_name

        path = self.directory(args.get("memory_dir"))
        store = self.store(path)
        description, kinds = redact(args["description"])
        body, body_kinds = redact(args["body"])
        kinds += [k for k in body_kinds if k not in kinds]
        names = {e.name for e in store.snapshot().records}
        name = args.get("name") or unique_name(slugify(description), names)
        record = make_record(name, args["type"], description, body, where="remember")
        exists = record.name in names
        change = (
            Change(replace={record.name: record}, sources=["mcp"])
            if exists
            else Change(add=[record], sources=["mcp"])
        )
        result = store.commit(change)
        final = (result.updated or result.added or [record.name])[0]
        entry = store.snapshot().by_name().get(final)
        action = "updated" if result.updated else "added"
        file = str(Path(os.path.realpath(path)) / entry.file) if entry is not None else ""
        text = f"{action} {final} [{record.type}] in {path} (generation {result.generation})"
        if exists:
            text += "; the previous version is kept in .history/"
        if kinds:
            text += f"; redacted before writing: {', '.join(sorted(set(kinds)))}"
        data = {
            "memory_dir": str(path),
            "action": action,
            "name": final,
            "type": record.type,
            "generation": result.generation,
            "file": file,
            "redacted": sorted(set(kinds)),
        }
        return ToolAnswer(text + "\n", data)

    def _tool_forget(self, args: dict[str, Any]) -> ToolAnswer:
        from memory.store import Change

        path = self.directory(args.get("memory_dir"))
        store = self.store(path)
        name = args["name"]
        if name not in store.snapshot().by_name():
            raise self._unknown(store, name)
        result = store.commit(Change(remove=[name], sources=["mcp"]))
        if name not in result.removed:  # removed by someone else between our read and the lock
            raise self._unknown(store, name)
        text = f"removed {name} from {path} (generation {result.generation}; the file is kept in .history/)\n"
        data = {"memory_dir": str(path), "action": "removed", "name": name, "generation": result.generation}
        return ToolAnswer(text, data)

    # ------------------------------------------------------------------ resources

    def served_dirs(self) -> list[Path]:
        """Managed directories this server lists as resources: its own, then every managed
        directory the roots match."""
        from memory.jobs import expand_roots

        out: list[Path] = []
        seen: set[str] = set()
        candidates = ([self.default_dir] if self.default_dir is not None else []) + expand_roots(
            self.config.daemon.roots
        )
        for path in candidates:
            key = os.path.realpath(path)
            if key in seen or not (Path(key) / "manifest.json").is_file():
                continue
            seen.add(key)
            out.append(Path(key))
        return out

    def resources(self) -> list[ResourceInfo]:
        """Each served directory's MEMORY.md and record files, as ``file://`` URIs."""
        out: list[ResourceInfo] = []
        with self._lock:
            for path in self.served_dirs():
                try:
                    manifest = self.store(path).snapshot()
                except DreamdError as exc:
                    log.warning("resources: skipping %s: %s", path, exc)
                    continue
                out.append(
                    ResourceInfo(
                        (path / INDEX_FILE).as_uri(),
                        f"{path}/{INDEX_FILE}",
                        f"Index of the {len(manifest.records)} memories in {path}",
                    )
                )
                out.extend(
                    ResourceInfo((path / e.file).as_uri(), f"{e.name} [{e.type}]", e.description)
                    for e in manifest.records
                )
        return out

    def read_resource(self, uri: str) -> str:
        """The text of a listed resource; refused for anything that is not MEMORY.md or a
        record file of a served directory (no path a client names is opened otherwise)."""
        from memory.store import read_regular

        parsed = urllib.parse.urlsplit(uri)
        if parsed.scheme != "file" or parsed.netloc not in ("", "localhost") or parsed.query or parsed.fragment:
            raise UsageError(f"resource {uri[:200]!r} is not a file:// URI this server lists")
        path = Path(urllib.parse.unquote(parsed.path))
        if not path.is_absolute() or "\x00" in str(path):
            raise UsageError(f"resource {uri[:200]!r} is not an absolute file path")
        with self._lock:
            directory = self.directory(str(path.parent))
            store = self.store(directory)
            manifest = store.snapshot()
            if path.name != INDEX_FILE and path.name not in {e.file for e in manifest.records}:
                raise StoreError(f"resource {uri[:200]!r}: {path.name} is not a record of {directory}")
            try:
                data = read_regular(Path(directory) / path.name)
            except FileNotFoundError:
                raise StoreError(f"resource {uri[:200]!r}: the file is gone (the set changed; list again)") from None
        return data.decode("utf-8", errors="replace")


# ---------------------------------------------------------------------------- the SDK layer


def _error_text(exc: BaseException) -> str:
    if isinstance(exc, DreamdError):
        return " ".join(str(exc).split())
    if isinstance(exc, OSError):
        return f"{exc.filename or ''}: {exc.strerror or exc}".lstrip(": ")
    return f"internal error: {type(exc).__name__}: {' '.join(str(exc).split())[:300]}"


MAX_MESSAGE_BYTES = 4 * 1024 * 1024
"""A JSON-RPC line longer than this is refused unread (a tool call needs far less: bodies are
capped at 64 KiB), so a hostile client cannot make the server buffer gigabytes."""


def screen_line(line: bytes, *, limit: int = MAX_MESSAGE_BYTES) -> tuple[str | None, dict[str, Any] | None]:
    """One line from the client: (text to hand the SDK, None) or (None, JSON-RPC error to answer).

    The SDK drops a line it cannot validate without answering, so a client whose request had a
    valid ``id`` but bad ``params`` (or a lone surrogate) would wait forever. Here every such
    request gets an error with its id; lines that are not JSON get a parse error (id null, as
    JSON-RPC 2.0 says); notifications and blank lines get nothing.
    """
    import json

    from mcp_types import jsonrpc_message_adapter

    if not line.strip():
        return None, None
    if len(line) > limit:
        return None, _rpc_error(None, -32600, f"message over {limit} bytes refused")
    try:
        text = line.decode("utf-8")
        data = json.loads(text)
    except UnicodeDecodeError as exc:
        return None, _rpc_error(None, -32700, f"parse error: not valid UTF-8 (byte {exc.start})")
    except (ValueError, RecursionError):
        return None, _rpc_error(None, -32700, "parse error: not JSON")
    try:
        jsonrpc_message_adapter.validate_json(text, by_name=False)
    except Exception as exc:
        request_id = data.get("id") if isinstance(data, dict) else None
        if isinstance(data, dict) and "method" in data and request_id is None:
            return None, None  # a malformed notification: nobody waits for an answer
        if isinstance(request_id, bool) or not isinstance(request_id, int | str):
            request_id = None
        first = str(exc).splitlines()
        reason = first[1].strip() if len(first) > 1 else type(exc).__name__
        reason = reason.split(" [type=")[0]  # pydantic would echo the client's input back
        return None, _rpc_error(request_id, -32600, f"invalid request: {reason[:200]}")
    return text, None


def _rpc_error(request_id: int | str | None, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


class _ScreenedStdin:
    """The client's lines for the SDK's stdio transport, screened by :func:`screen_line`.

    A daemon thread reads the binary stdin with a bounded ``readline`` and hands lines to the
    event loop; being a daemon, it never holds the process open (Ctrl-C exits at once, where a
    worker blocked in ``readline`` would wait for the client's next line). Errors are sent
    through the transport's own write stream (one writer, no torn lines).
    """

    def __init__(self, raw: Any, limit: int = MAX_MESSAGE_BYTES) -> None:
        self._raw = raw
        """Anything with ``fileno()``: the process's stdin."""
        self._limit = limit
        self._lines: Any = None
        self.write_stream: Any = None

    def __aiter__(self) -> _ScreenedStdin:
        return self

    def _read(self, loop: Any, lines: Any) -> None:
        """Split the client's bytes into lines; a line over the limit is handed on as its first
        ``limit + 1`` bytes (screened as oversized) and the rest is dropped unkept. ``os.read``
        on the descriptor, not the buffered ``sys.stdin``: a daemon thread holding the buffer's
        lock at exit is a fatal error."""

        def hand(line: bytes) -> bool:
            try:
                loop.call_soon_threadsafe(lines.put_nowait, line)
            except RuntimeError:  # the loop is closed: the server is gone
                return False
            return True

        fd = self._raw.fileno()
        pending = b""
        skipping = False
        while True:
            try:
                chunk = os.read(fd, 1 << 16)
            except OSError:
                chunk = b""
            if not chunk:
                if pending and not skipping:
                    hand(pending)
                hand(b"")
                return
            pending += chunk
            while True:
                newline = pending.find(b"\n")
                if newline < 0:
                    if len(pending) > self._limit:
                        if not skipping and not hand(pending[: self._limit + 1]):
                            return
                        skipping, pending = True, b""
                    break
                line, pending = pending[: newline + 1], pending[newline + 1 :]
                if skipping:
                    skipping = False
                    continue
                if not hand(line):
                    return

    async def __anext__(self) -> str:
        import asyncio

        if self._lines is None:
            self._lines = asyncio.Queue()
            threading.Thread(
                target=self._read, args=(asyncio.get_running_loop(), self._lines), name="mcp-stdin", daemon=True
            ).start()
        while True:
            line = await self._lines.get()
            if not line:
                raise StopAsyncIteration
            text, error = screen_line(line, limit=self._limit)
            if text is not None:
                return text
            if error is not None:
                await self._answer(error)

    async def _answer(self, error: dict[str, Any]) -> None:
        import anyio
        import mcp_types as types
        from mcp.shared.message import SessionMessage

        while self.write_stream is None:  # the transport hands us its stream once it is up
            await anyio.sleep(0.005)
        message = types.JSONRPCError.model_validate(error)
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
            await self.write_stream.send(SessionMessage(message))


def serve(tools: MemoryTools, *, stdin: Any = None) -> int:
    """Serve ``tools`` over stdio until the client closes stdin; returns the exit code."""
    import sys

    import anyio
    import anyio.to_thread
    import mcp_types as types
    from mcp.server.lowlevel import Server
    from mcp.server.stdio import stdio_server
    from mcp.shared.exceptions import MCPError

    listed = [
        types.Tool(
            name=t.name,
            title=t.title,
            description=t.description,
            input_schema=t.input_schema,
            annotations=types.ToolAnnotations(
                title=t.title,
                read_only_hint=t.read_only,
                destructive_hint=t.destructive,
                idempotent_hint=t.idempotent,
                open_world_hint=False,
            ),
        )
        for t in TOOLS
    ]

    async def on_list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listed)

    async def on_call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        try:
            answer = await anyio.to_thread.run_sync(tools.call, params.name, params.arguments)
        except Exception as exc:
            if not isinstance(exc, DreamdError | OSError):
                log.exception("tool %s raised", params.name)
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=_error_text(exc))], is_error=True
            )
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=answer.text)], structured_content=answer.data
        )

    async def on_list_resources(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListResourcesResult:
        cursor = params.cursor if params is not None else None
        start = int(cursor) if cursor and cursor.isdigit() else 0
        try:
            every = await anyio.to_thread.run_sync(tools.resources)
        except Exception as exc:
            raise MCPError(code=types.INTERNAL_ERROR, message=_error_text(exc)) from None
        page = every[start : start + RESOURCE_PAGE]
        more = start + RESOURCE_PAGE < len(every)
        return types.ListResourcesResult(
            resources=[
                types.Resource(uri=r.uri, name=r.name, description=r.description, mime_type=r.mime_type)
                for r in page
            ],
            next_cursor=str(start + RESOURCE_PAGE) if more else None,
        )

    async def on_read_resource(ctx: Any, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        uri = str(params.uri)
        try:
            text = await anyio.to_thread.run_sync(tools.read_resource, uri)
        except Exception as exc:
            if not isinstance(exc, DreamdError | OSError):
                log.exception("reading resource %s raised", uri[:200])
            raise MCPError(code=types.INVALID_PARAMS, message=_error_text(exc), data={"uri": uri[:500]}) from None
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=uri, text=text, mime_type="text/markdown")]
        )

    from importlib.metadata import PackageNotFoundError, version

    try:
        ours = version("dreamd")
    except PackageNotFoundError:  # pragma: no cover - running from a checkout
        ours = "0"
    server: Server[Any] = Server(
        SERVER_NAME,
        version=ours,
        title="dreamd memory",
        instructions=INSTRUCTIONS,
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
        on_list_resources=on_list_resources,
        on_read_resource=on_read_resource,
    )

    screened = _ScreenedStdin(stdin if stdin is not None else sys.stdin.buffer)

    async def run() -> None:
        async with stdio_server(stdin=screened) as (read_stream, write_stream):  # type: ignore[arg-type]
            screened.write_stream = write_stream
            await server.run(read_stream, write_stream, server.create_initialization_options())

    anyio.run(run)
    return 0


def main(config: Config, *, memory_dir: str | None, cwd: str, env: Mapping[str, str]) -> int:
    """``dreamd mcp``: resolve the start-up directory, check it, then serve.

    An explicit ``--memory-dir`` that is not a managed directory fails before the server
    starts (exit 1, one line), so a misconfigured client shows the reason at once.
    """
    import sys

    # stdout is the protocol channel. Plain stdlib logging to stderr: structlog (the daemon's)
    # would add a tenth of the SDK's import time to every start-up.
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="dreamd mcp: %(levelname)s: %(message)s")
    default, how = resolve_memory_dir(
        memory_dir, cwd=cwd, projects=config.daemon.projects, roots=config.daemon.roots, env=env
    )
    if default is not None and how != AUTO_MEMORY and not (default / "manifest.json").is_file():
        from memory.store import MemoryStore

        MemoryStore(default).read()  # raises the store's own one-line UnmanagedError
    tools = MemoryTools.for_config(config, default, how)
    if default is not None:
        log.info("serving %s (%s)", default, how)
    return serve(tools)
