"""Issue 22: every secret kind it lists is redacted (one test each), look-alikes survive, and a
secret leaves nothing of itself: not in the text, not in a record's name or file name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memory.redact import redact, safe_name, secret_values
from memory.store.records import make_record, slugify
from memory.store.redaction import redact_record
from memory.store.transaction import Change, MemoryStore
from tests.helpers.redaction import gone


def assert_redacted(text: str, secret: str, kind: str) -> None:
    out, kinds = redact(text)
    assert gone(secret, out), out
    assert f"[REDACTED:{kind}]" in out, out
    assert kind in kinds


def test_password_in_a_sentence_with_is() -> None:
    assert_redacted(
        "fyi the password for the build agent is qA7!nB3zK, do not share", "qA7!nB3zK", "password"
    )


def test_password_set_to_and_passphrase_with_spaces() -> None:
    assert_redacted("we changed the vpn password to Lm4$pQ9wX last week", "Lm4$pQ9wX", "password")
    assert_redacted(
        'ssh-keygen passphrase: "violet kettle 77 harbor"', "violet kettle 77 harbor", "password"
    )


def test_chinese_password_with_wei_shi_and_colon() -> None:
    assert_redacted("演示服务器的密码为 Hq83kd0Lz，明天改", "Hq83kd0Lz", "password")
    assert_redacted("邮箱密码是Zz66aa77bb", "Zz66aa77bb", "password")
    assert_redacted("堡垒机口令：Mk#2291qa", "Mk#2291qa", "password")
    assert_redacted("接口密钥是 T9w2Lq7Xc4Vb8Nm1 别外传", "T9w2Lq7Xc4Vb8Nm1", "secret")


def test_pin_and_digit_passwords_need_a_connector_and_no_unit() -> None:
    assert_redacted("the garage PIN is 5140", "5140", "pin")
    assert_redacted("保险柜密码是 730155", "730155", "password")
    for text in ("the PIN is 4 digits", "passwords of 12 characters", "pin 3 CPUs to the job"):
        assert redact(text) == (text, [])


def test_user_password_pairs() -> None:
    out, _ = redact("the login is root / Gr8Pass!word for the NAS")
    assert gone("Gr8Pass!word", out) and "root" in out
    out, _ = redact("预发环境登录用 ops / Ops@2025xyz")
    assert gone("Ops@2025xyz", out) and "ops" in out
    out, _ = redact("账号 lisi 密码 Ls20200202q，只读")
    assert gone("Ls20200202q", out)
    assert redact("Add login / signup links to the nav.")[1] == []


def test_credentials_in_urls_and_connection_strings() -> None:
    assert_redacted("DSN=mysql://web:Wb9pass22@10.1.2.3:3306/shop", "Wb9pass22", "password")
    out, _ = redact("psql postgres://u:pw@localhost/db")
    assert "pw@" not in out and "[REDACTED:password]@localhost/db" in out
    assert_redacted("Data Source=db;User ID=sa;Pwd=Kq8!s2Lm;", "Kq8!s2Lm", "password")
    for text in (
        "postgres://localhost:5432/db",
        "ssh://git@host:22/repo",
        "postgres://app:${PGPASS}@db/app",
    ):
        assert redact(text) == (text, [])


def test_authorization_headers_basic_and_bearer() -> None:
    assert_redacted(
        "Authorization: Basic ZGV2OnBhc3N3b3JkMTIz", "ZGV2OnBhc3N3b3JkMTIz", "basic-auth"
    )
    assert_redacted(
        "-H 'authorization: Bearer Qm9vW2x3Zk8yLmNvbTEyMw'",
        "Qm9vW2x3Zk8yLmNvbTEyMw",
        "bearer-token",
    )
    assert_redacted(
        "sent Basic ZGV2OnBhc3N3b3JkMTIz upstream", "ZGV2OnBhc3N3b3JkMTIz", "basic-auth"
    )
    assert redact('-H "Authorization: Bearer ${API_TOKEN}"')[1] == []
    assert redact("Basic authentication is fine for the intranet.")[1] == []


@pytest.mark.parametrize(
    "label",
    ["RSA PRIVATE KEY", "PRIVATE KEY", "EC PRIVATE KEY", "ENCRYPTED PRIVATE KEY", "OPENSSH PRIVATE KEY",
     "PGP PRIVATE KEY BLOCK"],
)  # fmt: skip
def test_private_key_blocks_of_every_armour(label: str) -> None:
    body = "Version: test\n\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtz\nQyNTUxOQAAACBq0w==\n"
    block = f"-----BEGIN {label}-----\n{body}-----END {label}-----"
    out, kinds = redact(f"key:\n{block}\nthanks")
    assert out == "key:\n[REDACTED:private-key]\nthanks" and kinds == ["private-key"]


def test_a_key_block_cut_before_its_end_line_is_still_redacted() -> None:
    cut = "-----BEGIN OPENSSH PRIVATE KEY-----\n" + "b3BlbnNzaC1rZXktdjEAAAAABG5v" * 4
    out, _ = redact(json.dumps({"content": cut}))
    assert gone("b3BlbnNzaC1rZXktdjEAAAAABG5v", out)
    public = (
        "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----"
    )
    assert redact(public) == (public, [])


AWS_SECRET = "bPxRfiCY7EXAMPLEKEYwJalrXUtnFEMI/K7MDENG"


def test_aws_secret_key_in_prose_without_its_label_and_after_an_access_key_id() -> None:
    assert_redacted(
        f"my aws keys: AKIAJ2Q3EXAMPLEZZZ44 / {AWS_SECRET}", AWS_SECRET, "aws-secret-key"
    )
    assert_redacted(
        f"aws_access_key_id=AKIAJ2Q3EXAMPLEZZZ44\n{AWS_SECRET}\n", AWS_SECRET, "aws-secret-key"
    )
    assert_redacted(
        json.dumps({"t": f"AKIAJ2Q3EXAMPLEZZZ44\n{AWS_SECRET}"}), AWS_SECRET, "aws-secret-key"
    )
    sha = "da39a3ee5e6b4b0d3255bfef95601890afd80709"
    assert redact(f"aws s3 cp build.tar; sha1 {sha}")[1] == []


def test_azure_account_key_and_gcp_private_key_id() -> None:
    key = (
        "q83Lm1Vb7Xz0Pw4Rt6Yc9Nd2Ke5Ja8Hs3Fg6Dl1Aa0Bb2Cc4Dd6Ee8Ff0Gg2Hh4Ii6Jj8Kk0Ll2Mm4Nn6Oo8Pp0Q=="
    )
    assert_redacted(
        f"DefaultEndpointsProtocol=https;AccountName=x;AccountKey={key};EndpointSuffix=core",
        key,
        "secret",
    )
    kid = "0a1b2c3d4e5f60718293a4b5c6d7e8f901234567"
    assert_redacted(json.dumps({"type": "service_account", "private_key_id": kid}), kid, "secret")


def test_stripe_webhook_secret_and_live_key() -> None:
    assert_redacted(
        "whsec_Zx8Kq2Lm9Pw4Rt7Yb1Nc5Vd3Hs6F listens",
        "whsec_Zx8Kq2Lm9Pw4Rt7Yb1Nc5Vd3Hs6F",
        "stripe-webhook-secret",
    )
    assert_redacted(
        "key sk_live_4eC39HqLyjWDarjtT1zdp7dc", "sk_live_4eC39HqLyjWDarjtT1zdp7dc", "stripe-key"
    )


def test_slack_webhook_url_leaves_no_part_of_the_url() -> None:
    url = "https://hooks.slack.com/services/T0ABCDEF1/B0GHIJKL2/q1w2e3r4t5y6u7i8o9p0a1s2"
    out, kinds = redact(f"notify {url} on failure")
    assert out == "notify [REDACTED:webhook-url] on failure" and kinds == ["webhook-url"]


def test_twilio_auth_token() -> None:
    token = "5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d"
    assert_redacted(f"TWILIO_AUTH_TOKEN={token}", token, "token")
    assert_redacted(f"Twilio auth token {token} for the SMS sender", token, "token")


def test_telegram_bot_token_with_its_bot_id() -> None:
    token = "6123456789:AAF1kq9LmZx7Pw3Rt5Yb2Nc8Vd4Hs6Fg0Jk"
    out, kinds = redact(f"bot = Bot('{token}')")
    assert gone(token, out) and "6123456789" not in out and kinds == ["telegram-bot-token"]


def test_mysql_pwd_and_password_env_vars() -> None:
    assert_redacted("MYSQL_PWD=m7Sq!88pass mysql -u root", "m7Sq!88pass", "password")
    assert_redacted("SMTP_PASSWORD='xN4vB8mQ2'", "xN4vB8mQ2", "password")
    assert_redacted("mysql -u root -pRt5Sq!991 shop", "Rt5Sq!991", "password")


def test_bare_40_hex_api_key_next_to_key_context() -> None:
    key = "9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b"
    assert_redacted(f"WANDB_API_KEY={key}", key, "api-key")
    assert_redacted(f"wandb login {key}", key, "api-key")
    assert_redacted(f"my api key: {key}", key, "api-key")
    for text in (
        f"commit {key}",
        f"git checkout {key}",
        f"cache key is sha1 {key}",
        f"the token hash {key}",
    ):
        assert redact(text)[1] == [], text


def test_high_entropy_token_right_after_a_credential_word() -> None:
    assert_redacted("deploy token Zk29xQm4Lp8vRt3wYb7N for CI", "Zk29xQm4Lp8vRt3wYb7N", "token")
    assert_redacted("secret => Hq2Lm9Xw4Pz7Rt1Vb8Nc", "Hq2Lm9Xw4Pz7Rt1Vb8Nc", "secret")


@pytest.mark.parametrize(
    "text",
    [
        "merged 1f0e2d3c4b5a69788796a5b4c3d2e1f0a9b8c7d6 into main",
        "trace_id=4bf92f3577b34da6a3ce929d0e0e4736 span=00f067aa0ba902b7",
        "uuid 6fa459ea-ee8a-3ca4-894e-db77e160355e assigned",
        "release v4.18.2 (build 2026.03.1) is out",
        'payload = base64.b64encode(b"hello world, this is a test").decode()  # aGVsbG8gd29ybGQsIHRoaXMgaXMgYSB0ZXN0',
        "the password reset flow sends a link",
        "the password policy is 12 characters",
        "the token is refreshed hourly; the secret is rotated by Vault",
        "忘记密码时走密码重置流程；密钥每90天轮换",
        "def connect(user: str, password: str, token: str | None = None) -> None:",
        "password = request.form['password']",
        'if password == "":',
        "PRIMARY KEY (tenant_id, user_id)",
        "hash: sha256:0d5f3c9f2b1a7e6d4c3b2a19f8e7d6c5b4a39281706f5e4d3c2b1a0f9e8d7c6b",
    ],
)
def test_look_alikes_survive_untouched(text: str) -> None:
    assert redact(text) == (text, [])


def test_a_record_name_derived_from_a_secret_does_not_carry_it() -> None:
    text = "the login is admin / S3cr3tPass"
    assert safe_name(slugify(text), text) == "the-login-is-admin"
    rec = make_record("project-login-admin-s3cr3tpass", "project", text, text + "\n", where="t")
    clean, kinds = redact_record(rec)
    assert clean.name == "the-login-is-admin" and "name" in kinds  # named from the redacted description
    assert "S3cr3tPass" not in clean.description + clean.body
    assert safe_name("deploy-checklist", text) == "deploy-checklist"
    assert (
        safe_name("sk-ant-key", "use sk-ant-api03-Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0FeDcBa-abcdefGH")
        == "key"
    )


def test_secret_values_lists_what_redact_replaces() -> None:
    assert secret_values("pw: Kd8!xx22 and token=Aa11Bb22Cc33") == ["Kd8!xx22", "Aa11Bb22Cc33"]


def test_every_commit_redacts_names_descriptions_and_bodies(tmp_path: Path) -> None:
    store = MemoryStore.init(tmp_path / "mem")
    text = "the password for the admin user is hunter2Secret!"
    rec = make_record("admin-password-hunter2secret", "project", text, text + "\n", where="t")
    result = store.commit(Change(add=[rec]))
    assert result.added == ["the-password-for-the-admin-user-is"]  # from the redacted description
    on_disk = "".join(
        p.name + p.read_text(encoding="utf-8") for p in (tmp_path / "mem").iterdir() if p.is_file()
    )
    assert gone("hunter2Secret!", on_disk.lower()) and gone("hunter2secret", on_disk.lower())
    assert "[REDACTED:password]" in (tmp_path / "mem" / "MEMORY.md").read_text(encoding="utf-8")


def test_pin_code_traditional_chinese_and_redis_requirepass() -> None:
    assert_redacted("door PIN code is 7312", "7312", "pin")
    assert_redacted("PIN码是 6620", "6620", "pin")
    assert_redacted("網站密碼為 Tw55xyz88", "Tw55xyz88", "password")
    assert_redacted("requirepass R3disStrong9", "R3disStrong9", "password")
    assert_redacted("token是qq12ww34ee", "qq12ww34ee", "token")
    for text in ("The PIN code must be 6 digits", "bypass the cache for 3 tests", "the pin code length is 6"):
        assert redact(text) == (text, [])
