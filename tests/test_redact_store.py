"""Issue 22: files from outside dreamd that hold a secret are reported by ``doctor`` and written
redacted in the next generation; no write path leaves a secret in a record, a name, MEMORY.md or
the MCP answer."""

from __future__ import annotations

from pathlib import Path

from dreamd.cli.doctor import OK, WARN, check_secrets
from dreamd.jobs.work import _redact_record
from memory.store.adopt import adopt
from memory.store.records import make_record
from memory.store.transaction import Change, MemoryStore

SECRET = "Pz8!mQ4wLr2"
FILE = f"---\nname: staging-access\ndescription: staging db password is {SECRET}\ntype: reference\n---\n\nThe password for staging is {SECRET} (rotated monthly).\n"


def _on_disk(directory: Path) -> str:
    return "".join(
        p.name + "\n" + p.read_text(encoding="utf-8")
        for p in sorted(directory.iterdir())
        if p.is_file()
    )


def test_adopted_file_with_a_secret_is_reported_then_redacted_in_the_next_generation(
    tmp_path: Path,
) -> None:
    directory = tmp_path / "mem"
    directory.mkdir()
    (directory / "staging_access.md").write_text(FILE, encoding="utf-8")
    (directory / "plain.md").write_text(
        "---\nname: plain\ndescription: tabs\ntype: user\n---\n\nUse tabs.\n", encoding="utf-8"
    )
    report = adopt(directory)
    assert report.generation == 1  # generation 0 took the files in as they were, 1 redacted them
    text = _on_disk(directory)
    assert SECRET not in text
    assert "[REDACTED:password]" in text
    assert (directory / "plain.md").exists()  # files without a secret are left as they are
    store = MemoryStore(directory)
    assert {e.name for e in store.read().records} == {"staging_access", "plain"}
    assert check_secrets([directory]).status == OK


def test_a_file_dropped_into_a_managed_set_is_reported_by_doctor_and_reconcile_redacts_it(
    tmp_path: Path,
) -> None:
    directory = tmp_path / "mem"
    store = MemoryStore.init(directory)
    (directory / "handwritten.md").write_text(FILE, encoding="utf-8")
    check = check_secrets([directory])
    assert check.status == WARN
    assert "handwritten.md (password)" in check.detail and SECRET not in check.detail
    before = store.read().generation
    report = store.reconcile()
    assert report.adopted == ["handwritten"]
    assert report.generation == before + 2  # taken in, then written redacted
    assert SECRET not in _on_disk(directory)
    assert check_secrets([directory]).status == OK


def test_memory_index_line_of_a_foreign_file_never_shows_its_secret(tmp_path: Path) -> None:
    directory = tmp_path / "mem"
    store = MemoryStore.init(directory)
    (directory / "handwritten.md").write_text(FILE, encoding="utf-8")
    store.commit(
        Change(add=[make_record("other", "user", "likes tea", "tea\n", where="t")])
    )  # adopts it
    assert SECRET not in (directory / "MEMORY.md").read_text(encoding="utf-8")


def test_extraction_result_with_a_secret_in_its_name_is_renamed(tmp_path: Path) -> None:
    text = "the login is admin / S3cr3tPass"
    rec = _redact_record(
        make_record("project-login-admin-s3cr3tpass", "project", text, text + "\n", where="t")
    )
    assert rec.name == "the-login-is-admin"  # made from the redacted description: no part of the old name stays
    store = MemoryStore.init(tmp_path / "mem")
    store.commit(Change(add=[rec], actor="job"))
    assert "s3cr3t" not in _on_disk(tmp_path / "mem").lower()


def test_mcp_remember_redacts_my_password_is(tmp_path: Path) -> None:
    from dreamd.config import load_config
    from dreamd.mcp.tools import MemoryTools

    store = MemoryStore.init(tmp_path / "mem")
    config = tmp_path / "config.toml"
    config.write_text(
        f'[daemon]\nroots = ["{store.path}"]\nspool = "{tmp_path / "spool"}"\n', encoding="utf-8"
    )
    tools = MemoryTools.for_config(load_config(config), store.path, "--memory-dir")
    answer = tools.call(
        "remember",
        {
            "type": "user",
            "description": "my password is Hx7#kkP2qz",
            "body": "my password is Hx7#kkP2qz",
        },
    )
    assert (
        "Hx7#kkP2qz".lower() not in (answer.text + str(answer.data) + _on_disk(store.path)).lower()
    )
    assert answer.data["redacted"] == ["password"]


NAMED_TOKEN = "ghp_" + "Lq5Wd8Ns2Kx7Vb3Zr9Tm4Hc6Jp1Fy0Ga3Qe"
NAMED_FILES = {
    f"release-{NAMED_TOKEN}.md": "---\ndescription: the release token for CI\ntype: reference\n---\n\nCI releases with it.\n",
    "router-admin-pw-Kx4quill-9z.md": "---\ndescription: how to reach the router\ntype: reference\n---\n\nLog in as admin.\n",
}


def _names_on_disk(directory: Path) -> str:
    live = [p for p in directory.iterdir() if p.is_file()]
    return "\n".join(p.name for p in live) + (directory / "MEMORY.md").read_text(encoding="utf-8")


def test_a_file_named_for_a_secret_is_reported_without_its_name_and_renamed_in_the_next_generation(
    tmp_path: Path,
) -> None:
    directory = tmp_path / "mem"
    store = MemoryStore.init(directory)
    for name, body in NAMED_FILES.items():
        (directory / name).write_text(body, encoding="utf-8")
    check = check_secrets([directory])
    assert check.status == WARN and "github-token" in check.detail and "password" in check.detail
    assert NAMED_TOKEN[4:12] not in check.detail and "Kx4quill" not in check.detail
    store.reconcile()
    shown = _names_on_disk(directory)
    assert NAMED_TOKEN[4:12].lower() not in shown.lower() and "kx4quill" not in shown.lower(), shown
    assert len(store.read().records) == 2
    assert check_secrets([directory]).status == OK


def test_adopting_a_directory_renames_a_file_named_for_a_secret(tmp_path: Path) -> None:
    directory = tmp_path / "mem"
    directory.mkdir()
    for name, body in NAMED_FILES.items():
        (directory / name).write_text(body, encoding="utf-8")
    adopt(directory)
    shown = _names_on_disk(directory)
    assert NAMED_TOKEN[4:12].lower() not in shown.lower() and "kx4quill" not in shown.lower(), shown
    assert check_secrets([directory]).status == OK
