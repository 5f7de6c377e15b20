"""A stop asked for while the daemon is still starting ends it cleanly (exit 0), not by
Python's default SIGTERM action (-15): issue 21, the multi-machine torture run's
"daemon exited -15 on SIGTERM"."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _run_with_sigterm_during_startup(tmp_path: Path, sig: signal.Signals) -> subprocess.CompletedProcess[str]:
    """A real ``dreamd``-like process: ``supervisor.run`` with a work module whose context,
    built while the daemon starts (where the model is made), receives ``sig`` — as a service
    manager's stop, or a test harness's, does when it comes a moment after the start."""
    (tmp_path / "mem").mkdir()
    config = tmp_path / "config.toml"
    config.write_text(f'[daemon]\nspool = "{tmp_path / "spool"}"\nroots = ["{tmp_path}/mem/*"]\n'
                      'log_format = "json"\n')
    script = textwrap.dedent(f"""
        import os, signal, types
        import tests.test_daemon_stub as stub
        from dreamd.config import load_config
        from dreamd.daemon import supervisor

        class Context(stub.Context):
            @classmethod
            def create(cls, config):
                os.kill(os.getpid(), signal.{sig.name})
                return cls(config)

        work = types.SimpleNamespace(Context=Context, execute=stub.execute, dir_state=stub.dir_state,
                                     dream=stub.dream)
        config = load_config({str(config)!r})
        raise SystemExit(supervisor.run(config, work=work))
    """)
    env = {**os.environ, "PYTHONPATH": str(REPO), "XDG_STATE_HOME": str(tmp_path / "state"),
           "DREAMD_NO_WATCH": "1"}
    env.pop("NOTIFY_SOCKET", None)
    return subprocess.run([sys.executable, "-c", script], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=120)


def test_sigterm_while_the_daemon_starts_stops_it_cleanly_with_exit_0(tmp_path: Path) -> None:
    proc = _run_with_sigterm_during_startup(tmp_path, signal.SIGTERM)
    assert proc.returncode == 0, (proc.returncode, proc.stdout[-2000:], proc.stderr[-2000:])
    assert '"event": "daemon.stopping"' in proc.stdout and '"signal": "SIGTERM"' in proc.stdout
    assert '"exit_code": 0' in proc.stdout
    assert not os.listdir(tmp_path / "spool" / "cur")


def test_sigint_while_the_daemon_starts_stops_it_cleanly_with_exit_0(tmp_path: Path) -> None:
    proc = _run_with_sigterm_during_startup(tmp_path, signal.SIGINT)
    assert proc.returncode == 0, (proc.returncode, proc.stdout[-2000:], proc.stderr[-2000:])
    assert '"signal": "SIGINT"' in proc.stdout
