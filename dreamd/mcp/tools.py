"""The tools and resources of ``dreamd mcp`` as plain synchronous functions (no SDK import).

:class:`MemoryTools` takes a tool name and its JSON arguments and returns a :class:`ToolAnswer`
(text for the model, structured data for programs), or raises a
:class:`~memory.errors.DreamdError` of one sentence for bad input — nothing is written then.

Invariants:

* One project, one directory: the server serves the start-up directory (``--memory-dir``, else
  the one rule of :func:`dreamd.hook.placement.place`, as :func:`resolve_memory_dir` applies it
  to the working directory) and only the directories ``[daemon] mcp_dirs`` grants it (inside
  ``[daemon] roots``), as resources and for tools; a call naming any other is refused.
* Writes go through :meth:`memory.store.transaction.MemoryStore.commit` — lock, re-read, merge, atomic
  rename — exactly as ``dreamd remember``/``forget`` do, so other servers, the daemon and hand
  edits are merged, never lost. Every write answer names the generation it made.
* Resources are only ``MEMORY.md`` and the record files a served directory's manifest names;
  no other path a client sends is ever opened.
"""

from __future__ import annotations

import logging
import os
import threading
import urllib.parse
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dreamd.mcp.schema import SPECS, check_arguments
from memory.errors import DreamdError, StoreError, UsageError

if TYPE_CHECKING:
    from dreamd.config import Config
    from dreamd.mcp.warm import WarmEmbedder
    from memory.model.llm import Model
    from memory.store.transaction import MemoryStore

__all__ = [
    "AUTO_MEMORY",
    "MemoryTools",
    "ResourceInfo",
    "ToolAnswer",
    "auto_memory_dir",
    "resolve_memory_dir",
]

log = logging.getLogger("dreamd.mcp")

INDEX_FILE = "MEMORY.md"
LIST_LIMIT = 1000
"""Entries ``list_memories`` shows at most; the answer says how many it left out."""
AUTO_MEMORY = "Claude Code auto-memory"


# ---------------------------------------------------------------------------- directory resolution


def auto_memory_dir(cwd: str, env: Mapping[str, str]) -> Path:
    """Claude Code's auto-memory directory for a working directory (keyed by its git root)."""
    from dreamd.hook import claude_paths

    found, _ = claude_paths.auto_memory_dir(cwd, None, env)
    if found is not None:
        return found
    return claude_paths.config_dir(env) / "projects" / claude_paths.project_key(claude_paths.git_root(cwd) or cwd) / "memory"


def _expand(path: str, env: Mapping[str, str]) -> str:
    if path == "~" or path.startswith("~/"):
        return (env.get("HOME") or os.path.expanduser("~")) + path[1:]
    return path


def resolve_memory_dir(
    explicit: str | None,
    *,
    cwd: str,
    projects: Mapping[Path, Path],
    roots: tuple[str, ...] | list[str],
    env: Mapping[str, str],
) -> tuple[Path | None, str]:
    """The start-up directory and how it was found: ``--memory-dir``, else the one rule of the
    hook and the CLI (:func:`dreamd.hook.placement.place`): the nearest managed ``.memory`` up to
    the git root, ``[daemon] projects``, Claude Code's auto-memory directory inside the roots
    (adopted on first use; created by the first ``remember`` when it does not exist yet). ``(None, reason)`` when none applies: the server
    still starts and serves nothing until it is started elsewhere or with ``--memory-dir``.
    """
    from dreamd.hook.placement import place

    if explicit:
        return Path(os.path.abspath(_expand(explicit, env))), "--memory-dir"
    target, why = place(cwd, projects=projects, roots=tuple(roots), env=env, check_roots=True)
    if target is None:
        return None, f"no memory directory for {cwd} ({why})"
    if target.adopt:  # made by the first remember if Claude Code has not made it yet
        return target.memory_dir, AUTO_MEMORY
    return target.memory_dir, target.source


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

    from memory.store.manifest import ManifestEntry
    from memory.store.records import Record
    from memory.store.transaction import MemoryStore

    class _Store(MemoryStore):
        def __init__(self, path: Path, **kwargs: Any) -> None:
            super().__init__(path, **kwargs)
            self._records: OrderedDict[str, tuple[tuple[int, int, int, str], Record]] = OrderedDict()

        def read_record(self, entry: ManifestEntry) -> Record:
            try:
                st = os.lstat(self.path / entry.file)
            except OSError:
                return super().read_record(entry)  # the store's own error, file named
            stamp = (st.st_ino, st.st_mtime_ns, st.st_size, entry.sha256)
            hit = self._records.get(entry.file)
            if hit is not None and hit[0] == stamp:
                self._records.move_to_end(entry.file)
                return hit[1] if hit[1].name == entry.name else hit[1].replace(name=entry.name)
            record = super().read_record(entry)
            self._records[entry.file] = (stamp, record)
            while len(self._records) > RECORD_CACHE_SIZE:
                self._records.popitem(last=False)
            return record

    return _Store(path, **kwargs)


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
    warm: WarmEmbedder | None = None
    """``[recall] embeddings``: the one model every recall fuses with keywords (None: keywords only)."""
    _models: list[Model | None] = field(default_factory=list, init=False, repr=False)
    _model_error: str | None = field(default=None, init=False, repr=False)
    _stores: dict[str, MemoryStore] = field(default_factory=dict, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    @classmethod
    def for_config(cls, config: Config, default_dir: Path | None, how: str) -> MemoryTools:
        """The tools for ``config`` serving ``default_dir`` (found by rule ``how``, or the
        reason there is none)."""
        warm = None
        if config.recall.embeddings:
            from dreamd.mcp.warm import WarmEmbedder

            warm = WarmEmbedder(config.recall.embeddings)
        return cls(
            config,
            default_dir,
            default_reason=how if default_dir is None else "",
            adopt_default=default_dir is not None and how == AUTO_MEMORY,
            model_section=config.model.to_dict() if config.model.backend != "offline" else None,
            warm=warm,
        )

    # ------------------------------------------------------------------ dispatch

    def call(self, tool: str, arguments: Any) -> ToolAnswer:
        """Run one tool. DreamdError (one sentence) for bad input; nothing is written then."""
        spec = SPECS.get(tool)
        if spec is None:
            raise UsageError(f"unknown tool {tool[:64]!r} (tools: {', '.join(SPECS)})")
        args = check_arguments(spec, arguments)
        handler: Callable[[dict[str, Any]], ToolAnswer] = getattr(self, f"_tool_{tool}")
        with self._lock:
            return handler(args)

    # ------------------------------------------------------------------ directories

    def directory(self, value: str | None) -> Path:
        """The directory a call is about, refused unless this server serves it: its own
        (the project's) or one ``[daemon] mcp_dirs`` grants."""
        from memory.roots import dir_allowed

        if value is None:
            if self.default_dir is None:
                raise UsageError(
                    f"{self.default_reason}; start the server inside a project or with --memory-dir DIR"
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
        granted = self.config.daemon.mcp_dirs
        if not granted or not dir_allowed(real, granted) or not dir_allowed(real, self.config.daemon.roots):
            shown = value if real == value else f"{value} (resolves to {real})"
            own = f"{self.default_dir}" if self.default_dir is not None else "no directory"
            raise UsageError(
                f"memory_dir {shown} is not served here: this server serves {own}"
                " and what [daemon] mcp_dirs grants (inside [daemon] roots)"
            )
        return path

    def store(self, path: Path, *, create: bool = False) -> MemoryStore:
        """The store of a served directory (UnmanagedError when it has no manifest).

        Claude Code's auto-memory directory (the default one) is adopted on first use; when it
        does not exist yet (a project's first session), ``create`` (a write) makes it, 0700,
        as the daemon's first job for it would, and a read says there is nothing yet."""
        key = os.path.realpath(path)
        store = self._stores.get(key)
        if store is None:
            store = _caching_store(path, history_generations=self.config.retention.history_generations)
            if not store.is_managed() and self.adopt_default and path == self.default_dir:
                from memory.store.adopt import adopt

                if not os.path.lexists(path):
                    if not create:
                        raise StoreError(f"{path}: no memories yet (the first remember or session makes the directory)")
                    path.mkdir(mode=0o700, parents=True)
                    log.warning("created %s for its first record", path)
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
        from memory.retrieval.recall import recall

        path = self.directory(args.get("memory_dir"))
        store = self.store(path)
        cfg = self.config.recall
        embedder, embed_error = self.warm.get() if self.warm is not None else (None, None)
        result = recall(
            store.path,
            args["query"],
            model=self._model(),
            limit=args.get("limit", cfg.limit),
            record_bytes=cfg.record_bytes,
            record_lines=cfg.record_lines,
            store=store,
            embedder=embedder,
        )
        manifest = store.snapshot()
        data = {"memory_dir": str(path), "generation": manifest.generation, **result.to_json()}
        if data["fallback_reason"] is None and self._model_error is not None:
            data["fallback_reason"] = self._model_error
        if data["fallback_reason"] is None and embed_error is not None:
            data["fallback_reason"] = embed_error
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
        from dreamd.jobs.work import merged_into

        into = merged_into(store, name)
        if into is not None:
            return StoreError(
                f"no record named {name!r} in {store.path}: a dream merged it into {into!r} (use that name)"
            )
        return StoreError(f"no record named {name!r} in {store.path} (list_memories shows the names)")

    def _tool_get_memory(self, args: dict[str, Any]) -> ToolAnswer:
        from memory.retrieval.recall import RecalledRecord, render_element

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
        from memory.store.history import log_entries, render_log

        path = self.directory(args.get("memory_dir"))
        entries = log_entries(self.store(path), limit=args.get("limit", 10))
        data = {"memory_dir": str(path), "generations": [e.to_json() for e in entries]}
        return ToolAnswer(render_log(entries), data)

    # ------------------------------------------------------------------ write tools

    def _tool_remember(self, args: dict[str, Any]) -> ToolAnswer:
        from memory.redact import redact_found, scrub_fragments
        from memory.store.records import make_record, slugify, unique_name
        from memory.store.redaction import clean_name
        from memory.store.transaction import Change

        path = self.directory(args.get("memory_dir"))
        store = self.store(path, create=True)
        description, kinds, found = redact_found(args["description"])
        body, body_kinds, body_found = redact_found(args["body"])
        kinds += [k for k in body_kinds if k not in kinds]
        # a secret found in one field goes from the other too: a description that is the
        # body's first line may hold half of a value only the whole body shows (a password cut
        # over a line break); redacted here, the store's commit no longer sees it whole
        secrets = found + body_found
        if secrets:
            description, cut = scrub_fragments(description, secrets)
            body, body_cut = scrub_fragments(body, secrets)
            kinds += [k for k in (*cut, *body_cut) if k not in kinds]
        names = {e.name for e in store.snapshot().records}
        given = args.get("name") or slugify(description)
        # Checked against the unredacted text, where the secret a name may share a part with is.
        name = clean_name(given, args["description"], args["body"])
        renamed = name != given and bool(args.get("name"))
        if renamed or not args.get("name"):
            name = unique_name(name, names)  # a renamed record never replaces another
        if renamed and "name" not in kinds:
            kinds.append("name")
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
        from memory.store.transaction import Change

        path = self.directory(args.get("memory_dir"))
        store = self.store(path)
        name = args["name"]
        if name not in store.snapshot().by_name():
            raise self._unknown(store, name)
        result = store.commit(Change(remove=[name], sources=["mcp"]))
        if name not in result.removed:  # removed by someone else between our read and the lock
            raise self._unknown(store, name)
        text = f"removed {name} from {path} (generation {result.generation}; {result.archive_note()})\n"
        data = {"memory_dir": str(path), "action": "removed", "name": name, "generation": result.generation}
        return ToolAnswer(text, data)

    # ------------------------------------------------------------------ resources

    def served_dirs(self) -> list[Path]:
        """Managed directories this server lists as resources: its own, then those
        ``[daemon] mcp_dirs`` grants (inside the roots) — never another project's."""
        from memory.roots import dir_allowed, expand_roots

        out: list[Path] = []
        seen: set[str] = set()
        granted = [
            p for p in expand_roots(self.config.daemon.mcp_dirs) if dir_allowed(p, self.config.daemon.roots)
        ] if self.config.daemon.mcp_dirs else []  # fmt: skip
        candidates = ([self.default_dir] if self.default_dir is not None else []) + granted
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
        from memory.store.transaction import read_regular

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
        from memory.retrieval.block import body_problem

        text = data.decode("utf-8", errors="replace")
        problem = body_problem(text, Path(directory) / path.name)
        if problem is not None:
            raise StoreError(problem)
        return text
