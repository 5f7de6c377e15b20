"""The ``dreamd`` command line (DESIGN §10, stable).

Exit codes: 0 success, 1 failure (one line on stderr naming what and where), 2 usage.
Every command imports what it needs inside its handler, so ``dreamd hook`` and ``dreamd submit``
stay fast and never load anthropic, watchdog or apscheduler.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dreamd.config import Config
    from memory.store.records import Record
    from memory.store.transaction import MemoryStore

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2


DIR_HELP = (
    "memory directory (default: the one a session started here uses: the nearest managed .memory "
    "up to the git root, then [daemon] projects, then Claude Code's auto-memory directory)"
)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # argparse prints usage and exits 2 on its own
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"dreamd: {message}\n")


def _config(args: argparse.Namespace) -> Config:
    from dreamd.config import load_config

    return load_config(Path(args.config) if getattr(args, "config", None) else None)


def _open_store(args: argparse.Namespace) -> MemoryStore:
    """The store of ``args.dir``, with the config's history window (every committing command)."""
    from memory.store.transaction import open_store

    config = _config(args)
    return open_store(Path(args.dir), history_generations=config.retention.history_generations)


PLACED_COMMANDS = frozenset({"remember", "forget", "recall", "consolidate", "log", "rollback", "pause", "resume"})
"""Commands whose DIR may be left out: then the directory is the one a session started here
would use (:func:`dreamd.hook.placement.place`), the rule the hook and ``dreamd mcp`` follow."""


def _place(args: argparse.Namespace) -> None:
    """Fill in ``args.dir`` when the command was given none (see :data:`PLACED_COMMANDS`)."""
    import os

    from memory.errors import UsageError

    if args.command == "forget" and args.dir is None and len(args.names) > 1:
        first = args.names[0]
        if os.sep in first or first.startswith("~") or os.path.isdir(first):
            args.dir, args.names = first, args.names[1:]  # `dreamd forget DIR NAME…` as before
    if args.dir is not None:
        return
    from dreamd.hook.placement import place

    config = _config(args)
    cwd = os.getcwd()
    target, why = place(cwd, projects=config.daemon.projects, roots=config.daemon.roots, env=os.environ, check_roots=False)
    if target is None:
        raise UsageError(f"no memory directory for {cwd} ({why}); name one: dreamd {args.command} DIR …")
    if target.adopt and not (target.memory_dir / "manifest.json").is_file():
        raise UsageError(
            f"no memory directory for {cwd} yet (Claude Code's auto-memory {target.memory_dir} is adopted by "
            f"the daemon on the first session; or name one: dreamd {args.command} DIR …)"
        )
    args.dir = str(target.memory_dir)


def _quiet_logs(args: argparse.Namespace) -> None:
    """One-shot commands log warnings to stderr, so stdout stays the command's output."""
    import logging

    from dreamd.logs import configure

    configure(getattr(args, "log_format", None) or "auto", stream=sys.stderr, level=logging.WARNING)


# ---------------------------------------------------------------------------- directory commands


def cmd_init(args: argparse.Namespace) -> int:
    from dreamd.cli.roots import check_init_target
    from memory.store.transaction import MemoryStore

    added = check_init_target(Path(args.dir), add=args.add_root, explicit=Path(args.config) if args.config else None)
    if added:
        print(f"{added} (a running daemon takes it in at its next reload: SIGHUP, or a restart)")
    store = MemoryStore.init(Path(args.dir))
    print(f"initialised {store.path} (generation {store.read().generation})")
    return EXIT_OK


def cmd_adopt(args: argparse.Namespace) -> int:
    from memory.store.adopt import adopt

    report = adopt(Path(args.dir))
    print(f"adopted {args.dir}: {len(report.adopted)} record(s), generation {report.generation}")
    for name in report.notes:
        print(f"  index notes kept as record {name}")
    if report.index_archived:
        print(f"  original MEMORY.md archived as {report.index_archived}")
    for file, reason in report.malformed:
        print(f"  left in place (malformed): {file}: {reason}", file=sys.stderr)
    return EXIT_OK


def cmd_remember(args: argparse.Namespace) -> int:
    from memory.redact import redact
    from memory.store.records import make_record
    from memory.store.transaction import Change

    if args.body_file:
        body = sys.stdin.read() if args.body_file == "-" else Path(args.body_file).read_text(encoding="utf-8")
    else:
        body = args.body
    rec = make_record(
        args.name, args.type, redact(args.description)[0], redact(body)[0], where="remember",
        importance=args.importance, expires=args.expires,
    )  # fmt: skip
    store = _open_store(args)
    keys, _ = store.resolve([rec.name])  # the key, or a record's own frontmatter name
    exists = rec.name in keys
    if exists:
        rec = _keep_options(store, keys[rec.name], rec)
    change = Change(replace={keys[rec.name]: rec}) if exists else Change(add=[rec])
    result = store.commit(change)
    verb = "updated" if exists else "added"
    name = (result.updated or result.added or [rec.name])[0]
    print(f"{verb} {name} (generation {result.generation})")
    return EXIT_OK


def _keep_options(store: MemoryStore, key: str, rec: Record) -> Record:
    """An update keeps the record's ``importance``/``expires`` unless the command sets them."""
    import dataclasses

    from memory.errors import RecordError
    from memory.store.records import OPTIONAL_FIELDS

    entry = next((e for e in store.read().records if e.name == key), None)
    if entry is None:
        return rec
    try:
        old = store.read_record(entry)
    except RecordError:
        return rec
    kept = {k: old.extra[k] for k in OPTIONAL_FIELDS if k in old.extra and k not in rec.extra}
    return dataclasses.replace(rec, extra={**kept, **rec.extra}) if kept else rec


def cmd_forget(args: argparse.Namespace) -> int:
    from memory.errors import StoreError
    from memory.store.transaction import Change

    store = _open_store(args)
    keys, unknown = store.resolve(args.names)  # a key or the record's own frontmatter name
    if unknown:
        raise StoreError(f"{store.path}: no record named {', '.join(unknown)}")
    result = store.commit(Change(remove=list(dict.fromkeys(keys[n] for n in args.names))))
    print(f"removed {', '.join(result.removed)} (generation {result.generation}; kept in .history/)")
    return EXIT_OK


def cmd_log(args: argparse.Namespace) -> int:
    from memory.store.history import log_entries, render_log, render_log_json
    from memory.store.transaction import open_store

    entries = log_entries(open_store(Path(args.dir)), limit=args.limit, every=args.all)
    sys.stdout.write(render_log_json(entries) + "\n" if args.json else render_log(entries))
    return EXIT_OK


def cmd_rollback(args: argparse.Namespace) -> int:
    from memory.store.history import rollback

    result = rollback(_open_store(args), to=args.to)
    print(
        f"rolled back to generation {args.to} as generation {result.generation}: "
        f"{len(result.added)} restored, {len(result.updated)} reverted, {len(result.removed)} removed"
    )
    return EXIT_OK


def cmd_pause(args: argparse.Namespace) -> int:
    from dreamd.jobs.gates import pause
    from memory.store.transaction import open_store

    open_store(Path(args.dir))
    pause(Path(args.dir), reason=args.reason)
    print(f"paused dreams in {args.dir}")
    return EXIT_OK


def cmd_resume(args: argparse.Namespace) -> int:
    from dreamd.jobs.gates import resume
    from memory.store.transaction import open_store

    open_store(Path(args.dir))
    resume(Path(args.dir))
    print(f"resumed dreams in {args.dir}")
    return EXIT_OK


def cmd_recall(args: argparse.Namespace) -> int:
    from memory.retrieval.recall import recall

    config = _config(args)
    model = None
    if config.model.backend == "offline":
        import logging  # memory.* logs through stdlib logging; structlog is the model path's cost

        logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="dreamd: %(levelname)s: %(message)s")
    else:
        import dataclasses

        from dreamd.models.factory import make_model

        _quiet_logs(args)
        model = make_model(dataclasses.asdict(config.model))
    embedder = None
    if config.recall.embeddings:
        from dreamd.embeddings.model import EmbeddingsUnavailable, load

        try:
            embedder = load(config.recall.embeddings)
        except EmbeddingsUnavailable as exc:
            print(f"dreamd recall: {exc}; keyword selection only", file=sys.stderr)
    result = recall(
        Path(args.dir),
        args.query,
        model=model,
        embedder=embedder,
        limit=args.limit or config.recall.limit,
        record_bytes=config.recall.record_bytes,
        record_lines=config.recall.record_lines,
    )
    if args.json:
        print(json.dumps(result.to_json(), ensure_ascii=False, indent=2))
    else:
        sys.stdout.write(result.block + ("\n" if result.block and not result.block.endswith("\n") else ""))
    return EXIT_OK


def cmd_consolidate(args: argparse.Namespace) -> int:
    from dreamd.jobs.work import Context, dream
    from memory.store.transaction import open_store

    config = _config(args)
    _quiet_logs(args)
    open_store(Path(args.dir))
    ctx = Context.create(config)
    result = dream(Path(args.dir), ctx, force=args.force, dry_run=args.dry_run)
    if args.dry_run and result.status == "dry-run":
        from dreamd.jobs.preview import render_plan

        sys.stdout.write(render_plan(Path(args.dir), result.plan))
        return EXIT_OK
    if result.status in ("applied", "nothing"):
        ops = len(result.plan)
        print(f"dream {result.status}: {ops} operation(s), generation {result.generation}")
        return EXIT_OK
    if result.status == "gated" and result.gates is not None:
        print(f"dream not run: gates closed ({result.reason}); use --force to bypass the gates")
        return EXIT_OK
    print(f"dreamd: dream {result.status}: {result.reason}", file=sys.stderr)
    return EXIT_FAILURE


# ---------------------------------------------------------------------------- spool & daemon


def cmd_submit(args: argparse.Namespace) -> int:
    from memory.client import submit
    from memory.errors import JobRejected

    config = _config(args)
    limit = config.retention.max_job_bytes
    content: str | bytes | Path
    if args.file == "-":
        content = sys.stdin.buffer.read(limit + 1)
        if len(content) > limit:
            raise JobRejected(f"transcript on stdin is over the {limit}-byte job limit; not read")
    else:
        content = Path(args.file)  # read by submit with a size check first
    job_id = submit(
        content,
        memory_dir=str(Path(args.memory_dir).resolve()),
        session_id=args.session,
        format=args.format,
        spool=config.daemon.spool,
        max_job_bytes=limit,
    )
    print(job_id)
    return EXIT_OK


def cmd_explain(args: argparse.Namespace) -> int:
    from dreamd.cli.explain import cmd_explain as explain

    return explain(args)


def cmd_retry(args: argparse.Namespace) -> int:
    from memory.spool.queue import Spool

    config = _config(args)
    moved = Spool(config.daemon.spool).retry(args.jobs or None)
    print(f"requeued {len(moved)} job(s)")
    return EXIT_OK


def cmd_run(args: argparse.Namespace) -> int:
    from dreamd.daemon.supervisor import run

    config = _config(args)
    return int(run(config, config_path=Path(args.config) if args.config else None, log_format=args.log_format))


def cmd_once(args: argparse.Namespace) -> int:
    from dreamd.daemon.supervisor import once

    config = _config(args)
    return int(once(config, log_format=args.log_format))


def cmd_status(args: argparse.Namespace) -> int:
    from dreamd.status.collect import collect_status, render_status

    config = _config(args)
    status = collect_status(config, [Path(d) for d in args.dirs] or None)
    if args.json:
        print(json.dumps(status, ensure_ascii=False, indent=2))
    else:
        sys.stdout.write(render_status(status))
    return EXIT_OK


def cmd_doctor(args: argparse.Namespace) -> int:
    from dreamd.cli.doctor import doctor_main

    # doctor loads the config itself so an invalid one is a FAIL line, not a bare error
    return int(doctor_main(Path(args.config) if args.config else None))


def cmd_setup(args: argparse.Namespace) -> int:
    import os

    from dreamd.setup.command import dreamd_argv
    from dreamd.setup.main import Options, setup_main, undo_main
    from dreamd.setup.service import subprocess_runner

    runner = subprocess_runner(os.environ)
    if args.undo:
        return undo_main(env=os.environ, runner=runner, out=sys.stdout, dry_run=args.dry_run)
    opts = Options(
        argv=tuple(dreamd_argv(sys.argv[0], sys.executable)),
        roots=tuple(args.root),
        plugin=args.plugin,
        dry_run=args.dry_run,
        config=Path(args.config) if args.config else None,
    )
    return setup_main(opts, env=os.environ, runner=runner, out=sys.stdout)


def cmd_demo(args: argparse.Namespace) -> int:
    from dreamd.cli.demo import run_demo

    return int(run_demo(Path(args.dir) if args.dir else None, out=sys.stdout))


def cmd_mcp(args: argparse.Namespace) -> int:
    import os

    from dreamd.mcp.server import main as mcp_main

    config = _config(args)
    return int(mcp_main(config, memory_dir=args.memory_dir, cwd=os.getcwd(), env=os.environ))


def cmd_sync(args: argparse.Namespace) -> int:
    from dreamd.sync.flow import sync
    from dreamd.sync.merge_driver import install_merge_driver

    if args.install_merge_driver:
        for path in install_merge_driver(Path(args.dir)):
            print(f"merge driver configured; wrote {path} (commit it)")
        return EXIT_OK
    report = sync(Path(args.dir), remote=args.remote, allow_rewrite=args.allow_rewrite,
                  squash_unpushed=args.squash_unpushed)
    print("\n".join(report.lines()))
    return EXIT_OK


def cmd_merge_driver(args: argparse.Namespace) -> int:
    from dreamd.sync.merge_driver import merge_driver

    return merge_driver(Path(args.base), Path(args.ours), Path(args.theirs))


def cmd_ui(args: argparse.Namespace) -> int:
    from dreamd.console.serve import serve

    config = _config(args)
    _quiet_logs(args)
    return serve(config, dirs=[Path(d) for d in args.dirs], host=args.host, port=args.port, allow_remote=args.allow_remote)


def cmd_hook(args: argparse.Namespace) -> int:  # pragma: no cover - main() takes the fast path
    from dreamd.hook.main import main as hook_main

    return int(hook_main())


# ---------------------------------------------------------------------------- parser


class _Skipped:
    """Stands in for the subparser of a command this run does not parse (see :func:`build_parser`)."""

    def add_argument(self, *args: Any, **kwargs: Any) -> None:
        return None

    def set_defaults(self, **kwargs: Any) -> None:
        return None

    def add_mutually_exclusive_group(self, **kwargs: Any) -> _Skipped:
        return self


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The command line. With ``only``, just that subcommand is built (building all of them is
    most of a command's start-up after the interpreter's own); an unknown ``only`` builds all,
    so the usage error lists every command."""
    p = _Parser(prog="dreamd", description="Long-term memory for LLM agents, kept by a daemon.")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    built: list[str] = []

    def add(name: str, handler: Callable[[argparse.Namespace], int], help_: str, *, config: bool = False) -> Any:
        if only is not None and name != only:
            return _Skipped()
        built.append(name)
        sp = sub.add_parser(name, help=help_, description=help_)
        sp.set_defaults(handler=handler)
        if config:
            sp.add_argument("--config", metavar="F", help="config file (default: $DREAMD_CONFIG, then $XDG_CONFIG_HOME/dreamd/config.toml)")
        return sp

    for name, handler, help_ in (
        ("run", cmd_run, "foreground daemon (what the service runs)"),
        ("once", cmd_once, "drain the spool, reconcile, run due dreams, exit"),
    ):
        sp = add(name, handler, help_, config=True)
        sp.add_argument("--log-format", choices=("auto", "json", "console"), default=None)

    sp = add("status", cmd_status, "records, generation, gates, lease, spool depth, failures", config=True)
    sp.add_argument("--json", action="store_true")
    sp.add_argument("dirs", nargs="*", metavar="DIR")

    sp = add("init", cmd_init, "create an empty managed memory directory (inside [daemon] roots)", config=True)
    sp.add_argument("dir", metavar="DIR")
    sp.add_argument("--add-root", action="store_true", help="DIR is outside [daemon] roots: add it to the config file first")
    sp = add("adopt", cmd_adopt, "take an existing directory (e.g. Claude Code's) under management")
    sp.add_argument("dir", metavar="DIR")

    sp = add("submit", cmd_submit, "enqueue a transcript, print the job id", config=True)
    sp.add_argument("file", metavar="FILE|-")
    sp.add_argument("--memory-dir", required=True, metavar="DIR")
    sp.add_argument("--session", metavar="ID")
    sp.add_argument("--format", default="auto", choices=("auto", "claude-code", "anthropic", "openai", "text", "codex", "gemini", "copilot"))

    sp = add("explain", cmd_explain, "what the offline extractor keeps from a transcript, and which rule decided, turn by turn")
    sp.add_argument("file", metavar="FILE|-")
    sp.add_argument("--format", default="auto", choices=("auto", "claude-code", "anthropic", "openai", "text", "codex", "gemini", "copilot"))
    sp.add_argument("--json", action="store_true")

    add("hook", cmd_hook, "Claude Code hooks: enqueue the session, answer SessionStart/UserPromptSubmit with memory")

    sp = add("remember", cmd_remember, "add or update one record", config=True)
    sp.add_argument("dir", metavar="DIR", nargs="?", help=DIR_HELP)
    sp.add_argument("--name", required=True)
    sp.add_argument("--type", required=True, choices=("user", "feedback", "project", "reference"))
    sp.add_argument("--description", required=True)
    body = sp.add_mutually_exclusive_group(required=True)
    body.add_argument("--body")
    body.add_argument("--body-file", metavar="F")
    sp.add_argument("--importance", type=float, default=None, metavar="0..1",
                    help="raises the record in recall ties; 0.8 or more protects it from expiry")
    sp.add_argument("--expires", default=None, metavar="YYYY-MM-DD",
                    help="a dream may drop the record after this day")

    sp = add("forget", cmd_forget, "remove records (kept in .history/)", config=True)
    sp.add_argument("names", nargs="+", metavar="NAME",
                    help="records to remove; a first word that is a directory (or holds a /) is the memory directory, "
                         "else the one a session started here uses")
    sp.set_defaults(dir=None)

    sp = add("recall", cmd_recall, "the records relevant to a query", config=True)
    sp.add_argument("dir", metavar="DIR", nargs="?", help=DIR_HELP)
    sp.add_argument("query", metavar="QUERY")
    sp.add_argument("--limit", type=int, default=None, metavar="N")
    sp.add_argument("--json", action="store_true")

    sp = add("consolidate", cmd_consolidate, "run a dream now (gates bypassed with --force; the lease never)", config=True)
    sp.add_argument("dir", metavar="DIR", nargs="?", help=DIR_HELP)
    sp.add_argument("--force", action="store_true")
    sp.add_argument("--dry-run", action="store_true")

    sp = add("log", cmd_log, "generations that changed the set: what was added, merged, removed, by which session or dream", config=True)
    sp.add_argument("dir", metavar="DIR", nargs="?", help=DIR_HELP)
    sp.add_argument("--json", action="store_true")
    sp.add_argument("--limit", type=int, default=None, metavar="N")
    sp.add_argument("--all", action="store_true", help="also generations that changed no record (stores written before 0.x)")

    sp = add("rollback", cmd_rollback, "commit a new generation equal to an old one", config=True)
    sp.add_argument("dir", metavar="DIR", nargs="?", help=DIR_HELP)
    sp.add_argument("--to", type=int, required=True, metavar="GEN")

    sp = add("retry", cmd_retry, "failed/ -> new/", config=True)
    sp.add_argument("jobs", nargs="*", metavar="JOB")

    sp = add("pause", cmd_pause, "close the enabled gate (kept in the directory)", config=True)
    sp.add_argument("dir", metavar="DIR", nargs="?", help=DIR_HELP)
    sp.add_argument("--reason", default=None)
    sp = add("resume", cmd_resume, "reopen the enabled gate", config=True)
    sp.add_argument("dir", metavar="DIR", nargs="?", help=DIR_HELP)

    sp = add("setup", cmd_setup, "make a working installation: Claude Code hooks (absolute path), the MCP server, the config's roots, the service; --undo puts it all back", config=True)
    sp.add_argument("--root", action="append", default=[], metavar="DIR", help="a code root: DIR/*/.memory joins [daemon] roots (repeatable)")
    sp.add_argument("--plugin", action="store_true", help="the Claude Code plugin brings the hooks and the MCP server: record this dreamd for its launcher instead")
    sp.add_argument("--dry-run", action="store_true", help="print every change as a diff and the commands it would run; touch nothing")
    sp.add_argument("--undo", action="store_true", help="restore what setup changed (recorded in $XDG_STATE_HOME/dreamd/setup.json)")

    sp = add("demo", cmd_demo, "the newcomer's tour: sample transcript -> memories -> dream, offline")
    sp.add_argument("--dir", metavar="D")
    sp = add("sync", cmd_sync, "attach to / clone from a git remote, then fetch, merge (three-way manifest merge) and push")
    sp.add_argument("dir", metavar="DIR")
    sp.add_argument("--remote", metavar="URL", help="attach DIR to this git remote (first call)")
    sp.add_argument("--allow-rewrite", action="store_true", help="take in a remote whose history was rewritten")
    sp.add_argument("--squash-unpushed", action="store_true",
                    help="after a push refused for a secret (forgotten or redacted since): publish the current set "
                         "as one commit, leaving out the unpushed generations that held it")
    sp.add_argument("--install-merge-driver", action="store_true", help="DIR is tracked in a project repository: configure the three-way manifest merge driver there")
    sp = add("merge-driver", cmd_merge_driver, "git merge driver for manifest.json (%%O %%A %%B)")
    sp.add_argument("base", metavar="BASE")
    sp.add_argument("ours", metavar="OURS")
    sp.add_argument("theirs", metavar="THEIRS")
    add("doctor", cmd_doctor, "config, permissions, inotify limits, model reachability, Claude Code hooks run as Claude Code runs them, MCP server, service", config=True)
    sp = add("mcp", cmd_mcp, "MCP server over stdio (recall, list_memories, get_memory, remember, forget, memory_log)", config=True)
    sp.add_argument("--memory-dir", metavar="DIR", help="memory directory to serve (default: the hook's project rules)")
    sp = add("ui", cmd_ui, "local web console: see, search, compare and undo memory in a browser", config=True)
    sp.add_argument("dirs", nargs="*", metavar="DIR", help="directories to show (default: every managed directory under the roots)")
    sp.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    sp.add_argument("--port", type=int, default=0, help="port (default: a free one)")
    sp.add_argument("--allow-remote", action="store_true", help="allow binding an address other machines reach (prints a warning)")
    if only is not None and not built:
        return build_parser()
    return p


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["hook"]:
        # Fast path: the hook runs at every session end and must never disturb the agent.
        from dreamd.hook.main import main as hook_main

        return int(hook_main())
    only = argv[0] if argv and not argv[0].startswith("-") else None
    args = build_parser(only).parse_args(argv)
    from memory.errors import DreamdError, UsageError

    try:
        if args.command in PLACED_COMMANDS:
            _place(args)
        code: int = args.handler(args)
        return code
    except DreamdError as exc:
        print(f"dreamd: {exc}", file=sys.stderr)
        return EXIT_USAGE if isinstance(exc, UsageError) else EXIT_FAILURE
    except BrokenPipeError:
        # `dreamd status --json | head`: the reader left; that is not our failure.
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    except FileNotFoundError as exc:
        print(f"dreamd: {exc.filename}: no such file or directory", file=sys.stderr)
        return EXIT_FAILURE
    except PermissionError as exc:
        print(f"dreamd: {exc.filename}: permission denied", file=sys.stderr)
        return EXIT_FAILURE
    except OSError as exc:
        print(f"dreamd: {exc.filename or ''}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_FAILURE
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
