"""``dreamd mcp``: the tools driven by the SDK's own stdio client, hostile raw JSON-RPC lines,
directory resolution and the roots check, and the import-weight rule (no ``mcp`` on the
client or hook path)."""

from __future__ import annotations

import json
import os
import select
import stat
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pytest

from dreamd.config import load_config
from dreamd.mcp.schema import TOOLS, check_arguments
from dreamd.mcp.server import screen_line
from dreamd.mcp.tools import AUTO_MEMORY, MemoryTools, resolve_memory_dir
from memory.errors import DreamdError
from memory.store.records import make_record
from memory.store.transaction import Change, MemoryStore

REPO = Path(__file__).resolve().parents[1]
T = TypeVar("T")


@dataclass
class Setup:
    root: Path
    memory_dir: Path
    config: Path
    env: dict[str, str]


def _setup(tmp_path: Path) -> Setup:
    home = tmp_path / "home"
    home.mkdir()
    memory_dir = tmp_path / "roots" / "app" / ".memory"
    MemoryStore.init(memory_dir)
    config = tmp_path / "config.toml"
    config.write_text(
        "[daemon]\n"
        f'roots = ["{tmp_path}/roots/*/.memory"]\n'
        f'spool = "{tmp_path}/spool"\n'
        "[recall]\nrecord_bytes = 600\n",
        encoding="utf-8",
    )
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(tmp_path / "xdg"),
        "DREAMD_CONFIG": str(config),
        "PYTHONPATH": str(REPO),
    }
    return Setup(tmp_path, memory_dir, config, env)


@pytest.fixture
def setup(tmp_path: Path) -> Setup:
    return _setup(tmp_path)


def _session(setup: Setup, argv: list[str], script: Callable[[Any], Awaitable[T]], cwd: Path | None = None) -> T:
    """Start ``dreamd mcp`` with the SDK's stdio client, initialize, run ``script``."""
    import anyio
    from mcp import ClientSession, StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "dreamd", "mcp", *argv],
        env=setup.env,
        cwd=str(cwd or setup.root),
    )

    async def go() -> T:
        with open(setup.root / "server-stderr.log", "a", encoding="utf-8") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
                await session.initialize()
                return await script(session)

    return anyio.run(go)


def _text(result: Any) -> str:
    assert len(result.content) == 1
    return str(result.content[0].text)


# ---------------------------------------------------------------------------- the SDK client


def test_sdk_client_drives_every_tool_and_resource(setup: Setup) -> None:
    long_body = "\n".join(f"Step {i}: run the deploy script with the blue-green flag." for i in range(40))

    async def script(s: Any) -> dict[str, Any]:
        out: dict[str, Any] = {}
        out["tools"] = (await s.list_tools()).tools
        out["add"] = await s.call_tool(
            "remember",
            {"type": "user", "description": "User prefers tabs for indentation", "body": "Use tabs, not spaces."},
        )
        out["add_named"] = await s.call_tool(
            "remember",
            {"name": "deploy-steps", "type": "project", "description": "How deploys are run", "body": long_body},
        )
        out["update"] = await s.call_tool(
            "remember",
            {"name": "deploy-steps", "type": "project", "description": "How deploys are run (blue-green)", "body": long_body},
        )
        out["list"] = await s.call_tool("list_memories", {})
        out["list_user"] = await s.call_tool("list_memories", {"type": "user"})
        out["get"] = await s.call_tool("get_memory", {"name": "deploy-steps"})
        out["recall"] = await s.call_tool("recall", {"query": "how do we deploy with blue-green?", "limit": 1})
        out["recall_none"] = await s.call_tool("recall", {"query": "zebra xylophone"})
        out["log"] = await s.call_tool("memory_log", {"limit": 3})
        out["resources"] = (await s.list_resources()).resources
        uris = {r.name: r.uri for r in out["resources"]}
        out["index"] = await s.read_resource(uris[f"{setup.memory_dir}/MEMORY.md"])
        out["record"] = await s.read_resource(uris["deploy-steps [project]"])
        out["forget"] = await s.call_tool("forget", {"name": "user-prefers-tabs-for-indentation"})
        out["list_after"] = await s.call_tool("list_memories", {})
        return out

    out = _session(setup, ["--memory-dir", str(setup.memory_dir)], script)

    names = [t.name for t in out["tools"]]
    assert names == ["recall", "list_memories", "get_memory", "remember", "forget", "memory_log"]
    for tool in out["tools"]:
        assert tool.input_schema["additionalProperties"] is False
        assert "memory_dir" in tool.input_schema["properties"]
        assert len(tool.description) > 60
    by_name = {t.name: t for t in out["tools"]}
    assert by_name["recall"].annotations.read_only_hint is True
    assert by_name["forget"].annotations.destructive_hint is True
    assert by_name["remember"].input_schema["properties"]["type"]["enum"] == ["user", "feedback", "project", "reference"]

    assert not out["add"].is_error
    assert _text(out["add"]).startswith("added user-prefers-tabs-for-indentation [user]")
    assert out["add"].structured_content["generation"] == 1
    assert out["add_named"].structured_content == {
        **out["add_named"].structured_content,
        "action": "added",
        "name": "deploy-steps",
        "generation": 2,
    }
    assert "(generation 3)" in _text(out["update"])
    assert out["update"].structured_content["action"] == "updated"

    listing = _text(out["list"])
    assert listing.splitlines()[0] == f"2 record(s) in {setup.memory_dir} (generation 3)"
    assert "- deploy-steps [project]: How deploys are run (blue-green)" in listing
    assert out["list_user"].structured_content["total"] == 1

    got = out["get"].structured_content
    assert got["body"].rstrip("\n") == long_body
    assert got["description"] == "How deploys are run (blue-green)"
    assert Path(got["file"]).is_file()

    recalled = out["recall"].structured_content
    assert [r["name"] for r in recalled["records"]] == ["deploy-steps"]
    first = recalled["records"][0]
    assert first["truncated"] is True  # record_bytes = 600 in the config
    assert f"full record: {got['file']}" in first["text"]
    assert len(first["text"].encode()) <= 600
    assert _text(out["recall"]).startswith("<relevant_memories>")
    assert 'type="project"' in _text(out["recall"])
    assert out["recall_none"].structured_content["records"] == []
    assert _text(out["recall_none"]).startswith("No memory in")

    log_text = _text(out["log"])
    assert log_text.startswith("generation 3")
    assert "updated  deploy-steps" in log_text
    assert len(out["log"].structured_content["generations"]) == 3

    assert "deploy-steps" in out["index"].contents[0].text
    assert out["record"].contents[0].text.startswith("---\nname: deploy-steps\n")

    assert _text(out["forget"]).startswith("removed user-prefers-tabs-for-indentation")
    assert out["forget"].structured_content["generation"] == 4
    manifest = MemoryStore(setup.memory_dir).read()
    assert manifest.generation == 4
    assert [e.name for e in manifest.records] == ["deploy-steps"]
    assert manifest.change["removed"] == ["user-prefers-tabs-for-indentation"]
    assert (setup.memory_dir / ".history").is_dir()


def test_sdk_client_every_bad_input_is_one_sentence_and_writes_nothing(setup: Setup) -> None:
    store = MemoryStore(setup.memory_dir)
    store.commit(Change(add=[make_record("prefers-tabs", "user", "Tabs", "Use tabs.")]))
    store.commit(
        Change(merges=[(["prefers-tabs"], make_record("editor-style", "user", "Editor style", "Tabs; 100 columns."))])
    )
    outside = setup.root / "outside" / ".memory"
    MemoryStore.init(outside)
    (setup.root / "roots" / "evil").mkdir()
    (setup.root / "roots" / "evil" / ".memory").symlink_to(outside)
    unmanaged = setup.root / "roots" / "bare" / ".memory"
    unmanaged.mkdir(parents=True)
    before = (setup.memory_dir / "manifest.json").read_bytes()
    ok = {"type": "user", "description": "d", "body": "b"}
    calls: list[tuple[str, dict[str, Any], str]] = [
        ("remember", {**ok, "type": "fact"}, "remember: type 'fact' is not one of user, feedback, project, reference"),
        ("remember", {**ok, "name": "Bad Name!"}, "remember: name 'Bad Name!' must match ^[a-z0-9][a-z0-9_-]{0,63}$"),
        ("remember", {**ok, "body": "x" * 70_000}, "remember: body is over 65536 characters"),
        ("remember", {**ok, "body": "é" * 40_000}, "remember: body over 65536 bytes"),
        ("remember", {**ok, "description": "   "}, "remember: description is empty"),
        ("remember", {**ok, "description": "two\nlines"}, "remember: description must be one line"),
        ("remember", {"type": "user", "body": "b"}, "remember: missing required argument 'description'"),
        ("remember", {**ok, "tags": ["x"]}, "remember: unknown argument 'tags' (expected type, description, body, name, memory_dir)"),
        ("get_memory", {"name": "nobody"}, f"no record named 'nobody' in {setup.memory_dir} (list_memories shows the names)"),
        ("get_memory", {"name": "prefers-tabs"}, f"no record named 'prefers-tabs' in {setup.memory_dir}: a dream merged it into 'editor-style' (use that name)"),
        ("forget", {"name": "nobody"}, f"no record named 'nobody' in {setup.memory_dir} (list_memories shows the names)"),
        ("recall", {"query": "x", "limit": 0}, "recall: limit must be between 1 and 20, got 0"),
        ("recall", {"query": "x", "limit": "5"}, "recall: limit must be an integer, got a string"),
        ("recall", {"query": 5}, "recall: query must be a string, got a number"),
        ("recall", {}, "recall: missing required argument 'query'"),
        ("memory_log", {"limit": True}, "memory_log: limit must be an integer, got a boolean"),
        ("recall", {"query": "x", "memory_dir": str(outside)}, f"memory_dir {outside} is not served here: this server serves {setup.memory_dir} and what [daemon] mcp_dirs grants (inside [daemon] roots)"),
        (
            "list_memories",
            {"memory_dir": str(setup.root / "roots" / "evil" / ".memory")},
            f"memory_dir {setup.root}/roots/evil/.memory (resolves to {outside}) is not served here: this server serves "
            f"{setup.memory_dir} and what [daemon] mcp_dirs grants (inside [daemon] roots)",
        ),
        ("list_memories", {"memory_dir": "app/.memory"}, "memory_dir 'app/.memory' is not an absolute path"),
        (
            "remember",
            {**ok, "memory_dir": str(unmanaged)},
            f"memory_dir {unmanaged} is not served here: this server serves {setup.memory_dir} and what [daemon] mcp_dirs grants (inside [daemon] roots)",
        ),
        ("explode", {}, "unknown tool 'explode' (tools: recall, list_memories, get_memory, remember, forget, memory_log)"),
    ]

    async def script(s: Any) -> tuple[list[Any], list[str]]:
        results = [await s.call_tool(name, args) for name, args, _ in calls]
        from mcp.shared.exceptions import MCPError

        refused = []
        for uri in (
            "file:///etc/passwd",
            (setup.memory_dir / "manifest.json").as_uri(),
            "https://example.invalid/x",
            (outside / "MEMORY.md").as_uri(),
        ):
            with pytest.raises(MCPError) as info:
                await s.read_resource(uri)
            refused.append(str(info.value))
        return results, refused

    results, refused = _session(setup, ["--memory-dir", str(setup.memory_dir)], script)
    for (name, _args, expected), result in zip(calls, results, strict=True):
        assert result.is_error, name
        assert _text(result) == expected
        assert "\n" not in _text(result)
    assert (setup.memory_dir / "manifest.json").read_bytes() == before
    assert list(unmanaged.iterdir()) == []
    assert "is not served here" in refused[0]
    assert "manifest.json is not a record of" in refused[1]
    assert "is not a file:// URI" in refused[2]
    assert "is not served here" in refused[3]


def _grant(setup: Setup, pattern: str) -> None:
    text = setup.config.read_text(encoding="utf-8")
    setup.config.write_text(text.replace("[daemon]\n", f'[daemon]\nmcp_dirs = ["{pattern}"]\n', 1), encoding="utf-8")


def test_tool_call_naming_another_project_is_refused_unless_the_config_grants_it(setup: Setup) -> None:
    """Item 5 of issue 20: a server started for one project answered for every directory
    under the roots, another project's records included."""
    other = setup.root / "roots" / "lib" / ".memory"
    MemoryStore.init(other)
    store = MemoryStore(other)
    store.commit(Change(add=[make_record("lib-secret", "project", "Lib's plans", "Private to lib.")]))
    before = (other / "manifest.json").read_bytes()

    async def script(s: Any) -> tuple[Any, Any, Any]:
        wrote = await s.call_tool(
            "remember", {"type": "reference", "description": "Bugs live in the tracker", "body": "See the tracker.", "memory_dir": str(other)}
        )
        listed = await s.call_tool("list_memories", {"memory_dir": str(other)})
        resources = (await s.list_resources()).resources
        return wrote, listed, resources

    wrote, listed, resources = _session(setup, ["--memory-dir", str(setup.memory_dir)], script)
    for refused in (wrote, listed):
        assert refused.is_error
        assert _text(refused) == (
            f"memory_dir {other} is not served here: this server serves {setup.memory_dir} and what "
            "[daemon] mcp_dirs grants (inside [daemon] roots)"
        )
    assert (other / "manifest.json").read_bytes() == before
    assert all(str(other.resolve()) not in r.name for r in resources)
    assert {r.name for r in resources} == {f"{setup.memory_dir.resolve()}/MEMORY.md"}

    _grant(setup, str(other))
    wrote, listed, resources = _session(setup, ["--memory-dir", str(setup.memory_dir)], script)
    assert not wrote.is_error
    assert wrote.structured_content["memory_dir"] == str(other)
    assert "bugs-live-in-the-tracker" in _text(listed)
    assert "lib-secret [project]" in {r.name for r in resources}
    assert MemoryStore(setup.memory_dir).read().records == []


def test_server_started_in_a_subdirectory_serves_the_repositorys_memory(setup: Setup) -> None:
    """Item 4 of issue 20: registered in the repository root and connected from ``src/``, the
    server answered every tool with "no memory directory for …/src"."""
    repo = setup.root / "roots" / "app"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    src = repo / "src" / "deep"
    src.mkdir(parents=True)
    MemoryStore(setup.memory_dir).commit(Change(add=[make_record("app-owner", "reference", "Who owns app", "Team A.")]))

    async def script(s: Any) -> Any:
        return await s.call_tool("list_memories", {})

    result = _session(setup, [], script, cwd=src)
    assert not result.is_error, _text(result)
    assert result.structured_content["memory_dir"] == str(setup.memory_dir)
    assert "app-owner" in _text(result)


def test_server_without_a_directory_starts_and_says_what_to_pass(setup: Setup) -> None:
    nowhere = setup.root / "project"
    nowhere.mkdir()

    async def script(s: Any) -> Any:
        return await s.call_tool("list_memories", {})

    result = _session(setup, [], script, cwd=nowhere)
    assert result.is_error
    assert _text(result).startswith(f"no memory directory for {nowhere}")
    assert _text(result).endswith("start the server inside a project or with --memory-dir DIR")


def test_explicit_unmanaged_memory_dir_fails_before_serving(setup: Setup) -> None:
    bare = setup.root / "bare"
    bare.mkdir()
    proc = subprocess.run(
        [sys.executable, "-m", "dreamd", "mcp", "--memory-dir", str(bare)],
        env=setup.env, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert proc.stderr == (
        f"dreamd: {bare}: not a managed memory directory (no manifest.json; run 'dreamd adopt {bare}' or 'dreamd init')\n"
    )


# ---------------------------------------------------------------------------- raw JSON-RPC lines


def _default_sigint() -> None:
    """A test run launched in the background by a shell without job control (``cmd &`` in a
    script, as some CI runners do) inherits SIGINT ignored, and so would the server: Python
    then installs no Ctrl-C handler. The server must start as a terminal would start it."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


class _Raw:
    """``dreamd mcp`` on plain pipes, to send what no well-behaved client would."""

    def __init__(self, setup: Setup) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "dreamd", "mcp", "--memory-dir", str(setup.memory_dir)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=setup.env, cwd=setup.root,
            preexec_fn=_default_sigint,
        )
        self.buffer = b""

    def send(self, line: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()

    def receive(self, timeout: float = 30.0) -> dict[str, Any]:
        assert self.proc.stdout is not None
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            assert left > 0, "no answer from the server"
            ready, _, _ = select.select([self.proc.stdout], [], [], left)
            if ready:
                chunk = os.read(self.proc.stdout.fileno(), 1 << 16)
                assert chunk, f"server closed stdout (exit {self.proc.poll()})"
                self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        message: dict[str, Any] = json.loads(line)
        return message

    def request(self, id_: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.send(json.dumps({"jsonrpc": "2.0", "id": id_, "method": method, "params": params}).encode())
        return self.receive()


def test_raw_stdio_hostile_lines_are_answered_and_the_session_survives(setup: Setup) -> None:
    raw = _Raw(setup)
    try:
        init = raw.request(
            1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}
        )
        assert init["result"]["serverInfo"]["name"] == "dreamd"
        raw.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
        hostile: list[tuple[bytes, Any, int, str]] = [
            (b"not json", None, -32700, "parse error: not JSON"),
            (b'{"jsonrpc": "2.0", "id": 2, "method": "tools/list"', None, -32700, "parse error: not JSON"),
            (b"\xff\xfe\x00garbage", None, -32700, "parse error: not valid UTF-8 (byte 0)"),
            (b"[" * 50_000 + b"]" * 50_000, None, -32700, "parse error: not JSON"),
            (b"[]", None, -32600, "invalid request"),
            (b"null", None, -32600, "invalid request"),
            (b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":"x"}', 3, -32600, "invalid request"),
            (b'{"jsonrpc":"1.0","id":4,"method":"tools/list"}', 4, -32600, "invalid request"),
            (
                b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"recall","arguments":{"query":"\\ud800"}}}',
                5, -32600, "invalid request",
            ),
            (b'{"jsonrpc":"2.0","id":6,"method":"no/such/method"}', 6, -32601, "Method not found"),
            (b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"recall","arguments":[1]}}', 7, -32602, ""),
            (
                b'{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"recall","arguments":{"query":"'
                + b"q" * (5 * 1024 * 1024) + b'"}}}',
                None, -32600, "message over 4194304 bytes refused",
            ),
        ]
        for line, id_, code, message in hostile:
            raw.send(line)
            answer = raw.receive()
            assert answer["id"] == id_, line[:80]
            assert answer["error"]["code"] == code, line[:80]
            assert answer["error"]["message"].startswith(message), answer
            assert "\\ud800" not in answer["error"]["message"]  # the client's input is not echoed
        raw.send(b"")  # blank lines and malformed notifications get no answer
        raw.send(b'{"jsonrpc":"2.0","method":"notifications/initialized","params":"x"}')
        # A tool's bad input is a tool result, not a protocol error.
        bad = raw.request(9, "tools/call", {"name": "remember", "arguments": {"type": "fact", "description": "d", "body": "b"}})
        assert bad["result"]["isError"] is True
        good = raw.request(
            10, "tools/call", {"name": "remember", "arguments": {"type": "user", "description": "Survivor", "body": "Still here."}}
        )
        assert good["id"] == 10
        assert good["result"]["structuredContent"]["generation"] == 1
        assert raw.proc.poll() is None
    finally:
        assert raw.proc.stdin is not None
        raw.proc.stdin.close()
        rc = raw.proc.wait(timeout=30)
        assert raw.proc.stderr is not None
        stderr = raw.proc.stderr.read().decode()
        raw.proc.stdout.close() if raw.proc.stdout else None
        raw.proc.stderr.close()
    assert rc == 0, stderr
    assert "Traceback" not in stderr
    assert [e.name for e in MemoryStore(setup.memory_dir).read().records] == ["survivor"]


def test_screen_line_passes_valid_messages_through_untouched() -> None:
    line = b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n'
    assert screen_line(line) == (line.decode(), None)
    assert screen_line(b"  \n") == (None, None)
    assert screen_line(b'{"jsonrpc":"2.0","id":"a","method":"ping"}', limit=10) == (
        None,
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "message over 10 bytes refused"}},
    )


# ---------------------------------------------------------------------------- in process


def _tools(setup: Setup, default: Path | None, *, adopt: bool = False) -> MemoryTools:
    how = AUTO_MEMORY if adopt else "--memory-dir" if default is not None else "none here"
    return MemoryTools.for_config(load_config(setup.config), default, how)


def test_argument_check_reports_the_first_problem_in_one_sentence() -> None:
    spec = next(t for t in TOOLS if t.name == "recall")
    assert check_arguments(spec, {"query": "x", "limit": 3.0}) == {"query": "x", "limit": 3}
    assert check_arguments(spec, {"query": "x", "limit": None}) == {"query": "x"}
    with pytest.raises(DreamdError, match=r"^recall: arguments must be an object, got an array$"):
        check_arguments(spec, [1])
    with pytest.raises(DreamdError, match=r"^recall: query is over 4096 characters$"):
        check_arguments(spec, {"query": "q" * 4097})
    with pytest.raises(DreamdError, match=r"^recall: limit must be between 1 and 20, got 21$"):
        check_arguments(spec, {"query": "x", "limit": 21})


def test_resolution_follows_the_hook_rules(setup: Setup, tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path / "home")}
    roots = (f"{tmp_path}/home/.claude/projects/*/memory",)
    project = tmp_path / "code" / "app"
    (project / "src").mkdir(parents=True)
    explicit = resolve_memory_dir("~/m", cwd=str(project), projects={}, roots=roots, env=env)
    assert explicit == (tmp_path / "home" / "m", "--memory-dir")
    mapped = {project: tmp_path / "mapped", tmp_path / "code": tmp_path / "outer"}
    assert resolve_memory_dir(None, cwd=str(project / "src"), projects=mapped, roots=roots, env=env) == (
        tmp_path / "mapped",
        "[daemon] projects",
    )
    # no .memory, no projects entry: Claude Code's auto-memory directory, made by the first remember
    assert resolve_memory_dir(None, cwd=str(project), projects={}, roots=roots, env=env)[1] == AUTO_MEMORY
    MemoryStore.init(project / ".memory")
    assert resolve_memory_dir(None, cwd=str(project), projects={}, roots=roots, env=env) == (
        project / ".memory",
        "project .memory",
    )
    # the nearest managed .memory wins over a configured directory, up to the git root only
    assert resolve_memory_dir(None, cwd=str(project), projects=mapped, roots=roots, env=env)[0] == project / ".memory"
    assert resolve_memory_dir(None, cwd=str(project / "src"), projects={}, roots=roots, env=env)[1] == AUTO_MEMORY
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    assert resolve_memory_dir(None, cwd=str(project / "src"), projects={}, roots=roots, env=env)[0] == project / ".memory"
    other = tmp_path / "code" / "other_app"
    other.mkdir()
    auto = tmp_path / "home" / ".claude" / "projects" / str(other).replace("/", "-").replace("_", "-") / "memory"
    auto.mkdir(parents=True)
    assert resolve_memory_dir(None, cwd=str(other), projects={}, roots=roots, env=env) == (auto, "Claude Code auto-memory")
    assert resolve_memory_dir(None, cwd=str(other), projects={}, roots=(), env=env)[0] is None


def test_claude_code_auto_memory_directory_is_adopted_on_first_use(setup: Setup) -> None:
    auto = setup.root / "roots" / "cc" / ".memory"
    auto.mkdir(parents=True)
    (auto / "user_role.md").write_text(
        "---\nname: User role\ndescription: The user is a data engineer\ntype: user\n---\nWorks on pipelines.\n",
        encoding="utf-8",
    )
    tools = _tools(setup, auto, adopt=True)
    listed = tools.call("list_memories", {})
    assert "- user_role [user]: The user is a data engineer" in listed.text
    assert (auto / "manifest.json").is_file()
    assert (auto / "user_role.md").read_text(encoding="utf-8").startswith("---\nname: User role\n")


def test_a_projects_first_remember_makes_its_auto_memory_directory_and_a_read_before_says_none_yet(
    setup: Setup,
) -> None:
    """A new project: Claude Code has not made its auto-memory directory yet, and the user's first
    ``/dreamd:remember`` must still land there (it failed with "does not exist yet")."""
    auto = setup.root / "roots" / "cc" / "fresh" / ".memory"
    tools = _tools(setup, auto, adopt=True)
    with pytest.raises(DreamdError, match=r": no memories yet \(the first remember or session makes the directory\)$"):
        tools.call("recall", {"query": "port"})
    assert not auto.parent.exists()  # a read makes nothing
    said = tools.call("remember", {"type": "project", "description": "Staging listens on 6543", "body": "Port 6543."})
    assert said.data["generation"] == 1 and stat.S_IMODE(auto.stat().st_mode) == 0o700
    assert "Port 6543." in tools.call("recall", {"query": "staging port"}).text


def test_remember_without_a_name_never_replaces_an_existing_record(setup: Setup) -> None:
    tools = _tools(setup, setup.memory_dir)
    first = tools.call("remember", {"type": "project", "description": "Release on Friday", "body": "Ship at noon."})
    second = tools.call("remember", {"type": "project", "description": "Release on Friday", "body": "Ship at 3pm."})
    assert (first.data["name"], second.data["name"]) == ("release-on-friday", "release-on-friday-2")
    assert (first.data["generation"], second.data["generation"]) == (1, 2)
    replaced = tools.call("remember", {"name": "release-on-friday", "type": "project", "description": "Release on Monday", "body": "Moved."})
    assert replaced.data["action"] == "updated"
    assert "previous version is kept in .history/" in replaced.text
    assert sorted(e.name for e in MemoryStore(setup.memory_dir).read().records) == ["release-on-friday", "release-on-friday-2"]


def test_remember_redacts_secrets_and_says_so(setup: Setup) -> None:
    tools = _tools(setup, setup.memory_dir)
    key = "sk-ant-api03-" + "Zq7" * 30
    answer = tools.call("remember", {"type": "reference", "description": "Staging key", "body": f"The key is {key} for staging."})
    assert answer.data["redacted"] == ["anthropic-key"]
    assert "redacted before writing: anthropic-key" in answer.text
    on_disk = Path(answer.data["file"]).read_text(encoding="utf-8")
    assert key not in on_disk
    assert "[REDACTED:anthropic-key]" in on_disk


def test_remember_scrubs_from_the_description_what_only_the_body_shows_whole(setup: Setup) -> None:
    # the description is the body's first line: alone it holds half of a URL password that the
    # whole body shows cut over a line break; redacted apart, the store saw neither half whole
    tools = _tools(setup, setup.memory_dir)
    body = "the link wrapped: redis://svc:Wrapped_Half_\nOther_Half_7731@cache.local:6379/0"
    answer = tools.call("remember", {"type": "reference", "description": body.split("\n")[0], "body": body})
    on_disk = Path(answer.data["file"]).read_text(encoding="utf-8")
    index = (setup.memory_dir / "MEMORY.md").read_text(encoding="utf-8")
    for half in ("Wrapped_Half_", "Other_Half_7731"):
        assert half not in on_disk and half not in index and half not in answer.text


# ---------------------------------------------------------------------------- import weight


def test_client_and_hook_paths_never_import_the_sdk(setup: Setup) -> None:
    code = (
        "import sys, memory, memory.retrieval.recall, dreamd.cli.main, dreamd.mcp.server, dreamd.mcp.tools, dreamd.mcp.schema\n"
        "from dreamd.cli.main import build_parser; build_parser()\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('mcp', 'mcp_types', 'pydantic', 'starlette')))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], env=setup.env, capture_output=True, text=True, timeout=60, cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"
    hook = (
        "import io, sys\n"
        "sys.stdin = io.TextIOWrapper(io.BytesIO(b'{\"hook_event_name\": \"SessionStart\"}'))\n"
        "from dreamd.cli.main import main\n"
        "rc = main(['hook'])\n"
        "print(rc, sorted(m for m in sys.modules if m.split('.')[0] in ('mcp', 'mcp_types')))\n"
    )
    proc = subprocess.run([sys.executable, "-c", hook], env=setup.env, capture_output=True, text=True, timeout=60, cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "0 []"


def test_a_hand_edited_record_is_read_afresh_not_from_the_parse_cache(setup: Setup) -> None:
    tools = _tools(setup, setup.memory_dir)
    added = tools.call("remember", {"name": "ci-runner", "type": "reference", "description": "CI runner", "body": "Runs on host A."})
    assert "Runs on host A." in tools.call("get_memory", {"name": "ci-runner"}).text
    assert "Runs on host A." in tools.call("recall", {"query": "ci runner host"}).text
    path = Path(added.data["file"])
    stat = path.stat()
    path.write_text(path.read_text(encoding="utf-8").replace("host A", "host B"), encoding="utf-8")
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    assert "Runs on host B." in tools.call("get_memory", {"name": "ci-runner"}).text
    assert "Runs on host B." in tools.call("recall", {"query": "ci runner host"}).text


def test_recall_without_a_usable_model_falls_back_to_keywords_and_says_why(setup: Setup, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    setup.config.write_text(setup.config.read_text(encoding="utf-8") + '[model]\nbackend = "anthropic"\n', encoding="utf-8")
    tools = _tools(setup, setup.memory_dir)
    tools.call("remember", {"type": "project", "description": "Deploys go through the blue-green script", "body": "Run it."})
    answer = tools.call("recall", {"query": "how do deploys work"})
    assert [r["name"] for r in answer.data["records"]] == ["deploys-go-through-the-blue-green-script"]
    assert answer.data["selector"] == "keyword"
    assert answer.data["fallback_reason"].startswith("model unavailable (")


def test_ctrl_c_ends_the_server_at_once_without_waiting_for_input(setup: Setup) -> None:
    import signal

    raw = _Raw(setup)
    init = raw.request(
        1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}
    )
    assert "result" in init
    raw.proc.send_signal(signal.SIGINT)
    rc = raw.proc.wait(timeout=20)
    assert raw.proc.stderr is not None
    stderr = raw.proc.stderr.read().decode()
    for stream in (raw.proc.stdin, raw.proc.stdout, raw.proc.stderr):
        if stream is not None:
            stream.close()
    assert rc == 130, stderr
    assert "Fatal Python error" not in stderr
    assert "Traceback" not in stderr


def test_resources_are_each_managed_directorys_index_and_records_only(setup: Setup) -> None:
    other = setup.root / "roots" / "lib" / ".memory"
    MemoryStore(MemoryStore.init(other).path).commit(Change(add=[make_record("lib-owner", "reference", "Who owns lib", "Team B.")]))
    (setup.root / "roots" / "bare" / ".memory").mkdir(parents=True)  # unmanaged: not listed
    tools = _tools(setup, setup.memory_dir)
    assert {r.name for r in tools.resources()} == {f"{setup.memory_dir.resolve()}/MEMORY.md"}  # lib is not granted
    _grant(setup, f"{setup.root}/roots/lib/.memory")
    tools = _tools(setup, setup.memory_dir)
    tools.call("remember", {"name": "app-owner", "type": "reference", "description": "Who owns app", "body": "Team A."})
    listed = {r.name: r.uri for r in tools.resources()}
    app, lib = setup.memory_dir.resolve(), other.resolve()
    assert set(listed) == {f"{app}/MEMORY.md", "app-owner [reference]", f"{lib}/MEMORY.md", "lib-owner [reference]"}
    assert "Team B." in tools.read_resource(listed["lib-owner [reference]"])
    assert "app-owner" in tools.read_resource(listed[f"{app}/MEMORY.md"])
    (app / "notes.md").write_text("---\nname: notes\n---\nnot adopted yet\n", encoding="utf-8")
    with pytest.raises(DreamdError, match=r"notes\.md is not a record of"):
        tools.read_resource((app / "notes.md").as_uri())
    with pytest.raises(DreamdError, match="is not a file:// URI"):
        tools.read_resource((app / "MEMORY.md").as_uri() + "?x=1")


def test_initialize_is_answered_from_the_sdks_own_earlier_answer(setup: Setup) -> None:
    """Item 9 of issue 20: the SDK's import made every client wait seconds for ``initialize``.
    The first start keeps the SDK's answer; later starts answer with it before importing the
    SDK, and the session then works exactly as before."""
    import anyio
    from mcp import ClientSession, StdioServerParameters, stdio_client

    cache = Path(setup.env["HOME"]) / ".local" / "state" / "dreamd" / "mcp-initialize.json"

    def start() -> tuple[Any, str]:
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "dreamd", "mcp", "--memory-dir", str(setup.memory_dir)],
            env=setup.env, cwd=str(setup.root),
        )  # fmt: skip

        async def go() -> tuple[Any, str]:
            async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
                init = await session.initialize()
                listed = await session.call_tool("list_memories", {})
                return init, _text(listed)

        return anyio.run(go)

    first, listed = start()
    assert listed.startswith(f"0 record(s) in {setup.memory_dir}")
    kept = json.loads(cache.read_text())
    [result] = kept["results"].values()
    assert result["serverInfo"]["name"] == "dreamd" and "tools" in result["capabilities"]
    second, listed = start()
    assert second.model_dump() == first.model_dump()
    assert listed.startswith(f"0 record(s) in {setup.memory_dir}")
    cache.write_bytes(b"\x00not json" * 1000)  # a broken file: the SDK answers, the file is rewritten
    third, listed = start()
    assert third.model_dump() == first.model_dump()
    assert json.loads(cache.read_text())["results"] == kept["results"]


def test_pipelined_calls_are_all_answered_with_at_most_max_in_flight_outstanding(setup: Setup) -> None:
    """5,000 pipelined calls once grew the server to 827 MB: now it reads a request only while
    fewer than MAX_IN_FLIGHT are unanswered (benchmarks/bench_mcp.py measures the memory)."""
    import threading

    from dreamd.mcp.server import MAX_IN_FLIGHT

    raw = _Raw(setup)
    try:
        assert "result" in raw.request(1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                                         "clientInfo": {"name": "t", "version": "0"}})  # fmt: skip
        raw.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
        n = 300
        batch = b"".join(
            json.dumps({"jsonrpc": "2.0", "id": 100 + i, "method": "tools/call",
                        "params": {"name": "recall", "arguments": {"query": f"deploy {i}"}}}).encode() + b"\n"
            for i in range(n)
        )  # fmt: skip
        writer = threading.Thread(target=lambda: (raw.proc.stdin.write(batch), raw.proc.stdin.flush()))  # type: ignore[union-attr]
        writer.start()
        ids = {raw.receive(timeout=120)["id"] for _ in range(n)}
        writer.join()
        assert ids == set(range(100, 100 + n))
    finally:
        raw.proc.kill()
        raw.proc.wait()
    assert MAX_IN_FLIGHT <= 64


def test_in_flight_waits_at_the_limit_and_a_cancel_frees_a_slot() -> None:
    import asyncio

    from dreamd.mcp.server import _InFlight

    async def run() -> list[str]:
        flight = _InFlight(limit=2)
        await flight.room({"jsonrpc": "2.0", "id": 1, "method": "tools/call"})
        await flight.room({"jsonrpc": "2.0", "id": "b", "method": "tools/call"})
        await flight.room({"jsonrpc": "2.0", "method": "notifications/progress"})  # never counted
        third = asyncio.ensure_future(flight.room({"jsonrpc": "2.0", "id": 3, "method": "tools/call"}))
        await asyncio.sleep(0.05)
        steps = [f"blocked={not third.done()}"]
        await flight.room({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "b"}})
        await asyncio.wait_for(third, 5)
        steps.append(f"outstanding={sorted(flight.outstanding)} peak={flight.peak}")
        return steps

    assert asyncio.run(run()) == ["blocked=True", "outstanding=['1', '3'] peak=2"]
