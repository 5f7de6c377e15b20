"""The hook asks the daemon over its owner-only socket, and falls back to keywords in time."""

from __future__ import annotations

import json
import os
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dreamd.embeddings.client import ask_daemon, socket_path
from dreamd.embeddings.service import EmbeddingService
from memory.retrieval.embed import cached_shas
from memory.retrieval.recall import clear_cache
from memory.store.records import make_record
from memory.store.transaction import Change, MemoryStore
from tests.conftest import REPO
from tests.embed_model import MODEL, embedder

PARAPHRASE = "which web framework powers the backend"


def _memory(memdir: Path) -> MemoryStore:
    store = MemoryStore.init(memdir)
    store.commit(Change(add=[
        make_record("api-stack", "project", "The api service uses FastAPI", "Routes live in app/routes."),
        make_record("deploys", "project", "Production deploys happen on Wednesdays", "Never on Friday."),
        make_record("editor", "user", "Noor writes code in Emacs", "Org mode for notes."),
    ]))
    return store


def _env(tmp_path: Path) -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("DREAMD_", "XDG_", "CLAUDE_", "NOTIFY_", "WATCHDOG_"))}
    return {**clean, "HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "cfg"),
            "XDG_STATE_HOME": str(tmp_path / "state"), "PYTHONPATH": str(REPO)}


def _config(tmp_path: Path, memdir: Path) -> Path:
    cfg = tmp_path / "cfg" / "dreamd" / "config.toml"
    cfg.parent.mkdir(parents=True)
    cfg.write_text(
        f'[daemon]\nspool = "{tmp_path / "spool"}"\nroots = ["{memdir}"]\ntick = "0.5s"\nlog_format = "json"\n'
        f'[recall]\nembeddings = "{MODEL}"\n'
    )
    return cfg


def _prompt(tmp_path: Path, project: Path, text: str, session: str) -> str:
    payload = {"hook_event_name": "UserPromptSubmit", "session_id": session, "cwd": str(project), "prompt": text}
    proc = subprocess.run([sys.executable, "-m", "dreamd", "hook"], input=json.dumps(payload), cwd=REPO,
                          env=_env(tmp_path), capture_output=True, text=True, timeout=60)
    assert (proc.returncode, proc.stderr) == (0, "")
    return str(json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]) if proc.stdout else ""


def _wait(pred: Any, timeout: float, why: Any) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout}s: {why()}")


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    clear_cache()
    yield
    clear_cache()


def test_hook_gets_the_daemons_fused_answer_and_falls_back_when_it_is_killed(tmp_path: Path) -> None:
    embedder()  # the model is installed (or skip / fail under CI)
    project = tmp_path / "p"
    memdir = project / ".memory"
    store = _memory(memdir)
    cfg = _config(tmp_path, memdir)
    sock = socket_path(tmp_path / "state" / "dreamd")

    before = _prompt(tmp_path, project, PARAPHRASE, "s0")
    assert 'name="api-stack"' not in before  # keywords alone miss the paraphrase

    log = tmp_path / "daemon.log"
    with open(log, "wb") as out:
        daemon = subprocess.Popen([sys.executable, "-m", "dreamd", "run", "--config", str(cfg)], cwd=REPO,
                                  env=_env(tmp_path), stdout=out, stderr=subprocess.STDOUT)
    try:
        shas = {e.sha256 for e in store.snapshot().records}
        _wait(lambda: sock.exists() and cached_shas(memdir, MODEL) == shas, 90, lambda: log.read_text()[-3000:])
        assert stat.S_IMODE(os.lstat(sock).st_mode) == 0o600
        answer = _prompt(tmp_path, project, PARAPHRASE, "s1")
        assert 'name="api-stack"' in answer
        assert 'name="api-stack"' not in _prompt(tmp_path, project, PARAPHRASE, "s1")  # once per session
    finally:
        daemon.send_signal(signal.SIGKILL)
        daemon.wait(timeout=10)
    assert sock.exists()  # a killed daemon leaves its socket behind: nobody answers it
    t0 = time.monotonic()
    after = _prompt(tmp_path, project, "Emacs org mode", "s2")
    assert 'name="editor"' in after and time.monotonic() - t0 < 30
    assert ask_daemon(sock.parent, str(memdir), PARAPHRASE, 5) is None


def test_a_daemon_that_never_answers_costs_the_hook_only_its_timeout(tmp_path: Path) -> None:
    state = tmp_path / "state" / "dreamd"
    state.mkdir(parents=True)
    path = socket_path(state)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(4)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])  # read nothing, answer nothing
            except TimeoutError:
                continue

    t = threading.Thread(target=accept, daemon=True)
    t.start()
    try:
        t0 = time.monotonic()
        assert ask_daemon(state, "/x", "anything", 5, timeout=0.3) is None
        assert time.monotonic() - t0 < 1.0
        project = tmp_path / "p"
        _memory(project / ".memory")
        assert 'name="editor"' in _prompt(tmp_path, project, "Emacs org mode", "s")
    finally:
        stop.set()
        t.join()
        for c in held:
            c.close()
        server.close()


def test_a_socket_path_that_is_not_a_socket_is_never_used(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    socket_path(state).write_text("not a socket")
    assert ask_daemon(state, "/x", "q", 5) is None


def test_service_answers_managed_directories_only_and_follows_commits(tmp_path: Path) -> None:
    memdir = tmp_path / "mem"
    store = _memory(memdir)
    service = EmbeddingService(MODEL, tmp_path / "st", lambda: [memdir], loader=lambda name: embedder())
    service.start()
    try:
        _wait(lambda: socket_path(tmp_path / "st").exists() and cached_shas(memdir, MODEL) is not None, 60, lambda: service.error)
        assert ask_daemon(tmp_path / "st", str(memdir), PARAPHRASE, 1) == ["api-stack"]
        assert service.query(json.dumps({"dir": str(tmp_path), "query": "q", "limit": 1}).encode()) == {
            "error": "not a managed directory"}
        assert "error" in service.query(b"{not json")
        store.commit(Change(add=[make_record("pet", "user", "Noor owns a tortoise named Sheldon", "Forty years old.")]))
        service.changed(memdir)
        want = {e.sha256 for e in store.snapshot().records}
        _wait(lambda: cached_shas(memdir, MODEL) == want, 60, lambda: "cache not updated after the commit")
        assert ask_daemon(tmp_path / "st", str(memdir), "what animal does Noor keep", 1) == ["pet"]
    finally:
        service.stop()
    assert not socket_path(tmp_path / "st").exists()


def test_a_reload_that_sets_the_key_starts_the_service(tmp_path: Path) -> None:
    embedder()
    project = tmp_path / "p"
    memdir = project / ".memory"
    _memory(memdir)
    cfg = _config(tmp_path, memdir)
    with_key = cfg.read_text()
    cfg.write_text(with_key.replace(f'embeddings = "{MODEL}"', 'embeddings = ""'))
    sock = socket_path(tmp_path / "state" / "dreamd")
    log = tmp_path / "daemon.log"
    with open(log, "wb") as out:
        daemon = subprocess.Popen([sys.executable, "-m", "dreamd", "run", "--config", str(cfg)], cwd=REPO,
                                  env=_env(tmp_path), stdout=out, stderr=subprocess.STDOUT)
    try:
        _wait(lambda: b"daemon.ready" in log.read_bytes(), 60, lambda: log.read_text()[-2000:])
        assert not sock.exists()
        cfg.write_text(with_key)
        daemon.send_signal(signal.SIGHUP)
        _wait(lambda: sock.exists(), 90, lambda: log.read_text()[-2000:])
        _wait(lambda: ask_daemon(sock.parent, str(memdir), PARAPHRASE, 1) == ["api-stack"], 60,
              lambda: log.read_text()[-2000:])
    finally:
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(timeout=20)
    assert not sock.exists()  # a clean stop removes the socket
