"""dreamd demo, end to end in a real process: the shipped sample becomes memories, a forced
dream merges and prunes, the key in the sample never reaches a file, nothing leaks outside
the demo directory."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dreamd.cli.demo import sample_transcript

REPO = Path(__file__).resolve().parents[1]
RECORD_LINE = re.compile(r"^    \[(user|feedback|project|reference)\] ([a-z0-9][a-z0-9_-]*): (.+)$")


def run_demo_process(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], float]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    (tmp_path / "tmp").mkdir(exist_ok=True)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "TMPDIR": str(tmp_path / "tmp"),
        "PYTHONPATH": str(REPO),
        "LANG": "C.UTF-8",
    }
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "dreamd", "demo", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    return proc, time.monotonic() - started


def section(stdout: str, title: str) -> list[str]:
    """The lines under the ``==> title…`` heading, up to the next heading."""
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"==> {title}"))
    out = []
    for line in lines[start + 1 :]:
        if line.startswith("==> "):
            break
        out.append(line)
    return out


@pytest.fixture(scope="module")
def demo(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Path, subprocess.CompletedProcess[str], float]:
    tmp_path = tmp_path_factory.mktemp("demo")
    # A space and glob characters in the path: roots must match it literally.
    proc, seconds = run_demo_process(tmp_path, "--dir", str(tmp_path / "my tour [1]"))
    return tmp_path, proc, seconds


def test_sample_transcript_is_a_realistic_bilingual_claude_code_session() -> None:
    lines = [json.loads(line) for line in sample_transcript().decode("utf-8").splitlines()]
    typed = [d for d in lines if d.get("type") in ("user", "assistant")]
    said = [d for d in typed if d["type"] == "user" and isinstance(d["message"]["content"], str)]
    assert len(typed) >= 30
    assert len({d["sessionId"] for d in typed}) == 1
    text = "\n".join(d["message"]["content"] for d in said)
    assert re.search(r"[\u4e00-\u9fff]", text) and "Remember that" in text and "记住" in text
    assert re.search(r"sk-ant-api03-[A-Za-z0-9_-]{90,}", text)  # the fake key to redact
    assert any(
        b.get("type") == "tool_use"
        for d in typed
        if d["type"] == "assistant"
        for b in d["message"]["content"]
    )


def test_demo_exits_0_quickly_and_prints_memories_from_the_sample(
    demo: tuple[Path, subprocess.CompletedProcess[str], float],
) -> None:
    _, proc, seconds = demo
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert seconds < 30
    extracted = [
        m for line in section(proc.stdout, "One daemon pass") if (m := RECORD_LINE.match(line))
    ]
    types = {m.group(1) for m in extracted}
    assert types == {"user", "feedback", "project", "reference"}
    descriptions = "\n".join(m.group(3) for m in extracted)
    # One fact per kind the sample was written to contain, English and Chinese.
    assert "Postgres" in descriptions  # a decision with its reason
    assert "mock the database" in descriptions  # a correction
    assert "linear.app/acme/project/pay" in descriptions  # a tracker reference
    assert (
        "merge freeze" in descriptions and "next Friday" not in descriptions
    )  # date made absolute
    assert "make check" in descriptions  # 记住：…
    assert "uv" in descriptions  # 决定…因为…
    assert re.search(r"migrations .*(weekend|Saturday)", descriptions)  # "Remember that…"
    assert len(extracted) >= 8


def test_demo_dream_merges_the_paraphrases_and_drops_the_past_date(
    demo: tuple[Path, subprocess.CompletedProcess[str], float],
) -> None:
    _, proc, _ = demo
    dream = section(proc.stdout, "A forced dream")
    assert dream[0] == "    dream applied: 2 operation(s)"
    assert "    sprint-41-demo -> dropped" in dream
    assert any(
        "ruff-format-before-commit" in line and "format-changed-files" in line and "->" in line
        for line in dream
    )
    log = section(proc.stdout, "dreamd log")
    assert "by a dream" in log[0]
    assert "      dropped  sprint-41-demo" in log
    index = section(proc.stdout, "The index agents load")
    assert "    # Memory index" in index
    assert not any("sprint-41-demo" in line for line in index)


def test_demo_leaves_everything_inside_its_directory_and_no_key_anywhere(
    demo: tuple[Path, subprocess.CompletedProcess[str], float],
) -> None:
    tmp_path, proc, _ = demo
    tour = tmp_path / "my tour [1]"
    memory_dir = tour / "ledger-api" / ".memory"
    manifest = json.loads((memory_dir / "manifest.json").read_text())
    assert manifest["consolidated_at"] is not None
    assert len(manifest["records"]) >= 8
    assert list((tmp_path / "home").iterdir()) == []  # no ~/.local/state, no ~/.config
    assert list((tmp_path / "tmp").iterdir()) == []
    assert list((tour / "spool" / "done").iterdir())
    assert list((tour / "spool" / "failed").iterdir()) == []
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert b"sk-ant-" not in path.read_bytes(), path
    assert "sk-ant-" not in proc.stdout + proc.stderr
    assert "[REDACTED:" in proc.stdout
    where = section(proc.stdout, "Where everything lives")
    assert f"    manifest     {memory_dir / 'manifest.json'}  (the one authority)" in where
    assert f"    clean up     rm -rf '{tour}'" in where


def test_demo_without_dir_uses_a_fresh_temp_directory(tmp_path: Path) -> None:
    proc, _ = run_demo_process(tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    [made] = list((tmp_path / "tmp").iterdir())
    assert made.name.startswith("dreamd-demo-")
    assert (made / "ledger-api" / ".memory" / "manifest.json").is_file()
    assert f"clean up     rm -rf {made}" in proc.stdout


def test_demo_rerun_in_the_same_dir_extracts_nothing_twice(tmp_path: Path) -> None:
    first, _ = run_demo_process(tmp_path, "--dir", str(tmp_path / "tour"))
    assert first.returncode == 0, first.stdout + first.stderr
    again, _ = run_demo_process(tmp_path, "--dir", str(tmp_path / "tour"))
    assert again.returncode == 0, again.stdout + again.stderr
    assert ": 0 new memories" in again.stdout
    assert "seen the session before" in again.stdout
