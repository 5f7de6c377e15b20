"""Issue 22, ninth round: mechanisms built from how credentials appear, not from a set's misses,
each tested with words and values of its own (no set's sentence or value is copied), on both
sides: what must go and what the same rule must leave.

* weak context: a token of the strong-password shape (upper, lower, digit and a symbol, 8–64
  characters, no space) on the line of a credential word in either language, whatever the
  phrasing or the word's place (a word of its own, an identifier's part, another sentence of
  the line), unless its sentence says it is an example, a placeholder, fake or banned; with no
  credential context it stays;
* config and shell blocks: the same shape assigned to any key, known or not, in a config or
  shell block (a text that starts with one, after a fence, after a config file's name, at
  ``export``/``setx``/``$env:``);
* a hex of a SHA's length (7–12, 40, 64) after a credential word is a value only when an
  assignment or a copula ties it to the word, never after a preposition or a verb of change.
"""

from __future__ import annotations

import pytest

from memory.redact import redact, redact_turns
from memory.redact.context import sha_shaped
from memory.redact.structure import strong_password
from tests.helpers.redaction import gone

WEAK_CONTEXT = [
    # a credential word anywhere on the line, the value with no connector to it
    ("the kiosk creds live in the drawer; I used Plum!Tiger84 on Monday", "Plum!Tiger84"),
    ("Token rotation done. Plum!Tiger84 works on the staging gateway", "Plum!Tiger84"),
    ("rebooted the NAS and typed Qz7&harbor_Lm twice before the secret prompt took it", "Qz7&harbor_Lm"),
    ("my PIN pad hates Orca#2231Lk, had to retype it", "Orca#2231Lk"),
    ("LOCKER_API_KEY was wrong, Vb5$toastEr9 is the one that works", "Vb5$toastEr9"),
    ("密钥那边的流程走完了，新值 Hx4@ridgeBk2 已经生效", "Hx4@ridgeBk2"),
    ("凭据我放在这里：用户 ops，Mn8^castleRq", "Mn8^castleRq"),
    ("登录不上，我试了 Yt6*lanternPq 也不行", "Yt6*lanternPq"),
    ("passphrase prompt came up again (Rx3~willowKo), accepted it", "Rx3~willowKo"),
]


@pytest.mark.parametrize(("text", "secret"), WEAK_CONTEXT)
def test_a_strong_token_on_a_credential_line_goes(text: str, secret: str) -> None:
    out = redact(text)[0]
    assert gone(secret, out), out
    assert "[REDACTED:" in out


NOT_GIVEN = [
    # no credential context: the strong shape alone is not enough
    "I tagged the release Plum!Tiger84 by mistake",
    "the shader constant Qz7&harbor_Lm looks odd",
    "构建号 Hx4@ridgeBk2 对应的是周五那次",
    # a credential word, but the sentence says the token is an example, a placeholder or banned
    "a password such as Plum!Tiger84 is only an example, pick your own",
    "under the new password policy Winter#2024x is on the blocklist",
    "password rules: Summer!2023q is banned because it leaked",
    "placeholder token: Orca#2231Lk, replace it before deploying",
    "密码规则：Spring@2022a 这种禁止使用",
    # a credential word on ANOTHER line
    "the secret rotation is on Friday\nI renamed the branch Plum!Tiger84",
    # URL-encoded text on a credential line is no value
    "token refresh failed for q=Rt5%21abcD9 in the log",
]


@pytest.mark.parametrize("text", NOT_GIVEN)
def test_a_strong_token_not_given_as_a_credential_stays(text: str) -> None:
    assert redact(text)[0] == text


def test_the_strong_shape_is_upper_lower_digit_and_symbol_ascii_8_to_64() -> None:
    assert strong_password("Plum!Tiger84")
    assert not strong_password("plum!tiger84")  # no capital
    assert not strong_password("Plum!Tiger")  # no digit
    assert not strong_password("PlumTiger84")  # no symbol
    assert not strong_password("Pl!T84a")  # seven
    assert not strong_password("Aa1!" * 17)  # 68
    assert not strong_password("Plum!Tiger84密")  # not ASCII
    assert not strong_password("$HOME_Dir1!")  # a variable
    assert not strong_password("Plum!/Tiger84")  # a path


CONFIG = [
    ("FROB_SEED=Plum!Tiger84\nPORT=8080", "Plum!Tiger84"),
    ('```toml\n[widget]\nmode = "Qz7&harbor_Lm"\n```', "Qz7&harbor_Lm"),
    ("Read /srv/app/settings.ini\n[core]\n; local only\nunlock = Vb5$toastEr9", "Vb5$toastEr9"),
    ("cat services/app.env\nZETA_PHRASE=Orca#2231Lk", "Orca#2231Lk"),
    ("$ export ZETA=Mn8^castleRq && make deploy", "Mn8^castleRq"),
    ("  1\tAPP_MODE=prod\n  2\tAPP_UNLOCK=Yt6*lanternPq", "Yt6*lanternPq"),
    ("PS> $env:WIDGET_SEED='Rx3~willowKo'", "Rx3~willowKo"),
]


@pytest.mark.parametrize(("text", "secret"), CONFIG)
def test_a_strong_value_assigned_to_any_key_in_a_config_block_goes(text: str, secret: str) -> None:
    out = redact(text)[0]
    assert gone(secret, out), out
    assert out.count("[REDACTED:password]") == 1


CONFIG_SURVIVES = [
    "FROB_MODE=fast\nCOLOR=#ff8800\nPATH_PREFIX=/opt/app",  # no strong value
    "we talked about it\nthe value ZETA=Plum!Tiger84 came up in prose",  # not a config block
    'EXAMPLE_PASS=Plum!Tiger84  # example only',  # said as an example
    "BUILD_URL=https://ci.local/job/Ab1!x",  # a URL
]


@pytest.mark.parametrize("text", CONFIG_SURVIVES)
def test_config_lines_without_a_strong_value_or_outside_a_block_stay(text: str) -> None:
    assert redact(text)[0] == text


SHA_CHANGES = [
    "the password policy changed in 4be1c09a7d3f5e2b8c6a1f0d9e7b5a3c2d1e0f9a",
    "token refresh was fixed by 4be1c09a, see the log",
    "the secret loader moved to 4be1c09a7d3f5e2b8c6a1f0d9e7b5a3c2d1e0f9a last week",
    "the credentials check landed as 4be1c09a7d3f",
    "password hashing updated in "
    "7c2e9a4b1d3f5e6a8b0c2d4e6f8a0b1c3d5e7f9a1b3c5d7e9f0a2b4c6d8e0f1a",
]


@pytest.mark.parametrize("text", SHA_CHANGES)
def test_a_sha_after_a_preposition_or_a_change_verb_is_a_commit(text: str) -> None:
    assert redact(text)[0] == text


def test_a_sha_after_a_credential_word_across_turns_is_a_commit() -> None:
    turns = ["I reworked the password policy, it landed in", "4be1c09a7d3f5e2b8c6a1f0d9e7b5a3c2d1e0f9a"]
    assert redact_turns(turns) == turns


SHA_TIED = [
    ("the staging token is 4be1c09a7d3f5e2b8c6a1f0d9e7b5a3c2d1e0f9a", "4be1c09a7d3f5e2b8c6a1f0d9e7b5a3c2d1e0f9a"),
    ("api_key = 4be1c09a7d3f5e2b8c6a1f0d9e7b5a3c2d1e0f9a", "4be1c09a7d3f5e2b8c6a1f0d9e7b5a3c2d1e0f9a"),
    ("the signing secret: 4be1c09a7d3f5e2b8c6a1f0d9e7b5a3c2d1e0f9a", "4be1c09a7d3f5e2b8c6a1f0d9e7b5a3c2d1e0f9a"),
    ("密钥为 4be1c09a7d3f5e2b8c6a1f0d9e7b5a3c2d1e0f9a", "4be1c09a7d3f5e2b8c6a1f0d9e7b5a3c2d1e0f9a"),
    ("the kiosk token is now 4be1c09a7d3f", "4be1c09a7d3f"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "secret"), SHA_TIED)
def test_a_sha_shaped_hex_tied_to_its_word_is_a_value(text: str, secret: str) -> None:
    assert gone(secret, redact(text)[0])


def test_sha_shaped_is_hex_of_a_commit_or_digest_length() -> None:
    assert sha_shaped("4be1c09")  # a short SHA
    assert sha_shaped("4be1c09a7d3f")
    assert sha_shaped("4be1c09a7d3f5e2b8c6a1f0d9e7b5a3c2d1e0f9a")
    assert not sha_shaped("4be1c09a7d3f5e2b8c6a1f0d9e7b5a3c")  # 32: an API key's length
    assert not sha_shaped("4be1c09a7d3f5")  # 13
    assert not sha_shaped("12345678")  # digits: a number
    assert not sha_shaped("abcdefab")  # letters only


ACCOUNT_PAIRS = [
    ("the BMC in bay 7 takes root with Harbor-Quill-73", "Harbor-Quill-73"),
    ("printer web UI: admin and Lumen8Gravel", "Lumen8Gravel"),
    ("psql as postgres / Tq8#velvetRo then run the migration", "Tq8#velvetRo"),
    ("the appliance ships as administrator:Cobalt-Fern-4417", "Cobalt-Fern-4417"),
]


@pytest.mark.parametrize(("text", "secret"), ACCOUNT_PAIRS)
def test_a_made_up_value_paired_with_a_system_account_goes(text: str, secret: str) -> None:
    out = redact(text)[0]
    assert gone(secret, out), out


ACCOUNT_SURVIVES = [
    "the root cause was a stale admin panel cache",
    "log in as admin with 2FA enabled",
    "sudo -u postgres psql -c 'select 1'",
    "root:x:0:0:root:/root:/bin/bash",
    "the admin, Marta, approved it",
    "mount it under /root/data and chown root:root",
    "admin / settings / Billing2024 is where the invoices live",  # a menu path, said as one
]


@pytest.mark.parametrize("text", ACCOUNT_SURVIVES)
def test_an_account_word_without_a_made_up_value_stays(text: str) -> None:
    assert redact(text)[0] == text
