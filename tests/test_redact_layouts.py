"""Secrets found by their layout and phrasing (issue 22, third round): one test per kind.

Every value here was drawn at random for this file (keys of nothing) or made up; no sentence
comes from a benchmark set. Each case names the kind it stands for: the rule it tests catches
that kind in any wording, and the look-alikes below each rule are what it must leave alone.
"""

from __future__ import annotations

import base64

import pytest

from memory.redact import redact

MARKER = "[REDACTED:"


def _gone(text: str, *secrets: str) -> str:
    out, kinds = redact(text)
    assert kinds, f"nothing found in {text!r}"
    for secret in secrets:
        assert secret not in out, (secret, out)
        for i in range(len(secret) - 5):
            assert secret[i : i + 6] not in out, (secret, out)
    return out


def _kept(text: str) -> None:
    assert redact(text) == (text, []), redact(text)[0]


# ---------------------------------------------------------------- Chinese and mixed phrasings


ZH_AFTER = [
        ("预发环境的 password 是 Tq4!nv8Lzw，别外传", "Tq4!nv8Lzw"),  # English word, 是
        ("路由器后台 pwd 为 r7Kp#29xQe", "r7Kp#29xQe"),
        ("那台跳板机的 passphrase 是 amber-kite-lantern-osprey，每次都要输", "amber-kite-lantern-osprey"),
        ("银行卡的 PIN 码是 830157", "830157"),  # PIN, a space, 码是
        ("门禁卡 PIN 是 4096", "4096"),
        ("短信平台 API v2 key 是 JMBY9r6bos56ZXuERhd，按条计费", "JMBY9r6bos56ZXuERhd"),
        ("天气接口的 key：932e63a9d741331624a7fb220a809cae", "932e63a9d741331624a7fb220a809cae"),
        ("Postgres 的 requirepass 我改成 Hw8&uq3Zr 了", "Hw8&uq3Zr"),
        ("备份盘的密码短语是 长河落日-Kestrel-7731，别忘了", "长河落日-Kestrel-7731"),
        ("VeraCrypt 卷的 passphrase：春风-Otter-2048，挂载时输入", "春风-Otter-2048"),
    ]


@pytest.mark.parametrize(("text", "secret"), ZH_AFTER)
def test_chinese_and_mixed_phrasings_after_the_word(text: str, secret: str) -> None:
    _gone(text, secret)


ZH_BEFORE = [
        ("m4Rk9vQe2 就是打印机后台的管理密码，记一下", "m4Rk9vQe2"),
        ("Zx7@pq2Wmn 是 Grafana 的 viewer password，刚重置的", "Zx7@pq2Wmn"),
        ("0SkZtLTLZpK6Y9kK0FJXmF 这个是短信网关的密钥，按量计费", "0SkZtLTLZpK6Y9kK0FJXmF"),
        ("cafe-2031!guest 是二楼会议室的 WiFi 密码", "cafe-2031!guest"),
        ("用 Lumen#4417x 作为密码登录演示账号", "Lumen#4417x"),
    ]


@pytest.mark.parametrize(("text", "secret"), ZH_BEFORE)
def test_chinese_value_before_its_word(text: str, secret: str) -> None:
    _gone(text, secret)


ZH_TALK = [
        "密码是多少？我忘了",
        "这个是测试环境的密钥，不要用在生产",
        "sha256 是密码的哈希算法，别搞混",
        "用户名是 admin，密码规则是至少 12 位",
        "Redis 的 requirepass 我还没设",
    ]


@pytest.mark.parametrize("text", ZH_TALK)
def test_chinese_talk_about_credentials_survives(text: str) -> None:
    _kept(text)


# ---------------------------------------------------------------- values on the next lines


NEXT_LINES = [
        ("bastion box\nlogin: ops\npassword\n    Qe5$Lr9!kT\nthen sudo -i", ["Qe5$Lr9!kT"]),
        ("测试库\n账号：qa\n密码：\nWn3#Zp8@Ly\n用完记得退出", ["Wn3#Zp8@Ly"]),
        (
            "the secret key wrapped when I pasted it:\n0SkZtLTLZpK6Y9kK0FJXmF\nJMBY9r6bos56ZXuERhd\n",
            ["0SkZtLTLZpK6Y9kK0FJXmF", "JMBY9r6bos56ZXuERhd"],
        ),
        ("SecretKey 放在下一行\nLd2HflxsLBZ5kKZba9g6SvsPlluWS1HvxlfeUW0b", ["Ld2HflxsLBZ5kKZba9g6SvsPlluWS1HvxlfeUW0b"]),
        # the same in a JSONL transcript line, where the line breaks are escapes
        ('{"content":"the token, split in two:\\n0SkZtLTLZpK6Y9kK0FJXmF\\nJMBY9r6bos56ZXuERhd"}',
         ["0SkZtLTLZpK6Y9kK0FJXmF", "JMBY9r6bos56ZXuERhd"]),
    ]


@pytest.mark.parametrize(("text", "secrets"), NEXT_LINES)
def test_values_on_the_lines_after_their_word(text: str, secrets: list[str]) -> None:
    _gone(text, *secrets)


NOT_NEXT_LINES = [
        "password\nreset flow is broken\n",
        "token:\n  type: bearer\n  ttl: 3600\n",
        "commit key:\nf3e364889f42e260d741331624a7fb220a809cae\n",
        "public key:\nEu93VlX+ErpcZxgydl18gVRIvszldyowO6FWUVclUbmqyUvlsJmUrLvO69z5b8Bj\n",
        "password:\n${DB_PASSWORD}\n",
        "Here is the token:\nREADME.md\n",
    ]


@pytest.mark.parametrize("text", NOT_NEXT_LINES)
def test_lines_after_a_word_that_are_not_values_survive(text: str) -> None:
    _kept(text)


# ---------------------------------------------------------------- key pairs, URL users


KEY_PAIRS = [
        ("对象存储的 AK/SK：APY1O7EKH4LSS3K7Y2QA / Ld2HflxsLBZ5kKZba9g6SvsPlluWS1HvxlfeUW0b",
         ["APY1O7EKH4LSS3K7Y2QA", "Ld2HflxsLBZ5kKZba9g6SvsPlluWS1HvxlfeUW0b"]),
        ("合作方的 app key 和 app secret 分别是 f3e364889f42e260 和 0SkZtLTLZpK6Y9kK0FJXmF",
         ["f3e364889f42e260", "0SkZtLTLZpK6Y9kK0FJXmF"]),
        ("the key id and secret are APY1O7EKH4LSS3K7Y2QA and JMBY9r6bos56ZXuERhd",
         ["APY1O7EKH4LSS3K7Y2QA", "JMBY9r6bos56ZXuERhd"]),
    ]  # fmt: skip


@pytest.mark.parametrize(("text", "secrets"), KEY_PAIRS)
def test_key_pairs_said_together(text: str, secrets: list[str]) -> None:
    _gone(text, *secrets)


def test_a_generated_url_user_goes_with_its_password() -> None:
    text = 'gem source "https://bFMQdjdwDnaaqsfu:170cbf66@gems.example.org/"'
    out = _gone(text, "bFMQdjdwDnaaqsfu", "170cbf66")
    assert "@gems.example.org/" in out
    _gone("postgres://deploy:Kv8xQ2pL@db.internal:5432/app", "Kv8xQ2pL")
    assert "deploy" in redact("postgres://deploy:Kv8xQ2pL@db.internal:5432/app")[0]


# ---------------------------------------------------------------- codes, PINs, seeds


def test_recovery_codes_of_one_layout_go_even_without_digits() -> None:
    text = "GitLab 的备用码：K2P7-QX4M、8RTA-2N9C、WQER-TYUP、ZXCV-BNMA、7H3K-L0PQ"
    _gone(text, "K2P7-QX4M", "8RTA-2N9C", "WQER-TYUP", "ZXCV-BNMA", "7H3K-L0PQ")
    _kept("recovery codes: see the runbook, then rotate them")


PINS = [
        ("the gate code for the loading dock is 55 20 71", "55 20 71"),
        ("alarm panel code: 9042-17, and the PIN for the safe 6380", "6380"),
        ("7312 is the PIN of my work phone, the spare is in the drawer", "7312"),
    ]


@pytest.mark.parametrize(("text", "secret"), PINS)
def test_pins_and_door_codes(text: str, secret: str) -> None:
    _gone(text, secret)


NOT_PINS = ["use PIN 13 on the header for the LED", "pin numpy to 1.26.4 for now", "PIN 码是 6 位数字"]


@pytest.mark.parametrize("text", NOT_PINS)
def test_pin_look_alikes_survive(text: str) -> None:
    _kept(text)


def test_totp_seed_in_groups() -> None:
    _gone("Authy 的密钥（手动输入的）：2xx3 kwsc fg7u z7ay sxyr i3mr glw5 25zq", "2xx3 kwsc fg7u z7ay")


_TWELVE = "lunar orbit velvet canyon humble drift parade ribbon spice token walnut yonder"


@pytest.mark.parametrize(
    "text",
    [
        f"the seed phrase for the ledger, written on paper: {_TWELVE}",
        f"钱包助记词：{_TWELVE}，别截图",
        f"mnemonic = \"{_TWELVE} {_TWELVE}\"",
    ],
)
def test_seed_phrases(text: str) -> None:
    _gone(text, _TWELVE)


def test_ordinary_words_after_seed_survive() -> None:
    _kept("seed the database with some fixtures so that every test run starts from the same rows")
    _kept("seed: 42 for the random generator")


# ---------------------------------------------------------------- passwords in sentences


SENTENCES = [
        ("I keep typing Vr5!kq8Mzp and it says that is not the right password", ["Vr5!kq8Mzp"]),
        ("creds are deploy and Hs2#xw9Lq for the staging box", ["Hs2#xw9Lq"]),
        ("log into ops@example.org with Ferry%Dock58 and clear the queue", ["Ferry%Dock58"]),
        ("rotated it from Autumn2024! to Cedar#Lake31 this morning", ["Autumn2024!", "Cedar#Lake31"]),
        ("密码从 Qw3!er5Ty 改成了 Zx9@cv2Bn", ["Qw3!er5Ty", "Zx9@cv2Bn"]),
        ("for the wiki the password we picked is Basalt.Creek.42 so write it down", ["Basalt.Creek.42"]),
        ("Redis auth password -> Jq7kTz2mVw8pLr4x", ["Jq7kTz2mVw8pLr4x"]),
        ("the passphrase of the backup key is copper lantern meadow thirteen", ["copper lantern meadow thirteen"]),
        ("archive password is: two cats ate 9 pies", ["two cats ate 9 pies"]),
        ("the security question answer for the bank is Marigold-Avenue", ["Marigold-Avenue"]),
    ]  # fmt: skip


@pytest.mark.parametrize(("text", "secrets"), SENTENCES)
def test_passwords_in_sentences(text: str, secrets: list[str]) -> None:
    _gone(text, *secrets)


NOT_SENTENCES = [
        "the passphrase is stored in the vault for the team",
        "password is: at least 12 characters and one digit",
        "upgraded it from Python3.10 to Python3.11 last week",
        "the security answer is wrong, try again",
        "changed the default from v1.2.3 to v1.3.0",
        "log into the console with SSO and open the billing page",
    ]


@pytest.mark.parametrize("text", NOT_SENTENCES)
def test_sentences_about_passwords_survive(text: str) -> None:
    _kept(text)


# ---------------------------------------------------------------- provider formats


PROVIDERS = [
        ('飞书机器人 https://open.feishu.cn/open-apis/bot/v2/hook/7dc7f4c4-5b63-2864-b569-e8c99b82cd6b',
         "7dc7f4c4-5b63-2864-b569-e8c99b82cd6b"),
        ("lark: https://open.larksuite.com/open-apis/bot/v2/hook/fdd8f198-81de-2eb9-8dad-a6a951371661",
         "fdd8f198-81de-2eb9-8dad-a6a951371661"),
        ("WECOM_HOOK=https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key=fdd8f198-81de-2eb9-8dad-a6a951371661",
         "fdd8f198-81de-2eb9-8dad-a6a951371661"),
        ("钉钉 https://oapi.dingtalk.com/robot/send?access_token=932e63a9d741331624a7fb220a809cae",
         "932e63a9d741331624a7fb220a809cae"),
        ('token = "uMrecakVHJb7MR.atlasv1.skYrjLFDRZou_617tafXEPcLXcURp0iIBWW5cuQL4-Vvt4JQ7mU_Og9B5_EVF35dyRp"',
         "uMrecakVHJb7MR.atlasv1.skYrjLFDRZou_617tafXEPcLXcURp0iIBWW5cuQL4-Vvt4JQ7mU_Og9B5_EVF35dyRp"),
        ("legacy push key kd5eNV_IjO5:APA91b4mXUbGOS6PwJ-mUzvz9_5OXk9zElCTDhkV0cn95FbxzlezfTj-wAaVv0QXl6"
         "O1XcbRjDpTrmB5-BNs-gQYGQ0LlLf8cahYDSlJfnLm_u935-a8_EC7ILyhJrgYB0G08e8B2PF2 in the old app",
         "kd5eNV_IjO5:APA91b4mXUbGOS6PwJ-mUzvz9_5OXk9zElCTDhkV0cn95FbxzlezfTj-wAaVv0QXl6O1XcbRjDpTrmB5-"
         "BNs-gQYGQ0LlLf8cahYDSlJfnLm_u935-a8_EC7ILyhJrgYB0G08e8B2PF2"),
        ("CELERY_FERNET_KEY = 'RSynC6HBXL1l7qmLhy_2ema658tIEw68HLFVA1PMFZ0='",
         "RSynC6HBXL1l7qmLhy_2ema658tIEw68HLFVA1PMFZ0="),
        ("export HF_TOKEN=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", "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"),
        ("curl https://api.telegram.org/bot9896986290:AA-jQIhU-jHtXZFNjDFL4fYCub7SY5XLj1t/getMe",
         "9896986290:AA-jQIhU-jHtXZFNjDFL4fYCub7SY5XLj1t"),
        ("WIFI\nnetwork={\n  ssid=\"Attic\"\n  psk=\"heron-basil-quartz-17\"\n}", "heron-basil-quartz-17"),
    ]  # fmt: skip


@pytest.mark.parametrize(("text", "secret"), PROVIDERS)
def test_provider_formats(text: str, secret: str) -> None:
    _gone(text, secret)


_PPK_PRIVATE = "ldHiEkV6bCuF37EW4Q6kpKTGIZgz0YnPjgSjpxHKvSRO"
_PPK_PUBLIC = "Eu93VlX+ErpcZxgydl18gVRIvszldyowO6FWUVclUbmqyUvlsJmUrLvO69z5b8Bj"


def test_putty_private_lines() -> None:
    text = (
        "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: build-box\n"
        f"Public-Lines: 1\n{_PPK_PUBLIC}\nPrivate-Lines: 1\n{_PPK_PRIVATE}\n"
        "Private-MAC: f3e364889f42e260d741331624a7fb220a809cae932e63a9d741331624a7fb22\n"
    )
    out = _gone(text, _PPK_PRIVATE)
    assert _PPK_PUBLIC in out  # the public half stays


def test_base64_of_a_private_key() -> None:
    pem = (
        "-----BEGIN EC PRIVATE KEY-----\n"
        "MHcCAQEEIBu8m0Jx2dYQp7nFv3kLw9ZtR1aH6cE4sUoG5yXbN2qWoAoGCCqGSM49\n"
        "-----END EC PRIVATE KEY-----\n"
    )
    blob = base64.b64encode(pem.encode()).decode()
    _gone(f"users:\n- name: ops\n  user:\n    client-key-data: {blob}\n", blob)
    cert = base64.b64encode(b"-----BEGIN CERTIFICATE-----\nMIIB" + b"x" * 60).decode()
    _kept(f"    certificate-authority-data: {cert}\n")


def test_openvpn_static_key() -> None:
    body = "\n".join(
        [
            "7f190b91b514b83411985ec50b62867b",
            "3aedb4c297853bb6abe4fc3b82c39cad",
            "81feb7e4c233747989527fb467b277a9",
            "b99464fce4f18756a188f5732d2384f6",
        ]
    )
    text = f"<secret>\n-----BEGIN OpenVPN Static key V1-----\n{body}\n-----END OpenVPN Static key V1-----\n</secret>"
    _gone(text, *body.split("\n"))


def test_pgpass_lines() -> None:
    text = "$ cat ~/.pgpass\nreplica.db.internal:5432:orders:reporter:Wq8sLp2Vn6xT\nlocalhost:*:*:me:*\n"
    out = _gone(text, "Wq8sLp2Vn6xT")
    assert "replica.db.internal:5432:orders:reporter:" in out
    assert "localhost:*:*:me:*" in out


# ---------------------------------------------------------------- look-alikes of those shapes


LOOK_ALIKES = [
        "TWILIO_ACCOUNT_SID=ACac6945b276b5380c049c302cb33442dd",
        "db_password: vault:secret/data/app/db#password",
        "api_token: op://Engineering/deploy/token",
        "the Token contract lives at 0x163a01ddbe992541ff922d8786cd545924e44bef",
        "cache hit for key: npm-f3e364889f42e260-node20",
        "PUBLIC_KEY = 'Eu93VlX+ErpcZxgydl18gVRIvszldyowO6FWUVclUbmqyUvlsJmUrLvO69z5b8Bj'",
        "0SkZtLTLZpK6Y9kK0FJXmF is the publishable key, fine to ship in the app",
        "-----BEGIN CERTIFICATE-----\nMIIB\npwD7VIrxaR7kQfWv52uvEgoqiXnLAC1lIAYJRfza0hW+rdE2oapzzQbkrck/z1iY\n"
        "-----END CERTIFICATE-----",
    ]


@pytest.mark.parametrize("text", LOOK_ALIKES)
def test_layout_look_alikes_survive(text: str) -> None:
    _kept(text)


@pytest.mark.parametrize(
    "text",
    [
        "next page token:\n" + base64.b64encode(b'{"page": 3, "size": 50}').decode() + "\n",
        "ROUTING_KEY = '" + base64.b64encode(b"orders.created.v2.eu-west").decode() + "'",
        "signing_key = arn:aws:kms:eu-west-1:123456789012:key/7dc7f4c4-5b63-2864-b569-e8c99b82cd6b",
        "db_password: projects/shop-prod/secrets/orders-db-pass/versions/3",
    ],
)
def test_references_and_base64_of_text_survive(text: str) -> None:
    _kept(text)


def test_app_passwords_in_four_groups() -> None:
    _gone("the Gmail app password is qzxv mnbt plok wert, for the SMTP relay", "qzxv mnbt plok wert")
    _kept("the password is used when user logs in")


def test_numbered_seed_words() -> None:
    words = _TWELVE.split()
    text = "Seed phrase:\n" + "\n".join(f"{i}. {w}" for i, w in enumerate(words, 1)) + "\n"
    out = _gone(text, *[w for w in words if len(w) >= 6])
    assert all(f"\n{i}. [REDACTED:" in out for i in range(2, 13))
    _kept("seed words:\n1. write them down\n2. keep them offline\n")


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("https://chat.example.com/hooks/xk3d9qpz7bnf8e6ym1wj4ha2rc", "xk3d9qpz7bnf8e6ym1wj4ha2rc"),
        ("POST https://n8n.example.org/webhook/7dc7f4c4-5b63-2864-b569-e8c99b82cd6b",
         "7dc7f4c4-5b63-2864-b569-e8c99b82cd6b"),
    ],
)  # fmt: skip
def test_self_hosted_webhook_paths(text: str, secret: str) -> None:
    _gone(text, secret)


def test_named_webhook_paths_survive() -> None:
    _kept("the route is https://ci.example.com/hooks/github-push and /webhooks/deploy/staging")


MORE_WORDS = [
        ("QQ 邮箱的授权码：wkdhqpzmxnvbltrc，SMTP 用", "wkdhqpzmxnvbltrc"),
        ("the vault unseal key is 0SkZtLTLZpK6Y9kK0FJXmF7Qa+/ab==", "0SkZtLTLZpK6Y9kK0FJXmF7Qa+/ab=="),
        ("what's the NAS admin password? it's Quokka!Run77, I think", "Quokka!Run77"),
        ("garage code 7706, the spare remote is in the car", "7706"),
    ]


@pytest.mark.parametrize(("text", "secret"), MORE_WORDS)
def test_more_credential_words(text: str, secret: str) -> None:
    _gone(text, secret)


@pytest.mark.parametrize(
    "text",
    ["error code 4012 from the upstream", "status code 5031 again", "QR code 2048 pixels wide"],
)
def test_codes_that_are_not_pins_survive(text: str) -> None:
    _kept(text)


def test_xml_elements_named_for_a_credential() -> None:
    text = "<server><id>nexus</id><username>ci</username><password>Nx8#vR2qLm</password></server>"
    out = _gone(text, "Nx8#vR2qLm")
    assert "<username>ci</username>" in out
    _gone("<apiKey>0SkZtLTLZpK6Y9kK0FJXmF</apiKey>", "0SkZtLTLZpK6Y9kK0FJXmF")
    _kept("<password>${env.NEXUS_PASSWORD}</password> <token></token> <keyName>main</keyName>")


def test_a_marker_is_not_a_credential_word() -> None:
    text = "连接串 mongodb://admin:Kq8vRz4Qp2Lm@10.1.2.3:27017/?authSource=admin&retryWrites=true"
    out = _gone(text, "Kq8vRz4Qp2Lm")
    assert "@10.1.2.3:27017/?authSource=admin&retryWrites=true" in out
    assert redact(out) == (out, [])


_SECRET_CASES = [
    (text, [secrets] if isinstance(secrets, str) else secrets)
    for text, secrets in (
        *ZH_AFTER, *ZH_BEFORE, *NEXT_LINES, *KEY_PAIRS, *PINS, *SENTENCES, *PROVIDERS, *MORE_WORDS
    )
    if not text.startswith('{"')  # already a JSON line
]
_KEPT_CASES = [*ZH_TALK, *NOT_NEXT_LINES, *NOT_SENTENCES, *LOOK_ALIKES, *NOT_PINS]


@pytest.mark.parametrize(("text", "secrets"), _SECRET_CASES)
def test_each_form_in_a_jsonl_transcript_line(text: str, secrets: list[str]) -> None:
    """What the hook redacts is a session file's JSON line: line breaks are ``\\n``, the
    message starts after a quote. Every form above is caught there too, and the line stays JSON."""
    import json

    line = json.dumps({"type": "user", "message": {"role": "user", "content": text}}, ensure_ascii=False)
    out = _gone(line, *(json.dumps(s, ensure_ascii=False)[1:-1] for s in secrets))
    json.loads(out)


@pytest.mark.parametrize("text", _KEPT_CASES)
def test_each_look_alike_in_a_jsonl_transcript_line(text: str) -> None:
    import json

    _kept(json.dumps({"type": "user", "message": {"role": "user", "content": text}}, ensure_ascii=False))


def test_a_generated_token_with_a_chance_run_of_x_is_still_redacted() -> None:
    # A random token now and then holds "x" then "XXX" (four x's read case-blind) or "XXXX": a
    # placeholder is mostly filler, a generated token only by chance and for a sliver of it.
    for token in ("ghp_Qw7erTy2UiopAsxXXXdfGhJkl9ZxcVbnM3q", "AKIA7QXXXXR2M4T9WB6Z",
                  "sk-ant-api03-" + "Lm3Np8Qr2StXXXXuVw9Yz4Ab7Cd1Ef6Gh0Ij5Kl8Mn2Op4Qr6St"):
        out, kinds = redact(f"the staging deploy uses {token} for now")
        assert token[-12:] not in out and kinds, (token, out)
    for example in ("AKIAXXXXXXXXXXXXXXXX", "ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "sk-ant-xxxx…"):
        out, _ = redact(f"set it to {example} in the template")
        assert example in out, out
