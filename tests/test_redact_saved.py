"""The first hook a user meets is warm: setup and the daemon's start write the redactor's
compiled patterns where the hook reads them (:mod:`memory.redact.saved`), doctor checks them.
"""

from __future__ import annotations

import io
import json
import marshal
import subprocess
import sys
from pathlib import Path

from dreamd.cli.doctor import OK, WARN, check_hook_code
from dreamd.daemon.supervisor import _write_hook_code
from dreamd.hook.main import hook_settings
from dreamd.setup.main import Options, setup_main, undo_main
from memory.redact.saved import code_file, redactor_patterns, write_code
from memory.spool.queue import state_home
from tests.test_setup import DREAMD, FakeRunner, home_env

REPO = Path(__file__).resolve().parents[1]

# Made-up text that meets many of the redactor's anchors (passwords, keys, URLs, Chinese).
SESSION_TEXT = "\n".join(
    [
        "the password for the build box is Qm7!vT2kw9 and the pin is 5813",
        "export AWS_SECRET_ACCESS_KEY=Tq8pLm2Zx9Vb4Nc7Rs1Wd6Yf3Hg5Jk0Ae8Ub2Ci",
        "api_key = 'sk-live-7Hq2Lm9Xv4Rt8Zp1Wn6Bc3'",
        "psql postgres://deploy:Hx4!pq9Lm@db.internal:5432/app",
        "curl -H 'Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl'",
        "ssh-keygen wrote -----BEGIN OPENSSH PRIVATE KEY----- b3BlbnNzaC1rZXk -----END OPENSSH PRIVATE KEY-----",
        "我的密码是 Lq9#wz4Rt,令牌是 tk_8Hn2Vq7Lm3Zx",
        "client_secret: 4fG8hJ2kL6mN9pQ3 and token=ghp_Zq8Lm2Xv9Rt4Wp7Nb3Hc6Jd1Fg5Ks0Ya2Qe",
        # a JSON text inside the text: its escaped literals are read by memory.redact.carried
        '{"note": "the admin password is \\"Wq4!zr8Lp\\" \\u00e9t\\u00e9", "n": 1}',
    ]
)

_PROBE = r"""
import json, sys
from pathlib import Path
from dreamd.hook.main import hook_settings
from dreamd.hook.transcript import read_conversation
from memory.redact import engine

compiled = []
recording = engine._compile_recording
def counting(pattern, flags):
    compiled.append(pattern)
    return recording(pattern, flags)
engine._compile_recording = counting
settings = hook_settings(__import__("os").environ)
read_conversation(Path(sys.argv[1]), settings.transcript_cache, code_dir=settings.code_cache)
print(json.dumps({"compiled": len(compiled), "from_file": len(engine._CODE_USED) - len(compiled)}))
"""


def _session(tmp_path: Path) -> Path:
    session = tmp_path / "session.jsonl"
    line = {
        "type": "user",
        "uuid": "u-1",
        "sessionId": "s-1",
        "timestamp": "2026-01-01T00:00:00Z",
        "message": {"role": "user", "content": SESSION_TEXT},
    }
    session.write_text(json.dumps(line, ensure_ascii=False) + "\n", encoding="utf-8")
    return session


def _first_hook(env: dict[str, str], session: Path) -> dict[str, int]:
    """What a hook process's redaction compiled in Python, and built from the saved code."""
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, str(session)],
        env={**env, "PYTHONPATH": str(REPO), "PYTHONDONTWRITEBYTECODE": "1"},
        capture_output=True, text=True, timeout=120, check=True, cwd=REPO,
    )  # fmt: skip
    result: dict[str, int] = json.loads(proc.stdout)
    return result


def test_after_setup_in_a_fresh_home_the_first_hook_compiles_no_pattern(tmp_path: Path) -> None:
    session = _session(tmp_path)
    (tmp_path / "cold").mkdir()
    (tmp_path / "setup").mkdir()
    cold = home_env(tmp_path / "cold")
    without = _first_hook(cold, session)
    assert without["compiled"] > 20 and without["from_file"] == 0  # what a first hook pays

    env = home_env(tmp_path / "setup")
    out = io.StringIO()
    assert setup_main(Options(argv=DREAMD), env=env, runner=FakeRunner("systemd"), out=out) == 0
    path = code_file(state_home(env))
    assert f"regex    wrote {path} " in out.getvalue()
    assert path.stat().st_mode & 0o777 == 0o600
    assert path.parent.stat().st_mode & 0o777 == 0o700
    assert hook_settings(env).code_cache == path.parent  # where the hook looks
    written = path.read_bytes()

    first = _first_hook(env, session)
    assert first == {"compiled": 0, "from_file": without["compiled"]}
    assert path.read_bytes() == written  # nothing new: the hook did not rewrite it

    again = io.StringIO()
    setup_main(Options(argv=DREAMD), env=env, runner=FakeRunner("systemd", running=True), out=again)
    assert "regex" not in again.getvalue()  # it held every pattern: not written again
    undone = io.StringIO()
    assert undo_main(env=env, runner=FakeRunner("systemd", running=True), out=undone) == 0
    assert not path.exists() and not path.parent.exists()


def test_the_daemons_start_writes_the_hook_code_of_its_environment(tmp_path: Path) -> None:
    env = home_env(tmp_path)
    _write_hook_code(env)
    path = code_file(state_home(env))
    loaded = marshal.loads(path.read_bytes())
    assert set(redactor_patterns()) <= set(loaded)


def test_doctor_says_whether_the_hook_code_is_there_and_holds_every_pattern(tmp_path: Path) -> None:
    env = home_env(tmp_path)
    state = state_home(env)
    path = code_file(state)
    missing = check_hook_code(env)
    assert missing.status == WARN and f"{path} missing" in missing.detail

    write_code(state)
    total = len(redactor_patterns())
    ok = check_hook_code(env)
    assert ok.status == OK and f"holds the redactor's {total} compiled patterns" in ok.detail

    kept = marshal.loads(path.read_bytes())
    pattern, flags = redactor_patterns()[0]
    entry = kept[(pattern, flags)]
    kept[(pattern, flags)] = (entry[0], [*entry[1][:-3], 99999], *entry[2:])  # refused by _sre
    del kept[redactor_patterns()[1]]
    path.write_bytes(marshal.dumps(kept))
    partial = check_hook_code(env)
    assert partial.status == WARN and f"holds {total - 2} of the redactor's {total}" in partial.detail

    path.write_bytes(b"not marshal")
    assert "unreadable" in check_hook_code(env).detail




def test_a_state_directory_the_daemon_cannot_write_is_no_reason_not_to_start(tmp_path: Path) -> None:
    env = home_env(tmp_path)
    state = state_home(env)
    state.mkdir(parents=True)
    (state / "hook-regex").write_text("a file where the folder goes\n")
    _write_hook_code(env)  # logged, not raised
    assert (state / "hook-regex").read_text() == "a file where the folder goes\n"
