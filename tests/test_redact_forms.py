"""Issue 22, the forms a blind set found getting through: values said before their word, short
credential words, Chinese with words between, session cookies, recovery-code lists, command
lines, provider formats, placeholders, and a token cut in half by a field's length limit.

Every value here is invented (random from the right alphabet and length, seeded)."""

from __future__ import annotations

import random
import re
import string
from pathlib import Path

import pytest

from memory.redact import redact, scrub_fragments, secret_values
from memory.store.adopt import adopt
from memory.store.records import make_record
from memory.store.transaction import Change, MemoryStore

_RNG = random.Random(22)
B62 = string.ascii_letters + string.digits
HEX = "0123456789abcdef"


def rand(n: int, alphabet: str = B62) -> str:
    while True:
        value = "".join(_RNG.choice(alphabet) for _ in range(n))
        if any(c.isdigit() for c in value) and any(c.isalpha() for c in value):
            return value


def gone(secret: str, out: str) -> bool:
    """Nothing of ``secret`` is left, not any 6 characters of it (markers aside: the kind
    ``rubygems-key`` shares "rubyge" with ``rubygems_…``)."""
    out = re.sub(r"\[REDACTED:[a-z0-9-]+\]", "\x00", out)
    return secret not in out and not any(secret[i : i + 6] in out for i in range(len(secret) - 5))


def assert_redacted(text: str, *secrets: str) -> str:
    out, kinds = redact(text)
    assert kinds, out
    for secret in secrets:
        assert gone(secret, out), out
    return out


def assert_untouched(text: str) -> None:
    assert redact(text) == (text, [])


# ------------------------------------------------------------------ prose


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("Vk3#pearl9 is the password for the printer admin page", "Vk3#pearl9"),
        ("ok so Trellis_5521 was the old password, it still works on the NAS", "Trellis_5521"),
        ("use 'Moss8!delta' as the passphrase when gpg asks", "Moss8!delta"),
        ("try Quill2024harbor as my wifi password if the office one fails", "Quill2024harbor"),
    ],
)
def test_a_value_said_before_its_password_word(text: str, secret: str) -> None:
    out = assert_redacted(text, secret)
    assert "[REDACTED:password]" in out


@pytest.mark.parametrize(
    "text",
    [
        "This is the password reset flow we ship",
        "sha256 is the password hash we store",
        "step2 is the password step of the wizard",
        "v3.2.1 is the password manager release with the fix",
        "which one is the password field?",
        "It is the password you chose at sign-up",
    ],
)
def test_words_before_a_password_word_that_are_no_value_survive(text: str) -> None:
    assert_untouched(text)


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("pw is Hx7#kq2Lm if it asks again", "Hx7#kq2Lm"),
        ("staging creds: user `ops-bot`, pass `r3dWine-88`.", "r3dWine-88"),
        ("chore: hardcode the admin pass Qz!81-mango for the demo", "Qz!81-mango"),
        ("the vault unseal pass — Cobalt#42x — is with Dana", "Cobalt#42x"),
        ("the new password's Velvet_2290, tell the qa team", "Velvet_2290"),
        ("I set the root password on the new droplet to Amber7!tide yesterday", "Amber7!tide"),
        ("guest wifi is ACME-GUEST, key harbor-mint-7731 for visitors", "harbor-mint-7731"),
    ],
)
def test_short_credential_words_and_prose_connectors(text: str, secret: str) -> None:
    assert_redacted(text, secret)


@pytest.mark.parametrize(
    "text",
    [
        "make sure the build will pass the lint step",
        "pw is required on the form",
        "we pass 12 tests now",
        "the key points are speed and safety",
        "the wifi is slow today, key takeaway: buy a router",
        "the password's length is checked on the server",
        "Session 2026-03-15: refactored the scheduler",
        "session folder: /home/ana/.copilot/session-state",
        "session=2 retries=3",
    ],
)
def test_ordinary_words_after_short_credential_words_survive(text: str) -> None:
    assert_untouched(text)


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("邮箱密码上周改成了 Qw8_lake#2，旧的别用了", "Qw8_lake#2"),
        ("把 MySQL 的密码设成 Pn5@fig77，然后重启服务", "Pn5@fig77"),
        ("admin 的密码我改了，新的是 Yt6!mn3Qp，记得更新脚本", "Yt6!mn3Qp"),
    ],
)
def test_chinese_with_words_between_the_word_and_the_connector(text: str, secret: str) -> None:
    assert_redacted(text, secret)


@pytest.mark.parametrize(
    "text",
    [
        "密码长度改成了 12 位",
        "密码的哈希值是 5f4dcc3b5aa765d61d8327deb882cf99",
        "密码策略改成了 strong-v2",
        "密码重置流程是发邮件",
    ],
)
def test_chinese_words_between_that_say_it_is_no_password_survive(text: str) -> None:
    assert_untouched(text)


# ------------------------------------------------------------------ cookies, codes, commands


def test_session_cookies_with_random_values() -> None:
    sid = rand(40)
    assert_redacted(f"> Cookie: sessionid={sid}; theme=dark", sid)
    sess = rand(32, B62 + "-_")
    assert_redacted(f"Set-Cookie: _app_sess={sess}; Path=/; HttpOnly", sess)
    assert_redacted(f'{{"connect.sid": "{sid}"}}', sid)


def test_recovery_code_lists_lose_every_code() -> None:
    codes = [f"{rand(5, HEX)}-{rand(5, HEX)}" for _ in range(6)]
    assert_redacted("my Bitwarden recovery codes:\n" + "\n".join(codes) + "\nkeep safe", *codes)
    digits = [f"{_RNG.randrange(10**4):04d} {_RNG.randrange(10**4):04d}" for _ in range(4)]
    out = assert_redacted("Google backup codes: " + ", ".join(digits), *digits)
    assert "Google backup codes:" in out
    zh = [f"{_RNG.randrange(10**8):08d}" for _ in range(5)]
    assert_redacted("两步验证备用码：\n" + "\n".join(f"{i + 1}. {c}" for i, c in enumerate(zh)), *zh)


@pytest.mark.parametrize(
    "text",
    [
        "recovery codes are a pain to keep safe",
        "the recovery code 1234 is wrong, try again",
        "the backup code path is in backup.py",
    ],
)
def test_talk_about_recovery_codes_survives(text: str) -> None:
    assert_untouched(text)


def test_command_line_credentials() -> None:
    assert_redacted("curl -s -u ci:Plank9!roof https://repo.example/api", "Plank9!roof")
    assert_redacted("wget --user=bob:58210447 https://files.example/x.tgz", "58210447")
    assert_redacted(
        "ssh-keygen -t rsa -b 4096 -N 'copper lantern 4 sails' -f ~/.ssh/ci",
        "copper lantern 4 sails",
    )
    assert_redacted('ssh-keygen -p -f id_ed25519 -P "Old-phrase-31" -N "New-phrase-32"',
                    "Old-phrase-31", "New-phrase-32")  # fmt: skip


@pytest.mark.parametrize(
    "text",
    [
        "docker run -u 1000:1000 app",
        'curl -u "$API_USER:$API_TOKEN" https://api.example',
        'ssh-keygen -t ed25519 -N "" -f key',
        "ssh -p 2222 deploy@host",
        "tar -N 2024-01-01 -cf new.tar dir",
    ],
)
def test_command_lines_without_a_credential_survive(text: str) -> None:
    assert_untouched(text)


# ------------------------------------------------------------------ provider formats


PROVIDER_TOKENS = [
    ("docker-token", "dckr_pat_" + rand(27, B62 + "-_")),
    ("aliyun-access-key", "LTAI" + rand(20)),
    ("tencent-secret-id", "AKID" + rand(32)),
    ("volcengine-access-key", "AKLT" + rand(40)),
    ("google-oauth-token", "ya29." + rand(60, B62 + "-_")),
    ("square-token", "sq0atp-" + rand(22, B62 + "-_")),
    ("twilio-api-key", "SK" + rand(32, HEX)),
    ("linear-key", "lin_api_" + rand(40)),
    ("notion-token", "ntn_" + rand(46)),
    ("postman-key", "PMAK-" + rand(24, HEX) + "-" + rand(34, HEX)),
    ("grafana-token", "glsa_" + rand(32) + "_" + rand(8, HEX)),
    ("sentry-token", "sntryu_" + rand(64, HEX)),
    ("doppler-token", "dp.st.prd." + rand(43)),
    ("pulumi-token", "pul-" + rand(40, HEX)),
    ("groq-key", "gsk_" + rand(52)),
    ("xai-key", "xai-" + rand(80)),
    ("replicate-token", "r8_" + rand(37)),
    ("perplexity-key", "pplx-" + rand(48)),
    ("figma-token", "figd_" + rand(40, B62 + "-_")),
    ("netlify-token", "nfp_" + rand(40)),
    ("flyio-token", "fo1_" + rand(43, B62 + "-_")),
    ("heroku-key", "HRKU-" + rand(60, B62 + "-_")),
    ("rubygems-key", "rubygems_" + rand(48, HEX)),
    ("planetscale-token", "pscale_tkn_" + rand(43, B62 + "_")),
    ("atlassian-token", "ATATT3" + rand(180, B62 + "_-")),
    ("slack-token", "xoxe-1-" + rand(140, B62 + "-")),
]


@pytest.mark.parametrize(("kind", "token"), PROVIDER_TOKENS, ids=[k for k, _ in PROVIDER_TOKENS])
def test_provider_token_formats(kind: str, token: str) -> None:
    out = assert_redacted(f"here it is: {token} (do not share)", token)
    assert f"[REDACTED:{kind}]" in out


@pytest.mark.parametrize(
    "text",
    [
        "export AWS_ACCESS_KEY_ID=AKIAXXXXXXXXXXXXXXXX",
        'client = Anthropic(api_key="sk-ant-xxxxxxxxxxxxxxxxxxxxxxxx")',
        "export ANTHROPIC_API_KEY=sk-ant-...",
        "GITHUB_TOKEN=ghp_****************************************",
        "token: ghp_000000000000000000000000000000000000",
        "ALIYUN_ACCESS_KEY_ID=LTAIxxxxxxxxxxxxxxxx",
        "-----BEGIN PRIVATE KEY-----\n...\n-----END PRIVATE KEY-----",
    ],
)
def test_vendor_shaped_placeholders_survive(text: str) -> None:
    assert_untouched(text)


def test_a_long_session_token_goes_whole() -> None:
    token = rand(700, B62 + "+/")
    assert_redacted(f"export AWS_SESSION_TOKEN={token}\n", token)


# ------------------------------------------------------------------ cut fields


def test_a_jwt_cut_after_its_payload_is_still_a_jwt() -> None:
    header = "eyJhbGciOiJIUzI1NiJ9"
    payload = "eyJzdWIiOi" + rand(40, B62 + "-_")
    out = assert_redacted(f"token from devtools: {header}.{payload}", header + "." + payload)
    assert "[REDACTED:jwt]" in out


def test_scrub_fragments_removes_any_run_of_a_known_secret() -> None:
    secret = "hooks.slack.com/services/" + rand(9) + "/" + rand(9) + "/" + rand(24)
    cut = f"alerts go to https://{secret}"[:50]
    assert redact(cut)[1] == []  # cut, the URL is no longer a webhook's shape
    out, kinds = scrub_fragments(cut, [(secret, "webhook-url")])
    assert kinds == ["webhook-url"] and gone(secret, out)
    assert scrub_fragments("nothing here", [(secret, "webhook-url")]) == ("nothing here", [])


def test_a_description_cut_from_the_body_keeps_no_half_of_its_token(tmp_path: Path) -> None:
    """The description is the body's first line cut at 200 characters (as the store derives
    it for a hand-written file without one): the token's first half stays in it unless the
    record's own secrets are scrubbed from every field."""
    hook = "https://hooks.slack.com/services/" + rand(9) + "/" + rand(11) + "/" + rand(24)
    body = "we post deploy alerts from the release pipeline to the ops channel " * 2 + hook + "\n"
    rec = make_record("deploy-alerts", "project", body[:150], body, where="t")
    store = MemoryStore.init(tmp_path / "mem")
    store.commit(Change(add=[rec]))
    on_disk = "".join(
        p.name + p.read_text(encoding="utf-8") for p in (tmp_path / "mem").iterdir() if p.is_file()
    )
    assert gone(hook.removeprefix("https://"), on_disk), on_disk


def test_an_adopted_file_without_a_description_leaves_no_fragment(tmp_path: Path) -> None:
    """A hand-written file without a description gets its body's first line cut at 200
    characters as one; here the cut falls 12 characters into a Slack webhook's path."""
    path = rand(9) + "/" + rand(11) + "/" + rand(24)
    line = "deploy alerts from the release pipeline go to the ops channel through ".ljust(155, ".")
    directory = tmp_path / "mem"
    directory.mkdir()
    (directory / "release_alerts.md").write_text(
        f"---\ntype: reference\n---\n\n{line}"
        f"https://hooks.slack.com/services/{path}\n",
        encoding="utf-8",
    )
    adopt(directory)
    on_disk = "".join(
        p.name + p.read_text(encoding="utf-8") for p in directory.iterdir() if p.is_file()
    )
    assert gone(path, on_disk), on_disk


def test_secret_values_sees_the_new_forms() -> None:
    assert secret_values("Vk3#pearl9 is the password for it") == ["Vk3#pearl9"]


def test_one_time_codes_signatures_and_chinese_digits_after_a_space() -> None:
    assert_redacted("the OTP is 730215, it expires in a minute", "730215")
    sig = rand(64, HEX)
    out = assert_redacted(f"https://b.s3.amazonaws.com/k?X-Amz-Signature={sig}&x=1", sig)
    assert out.endswith("&x=1")
    assert_redacted("门禁密码 5820，别外传", "5820")
    assert_redacted("xoxc-" + rand(40, B62 + "-"), "xoxc-")
    for text in ("OTP codes expire in 30 seconds", "密码 6 位", "signature = inspect.signature(fn)"):
        assert_untouched(text)


def test_more_prose_connectors_codes_and_redis() -> None:
    assert_redacted("the admin pw for jenkins: Rb7!tq22", "Rb7!tq22")
    assert_redacted("Password for user deploy changed to: Vx2#pp91", "Vx2#pp91")
    assert_redacted("the keystore password and key password are both Ks8!droid", "Ks8!droid")
    assert_redacted("the garage door code is 4471", "4471")
    assert_redacted("Your verification code is 552910", "552910")
    assert_redacted("GPG passphrase: velvet-otter-quarry-lamp", "velvet-otter-quarry-lamp")
    assert_redacted("redis-cli -h cache -a Rd5!secretX ping", "Rd5!secretX")
    for text in (
        "the source code is 2000 lines",
        "error code is 4040",
        "exit code: 1",
        "status code: 404",
        'redis-cli -a "$REDIS_PASS" ping',
        "the passphrase is stored in the keychain",
    ):
        assert_untouched(text)


def test_every_new_form_keeps_a_jsonl_line_valid() -> None:
    """The hook redacts raw transcript lines: a value found in JSON ("content":"X is the
    password…", where the word before has no space) never takes a quote or an escape along."""
    import json

    forms = [
        "Vk3#pearl9 is the password for the printer",
        "ok\nVk3#pearl9 is the password for the printer",
        'use "Moss8!delta" as the passphrase',
        "pw is Hx7#kq2Lm",
        "recovery codes:\n5e0f1-01f7c\n454a1-010ee",
        "curl -u ci:Plank9!roof https://x",
        "ssh-keygen -N 'copper lantern 4 sails'",
        "Cookie: sessionid=" + rand(40),
        "邮箱密码上周改成了 Qw8_lake#2",
        "redis-cli -a Rd5!secretX ping",
    ]
    for text in forms:
        line = json.dumps({"type": "user", "message": {"content": text}}, ensure_ascii=False)
        out, kinds = redact(line)
        assert kinds, text
        assert json.loads(out)["type"] == "user", out
