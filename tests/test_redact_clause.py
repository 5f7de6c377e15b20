"""Detection by context, structurally: a value anywhere in a clause that names a credential
(``memory.redact.clause``), and a value found once redacted at every other place it occurs
(``memory.redact.engine.repeated_values``)."""

from __future__ import annotations

import pytest

from memory.redact import redact, redact_found


def test_value_found_once_is_redacted_at_every_other_occurrence() -> None:
    text = "the staging password is Xq7!bt2kk. Later I typed Xq7!bt2kk twice and it worked"
    out, kinds = redact(text)
    assert "Xq7!bt2kk" not in out
    assert out.count("[REDACTED:password]") == 2
    assert kinds == ["password"]


def test_repeated_value_goes_in_every_language_and_is_listed_once() -> None:
    text = "新的数据库密码是 Lx9pQ2mzR4，记一下\nok, so psql asked and I gave it Lx9pQ2mzR4."
    out, _kinds, found = redact_found(text)
    assert "Lx9pQ2mzR4" not in out
    assert [v for v, _k in found] == ["Lx9pQ2mzR4"]  # what a detector proved, once


def test_short_repeated_value_is_kept_inside_another_word() -> None:
    out, _ = redact("PIN code: 552910. Ticket INC552910X stays as it is")
    assert "[REDACTED:pin]" in out
    assert "INC552910X" in out


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("todo:\n- change the ftp pw (currently goldfish44) \n- renew the cert", "goldfish44"),
        ("密码我写在便签上了 Hx83kdm2 别外传", "Hx83kdm2"),
        ("passphrase (the one on the yubikey note) Brisk7harbor7", "Brisk7harbor7"),
        ("登录堡垒机的时候输入 Qm72vx9pLk 就可以", "Qm72vx9pLk"),
        (
            "the api key we share — yes 8fQmZ2xLw7Kp3RtV9bN4sH6j — lives in the team vault",
            "8fQmZ2xLw7Kp3RtV9bN4sH6j",
        ),
    ],
)
def test_value_anywhere_in_a_credential_clause_is_redacted(text: str, secret: str) -> None:
    out, kinds = redact(text)
    assert secret not in out, out
    assert kinds


@pytest.mark.parametrize(
    "text",
    [
        "the password for postgres16 is in the vault",
        "We use 1Password for the team secrets",
        "pin the version to 3.12.0rc2 and bcrypt12 stays",
        "reverted 7bbe931e3f0ec8910dd4e20c51b35223fb63d5bc because it broke the login page",
        "回滚到 365bc1bf01c2e9d9cd6171a791b4ed957fe731cd 这个提交就行，之后那次合并把登录页搞坏了",
        "微信登录回调：openid=oSaMFEikj49AOyJAJzdoAeYJrKQB nickname=小王",
        "ORG_ID=org-C2HrtGU6Ylu6VrYQP9vHCijI  # 组织 ID 不是密钥",
        "the password reset flow v2 uses pw-reset-v3 and gpt-4o-mini",
        "login page build a8f3k2m9x7 failed; the token sha is 9fceb02d0ae598e95dc970b74767f19372d61af8",
        "deployed Token at 0x5c8a6d21d826816291e9a5dc75d39962e43c5276",
    ],
)
def test_lookalikes_in_a_credential_clause_survive(text: str) -> None:
    assert redact(text)[0] == text


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("login for the grafana instance is ops-lead / Qu1etRiver!", "Qu1etRiver!"),
        ("login for grafana is ops / Qu1etRiver!", "Qu1etRiver!"),
    ],
)
def test_user_password_pair_after_a_login_said_for_something(text: str, secret: str) -> None:
    out, _ = redact(text)
    assert secret not in out and "ops" in out  # the password goes, the user stays


def test_passphrase_ends_where_its_clause_goes_on() -> None:
    out, _ = redact(
        "the passphrase on my ssh key is correct pony staple battery 9 if the agent asks"
    )
    assert out == "the passphrase on my ssh key is [REDACTED:password] if the agent asks"
    out, _ = redact("passphrase: Blue Whale Sings Loud so keep it")
    assert out == "passphrase: [REDACTED:password] so keep it"


@pytest.mark.parametrize(
    ("text", "pieces"),
    [
        (
            "the token wrapped in my terminal, it's\nghp_ESQI54zy8GgyNXN7Mj\nj3xRYxQh3v4XOnXT8H\n(join the two lines)",
            ["ghp_ESQI54zy8GgyNXN7Mj", "j3xRYxQh3v4XOnXT8H"],
        ),
        (
            "api key (hyphen-wrapped by the mail client): Qm8xLw2Zp9Kd-\nR7vB4nT3yHs0F\nthanks",
            ["Qm8xLw2Zp9Kd", "R7vB4nT3yHs0F"],
        ),
    ],
)
def test_value_cut_over_line_breaks_next_to_its_word_is_one_value(
    text: str, pieces: list[str]
) -> None:
    out, _ = redact(text)
    assert all(p not in out for p in pieces), out
    assert "thanks" in out or "thanks" not in text


@pytest.mark.parametrize(
    "text",
    [
        "token hashes:\nd41d8cd98f00b204e9800998ecf8427e\n9e107d9d372bb6826bd81d3542a419d6",
        "password reset log\nuser123456\nadmin654321",
    ],
)
def test_lines_after_a_credential_word_that_join_to_nothing_survive(text: str) -> None:
    assert redact(text)[0] == text


def test_a_path_in_a_clause_that_names_a_secret_is_not_its_value() -> None:
    """``dreamd sync`` names the command that recovers a refused push, with the directory's path,
    in the same sentence as "look(s) like a secret"; a path is never the value (a test's tmp
    directory, named after the test, ended the line as ``pytest-[REDACTED:secret]``)."""
    line = ("/srv/m: refusing to push: a.md (password) look(s) like a secret, held by unpushed "
            "generations; Run 'dreamd sync /tmp/pytest-of-root/pytest-99/test_push_for_a_secr0/mem "
            "--squash-unpushed' to publish")
    assert redact(line) == (line, [])
    assert redact("my secret dir is ~/vault7/keys2/prod")[0] == "my secret dir is ~/vault7/keys2/prod"
