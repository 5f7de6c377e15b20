"""Issue 22, fifth round: secrets found by context and shape that the fourth blind set showed
getting through, each written here in words and values of its own (no set's sentence or value
is copied): a code of capitals after a password word, base64 after a setting that starts with
"/" or "+", a signed URL's ``Signature`` parameter, key-store flags of any length, ``htpasswd``
with its flags apart, an English credential word in a Chinese sentence (输入, 填), "a
passphrase, it's …", a password holding "@" in a URL, the rest of a concatenated literal and
the secret after a key id in a pair, what is echoed to a ``*_pass`` file, a PuTTY key's MAC,
Entra ID client secrets by their shape, the Wi-Fi QR payload, a token longer than the window
after its word, bytes literals given to a client, Chinese mnemonics, a pull secret's
``.dockerconfigjson``. The look-alikes are what must survive the same rules (an ARN's
``secret:`` part, ``${NAME:?message}``, a setting on the line after a word, public JWTs…).
"""

from __future__ import annotations

import pytest

from memory.redact import redact
from tests.helpers.redaction import gone

SECRETS = [
    ("password: QWXRTZPLMKVBNCJH", "QWXRTZPLMKVBNCJH"),
    ("_auth=+Hn3bLm0Rq8Vx2Zt6Yw4Pd7Kc1Sf9Ga5==", "+Hn3bLm0Rq8Vx2Zt6Yw4Pd7Kc1Sf9Ga5=="),
    (
        "https://b.oss.example.com/f?AccessKeyId=ID1&Expires=1&Signature=Xk8+Lp2Vn7Qr4Tz1%2BWm%3D",
        "Xk8+Lp2Vn7Qr4Tz1%2BWm%3D",
    ),
    ("keytool -importkeystore -deststorepass Gx7#Tide -destkeypass Lm4#Reef", "Gx7#Tide"),
    ("keytool -importkeystore -deststorepass Gx7#Tide -destkeypass Lm4#Reef", "Lm4#Reef"),
    ("htpasswd -b -B -c /srv/htpasswd bob Quartz-Lamp-51", "Quartz-Lamp-51"),
    ("ssh-add 会问 passphrase，输入 Fjord-Otter-19 回车", "Fjord-Otter-19"),
    ("数据库密码填 Hx-Cedar-4410 就好", "Hx-Cedar-4410"),
    (
        'the backup key has a passphrase, it\'s "seven blue owls dance at noon"',
        "seven blue owls dance at noon",
    ),
    ("smb://ops:Rv9@@Tern@fileserver.lan/share", "Rv9@@Tern"),
    ('KEY = "sk-proj-Aq7Wx2Lm9Nc4Vt8Rb1Yd6" + "Kp3Zs0Jf5Hg8Ue2Qo7Xi"', "Kp3Zs0Jf5Hg8Ue2Qo7Xi"),
    (
        'stripe = Client(auth=("rk_live_Wm4Lq8Zt2Vn6Xr0Pb3", "Yc7Kd1Hs5Jf9Ga2Ue6Oi8Tw"))',
        "Yc7Kd1Hs5Jf9Ga2Ue6Oi8Tw",
    ),
    ("echo 'Basalt-Heron-88' > ~/.ansible_vault_pass", "Basalt-Heron-88"),
    (
        "Private-Lines: 1\nQm3xT8vLp2Rz9Wk4Nc7Yb1Hd6Jf0Gs5Ua8Ve3Xi2Oo+Pq4Rs6Tu8Vw\nPrivate-MAC: 0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9",
        "0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9",
    ),
    (
        "tenant app secret Ab.4Q~Zx8Lm2Vn5Tq9Wb3Yh6Jc1Lp4Xs7Ga0Fe2 expires in June",
        "Ab.4Q~Zx8Lm2Vn5Tq9Wb3Yh6Jc1Lp4Xs7Ga0Fe2",
    ),
    ("WIFI:S:Lab;T:WPA;P:Moss\\;Pear-7;;", "Moss\\;Pear-7"),
    (
        "MYAPP_SERVICE_KEY=eyJhbGciOiJIUzI1NiJ9.eyJyb2xlIjoic2VydmljZSJ9.Zk8Lq2Vn7Xr4Tz1Wm3",
        "eyJhbGciOiJIUzI1NiJ9.eyJyb2xlIjoic2VydmljZSJ9.Zk8Lq2Vn7Xr4Tz1Wm3",
    ),
    (
        'client.apikey = "'
        + 'Zq8Lm2Vn5Tq9Wb3Yh6Jc1Lp4Xs7Ga0Fe2Nu/Rk3Hd8Pw5Ty1Bv6Mx4Cs9Qz2Ln7Wr0Ej5Ko3Ui8Ay6"',
        "Ui8Ay6",
    ),
    (
        "cipher = Fernet(b'Rk3Hd8Pw5Ty1Bv6Mx4Cs9Qz2Ln7Wr0Ej5Ko3Ui8Ay6=')",
        "Rk3Hd8Pw5Ty1Bv6Mx4Cs9Qz2Ln7Wr0Ej5Ko3Ui8Ay6=",
    ),
    ("冷钱包助记词 风 雨 雷 电 山 川 河 海 日 月 星 辰", "风 雨 雷 电 山 川 河 海 日 月 星 辰"),
    (
        "data:\n  .dockerconfigjson: eyJhdXRocyI6eyJyZWcuZXhhbXBsZS5jb20iOnsiYXV0aCI6IlpHVjJPbkYzWlhKMGVRPT0ifX19",
        "eyJhdXRocyI6eyJyZWcuZXhhbXBsZS5jb20iOnsiYXV0aCI6IlpHVjJPbkYzWlhKMGVRPT0ifX19",
    ),
]

LOOK_ALIKES = [
    "the secret is craftsmanship",
    "password: ADMINISTRATORS",
    "the password policy is 12 characters",
    "password reset flow is broken",
    "see https://github.com/org/repo/commit/3f9c2a1b7d4e8f0a6c5b2e9d1f3a7c4b8e6d0f2a",
    "request id 5e7c1b9a-2f4d-4c1e-9a7b-3d2e1f0c9b8a",
    "version 1.24.3-rc1",
    "sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "data = base64.b64decode('SGVsbG8gd29ybGQsIHRoaXMgaXMgYSB0ZXN0')",
    "secret: /etc/app/secret.key",
    "token: /var/run/secrets/kubernetes.io/serviceaccount/token",
    "the Signature field of the struct",
    "https://example.com/docs?Signature=&x=1",
    "arn:aws:secretsmanager:us-east-1:123456789012:secret:db/main-AbCdEf",
    "DB_URL=${DATABASE_URL:?set it}",
    "API_TOKEN=${API_TOKEN:?API_TOKEN is required}",
    "密码输错了三次就会锁定",
    "用户名和密码都填在表单里",
    "the password, it turned out, was never set",
    "htpasswd -c /etc/nginx/.htpasswd alice",
    "echo 'hello world' > notes.txt",
    "WIFI:T:nopass;S:Guest;;",
    "f = open(b'/tmp/data.bin')",
    'x = Path(b"config")',
    "ftp://anonymous@ftp.example.org/pub/",
    "mailto:bob@example.com?subject=hi@there",
    "kind: Secret\ntype: kubernetes.io/dockerconfigjson",
    "echo $HOME > ~/.vault_pass_path_note",
    'auth = ("[REDACTED:token]", "application/json")',
    "助记词要手写在纸上，不要截图",
    "NEXT_PUBLIC_API_URL=https://api.example.com",
    "commit 3f9c2a1b7d4e8f0a6c5b2e9d1f3a7c4b8e6d0f2a\nAuthor: A <a@b.c>",
    "the token is STRENGTHSCHECK",
    "password: PASSWORDPOLICY",
    "storepass is set in gradle.properties",
    "keytool -list -keystore app.jks -storepass:env STORE_PW",
]


@pytest.mark.parametrize(("text", "secret"), SECRETS)
def test_the_secret_is_redacted(text: str, secret: str) -> None:
    out, kinds = redact(text)
    assert kinds and gone(secret, out), out


@pytest.mark.parametrize("text", LOOK_ALIKES)
def test_the_look_alike_survives(text: str) -> None:
    assert redact(text)[0] == text


def test_a_setting_on_the_line_after_a_credential_word_is_judged_as_a_setting() -> None:
    text = "# 启动时传入主密码\napp.datasource.password=ENC(${DB_PASSWORD_CIPHER})"
    assert redact(text)[0] == text


# ---------------------------------------------------------------------------- escaped quotes

ESCAPED = [
    ('password = "Tq\\"rn8!Lo"', 'Tq\\"rn8!Lo'),
    ('APP_PASSWORD="Ve4\\"Pl\\\\9x"', 'Ve4\\"Pl\\\\9x'),
    ("passwd = 'Kb7\\'Wn#2u'", "Kb7\\'Wn#2u"),
    ('{"db_password": "Mo3\\"Xe\\\\Qa8"}', 'Mo3\\"Xe\\\\Qa8'),
    ('my password is "Fr\\"ost9Vale"', 'Fr\\"ost9Vale'),
]


@pytest.mark.parametrize(("text", "secret"), ESCAPED)
def test_a_quoted_value_holding_escaped_quotes_and_backslashes_goes_whole(text: str, secret: str) -> None:
    import json

    out = redact(text)[0]
    assert gone(secret, out) and out.count('"') == text.count('"') - secret.count('"'), out
    line = json.dumps({"content": text})  # the same text inside a JSONL transcript line
    assert gone(secret[:6], json.loads(redact(line)[0])["content"]) or "'" in secret


@pytest.mark.parametrize(
    "text", ['secret: "C:\\\\keys\\\\prod.pem"', 'msg = "say \\"hello\\" 42 times"', 'token = "\\\\\\\\srv\\\\share"']
)
def test_escapes_in_a_path_or_a_sentence_are_left_alone(text: str) -> None:
    assert redact(text)[0] == text


# ---------------------------------------------------------------------------- across turns


def test_a_secret_split_across_two_turns_is_redacted_in_the_second() -> None:
    from memory.redact import redact_turns

    turns = ["the staging vpn password is", "go on", "Xr8-Moth-Lamp!", "thanks"]
    out = redact_turns(turns, ["user", "assistant", "user", "assistant"])
    assert out[2] == "[REDACTED:password]" and out[:2] == turns[:2] and out[3] == "thanks"
    # a generated value alone is no secret by its shape: the word before it, a turn earlier, says so
    assert redact_turns(["my deploy token:", "Qz4Lm8Vx2Nc6Wt0Kp3Za7Yd1Bs5Ju9Fe4Gq2R"])[1] == "[REDACTED:token]"


@pytest.mark.parametrize(
    "turns",
    [
        ["what is the password policy", "Twelve characters minimum, rotated every 90 days"],
        ["the password reset flow is broken", "yes, v2.3.1 fixed it"],
        ["where is the password?", "In the vault, ask Dana"],
        ["rotate the api token today", "Done: commit 3f9c2a1b7d4e8f0a6c5b2e9d1f3a7c4b8e6d0f2a"],
    ],
)
def test_turns_that_only_mention_a_credential_are_left_alone(turns: list[str]) -> None:
    from memory.redact import redact_turns

    assert redact_turns(turns) == turns


# ---------------------------------------------------------------------------- inside a JSONL line

IN_JSONL = [
    ("# 先登上去\nredis-cli -h 10.9.8.7 -p 6390 -a Qe!t#77rw INFO", "Qe!t#77rw"),
    ("$s = ConvertTo-SecureString \"Tarn-Pike-2093\" -AsPlainText -Force", "Tarn-Pike-2093"),
    ("box = Fernet(b\"Vb6Mx4Cs9Qz2Ln7Wr0Ej5Ko3Ui8Ay6Rk3Hd8Pw5Ty1=\")", "Vb6Mx4Cs9Qz2Ln7Wr0Ej5Ko3Ui8Ay6Rk3Hd8Pw5Ty1="),
    ("Unseal Key 1: Wb3Yh6Jc1Lp4Xs7Ga0Fe2Nu8Zq8Lm2Vn5Tq9/Rk3Hd8P\nUnseal Key 2: Lp4Xs7Ga0Fe2Nu8Zq8Lm2Vn5Tq9Wb3Yh6Jc1/Hd8PwR3k", "Lp4Xs7Ga0Fe2Nu8Zq8Lm2Vn5Tq9Wb3Yh6Jc1/Hd8PwR3k"),
    ("ssh-keygen -p -f ~/.ssh/id_ed25519\nldapsearch -x -D cn=admin -w Lq9#Vent2 -b dc=x", "Lq9#Vent2"),
]


@pytest.mark.parametrize(("text", "secret"), IN_JSONL)
def test_a_form_after_a_json_escape_is_found_in_a_transcript_line(text: str, secret: str) -> None:
    """In a JSONL line a command or a label follows ``\\n``, two characters: ``\\b`` sees no
    word start after its ``n`` ("nredis-cli"), and "nUnseal" is no key's owner."""
    import json

    assert gone(secret, redact(text)[0])
    line = json.dumps({"message": {"role": "user", "content": text}}, ensure_ascii=False)
    out = redact(line)[0]
    assert gone(secret, json.loads(out)["message"]["content"]), out
