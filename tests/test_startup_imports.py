"""What the everyday commands import: the start-up target (issue 20) pinned as import lists.

``benchmarks/bench_startup.py`` times ``dreamd status``, ``recall``, ``log`` and ``doctor``
against ``python -c pass``; a timing cannot be a unit test, but what a command imports can.
Each command runs here in a real interpreter, as the bench runs it (offline model, TOML config,
one managed directory), and the modules it loaded are checked: only its own command group of
``dreamd/cli/``, and none of the modules that were made lazy because these commands never use
them. A heavy import that creeps back onto one of these paths fails here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dreamd.cli.main import COMMANDS
from dreamd.setup.service import no_user_manager
from memory.store.records import make_record
from memory.store.transaction import Change, MemoryStore

REPO = Path(__file__).resolve().parents[1]

NEVER = (
    "anthropic", "apscheduler", "watchdog.observers", "mcp", "pydantic", "starlette", "uvicorn",
    "structlog", "filelock", "numpy", "onnxruntime", "tokenizers", "yaml",
    "importlib.metadata", "email", "socket", "secrets", "difflib", "plistlib", "zipfile", "tomllib", "logging",
    "typing",
    "memory.retrieval.embed", "dreamd.embeddings.model", "memory.model.llm",
    "dreamd.jobs.work", "dreamd.models.factory", "dreamd.models.offline", "dreamd.daemon",
)  # fmt: skip
"""Modules none of the four commands needs here (a prefix covers its submodules)."""

NO_DATACLASSES = ("dataclasses", "inspect", "ast", "dis")
"""The store's ``Record``, ``ManifestEntry``, ``Manifest`` and ``LeaseInfo``, the history's
``LogEntry`` and the config are :mod:`memory.values` classes: a reader builds no dataclass."""

ALSO_NEVER = {
    "status": ("memory.retrieval.tokens", "memory.retrieval", *NO_DATACLASSES),
    "log": ("memory.retrieval", "tomllib", "hashlib", "dreamd.status", *NO_DATACLASSES),
    "doctor": ("memory.retrieval.tokens", "memory.retrieval", *NO_DATACLASSES),
    "recall": ("dreamd.status", "dreamd.jobs", *NO_DATACLASSES),
}
"""Per command: what it in particular does not load (``log`` reads no config and hashes nothing;
``recall`` parses no record it parsed before: its parsed-record cache spares it PyYAML). No
command parses an unchanged config again (the parsed-config cache spares them ``tomllib``)."""

GROUP = {name: group for name, group, _, _ in COMMANDS}
SHARED_CLI = {"dreamd.cli", "dreamd.cli.main", "dreamd.cli.common"}

PROBE = """
import json, sys
sys.argv = ["dreamd", *json.loads(sys.argv[1])]
from dreamd.command import main
try:
    code = main()
finally:
    with open(OUT, "w") as fh:
        json.dump(sorted(sys.modules), fh)
sys.exit(code)
"""


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    root = tmp_path_factory.mktemp("startup")
    memory_dir = root / "code" / "app" / ".memory"
    store = MemoryStore.init(memory_dir)
    store.commit(Change(add=[
        make_record(f"note-{i}", "project", f"Note {i} about the deploy script", f"Run deploy {i} with care.")
        for i in range(5)
    ]))  # fmt: skip
    config = root / "config.toml"
    config.write_text(f'[daemon]\nroots = ["{root}/code/*/.memory"]\nspool = "{root}/spool"\n', encoding="utf-8")
    (root / "home").mkdir()
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(root / "home"),
        "XDG_STATE_HOME": str(root / "state"),
        "XDG_CONFIG_HOME": str(root / "xdg"),
        "DREAMD_CONFIG": str(config),
        "PYTHONPATH": str(REPO),
    }
    return memory_dir, env


def loaded(args: list[str], world: tuple[Path, dict[str, str]], tmp_path: Path) -> set[str]:
    memory_dir, env = world
    out = tmp_path / "modules.json"
    code = PROBE.replace("OUT", repr(str(out)))
    proc = subprocess.run([sys.executable, "-c", code, json.dumps(args)], env=env, cwd=memory_dir.parent,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode in (0, 1), proc.stderr  # doctor exits 1 when a check fails (no daemon)
    assert proc.stdout.strip(), proc.stderr
    return set(json.loads(out.read_text(encoding="utf-8")))


def _hits(modules: set[str], banned: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if any(m == b or m.startswith(b + ".") for b in banned))


@pytest.mark.parametrize("command", ["status", "recall", "log", "doctor"])
def test_an_everyday_command_loads_only_its_own_group_and_nothing_it_does_not_use(
    command: str, world: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    memory_dir, _ = world
    args = {"status": ["status"], "recall": ["recall", str(memory_dir), "how do we deploy?"],
            "log": ["log", str(memory_dir)], "doctor": ["doctor"]}[command]
    first = loaded(args, world, tmp_path)  # a first run parses the config (and recall the set) and caches it
    if command == "recall":
        assert "yaml" in first
    modules = loaded(args, world, tmp_path)
    cli = {m for m in modules if m.startswith("dreamd.cli")}
    assert cli - SHARED_CLI == {f"dreamd.cli.{GROUP[command]}"}
    banned = NEVER + ALSO_NEVER[command]
    if command == "doctor" and no_user_manager(world[1]) is not None:
        # offline model, no hooks, no user manager to ask: doctor starts no process at all
        banned += ("subprocess",)
    if command == "recall":
        assert "memory.retrieval.recall" in modules  # the probe did run the command
    assert _hits(modules, banned) == []


def test_the_probe_sees_a_heavy_import(world: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    """The check above can fail: ``dreamd consolidate`` runs the job logic and the offline
    model, both of which it bans for the everyday commands."""
    memory_dir, _ = world
    modules = loaded(["consolidate", str(memory_dir), "--dry-run"], world, tmp_path)
    assert "dreamd.cli.dreams" in modules
    assert _hits(modules, NEVER) != []
