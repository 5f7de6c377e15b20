"""What an attacker probe found at the hook's edges (issue 21 §1, issue 20 "one project, one
directory"; probe findings 3, 6 and 8 of 2026-12-02).

* A project's ``.memory`` whose ``manifest.json`` is a FIFO, a directory or a link to
  ``/dev/zero`` is still that project's directory: the hook, the CLI and ``dreamd mcp`` place
  work there and report the manifest, never "outside roots" or a second directory.
* ``MEMORY.md`` or a record body that is not text (NUL bytes, control characters, invalid
  UTF-8) never reaches the model; the refusal names the file.
* A message about a file is one clean line naming it: a socket is "a socket", a name holding a
  line break is printed escaped, not as a Python repr.

Every hook and CLI call runs the real ``dreamd`` in a subprocess with an isolated HOME.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from memory.store.records import make_record
from memory.store.transaction import Change, MemoryStore
from tests.test_nothing_silent import _config, _env, _stop, dreamd


def _project(tmp_path: Path) -> tuple[Path, Path]:
    _config(tmp_path)
    project = tmp_path / "code" / "victim"
    project.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(project)], check=True)  # a session in src/ finds the repo's .memory
    store = MemoryStore.init(project / ".memory")
    store.commit(Change(add=[make_record("deploy-day", "project", "Deploys happen on Tuesdays",
                                         "Deploys happen on Tuesdays.\n")]))
    return project, project / ".memory"


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _directory(path: Path) -> None:
    path.mkdir()


def _dev_zero(path: Path) -> None:
    path.symlink_to("/dev/zero")


UNUSABLE: dict[str, Callable[[Path], None]] = {"fifo": _fifo, "directory": _directory, "dev-zero": _dev_zero}


def _hook_log(tmp_path: Path) -> list[dict[str, Any]]:
    path = tmp_path / "state" / "dreamd" / "hook.log"
    return [json.loads(line) for line in path.read_text().splitlines()]


def _session_start(tmp_path: Path, cwd: Path) -> tuple[int, str]:
    payload = {"hook_event_name": "SessionStart", "session_id": "s1", "cwd": str(cwd), "source": "startup"}
    done = dreamd(tmp_path, "hook", stdin=json.dumps(payload))
    return done.returncode, done.stdout


@pytest.mark.parametrize("kind", sorted(UNUSABLE))
def test_an_unusable_manifest_keeps_the_session_in_its_project_memory_and_names_it(tmp_path: Path, kind: str) -> None:
    make = UNUSABLE[kind]
    project, memory = _project(tmp_path)
    (memory / "manifest.json").unlink()
    make(memory / "manifest.json")

    (project / "src").mkdir()
    assert _stop(tmp_path, project / "src").returncode == 0
    entry = _hook_log(tmp_path)[-1]
    assert entry.get("memory_dir") == str(memory), entry
    assert "outside" not in str(entry.get("reason", "")), entry
    jobs = [json.loads(p.read_bytes()) for p in (tmp_path / "state" / "dreamd" / "spool" / "new").iterdir()]
    assert [j["memory_dir"] for j in jobs] == [str(memory)] and not any(j.get("adopt") for j in jobs)

    code, out = _session_start(tmp_path, project)
    assert (code, out) == (0, "")
    last = _hook_log(tmp_path)[-1]
    assert last["memory_dir"] == str(memory) and f"{memory}/manifest.json" in last["reason"], last

    done = _cli_in(tmp_path, project, "recall", "deploys")
    assert done.returncode != 0
    [line] = done.stderr.strip().splitlines()
    assert "manifest.json" in line and "outside" not in line and "no memory directory" not in line, line


def _cli_in(tmp_path: Path, cwd: Path, *args: str) -> Any:
    return subprocess.run([sys.executable, "-m", "dreamd", *args], cwd=cwd, env=_env(tmp_path),
                          capture_output=True, text=True, timeout=120, check=False)


def test_placement_counts_a_dot_memory_with_any_manifest_entry_the_same_for_every_caller(tmp_path: Path) -> None:
    from dreamd.hook.placement import manifest_problem, memory_dir_for, place

    _project_dir, memory = _project(tmp_path)
    assert manifest_problem(memory) is None
    (memory / "manifest.json").unlink()
    os.mkfifo(memory / "manifest.json")
    target, how = place(str(_project_dir), projects={}, roots=[f"{tmp_path}/elsewhere/*"], env={"HOME": str(tmp_path)})
    assert target is not None and (target.memory_dir, how) == (memory, "managed")
    assert memory_dir_for(str(_project_dir), {}, {}) == memory
    assert manifest_problem(memory) == f"{memory}/manifest.json is a FIFO, not a regular file"


BAD_TEXT: dict[str, bytes] = {
    "nul": b"- [Deploys](deploy-day.md) \xe2\x80\x94 line\x00with\x00nul\n",
    "sparse": b"\x00" * 30_000,
    "escape": b"- [Deploys](deploy-day.md) \x1b[2J\x1b]0;pwned\x07\n",
    "not-utf8": b"- [Deploys](deploy-day.md) " + bytes(range(0x80, 0xC0)) + b"\n",
}


@pytest.mark.parametrize("case", sorted(BAD_TEXT))
def test_session_start_refuses_a_memory_md_that_is_not_text_naming_it(tmp_path: Path, case: str) -> None:
    project, memory = _project(tmp_path)
    index = memory / "MEMORY.md"
    index.unlink()
    index.write_bytes(BAD_TEXT[case])
    code, out = _session_start(tmp_path, project)
    assert (code, out) == (0, "")
    last = _hook_log(tmp_path)[-1]
    assert str(index) in last["error"] and "not text" in last["error"], last
    from memory import index_text
    from memory.errors import UnsafeFileError

    with pytest.raises(UnsafeFileError, match=r"MEMORY\.md: .*not text"):
        index_text(memory)


def test_a_plain_memory_md_still_reaches_session_start(tmp_path: Path) -> None:
    project, _memory = _project(tmp_path)
    code, out = _session_start(tmp_path, project)
    assert code == 0 and "deploy-day" in json.loads(out)["hookSpecificOutput"]["additionalContext"]


def test_a_record_body_that_is_not_text_is_left_out_of_recall_and_the_prompt_context(tmp_path: Path) -> None:
    project, memory = _project(tmp_path)
    store = MemoryStore(memory)
    store.commit(Change(add=[make_record("deploy-owner", "project", "Deploys are owned by the platform team",
                                         "The platform team owns deploys.\n")]))
    [entry] = [e for e in store.read().records if e.name == "deploy-owner"]
    path = memory / entry.file
    path.write_bytes(path.read_bytes().replace(b"platform team owns", b"platform\x00team\x1b[8m owns"))

    payload = {"hook_event_name": "UserPromptSubmit", "session_id": "s1", "cwd": str(project),
               "prompt": "who owns deploys on the platform team?"}
    done = dreamd(tmp_path, "hook", stdin=json.dumps(payload))
    assert done.returncode == 0 and "\x00" not in done.stdout and "\\u0000" not in done.stdout
    last = _hook_log(tmp_path)[-1]
    assert any(str(path) in r and "not text" in r for r in last.get("refused", [])), last

    from memory import recall

    result = recall(memory, "who owns deploys on the platform team")
    assert "deploy-owner" not in [r.name for r in result.records]


def test_a_socket_record_and_a_name_with_a_line_break_get_one_clean_line(tmp_path: Path) -> None:
    _project_dir, memory = _project(tmp_path)
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(memory / "sock.md"))
        (memory / "nl\nname.md").write_text("---\nname: nl\n---\nbody\n")
        done = dreamd(tmp_path, "remember", str(memory), "--name", "fresh", "--type", "user",
                      "--description", "A fresh fact", "--body", "Something new.")
    finally:
        sock.close()
    assert done.returncode == 0, done.stderr
    lines = [x for x in done.stderr.splitlines() if "sock.md" in x or "name.md" in x]
    assert lines, done.stderr
    sock_line = next(x for x in lines if "sock.md" in x)
    assert f"{memory}/sock.md: is a socket, not a regular file" in sock_line and "Errno" not in sock_line
    nl_line = next(x for x in lines if "name.md" in x)
    assert f"{memory}/nl\\nname.md: file name holds a line break" in nl_line and "PosixPath" not in nl_line
