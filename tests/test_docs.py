"""Generated README sections (config reference, event catalogue) match their sources."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import REPO


def test_readme_generated_sections_are_current() -> None:
    proc = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "gen_docs.py"), "--check"], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr


def test_readme_set_up_commands_are_exactly_three_and_match_ci() -> None:
    """Install and set up (tests/test_setup_claude.py runs it), the tour, the tests."""
    readme = (REPO / "README.md").read_text()
    setup = readme.split("## Set up", 1)[1].split("\n## ", 1)[0]
    blocks = [b.split("\n", 1)[1].strip() for b in setup.split("```sh")[1:]]
    commands = [b.split("```", 1)[0].strip() for b in blocks]
    assert len(commands) == 3
    assert commands[0] == "python3 -m venv .venv && .venv/bin/pip install . && .venv/bin/dreamd setup"
    assert commands[1].endswith("dreamd demo")
    ci = (REPO / ".ci" / "run").read_text()
    test_command = commands[2].split("&&")[-1].strip()
    assert test_command == ".venv/bin/python -m pytest"
    assert test_command in ci
