"""The store side of issue 9 through the real command line: after adopt, remember, forget, a
dream, a rollback and a foreign edit, ``find DIR -mindepth 2 -name '*.md'`` finds nothing, a
memory written behind dreamd's back is adopted by the next commit, and either name works."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from memory.store.manifest import Manifest
from memory.store.transaction import HISTORY, INDEX, MANIFEST

REPO = Path(__file__).resolve().parents[1]
CC_RECORD = (
    "---\nname: feedback-db-tests\n"
    "description: Integration tests must hit a real database, not mocks\n"
    "type: feedback\n---\n"
    "Integration tests hit a real database.\n"
)


def dreamd(home: Path, *args: str) -> str:
    env = {**os.environ, "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
           "XDG_STATE_HOME": str(home / ".state")}
    env.pop("DREAMD_CONFIG", None)
    done = subprocess.run([sys.executable, "-m", "dreamd", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"dreamd {' '.join(args)}: {done.stderr}"
    return done.stdout


def nested_md(d: Path) -> list[str]:
    find = shutil.which("find")
    if find is None:
        return sorted(str(p) for p in d.rglob("*.md") if p.parent != d)
    out = subprocess.run([find, str(d), "-mindepth", "2", "-name", "*.md"], capture_output=True, text=True, check=True)
    return sorted(out.stdout.split())


def test_no_md_below_the_directory_after_every_command_and_foreign_saves_are_kept(tmp_path: Path) -> None:
    d = tmp_path / "memory"
    d.mkdir()
    (d / "feedback_db_tests.md").write_text(CC_RECORD)
    (d / INDEX).write_text("- [DB tests](feedback_db_tests.md) — real database\nAlways run the linter.\n")
    steps: list[tuple[str, ...]] = [
        ("adopt", str(d)),
        ("remember", str(d), "--name", "tabs-a", "--type", "user", "--description",
         "User prefers tabs for indentation", "--body", "Use tabs."),
        ("remember", str(d), "--name", "tabs-b", "--type", "user", "--description",
         "User prefers tabs for indentation", "--body", "Use tabs."),  # a duplicate: merged
        ("remember", str(d), "--name", "feedback-db-tests", "--type", "feedback", "--description",
         "Integration tests use a real Postgres", "--body", "Use Postgres."),
        ("consolidate", str(d), "--force"),
        ("forget", str(d), "memory-index-notes"),
        ("rollback", str(d), "--to", "2"),
    ]
    for step in steps:
        out = dreamd(tmp_path, *step)
        if step[0] == "consolidate":
            assert out.startswith("dream applied: 1 operation(s)"), out  # the two tabs records merged
        assert nested_md(d) == [], step
    m = Manifest.loads((d / MANIFEST).read_bytes(), where="t")
    assert "feedback_db_tests" in m.by_name()  # remember by the frontmatter name updated it
    assert any(p.name.endswith(".md.hist") for p in (d / HISTORY).iterdir())
    # Claude Code saves a memory behind dreamd's back; the next command's commit adopts it.
    (d / "user_role.md").write_text("---\nname: user-role\ndescription: Backend engineer\ntype: user\n---\nGo.\n")
    edited = (d / INDEX).read_text() + "- [Role](user_role.md) — backend engineer\n"
    (d / INDEX).write_text(edited)
    dreamd(tmp_path, "forget", str(d), "tabs-a")
    m = Manifest.loads((d / MANIFEST).read_bytes(), where="t")
    assert m.by_name()["user_role"].title == "user-role"
    assert edited.encode() in [p.read_bytes() for p in (d / HISTORY).iterdir()]
    assert nested_md(d) == []
    log = dreamd(tmp_path, "log", str(d), "--limit", "1")
    assert "adopted  user_role (name: user-role)  (by someone else)" in log
    assert "kept     a MEMORY.md dreamd did not write as .history/MEMORY-" in log
    dreamd(tmp_path, "forget", str(d), "user-role")
    assert "user_role" not in Manifest.loads((d / MANIFEST).read_bytes(), where="t").by_name()


@pytest.mark.skipif(shutil.which("find") is None, reason="no find(1) on this machine")
def test_find_sees_a_legacy_history_md_until_the_next_commit(tmp_path: Path) -> None:
    d = tmp_path / "memory"
    dreamd(tmp_path, "init", "--add-root", str(d))
    dreamd(tmp_path, "remember", str(d), "--name", "a", "--type", "user", "--description", "d", "--body", "v1")
    dreamd(tmp_path, "remember", str(d), "--name", "a", "--type", "user", "--description", "d", "--body", "v2")
    [archived] = [p for p in (d / HISTORY).iterdir() if p.name.endswith(".md.hist")]
    legacy = archived.with_name(archived.name.removesuffix(".hist"))
    archived.rename(legacy)  # as an older dreamd left it
    assert nested_md(d) == [str(legacy)]
    dreamd(tmp_path, "rollback", str(d), "--to", "1")  # renames it, then restores v1 from it
    assert nested_md(d) == []
    assert "v1" in next(p for p in d.glob("a-*.md")).read_text()
