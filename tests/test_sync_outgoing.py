"""Sync's pre-push secret check reads dreamd's own files by their structure (issue 22, finding 3):
derived names and markers never block a push; a real secret anywhere still does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dreamd.sync.flow import SyncError, sync
from dreamd.sync.outgoing import file_secrets, message_secrets
from memory.store.records import make_record
from memory.store.transaction import Change, MemoryStore
from tests.sync_helpers import bare_remote, git, isolate_git

GH = "ghp_" + "Xq7Lm2Np9Rt4Vw6Yz8Ab1Cd3Ef5Gh0Jk2Ls4"
ANT = "sk-ant-api03-" + "Wv3Kp8Qz1Tn6Rb4Yc7Hd2Jf9Lm5Sx0" * 3


@pytest.fixture
def remote(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    isolate_git(tmp_path, monkeypatch)
    return bare_remote(tmp_path / "remote.git")


def test_derived_names_after_credential_words_and_markers_never_block_a_push(tmp_path: Path, remote: str) -> None:
    d = tmp_path / "a" / ".memory"
    MemoryStore.init(d)
    store = MemoryStore(d)
    records = [
        ("db-password-rotation", "The DB password rotates monthly", "We rotate the database password every month."),
        ("api-token-scopes", "Which api token scopes the CI needs", "The api token needs read:packages."),
        ("staging-deploy-key", f"The staging deploy key {ANT}", "Deploy with the staging key."),
        ("ci-runner", f"CI runner registration {GH}", "The runner registers itself."),
        ("gh-secret-names", "The gh secret names the workflows read", "DEPLOY_KEY and NPM_TOKEN."),
        ("signing-key-location", "Where the signing key lives", "In the team vault."),
    ]
    for name, description, body in records:
        store.commit(Change(add=[make_record(name, "project", description, body)]))
    manifest = (d / "manifest.json").read_text()
    assert "[REDACTED:anthropic-key]" in manifest and "[REDACTED:github-token]" in manifest
    report = sync(d, remote=remote)
    assert report.pushed
    tree = set(git(Path(remote), "ls-tree", "--name-only", "main").split())
    assert {e.file for e in MemoryStore(d).read().records} <= tree


def test_a_secret_in_any_field_of_the_manifest_is_still_found() -> None:
    entry = {"name": "ci", "type": "project", "description": "ci", "file": "ci-0123456789.md", "sha256": "0" * 64}
    clean = {"format": 1, "generation": 3, "records": [entry]}
    assert file_secrets("manifest.json", json.dumps(clean).encode()) == []
    for key in ("name", "description", "file"):
        leaky = {**clean, "records": [{**entry, key: f"token {GH}"}]}
        assert file_secrets("manifest.json", json.dumps(leaky).encode()) == ["github-token"], key
    leaky = {**clean, "change": {"session_id": GH, "note": "x"}}
    assert file_secrets("manifest.json", json.dumps(leaky).encode()) == ["github-token"]
    assert file_secrets("manifest.json", b"{not json " + GH.encode()) == ["github-token"]


def test_memory_md_is_read_without_dreamd_s_link_targets_but_its_text_is_checked() -> None:
    ours = "- [staging-deploy-key](staging-deploy-key-52526b39d3.md) — The deploy key [REDACTED:api-key]\n"
    assert file_secrets("MEMORY.md", ours.encode()) == []
    assert file_secrets("MEMORY.md", (ours + f"- [x](x.md) — key {ANT}\n").encode()) == ["anthropic-key"]
    assert file_secrets("MEMORY.md", f"- [x]({GH}.md) — x\n".encode()) == ["github-token"]


def test_a_hand_written_file_s_name_and_body_are_checked() -> None:
    assert file_secrets(f"notes-{GH}.md", b"---\nname: n\n---\nplain\n") == ["github-token"]
    assert file_secrets("notes.md", f"---\nname: n\n---\nkey {ANT}\n".encode()) == ["anthropic-key"]
    assert file_secrets("ci-runner-10ad4b6964.md", b"---\nname: ci-runner\n---\nplain\n") == []


def test_an_outgoing_commit_message_with_a_secret_is_refused(tmp_path: Path, remote: str) -> None:
    assert message_secrets(f"dreamd generation 2\n\nadded by session {GH}\n") == ["github-token"]
    d = tmp_path / "a" / ".memory"
    MemoryStore.init(d)
    sync(d, remote=remote)
    head = git(d, "rev-parse", "HEAD")
    tree = git(d, "rev-parse", "HEAD^{tree}")
    leaky = git(d, "commit-tree", tree, "-p", head, input=f"a note holding {GH}\n".encode())
    git(d, "update-ref", "HEAD", leaky)
    with pytest.raises(SyncError, match=r"the message of commit [0-9a-f]{12} \(github-token\)") as err:
        sync(d)
    assert GH not in str(err.value) and "--squash-unpushed" in str(err.value)
