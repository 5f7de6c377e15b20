"""The redactor takes time linear in its text, whatever the text repeats (issue 22).

It runs on every transcript the hook submits, so a pasted run of one thing (a column of
"password", a wall of ``sk-``, a base64 blob, 10,000 spaces) must not stall it. Each unit is
repeated to 40 → 160 → … → 10,240 characters and :func:`memory.redact.redact` is timed (CPU of
this thread, min of a few runs): linear grows 4 times a step, quadratic 16; more than
:data:`MAX_GROWTH` fails, confirmed by measuring twice more so load on the machine does not. The
units are each detector's anchors and connectors, alone and with the value shapes they expect.
"""

from __future__ import annotations

import time

import pytest

from memory.redact import redact

SIZES = (40, 160, 640, 2560, 10240)
MAX_GROWTH = 8  # between linear (4) and quadratic (16)
UNITS = (
    " ", "\n", "\\n", "a", "7", "a-", "ab12", "Ab1/", "=", ":", "，", "中",
    "sk-", "sk-ant-", "ghp_", "github_pat_", "eyJ", "eyJa.", "AKIA", "LTAI", "xox", "dckr_pat_",
    "password ", "password: ", "password is ", "pass ", "pw ", "pin ", "key ", "token=", "secret ",
    "passphrase ", "is the password ", "as the password ", "sessionid=", "sess=",
    "密码", "密码是", "密码改成了", "的密码", "登录 ", "账号 a/",
    "://", "://a:", "a:b@", "Authorization: ", "Basic ", "Bearer ",
    " -p", " -u a:", "curl -u a:b ", " -N ", "ssh-keygen ",
    "recovery codes:\n", "1234-5678\n", "ab12-cd34 ", "backup code ",
    "-----BEGIN PRIVATE KEY-----", "-----BEGIN PRIVATE KEY-----\nAAAA",
    "aws ", "aws Ab1/", ":AA", "wifi key ", "login ", "wandb ", "pass", "key", "token", "sess",
    "code is 1234 ", "redis-cli -a ", " -a", "pw for a: ", "passphrase: a-b-c ",
    # the third round's layouts: next lines, pairs, seeds, key files, sentences, webhooks
    "password\n", "password\nAb1cdEf2gh3\n", "token:\n", "key:\\nAb1cdEf2gh3Xy\\n",
    "ak/sk: ", "key and secret are a1b2c3d4e5 and ", "secret ", "seed phrase: ", "seed phrase: abc ",
    "mnemonic:\n1. abc\n", "abc ", "LS0tLS1CRUdJTi", "Private-Lines: 9\n", "Private-Lines: 9\nAAAA\n",
    "pgpass\n", "a:1:b:c:d\n", "changed from ", "changed it from Ab1!cdefg to ", "从Ab1!cdefg改成",
    "Ab1!cdefgh ", "password Ab1!cdefgh ", "/hooks/", "https://a/hooks/Ab1cdEf2gh3Xy/",
    "密钥：", "是密码，", "用 ab12 作为密码", "密码：中-a", "password: a-中-", "PIN for the a ",
    "code for ", "code 1234 ", "app password is abcd ", "2xx3 ", "security answer is ", "-> ",
    "password is: a b ", "passphrase is a b c ", "AK/SK：a1b2c3d4e5 / ",
    # the fourth round's structure: name/value pairs, CSV headers, call literals, armour in
    # literals, JSON Web Keys, DSNs without ://, wrapped rests, headers and commands
    "name", "- name: A_PASSWORD\n  value: ", "name: a\nvalue: ", "token,", "a,secret\n",
    "a,password\nb,Ab1cdEf2gh3\n", "Client(", 'Client("', "Auth('Ab1cdEf2gh3Xy4', '", "f('a', 'Ab1!cdefg', ",
    '"-----BEGIN PRIVATE KEY-----\\n"\n', '"AAAA\\n"\n', '"kty"', '{"kty":"a","d":"', "@tcp(",
    "a:b@tcp(", "@//", "a/b@//", "sqlplus a/b ", ":thin:", "[REDACTED:token]\n", "[REDACTED:aws-access-key] / ",
    "Ab1cdEf2gh3Xy4Zw\n", "Authorization: Xyz ", " -w ", "ldapsearch -w a ", "ConvertTo-SecureString 'a' ",
    "auth ", "login Ab1cdEf2gh3Xy4Zw5V ", "echo a > a.key ", "ak ", "sk ", " AK 是 ", "?ak=", "_pat=",
    "PAT 是 ", "keypad ", "puk ", "community ", "App Certificate: ", "FlyV1 ", "-us1", "这个就是密码\n",
    "a\nthat's the password\n", "password, if a, is ", "password is the a: ", "\"\"\"", "password = \"\"\"a",
)  # fmt: skip


def _cpu(text: str, runs: int) -> float:
    best = float("inf")
    for _ in range(runs):
        start = time.thread_time()
        redact(text)
        best = min(best, time.thread_time() - start)
    return max(best, 2e-5)  # below the clock's grain a ratio means nothing


def _growth(unit: str, runs: int = 1) -> tuple[int, float] | None:
    before = None
    for n in SIZES:
        t = _cpu(unit * max(1, n // len(unit)), runs)
        if before is not None and t > MAX_GROWTH * before:
            return n, t / before
        before = t
    return None


def superlinear(unit: str) -> tuple[int, float] | None:
    first = _growth(unit)
    if first and all(_growth(unit, runs=3) for _ in range(2)):
        return first
    return None


def test_the_check_catches_a_quadratic_redactor(monkeypatch: pytest.MonkeyPatch) -> None:
    import memory.redact as redact_module

    def quadratic(text: str) -> tuple[str, list[str]]:
        for i in range(0, len(text), 4):
            text.find("\x00never", i)  # from every position to the end
        return text, []

    monkeypatch.setattr(redact_module, "redact", quadratic)
    monkeypatch.setitem(globals(), "redact", quadratic)
    assert superlinear("ab ")


@pytest.mark.parametrize("unit", UNITS)
def test_redaction_is_linear_in_a_repeated_unit(unit: str) -> None:
    slow = superlinear(unit)
    assert slow is None, f"{unit!r} repeated: x{slow[1]:.0f} at {slow[0]} characters"


CARRIED_UNITS = ('"', '\\"', '"a\\n', '\\\\', '"\\u00', '\\u7ed9', '"password: \\"', '"\\n"', "a\\", '{"a": "b\\n', '"\\d')


@pytest.mark.parametrize("unit", CARRIED_UNITS)
def test_reading_escaped_literals_is_linear_in_a_repeated_unit(unit: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The hook's path (:func:`memory.redact.carried.redact_carried`) finds and decodes every
    escaped JSON literal of a text: a wall of quotes or backslashes must not stall it."""
    from memory.redact.carried import redact_carried

    monkeypatch.setitem(globals(), "redact", redact_carried)
    slow = superlinear(unit)
    assert slow is None, f"{unit!r} repeated: x{slow[1]:.0f} at {slow[0]} characters"
