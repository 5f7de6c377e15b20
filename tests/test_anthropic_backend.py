"""The real Anthropic SDK against a scripted Messages API on 127.0.0.1 (DESIGN §6).

Every answer goes through the same gate as the offline backend: a valid answer is used, every
malformed one changes nothing (with its reason logged), transient HTTP failures are retried by
the SDK and end as transient outcomes when they persist, and usage reaches the ledger.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import MutableMapping
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pytest
from structlog.testing import capture_logs

from dreamd.models import ops
from dreamd.models.anthropic_backend import AnthropicModel
from dreamd.models.factory import make_model
from dreamd.models.prompts import PlanRecord
from dreamd.models.usage import UsageLedger
from memory.errors import ConfigError, ModelMisconfigured, TransientError
from memory.model.answer_gate import AnswerRejected, check_selection
from memory.model.llm import Usage
from tests.fake_anthropic import FakeAnthropic, Hang, Status, fake_anthropic, message

__all__ = ["fake_anthropic"]  # the fixture, imported for pytest

KEY = "sk-ant-test-0123456789"
TODAY = date(2026, 11, 29)
REPO = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Turn:
    role: str
    text: str
    timestamp: str | None
    message_id: str = "m"


@dataclass(frozen=True)
class Entry:
    name: str
    type: str
    description: str


TURNS = [
    Turn("user", "Please remember that I always want tabs, never spaces.", "2026-11-28T09:00:00Z"),
    Turn("assistant", "Noted: tabs for indentation.", "2026-11-28T09:00:05Z"),
]
INDEX = [Entry("release-freeze", "project", "Code freeze starts 2026-12-01")]
GOOD = [
    {
        "name": "prefers-tabs",
        "type": "user",
        "description": "User wants tabs, never spaces, for indentation",
        "body": "Indent with tabs, never spaces.",
    }
]


@pytest.fixture
def backend(fake_anthropic: FakeAnthropic, monkeypatch: pytest.MonkeyPatch) -> AnthropicModel:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    return AnthropicModel(
        model="claude-test-model", base_url=fake_anthropic.url, timeout=1.0, max_retries=2
    )


def sent_key(headers: dict[str, str]) -> str | None:
    """The SDK sends the key as ``x-api-key`` (older versions) or a bearer token (newer)."""
    if "x-api-key" in headers:
        return headers["x-api-key"]
    auth = headers.get("authorization", "")
    return auth.removeprefix("Bearer ") if auth.startswith("Bearer ") else None


def events(logs: list[MutableMapping[str, Any]], name: str) -> list[MutableMapping[str, Any]]:
    return [e for e in logs if e["event"] == name]


# ----------------------------------------------------------------------------- a valid answer


def test_valid_extraction_answer_is_used_and_request_is_cacheable(
    backend: AnthropicModel, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.push(
        message(
            json.dumps(GOOD),
            input_tokens=1200,
            output_tokens=80,
            cache_read_input_tokens=1100,
            cache_creation_input_tokens=0,
        )
    )
    with capture_logs() as logs:
        out = ops.extract(backend, TURNS, INDEX, today=TODAY, max_tokens=777)

    assert out.error is None and not out.transient and not out.rejected
    assert [(r.name, r.type, r.body) for r in out.records] == [
        ("prefers-tabs", "user", "Indent with tabs, never spaces.\n")
    ]
    assert out.usage == Usage(1200, 80, 1100, 0)

    (req,) = fake_anthropic.requests
    assert req.path.split("?")[0] == "/v1/messages"
    assert sent_key(req.headers) == KEY
    assert "anthropic-version" in req.headers
    body = req.body
    assert body["model"] == "claude-test-model"
    assert body["max_tokens"] == 777
    assert body["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert "four types" in body["system"][0]["text"]
    (msg,) = body["messages"]
    assert msg["role"] == "user"
    stable, volatile = msg["content"]
    assert stable["cache_control"] == {"type": "ephemeral"}
    assert "cache_control" not in volatile
    # the stable prefix holds the index and no turn; the turns follow in the uncached part
    assert "release-freeze" in stable["text"] and "tabs" not in stable["text"]
    assert volatile["text"].startswith('"today": "2026-11-29"')
    assert "never spaces" in volatile["text"]

    (call,) = events(logs, "model.call")
    assert call["outcome"] == "ok"
    assert call["model"] == "claude-test"  # the model the server says answered
    assert (call["input_tokens"], call["output_tokens"]) == (1200, 80)
    assert (call["cache_read_tokens"], call["cache_write_tokens"]) == (1100, 0)
    assert call["duration_ms"] > 0


def test_usage_with_cache_tokens_reaches_completion_and_ledger(
    backend: AnthropicModel, fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    fake_anthropic.push(
        message(
            "[]",
            input_tokens=30,
            output_tokens=2,
            cache_read_input_tokens=0,
            cache_creation_input_tokens=1500,
        ),
        message(
            "[]",
            input_tokens=40,
            output_tokens=3,
            cache_read_input_tokens=1500,
            cache_creation_input_tokens=None,
        ),
    )
    completion = backend.complete("system", "prompt", 64)
    assert completion.usage == Usage(30, 2, 0, 1500)
    assert completion.stop_reason == "end_turn" and completion.text == "[]"

    ledger = UsageLedger(tmp_path / "state" / "usage.json")
    now = datetime(2026, 11, 29, 23, 59, tzinfo=UTC)
    ledger.record("/m", completion.usage, now=now)
    out = ops.extract(backend, TURNS, [], today=TODAY, max_tokens=64)
    assert out.usage == Usage(40, 3, 1500, 0)  # null cache field counts as 0
    ledger.record("/m", out.usage, now=now)

    assert ledger.totals("/m") == {
        "calls": 2,
        "input_tokens": 70,
        "output_tokens": 5,
        "cache_read_tokens": 1500,
        "cache_write_tokens": 1500,
    }
    assert ledger.spent_today("/m", now=now) == 30 + 2 + 1500 + 40 + 3 + 1500


def test_valid_plan_answer_is_used(backend: AnthropicModel, fake_anthropic: FakeAnthropic) -> None:
    records = [
        PlanRecord("prefers-tabs", "user", "Tabs", "Use tabs.\n"),
        PlanRecord("indent-tabs", "user", "Indent with tabs", "Tabs please.\n"),
        PlanRecord("old-demo", "project", "Demo on 2026-01-01", "Demo.\n", expires="2026-01-02"),
    ]
    answer = [
        {"source_names": ["prefers-tabs", "indent-tabs"], "result": GOOD[0]},
        {"source_names": ["old-demo"], "result": None},
    ]
    fake_anthropic.push(message(json.dumps(answer)))
    out = ops.plan(backend, records, ["indent-tabs"], today=TODAY, max_tokens=500)
    assert out.error is None
    assert [(o.source_names, o.result.name if o.result else None) for o in out.ops] == [
        (("prefers-tabs", "indent-tabs"), "prefers-tabs"),
        (("old-demo",), None),
    ]
    payload = fake_anthropic.requests[0].body["messages"][0]["content"]
    text = "".join(block["text"] for block in payload)
    assert '"task": "consolidate"' in text and '"recent": ["indent-tabs"]' in text


# ----------------------------------------------------------------------------- rejected answers


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        (message("```json\n" + json.dumps(GOOD) + "\n```"), "answer is not JSON"),
        (message("Here are the memories:\n" + json.dumps(GOOD)), "answer is not JSON"),
        (message(json.dumps(GOOD) + "\nLet me know if you need more."), "Extra data"),
        (message(json.dumps([{**GOOD[0], "confidence": 0.9}])), "unexpected confidence"),
        (message(json.dumps(GOOD), stop_reason="max_tokens"), "truncated (stop_reason max_tokens)"),
        (
            message(None, tool_use=[("save_memory", GOOD[0])], stop_reason="tool_use"),
            "1 tool call(s) (save_memory)",
        ),
        (
            message(json.dumps(GOOD), tool_use=[("save_memory", GOOD[0])]),
            "1 tool call(s) (save_memory)",
        ),
        (message(""), "answer text is empty"),
        (message(None), "answer text is empty"),
        (message(json.dumps([GOOD[0], GOOD[0]])), "name 'prefers-tabs' repeats in the batch"),
        (
            message(json.dumps([{**GOOD[0], "name": "release-freeze"}])),
            "'release-freeze' already exists",
        ),
        (
            message(json.dumps([{**GOOD[0], "type": "preference"}])),
            "type 'preference' is not one of",
        ),
        (message(json.dumps({"memories": GOOD})), "must be a JSON array, got object"),
    ],
    ids=[
        "fenced",
        "prose-before",
        "prose-after",
        "extra-key",
        "max-tokens",
        "tool-use-only",
        "tool-use-with-text",
        "empty-text",
        "no-text-block",
        "duplicate-names",
        "existing-name",
        "unknown-type",
        "wrapped-object",
    ],
)
def test_rejected_extraction_changes_nothing_and_logs_reason(
    backend: AnthropicModel, fake_anthropic: FakeAnthropic, reply: dict[str, Any], reason: str
) -> None:
    fake_anthropic.push(reply)
    with capture_logs() as logs:
        out = ops.extract(backend, TURNS, INDEX, today=TODAY, max_tokens=300)
    assert out.records == []
    assert out.error is not None and reason in out.error
    assert out.rejected and not out.transient
    assert out.usage == Usage(10, 5, 0, 0)  # the refused answer still cost tokens
    (rejected,) = events(logs, "model.answer_rejected")
    assert reason in rejected["reason"]
    assert rejected["log_level"] == "warning"
    (call,) = events(logs, "model.call")
    assert call["outcome"] == "rejected"
    assert len(fake_anthropic.requests) == 1  # a bad answer is not retried by the SDK


def test_rejected_plan_keeps_every_record(
    backend: AnthropicModel, fake_anthropic: FakeAnthropic
) -> None:
    records = [PlanRecord("a", "user", "A", "a\n"), PlanRecord("b", "user", "B", "b\n")]
    fake_anthropic.push(message(json.dumps([{"source_names": ["a", "ghost"], "result": None}])))
    with capture_logs() as logs:
        out = ops.plan(backend, records, [], today=TODAY, max_tokens=300)
    assert out.ops == [] and out.rejected and not out.transient
    assert out.error == "plan op 0: source 'ghost' is not a candidate record"
    assert events(logs, "model.answer_rejected")[0]["reason"] == out.error


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ('["prefers-tabs", "prefers-tabs"]', "selected twice"),
        ('["prefers-tabs", "made-up"]', "'made-up' is not a known record"),
        ('Relevant: ["prefers-tabs"]', "not JSON"),
    ],
    ids=["duplicate", "unknown", "prose"],
)
def test_bad_selection_answer_is_rejected_so_recall_falls_back(
    backend: AnthropicModel, fake_anthropic: FakeAnthropic, text: str, reason: str
) -> None:
    fake_anthropic.push(message('["release-freeze", "prefers-tabs"]'), message(text))
    known = {"prefers-tabs", "release-freeze", "other"}
    good = backend.complete("select", "query", 100)
    assert check_selection(good, known=known) == ["release-freeze", "prefers-tabs"]
    bad = backend.complete("select", "query", 100)
    with pytest.raises(AnswerRejected, match=reason):
        check_selection(bad, known=known)


# ----------------------------------------------------------------------------- transient failures


@pytest.mark.parametrize(
    "failures",
    [[Status(429)], [Status(529)], [Status(500)], [Status(529), Status(503)]],
    ids=["429", "529", "500", "529-then-503"],
)
def test_transient_status_is_retried_by_the_sdk_then_succeeds(
    backend: AnthropicModel, fake_anthropic: FakeAnthropic, failures: list[Status]
) -> None:
    fake_anthropic.push(*failures, message(json.dumps(GOOD)))
    started = time.monotonic()
    out = ops.extract(backend, TURNS, INDEX, today=TODAY, max_tokens=300)
    assert out.error is None and [r.name for r in out.records] == ["prefers-tabs"]
    assert len(fake_anthropic.requests) == len(failures) + 1
    assert [r.headers["x-stainless-retry-count"] for r in fake_anthropic.requests] == [
        str(i) for i in range(len(failures) + 1)
    ]
    assert time.monotonic() - started < 2.0  # retry-after-ms: 10 is honoured


@pytest.mark.parametrize("code", [429, 529, 500, 502])
def test_persistent_transient_status_ends_transient(
    backend: AnthropicModel, fake_anthropic: FakeAnthropic, code: int
) -> None:
    fake_anthropic.push(Status(code, "busy"), Status(code, "busy"), Status(code, "busy"))
    with capture_logs() as logs:
        out = ops.extract(backend, TURNS, INDEX, today=TODAY, max_tokens=300)
    assert out.transient and not out.rejected and out.records == []
    assert out.error == f"model claude-test-model: HTTP {code}: busy"
    assert len(fake_anthropic.requests) == 3  # first try + max_retries=2
    assert fake_anthropic.remaining == 0
    (call,) = events(logs, "model.call")
    assert call["outcome"] == "transient" and call["input_tokens"] == 0
    assert events(logs, "model.error")[0]["transient"] is True


def test_persistent_status_raises_transient_error_from_complete(
    backend: AnthropicModel, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.push(
        Status(529, "Overloaded"), Status(529, "Overloaded"), Status(529, "Overloaded")
    )
    with pytest.raises(TransientError, match="HTTP 529: Overloaded"):
        backend.complete("s", "p", 10)


def test_hang_past_the_timeout_is_transient(
    fake_anthropic: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    model = AnthropicModel(
        model="claude-test-model", base_url=fake_anthropic.url, timeout=0.3, max_retries=0
    )
    fake_anthropic.push(Hang(5.0))
    started = time.monotonic()
    out = ops.extract(model, TURNS, INDEX, today=TODAY, max_tokens=300)
    elapsed = time.monotonic() - started
    assert out.transient and out.error is not None and "timed out after 0.3s" in out.error
    assert 0.25 < elapsed < 2.0
    assert len(fake_anthropic.requests) == 1


def test_connection_refused_is_transient(monkeypatch: pytest.MonkeyPatch) -> None:
    server = FakeAnthropic()
    url = server.url
    server.close()  # nothing listens on the port any more
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    model = AnthropicModel(model="m", base_url=url, timeout=0.5, max_retries=0)
    with pytest.raises(TransientError, match="cannot connect to"):
        model.complete("s", "p", 10)


# ----------------------------------------------------------------------------- permanent failures


def test_missing_key_against_anthropic_is_a_config_error_naming_both_variables(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    with pytest.raises(ConfigError, match=r"ANTHROPIC_API_KEY.*ANTHROPIC_AUTH_TOKEN.*base_url"):
        AnthropicModel(model="m")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "  ")
    with pytest.raises(ConfigError, match="ANTHROPIC_API_KEY"):
        make_model({"backend": "anthropic", "base_url": ""})


def test_401_is_misconfigured_with_a_clear_message_about_the_key(
    backend: AnthropicModel, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.push(Status(401, "invalid x-api-key"))
    with pytest.raises(ModelMisconfigured) as info:
        backend.complete("s", "p", 10)
    message_text = str(info.value)
    assert "HTTP 401" in message_text and "ANTHROPIC_API_KEY" in message_text
    assert "refused" in message_text
    assert KEY not in message_text
    assert len(fake_anthropic.requests) == 1


@pytest.mark.parametrize(
    ("code", "says"),
    [
        (400, "malformed"),
        (403, "lacks permission"),
        (404, "no model 'claude-test-model'"),
    ],
)
def test_client_errors_mean_a_misconfigured_model_not_retried_not_rejected(
    backend: AnthropicModel, fake_anthropic: FakeAnthropic, code: int, says: str
) -> None:
    fake_anthropic.push(Status(code, "nope"))
    with capture_logs() as logs:
        out = ops.extract(backend, TURNS, INDEX, today=TODAY, max_tokens=300)
    assert out.misconfigured and not out.transient and not out.rejected
    assert out.error is not None
    assert out.error.startswith(f"model misconfigured: model claude-test-model: HTTP {code}, ")
    assert says in out.error and out.error.endswith(": nope")
    assert len(fake_anthropic.requests) == 1
    assert events(logs, "model.call")[0]["outcome"] == "error"
    (err,) = events(logs, "model.error")
    assert err["misconfigured"] is True and err["transient"] is False


def test_other_client_errors_are_permanent_but_not_misconfiguration(
    backend: AnthropicModel, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.push(Status(413, "prompt too large"))
    out = ops.extract(backend, TURNS, INDEX, today=TODAY, max_tokens=300)
    assert not out.misconfigured and not out.transient and not out.rejected
    assert out.error == "PermanentError: model claude-test-model: HTTP 413: prompt too large"


# ----------------------------------------------------------------------------- local servers


def test_bearer_token_is_sent_as_authorization_when_no_api_key(
    fake_anthropic: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", "gateway-token-42")
    model = make_model({"backend": "anthropic", "base_url": fake_anthropic.url, "model": "m"})
    fake_anthropic.push(message("[]"), Status(401, "token expired"))
    assert model.complete("s", "p", 10).text == "[]"
    (req,) = fake_anthropic.requests
    assert req.headers["authorization"] == "Bearer gateway-token-42"
    assert "x-api-key" not in req.headers
    with pytest.raises(ModelMisconfigured, match="ANTHROPIC_AUTH_TOKEN was refused") as info:
        model.complete("s", "p", 10)
    assert "gateway-token-42" not in str(info.value)


def test_api_key_wins_over_a_bearer_token(
    fake_anthropic: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", "gateway-token-42")
    model = make_model({"backend": "anthropic", "base_url": fake_anthropic.url, "model": "m"})
    fake_anthropic.push(message("[]"))
    model.complete("s", "p", 10)
    (req,) = fake_anthropic.requests
    assert sent_key(req.headers) == KEY
    assert "gateway-token-42" not in json.dumps(req.headers)


def test_local_server_needs_no_key_and_gets_no_credential_header(
    fake_anthropic: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    model = make_model({"backend": "anthropic", "base_url": fake_anthropic.url, "model": "qwen3"})
    fake_anthropic.push(message(json.dumps(GOOD)), Status(401, "key required"))
    out = ops.extract(model, TURNS, INDEX, today=TODAY, max_tokens=300)
    assert out.error is None and [r.name for r in out.records] == ["prefers-tabs"]
    (req,) = fake_anthropic.requests
    assert "authorization" not in req.headers and "x-api-key" not in req.headers
    with pytest.raises(ModelMisconfigured, match="wants a credential: set ANTHROPIC_API_KEY"):
        model.complete("s", "p", 10)


def test_server_that_ignores_cache_control_counts_zero_cached_tokens(
    backend: AnthropicModel, fake_anthropic: FakeAnthropic
) -> None:
    """Ollama and llama.cpp leave the cache fields out of ``usage`` (or send null)."""
    body = message(json.dumps(GOOD), input_tokens=900, output_tokens=40)
    del body["usage"]["cache_read_input_tokens"]
    del body["usage"]["cache_creation_input_tokens"]
    fake_anthropic.push(
        body,
        message("[]", cache_read_input_tokens=None, cache_creation_input_tokens=None),
    )
    out = ops.extract(backend, TURNS, INDEX, today=TODAY, max_tokens=300)
    assert out.error is None and out.usage == Usage(900, 40, 0, 0)
    assert backend.complete("s", "p", 10).usage == Usage(10, 5, 0, 0)


# ----------------------------------------------------------------------------- config and imports


def test_make_model_builds_the_anthropic_backend_from_config(
    fake_anthropic: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    model = make_model(
        {
            "backend": "anthropic",
            "model": "claude-from-config",
            "base_url": fake_anthropic.url,
            "timeout": "1s",
            "max_retries": 0,
            "max_tokens": 99,
        }
    )
    assert isinstance(model, AnthropicModel)
    assert model.name == "claude-from-config" and model.max_tokens == 99
    fake_anthropic.push(Status(500))
    with pytest.raises(TransientError):
        model.complete("s", "p", 10)
    assert len(fake_anthropic.requests) == 1  # max_retries = 0 from config


@pytest.mark.parametrize(
    ("section", "message_part"),
    [
        ({"backend": "openai"}, "unknown backend 'openai'"),
        ({"backend": "anthropic", "timeout": "soon"}, "[model] timeout"),
        ({"backend": "anthropic", "timeout": 0}, "[model] timeout: must be positive"),
        ({"backend": "anthropic", "max_retries": -1}, "[model] max_retries"),
        ({"backend": "anthropic", "max_tokens": "lots"}, "[model] max_tokens"),
        ({"backend": "anthropic", "model": ""}, "[model] model: empty"),
    ],
)
def test_make_model_config_errors(
    monkeypatch: pytest.MonkeyPatch, section: dict[str, Any], message_part: str
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    with pytest.raises(ConfigError) as info:
        make_model(section)
    assert message_part in str(info.value)


def test_client_path_modules_do_not_import_the_sdk() -> None:
    code = (
        "import sys, memory.model.answer_gate, memory.model.llm, dreamd.models.factory, dreamd.models.prompts; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('anthropic', 'httpx', 'watchdog', 'apscheduler')))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    assert result.stdout.strip() == "[]"
