"""The ``claude-code`` backend: the pinned real Claude Code CLI, pointed at the loopback fake
Messages API, carries dreamd's model calls (DESIGN §6).

Real-CLI tests (about a second each): an extraction job round-trips through ``dreamd once``
with no transcript written and none of the user's hooks run, a bad answer is refused by the
gate, a hang is killed at the timeout, a refused key or a missing login is a misconfigured
model. A missing binary needs no CLI. The mapping of the CLI's JSON result onto the error
classes is pinned separately with a scripted executable (fast, one case per outcome).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import date
from pathlib import Path

import pytest

from dreamd.models import ops
from dreamd.models.claude_code_backend import ClaudeCodeModel
from dreamd.models.factory import make_model
from dreamd.models.prompts import EXTRACT_SYSTEM
from memory.errors import ConfigError, ModelMisconfigured, PermanentError, TransientError
from memory.model.llm import Usage
from memory.store.transaction import MemoryStore
from tests.claude_cli import ClaudeHome, claude_binary
from tests.fake_anthropic import FakeAnthropic, Hang, Request, ScriptItem, Status, message

REPO = Path(__file__).resolve().parents[1]
TODAY = date(2026, 11, 29)
GOOD = [
    {
        "name": "deploys-on-fridays-banned",
        "type": "feedback",
        "description": "No production deploys on Fridays",
        "body": "Never deploy to production on a Friday; the on-call rota is thin.",
    }
]


class Turn:
    def __init__(self, role: str, text: str) -> None:
        self.role, self.text, self.timestamp, self.message_id = role, text, None, "m"


TURNS = [
    Turn("user", "From now on: never deploy to production on a Friday, the on-call rota is thin."),
    Turn("assistant", "Understood, no Friday production deploys."),
]


def _is_extraction(req: Request) -> bool:
    """The product's extraction system prompt reached the API (Claude Code adds blocks of its own)."""
    system = req.body.get("system") if isinstance(req.body, dict) else None
    blocks = system if isinstance(system, list) else [{"text": system or ""}]
    return any(isinstance(b, dict) and b.get("text") == EXTRACT_SYSTEM for b in blocks)


def _model_requests(fake: FakeAnthropic) -> list[Request]:
    return [r for r in fake.requests if r.path.split("?")[0] == "/v1/messages"]


@pytest.fixture
def home(tmp_path: Path) -> Iterator[tuple[ClaudeHome, FakeAnthropic]]:
    """A real CLI in an isolated HOME whose user settings carry hooks that leave a mark."""
    exe = claude_binary()
    fake = FakeAnthropic(responder=lambda req: message("[]"))
    marks = tmp_path / "hook-marks"
    marks.mkdir()
    hooks = {
        event: [{"hooks": [{"type": "command", "command": f"touch {marks}/{event}"}]}]
        for event in ("SessionStart", "UserPromptSubmit", "Stop", "SessionEnd")
    }
    claude = ClaudeHome(home=tmp_path / "home", exe=exe, base_url=fake.url)
    claude.settings = {"hooks": hooks}
    claude.write_settings()
    try:
        yield claude, fake
    finally:
        fake.close()


def backend(claude: ClaudeHome, **kwargs: object) -> ClaudeCodeModel:
    section = {
        "backend": "claude-code", "model": "claude-test-model", "claude_path": str(claude.exe),
        "timeout": "60s", "max_retries": 0, "max_tokens": 900, **kwargs,
    }  # fmt: skip
    model = make_model(section, env=claude.env())
    assert isinstance(model, ClaudeCodeModel)
    return model


# ----------------------------------------------------------------------------- the real CLI


def test_extraction_job_round_trips_through_dreamd_once_with_no_transcript_and_no_hooks(
    tmp_path: Path, home: tuple[ClaudeHome, FakeAnthropic]
) -> None:
    claude, fake = home
    claude.settings["verbose"] = True  # a user setting that turns the JSON result into an array
    claude.write_settings()
    fake.responder = lambda req: message(json.dumps(GOOD) if _is_extraction(req) else "ok")
    memory_dir = tmp_path / "code" / "app" / ".memory"
    MemoryStore.init(memory_dir)
    config = tmp_path / "config.toml"
    config.write_text(
        "[daemon]\n"
        f'spool = "{tmp_path / "spool"}"\n'
        f'roots = ["{tmp_path / "code"}/*/.memory"]\n'
        "[gates]\nthreshold = 100\n"
        "[model]\n"
        'backend = "claude-code"\nmodel = "claude-test-model"\n'
        f'claude_path = "{claude.exe}"\nmax_retries = 0\nmax_tokens = 1234\ntimeout = "60s"\n'
    )
    env = {**claude.env(), "DREAMD_SPOOL": str(tmp_path / "spool"), "PYTHONPATH": str(REPO)}
    transcript = "\n".join(json.dumps({"role": t.role, "content": t.text}) for t in TURNS)
    session = tmp_path / "session.jsonl"
    session.write_text(transcript + "\n")

    def dreamd(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "dreamd", *args], cwd=tmp_path, env=env,
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip

    submitted = dreamd("submit", str(session), "--memory-dir", str(memory_dir))
    assert submitted.returncode == 0, submitted.stderr
    ran = dreamd("once", "--config", str(config), "--log-format", "json")
    assert ran.returncode == 0, ran.stderr

    store = MemoryStore(memory_dir)
    assert [e.name for e in store.read().records] == ["deploys-on-fridays-banned"]
    (entry,) = store.read().records
    assert "Friday" in (memory_dir / entry.file).read_text()
    assert len(list((tmp_path / "spool" / "done").glob("*.json"))) == 1

    (req,) = [r for r in _model_requests(fake) if _is_extraction(r)]
    assert req.body["model"] == "claude-test-model"
    assert req.body["max_tokens"] == 1234
    assert not req.body.get("tools"), "no tool may be offered to the model"
    assert "thinking" not in req.body
    prompt = json.dumps(req.body["messages"][0])
    assert "never deploy to production on a Friday" in prompt
    # nothing persisted, nothing for a hook or a scan to pick up, none of the user's hooks ran
    assert claude.transcripts() == []
    assert sorted(p.name for p in (tmp_path / "hook-marks").iterdir()) == []
    log = [json.loads(line) for line in ran.stdout.splitlines() if line.startswith("{")]
    (call,) = [e for e in log if e.get("event") == "model.call"]
    assert call["outcome"] == "ok" and call["model"] == "claude-test-model"
    assert call["input_tokens"] == 10 and call["output_tokens"] == 5


def test_a_dream_plans_through_the_cli_and_commits_the_merge(
    tmp_path: Path, home: tuple[ClaudeHome, FakeAnthropic]
) -> None:
    from datetime import UTC, datetime

    from dreamd.config import load_config
    from dreamd.jobs.work import Context, dream
    from dreamd.models.prompts import CONSOLIDATE_SYSTEM
    from memory.store.records import make_record
    from memory.store.transaction import Change

    claude, fake = home
    merged = {"name": "tabs-for-indentation", "type": "user",
              "description": "User indents with tabs", "body": "Indent with tabs, never spaces. Tabs, please."}
    plan = [{"source_names": ["likes-tabs", "prefers-tabs"], "result": merged}]

    def respond(req: Request) -> ScriptItem:
        system = req.body.get("system") or []
        planning = any(isinstance(b, dict) and b.get("text") == CONSOLIDATE_SYSTEM for b in system)
        return message(json.dumps(plan) if planning else "[]")

    fake.responder = respond
    memory_dir = tmp_path / "code" / "app" / ".memory"
    store = MemoryStore.init(memory_dir)
    store.commit(Change(add=[
        make_record("prefers-tabs", "user", "User prefers tabs", "Tabs, please."),
        make_record("likes-tabs", "user", "User likes tab indentation", "Indent with tabs."),
    ], actor="manual"))  # fmt: skip
    cfg = tmp_path / "config.toml"
    cfg.write_text(f'[daemon]\nspool = "{tmp_path / "spool"}"\nroots = ["{tmp_path / "code"}/*/.memory"]\n')
    config = load_config(cfg, env={"HOME": str(tmp_path)})
    ctx = Context(config=config, model=backend(claude),
                  clock=lambda: datetime(2026, 11, 30, 12, tzinfo=UTC))  # fmt: skip
    result = dream(memory_dir, ctx, force=True)
    assert result.status == "applied", result.reason
    assert [e.name for e in store.read().records] == ["tabs-for-indentation"]
    assert len([r for r in _model_requests(fake) if "source_names" in json.dumps(r.body)]) == 1
    assert claude.transcripts() == []


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        (message(json.dumps(GOOD), stop_reason="max_tokens"), "answer was truncated"),
        (message(None, stop_reason="tool_use", tool_use=[("Write", {"x": 1})]), "tool call"),
    ],
    ids=["max-tokens", "tool-use"],
)
def test_bad_answers_from_the_cli_are_refused_by_the_gate(
    home: tuple[ClaudeHome, FakeAnthropic], answer: ScriptItem, reason: str
) -> None:
    claude, fake = home
    fake.responder = lambda req: answer
    out = ops.extract(backend(claude), TURNS, [], today=TODAY, max_tokens=300)
    assert out.rejected and not out.transient and not out.misconfigured
    assert out.records == [] and out.error is not None and reason in out.error
    assert out.usage.input_tokens > 0  # the refused answer still cost tokens


def test_a_hanging_call_is_killed_at_the_timeout_and_is_transient(
    home: tuple[ClaudeHome, FakeAnthropic],
) -> None:
    claude, fake = home
    fake.push(Hang(30.0))
    model = backend(claude, timeout="3s")
    started = time.monotonic()
    with pytest.raises(TransientError, match=r"did not answer within 3s \(killed\)"):
        model.complete("system", "prompt", 100)
    assert time.monotonic() - started < 10
    ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True, check=True)
    assert str(claude.exe) not in ps.stdout, "the CLI (and its children) must be gone"


def test_a_refused_key_is_a_misconfigured_model_without_retries(
    home: tuple[ClaudeHome, FakeAnthropic],
) -> None:
    claude, fake = home
    fake.responder = lambda req: Status(401, "invalid x-api-key")
    with pytest.raises(ModelMisconfigured, match="HTTP 401") as info:
        backend(claude, max_retries=0).complete("system", "prompt", 100)
    assert "claude setup-token" in str(info.value)
    assert len(_model_requests(fake)) == 1


def test_a_missing_login_is_a_misconfigured_model(
    home: tuple[ClaudeHome, FakeAnthropic],
) -> None:
    claude, fake = home
    claude.extra_env = {"ANTHROPIC_API_KEY": ""}
    with pytest.raises(ModelMisconfigured, match="not logged in") as info:
        backend(claude).complete("system", "prompt", 100)
    assert "/login" in str(info.value)
    assert _model_requests(fake) == []


# ----------------------------------------------------------------------------- no CLI at all


def test_a_missing_binary_is_a_misconfigured_model(tmp_path: Path) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    model = make_model({"backend": "claude-code"}, env={"PATH": str(empty)})
    with pytest.raises(ModelMisconfigured, match="'claude' not found on PATH"):
        model.complete("s", "p", 10)
    named = make_model(
        {"backend": "claude-code", "claude_path": str(tmp_path / "nope" / "claude")}, env={}
    )
    with pytest.raises(ModelMisconfigured, match="not an executable file"):
        named.complete("s", "p", 10)
    out = ops.extract(model, TURNS, [], today=TODAY, max_tokens=300)
    assert out.misconfigured and out.error is not None
    assert out.error.startswith("model misconfigured: claude CLI 'claude' not found")


@pytest.mark.parametrize(
    ("section", "part"),
    [
        ({"model": ""}, "[model] model: empty"),
        ({"claude_path": 3}, "[model] claude_path: expected a string"),
        ({"timeout": "soon"}, "[model] timeout"),
        ({"max_retries": -1}, "[model] max_retries"),
    ],
)
def test_config_errors(section: dict[str, object], part: str) -> None:
    with pytest.raises(ConfigError) as info:
        make_model({"backend": "claude-code", **section})
    assert part in str(info.value)


# ----------------------------------------------------------------------------- result mapping


def scripted(tmp_path: Path, stdout: str, *, code: int = 0, stderr: str = "") -> ClaudeCodeModel:
    """A stand-in executable that prints what a CLI printed, to pin the mapping cheaply."""
    exe = tmp_path / "claude"
    args_file = tmp_path / "args.json"
    exe.write_text(
        f"#!{sys.executable}\n"
        "import json, os, sys\n"
        f"json.dump({{'argv': sys.argv[1:], 'stdin': sys.stdin.read(), 'cwd': os.getcwd(),\n"
        f"  'env': {{k: v for k, v in os.environ.items() if k.startswith(('CLAUDE', 'MAX', 'DREAMD'))}}}},\n"
        f"  open({str(args_file)!r}, 'w'))\n"
        f"sys.stdout.write({stdout!r}); sys.stderr.write({stderr!r}); sys.exit({code})\n"
    )
    exe.chmod(0o755)
    return ClaudeCodeModel(model="sonnet", claude_path=str(exe), max_retries=1, env=dict(os.environ))


def result(**fields: object) -> str:
    doc: dict[str, object] = {
        "type": "result", "subtype": "success", "is_error": False, "result": "[]",
        "stop_reason": "end_turn", "usage": {"input_tokens": 7, "output_tokens": 3},
        "modelUsage": {"claude-sonnet-4-5-20250929": {}},
    }  # fmt: skip
    doc.update(fields)
    return json.dumps(doc) + "\n"


def test_command_line_env_and_usage_of_a_good_answer(tmp_path: Path) -> None:
    model = scripted(tmp_path, result(usage={"input_tokens": 7, "output_tokens": 3,
                                             "cache_read_input_tokens": 2}))  # fmt: skip
    out = model.complete("THE SYSTEM", "THE PROMPT", 555)
    assert (out.text, out.stop_reason, out.tool_calls) == ("[]", "end_turn", ())
    assert out.usage == Usage(7, 3, 2, 0) and out.model == "claude-sonnet-4-5-20250929"
    seen = json.loads((tmp_path / "args.json").read_text())
    argv = seen["argv"]
    assert seen["stdin"] == "THE PROMPT"
    assert argv[argv.index("--system-prompt") + 1] == "THE SYSTEM"
    assert argv[argv.index("--tools") + 1] == ""
    assert argv[argv.index("--max-turns") + 1] == "1"
    assert json.loads(argv[argv.index("--settings") + 1]) == {"disableAllHooks": True}
    assert argv[argv.index("--model") + 1] == "sonnet"
    assert {"-p", "--no-session-persistence", "--strict-mcp-config"} <= set(argv)
    assert "--bare" not in argv  # it refuses subscription (OAuth) logins
    assert seen["env"]["CLAUDE_CODE_MAX_OUTPUT_TOKENS"] == "555"
    assert seen["env"]["CLAUDE_CODE_MAX_RETRIES"] == "1"
    assert seen["env"]["DREAMD_MODEL_CALL"] == "1"
    assert seen["env"]["MAX_THINKING_TOKENS"] == "0"
    assert Path(seen["cwd"]).name.startswith("dreamd-claude-")
    assert not Path(seen["cwd"]).exists(), "the private working directory is removed"


def test_verbose_output_an_array_of_messages_is_read_too(tmp_path: Path) -> None:
    """A user's ``verbose: true`` setting turns the one result object into an array."""
    messages = [{"type": "system", "subtype": "init"}, {"type": "assistant"}]
    stdout = json.dumps([*messages, json.loads(result(result='["a"]'))])
    assert scripted(tmp_path, "warning: x\n" + result()).complete("s", "p", 10).text == "[]"
    assert scripted(tmp_path, stdout).complete("s", "p", 10).text == '["a"]'


@pytest.mark.parametrize(
    ("stdout", "code", "stderr", "error", "says"),
    [
        (result(is_error=True, api_error_status=529, api_error_type="overloaded_error",
                result="API Error: overloaded"), 1, "", TransientError, "HTTP 529"),
        (result(is_error=True, api_error_status=429, result="rate limited"), 1, "",
         TransientError, "HTTP 429"),
        (result(is_error=True, api_error_status=404, api_error_type="not_found_error",
                result="There's an issue with the selected model"), 1, "",
         ModelMisconfigured, "HTTP 404"),
        (result(is_error=True, api_error_status=400, result="API Error: 400 bad"), 1, "",
         ModelMisconfigured, "HTTP 400"),
        (result(is_error=True, api_error_status=413, result="too large"), 1, "",
         PermanentError, "HTTP 413"),
        (result(is_error=True, api_error="connection_failed",
                result="API Error: Connection refused"), 1, "", TransientError, "Connection"),
        (result(is_error=True, result="Not logged in · Please run /login"), 1, "",
         ModelMisconfigured, "not logged in"),
        ("", 1, "error: unknown option '--max-turns'\n", ModelMisconfigured, "update Claude Code"),
        ("", 1, "Segmentation fault\n", TransientError, "printed no result"),
        ("not json at all\n", 0, "", TransientError, "printed no result"),
    ],
    ids=["529", "429", "404", "400", "413", "connection", "no-login", "old-cli", "crash",
         "garbage"],
)  # fmt: skip
def test_failures_map_onto_the_error_classes_the_daemon_acts_on(
    tmp_path: Path, stdout: str, code: int, stderr: str, error: type[Exception], says: str
) -> None:
    with pytest.raises(error) as info:
        scripted(tmp_path, stdout, code=code, stderr=stderr).complete("s", "p", 10)
    assert type(info.value) is error and says in str(info.value)


@pytest.mark.parametrize(
    ("stdout", "reason"),
    [
        (result(is_error=True, api_error="max_output_tokens", stop_reason="stop_sequence",
                result="API Error: Claude's response exceeded the 10 output token maximum."),
         "answer was truncated (stop_reason max_tokens)"),
        (result(is_error=True, subtype="error_max_turns", stop_reason="tool_use", result=None),
         "answer contains 1 tool call(s)"),
        (result(result=""), "answer text is empty"),
        (result(result="Sure! []"), "answer is not JSON"),
    ],
    ids=["max-tokens", "tool-use", "empty", "prose"],
)  # fmt: skip
def test_bad_answer_kinds_reach_the_gate_as_answers(
    tmp_path: Path, stdout: str, reason: str
) -> None:
    out = ops.extract(scripted(tmp_path, stdout, code=1), TURNS, [], today=TODAY, max_tokens=50)
    assert out.rejected and not out.misconfigured and not out.transient
    assert out.error is not None and out.error.startswith(reason)


# ----------------------------------------------------------------------------- doctor


def test_doctor_asks_the_real_cli_for_its_login_without_a_model_call(
    tmp_path: Path, home: tuple[ClaudeHome, FakeAnthropic]
) -> None:
    from dreamd.cli.doctor import check_model
    from dreamd.config import load_config

    claude, fake = home
    cfg = tmp_path / "config.toml"
    cfg.write_text(f'[model]\nbackend = "claude-code"\nclaude_path = "{claude.exe}"\n')
    section = load_config(cfg, env={"HOME": str(tmp_path)}).model
    check = check_model(section, claude.env())
    assert check.status == "OK", check
    assert f"{claude.exe} logged in (api_key)" in check.detail
    check = check_model(section, {**claude.env(), "ANTHROPIC_API_KEY": ""})
    assert (check.status, check.detail) == ("FAIL", f"claude CLI {claude.exe} is not logged in for this user")
    assert check.fix is not None and "/login" in check.fix
    assert _model_requests(fake) == []
    empty = tmp_path / "bin"
    empty.mkdir()
    cfg.write_text('[model]\nbackend = "claude-code"\n')
    check = check_model(load_config(cfg, env={"HOME": str(tmp_path)}).model, {"PATH": str(empty)})
    assert check.status == "FAIL" and "'claude' not found on PATH" in check.detail
