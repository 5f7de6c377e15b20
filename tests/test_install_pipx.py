"""The README's install line, as a user runs it: ``pipx install .``, then ``dreamd setup``.

The README tells a user to put ``dreamd`` on PATH with ``pipx install .`` and run
``dreamd setup``; this test does exactly that on an empty HOME: pipx itself comes from PyPI
(``pip install pipx`` into a throwaway venv), ``PIPX_HOME``/``PIPX_BIN_DIR`` are temporary, the
repository's package files are copied as a fresh checkout has them, and the installed app
resolves its dependencies from the index as pipx does for anyone. Then ``dreamd`` must be the
one in ``PIPX_BIN_DIR``, ``dreamd setup`` must exit 0, ``dreamd doctor`` must pass (no FAIL;
its hooks-run check runs the hook commands the way Claude Code does), and every hook command
setup wrote must run under ``sh -c`` with a PATH that does not hold the pipx bin directory.

It downloads, so it runs under CI (``CI`` set, as ``.ci/run`` sets it), where anything missing
fails it, and is skipped in a developer's run unless ``DREAMD_TEST_PIPX=1``. ``.ci/run`` gives
pip a cache of its own run, so the dependencies come from the install it made minutes before.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _wanted() -> bool:
    flags = (os.environ.get("CI", ""), os.environ.get("DREAMD_TEST_PIPX", ""))
    return any(f.lower() not in ("", "0", "false", "no") for f in flags)


pytestmark = pytest.mark.skipif(not _wanted(), reason="downloads pipx and the dependencies: runs under CI (or DREAMD_TEST_PIPX=1)")


def _run(argv: list[str | Path], env: dict[str, str], cwd: Path, timeout: float = 300,
         stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(a) for a in argv], env=env, cwd=cwd, input=stdin, capture_output=True,
                          text=True, timeout=timeout, check=False)  # fmt: skip


def _base_env() -> dict[str, str]:
    """The machine's pip settings (index, certificates, this run's cache), nothing of this venv."""
    keep = ("PIP_CACHE_DIR", "PIP_NO_CACHE_DIR", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_CONFIG_FILE",
            "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "http_proxy", "https_proxy", "no_proxy", "LANG")
    return {k: os.environ[k] for k in keep if k in os.environ}


def _checkout(tmp_path: Path) -> Path:
    """The repository's package files, as a fresh clone has them."""
    checkout = tmp_path / "dreamd"
    checkout.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info")
    for name in ("memory", "dreamd"):
        shutil.copytree(REPO / name, checkout / name, ignore=ignore)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(REPO / name, checkout / name)
    return checkout


def test_the_wheel_builds_with_an_spdx_license_and_no_deprecation_warning(tmp_path: Path) -> None:
    """``license = { text = "MIT" }`` built with a SetuptoolsDeprecationWarning (builds break
    after 2027-02-18); the SPDX string needs setuptools>=77 in the build requirements."""
    checkout = _checkout(tmp_path)
    env = {**_base_env(), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path / "tool-home")}
    out = tmp_path / "wheels"
    built = _run([sys.executable, "-m", "pip", "wheel", "-v", "--no-deps", "-w", out, "."], env, checkout, timeout=600)
    assert built.returncode == 0, built.stdout[-1500:] + built.stderr[-3000:]
    log = built.stdout + built.stderr
    assert "SetuptoolsDeprecationWarning" not in log and "2027" not in log, log[-3000:]
    [wheel] = out.glob("dreamd-*.whl")
    import zipfile

    with zipfile.ZipFile(wheel) as zf:
        [meta] = [n for n in zf.namelist() if n.endswith(".dist-info/METADATA")]
        headers = zf.read(meta).decode().split("\n\n", 1)[0].splitlines()
    assert "License-Expression: MIT" in headers and not any(h.startswith("License: ") for h in headers)


def test_pipx_install_then_dreamd_setup_gives_a_working_installation(tmp_path: Path) -> None:
    # pipx, from PyPI, in a throwaway venv
    tool = tmp_path / "pipx-venv"
    env = {**_base_env(), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path / "tool-home")}
    made = _run([sys.executable, "-m", "venv", tool], env, tmp_path, timeout=120)
    assert made.returncode == 0, made.stderr
    got = _run([tool / "bin" / "pip", "install", "--quiet", "pipx"], env, tmp_path)
    assert got.returncode == 0, f"pip install pipx failed: {got.stderr[-2000:]}"

    # `pipx install .` in a checkout of the repository (its package files, as a clone has them)
    checkout = _checkout(tmp_path)
    pipx_home, bin_dir = tmp_path / "pipx", tmp_path / "bin"
    env |= {"PIPX_HOME": str(pipx_home), "PIPX_BIN_DIR": str(bin_dir), "PIPX_MAN_DIR": str(tmp_path / "man")}
    installed = _run([tool / "bin" / "pipx", "install", "."], env, checkout, timeout=600)
    assert installed.returncode == 0, f"pipx install . failed: {installed.stdout[-1500:]}{installed.stderr[-3000:]}"
    dreamd = bin_dir / "dreamd"
    assert dreamd.is_file(), sorted(p.name for p in bin_dir.iterdir()) if bin_dir.is_dir() else "no PIPX_BIN_DIR"

    # the user: an empty HOME, PIPX_BIN_DIR on PATH (what `pipx ensurepath` adds), nothing else
    home = tmp_path / "home"
    home.mkdir()
    project = tmp_path / "project"
    project.mkdir()
    user = {**_base_env(), "HOME": str(home), "PATH": f"{bin_dir}:/usr/bin:/bin"}
    found = _run(["sh", "-c", "command -v dreamd"], user, project)
    assert found.stdout.strip() == str(dreamd), found.stderr

    setup = _run(["dreamd", "setup"], user, project)
    assert setup.returncode == 0, setup.stdout + setup.stderr
    doctor = _run(["dreamd", "doctor"], user, project)
    fails = [line for line in doctor.stdout.splitlines() if line.startswith("FAIL")]
    assert doctor.returncode == 0 and fails == [], doctor.stdout + doctor.stderr
    assert "OK    claude code hooks run:" in doctor.stdout, doctor.stdout

    # every hook setup wrote resolves without the pipx bin directory on PATH (Claude Code's may lack it)
    settings = json.loads((home / ".claude" / "settings.json").read_text(encoding="utf-8"))
    commands = {h["command"] for groups in settings["hooks"].values() for g in groups for h in g["hooks"]}
    assert commands, settings
    bare = {**user, "PATH": "/usr/bin:/bin"}
    payload = json.dumps({"hook_event_name": "SessionStart", "session_id": "pipx-check", "cwd": str(project),
                          "source": "startup"})  # fmt: skip
    for command in commands:
        assert command.split()[0] in (str(dreamd), str(dreamd.resolve())), command
        ran = _run(["sh", "-c", command], bare, project, timeout=60, stdin=payload)
        assert ran.returncode == 0, f"{command}: exit {ran.returncode}: {ran.stderr[-1000:]}"
