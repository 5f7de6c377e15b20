"""What the console (``dreamd ui``) costs: page and search times on large directories, and what
it does when nobody looks.

Sets of N records (``benchmarks.bench_store.make``: four types, distinct descriptions) are
served by a real console (uvicorn in a thread of this process, as the daemon runs it) and asked
over HTTP on 127.0.0.1 with keep-alive, so each figure is the server's time plus one loopback
round trip. Measured against, in the same run:

- **read**: ``MemoryStore(d).read()`` of a fresh store (parsing the manifest): the floor of any
  page that shows the whole set;
- **static**: ``GET /static/console.css``: the HTTP floor.

Rows: the directory page (first page and a page deep in the set), a plain-text search (the
first one reads every body into the console's text cache; later ones answer from it), a recall
search ("what would recall pick"), a record page, the timeline and the overview. Targets: a
directory of 10,000 records opens in <= 300 ms and a search answers in <= 50 ms (warm p50).

Idle: a ``dreamd ui`` process serving the largest set, its CPU time (utime + stime from
/proc) over ``--idle`` seconds with no client, and then with one page open (its live-update
stream polls one ``stat`` per directory every 0.5 s). Target: no CPU at all when no page is open.

Usage: ``python benchmarks/bench_console.py [--quick] [--sizes 1000,10000] [--iterations N]
[--idle S] [--out PATH]``. Prints a table; writes JSON (default benchmarks/results/console.json).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import platform
import re
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from benchmarks.bench_store import build  # noqa: E402
from benchmarks.stats import pct  # noqa: E402
from dreamd.config import load_config  # noqa: E402
from dreamd.console.serve import ConsoleServer  # noqa: E402
from dreamd.console.views import dir_id  # noqa: E402
from memory.store.transaction import MemoryStore  # noqa: E402

PAGE_TARGET_MS = 300.0
SEARCH_TARGET_MS = 50.0


class Client:
    def __init__(self, port: int, token: str) -> None:
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        self.conn.connect()
        self.conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.headers = {"Cookie": f"dreamd_console={token}", "Host": f"127.0.0.1:{port}"}

    def get(self, path: str) -> float:
        start = time.perf_counter()
        self.conn.request("GET", path, headers=self.headers)
        resp = self.conn.getresponse()
        body = resp.read()
        took = (time.perf_counter() - start) * 1000
        if resp.status != 200:
            raise SystemExit(f"GET {path}: {resp.status} {body[:200]!r}")
        return took


def sample(fn: Callable[[], float], n: int) -> dict[str, float]:
    xs = [fn() for _ in range(n)]
    return {"p50_ms": round(pct(xs, 0.5), 2), "p90_ms": round(pct(xs, 0.9), 2), "min_ms": round(min(xs), 2)}


def fresh_read(path: Path) -> float:
    start = time.perf_counter()
    MemoryStore(path).read()
    return (time.perf_counter() - start) * 1000


def measure(tmp: Path, size: int, iterations: int) -> dict[str, Any]:
    root = tmp / f"set-{size}"
    d = root / "code" / "app" / ".memory"
    d.parent.mkdir(parents=True)
    build(d, size)
    cfg = root / "config.toml"
    cfg.write_text(f'[daemon]\nspool = "{root / "spool"}"\nroots = ["{root / "code"}/*/.memory"]\n')
    config = load_config(cfg)
    server = ConsoleServer(config)
    server.start()
    try:
        c = Client(server.port, server.state.token)
        ident = dir_id(d)
        last_page = -(-size // 100)
        rows: dict[str, Any] = {"records": size}
        rows["read"] = sample(lambda: fresh_read(d), iterations)
        rows["static"] = sample(lambda: c.get("/static/console.css"), iterations)
        rows["directory"] = sample(lambda: c.get(f"/d/{ident}"), iterations)
        rows["directory_deep"] = sample(lambda: c.get(f"/d/{ident}?page={last_page // 2}"), iterations)
        rows["text_search_first_ms"] = round(c.get(f"/d/{ident}?q=module+17"), 2)
        rows["text_search"] = sample(lambda: c.get(f"/d/{ident}?q=option+3+when+working+on+module+17"), iterations)
        rows["recall_search"] = sample(lambda: c.get(f"/d/{ident}?recall=which+option+for+module+12"), iterations)
        rows["record"] = sample(lambda: c.get(f"/d/{ident}/r/r-{size // 2:06d}"), iterations)
        rows["timeline"] = sample(lambda: c.get(f"/d/{ident}/timeline"), iterations)
        rows["overview"] = sample(lambda: c.get("/"), max(3, iterations // 4))
    finally:
        server.stop()
    return rows


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def idle(tmp: Path, size: int, seconds: float) -> dict[str, Any]:
    root = tmp / f"set-{size}"
    env = {**os.environ, "DREAMD_CONFIG": str(root / "config.toml"), "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen([sys.executable, "-m", "dreamd", "ui"], cwd=REPO, env=env, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        m = re.search(r"http://127\.0\.0\.1:(\d+)/\?token=(\S+)", line)
        if m is None:
            raise SystemExit(f"dreamd ui printed {line!r}")
        time.sleep(1.0)
        start = cpu_seconds(proc.pid)
        time.sleep(seconds)
        nobody = cpu_seconds(proc.pid) - start
        conn = http.client.HTTPConnection("127.0.0.1", int(m.group(1)), timeout=seconds + 30)
        conn.request("GET", "/events?dir=all", headers={"Cookie": f"dreamd_console={m.group(2)}", "Host": f"127.0.0.1:{m.group(1)}"})
        resp = conn.getresponse()
        resp.read1(64)
        start = cpu_seconds(proc.pid)
        time.sleep(seconds)
        watching = cpu_seconds(proc.pid) - start
        conn.close()
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    return {"records": size, "seconds": seconds, "cpu_s_nobody": round(nobody, 3), "cpu_s_one_page_open": round(watching, 3)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer iterations (5 instead of 20), 3 s idle")
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--iterations", type=int, default=0)
    parser.add_argument("--idle", type=float, default=0.0, help="seconds of idle measurement (default 10, quick 3)")
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "console.json")
    args = parser.parse_args(argv)
    iterations = args.iterations or (5 if args.quick else 20)
    idle_s = args.idle or (3.0 if args.quick else 10.0)
    sizes = [int(s) for s in args.sizes.split(",")]
    with tempfile.TemporaryDirectory(prefix="dreamd-bench-console-") as tmp:
        rows = [measure(Path(tmp), size, iterations) for size in sizes]
        quiet = idle(Path(tmp), sizes[-1], idle_s)
    keys = ("read", "static", "directory", "directory_deep", "text_search", "recall_search", "record", "timeline", "overview")
    print(f"{'records':>8} " + " ".join(f"{k:>15}" for k in keys) + f" {'1st search':>11}")
    for r in rows:
        print(f"{r['records']:>8} " + " ".join(f"{r[k]['p50_ms']:>13.1f}ms" for k in keys) + f" {r['text_search_first_ms']:>9.1f}ms")
    print(f"idle {quiet['seconds']:g} s at {quiet['records']} records: CPU {quiet['cpu_s_nobody']:.3f} s with no page open, "
          f"{quiet['cpu_s_one_page_open']:.3f} s with one page open")  # fmt: skip
    big = rows[-1]
    met = {
        "directory_page": big["directory"]["p50_ms"] <= PAGE_TARGET_MS,
        "search": max(big["text_search"]["p50_ms"], big["recall_search"]["p50_ms"]) <= SEARCH_TARGET_MS,
        "idle": quiet["cpu_s_nobody"] <= 0.02,
    }
    print(f"targets at {big['records']} records: directory p50 <= {PAGE_TARGET_MS:g} ms: {'met' if met['directory_page'] else 'MISSED'}; "
          f"search p50 <= {SEARCH_TARGET_MS:g} ms: {'met' if met['search'] else 'MISSED'}; "
          f"no CPU when idle: {'met' if met['idle'] else 'MISSED'}")  # fmt: skip
    result = {
        "benchmark": "console", "quick": args.quick, "python": platform.python_version(), "platform": platform.platform(),
        "cpus": os.cpu_count(), "load_average": os.getloadavg(), "targets_met": met, "rows": rows, "idle": quiet,
    }  # fmt: skip
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
