"""Every path that names, restores or reports a record keeps secrets out (issue 22, probe findings
1, 2, 5, 10, 11): the name check sees the unredacted text, a name that held part of a secret
is replaced by one made from the redacted description, a rollback restores records redacted,
and error lines never echo a secret."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from dreamd.cli.main import main
from memory.store.history import log_entries, render_log, rollback
from memory.store.reconcile import reconcile
from memory.store.transaction import MemoryStore

GH = "ghp_" + "Xq7Lm2Np9Rt4Vw6Yz8Ab1Cd3Ef5Gh0Jk2Ls4"
ANT = "sk-ant-api03-" + "Wv3Kp8Qz1Tn6Rb4Yc7Hd2Jf9Lm5Sx0" * 3
PW = "Pq8Zr2Wn5"

pytestmark = pytest.mark.usefixtures("roots_here")


def _alnum(text: str) -> str:
    return "".join(c for c in text.lower() if c.isalnum())


_DIGEST = re.compile(r"(?<![0-9A-Za-z])[0-9a-f]{10,}(?![0-9A-Za-z])")
"""dreamd's own digests (a record file's ``-<10 hex>.md``, the manifest's sha256s): random hex,
which holds one of GH's seven all-hex runs of four ("ab1c", "cd3e", …) in about 1.3 % of runs
of a one-record store (a simulation of its digests)."""


def _nothing_of(secret: str, text: str) -> bool:
    """No run of four characters of ``secret`` (letters and digits only, lowercased) is in
    ``text``, dreamd's own digests aside (:data:`_DIGEST`)."""
    key, low = _alnum(secret), _alnum(_DIGEST.sub(" ", text))
    return not any(key[i : i + 4] in low for i in range(len(key) - 3))


def _everything(d: Path) -> str:
    return "\n".join(p.name + "\n" + p.read_text(encoding="utf-8") for p in d.iterdir() if p.is_file())


@pytest.fixture
def store_dir(tmp_path: Path) -> Path:
    d = tmp_path / "proj" / ".memory"
    assert main(["init", str(d)]) == 0
    return d


@pytest.mark.parametrize(
    ("name", "description", "body", "secret"),
    [
        (f"db-{PW.lower()}", "reports db", f"postgres://app:{PW}@db/x", PW),
        (f"deploy-{ANT[13:33].lower()}-cb", f"deploy key {ANT}", "Deploy with it.", ANT[13:]),
        ("admin-pw-tr0ub4dor-3x", "admin login", "my password is Tr0ub4dor&3x", "Tr0ub4dor&3x"),
    ],
)
def test_cli_remember_replaces_a_name_holding_part_of_a_secret_by_one_from_the_description(
    store_dir: Path, capsys: pytest.CaptureFixture[str], name: str, description: str, body: str, secret: str
) -> None:
    args = ["remember", str(store_dir), "--name", name, "--type", "reference", "--description", description, "--body", body]
    assert main(args) == 0
    out = capsys.readouterr().out
    [entry] = MemoryStore(store_dir).read().records
    assert entry.name == {"reports db": "reports-db", "admin login": "admin-login"}.get(description, "deploy-key")
    assert "renamed: the name given held part of a secret" in out
    assert _nothing_of(secret, entry.name) and _nothing_of(secret, entry.file) and _nothing_of(secret, out)
    assert _nothing_of(secret, (store_dir / "MEMORY.md").read_text()) and _nothing_of(secret, (store_dir / "manifest.json").read_text())


def test_cli_remember_keeps_a_clean_name_and_a_renamed_record_never_replaces_another(
    store_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["remember", str(store_dir), "--type", "project"]
    assert main([*base, "--name", "reports-db", "--description", "reports db", "--body", "The reports db is read-only."]) == 0
    assert main([*base, "--name", f"db-{PW.lower()}", "--description", "reports db", "--body", f"postgres://app:{PW}@db/x"]) == 0
    names = sorted(e.name for e in MemoryStore(store_dir).read().records)
    assert names == ["reports-db", "reports-db-2"]
    assert "read-only" in _everything(store_dir)


def test_mcp_remember_checks_the_name_against_the_unredacted_text(store_dir: Path, tmp_path: Path) -> None:
    from dreamd.config import load_config
    from dreamd.mcp.tools import MemoryTools

    tools = MemoryTools.for_config(load_config(None), store_dir, "--memory-dir")
    answer = tools.call("remember", {"name": f"gh-{GH[4:20].lower()}", "type": "reference", "description": f"ci token {GH}", "body": "CI reads it."})
    assert answer.data["name"] == "ci-token" and "name" in answer.data["redacted"]
    assert _nothing_of(GH[4:], answer.text) and _nothing_of(GH[4:], json.dumps(answer.data))
    assert _nothing_of(GH[4:], _everything(store_dir))


def test_an_adopted_file_whose_name_holds_part_of_a_secret_is_renamed_and_the_log_says_so(store_dir: Path) -> None:
    leaky = store_dir / f"notes-{GH[4:24].lower()}.md"
    leaky.write_text(f"---\ntype: project\ndescription: ci notes\n---\nThe CI token is {GH}.\n", encoding="utf-8")
    store = MemoryStore(store_dir)
    report = reconcile(store)
    assert report.generation is not None
    [entry] = store.read().records
    assert entry.name == "ci-notes" and not leaky.exists()
    assert _nothing_of(GH[4:], _everything(store_dir))
    shown = render_log(log_entries(store, limit=5))
    assert "renamed 1 adopted file(s) whose name held part of one: now ci-notes" in shown
    assert _nothing_of(GH[4:], shown)


def test_rollback_to_a_generation_from_before_a_redaction_restores_the_record_redacted(store_dir: Path) -> None:
    (store_dir / "ops.md").write_text(
        f"---\nname: ops\ntype: project\ndescription: ops notes\n---\ntoken {GH}\ndsn postgres://app:{PW}@db/x\n",
        encoding="utf-8",
    )
    store = MemoryStore(store_dir)
    reconcile(store)  # adopts it (its generation holds the raw file), then commits it redacted
    raw_generation = store.read().generation - 1
    assert GH not in _everything(store_dir)
    result = rollback(store, to=raw_generation)
    live = _everything(store_dir)
    assert GH not in live and PW not in live and "[REDACTED:github-token]" in live
    assert [e.name for e in store.read().records] == ["ops"]
    assert result.generation == store.read().generation


def test_cli_errors_never_echo_a_secret(store_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = ["remember", str(store_dir), "--type", "project", "--description", "x", "--body", "y"]
    # a name holding a token is renamed before it is checked (the token after "-" is found
    # since the fifth round): nothing of it in the output or the record
    assert main([*base, "--name", f"tok-{GH}"]) == 0
    said = capsys.readouterr()
    assert _nothing_of(GH[4:], said.out + said.err) and _nothing_of(GH[4:], _everything(store_dir))
    assert main([*base, "--name", "ok", "--expires", GH]) == 1
    err = capsys.readouterr().err
    assert "expires must be a date" in err and GH not in err
    with pytest.raises(SystemExit):
        main(["remember", str(store_dir), "--name", "x", "--type", f"tok-{GH}", "--description", "x", "--body", "y"])
    assert GH not in capsys.readouterr().err


def test_mcp_tool_errors_never_echo_a_secret() -> None:
    from dreamd.mcp.server import _error_text
    from memory.errors import RecordError

    text = _error_text(RecordError(f"remember: name 'tok-{GH}' must match ^[a-z0-9][a-z0-9_-]{{0,63}}$"))
    assert _nothing_of(GH[4:], text) and "[REDACTED:github-token]" in text
    assert GH not in _error_text(ValueError(f"boom {GH}"))


def test_the_dry_run_shows_the_plan_as_it_would_be_committed_redacted(store_dir: Path) -> None:
    from dreamd.jobs.preview import render_plan
    from memory.model.answer_gate import PlanOp
    from memory.store.records import make_record

    result = make_record(
        f"ci-{GH[4:20].lower()}", "reference", f"CI token {GH}",
        f"The CI token is {GH}.\nThe key is {ANT}.\nmy password is Tr0ub4dor&3x\n",
    )  # fmt: skip
    shown = render_plan(store_dir, [PlanOp(("a", "b"), result), PlanOp(("c",), None)])
    assert _nothing_of(GH[4:], shown) and ANT[13:40] not in shown and "Tr0ub4dor" not in shown
    assert "merge a, b -> ci-token [reference]" in shown and "[REDACTED:anthropic-key]" in shown
    assert "drop c" in shown


@pytest.mark.parametrize("at", [700, 760, 766, 1004, 1010, 1020, 1023, 1030])
def test_the_hook_redacts_a_tool_output_before_cutting_it(tmp_path: Path, at: int) -> None:
    from dreamd.hook.transcript import TOOL_TEXT_KEEP, read_conversation

    records = [
        {"type": "user", "uuid": "u1", "sessionId": "s", "message": {"role": "user", "content": "read the env file"}},
        {"type": "user", "uuid": "u2", "sessionId": "s", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "x" * at + " " + GH + " and " + ANT + " " + "y" * 900},
        ]}},
        {"type": "assistant", "uuid": "a1", "sessionId": "s", "message": {"role": "assistant", "content": [
            {"type": "tool_use", "id": "t2", "name": "Bash", "input": {"command": "z" * at + " " + ANT + " " + "w" * 900}},
        ]}},
    ]  # fmt: skip
    session = tmp_path / "s.jsonl"
    session.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    cache = tmp_path / "cache"
    lines, _ = read_conversation(session, cache)
    kept = b"\n".join(line for _, line in lines).decode()
    cached = "\n".join(p.read_text(encoding="utf-8", errors="replace") for p in cache.iterdir()) if cache.exists() else ""
    for text in (kept, cached):
        assert GH[4:12] not in text and ANT[13:21] not in text and "ghp_" not in text and "sk-ant" not in text
    blocks = [b for line in lines for b in json.loads(line[1])["message"]["content"] if isinstance(b, dict)]
    assert all(len(b.get("content", "")) <= TOOL_TEXT_KEEP for b in blocks)
    assert all(len(b["input"]["command"]) <= TOOL_TEXT_KEEP for b in blocks if b.get("type") == "tool_use")


def test_a_session_id_that_is_a_secret_is_replaced_by_its_hash_in_the_job(tmp_path: Path) -> None:
    from memory.client import submit
    from memory.spool.jobs import validate_job

    spool = tmp_path / "spool"
    mdir = str(tmp_path / "proj" / ".memory")
    submit("user: hi", memory_dir=mdir, session_id=GH, format="text", spool=spool)
    submit("user: hi again", memory_dir=mdir, session_id=GH, format="text", spool=spool)
    submit("user: plain", memory_dir=mdir, session_id="5e7c1b9a-2f4d-4c1e-9a7b-3d2e1f0c9b8a", format="text", spool=spool)
    jobs = [json.loads(p.read_bytes()) for p in sorted((spool / "new").iterdir())]
    ids = sorted(j["session_id"] for j in jobs)
    assert ids[0] == "5e7c1b9a-2f4d-4c1e-9a7b-3d2e1f0c9b8a"
    assert ids[1] == ids[2] and ids[1].startswith("redacted-") and _nothing_of(GH[4:], ids[1])
    # A job another writer put in the spool is read the same way by the daemon.
    raw = {**jobs[0], "session_id": GH}
    parsed = validate_job(json.dumps(raw).encode(), roots=(str(tmp_path),))
    assert parsed.session_id is not None and parsed.session_id.startswith("redacted-")


def test_a_stop_hook_log_line_is_redacted(tmp_path: Path) -> None:
    import memory.redact  # noqa: F401  (a Stop hook has loaded it: then its log line is redacted)
    from dreamd.hook.main import write_log

    log = tmp_path / "hook.log"
    write_log(log, {"event": "Stop", "memory_dir": f"/home/u/{GH}/.memory", "error": f"bad transcript_path token {ANT}"})
    text = log.read_text(encoding="utf-8")
    assert GH not in text and ANT[13:30] not in text
    assert json.loads(text)["event"] == "Stop"


def _names_and_fields(d: Path) -> list[str]:
    """Every file name under ``d`` (``.history/`` included), every key and string of every
    manifest (the live one and those kept for rollback) and every index, live or kept."""
    import os

    out: list[str] = []
    for root, dirs, files in os.walk(d):
        out += dirs + files
        for name in files:
            path = Path(root) / name
            if name == "manifest.json" or (name.startswith("manifest-") and name.endswith(".json")):
                out += _strings(json.loads(path.read_text(encoding="utf-8")))
            elif name == "MEMORY.md" or name.startswith("MEMORY."):
                out.append(path.read_text(encoding="utf-8"))
    return out


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (str(k), *_strings(v))]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _leaks(secret: str, texts: list[str]) -> list[str]:
    """The texts holding any six characters of ``secret`` in a row."""
    return [t[:80] for t in texts if any(secret[i : i + 6] in t for i in range(len(secret) - 5))]


LEAKY_FILES = {
    f"deploy-{GH}.md": "---\ndescription: the deploy token\ntype: reference\n---\nIt is in the vault.\n",
    f"admin-pw-{PW}.md": f"---\ndescription: admin login\ntype: reference\n---\nthe admin password is {PW}\n",
    "ops.md": f"---\nname: ops {ANT}\ndescription: ops notes\ntype: project\n---\nRunbook lives in the wiki.\n",
}


@pytest.mark.parametrize("how", ["adopt", "reconcile"])
def test_no_part_of_a_secret_in_an_adopted_files_name_survives_in_any_name_or_manifest(
    tmp_path: Path, how: str
) -> None:
    """The file was renamed in the next generation, but its name stayed in the first one's
    manifest (kept in .history/ for rollback), in the index it rendered and as the archived
    file's ``<name>.md.hist``. A file named for a secret is renamed before any manifest names
    it; a frontmatter name holding one is no title."""
    from memory.store.adopt import adopt
    from memory.store.transaction import Change

    d = tmp_path / "mem"
    if how == "reconcile":
        assert main(["init", str(d)]) == 0
    else:
        d.mkdir()
    for name, text in LEAKY_FILES.items():
        (d / name).write_text(text, encoding="utf-8")
    if how == "adopt":
        adopt(d)
    else:
        reconcile(MemoryStore(d))
    store = MemoryStore(d)
    names = sorted(e.name for e in store.read().records)
    assert len(names) == 3 and not any((d / n).exists() for n in LEAKY_FILES if n != "ops.md")
    store.commit(Change(remove=names[:2], actor="manual"))  # their files go to .history/
    seen = _names_and_fields(d)
    assert any(".hist" in s for s in seen)
    for secret in (GH, PW, ANT):
        assert _leaks(secret, seen) == [], secret[:4]
