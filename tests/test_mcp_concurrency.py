"""Two ``dreamd mcp`` servers and the running daemon write one memory directory at once: every
record each of them committed is in the final set, and no two commits share a generation."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from memory.client import remember
from memory.store.history import log_entries
from memory.store.transaction import MemoryStore

REPO = Path(__file__).resolve().parents[1]
PER_WRITER = 12


def _wait(pred: Any, timeout: float, why: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout}s: {why}")


def _jobs(spool: Path, sub: str) -> list[str]:
    d = spool / sub
    return [n for n in os.listdir(d) if n.endswith(".json") and not n.endswith(".error.json")] if d.is_dir() else []


def test_two_mcp_servers_and_the_daemon_writing_one_directory_lose_nothing(tmp_path: Path) -> None:
    import anyio
    from mcp import ClientSession, StdioServerParameters, stdio_client

    memory_dir = tmp_path / "roots" / "app" / ".memory"
    MemoryStore.init(memory_dir)
    spool = tmp_path / "spool"
    config = tmp_path / "config.toml"
    config.write_text(
        f'[daemon]\nroots = ["{tmp_path}/roots/*/.memory"]\nspool = "{spool}"\ntick = "0.5s"\n'
        'log_format = "json"\nworkers = 2\n',
        encoding="utf-8",
    )
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path / "home"),
        "XDG_CONFIG_HOME": str(tmp_path / "xdg"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "DREAMD_CONFIG": str(config),
        "PYTHONPATH": str(REPO),
    }
    log = tmp_path / "daemon.log"
    with open(log, "wb") as out:
        daemon = subprocess.Popen(
            [sys.executable, "-m", "dreamd", "run", "--config", str(config)],
            cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT,
        )
    try:
        _wait(lambda: b'"daemon.ready"' in log.read_bytes(), 30, "daemon never became ready")

        async def mcp_writer(prefix: str, generations: list[int]) -> None:
            params = StdioServerParameters(
                command=sys.executable,
                args=["-m", "dreamd", "mcp", "--memory-dir", str(memory_dir)],
                env=env,
                cwd=str(tmp_path),
            )
            with open(tmp_path / f"{prefix}.stderr", "w", encoding="utf-8") as errlog:
                async with stdio_client(params, errlog=errlog) as (r, w), ClientSession(r, w) as s:
                    await s.initialize()
                    for i in range(PER_WRITER):
                        if i == PER_WRITER // 2:  # interleave for sure: let the daemon commit too
                            with anyio.fail_after(60):
                                while not _jobs(spool, "done"):
                                    await anyio.sleep(0.02)
                        result = await s.call_tool(
                            "remember",
                            {
                                "name": f"{prefix}-{i:02d}",
                                "type": "project",
                                "description": f"Fact {i} from writer {prefix}",
                                "body": f"Writer {prefix} wrote fact number {i}.",
                            },
                        )
                        assert not result.is_error, result.content[0].text
                        generations.append(result.structured_content["generation"])

        async def spool_writer() -> None:
            while len(generations) < 2:  # start once both servers are writing
                await anyio.sleep(0.005)
            for i in range(PER_WRITER):
                remember(
                    memory_dir,
                    name=f"daemon-{i:02d}",
                    type="reference",
                    description=f"Fact {i} through the spool",
                    body=f"The daemon committed fact number {i}.",
                    spool=spool,
                )
                await anyio.sleep(0.01)

        generations: list[int] = []

        async def main() -> None:
            async with anyio.create_task_group() as tg:
                tg.start_soon(mcp_writer, "alpha", generations)
                tg.start_soon(mcp_writer, "beta", generations)
                tg.start_soon(spool_writer)

        anyio.run(main)
        _wait(
            lambda: len(_jobs(spool, "done")) == PER_WRITER and not _jobs(spool, "new") and not _jobs(spool, "cur"),
            60,
            f"spool not drained: done={len(_jobs(spool, 'done'))} failed={_jobs(spool, 'failed')}",
        )
    finally:
        daemon.send_signal(signal.SIGTERM)
        code = daemon.wait(timeout=30)
    assert code == 0, log.read_text()[-3000:]

    expected = {f"{p}-{i:02d}" for p in ("alpha", "beta", "daemon") for i in range(PER_WRITER)}
    store = MemoryStore(memory_dir)
    manifest = store.read()
    assert {e.name for e in manifest.records} == expected
    assert len(generations) == 2 * PER_WRITER
    assert len(set(generations)) == len(generations)  # every MCP write got its own generation
    for _entry, record in store.records():
        assert record.body.startswith(("Writer alpha", "Writer beta", "The daemon"))
    assert len(store.records()) == len(expected)
    assert manifest.generation >= 3 * PER_WRITER
    actors = [e.actor for e in reversed(log_entries(store))]
    first_mcp, last_mcp = actors.index("manual"), len(actors) - 1 - actors[::-1].index("manual")
    assert "job" in actors[first_mcp:last_mcp], actors  # the daemon committed while the servers did
    failed = [json.loads(line) for line in log.read_text().splitlines() if '"job.failed"' in line]
    assert failed == []
