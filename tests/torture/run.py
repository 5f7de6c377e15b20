"""The torture harness: a real ``dreamd run`` under load, faults and hostile input (issue 6).

::

    python -m tests.torture.run --duration 120 --backend offline|anthropic --workdir DIR --json OUT

Phases:

1. **Set up** ``DIR``: a spool, managed memory directories under ``DIR/mem/`` (the last one a
   small tmpfs so the disk can really fill; when mounting is impossible the disk fault is
   skipped and the summary says so), an unmanaged directory, a directory outside the roots, a
   symlink out of the roots, and ``config.toml`` with low gates (``threshold = 3``,
   ``min_interval = "5s"``, ``scan_throttle = "1s"``, ``tick = "1s"``) so dreams run often.
2. **Load and chaos** for ``--duration`` seconds: 8 client processes
   (:mod:`tests.torture.clients`) submit extraction, remember, forget and consolidation jobs;
   the chaos loop SIGKILLs and restarts the daemon, SIGKILLs and restarts clients, edits,
   creates and deletes memory files by hand, drops hostile spool entries, fills and frees the
   disk, forces dreams and fast-forwards backoff (``deferred/`` mtimes are due times).
3. **Drain**: clients finish, the disk is freed, the daemon gets SIGTERM (it must exit 0), then
   ``dreamd once`` runs until ``new/``, ``cur/`` and ``deferred/`` are empty (deadline).
4. **Check** (:mod:`tests.torture.checker`), print the summary table, write ``--json``, exit 1 on
   any violation (2 when the harness itself could not run).

Every daemon incarnation logs to ``DIR/logs/daemon-<k>.log`` (JSON lines), every drain run to
``DIR/logs/once-<k>.log``; the ledgers are in ``DIR/ledger/``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memory.client import request_consolidation
from memory.errors import DreamdError
from memory.store.transaction import MemoryStore
from tests.torture import chaos
from tests.torture.checker import Report, World, check
from tests.torture.ledger import Ledger, LedgerWriter

REPO = Path(__file__).resolve().parents[2]
DEFAULT_DATA = Path(os.environ.get("DREAMD_SHARED_DATA", REPO.parent / "shared" / "data"))
JOB_SUBDIRS = ("new", "cur", "deferred")
DUMMY_KEY = "sk-ant-api03-torture" + "Q" * 40
"""The fake endpoint's API key; it must never show up in a log or a record (checked)."""


HAND_ACTIONS = {"hand_create": "create", "hand_malformed": "create_malformed", "hand_edit": "edit",
                "hand_delete": "delete", "edit_index": "edit_index", "hand_symlink": "symlink"}


@dataclass
class Options:
    duration: float = 120.0
    backend: str = "offline"
    workdir: Path = Path("torture-run")
    json_out: Path | None = None
    seed: str = "0"
    clients: int = 8
    dirs: int = 3
    data: Path = DEFAULT_DATA
    drain_timeout: float = 120.0
    kill_every: float = 9.0
    """Mean seconds between daemon SIGKILLs."""
    tmpfs_mb: int = 0
    """Size of the disk-full directory's tmpfs (0: 64 MiB + 0.25 MiB per second of load)."""


@dataclass
class Counters:
    jobs_accepted: int = 0
    daemon_kills: int = 0
    client_kills: int = 0
    faults: dict[str, int] = field(default_factory=dict)

    def fault(self, name: str) -> None:
        self.faults[name] = self.faults.get(name, 0) + 1


def snapshot_sources(workdir: Path) -> Path:
    """Copy the code under test into ``workdir/src`` and return it.

    Every daemon incarnation and client restart imports from this snapshot, so a run tests one
    version of the code from start to end even while the working tree is being edited (a
    restart in the middle of someone's save would otherwise import a half-written module).
    The snapshot is retried until it imports cleanly.
    """
    import shutil

    src = workdir / "src"
    probe = ("import importlib, pkgutil, memory, dreamd, tests.torture.clients\n"
             "for pkg in (memory, dreamd):\n"
             "    for m in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + '.'):\n"
             "        if not m.name.endswith('__main__'): importlib.import_module(m.name)\n")
    for attempt in range(5):
        if src.exists():
            shutil.rmtree(src)
        ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
        for pkg in ("memory", "dreamd"):
            shutil.copytree(REPO / pkg, src / pkg, ignore=ignore)
        (src / "tests").mkdir()
        shutil.copy2(REPO / "tests" / "__init__.py", src / "tests" / "__init__.py")
        shutil.copytree(REPO / "tests" / "torture", src / "tests" / "torture", ignore=ignore)
        # Compiled once here: the run's processes do not write bytecode, and without it every
        # daemon incarnation (one per SIGKILL, ~130 a 20-minute run) and every client restart
        # compiled all of dreamd again (~0.2 s of CPU each; an installed daemon has its .pyc).
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(src)], capture_output=True, timeout=300)
        proc = subprocess.run([sys.executable, "-c", probe], cwd=src, env={**os.environ, "PYTHONPATH": str(src)},
                              capture_output=True, timeout=60)
        if proc.returncode == 0:
            return src
        time.sleep(2.0 * (attempt + 1))
    raise SystemExit(f"torture: the code in {REPO} does not import: {proc.stderr.decode()[-500:]}")


def _env(opts: Options, workdir: Path, src: Path) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(src), "XDG_STATE_HOME": str(workdir / "state"),
           "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("NOTIFY_SOCKET", None)
    env.pop("WATCHDOG_USEC", None)
    if opts.backend == "anthropic":
        env["ANTHROPIC_API_KEY"] = DUMMY_KEY
    return env


class DaemonCtl:
    """The daemon under test: one ``dreamd run`` process per incarnation, each with its own log."""

    def __init__(self, workdir: Path, config: Path, env: dict[str, str]) -> None:
        self.workdir = workdir
        self.config = config
        self.env = env
        self.proc: subprocess.Popen[bytes] | None = None
        self.incarnation = -1
        self.logs: list[Path] = []

    def start(self) -> None:
        self.incarnation += 1
        log = self.workdir / "logs" / f"daemon-{self.incarnation}.log"
        err = self.workdir / "logs" / f"daemon-{self.incarnation}.err"
        with open(log, "wb") as out, open(err, "wb") as errf:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "dreamd", "run", "--config", str(self.config)],
                cwd=self.env["PYTHONPATH"], env=self.env, stdout=out, stderr=errf,
                start_new_session=True)
        self.logs.append(log)

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def kill(self) -> int:
        assert self.proc is not None
        pid = self.proc.pid
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)
        self.proc = None
        return pid

    def wait_ready(self, timeout: float = 60.0) -> bool:
        """Wait until this incarnation logged ``daemon.ready`` (its signal handlers are in place:
        a SIGTERM before that kills the interpreter with the default action, exit -15)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if b'"event": "daemon.ready"' in self.logs[-1].read_bytes():
                return True
            if not self.running:
                return False
            time.sleep(0.1)
        return False

    def terminate(self, timeout: float = 15.0) -> tuple[int | None, float]:
        if self.proc is None:
            return None, 0.0
        t0 = time.monotonic()
        self.proc.send_signal(signal.SIGTERM)
        try:
            code: int | None = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            code = None
        self.proc = None
        return code, time.monotonic() - t0

    def once(self, index: int, timeout: float) -> int | None:
        """One ``dreamd once`` drain run; None when it had to be killed at ``timeout``."""
        log = self.workdir / "logs" / f"once-{index}.log"
        self.logs.append(log)
        with open(log, "wb") as out, open(log.with_suffix(".err"), "wb") as errf:
            try:
                proc = subprocess.run([sys.executable, "-m", "dreamd", "once", "--config", str(self.config)],
                                      cwd=self.env["PYTHONPATH"], env=self.env, stdout=out, stderr=errf,
                                      timeout=timeout)
            except subprocess.TimeoutExpired:
                return None
        return proc.returncode


class ClientCtl:
    """The client processes; a killed client comes back as its next incarnation."""

    def __init__(self, opts: Options, world: World, env: dict[str, str], until: float) -> None:
        self.opts = opts
        self.world = world
        self.env = env
        self.until = until
        self.procs: dict[int, subprocess.Popen[bytes]] = {}
        self.incarnations: dict[int, int] = {}

    def start(self, index: int) -> None:
        inc = self.incarnations.get(index, -1) + 1
        self.incarnations[index] = inc
        err = self.world.workdir / "logs" / f"client-{index}-{inc}.err"
        with open(err, "wb") as errf:
            self.procs[index] = subprocess.Popen(
                [sys.executable, "-m", "tests.torture.clients", "--index", str(index),
                 "--incarnation", str(inc), "--spool", str(self.world.spool),
                 "--dirs", ",".join(str(d) for d in self.world.dirs),
                 "--ledger", str(self.world.ledger_dir), "--transcripts", str(self.opts.data / "claude_code"),
                 "--seed", self.opts.seed, "--until", str(self.until)],
                cwd=self.env["PYTHONPATH"], env=self.env, stdout=subprocess.DEVNULL, stderr=errf,
                start_new_session=True)

    def kill(self, index: int) -> int | None:
        proc = self.procs.get(index)
        if proc is None or proc.poll() is not None:
            return None
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        return proc.pid

    def kill_mid_submit(self, tmp_dir: Path, within: float = 1.0) -> tuple[int, int] | None:
        """SIGKILL a client that has a file in ``spool/tmp/`` open (i.e. is inside ``submit``).

        Polls ``/proc/<pid>/fd`` for up to ``within`` seconds; returns (index, pid) or None.
        """
        prefix = str(tmp_dir) + "/"
        deadline = time.monotonic() + within
        while time.monotonic() < deadline:
            for index, proc in list(self.procs.items()):
                if proc.poll() is not None:
                    continue
                fd_dir = f"/proc/{proc.pid}/fd"
                with contextlib.suppress(OSError):
                    for fd in os.listdir(fd_dir):
                        with contextlib.suppress(OSError):
                            if os.readlink(f"{fd_dir}/{fd}").startswith(prefix):
                                proc.send_signal(signal.SIGKILL)
                                proc.wait(timeout=30)
                                return index, proc.pid
            time.sleep(0.002)
        return None

    def wait_all(self, timeout: float) -> list[tuple[int, int | None]]:
        """Wait for every client to reach its deadline; returns (index, exit code) pairs."""
        deadline = time.monotonic() + timeout
        codes = []
        for index, proc in sorted(self.procs.items()):
            try:
                code: int | None = proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
                code = None
            codes.append((index, code))
        return codes


# ---------------------------------------------------------------------------- set-up


def write_config(world: World, opts: Options, base_url: str | None, max_job_bytes: int) -> Path:
    model = '[model]\nbackend = "offline"\n'
    if opts.backend == "anthropic":
        model = (f'[model]\nbackend = "anthropic"\nmodel = "claude-torture"\nbase_url = "{base_url}"\n'
                 'timeout = "2s"\nmax_retries = 1\n')
    text = (
        "[daemon]\n"
        f'spool = "{world.spool}"\n'
        f"roots = {json.dumps([str(world.mem_root / '*')])}\n"
        'tick = "1s"\nworkers = 2\nlog_format = "json"\n'
        "[gates]\nthreshold = 3\nmin_interval = \"5s\"\nscan_throttle = \"1s\"\n"
        f"{model}"
        "[retention]\nhistory_generations = 1000000\n"
        f"max_job_bytes = {max_job_bytes}\nmax_attempts = 5\n"
    )
    path = world.workdir / "config.toml"
    path.write_text(text, encoding="utf-8")
    return path


def set_up(opts: Options) -> tuple[World, bool]:
    """Create the directories of a run; returns the world and whether the tmpfs was mounted."""
    workdir = opts.workdir.resolve()
    if workdir.exists() and any(workdir.iterdir()):
        raise SystemExit(f"torture: workdir {workdir} is not empty")
    mem = workdir / "mem"
    for sub in ("logs", "ledger", "state", "mem"):
        (workdir / sub).mkdir(parents=True, exist_ok=True)
    dirs = [mem / f"d{i}" for i in range(opts.dirs)]
    full = mem / "full"
    mounted = chaos.try_mount_tmpfs(full, f"{opts.tmpfs_mb or 64 + int(opts.duration * 0.25)}m")
    if mounted:
        dirs.append(full)
    else:
        full.rmdir()
    for d in dirs:
        MemoryStore.init(d)
    outside = workdir / "outside"
    MemoryStore.init(outside)
    os.symlink(outside, dirs[0] / ".escape-link")
    unmanaged = mem / "unmanaged"
    unmanaged.mkdir()
    (unmanaged / "note.md").write_text("---\nname: note\ndescription: unmanaged\ntype: user\n---\nx\n")
    spool = workdir / "spool"
    world = World(workdir=workdir, spool=spool, mem_root=mem, dirs=dirs, outside=outside,
                  ledger_dir=workdir / "ledger", logs_dir=workdir / "logs",
                  full_dir=full if mounted else None)
    return world, mounted


# ---------------------------------------------------------------------------- the run


def _jobs_left(spool: Path) -> int:
    n = 0
    for sub in JOB_SUBDIRS:
        with contextlib.suppress(FileNotFoundError):
            n += sum(1 for name in os.listdir(spool / sub) if not name.startswith("."))
    return n


def fast_forward(spool: Path) -> int:
    """Make every deferred job due now (a job's mtime is its due time): backoff, sped up."""
    now = time.time()
    n = 0
    with contextlib.suppress(FileNotFoundError):
        for name in os.listdir(spool / "deferred"):
            if name.endswith(".json") and not name.startswith("."):
                with contextlib.suppress(FileNotFoundError):
                    os.utime(spool / "deferred" / name, (now, now))
                    n += 1
    return n


def _leases_of(world: World, pid: int) -> list[str]:
    held = []
    for d in world.dirs:
        with contextlib.suppress(OSError, ValueError):
            info = json.loads((d / ".dream.lock").read_bytes())
            if int(info.get("pid", -1)) == pid:
                held.append(str(d))
    return held


def run(opts: Options) -> tuple[Report, dict[str, Any]]:
    rng = random.Random(f"chaos-{opts.seed}")
    world, mounted = set_up(opts)
    ledger = LedgerWriter(world.ledger_dir / "chaos.jsonl", "chaos")
    counters = Counters()
    server = None
    max_job_bytes = 6 << 20
    if opts.backend == "anthropic":
        from tests.torture.fake_model import ScriptedAnthropic

        server = ScriptedAnthropic(f"model-{opts.seed}", hang_seconds=2.5)
    config = write_config(world, opts, server.url if server else None, max_job_bytes)
    src = snapshot_sources(world.workdir)
    env = _env(opts, world.workdir, src)
    daemon = DaemonCtl(world.workdir, config, env)
    started = time.time()
    until = started + opts.duration
    clients = ClientCtl(opts, world, env, until)
    editor = chaos.HandEditor(ledger, rng)
    filler = chaos.DiskFiller(world.full_dir, ledger) if world.full_dir else None
    hostile_queue: list[chaos.Hostile] = []
    notes: list[str] = []
    exits: list[str] = []
    if not mounted:
        notes.append("disk-full fault skipped: could not mount a tmpfs (needs root)")
    try:
        daemon.start()
        for i in range(opts.clients):
            clients.start(i)
        next_kill = time.time() + rng.expovariate(1 / opts.kill_every)
        full_since: float | None = None
        down_until: float | None = None
        while time.time() < until:
            time.sleep(rng.uniform(0.3, 1.0))
            now = time.time()
            if down_until is not None and now >= down_until:
                daemon.start()
                down_until = None
            if daemon.proc is not None and daemon.proc.poll() is not None:
                exits.append(f"daemon incarnation {daemon.incarnation} exited by itself "
                             f"(code {daemon.proc.returncode}); see logs/daemon-{daemon.incarnation}.*")
                counters.fault("daemon-exited-by-itself")
                daemon.proc = None
                daemon.start()
            if now >= next_kill and daemon.running:
                inc = daemon.incarnation
                pid = daemon.kill()
                cur = sum(1 for n in os.listdir(world.spool / "cur") if not n.startswith("."))
                ledger.write("kill_daemon", incarnation=inc, pid=pid, cur=cur, leases=_leases_of(world, pid))
                counters.daemon_kills += 1
                down_until = time.time() + rng.uniform(0.0, 2.0)
                next_kill = down_until + rng.expovariate(1 / opts.kill_every)
                continue
            if filler is not None and filler.full and full_since is not None and now - full_since > 8:
                filler.free()
                full_since = None
            action = rng.choices(
                ("kill_client", "hand_create", "hand_malformed", "hand_edit", "hand_delete",
                 "edit_index", "hand_symlink", "hostile", "disk", "force_dream", "fast_forward"),
                weights=(1.0, 1.0, 0.5, 1.0, 0.7, 0.3, 0.2, 2.0, 0.4, 1.0, 0.4))[0]
            target = rng.choice(world.dirs)
            if action == "kill_client":
                mid = rng.random() < 0.5
                hit = clients.kill_mid_submit(world.spool / "tmp") if mid else None
                index = hit[0] if hit else rng.randrange(opts.clients)
                killed = hit[1] if hit else clients.kill(index)
                if killed is not None:
                    ledger.write("kill_client", client=index, pid=killed, mid_submit=hit is not None)
                    if hit is not None:
                        counters.fault("client-killed-mid-submit")
                    counters.client_kills += 1
                    if time.time() < until - 1:
                        clients.start(index)
            elif action in HAND_ACTIONS:
                try:
                    what = getattr(editor, HAND_ACTIONS[action])(target)
                except OSError as exc:  # a person's editor fails on a full disk too
                    what = f"failed-{exc.errno}"
                if what:
                    counters.fault(f"hand-{what}")
            elif action == "hostile":
                if not hostile_queue:
                    hostile_queue = chaos.hostile_cases(rng, mem_root=world.mem_root,
                                                        managed=world.dirs[: opts.dirs],
                                                        outside=world.outside,
                                                        max_job_bytes=max_job_bytes)
                    rng.shuffle(hostile_queue)
                for h in hostile_queue[-2:]:
                    ledger.write("hostile", case=h.case, job_id=h.job_id, file=h.file, expect=h.expect,
                                 kind=h.kind, memory_dir=h.memory_dir, name=h.name, description=h.description,
                                 secrets=list(h.secrets))
                    chaos.drop(world.spool / "new", world.spool / "tmp", h)
                    counters.fault("hostile-" + h.case)
                del hostile_queue[-2:]
            elif (action == "disk" and filler is not None) or (
                    filler is not None and "disk-full" not in counters.faults and now > started + 0.4 * opts.duration):
                assert filler is not None
                if filler.full:
                    filler.free()
                    full_since = None
                else:
                    filler.fill()
                    full_since = time.time()
                    counters.fault("disk-full")
            elif action == "force_dream":
                with contextlib.suppress(DreamdError):
                    job_id = request_consolidation(target, force=True, spool=world.spool)
                    ledger.write("accepted", kind="consolidate", job_id=job_id, memory_dir=str(target),
                                 force=True)
                    counters.fault("forced-dream")
            elif action == "fast_forward" and fast_forward(world.spool):
                counters.fault("backoff-fast-forward")
        # ---- drain
        codes = clients.wait_all(timeout=30)
        crashed = [(i, c) for i, c in codes if c not in (0, -signal.SIGKILL)]
        if crashed:
            notes.append(f"clients that did not exit 0: {crashed}")
        if filler is not None:
            filler.free()
        if server is not None:
            server.mode = "valid"
        if down_until is not None:
            daemon.start()
        if daemon.running and not daemon.wait_ready():
            notes.append(f"daemon incarnation {daemon.incarnation} never logged daemon.ready")
        term_code, term_took = daemon.terminate()
        drain_runs = 0
        drain_deadline = time.monotonic() + opts.drain_timeout
        while True:
            fast_forward(world.spool)
            grown = chaos.make_room(filler.directory, 128 << 20) if filler is not None else None
            if grown:  # the backlog of a long-full directory needs room to land
                notes.append(f"{world.full_dir} grown so 128 MiB are free before drain run {drain_runs} "
                             f"(its .history/ grows with every commit): {grown}")
            left = drain_deadline - time.monotonic()
            if daemon.once(drain_runs, timeout=max(30.0, left)) is None:
                notes.append(f"drain run {drain_runs} was killed at the drain deadline "
                             f"({_jobs_left(world.spool)} jobs still queued): the daemon fell behind")
                drain_runs += 1
                break
            drain_runs += 1
            if _jobs_left(world.spool) == 0 or time.monotonic() > drain_deadline:
                break
        finished = time.time()
        loaded = Ledger.load(world.ledger_dir)
        secrets = {DUMMY_KEY} if opts.backend == "anthropic" else set()
        report = check(world, loaded, daemon_logs=daemon.logs, extra_secrets=secrets,
                       final_term=(term_code, term_took))
        report.notes.extend(notes)
        report.checks["daemon-alive"] += daemon.incarnation + 1
        for exit_note in exits:  # nothing but our SIGKILLs and the final SIGTERM may end a daemon
            report.violations.append(f"[daemon-alive] {exit_note}")
        counters.jobs_accepted = len(loaded.accepted())
        summary: dict[str, Any] = {
            "backend": opts.backend,
            "seed": opts.seed,
            "duration_s": round(finished - started, 1),
            "load_s": opts.duration,
            "clients": opts.clients,
            "memory_dirs": [str(d) for d in world.dirs],
            "jobs_accepted": counters.jobs_accepted,
            "daemon_kills": counters.daemon_kills,
            "client_kills": counters.client_kills,
            "daemon_incarnations": daemon.incarnation + 1,
            "drain_runs": drain_runs,
            "final_sigterm": {"exit_code": term_code, "seconds": round(term_took, 2)},
            "faults": dict(sorted(counters.faults.items())),
            "faults_injected": sum(counters.faults.values()) + counters.daemon_kills + counters.client_kills,
            "model_answers": dict(sorted(server.answered.items())) if server else None,
            **report.to_json(),
        }
        return report, summary
    finally:
        if daemon.running:
            with contextlib.suppress(Exception):
                daemon.kill()
        for index in list(clients.procs):
            with contextlib.suppress(Exception):
                clients.kill(index)
        if server is not None:
            server.close()
        if filler is not None:
            filler.free()
        ledger.close()


def render_table(summary: dict[str, Any]) -> str:
    rows = [
        ("backend", summary["backend"]),
        ("wall time (s)", summary["duration_s"]),
        ("jobs accepted by clients", summary["jobs_accepted"]),
        ("  applied / done / failed", f"{summary['jobs']['applied']} / {summary['jobs']['done']} / "
                                      f"{summary['jobs']['failed']}"),
        ("daemon SIGKILLs (incarnations)", f"{summary['daemon_kills']} ({summary['daemon_incarnations']})"),
        ("client SIGKILLs", summary["client_kills"]),
        ("other faults injected", sum(summary["faults"].values())),
        ("invariants checked", summary["checks_total"]),
        ("violations", len(summary["violations"])),
    ]
    width = max(len(k) for k, _ in rows)
    lines = ["torture summary", "-" * (width + 20)]
    lines += [f"{k:<{width}}  {v}" for k, v in rows]
    lines.append("-" * (width + 20))
    for name, count in summary["faults"].items():
        lines.append(f"  fault {name}: {count}")
    for name, count in summary["checks"].items():
        lines.append(f"  check {name}: {count}")
    by_check: dict[str, int] = {}
    for v in summary["violations"]:
        tag = v.split("]")[0].lstrip("[")
        by_check[tag] = by_check.get(tag, 0) + 1
    for tag, count in sorted(by_check.items()):  # the list below stops at 50
        lines.append(f"  violations {tag}: {count}")
    for v in summary["violations"][:50]:
        lines.append(f"VIOLATION {v}")
    for n in summary["notes"]:
        lines.append(f"note: {n}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.torture.run", description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=120.0, help="seconds of load and chaos")
    parser.add_argument("--backend", choices=("offline", "anthropic"), default="offline")
    parser.add_argument("--workdir", type=Path, required=True, help="an empty (or new) directory")
    parser.add_argument("--json", type=Path, dest="json_out", help="write the summary here")
    parser.add_argument("--seed", default="0")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--kill-every", type=float, default=9.0, help="mean seconds between daemon kills")
    parser.add_argument("--drain-timeout", type=float, default=120.0)
    parser.add_argument("--tmpfs-mb", type=int, default=0, help="size of the disk-full tmpfs")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the shared real-data corpus")
    args = parser.parse_args(argv)
    opts = Options(duration=args.duration, backend=args.backend, workdir=args.workdir,
                   json_out=args.json_out, seed=args.seed, clients=args.clients,
                   kill_every=args.kill_every, drain_timeout=args.drain_timeout, data=args.data,
                   tmpfs_mb=args.tmpfs_mb)
    if not (opts.data / "claude_code").is_dir():
        print(f"torture: no transcripts in {opts.data / 'claude_code'}", file=sys.stderr)
        return 2
    try:
        report, summary = run(opts)
    except SystemExit:
        raise
    except Exception:  # the harness itself broke: say so, distinct from a violation
        import traceback

        traceback.print_exc()
        print("torture: the harness failed before the checks could run", file=sys.stderr)
        return 2
    finally:
        full = opts.workdir.resolve() / "mem" / "full"
        if os.path.ismount(full):  # keep what it held for a post-mortem, then let it go
            subprocess.run(["cp", "-a", str(full), str(opts.workdir.resolve() / "full-copy")],
                           capture_output=True, timeout=300)
            chaos.umount(full)
    print(render_table(summary))
    if opts.json_out is not None:
        opts.json_out.write_text(json.dumps(summary, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return 1 if report.violations else 0


if __name__ == "__main__":
    raise SystemExit(main())
