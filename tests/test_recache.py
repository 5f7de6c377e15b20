"""memory.recache: the tokenizer's big Unicode classes are compiled once per interpreter (issue
20: their bitmaps were most of a cold ``dreamd recall``), and what the cache hands back is the
very program ``re.compile`` builds."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from memory import recache

REPO = Path(__file__).resolve().parents[1]

PROBE = """
import re, re._parser
original = re._parser.parse
def parse(pattern, *args, **kwargs):
    if WARM and isinstance(pattern, str) and "\u4e00" in pattern:  # bytes patterns too
        raise AssertionError("compiled again: " + pattern)
    return original(pattern, *args, **kwargs)
re._parser.parse = parse
import memory.retrieval.tokens as t
re._parser.parse = original
print(t.words("使用tabs缩进 node-18 c++ café"))
for p in (t.CJK_RE, t._WORD_RE, t._PART_RE):
    assert p == re.compile(p.pattern, p.flags), p.pattern
"""


def _run(tmp_path: Path, warm: bool) -> subprocess.CompletedProcess[str]:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path / "home"),
           "XDG_CACHE_HOME": str(tmp_path / "cache"), "PYTHONPATH": str(REPO)}  # fmt: skip
    return subprocess.run([sys.executable, "-c", PROBE.replace("WARM", str(warm))], env=env,
                          capture_output=True, text=True, timeout=60, check=False)  # fmt: skip


def test_a_second_process_compiles_none_of_the_tokenizers_patterns(tmp_path: Path) -> None:
    first = _run(tmp_path, warm=False)
    assert first.returncode == 0, first.stderr
    [kept] = (tmp_path / "cache" / "dreamd").glob("regex-*.marshal")
    assert kept.stat().st_mode & 0o777 == 0o600
    second = _run(tmp_path, warm=True)
    assert second.returncode == 0, second.stderr  # no Chinese class was parsed, let alone compiled
    assert second.stdout == first.stdout == "['使用', 'tabs', '缩进', 'node-18', 'c++', 'café']\n"


def _fresh(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(recache, "_programs", None)
    return recache.cache_file()


PATTERNS = [(r"[\u4e00-\u9fff]++|(?P<w>[^\W_]+)", 0), (r"(?i)tabs?\b", 0), (r"a.b", re.DOTALL)]


@pytest.mark.parametrize(("pattern", "flags"), PATTERNS)
def test_what_the_cache_hands_back_is_what_re_compile_builds(
    pattern: str, flags: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fresh(monkeypatch, tmp_path)
    first = recache.compile(pattern, flags)
    monkeypatch.setattr(recache, "_programs", None)  # a new process: read from the file
    again = recache.compile(pattern, flags)
    fresh = re.compile(pattern, flags)
    assert first == again == fresh
    assert again.groupindex == fresh.groupindex and again.groups == fresh.groups
    assert again.findall("tabs 使用 Tab a\nb") == fresh.findall("tabs 使用 Tab a\nb")


def test_a_bad_or_foreign_cache_falls_back_to_re_compile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import marshal

    path = _fresh(monkeypatch, tmp_path)
    recache.compile("[a-z]+")
    program = (0, [1, 2, 3], 0, {}, (None,))  # not a program _sre accepts
    for bad in (b"\x00not marshal", marshal.dumps([]),
                marshal.dumps({"format": 1, "version": "another python", "programs": {}}),
                marshal.dumps({"format": 1, "version": sys.version, "programs": {("[a-z]+", 0): program}})):  # fmt: skip
        path.write_bytes(bad)
        monkeypatch.setattr(recache, "_programs", None)
        assert recache.compile("[a-z]+") == re.compile("[a-z]+")


def test_the_cache_is_never_written_through_a_link(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _fresh(monkeypatch, tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    path.parent.parent.mkdir(parents=True)
    path.parent.symlink_to(elsewhere)
    assert recache.compile("[b-y]+") == re.compile("[b-y]+")
    assert list(elsewhere.iterdir()) == []
