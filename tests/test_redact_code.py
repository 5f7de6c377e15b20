"""The redactor's compiled patterns kept between hook processes make the patterns ``re`` makes.

:func:`memory.redact.engine.compile_pattern` builds a pattern from SRE code a previous process
saved (:func:`~memory.redact.engine.save_code`) instead of compiling it in Python again; a
compiled pattern's ``==`` compares its flags and its code, so every pattern the redactor holds
is checked against ``re.compile`` itself, from a file written and read back.
"""

from __future__ import annotations

import gc
import json
import marshal
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

import memory.redact  # noqa: F401  (imports every detector module, so every pattern exists)
from memory.redact import engine
from memory.redact.engine import Lazy, compile_pattern, load_code, save_code


@pytest.fixture
def fresh_code() -> Iterator[None]:
    """The module's compiled-code table emptied for the test and put back after it."""
    saved, used, state = dict(engine._CODE), set(engine._CODE_USED), dict(engine._CODE_STATE)
    engine._CODE.clear()
    engine._CODE_USED.clear()
    engine._CODE_STATE["new"] = 0
    yield
    engine._CODE.clear()
    engine._CODE.update(saved)
    engine._CODE_USED.clear()
    engine._CODE_USED.update(used)
    engine._CODE_STATE.update(state)


def _as_in_a_fresh_process() -> None:
    for lazy in (o for o in gc.get_objects() if isinstance(o, Lazy)):
        lazy._compiled = None


def _patterns() -> list[tuple[str, int]]:
    found = {(o.pattern, o.flags) for o in gc.get_objects() if isinstance(o, Lazy)}
    return sorted(found)


def test_every_pattern_from_a_code_file_equals_re_compile(fresh_code: None, tmp_path: Path) -> None:
    patterns = _patterns()
    assert len(patterns) > 150  # the detectors' patterns, not a handful
    for pattern, flags in patterns:
        compile_pattern(pattern, flags)
    code_file = tmp_path / f"{engine.CODE_TAG}.marshal"
    assert save_code(code_file)
    engine._CODE.clear()
    engine._CODE_STATE["new"] = 0
    load_code(code_file)
    assert len(engine._CODE) == len(patterns)
    for pattern, flags in patterns:
        assert compile_pattern(pattern, flags) == re.compile(pattern, flags), pattern
    assert engine._CODE_STATE["new"] == 0  # every one came from the file
    assert not save_code(code_file)  # nothing new: the file is not rewritten


def test_code_the_interpreter_refuses_is_compiled_again(fresh_code: None, tmp_path: Path) -> None:
    pattern = r"(?P<word>pass(?:word)?)\s*[:=]\s*(\S+)"
    compile_pattern(pattern)
    flags, code, groups, names, index = engine._CODE[(pattern, 0)]
    engine._CODE[(pattern, 0)] = (flags, [*code[:-3], 99999], groups, names, index)
    assert compile_pattern(pattern) == re.compile(pattern)
    code_file = tmp_path / "code.marshal"
    code_file.write_bytes(b"not marshal data")
    load_code(code_file)  # an unreadable file is no error
    assert compile_pattern(pattern) == re.compile(pattern)


def test_a_code_file_keeps_at_most_max_code_patterns(
    fresh_code: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(engine, "MAX_CODE", 2)
    old = tmp_path / "old.marshal"
    for pattern in ("old-a", "old-b", "old-c"):
        compile_pattern(pattern)
    save_code(old)
    engine._CODE.clear()
    engine._CODE_USED.clear()
    load_code(old)
    compile_pattern("now-d")
    new = tmp_path / "new.marshal"
    save_code(new)
    assert sorted(marshal.loads(new.read_bytes())) == [("now-d", 0)]


def test_the_stop_hook_compiles_the_redactor_once_for_every_process(
    fresh_code: None, tmp_path: Path
) -> None:
    from dreamd.hook.transcript import read_conversation

    session = tmp_path / "session.jsonl"
    record = {"type": "user", "uuid": "u1", "sessionId": "s", "timestamp": "2026-01-01T00:00:00Z",
              "message": {"role": "user", "content": "the api key for staging is Zq8vLm2Xw9Rt4Ks7"}}  # fmt: skip
    session.write_text(json.dumps(record) + "\n", encoding="utf-8")
    code_dir = tmp_path / "hook-regex"
    _as_in_a_fresh_process()
    lines, _cost = read_conversation(session, None, code_dir=code_dir)
    assert b"Zq8vLm2Xw9Rt4Ks7" not in lines[0][1]
    [code_file] = code_dir.iterdir()
    assert code_file.name == f"{engine.CODE_TAG}.marshal"
    assert code_file.stat().st_mode & 0o777 == 0o600
    saved = marshal.loads(code_file.read_bytes())
    assert saved  # what this call compiled
    engine._CODE.clear()
    engine._CODE_STATE["new"] = 0
    _as_in_a_fresh_process()
    again, _cost = read_conversation(session, None, code_dir=code_dir)
    assert again == lines
    assert engine._CODE_STATE["new"] == 0  # nothing compiled in Python the second time
