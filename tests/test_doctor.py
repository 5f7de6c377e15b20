"""dreamd doctor: one line per check, exit 1 on any FAIL; the model probe against a local server."""

from __future__ import annotations

import http.server
import io
import json
import os
import shlex
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, ClassVar

import pytest

from dreamd.cli.doctor import (
    Check,
    check_claude_hooks,
    check_daemon,
    check_failed_jobs,
    check_hooks_run,
    check_inotify,
    check_mcp,
    check_model,
    check_other_spools,
    check_service,
    check_spool,
    doctor_main,
    run_doctor,
)
from dreamd.config import Config, load_config
from memory.redact.saved import code_file, redactor_patterns, write_code
from memory.spool.queue import state_home
from memory.store.transaction import MemoryStore

KEY = "sk-ant-api03-doctor-test-key-never-printed"


def write_config(tmp_path: Path, extra: str = "") -> Path:
    path = tmp_path / "config.toml"
    path.write_text(
        "[daemon]\n"
        f'spool = "{tmp_path / "spool"}"\n'
        f'roots = ["{tmp_path / "code"}/*/.memory"]\n' + extra
    )
    return path


def config_for(tmp_path: Path, extra: str = "") -> Config:
    return load_config(write_config(tmp_path, extra), env={"HOME": str(tmp_path)})


HOOKS_SNIPPET = {
    event: [{"hooks": [{"type": "command", "command": "dreamd hook", "timeout": 10}]}]
    for event in ("SessionStart", "UserPromptSubmit", "Stop", "PreCompact", "SessionEnd")
}


def write_hooks(home: Path, hooks: dict[str, Any]) -> Path:
    path = home / ".claude" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"hooks": hooks}))
    return path


def make_spool(tmp_path: Path, mode: int = 0o700) -> Path:
    spool = tmp_path / "spool"
    spool.mkdir(mode=0o700)
    for q in ("tmp", "new", "cur", "deferred", "done", "failed"):
        (spool / q).mkdir(mode=0o700)
    spool.chmod(mode)
    return spool


def fake_proc(tmp_path: Path, watches: int | None, instances: int | None, locks: str = "") -> Path:
    base = tmp_path / "proc" / "sys" / "fs" / "inotify"
    base.mkdir(parents=True)
    (tmp_path / "proc" / "locks").write_text(locks)
    if watches is not None:
        (base / "max_user_watches").write_text(f"{watches}\n")
    if instances is not None:
        (base / "max_user_instances").write_text(f"{instances}\n")
    return tmp_path / "proc"


# --------------------------------------------------------------------------- the whole run


def daemon_lock(spool: Path, pid: int) -> str:
    """A /proc/locks table in which ``pid`` holds the spool lock, plus ``.owner``."""
    (spool / ".lock").touch()
    (spool / ".owner").write_text(
        json.dumps({"pid": pid, "host": "box", "since": "2026-11-29T09:00:00.000000Z"})
    )
    ino = (spool / ".lock").stat().st_ino
    return (
        "1: POSIX  ADVISORY  WRITE 99 fe:00:1234 0 EOF\n"
        f"2: FLOCK  ADVISORY  WRITE {pid} fe:00:{ino} 0 EOF\n"
        f"2: -> FLOCK  ADVISORY  WRITE 4242 fe:00:{ino} 0 EOF\n"
    )


HOOK = f"{shlex.quote(sys.executable)} -m dreamd hook"
"""A hook command that runs on any PATH: this interpreter's absolute path."""


def no_manager(argv: Sequence[str]) -> tuple[int, str]:
    return 1, "Failed to connect to bus: No medium found"


def test_healthy_setup_prints_ok_lines_and_exits_0(tmp_path: Path) -> None:
    MemoryStore.init(tmp_path / "code" / "app" / ".memory")
    spool = make_spool(tmp_path)
    proc = fake_proc(tmp_path, 65536, 512, daemon_lock(spool, 4321))
    write_hooks(tmp_path, {e: [{"hooks": [dict(g[0]["hooks"][0], command=HOOK)]}] for e, g in HOOKS_SNIPPET.items()})
    (tmp_path / ".claude.json").write_text(json.dumps({"mcpServers": {"dreamd": {
        "type": "stdio", "command": sys.executable, "args": ["-m", "dreamd", "mcp"]}}}))  # fmt: skip
    out = io.StringIO()
    env = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    write_code(state_home(env))  # as dreamd setup and the daemon's start do
    code = run_doctor(config_for(tmp_path), env=env, out=out, proc=proc, runner=no_manager)
    assert code == 0, out.getvalue()
    assert out.getvalue().splitlines() == [
        f"OK    config: {tmp_path / 'config.toml'} is valid",
        f"OK    roots: 1 managed, 0 unmanaged dirs under {tmp_path / 'code'}/*/.memory",
        "OK    memory files: every file in 1 managed dir(s) is readable",
        f"OK    spool: {tmp_path / 'spool'}: mode 0700, writable",
        "OK    inotify: max_user_watches 65536 (needs 2), max_user_instances 512 (needs 1) "
        "(1 managed dirs + the spool)",
        "OK    daemon: running, pid 4321 since 2026-11-29T09:00:00.000000Z",
        "OK    model: offline backend: no key and no network needed",
        "OK    failed jobs: none",
        "OK    secrets: none in 0 record file(s)",
        "OK    other spools: no jobs wait in a spool the daemon does not read",
        f"OK    claude code hooks: {tmp_path / '.claude' / 'settings.json'} runs dreamd hook for all 5 events",
        f"OK    claude code hooks run: `{HOOK}` ran (sh -c, this PATH) and exited 0",
        f"OK    hook code: {code_file(state_home(env))} holds the redactor's "
        f"{len(redactor_patterns())} compiled patterns",
        f"OK    mcp server: registered for the user as `{shlex.join([sys.executable, '-m', 'dreamd', 'mcp'])}`",
        "WARN  service: no service manager here (systemctl --user: Failed to connect to bus: No medium "
        "found): dreamd run (pid 4321) is alive but unsupervised; nothing restarts it after a crash or a reboot",
        "OK    job directories: every directory the spool's jobs name is inside [daemon] roots",
        "OK    placement: the hook placed every session it saw",
    ]


def test_any_fail_makes_exit_1(tmp_path: Path) -> None:
    MemoryStore.init(tmp_path / "code" / "app" / ".memory")
    make_spool(tmp_path, mode=0o777)
    out = io.StringIO()
    code = run_doctor(config_for(tmp_path), env={"HOME": str(tmp_path)}, out=out, proc=fake_proc(tmp_path, 65536, 512))
    assert code == 1
    [spool_line] = [line for line in out.getvalue().splitlines() if "spool:" in line]
    assert spool_line.startswith("FAIL  spool: group- or world-writable: ")
    assert spool_line.endswith(f"(fix: chmod -R go-rwx {tmp_path / 'spool'})")


def test_warnings_alone_exit_0(tmp_path: Path) -> None:
    out = io.StringIO()
    code = run_doctor(config_for(tmp_path), env={"HOME": str(tmp_path)}, out=out, proc=fake_proc(tmp_path, 65536, 512))
    lines = out.getvalue().splitlines()
    assert code == 0
    assert lines[1].startswith("WARN  roots: no memory directories found under ")
    assert lines[2] == "OK    memory files: every file in 0 managed dir(s) is readable"
    assert lines[3].startswith(f"WARN  spool: {tmp_path / 'spool'} does not exist yet")


def test_invalid_config_is_one_fail_line(tmp_path: Path) -> None:
    path = write_config(tmp_path, '[gates]\nthreshold = "ten"\n')
    out = io.StringIO()
    assert doctor_main(path, env={"HOME": str(tmp_path)}, out=out) == 1
    [line] = out.getvalue().splitlines()
    assert line.startswith(f"FAIL  config: {path}")
    assert "threshold" in line


def test_doctor_main_without_config_file_uses_defaults(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "cfg")}
    out = io.StringIO()
    doctor_main(None, env=env, out=out, proc=fake_proc(tmp_path, 65536, 512))
    first = out.getvalue().splitlines()[0]
    assert first == (
        f"OK    config: no config file ({tmp_path / 'cfg' / 'dreamd' / 'config.toml'} absent): "
        "every key at its default"
    )


def test_unmanaged_dirs_warn_with_adopt_fix(tmp_path: Path) -> None:
    legacy = tmp_path / "code" / "legacy" / ".memory"
    legacy.mkdir(parents=True)
    (legacy / "user_role.md").write_text("---\nname: Role\ndescription: d\n---\nbody\n")
    out = io.StringIO()
    run_doctor(config_for(tmp_path), env={"HOME": str(tmp_path)}, out=out, proc=fake_proc(tmp_path, 65536, 512))
    roots = out.getvalue().splitlines()[1]
    assert roots.startswith("WARN  roots: 0 managed, 1 unmanaged dirs under ")
    assert roots.endswith(f"(fix: dreamd adopt {legacy})")


# --------------------------------------------------------------------------- spool


@pytest.mark.parametrize(
    ("mode", "status", "fragment"),
    [
        (0o700, "OK", "mode 0700, writable"),
        (0o750, "WARN", "has mode 0750: others can read queued transcripts"),
        (0o755, "WARN", "has mode 0755"),
        (0o770, "FAIL", "group- or world-writable"),
        (0o703, "FAIL", "group- or world-writable"),
    ],
)
def test_spool_permissions(tmp_path: Path, mode: int, status: str, fragment: str) -> None:
    spool = make_spool(tmp_path, mode)
    check = check_spool(spool)
    assert check.status == status
    assert fragment in check.detail


def test_world_writable_queue_inside_a_private_spool_fails(tmp_path: Path) -> None:
    spool = make_spool(tmp_path)
    (spool / "new").chmod(0o777)
    check = check_spool(spool)
    assert check.status == "FAIL"
    assert str(spool / "new") in check.detail


def test_a_spool_another_user_owns_fails_whatever_its_mode(tmp_path: Path) -> None:
    """Issue 21 §2: a spool of uid 12345 with mode 0755 (its queues ours) is a FAIL, as the
    daemon refuses it, not a WARN about its mode."""
    spool = make_spool(tmp_path, 0o755)
    os.chown(spool, 12345, 12345)
    check = check_spool(spool)
    assert check.status == "FAIL"
    assert f"{spool} is owned by uid 12345, not by this user" in check.detail
    for queue in spool.iterdir():  # `chown -R`: the spool is named, not its first queue
        os.chown(queue, 12345, 12345)
    check = check_spool(spool)
    assert check.status == "FAIL" and check.detail.startswith(f"{spool} is owned by uid 12345"), check.detail


def test_spool_that_is_a_file_fails(tmp_path: Path) -> None:
    (tmp_path / "spool").write_text("")
    assert check_spool(tmp_path / "spool").status == "FAIL"


# --------------------------------------------------------------------------- inotify


def test_inotify_limits_with_a_shared_instance(tmp_path: Path) -> None:
    ok = check_inotify(10, proc=fake_proc(tmp_path / "a", 65536, 128), shared_instance=True)
    assert ok == Check(
        "OK",
        "inotify",
        "max_user_watches 65536 (needs 11), max_user_instances 128 (needs 1) "
        "(10 managed dirs + the spool)",
    )
    fail = check_inotify(5000, proc=fake_proc(tmp_path / "b", 4096, 128), shared_instance=True)
    assert fail.status == "FAIL"
    assert fail.detail == "max_user_watches 4096 < 5001 needed (5000 managed dirs + the spool)"
    assert fail.fix == (
        "sudo sysctl fs.inotify.max_user_watches=10002 (persist it in /etc/sysctl.d/90-dreamd.conf)"
    )
    tight = check_inotify(100, proc=fake_proc(tmp_path / "c", 1100, 128), shared_instance=True)
    assert tight.status == "WARN"
    assert tight.detail.startswith("max_user_watches 1100 leaves little room over the 101 ")


def test_inotify_instance_per_watch_before_watchdog_7(tmp_path: Path) -> None:
    fail = check_inotify(200, proc=fake_proc(tmp_path / "b", 65536, 128), shared_instance=False)
    assert fail.status == "FAIL"
    assert fail.detail == "max_user_instances 128 < 201 needed (200 managed dirs + the spool)"
    assert fail.fix == (
        "sudo sysctl fs.inotify.max_user_instances=402 (persist it in /etc/sysctl.d/90-dreamd.conf)"
    )
    tight = check_inotify(100, proc=fake_proc(tmp_path / "c", 65536, 150), shared_instance=False)
    assert tight.status == "WARN"


def test_installed_watchdog_shares_one_instance() -> None:
    from importlib import metadata

    from dreamd.cli.doctor import watchdog_shares_inotify

    major = int(metadata.version("watchdog").split(".")[0])
    assert watchdog_shares_inotify() is (major >= 7)


def test_inotify_absent_is_ok(tmp_path: Path) -> None:
    check = check_inotify(3, proc=tmp_path / "no-proc")
    assert check.status == "OK"
    assert "no inotify" in check.detail


# --------------------------------------------------------------------------- daemon


def test_daemon_not_running_warns_with_how_to_start_it(tmp_path: Path) -> None:
    spool = make_spool(tmp_path)
    (spool / ".lock").touch()
    check = check_daemon(
        spool, proc=fake_proc(tmp_path, 65536, 512, "1: POSIX  ADVISORY  WRITE 9 fe:00:1 0 EOF\n")
    )
    assert check.status == "WARN"
    assert check.detail == "not running: submitted jobs wait in the spool until it starts"
    assert check.fix is not None and "systemctl --user enable --now dreamd" in check.fix


def test_daemon_waiting_for_the_lock_is_not_the_holder(tmp_path: Path) -> None:
    spool = make_spool(tmp_path)
    (spool / ".lock").touch()
    ino = (spool / ".lock").stat().st_ino
    waiter_only = f"2: -> FLOCK  ADVISORY  WRITE 4242 fe:00:{ino} 0 EOF\n"
    assert check_daemon(spool, proc=fake_proc(tmp_path, 1, 1, waiter_only)).status == "WARN"


# --------------------------------------------------------------------------- failed jobs


def test_failed_jobs_warn_and_point_at_retry(tmp_path: Path) -> None:
    spool = make_spool(tmp_path)
    job = "20261129T102205.000000Z-3f9c"
    (spool / "failed" / f"{job}.json").write_text("{}")
    (spool / "failed" / f"{job}.error.json").write_text(
        json.dumps(
            {"reason": "memory_dir outside the allowed roots", "failed_at": "2026-11-29T10:22:06Z"}
        )
    )
    check = check_failed_jobs(spool)
    assert check.status == "WARN"
    assert check.detail == (
        f"1 in {spool / 'failed'} (newest {job}: memory_dir outside the allowed roots)"
    )
    assert check.fix is not None and check.fix.endswith("then dreamd retry")


# --------------------------------------------------------------------------- model probe


class _Handler(http.server.BaseHTTPRequestHandler):
    status = 200
    delay = 0.0
    seen: ClassVar[list[dict[str, Any]]] = []

    def do_GET(self) -> None:
        type(self).seen.append(
            {"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()}}
        )
        if self.delay:
            time.sleep(self.delay)
        body = json.dumps({"data": [{"id": "claude-test"}]}).encode()
        try:
            self.send_response(self.status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except OSError:
            pass

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def server() -> Iterator[tuple[str, type[_Handler]]]:
    handler = type("Handler", (_Handler,), {"status": 200, "delay": 0.0, "seen": []})
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", handler
    finally:
        httpd.shutdown()
        httpd.server_close()


def anthropic_config(tmp_path: Path, base_url: str) -> Config:
    return config_for(
        tmp_path,
        f'[model]\nbackend = "anthropic"\nmodel = "claude-test"\nbase_url = "{base_url}"\ntimeout = "2s"\n',
    )


def test_model_probe_ok_sends_key_to_the_configured_endpoint(
    tmp_path: Path, server: tuple[str, type[_Handler]]
) -> None:
    url, handler = server
    check = check_model(anthropic_config(tmp_path, url).model, {"ANTHROPIC_API_KEY": KEY})
    assert check == Check(
        "OK", "model", f"anthropic endpoint {url} answered and accepted the key (model claude-test)"
    )
    [req] = handler.seen
    assert req["path"] == "/v1/models?limit=1"
    assert req["headers"]["x-api-key"] == KEY
    assert req["headers"]["anthropic-version"] == "2023-06-01"


@pytest.mark.parametrize(
    ("status", "expected", "fragment"),
    [
        (401, "FAIL", "rejected the key (HTTP 401)"),
        (403, "FAIL", "rejected the key (HTTP 403)"),
        (404, "WARN", "answered HTTP 404 to GET /v1/models"),
        (529, "WARN", "busy or failing (HTTP 529)"),
        (500, "WARN", "busy or failing (HTTP 500)"),
    ],
)
def test_model_probe_http_answers(
    tmp_path: Path, server: tuple[str, type[_Handler]], status: int, expected: str, fragment: str
) -> None:
    url, handler = server
    handler.status = status
    check = check_model(anthropic_config(tmp_path, url).model, {"ANTHROPIC_API_KEY": KEY})
    assert check.status == expected
    assert fragment in check.detail


def test_model_probe_unreachable_endpoint_fails(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    check = check_model(
        anthropic_config(tmp_path, f"http://127.0.0.1:{port}").model, {"ANTHROPIC_API_KEY": KEY}
    )
    assert check.status == "FAIL"
    assert check.detail.startswith(f"cannot reach http://127.0.0.1:{port} (")


def test_model_probe_times_out(tmp_path: Path, server: tuple[str, type[_Handler]]) -> None:
    url, handler = server
    handler.delay = 1.5
    started = time.monotonic()
    check = check_model(
        anthropic_config(tmp_path, url).model, {"ANTHROPIC_API_KEY": KEY}, timeout=0.3
    )
    assert time.monotonic() - started < 1.2
    assert check.status == "FAIL"
    assert "cannot reach" in check.detail


def test_model_missing_key_fails_without_network(tmp_path: Path) -> None:
    check = check_model(anthropic_config(tmp_path, "").model, {})
    assert check.status == "FAIL"
    assert "ANTHROPIC_API_KEY is not set" in check.detail
    assert "ANTHROPIC_AUTH_TOKEN" in check.detail


def test_model_probe_of_a_local_server_needs_no_key_and_sends_none(
    tmp_path: Path, server: tuple[str, type[_Handler]]
) -> None:
    url, handler = server
    check = check_model(anthropic_config(tmp_path, url).model, {})
    assert check == Check(
        "OK", "model", f"anthropic endpoint {url} answered and needs no credential (model claude-test)"
    )
    [req] = handler.seen
    assert "x-api-key" not in req["headers"] and "authorization" not in req["headers"]
    handler.status = 401
    check = check_model(anthropic_config(tmp_path, url).model, {})
    assert check.status == "FAIL" and "wants a credential (HTTP 401) and none is set" in check.detail


def test_model_probe_sends_a_bearer_token(
    tmp_path: Path, server: tuple[str, type[_Handler]]
) -> None:
    url, handler = server
    check = check_model(anthropic_config(tmp_path, url).model, {"ANTHROPIC_AUTH_TOKEN": "tok-9"})
    assert check.status == "OK" and "accepted the bearer token" in check.detail
    [req] = handler.seen
    assert req["headers"]["authorization"] == "Bearer tok-9"
    assert "x-api-key" not in req["headers"]


def test_doctor_never_prints_the_key(tmp_path: Path, server: tuple[str, type[_Handler]]) -> None:
    url, handler = server
    handler.status = 401
    write_config(
        tmp_path,
        f'[model]\nbackend = "anthropic"\nmodel = "claude-test"\nbase_url = "{url}"\ntimeout = "2s"\n',
    )
    out = io.StringIO()
    env = {"HOME": str(tmp_path), "ANTHROPIC_API_KEY": KEY}
    code = doctor_main(
        tmp_path / "config.toml", env=env, out=out, proc=fake_proc(tmp_path, 65536, 512)
    )
    assert code == 1
    assert KEY not in out.getvalue()
    assert "FAIL  model: " in out.getvalue()


def test_cli_doctor_exit_codes(tmp_path: Path) -> None:
    """`dreamd doctor` exits 0 with only OK/WARN lines and 1 when a check fails."""
    import os
    import subprocess
    import sys

    repo = Path(__file__).resolve().parents[1]
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path), "PYTHONPATH": str(repo)}
    path = write_config(tmp_path)
    cmd = [sys.executable, "-m", "dreamd", "doctor", "--config", str(path)]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.startswith(f"OK    config: {path} is valid\n")
    make_spool(tmp_path, mode=0o777)
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 1
    assert "\nFAIL  spool: group- or world-writable: " in proc.stdout


# --------------------------------------------------------------------------- Claude Code, spools


def test_claude_code_hooks_missing_partial_or_untimed_are_warnings(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path)}
    path = tmp_path / ".claude" / "settings.json"
    check = check_claude_hooks(env)
    assert (check.status, check.detail) == (
        "WARN",
        f"{path} does not exist: no session reaches dreamd",
    )
    write_hooks(tmp_path, {"Stop": [{"hooks": [{"type": "command", "command": "other-tool"}]}]})
    assert check_claude_hooks(env).detail == f"no hook in {path} runs dreamd hook"
    partial = {k: v for k, v in HOOKS_SNIPPET.items() if k in ("Stop", "SessionEnd")}
    write_hooks(tmp_path, partial)
    check = check_claude_hooks(env)
    assert check.status == "WARN"
    assert check.detail == (
        f"{path} runs dreamd hook for 2 of 5 events; missing: SessionStart, UserPromptSubmit, PreCompact"
    )
    assert check.fix is not None and "README" in check.fix
    untimed = dict(
        HOOKS_SNIPPET, SessionEnd=[{"hooks": [{"type": "command", "command": "dreamd hook"}]}]
    )
    write_hooks(tmp_path, untimed)
    check = check_claude_hooks(env)
    assert check.status == "WARN" and check.detail.startswith("no timeout for SessionEnd")
    write_hooks(tmp_path, dict(HOOKS_SNIPPET, Stop=[{"hooks": [
        {"type": "command", "command": "/venv/bin/python -m dreamd hook", "timeout": 5}]}]))  # fmt: skip
    assert check_claude_hooks(env).status == "OK"


def test_jobs_waiting_in_a_spool_no_daemon_reads_are_reported(tmp_path: Path) -> None:
    from dreamd.status.collect import collect_status, render_status

    stray = tmp_path / "state" / "dreamd" / "spool"
    (stray / "new").mkdir(parents=True)
    (stray / "new" / "20261130T000000.000000Z-0123456789.json").write_text("{}")
    env = {"HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path / "state")}
    config = load_config(write_config(tmp_path), env=env)
    check = check_other_spools(config, env)
    assert check.status == "WARN"
    assert check.detail == f"1 job(s) wait in {stray}, but this setup reads {tmp_path / 'spool'}"
    import os

    saved = dict(os.environ)
    try:
        os.environ.update(env)
        status = collect_status(config, dirs=[])
    finally:
        os.environ.clear()
        os.environ.update(saved)
    assert status["other_spools"] == [{"path": str(stray), "new": 1, "cur": 0, "deferred": 0}]
    assert f"another spool {stray} holds jobs" in render_status(status)


# --------------------------------------------------------------------------- hooks that run, mcp, service


def test_a_hook_command_claude_codes_path_cannot_find_fails_doctor(tmp_path: Path) -> None:
    """Issue 20 item 1: the README's bare ``dreamd hook`` with dreamd only in a venv. Claude
    Code's every hook exits 127; doctor said OK because it only read the settings."""
    write_hooks(tmp_path, HOOKS_SNIPPET)
    env = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "XDG_STATE_HOME": str(tmp_path / "st")}
    proc = subprocess.run(
        [sys.executable, "-m", "dreamd", "doctor"], env=env, cwd=tmp_path,
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stdout
    [line] = [x for x in proc.stdout.splitlines() if x.startswith("FAIL")]
    assert line.startswith(
        f"FAIL  claude code hooks run: `dreamd hook` from {tmp_path / '.claude' / 'settings.json'} "
        "(SessionStart, UserPromptSubmit, Stop, PreCompact, SessionEnd): not found on Claude Code's PATH ("
    )
    assert "dreamd: not found" in line
    assert line.endswith(f"(fix: {shlex.quote(sys.executable)} -m dreamd setup (writes the absolute path of dreamd into the hooks))")


def test_a_hook_command_that_exits_non_zero_or_prints_junk_fails(tmp_path: Path) -> None:
    script = tmp_path / "bin" / "dreamd"
    script.parent.mkdir()
    script.write_text("#!/bin/sh\necho 'ImportError: no module named dreamd' >&2\nexit 1\n")
    script.chmod(0o755)
    env = {"HOME": str(tmp_path), "PATH": f"{script.parent}:/usr/bin:/bin"}
    write_hooks(tmp_path, {"Stop": [{"hooks": [{"type": "command", "command": "dreamd hook", "timeout": 5}]}]})
    check = check_hooks_run(env)
    assert check is not None and check.status == "FAIL"
    assert check.detail.endswith("(Stop) exited 1: ImportError: no module named dreamd")
    script.write_text("#!/bin/sh\necho hello\n")
    check = check_hooks_run(env)
    assert check is not None and check.status == "FAIL" and "not hook JSON: 'hello" in check.detail
    assert check_hooks_run({"HOME": str(tmp_path / "nobody")}) is None


def test_a_dreamd_hook_command_that_hides_its_exit_or_never_runs_dreamd_fails(tmp_path: Path) -> None:
    """A probe found doctor passing hooks that cannot work: ``<dreamd> hook; exit 3`` was not
    taken for a dreamd hook at all (a WARN, exit 0), and ``/nonexistent/dreamd hook || true``
    exited 0, so doctor said OK although dreamd never ran. Every dreamd hook command is run, and
    only dreamd hook's own answer to the probe counts as having run."""
    env = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "XDG_STATE_HOME": str(tmp_path / "st")}
    settings = tmp_path / ".claude" / "settings.json"

    def hooks(command: str) -> None:
        write_hooks(tmp_path, {e: [{"hooks": [dict(g[0]["hooks"][0], command=command)]}] for e, g in HOOKS_SNIPPET.items()})

    hooks(f"{HOOK}; exit 3")
    assert check_claude_hooks(env).status == "OK"
    check = check_hooks_run(env)
    assert check is not None and check.status == "FAIL" and f"`{HOOK}; exit 3` from {settings}" in check.detail
    assert " exited 3" in check.detail
    hooks("/nonexistent/bin/dreamd hook || true")
    check = check_hooks_run(env)
    assert check is not None and check.status == "FAIL", check
    assert check.detail.startswith(f"`/nonexistent/bin/dreamd hook || true` from {settings} (SessionStart")
    assert "exited 0 but dreamd hook never answered" in check.detail and "not found" in check.detail
    hooks(f"{HOOK} > /dev/null")
    check = check_hooks_run(env)
    assert check is not None and check.status == "FAIL" and "never answered (no output)" in check.detail
    hooks(HOOK)
    check = check_hooks_run(env)
    assert check is not None and check.status == "OK", check


def test_a_hook_that_runs_but_fails_inside_is_named_by_doctor(tmp_path: Path) -> None:
    """A SessionStart hook swallows its own errors (Claude Code must not show them); doctor's
    probe gets the error back and fails with it."""
    env = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "XDG_STATE_HOME": str(tmp_path / "st"),
           "DREAMD_CONFIG": str(tmp_path / "bad.toml")}  # fmt: skip
    (tmp_path / "bad.toml").write_text("[daemon\nroots = 3\n")
    write_hooks(tmp_path, {"SessionStart": [{"hooks": [{"type": "command", "command": HOOK, "timeout": 30}]}]})
    check = check_hooks_run(env)
    assert check is not None and check.status == "FAIL", check
    assert "ran, and dreamd hook failed: " in check.detail


def test_the_hook_commands_and_the_service_manager_are_asked_at_the_same_time(tmp_path: Path) -> None:
    """Doctor's checks that wait on other processes run side by side (issue 20: doctor's
    start-up): here the hook command only answers once the service manager was asked. Run one
    after the other, the hook would wait out its 5 s timeout and fail."""
    MemoryStore.init(tmp_path / "code" / "app" / ".memory")
    asked = tmp_path / "systemctl-asked"
    gate = f"i=0; while [ ! -e {shlex.quote(str(asked))} ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done; "
    write_hooks(tmp_path, {"SessionStart": [{"hooks": [{"type": "command", "command": gate + HOOK, "timeout": 5}]}]})
    seen_hook_run: list[bool] = []

    def manager(argv: Sequence[str]) -> tuple[int, str]:
        seen_hook_run.append((tmp_path / "st" / "dreamd" / "hook.log").exists())
        asked.touch()
        return no_manager(argv)

    out = io.StringIO()
    env = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "XDG_STATE_HOME": str(tmp_path / "st")}
    run_doctor(config_for(tmp_path), env=env, out=out, proc=fake_proc(tmp_path, 65536, 512), runner=manager)
    [line] = [x for x in out.getvalue().splitlines() if "claude code hooks run" in x]
    assert line.startswith("OK    claude code hooks run: "), line
    assert seen_hook_run == [False]  # systemctl was asked while the hook still waited


def test_the_plugins_hooks_are_found_and_run_through_its_launcher(tmp_path: Path) -> None:
    repo = Path(__file__).resolve().parents[1]
    root = tmp_path / ".claude" / "plugins" / "cache" / "dreamd" / "dreamd" / "0.1.0"
    shutil.copytree(repo / "plugin", root)
    (tmp_path / ".claude" / "plugins" / "installed_plugins.json").write_text(json.dumps(
        {"version": 2, "plugins": {"dreamd@dreamd": [{"scope": "user", "installPath": str(root)}]}}))  # fmt: skip
    env = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "XDG_STATE_HOME": str(tmp_path / "st")}
    assert check_claude_hooks(env).line() == "OK    claude code hooks: plugin dreamd@dreamd runs dreamd hook for all 5 events"
    failed = check_hooks_run(env)
    assert failed is not None and failed.status == "FAIL" and "dreamd plugin: no dreamd command found" in failed.detail
    assert failed.fix is not None and "setup --plugin (records the dreamd the plugin's launcher runs)" in failed.fix
    (tmp_path / "st" / "dreamd").mkdir(parents=True)
    (tmp_path / "st" / "dreamd" / "plugin-command").write_text(f"{sys.executable}\n-m\ndreamd\n")
    ran = check_hooks_run(env)
    assert ran is not None and ran.status == "OK", ran.line()
    assert check_mcp(env).line() == f"OK    mcp server: served by plugin dreamd@dreamd ({root / '.mcp.json'})"
    write_hooks(tmp_path, HOOKS_SNIPPET)
    both = check_claude_hooks(env)
    assert both.detail.endswith("run dreamd hook: every session is sent twice")
    assert both.fix is not None and "setup --plugin takes the dreamd hooks out of" in both.fix and "--undo" not in both.fix


def test_mcp_registration_missing_or_pointing_at_nothing(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    assert check_mcp(env).status == "WARN"
    (tmp_path / ".claude.json").write_text(json.dumps({"mcpServers": {"dreamd": {"command": "/gone/dreamd", "args": ["mcp"]}}}))
    check = check_mcp(env)
    assert check.status == "FAIL" and check.detail == (
        "registered as `/gone/dreamd mcp`, but /gone/dreamd is not found (Claude Code cannot start it)"
    )


@pytest.mark.parametrize(
    ("answers", "status", "detail"),
    [
        ({"is-active": (0, "active"), "is-enabled": (0, "enabled")}, "OK", "systemd user unit dreamd.service: active, enabled"),
        ({"is-active": (3, "failed"), "is-enabled": (0, "enabled")}, "FAIL", "systemd user unit dreamd.service is failed (enabled)"),
        ({"is-active": (3, "inactive"), "is-enabled": (1, "not-found")}, "WARN", "no dreamd user unit"),
    ],
)
def test_service_under_a_systemd_user_manager(
    tmp_path: Path, answers: dict[str, tuple[int, str]], status: str, detail: str
) -> None:
    def runner(argv: Sequence[str]) -> tuple[int, str]:
        return answers.get(argv[2], (0, ""))

    if status != "WARN":
        unit = tmp_path / ".config" / "systemd" / "user" / "dreamd.service"
        unit.parent.mkdir(parents=True)
        unit.touch()
    check = check_service(tmp_path / "spool", {"HOME": str(tmp_path)}, runner, platform="linux", proc=fake_proc(tmp_path, 1, 1))
    assert check.status == status and check.detail.startswith(detail), check.line()


def test_no_service_manager_and_no_daemon_says_how_to_start_it(tmp_path: Path) -> None:
    check = check_service(make_spool(tmp_path), {"HOME": str(tmp_path)}, no_manager, platform="linux", proc=fake_proc(tmp_path, 1, 1))
    assert check.status == "WARN" and "no dreamd run alive" in check.detail
    assert check.fix is not None and check.fix.startswith("nohup ") and " run >> " in check.fix
    assert os.path.isabs(shlex.split(check.fix)[1])


def _asked(calls: list[list[str]]) -> Any:
    def runner(argv: Sequence[str]) -> tuple[int, str]:
        calls.append(list(argv))
        return no_manager(argv)

    return runner


def test_no_systemctl_is_started_where_no_user_manager_can_answer_it(tmp_path: Path) -> None:
    """Issue 20 (doctor's start-up): with no session bus address and no socket of a user manager
    (``$XDG_RUNTIME_DIR/systemd/private`` or ``bus``, nor in ``/run/user/UID``), doctor does not
    start ``systemctl --user``; the verdict is the one systemctl's failure gives."""
    run_user, runtime = tmp_path / "run-user", tmp_path / "runtime"
    runtime.mkdir()
    spool, proc = make_spool(tmp_path), fake_proc(tmp_path, 1, 1)
    for env in ({"HOME": str(tmp_path)}, {"HOME": str(tmp_path), "XDG_RUNTIME_DIR": str(runtime)}):
        calls: list[list[str]] = []
        check = check_service(spool, env, _asked(calls), platform="linux", proc=proc, run_user=run_user)
        assert calls == [], calls
        asked = check_service(spool, env, no_manager, platform="linux", proc=proc)
        assert (check.status, check.fix) == (asked.status, asked.fix) and check.status == "WARN"
        assert check.detail.startswith("no service manager here (systemctl --user: no user manager to connect to (")
        assert check.detail.endswith("and no dreamd run alive: jobs wait in the spool")
        assert f"{run_user / str(os.getuid()) / 'bus'}" in check.detail


@pytest.mark.parametrize("where", ["private", "bus", "run-user", "dbus"])
def test_systemctl_is_asked_wherever_a_user_manager_might_answer(tmp_path: Path, where: str) -> None:
    run_user, runtime = tmp_path / "run-user", tmp_path / "runtime"
    env = {"HOME": str(tmp_path), "XDG_RUNTIME_DIR": str(runtime)}
    socket_at = {"private": runtime / "systemd" / "private", "bus": runtime / "bus",
                 "run-user": run_user / str(os.getuid()) / "bus"}.get(where)  # fmt: skip
    if socket_at is None:
        env["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=/nonexistent/bus"
    else:
        socket_at.parent.mkdir(parents=True)
        os.symlink("/nonexistent/socket", socket_at)  # looked at, never followed: a dangling link counts
    calls: list[list[str]] = []
    check_service(make_spool(tmp_path), env, _asked(calls), platform="linux", proc=fake_proc(tmp_path, 1, 1), run_user=run_user)
    assert calls == [["systemctl", "--user", "show-environment"]]


@pytest.mark.skipif(shutil.which("systemctl") is None, reason="no systemctl here")
def test_where_doctor_skips_systemctl_the_real_systemctl_cannot_connect(tmp_path: Path) -> None:
    """The shortcut is only taken where the real ``systemctl --user`` fails too."""
    from dreamd.setup.service import RUN_USER, no_user_manager, subprocess_runner

    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700)
    for env in ({"PATH": os.environ.get("PATH", "/usr/bin:/bin")}, {"PATH": os.environ.get("PATH", ""), "XDG_RUNTIME_DIR": str(runtime)}):
        if no_user_manager(env, run_user=RUN_USER) is None:
            pytest.skip("a user manager's socket exists on this machine")
        code, said = subprocess_runner(env)(["systemctl", "--user", "show-environment"])
        assert code != 0, said


def test_doctor_runs_distinct_hook_commands_at_once_and_each_only_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two hook commands (say the user settings' and the plugin's) run concurrently, so doctor
    waits for the slower, not for their sum; a command listed twice with the same environment
    runs once, and both listings report its outcome (issue 20)."""
    from dreamd.cli import doctor

    root = Path("/plugin-root")
    hooks = [
        doctor.HookCommand("/a/dreamd hook", ("SessionStart",), 60.0, "settings.json"),
        doctor.HookCommand("/b/dreamd hook", ("SessionStart",), 60.0, "plugin dreamd@x", root),
        doctor.HookCommand("/a/dreamd hook", ("Stop",), 30.0, "other.json"),
    ]
    started: list[str] = []
    both = threading.Barrier(2, timeout=5)
    lock = threading.Lock()

    def run(hook: Any, env: Any) -> tuple[int, str, str]:
        with lock:
            started.append(hook.command)
        both.wait()  # sequential runs would never meet here: BrokenBarrierError after 5 s
        return 0, json.dumps({doctor.PROBE_KEY: doctor.probe_token()}), ""

    monkeypatch.setattr(doctor, "configured_hook_commands", lambda env: hooks)
    monkeypatch.setattr(doctor, "run_hook_command", run)
    check = doctor.check_hooks_run({})
    assert check is not None and check.status == "OK", check
    assert sorted(started) == ["/a/dreamd hook", "/b/dreamd hook"]
    assert check.detail.count("`/a/dreamd hook`") == 2


def test_doctor_runs_a_repeated_hook_command_with_its_shortest_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    from dreamd.cli import doctor

    hooks = [
        doctor.HookCommand("/a/dreamd hook", ("SessionStart",), 60.0, "settings.json"),
        doctor.HookCommand("/a/dreamd hook", ("Stop",), 5.0, "other.json"),
    ]
    seen: list[float] = []
    monkeypatch.setattr(doctor, "configured_hook_commands", lambda env: hooks)
    answer = json.dumps({doctor.PROBE_KEY: doctor.probe_token()})
    monkeypatch.setattr(doctor, "run_hook_command", lambda hook, env: (seen.append(hook.timeout), (0, answer, ""))[1])
    check = doctor.check_hooks_run({})
    assert check is not None and check.status == "OK"
    assert seen == [5.0]


def test_doctor_reads_each_record_file_once_for_its_two_file_checks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The readable check and the secret scan used to read every record twice (issue 20):
    now the scan takes the bytes the readable check read, and reads only what it did not (a
    file named like dreamd's own but in no manifest); their verdicts are as before."""
    import memory.store.layout as layout
    from memory.store.records import make_record
    from memory.store.transaction import Change

    directory = tmp_path / "code" / "app" / ".memory"
    MemoryStore.init(directory).commit(Change(add=[make_record(f"n{i}", "project", f"note {i}", f"Body {i}.") for i in range(3)]))
    (directory / "handwritten.md").write_text(
        "---\nname: staging\ndescription: staging db\ntype: reference\n---\n\nThe password for staging is Pz8!mQ4wLr2.\n"
    )
    (directory / "project_orphan.md").write_text("---\nname: orphan\ndescription: d\ntype: project\n---\n\nx\n")
    (directory / "broken.md").write_bytes(b"---\nname: [\n---\n")
    reads: list[str] = []
    real = layout.open_regular

    def counting(path: Any, **kwargs: Any) -> bytes:
        if str(path).endswith(".md") and Path(path).parent == directory:
            reads.append(Path(path).name)
        return real(path, **kwargs)

    monkeypatch.setattr(layout, "open_regular", counting)
    out = io.StringIO()
    env = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    run_doctor(config_for(tmp_path), env=env, out=out, proc=fake_proc(tmp_path, 65536, 512), runner=no_manager)
    files = sorted(p.name for p in directory.glob("*.md") if p.name != "MEMORY.md")
    assert sorted(reads) == files, reads  # each once, the orphan by the scan alone
    lines = out.getvalue().splitlines()
    [memory_files] = [x for x in lines if x.startswith("WARN  memory files: ")]
    assert "broken.md" in memory_files and "1 file(s) left in place" in memory_files
    [secrets] = [x for x in lines if " secrets: " in x]
    assert secrets.startswith("WARN  secrets: 1 record file(s) hold a secret: ") and "handwritten.md (password)" in secrets
