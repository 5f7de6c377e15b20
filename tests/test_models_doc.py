"""Every example config in ``docs/models.md`` loads and works: the ``anthropic`` ones drive a
loopback fake Messages API the way the named server would answer (no cache fields, no key
unless the doc says to set one); the ``claude-code`` one builds the CLI backend."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from dreamd.config import load_config
from dreamd.models import ops
from dreamd.models.anthropic_backend import AnthropicModel
from dreamd.models.claude_code_backend import ClaudeCodeModel
from dreamd.models.factory import make_model
from tests.fake_anthropic import FakeAnthropic, message

DOC = Path(__file__).resolve().parents[1] / "docs" / "models.md"
EXAMPLE = re.compile(r"<!-- example: ([a-z-]+) -->\n```toml\n(.*?)```", re.S)
ANSWER = [{"name": "build-with-make", "type": "project", "description": "Builds run through make",
           "body": "Run `make build`; the CI does the same."}]  # fmt: skip


class Turn:
    role, text, timestamp, message_id = "user", "We build everything with make.", None, "m"


def examples() -> dict[str, str]:
    found = dict(EXAMPLE.findall(DOC.read_text(encoding="utf-8")))
    assert set(found) == {"claude-code", "anthropic", "ollama", "llama-cpp"}, sorted(found)
    return found


@pytest.fixture
def local_server() -> Iterator[FakeAnthropic]:
    """Answers like Ollama / llama.cpp: no cache fields in ``usage``."""
    body = message(json.dumps(ANSWER), model="qwen3-coder", input_tokens=321, output_tokens=45)
    del body["usage"]["cache_read_input_tokens"], body["usage"]["cache_creation_input_tokens"]
    server = FakeAnthropic(responder=lambda req: body)
    try:
        yield server
    finally:
        server.close()


def load(tmp_path: Path, text: str) -> dict[str, object]:
    path = tmp_path / "config.toml"
    path.write_text(text)
    config = load_config(path, env={"HOME": str(tmp_path)})
    return config.model.to_dict()


@pytest.mark.parametrize(
    ("name", "env", "header"),
    [
        ("ollama", {}, None),
        ("llama-cpp", {"ANTHROPIC_AUTH_TOKEN": "SECRET"}, "Bearer SECRET"),
        ("llama-cpp", {}, None),
    ],
    ids=["ollama-no-key", "llama-cpp-api-key", "llama-cpp-no-key"],
)
def test_local_server_examples_extract_through_the_fake_server(
    tmp_path: Path, local_server: FakeAnthropic, name: str, env: dict[str, str], header: str | None
) -> None:
    section = load(tmp_path, examples()[name])
    documented = urlsplit(str(section["base_url"]))
    assert documented.hostname in ("localhost", "127.0.0.1") and documented.path in ("", "/")
    section["base_url"] = local_server.url  # the documented server, played by the fake
    model = make_model(section, env=env)
    assert isinstance(model, AnthropicModel)
    out = ops.extract(model, [Turn()], [], today=date(2026, 11, 30), max_tokens=int(str(section["max_tokens"])))
    assert out.error is None, out.error
    assert [r.name for r in out.records] == ["build-with-make"]
    assert (out.usage.input_tokens, out.usage.cache_read_input_tokens) == (321, 0)
    (req,) = local_server.requests
    assert req.path.split("?")[0] == "/v1/messages"
    assert req.body["model"] == section["model"]
    assert req.headers.get("authorization") == header
    assert "x-api-key" not in req.headers


def test_anthropic_example_needs_the_key_from_the_environment(
    tmp_path: Path, local_server: FakeAnthropic
) -> None:
    section = load(tmp_path, examples()["anthropic"])
    assert section["base_url"] == ""
    section["base_url"] = local_server.url
    model = make_model(section, env={"ANTHROPIC_API_KEY": "sk-ant-doc-0000"})
    assert model.complete("s", "p", 10).stop_reason == "end_turn"
    (req,) = local_server.requests
    sent = req.headers.get("x-api-key") or req.headers.get("authorization", "")
    assert sent.removeprefix("Bearer ") == "sk-ant-doc-0000"


def test_claude_code_example_builds_the_cli_backend(tmp_path: Path) -> None:
    section = load(tmp_path, examples()["claude-code"])
    model = make_model(section, env={"PATH": "/usr/bin"})
    assert isinstance(model, ClaudeCodeModel)
    assert (model.model, model.timeout, model.max_tokens) == ("sonnet", 120.0, 4096)
    argv = model.command(Path("/usr/bin/claude"), "system")
    assert argv[argv.index("--model") + 1] == "sonnet"
