"""Secret redaction: one test per secret shape, near-misses that must survive, JSONL safety."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from memory.redact import redact

# Fake credentials in the real shapes (none of these is a live key).
ANTHROPIC = "sk-ant-api03-AbCdEf0123456789_abcdefghijklmnopQRSTUV-xyz0123AA"
OPENAI_CLASSIC = "sk-AbCdEfGhIjKlMnOpQrStT3BlbkFJuVwXyZ0123456789abcd"
OPENAI_PROJECT = "sk-proj-AbC123def456GHI789jkl012MNO345pqr678STU901vwx"
GITHUB_CLASSIC = "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"
GITHUB_OAUTH = "gho_16C7e42F292c6912E7710c838347Ae178B4a"
GITHUB_APP = "ghs_16C7e42F292c6912E7710c838347Ae178B4a"
GITHUB_PAT = "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJ0123456789"
AWS_ACCESS = "AKIAIOSFODNN7EXAMPLE"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
GOOGLE = "AIzaSyA1234567890abcdefghijklmnopqrstuv"
SLACK = "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
NPM = "npm_" + "Zq81LmXw02pRtY7uVb4cKd9eHs3Fg6Jn5Aa1"
PYPI = "pypi-AgEIcHlwaS5vcmc" + "CJGRhNjQ1ZDRlLTg3ZjEtNDQ1Yi1iMjVmLTk1ZTk4YmQxYjQwZQ"
GITLAB = "glpat-" + "x9Yb3kQm7TzW2pLc8vNr"
HUGGINGFACE = "hf_" + "kZ3mQ8rT1vX6bN9pL2wC5yH7jF4gD0sA"
STRIPE = "sk_live_" + "51Hq2LmZx9Kp3RtY8uVb"
SENDGRID = "SG." + "nB4kQ9zXm2LpR7tYw1cVhA" + "." + "Jd8sK3fG6hL1qW9eR4tY7uI0oP2aS5dF"
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
PEM = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    "MIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM9Oi8w5d4dR2cuFcJ1pWnV7oGqHcH\n"
    "kQ8Bd3A9c1YyZs2r0d8=\n"
    "-----END RSA PRIVATE KEY-----"
)


@pytest.mark.parametrize(
    ("text", "secret", "kind"),
    [
        (f"my key is {ANTHROPIC} ok", ANTHROPIC, "anthropic-key"),
        (f"OPENAI_API_KEY {OPENAI_CLASSIC}", OPENAI_CLASSIC, "openai-key"),
        (f"use {OPENAI_PROJECT} here", OPENAI_PROJECT, "openai-key"),
        (f"git remote with {GITHUB_CLASSIC}", GITHUB_CLASSIC, "github-token"),
        (f"oauth {GITHUB_OAUTH}.", GITHUB_OAUTH, "github-token"),
        (f"app {GITHUB_APP}", GITHUB_APP, "github-token"),
        (f"fine-grained {GITHUB_PAT}", GITHUB_PAT, "github-token"),
        (f"id {AWS_ACCESS} in config", AWS_ACCESS, "aws-access-key"),
        (f"aws_secret_access_key = {AWS_SECRET}\n", AWS_SECRET, "aws-secret-key"),
        (f'AWS_SECRET_ACCESS_KEY="{AWS_SECRET}"', AWS_SECRET, "aws-secret-key"),
        (f"maps {GOOGLE}", GOOGLE, "google-api-key"),
        (f"slack {SLACK}", SLACK, "slack-token"),
        (f"jwt {JWT}", JWT, "jwt"),
        (f"publish with {NPM}", NPM, "npm-token"),
        (f"twine upload -p {PYPI}", PYPI, "pypi-token"),
        (f"clone over https with {GITLAB}", GITLAB, "gitlab-token"),
        (f"HF {HUGGINGFACE} for the hub", HUGGINGFACE, "huggingface-token"),
        (f"charge with {STRIPE}", STRIPE, "stripe-key"),
        (f"mail via {SENDGRID}", SENDGRID, "sendgrid-key"),
        (f"记一下，以后发包就用这个 token：{NPM}", NPM, "npm-token"),
        ("测试库的密码：Xk29dLq8z，别外传", "Xk29dLq8z", "password"),
        ("服务账号的密钥是 Qw8erTy5uI 记得轮换", "Qw8erTy5uI", "secret"),
        ("my passport number is X12345678, expires 2031", "X12345678", "id-number"),
        ("SSN: 123-45-6789", "123-45-6789", "id-number"),
        ("护照号 EJ4471928，有效期到2031年", "EJ4471928", "id-number"),
        ("身份证号：11010519491231002X", "11010519491231002X", "id-number"),
        (
            "curl -H 'Authorization: Bearer abcDEF123456.ghiJKL' x",
            "abcDEF123456.ghiJKL",
            "bearer-token",
        ),
        ('{"Authorization": "Bearer tok_9f8e7d6c5b4a"}', "tok_9f8e7d6c5b4a", "bearer-token"),
        (f"key:\n{PEM}\nend", PEM, "private-key"),
        ("DB_PASSWORD=hunter22x", "hunter22x", "password"),
        ("passwd: s3cretpw1", "s3cretpw1", "password"),
        ('password = "correct horse"', None, None),  # spaces: not a single token, left alone
        ('password = "hunter2!"', "hunter2!", "password"),
        ('client_secret="abcdefXYZ"', "abcdefXYZ", "secret"),
        ("token=abc123def456", "abc123def456", "token"),
        ("GITLAB_TOKEN: glpat9x8y7z6w", "glpat9x8y7z6w", "token"),
        ("api_key='AKx92jfjf'", "AKx92jfjf", "api-key"),
        ('apiKey: "zz9988776655"', "zz9988776655", "api-key"),
        ('SECRET_KEY = "django-insecure-abc123"', "django-insecure-abc123", "secret"),
    ],
)
def test_each_secret_shape_is_replaced_by_a_marker_naming_its_kind(
    text: str, secret: str | None, kind: str | None
) -> None:
    out, kinds = redact(text)
    if secret is None:
        assert (out, kinds) == (text, [])
        return
    assert secret not in out
    assert f"[REDACTED:{kind}]" in out
    assert kinds == [kind]


def test_assignment_keeps_the_key_and_replaces_only_the_value() -> None:
    assert redact("export DB_PASSWORD=hunter22x; echo ok") == (
        "export DB_PASSWORD=[REDACTED:password]; echo ok",
        ["password"],
    )
    assert redact(f"aws_secret_access_key = {AWS_SECRET}") == (
        "aws_secret_access_key = [REDACTED:aws-secret-key]",
        ["aws-secret-key"],
    )
    assert redact("Authorization: Bearer abcdef123456") == (
        "Authorization: Bearer [REDACTED:bearer-token]",
        ["bearer-token"],
    )


@pytest.mark.parametrize(
    "text",
    [
        "def login(password: str) -> bool:",
        "token = get_token()",
        "max_tokens: 4096, input_tokens: 512",
        "input_token: 512",
        'curl -H "Authorization: Bearer $TOKEN" https://api.example.com',
        "The password is stored in the vault; rotate the secret monthly.",
        "secret: string\ntoken: null\npassword: required",
        "password = os.environ['DB_PASSWORD']",
        "scikit-learn (sk-learn) and task-1234567890abcdefghijkl and risk-assessment-framework-v2",
        "ghp_short is not a token; AKIAsmall neither; AIza too short",
        "monkey: 'bananas123' and key = 'abcdefgh1'",
        "-----BEGIN PRIVATE KEY----- appears in prose without a body or end marker",
        "Use tabs, not spaces. 记住：我喜欢用制表符。",
        "Bearer tokens are described in RFC 6750.",
        "password: ********, token=xxxxxxxxxx",
        "密钥管理放在 vault 里；我的密码是要保密的",
        "set npm_config_cache and run npm ci; the token is in the vault",
        "the password is required and the key is rotated weekly",
        "pk_live_abcdefgh12345678 is a publishable key, meant to be public",
        "my passport expires in 2031; renew my passport next month; passport 2 photos",
        "the access token is base64url encoded; the password is sha256-hashed with bcrypt12",
    ],
)
def test_ordinary_prose_and_code_are_left_alone(text: str) -> None:
    assert redact(text) == (text, [])


def test_redacting_jsonl_keeps_every_line_valid_json() -> None:
    lines = [
        {
            "type": "user",
            "message": {"content": f'my key is {ANTHROPIC} and password = "hunter2x"'},
        },
        {"type": "assistant", "message": {"content": [{"type": "text", "text": f"{PEM}"}]}},
        {
            "type": "user",
            "toolUseResult": {"stdout": f"AWS_SECRET_ACCESS_KEY={AWS_SECRET}\n{GITHUB_CLASSIC}"},
        },
    ]
    text = "\n".join(json.dumps(x) for x in lines) + "\n"
    out, kinds = redact(text)
    parsed = [json.loads(line) for line in out.splitlines()]
    assert len(parsed) == 3
    assert parsed[0]["message"]["content"] == (
        'my key is [REDACTED:anthropic-key] and password = "[REDACTED:password]"'
    )
    assert parsed[1]["message"]["content"][0]["text"] == "[REDACTED:private-key]"
    assert parsed[2]["toolUseResult"]["stdout"] == (
        "AWS_SECRET_ACCESS_KEY=[REDACTED:aws-secret-key]\n[REDACTED:github-token]"
    )
    assert sorted(kinds) == ["anthropic-key", "aws-secret-key", "github-token", "password", "private-key"]


def test_redaction_is_idempotent_and_returns_clean_text_unchanged() -> None:
    text = f"a {ANTHROPIC} b password=hunter22x c {SLACK}"
    once, kinds = redact(text)
    assert kinds == ["anthropic-key", "slack-token", "password"]
    assert redact(once) == (once, [])
    clean = "nothing to see here " * 100
    assert redact(clean)[0] is clean


def test_real_transcripts_and_memory_files_are_left_unchanged(shared_data: Path) -> None:
    # SOURCES.md: a secret scan found no keys in the corpus, so any hit is a false positive
    # (this once caught the pydantic demo line `UserLogin(name=..., password='password')`).
    paths = [
        *sorted((shared_data / "claude_code").glob("*.jsonl")),
        *sorted((shared_data / "other_formats").glob("*")),
        *sorted((shared_data / "memory_dirs").glob("*/*.md")),
    ]
    assert len(paths) > 30
    hits = {}
    for path in paths:
        text = path.read_text(encoding="utf-8")
        out, kinds = redact(text)
        if kinds or out != text:
            hits[path.name] = kinds
    assert hits == {}


def test_redacting_a_large_transcript_is_fast(shared_data: Path) -> None:
    text = (
        shared_data / "claude_code" / "marot__spotter__4d5611e5-241a-462a-8d15-5122611a9569.jsonl"
    ).read_text(encoding="utf-8")
    start = time.perf_counter()
    out, _ = redact(text)
    elapsed = time.perf_counter() - start
    assert out == text
    assert elapsed < 2.0  # ~0.1 s for 3 MB on an idle core; generous for a shared CI box


def test_a_chinese_credential_before_an_english_one_is_still_read() -> None:
    """The English words' loop left its last value's end behind for the Chinese words: every
    Chinese word before it was skipped, so a whole transcript (the hook's lines) kept "密码为 X"
    that the turn alone lost (issue 22)."""
    text = "数据库的密码为 Xk29dLq8z，别告诉别人。\nDB_PASSWORD=hunter22xyz\n"
    out, _kinds = redact(text)
    assert "Xk29dLq8z" not in out and "hunter22xyz" not in out


def test_a_token_longer_than_a_cloud_secret_is_not_cut_at_the_context_window() -> None:
    """A cloud secret is read within 400 characters of the cloud's name; a longer run the
    window's end cut in two was taken for one (33 characters of a 43-character ``aesKey``),
    leaving its tail in the text and the rest of it unread."""
    key = "CJ8mn1UtqQqq7Y2PdcgpMseMmZXwBfJ5e7W0sedIsfy"
    head = "阿里云 OSS for the uploads.\n"
    label = "    aesKey: "
    filler = "note " * ((400 - 33 - len(head) - len(label)) // 5)
    filler += " " * (400 - 33 - len(head) - len(label) - len(filler))
    text = f"{head}{filler}{label}{key}\n"
    assert text.index(key) == 400 - 33  # the window ends inside the key
    out, _kinds = redact(text)
    assert not any(key[i : i + 6] in out for i in range(len(key) - 5)), out[-80:]
