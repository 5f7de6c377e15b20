"""Config: lookup order, durations, strict validation naming file and key, generated docs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from dreamd.config import (
    SCHEMA,
    default_config,
    format_duration,
    load_config,
    parse_duration,
    render_example,
    render_reference,
)
from memory.errors import ConfigError

REPO = Path(__file__).resolve().parents[1]


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    return {"HOME": str(tmp_path / "home"), **extra}


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("30s", 30.0), ("10m", 600.0), ("24h", 86400.0), ("7d", 604800.0), ("1h30m", 5400.0),
     ("500ms", 0.5), ("90", 90.0), (45, 45.0), (2.5, 2.5), ("0", 0.0), (" 2H ", 7200.0)],
)
def test_parse_duration_accepts_units_and_plain_seconds(text: str | int | float, seconds: float) -> None:
    assert parse_duration(text, where="x") == seconds


@pytest.mark.parametrize("text", ["", "ten", "10x", "-5s", "5s10", "h", "inf", "nan", True, -1])
def test_parse_duration_refuses_garbage_naming_where(text: object) -> None:
    with pytest.raises(ConfigError, match=r"^f\.toml: \[daemon\] tick: expected a duration"):
        parse_duration(text, where="f.toml: [daemon] tick")  # type: ignore[arg-type]


def test_format_duration_is_humane() -> None:
    assert [format_duration(s) for s in (0, 59.9, 60, 3600 * 3 + 12 * 60 + 5, 86400 + 7200, 90061)] == [
        "0s", "59s", "1m", "3h12m", "1d2h", "1d1h",
    ]


def test_no_config_file_gives_documented_defaults(tmp_path: Path) -> None:
    cfg = load_config(env=_env(tmp_path))
    home = tmp_path / "home"
    assert cfg.source is None
    assert cfg.daemon.spool == home / ".local/state/dreamd/spool"
    assert cfg.daemon.roots == (f"{home}/.claude/projects/*/memory", f"{home}/code/*/.memory")
    assert cfg.daemon.projects == {}
    assert (cfg.daemon.workers, cfg.daemon.tick, cfg.daemon.log_format) == (2, 30.0, "auto")
    g = cfg.gates
    assert (g.threshold, g.min_interval, g.scan_throttle, g.min_sessions, g.lock_stale_after,
            g.daily_token_budget) == (10, 86400.0, 600.0, 0, 3600.0, 0)
    m = cfg.model
    assert (m.backend, m.base_url, m.timeout, m.max_retries, m.max_tokens) == ("offline", "", 60.0, 2, 4096)
    assert (cfg.recall.limit, cfg.recall.record_bytes, cfg.recall.record_lines, cfg.recall.session_bytes) == (
        5, 4096, 200, 61440)
    r = cfg.retention
    assert (r.history_generations, r.done_days, r.max_attempts, r.max_job_bytes) == (50, 7, 5, 33554432)


def test_spool_default_follows_xdg_state_home(tmp_path: Path) -> None:
    cfg = load_config(env=_env(tmp_path, XDG_STATE_HOME=str(tmp_path / "state")))
    assert cfg.daemon.spool == tmp_path / "state/dreamd/spool"


def test_lookup_order_flag_then_env_then_xdg(tmp_path: Path) -> None:
    flag = _write(tmp_path / "flag.toml", "[daemon]\nworkers = 3\n")
    named = _write(tmp_path / "named.toml", "[daemon]\nworkers = 4\n")
    xdg = _write(tmp_path / "xdg/dreamd/config.toml", "[daemon]\nworkers = 5\n")
    env = _env(tmp_path, DREAMD_CONFIG=str(named), XDG_CONFIG_HOME=str(tmp_path / "xdg"))
    assert load_config(flag, env=env).daemon.workers == 3
    assert load_config(flag, env=env).source == flag
    assert load_config(env=env).daemon.workers == 4
    del env["DREAMD_CONFIG"]
    assert load_config(env=env).daemon.workers == 5
    assert load_config(env=env).source == xdg
    xdg.unlink()
    assert load_config(env=env).source is None


def test_xdg_default_is_home_dot_config(tmp_path: Path) -> None:
    _write(tmp_path / "home/.config/dreamd/config.toml", "[gates]\nthreshold = 3\n")
    assert load_config(env=_env(tmp_path)).gates.threshold == 3


def test_explicit_missing_file_is_an_error_naming_it(tmp_path: Path) -> None:
    missing = tmp_path / "nope.toml"
    with pytest.raises(ConfigError, match=rf"^{missing}: config file not found$"):
        load_config(missing, env=_env(tmp_path))
    with pytest.raises(ConfigError, match="config file not found"):
        load_config(env=_env(tmp_path, DREAMD_CONFIG=str(missing)))


def test_values_are_converted_and_tilde_expanded(tmp_path: Path) -> None:
    f = _write(tmp_path / "c.toml", """
[daemon]
spool = "~/spool"
roots = ["~/code/*/.memory", "/srv/mem/*"]
projects = { "~/code/app" = "~/code/app/.memory" }
tick = "2s"
log_format = "json"
[gates]
min_interval = "1h30m"
scan_throttle = 0
daily_token_budget = 50000
[model]
backend = "anthropic"
timeout = 12.5
""")
    cfg = load_config(f, env=_env(tmp_path))
    home = tmp_path / "home"
    assert cfg.daemon.spool == home / "spool"
    assert cfg.daemon.roots == (f"{home}/code/*/.memory", "/srv/mem/*")
    assert cfg.daemon.projects == {home / "code/app": home / "code/app/.memory"}
    assert cfg.daemon.tick == 2.0
    assert cfg.gates.min_interval == 5400.0 and cfg.gates.scan_throttle == 0.0
    assert cfg.gates.daily_token_budget == 50000
    assert cfg.model.backend == "anthropic" and cfg.model.timeout == 12.5


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ('[gates]\nthreshold = "ten"\n', r'\[gates\] threshold: expected an integer >= 1, got "ten"$'),
        ("[gates]\nthreshold = 0\n", r"\[gates\] threshold: expected an integer >= 1, got 0$"),
        ("[gates]\nthreshold = true\n", r"\[gates\] threshold: expected an integer >= 1, got true$"),
        ("[gates]\nthreshold = 2.5\n", r"\[gates\] threshold: expected an integer >= 1, got 2.5$"),
        ("[gates]\nthresold = 3\n", r"\[gates\] thresold: unknown key \(did you mean threshold\?\)$"),
        ("[gate]\nthreshold = 3\n", r"\[gate\]: unknown section \(did you mean gates\?\)$"),
        ('[daemon]\ntick = "soon"\n', r'\[daemon\] tick: expected a duration like "30s" or "24h", got "soon"$'),
        ('[daemon]\ntick = "0s"\n', r'\[daemon\] tick: expected a duration > 0s, got "0s"$'),
        ('[daemon]\nlog_format = "xml"\n', r'\[daemon\] log_format: expected one of auto, json, console, got "xml"$'),
        ('[daemon]\nspool = "relative/spool"\n', r"\[daemon\] spool: expected an absolute path"),
        ('[daemon]\nroots = "~/x"\n', r"\[daemon\] roots: expected a list of path patterns"),
        ('[daemon]\nroots = ["rel/*"]\n', r"\[daemon\] roots: expected absolute path patterns"),
        ("[daemon]\nworkers = 0\n", r"\[daemon\] workers: expected an integer >= 1, got 0$"),
        ('[model]\nbackend = "openai"\n', r"\[model\] backend: expected one of offline, anthropic"),
        ('[model]\nmodel = ""\n', r"\[model\] model: expected a non-empty string"),
        ("daemon = 3\n", r"daemon: expected a \[daemon\] table, got 3$"),
    ],
)
def test_bad_config_names_file_and_key(tmp_path: Path, toml: str, message: str) -> None:
    f = _write(tmp_path / "dreamd.toml", toml)
    with pytest.raises(ConfigError, match=rf"^{f}: {message}"):
        load_config(f, env=_env(tmp_path))


def test_invalid_toml_names_the_file(tmp_path: Path) -> None:
    f = _write(tmp_path / "bad.toml", "[daemon\nworkers = \n")
    with pytest.raises(ConfigError, match=rf"^{f}: invalid TOML: "):
        load_config(f, env=_env(tmp_path))


def test_committed_example_config_is_the_generated_one() -> None:
    assert (REPO / "config.toml").read_text(encoding="utf-8") == render_example(), (
        "config.toml is stale: run python scripts/gen_config.py"
    )


def test_example_config_parses_to_the_defaults(tmp_path: Path) -> None:
    f = _write(tmp_path / "config.toml", render_example())
    env = _env(tmp_path)
    loaded = load_config(f, env=env)
    assert loaded.source == f
    defaults = default_config(env=env)
    for section in ("daemon", "gates", "model", "recall", "retention"):
        assert getattr(loaded, section) == getattr(defaults, section)


def test_reference_table_lists_every_key_once() -> None:
    table = render_reference()
    lines = table.splitlines()
    assert lines[0] == "| Key | Type | Default | Meaning |"
    assert len(lines) == 2 + len(SCHEMA)
    for key in SCHEMA:
        assert sum(f"`[{key.section}] {key.name}`" in line for line in lines) == 1
    assert "| `[gates] min_interval` | duration | `\"24h\"` |" in table


def test_every_schema_key_is_documented_and_default_valid(tmp_path: Path) -> None:
    for key in SCHEMA:
        assert key.doc.endswith("."), key.name
        key.convert(key.default, "x", {"HOME": str(tmp_path)})


def test_config_and_gates_import_nothing_heavy() -> None:
    """The hook path imports dreamd.config: stdlib only (no structlog, YAML, watchdog, …)."""
    import subprocess
    import sys

    code = (
        "import sys, dreamd.config, dreamd.jobs.gates; "
        "print(sorted({m.split('.')[0] for m in sys.modules} & "
        "{'structlog', 'yaml', 'watchdog', 'apscheduler', 'anthropic', 'filelock', 'httpx'}))"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_default_spool_follows_dreamd_spool_like_the_client(tmp_path: Path) -> None:
    from memory.spool.queue import default_spool_path

    env = {"HOME": str(tmp_path), "DREAMD_SPOOL": str(tmp_path / "shared-spool")}
    assert load_config(None, env=env).daemon.spool == default_spool_path(env) == tmp_path / "shared-spool"


# --------------------------------------------------------------------------- the parsed-config cache (issue 20)


def _no_toml_parser(monkeypatch: pytest.MonkeyPatch) -> None:
    import tomllib

    def refuse(text: str) -> Any:
        raise AssertionError("the unchanged config was parsed again")

    monkeypatch.setattr(tomllib, "loads", refuse)


def test_an_unchanged_config_is_not_parsed_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from memory.settings import cache_home

    path = tmp_path / "config.toml"
    path.write_text('[gates]\nthreshold = 7\n[daemon]\nroots = ["~/code/*/.memory"]\n')
    env = {"HOME": str(tmp_path)}
    first = load_config(path, env=env)
    [cached] = list(cache_home(env).iterdir())
    assert cached.stat().st_mode & 0o777 == 0o600 and cache_home(env).stat().st_mode & 0o777 == 0o700
    with monkeypatch.context() as m:
        _no_toml_parser(m)
        assert load_config(path, env=env) == first
    path.write_text("[gates]\nthreshold = 8\n")
    assert load_config(path, env=env).gates.threshold == 8  # a changed file is parsed
    path.write_text("[gates\nthreshold = 8\n")
    for _ in range(2):  # errors are never cached
        with pytest.raises(ConfigError, match="invalid TOML"):
            load_config(path, env=env)


def test_a_cache_that_disagrees_with_the_file_or_is_a_link_is_never_believed(tmp_path: Path) -> None:
    import json

    from memory.settings import cache_home

    path = tmp_path / "config.toml"
    path.write_text("[gates]\nthreshold = 7\n")
    env = {"HOME": str(tmp_path)}
    load_config(path, env=env)
    [cached] = list(cache_home(env).iterdir())
    doc = json.loads(cached.read_text())
    cached.write_text(json.dumps({**doc, "data": {"gates": {"threshold": 99}}, "text": "[gates]\nthreshold = 99\n"}))
    assert load_config(path, env=env).gates.threshold == 7
    planted = tmp_path / "planted.json"
    planted.write_text(json.dumps({**doc, "data": {"gates": {"threshold": 99}}}))
    cached.unlink()
    cached.symlink_to(planted)
    assert load_config(path, env=env).gates.threshold == 7  # never read through a link
    assert json.loads(planted.read_text())["data"]["gates"]["threshold"] == 99  # nor written through one


def test_a_config_with_a_toml_date_is_parsed_every_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from memory.settings import cache_home

    path = tmp_path / "config.toml"
    path.write_text("[gates]\nthreshold = 1979-05-27\n")
    env = {"HOME": str(tmp_path)}
    with pytest.raises(ConfigError, match="threshold"):
        load_config(path, env=env)
    assert not cache_home(env).exists() or list(cache_home(env).iterdir()) == []
