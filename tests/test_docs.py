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


def test_operations_installs_from_this_repository_and_gives_the_five_event_hook_advice() -> None:
    """Issue 20 item 8: docs/operations.md said ``pipx install dreamd`` (no such package on the
    index) and gave the old two-event hook advice. Its install lines must install this
    repository (``.``, what tests/test_install_pipx.py runs), and its hook advice must name every
    event ``dreamd hook`` answers and the absolute command ``dreamd setup`` writes."""
    from dreamd.hook.main import HOOK_EVENTS

    ops = (REPO / "docs" / "operations.md").read_text()
    install = ops.split("## 1. Install", 1)[1].split("```sh", 1)[1].split("```", 1)[0]
    lines = [line.split("#", 1)[0].strip() for line in install.strip().splitlines()]
    assert "pipx install ." in lines
    for line in lines:
        words = line.replace("&&", " ").split()
        assert "install" in words and words[-1] == ".", f"installs something other than this repository: {line}"
    advice = ops.split("### 1.4 Agents", 1)[1].split("\n## ", 1)[0]
    assert all(f"`{event}`" in advice for event in HOOK_EVENTS)
    assert "dreamd setup" in advice and "absolute" in advice


def _code_lines(text: str) -> list[str]:
    """Every command line of the fenced code blocks of ``text``, comments dropped."""
    blocks = [b.split("```", 1)[0] for b in text.split("```")[1::2]]
    return [line.split("#", 1)[0].strip() for block in blocks for line in block.splitlines()[1:] if line.strip()]


def test_no_install_line_is_one_pep_668_refuses_on_a_stock_debian_or_macos() -> None:
    """Probe finding 7 (2026-12-02): docs/operations.md offered ``pip install --user .``, which
    Debian's and Homebrew's Python refuse (PEP 668, externally-managed-environment). Every
    install line offered in a code block of the README or operations.md installs into a venv or
    through a tool that makes one (pipx, uv tool), and both name pipx and uv."""
    for doc in ("README.md", "docs/operations.md"):
        text = (REPO / doc).read_text()
        for line in _code_lines(text):
            words = line.replace("&&", " ").split()
            installers = [w for w in words if w in ("pip", "pip3", "pipx", "uv") or w.endswith(("/pip", "/pip3"))]
            if "install" not in words or not installers or words[0] in ("sudo", "brew"):
                continue
            user_site = "--user" in words or "--break-system-packages" in words
            assert not user_site, f"{doc}: {line}"
            assert words[0] in ("pipx", "uv") or "venv" in line or "/bin/pip" in line, f"{doc}: {line}"
        assert "pipx install ." in text and "uv tool install ." in text, doc
