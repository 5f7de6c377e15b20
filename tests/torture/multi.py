"""Multi-machine torture: several memory directories standing for machines, one daemon each,
one bare git remote between them (issue 12).

::

    python -m tests.torture.multi --duration 60 --machines 3 --workdir DIR --json OUT

1. **Set up** ``DIR/remote.git`` (bare) and, per machine ``DIR/m<k>/``: a spool, a config with
   low gates and fast sync (``tick = "1s"``, ``[sync] interval = "2s"``, ``debounce = "1s"``)
   and ``code/app/.memory``, attached with ``dreamd sync --remote`` (machine 0 creates the set,
   the others clone it).
2. **Load and chaos** for ``--duration`` seconds: clients enqueue ``remember`` and ``forget``
   jobs on every machine (``memory.client``, through the spool), forced dreams are requested,
   daemons are SIGKILLed and restarted. Every accepted operation goes to the ledger first.
3. **Drain**: SIGTERM every daemon (each must exit 0), ``dreamd once`` on each machine until its
   spool is empty, then ``dreamd sync`` round-robin until every machine has the same HEAD.
4. **Check** (:func:`check`): every machine has the same record set (and the same manifest
   bytes); every manifest is valid (each file present with its sha256, names unique); every
   remembered record is present unless a later forget or a logged dream or merge explains its
   absence; no git tree ever held anything but records, ``manifest.json`` and ``MEMORY.md``.

Exit 0 when every check passed, 1 on a violation, 2 when the harness itself could not run.
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

from memory.client import forget, remember, request_consolidation
from memory.store.manifest import Manifest
from memory.store.records import sha256_hex
from memory.store.transaction import MemoryStore

TOPICS = ["deploy", "tabs", "review", "oncall", "backup", "billing", "search", "cache"]
PHRASES = {
    "deploy": "Releases are cut with the release target after the staging check passes",
    "tabs": "Indentation in this repository uses tabs and never spaces",
    "review": "Every change needs one approving review before it is merged",
    "oncall": "The on-call rotation hands over every Monday morning",
    "backup": "Database snapshots are taken nightly and kept for two weeks",
    "billing": "Invoices are generated on the first working day of the month",
    "search": "The search service is rebuilt from the event log on start",
    "cache": "The edge cache is purged after every schema migration",
}


@dataclass
class Machine:
    index: int
    root: Path
    config: Path
    spool: Path
    memory: Path
    log_dir: Path
    daemon: subprocess.Popen[bytes] | None = None
    incarnation: int = 0
    kills: int = 0


@dataclass
class Result:
    ok: bool
    violations: list[str] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)


def _env(workdir: Path) -> dict[str, str]:
    home = workdir / "home"
    home.mkdir(parents=True, exist_ok=True)
    cfg = home / ".gitconfig"
    if not cfg.exists():
        cfg.write_text("[user]\n\tname = Torture\n\temail = torture@example.invalid\n")
    env = dict(os.environ)
    env.update({"HOME": str(home), "GIT_CONFIG_GLOBAL": str(cfg), "GIT_CONFIG_NOSYSTEM": "1", "DREAMD_NO_WATCH": "0"})
    return env


def _dreamd(*args: str, env: dict[str, str], timeout: float = 120.0) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "dreamd", *args], capture_output=True, text=True, env=env, timeout=timeout)


def setup(workdir: Path, machines: int, env: dict[str, str]) -> tuple[str, list[Machine]]:
    remote = workdir / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True, env=env)
    out: list[Machine] = []
    for k in range(machines):
        root = workdir / f"m{k}"
        root.mkdir(parents=True)
        m = Machine(index=k, root=root, config=root / "config.toml", spool=root / "spool",
                    memory=root / "code" / "app" / ".memory", log_dir=root / "logs")
        m.log_dir.mkdir()
        m.config.write_text(
            "[daemon]\n"
            f'spool = "{m.spool}"\nroots = ["{root}/code/*/.memory"]\ntick = "1s"\n'
            "[gates]\nthreshold = 4\nmin_interval = \"4s\"\nscan_throttle = \"1s\"\nlock_stale_after = \"30s\"\n"
            f'[sync]\ndirs = ["{root}/code/*/.memory"]\ninterval = "2s"\ndebounce = "1s"\nmax_backoff = "4s"\n'
        )
        if k == 0:
            MemoryStore.init(m.memory)
        proc = _dreamd("sync", str(m.memory), "--remote", str(remote), env=env)
        if proc.returncode != 0:
            raise RuntimeError(f"attach m{k}: {proc.stderr.strip()}")
        out.append(m)
    return str(remote), out


def start_daemon(m: Machine, env: dict[str, str]) -> None:
    m.incarnation += 1
    log = open(m.log_dir / f"daemon-{m.incarnation}.log", "wb")  # noqa: SIM115 - owned by the child
    m.daemon = subprocess.Popen(
        [sys.executable, "-m", "dreamd", "run", "--config", str(m.config), "--log-format", "json"],
        stdout=log, stderr=subprocess.STDOUT, env=env,
    )
    log.close()


class LedgerFile:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.f = open(path, "a", encoding="utf-8")  # noqa: SIM115 - closed in close()

    def write(self, **event: Any) -> None:
        self.f.write(json.dumps({"t": time.time(), **event}) + "\n")
        self.f.flush()
        os.fsync(self.f.fileno())

    def close(self) -> None:
        self.f.close()


def load(machines: list[Machine], duration: float, ledger: LedgerFile, env: dict[str, str], rng: random.Random) -> dict[str, int]:
    counts = {"remember": 0, "forget": 0, "dream": 0, "kill": 0}
    deadline = time.monotonic() + duration
    seq = 0
    while time.monotonic() < deadline:
        m = rng.choice(machines)
        roll = rng.random()
        if roll < 0.60:
            seq += 1
            topic = rng.choice(TOPICS)
            name = f"m{m.index}-{topic}-{seq}"
            desc = PHRASES[topic] if rng.random() < 0.5 else f"{PHRASES[topic]} (note {seq})"
            job = remember(m.memory, name=name, type="project", description=desc, body=f"{desc}.\nNoted on machine {m.index}.", spool=m.spool)
            ledger.write(op="remember", machine=m.index, name=name, job=job)
            counts["remember"] += 1
        elif roll < 0.80:
            try:
                names = [e.name for e in MemoryStore(m.memory).read().records]
            except Exception:
                names = []
            if names:
                name = rng.choice(names)
                ledger.write(op="forget", machine=m.index, name=name)
                forget(m.memory, [name], spool=m.spool)
                counts["forget"] += 1
        elif roll < 0.88:
            request_consolidation(m.memory, force=True, spool=m.spool)
            ledger.write(op="dream", machine=m.index)
            counts["dream"] += 1
        elif roll < 0.93 and m.daemon is not None:
            m.daemon.send_signal(signal.SIGKILL)
            m.daemon.wait()
            ledger.write(op="kill", machine=m.index)
            m.kills += 1
            counts["kill"] += 1
            time.sleep(rng.uniform(0.1, 0.5))
            start_daemon(m, env)
        time.sleep(rng.uniform(0.05, 0.25))
    return counts


def drain(machines: list[Machine], env: dict[str, str], deadline: float) -> list[str]:
    problems: list[str] = []
    for m in machines:
        if m.daemon is None:
            continue
        # A daemon restarted a moment ago may still be importing; a signal that arrives before
        # Python runs a line of dreamd meets the default action (-15), which no program can
        # prevent. The daemon catches stops from the start of `run` on; before then, wait.
        log = m.log_dir / f"daemon-{m.incarnation}.log"
        ready_by = time.monotonic() + 60
        while m.daemon.poll() is None and time.monotonic() < ready_by and b'"daemon.ready"' not in log.read_bytes():
            time.sleep(0.1)
        m.daemon.send_signal(signal.SIGTERM)
        try:
            code = m.daemon.wait(timeout=60)
        except subprocess.TimeoutExpired:
            m.daemon.kill()
            code = -9
        if code != 0:
            problems.append(f"m{m.index}: daemon exited {code} on SIGTERM")
        m.daemon = None
    for m in machines:
        for _ in range(10):
            _dreamd("once", "--config", str(m.config), env=env)
            left = [p for sub in ("new", "cur", "deferred") for p in (m.spool / sub).glob("*.json")]
            if not left or time.monotonic() > deadline:
                break
            for p in (m.spool / "deferred").glob("*.json"):
                with contextlib.suppress(OSError):
                    os.utime(p, (0, 0))  # deferred mtimes are due times: due now
        left = [p.name for sub in ("new", "cur", "deferred") for p in (m.spool / sub).glob("*.json")]
        if left:
            problems.append(f"m{m.index}: spool not drained: {left[:3]}")
    for _ in range(4):
        for m in machines:
            proc = _dreamd("sync", str(m.memory), env=env)
            if proc.returncode != 0:
                problems.append(f"m{m.index}: final sync failed: {proc.stderr.strip()}")
        heads = {subprocess.run(["git", "-C", str(m.memory), "rev-parse", "HEAD"], capture_output=True, text=True, env=env).stdout for m in machines}
        if len(heads) == 1:
            break
    return problems


def _manifests_in_history(repo: Path, env: dict[str, str]) -> list[Manifest]:
    """Every manifest any commit of ``repo`` ever held (all refs), for the ledger check."""
    commits = subprocess.run(["git", "-C", str(repo), "rev-list", "--all"], capture_output=True, text=True, env=env, check=True).stdout.split()
    specs = "".join(f"{c}:manifest.json\n" for c in commits).encode()
    raw = subprocess.run(["git", "-C", str(repo), "cat-file", "--batch"], input=specs, capture_output=True, env=env, check=True).stdout
    out: list[Manifest] = []
    pos = 0
    while pos < len(raw):
        nl = raw.index(b"\n", pos)
        header = raw[pos:nl].split()
        if len(header) != 3:
            pos = nl + 1
            continue
        size = int(header[2])
        with contextlib.suppress(Exception):
            out.append(Manifest.loads(raw[nl + 1 : nl + 1 + size], where="history"))
        pos = nl + 1 + size + 1
    return out


SYNCED_KEYS = ("format", "generation", "committed_at", "records", "index_sha256", "change")
"""The manifest keys every machine holds alike after a sync (the rest is local bookkeeping)."""


def check(remote: str, machines: list[Machine], ledger_path: Path, env: dict[str, str]) -> Result:
    violations: list[str] = []
    sets: dict[int, dict[str, str]] = {}
    manifests: dict[int, bytes] = {}
    for m in machines:
        store = MemoryStore(m.memory)
        try:
            man = store.read()
        except Exception as exc:
            violations.append(f"m{m.index}: manifest unreadable: {exc}")
            continue
        # What a sync carries must agree; the local bookkeeping may not: a commit that changed no
        # record (a no-op dream or a cursor after the final sync) rewrites this machine's
        # generation in place and is never pushed (issue 20).
        doc = json.loads((m.memory / "manifest.json").read_bytes())
        shared = {k: doc.get(k) for k in SYNCED_KEYS}
        manifests[m.index] = json.dumps(shared, sort_keys=True).encode()
        names = [e.name for e in man.records]
        if len(names) != len(set(names)):
            violations.append(f"m{m.index}: duplicate names in the manifest")
        for e in man.records:
            try:
                ok = sha256_hex((m.memory / e.file).read_bytes()) == e.sha256
            except OSError:
                ok = False
            if not ok:
                violations.append(f"m{m.index}: {e.file} ({e.name}) missing or not as committed")
        sets[m.index] = {e.name: e.sha256 for e in man.records}
    if len({json.dumps(s, sort_keys=True) for s in sets.values()}) > 1:
        violations.append("record sets differ between machines after the final sync: " + ", ".join(f"m{k}: {len(s)}" for k, s in sets.items()))
    if len(set(manifests.values())) > 1:
        violations.append("manifests differ between machines after the final sync (beyond local bookkeeping)")

    history = _manifests_in_history(Path(remote), env)
    for m in machines:
        history += _manifests_in_history(m.memory, env)
        hist = m.memory / ".history"
        for p in hist.glob("manifest-*.json") if hist.is_dir() else []:
            with contextlib.suppress(Exception):
                history.append(Manifest.loads(p.read_bytes(), where=str(p)))
    merged_away: set[str] = set()
    removed_by: dict[str, set[str]] = {}
    for man in history:
        change = man.change
        for op in change.get("merged", []) or []:
            merged_away.update(op.get("from", []) or [])
        for n in change.get("removed", []) or []:
            removed_by.setdefault(str(n), set()).add(str(change.get("actor")))

    final = next(iter(sets.values()), {})
    events = [json.loads(line) for line in ledger_path.read_text().splitlines() if line.strip()]
    forgotten = {e["name"] for e in events if e["op"] == "forget"}
    remembered = [e for e in events if e["op"] == "remember"]
    explained = {"forget": 0, "dream": 0}
    for e in remembered:
        name = e["name"]
        if name in final:
            continue
        if name in forgotten:
            explained["forget"] += 1
        elif name in merged_away:
            explained["dream"] += 1
        else:
            violations.append(f"{name} (remembered on m{e['machine']}) is gone and no forget, dream or merge explains it (removed by {sorted(removed_by.get(name, []))})")

    trees = subprocess.run(["git", "-C", remote, "log", "--all", "--name-only", "--format="], capture_output=True, text=True, env=env, check=True).stdout.split()
    bad = sorted({p for p in trees if not (p in ("manifest.json", "MEMORY.md") or (p.endswith(".md") and "/" not in p and not p.startswith(".")))})
    if bad:
        violations.append(f"the remote's history holds files that are not records: {bad[:5]}")
    stats = {
        "machines": len(machines),
        "records_final": len(final),
        "remembered": len(remembered),
        "forgets": len(forgotten),
        "absent_explained": explained,
        "remote_commits": len(subprocess.run(["git", "-C", remote, "rev-list", "--all"], capture_output=True, text=True, env=env).stdout.split()),
        "merge_generations": sum(1 for man in history if man.change.get("actor") == "merge"),
    }
    return Result(ok=not violations, violations=violations, stats=stats)


def run(workdir: Path, *, duration: float, machines: int, seed: int) -> Result:
    env = _env(workdir)
    os.environ.update({k: env[k] for k in ("HOME", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_NOSYSTEM")})
    rng = random.Random(seed)
    remote, ms = setup(workdir, machines, env)
    ledger = LedgerFile(workdir / "ledger.jsonl")
    try:
        for m in ms:
            start_daemon(m, env)
        counts = load(ms, duration, ledger, env, rng)
    finally:
        ledger.close()
        problems = drain(ms, env, time.monotonic() + 240)
    result = check(remote, ms, workdir / "ledger.jsonl", env)
    result.violations = problems + result.violations
    result.ok = not result.violations
    result.stats.update(counts)
    result.stats["kills"] = sum(m.kills for m in ms)
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--duration", type=float, default=60.0)
    ap.add_argument("--machines", type=int, default=3)
    ap.add_argument("--seed", type=int, default=12)
    ap.add_argument("--workdir", type=Path, required=True)
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)
    args.workdir.mkdir(parents=True, exist_ok=True)
    try:
        result = run(args.workdir, duration=args.duration, machines=args.machines, seed=args.seed)
    except Exception as exc:
        print(f"multi-machine torture could not run: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    for key, value in result.stats.items():
        print(f"{key:>20}: {value}")
    for v in result.violations:
        print(f"VIOLATION: {v}")
    print("OK" if result.ok else f"FAILED ({len(result.violations)} violation(s))")
    if args.json is not None:
        args.json.write_text(json.dumps({"ok": result.ok, "violations": result.violations, "stats": result.stats}, indent=2))
    return 0 if result.ok else 1


if __name__ == "__main__":
    sys.exit(main())
