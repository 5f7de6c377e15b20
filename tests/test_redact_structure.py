"""Issue 22, fourth round: secrets found by the structure around them, not by one sentence.

Each case is a kind the third blind set showed getting through, written here in words and
values of its own (no set's sentence or value is copied): a setting's name in a name/value
pair, a CSV column, a literal given to a client, key armour split over string literals, a JSON
Web Key's private members, DSNs without ``://``, a token wrapped onto the next line, any
``Authorization`` scheme, command-line passwords of LDAP and PowerShell, provider tokens next
to their provider's name, Chinese cloud AK/SK, rarer phrasings of a password, keypad codes.
The look-alikes at the end are what must survive the same rules.
"""

from __future__ import annotations

import pytest

from memory.redact import redact
from tests.helpers.redaction import gone

SECRETS = {
    # a setting's name says what its value is, wherever the value sits
    "k8s-env-name-value": (
        "spec:\n  containers:\n    - name: api\n      env:\n        - name: BROKER_PASSWORD\n"
        '          value: "Fj4-Parrot-Nine"\n        - name: TZ\n          value: UTC',
        ["Fj4-Parrot-Nine"],
    ),
    "ecs-json-name-value": (
        '"environment": [{"name": "REPORTS_DB_PASSWORD", "value": "Birch-Lantern-5"}]',
        ["Birch-Lantern-5"],
    ),
    "toml-triple-quoted": (
        '[smtp]\nuser = "mailer"\npassword = """Gr4vel&Moth-3"""\n',
        ["Gr4vel&Moth-3"],
    ),
    "identifier-pass-phrase": ("signing_pass_phrase=Copper-Heron-4410", ["Copper-Heron-4410"]),
    "azure-style-primary-key": (
        '{"PrimaryKey": "pQ3rT8vW1xZ5bN7mK9jH2gF4dS6aL0qWeRtYuIoPaSdFgHjKlZxCvBnM1234567890ab==" }',
        ["pQ3rT8vW1xZ5bN7mK9jH2gF4dS6aL0qWeRtYuIoPaSdFgHjKlZxCvBnM1234567890ab=="],
    ),
    "key-store-base64-env": (
        "ANDROID_KEYSTORE_B64=MIIJqQIBAzCCCW8GCSqGSIb3DQEHAaCCCWAEgglcMIIJWDCCBA8GCSqGSIb3DQEHBqCCBAAw"
        "ggP8AgEAMIID9QYJKoZIhvcNAQcBMBwGCiqGSIb3DQEMAQYwDgQI5x2m",
        ["MIIJqQIBAzCCCW8GCSqGSIb3DQEHAaCCCWAEgglcMIIJWDCCBA8GCSqGSIb3DQEHBqCCBAAw"],
    ),
    "personal-access-token": (
        "export TRELLO_PAT=7/1234567890123456/9876543210987654:0c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f",
        ["7/1234567890123456/9876543210987654:0c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f"],
    ),
    "long-one-case-key": (
        "DEEPSEEK_API_KEY=sk-qwhzkrmvtplnbcxdfgjysaeoiuqwhzkrmvtplnbcx",
        ["sk-qwhzkrmvtplnbcxdfgjysaeoiuqwhzkrmvtplnbcx"],
    ),
    "pat-in-chinese": (
        "GitLab 的 PAT 是 mzq4r7t2vw5x8ya3bc6de9fg2hj5kl8mn3pq6rs9tu2vw5xy ，只读",
        ["mzq4r7t2vw5x8ya3bc6de9fg2hj5kl8mn3pq6rs9tu2vw5xy"],
    ),
    # CSV: a header that names the column
    "csv-credential-columns": (
        "user,Access Key ID,Secret Access Key\nci-bot,QJ7TZ2XW9LMK4RB8VC3N,"
        "uR5tY8wQ2eZ4xC7vB1nM3kL6jH9gF0dS2aP5oI8u\n",
        ["QJ7TZ2XW9LMK4RB8VC3N", "uR5tY8wQ2eZ4xC7vB1nM3kL6jH9gF0dS2aP5oI8u"],
    ),
    # literals given to a client or a connection
    "client-constructor-literal": (
        'llm = voyageai.Client("Vb7Nq2Lm8Xc4Zp1Rt6Yh3Jk9Wd5Sf0Ga")',
        ["Vb7Nq2Lm8Xc4Zp1Rt6Yh3Jk9Wd5Sf0Ga"],
    ),
    "ak-sk-pair-in-a-call": (
        "cred = Credential('Rk3Lm9Qp2Xw7Zt4Vb8Nc1Yh6Jd5Sf0Ga-Hk2Mn', 'Pz8Xc3Vb7Nm2Lk6Jh1Gf5Ds9Aq4Ws0Ed-Rf3Tg')",
        ["Pz8Xc3Vb7Nm2Lk6Jh1Gf5Ds9Aq4Ws0Ed-Rf3Tg"],
    ),
    "strong-password-argument": (
        "conn = mysqli_connect('db.internal', 'shop', 'Lantern#77Quay', 'orders');",
        ["Lantern#77Quay"],
    ),
    "bot-token-to-run": (
        "bot.run('MTk4NjIyNDgzNDcxOTI1MjQ4.Gq7XyZ.Lp4Rt8Vw2Xc6Zb1Nm5Qk9Hj3Fd7Sa0Ge4Ty')",
        ["MTk4NjIyNDgzNDcxOTI1MjQ4.Gq7XyZ.Lp4Rt8Vw2Xc6Zb1Nm5Qk9Hj3Fd7Sa0Ge4Ty"],
    ),
    # armour split over literals, JSON Web Keys
    "pem-in-concatenated-literals": (
        'const KEY =\n  "-----BEGIN PRIVATE KEY-----\\n" +\n'
        '  "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7Vq3XbZ1pLm9R\\n" +\n'
        '  "Tq4Wc8Yz2Nb6Hj1Kd5Sf9Ga3Lp7Xw0Ve4Rt8Mn2Bq6Cy1Dz5Ex9Fw3Gv7Hu1Is\\n" +\n'
        '  "-----END PRIVATE KEY-----\\n";\n',
        [
            "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7Vq3XbZ1pLm9R",
            "Tq4Wc8Yz2Nb6Hj1Kd5Sf9Ga3Lp7Xw0Ve4Rt8Mn2Bq6Cy1Dz5Ex9Fw3Gv7Hu1Is",
        ],
    ),
    "jwk-private-members": (
        '{"kty":"RSA","kid":"2026-a","n":"0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4",'
        '"e":"AQAB","d":"X4cTteJY_gn4FYPsXB8rdXix5vwsg1FLN5E3EaG6RJoVH-HLLKD9","p":"83i-7IvMGXoMXCskv73TKr8637FiO7Z27zv8oj6pbWUQyLPQBQxtPVnw"}',
        [
            "X4cTteJY_gn4FYPsXB8rdXix5vwsg1FLN5E3EaG6RJoVH-HLLKD9",
            "83i-7IvMGXoMXCskv73TKr8637FiO7Z27zv8oj6pbWUQyLPQBQxtPVnw",
        ],
    ),
    # DSNs without ://
    "go-dsn": ('db, _ := sql.Open("mysql", "svc:Pebble9Wind@tcp(10.2.0.7:3306)/ledger")', ["Pebble9Wind"]),
    "oracle-ezconnect": ("connect audit_ro/Quill7Harbor@//ora3.corp:1521/AUDIT", ["Quill7Harbor"]),
    "sqlplus-user-password": ("sqlplus -s report/Kestrel8Dune@REPDB @daily.sql", ["Kestrel8Dune"]),
    "jdbc-thin": ("url=jdbc:oracle:thin:etl/Marsh4Gable@ora1:1521/ETL", ["Marsh4Gable"]),
    # a token wrapped onto the next line; the secret right after its key id
    "wrapped-token-rest": (
        "the terminal cut it:\nghp_Zr8Xm2Lq7Vb4Nc9Ks1Jd6Hf3Ga5Tw0Ye\nPz8Xc3Vb7Nm2Lk6Jh1Gf5",
        ["Pz8Xc3Vb7Nm2Lk6Jh1Gf5"],
    ),
    "secret-after-its-key-id": (
        "AKIDq8Zr2Xm7Lv4Nc9Ks1Jd6Hf3Ga5Tw / Rk3Lm9Qp2Xw7Zt4Vb8Nc1Yh6Jd5Sf0",
        ["Rk3Lm9Qp2Xw7Zt4Vb8Nc1Yh6Jd5Sf0"],
    ),
    # headers and command lines
    "authorization-any-scheme": (
        'curl -H "Authorization: Klaviyo-API-Key pk_9c4e1a7b3d5f2e8a6c0b4d1f7e3a9c5b2d" https://a.example',
        ["pk_9c4e1a7b3d5f2e8a6c0b4d1f7e3a9c5b2d"],
    ),
    "authorization-uuid-value": (
        "Authorization: PagerKey 3b9d1f2e-7a4c-4e8b-9d0f-6c2a1e5b7d3f",
        ["3b9d1f2e-7a4c-4e8b-9d0f-6c2a1e5b7d3f"],
    ),
    "ldap-bind-password": (
        "ldapmodify -x -D 'cn=admin,dc=corp' -w Slate7Owl! -f users.ldif",
        ["Slate7Owl!"],
    ),
    "powershell-plaintext-securestring": (
        '$s = ConvertTo-SecureString -String "Brisk#Otter42" -AsPlainText -Force',
        ["Brisk#Otter42"],
    ),
    "cli-auth-uuid": ("npx vendor-cli auth 1f2e3d4c-5b6a-4789-8a9b-0c1d2e3f4a5b", ["1f2e3d4c-5b6a-4789-8a9b-0c1d2e3f4a5b"]),
    "echo-into-key-file": ("echo 9b3e7c1a5d2f8e4b6a0c9d3f7e1b5a2c > config/secret.key", ["9b3e7c1a5d2f8e4b6a0c9d3f7e1b5a2c"]),
    # provider tokens next to the provider's name, prefixed formats
    "provider-named-key": ("my Voyage key Nq7Lm2Xc8Zp4Rt1Yh6Jk3Wd9Sf5Ga0Bv, use it for embeddings", ["Nq7Lm2Xc8Zp4Rt1Yh6Jk3Wd9Sf5Ga0Bv"]),
    "prefixed-ingest-key": (
        'OTEL_HEADERS="x-team=hcaik_01j9zq4r7t2vw5x8ya3bc6de9fg2hj5kl8mn3pq6rs9tu2vw5xy"',
        ["hcaik_01j9zq4r7t2vw5x8ya3bc6de9fg2hj5kl8mn3pq6rs9tu2vw5xy"],
    ),
    "flyio-macaroon": (
        "FLY_API_TOKEN=FlyV1 fm2_lJPEZr8Xm2Lq7Vb4Nc9Ks1Jd6Hf3Ga5Tw0YeQp",
        ["fm2_lJPEZr8Xm2Lq7Vb4Nc9Ks1Jd6Hf3Ga5Tw0YeQp"],
    ),
    "mailchimp-key": ("MC key 7e2b9d4f1a6c3e8b5d0f2a7c4e9b1d6f-us14", ["7e2b9d4f1a6c3e8b5d0f2a7c4e9b1d6f-us14"]),
    # Chinese cloud keys with only AK / SK for a label
    "ak-sk-in-chinese": (
        "金山云的 AK 是 AKLTq8Zr2Xm7Lv4Nc9Ks1Jd6Hf3，SK 是 f3a9c1e7b5d2f4a6c8e0b1d3f5a7c9e2",
        ["f3a9c1e7b5d2f4a6c8e0b1d3f5a7c9e2"],
    ),
    "ak-in-a-query": ("https://api.maps.example.cn/geocode?ak=Xq7Lm2Nc8Zp4Rt1Yh6Jk3Wd9Sf5Ga0Bv&city=1", ["Xq7Lm2Nc8Zp4Rt1Yh6Jk3Wd9Sf5Ga0Bv"]),
    "ak-sk-bare": ("华为云 AK ZXWQ7TLR2MNB9KVC4HJD SK Nq7Lm2Xc8Zp4Rt1Yh6Jk3Wd9Sf5Ga0BvQw2Er3Ty", ["Nq7Lm2Xc8Zp4Rt1Yh6Jk3Wd9Sf5Ga0BvQw2Er3Ty"]),
    "cloud-cli-flags": (
        "ossutil config -i QPWOEIRUTY5ALSKDJFHG -k Lq7Vb4Nc9Ks1Jd6Hf3Ga5Tw0YeZr8Xm2Rt6",
        ["QPWOEIRUTY5ALSKDJFHG", "Lq7Vb4Nc9Ks1Jd6Hf3Ga5Tw0YeZr8Xm2Rt6"],
    ),
    "cloud-pair-unlabelled": (
        "金山云的一对：ZMXNCBVLAKSJ2DHFGQ7W  Tw0YeZr8Xm2Lq7Vb4Nc9Ks1Jd6Hf3Ga5P",
        ["ZMXNCBVLAKSJ2DHFGQ7W", "Tw0YeZr8Xm2Lq7Vb4Nc9Ks1Jd6Hf3Ga5P"],
    ),
    "app-certificate": ("App Certificate: 5e8b2d7f1a4c9e3b6d0f8a2c5e7b1d4f", ["5e8b2d7f1a4c9e3b6d0f8a2c5e7b1d4f"]),
    # rarer phrasings of a password, in either language
    "password-with-an-aside": ("the password, in case you lose it, is Tarn-Violet-38", ["Tarn-Violet-38"]),
    "password-is-words-colon": ("the wiki password is the usual one: Fennel-Quarry-61", ["Fennel-Quarry-61"]),
    "password-to-be": ("we set the backup password to be Ochre-Lintel-25 on monday", ["Ochre-Lintel-25"]),
    "password-this-is": ("I changed the nas password to ember-Lattice-6 this week", ["ember-Lattice-6"]),
    "password-for-a-path": ("the vault password for inventories/staging is Cobalt-Wren-71", ["Cobalt-Wren-71"]),
    "snmp-community": ("our switches answer SNMP reads with community r3ad-Only-Fern", ["r3ad-Only-Fern"]),
    "app-password-after-a-space": ("Gmail app password wxyz abcd qrst lmno for the relay", ["wxyz abcd qrst lmno"]),
    "zh-password-used": ("密码用的是 Ts8-kQ4-wN2，别外传", ["Ts8-kQ4-wN2"]),
    "zh-login-user-and-password": ("登录用 ops 和 Qd4-Rook-81", ["Qd4-Rook-81"]),
    "zh-full-width-symbol": ("admin密码：Ad9＃Lake2026x", ["Ad9＃Lake2026x"]),
    "zh-authorization-code-bare": ("163 邮箱授权码 pqxvwkzjtmhrnbcl ，客户端登录用", ["pqxvwkzjtmhrnbcl"]),
    "zh-value-on-the-line-above": ("  ⎿  Rq7#Delta2026\n这个就是 redis 密码，存到 vault 里", ["Rq7#Delta2026"]),
    "value-on-the-line-above": ("$ cat ~/.pw\nMv4!Basalt90\nthat's the staging password", ["Mv4!Basalt90"]),
    # keypad codes and the other PINs
    "door-code-with-hash": ("the back door code for the holidays is 58#731", ["58#731"]),
    "zh-door-password-hash": ("车库门禁密码 6604#", ["6604#"]),
    "sim-puk": ("SIM 的 PUK 是 40917362", ["40917362"]),
    "keypad": ("shed keypad: 2846", ["2846"]),
    "gate-code-hash-prefix": ("gate code #7315", ["7315"]),
    "lock-combination": ("the bike lock combination is 31-07-26", ["31-07-26"]),
    "disarm-code": ("alarm disarm code: 6158", ["6158"]),
    "changed-from-the-default": (
        "camera admin UI: changed it from the factory default to Ember!Sloth-8 tonight",
        ["Ember!Sloth-8"],
    ),
    # passwords given to a command as a plain argument
    "sql-identified-by": ("CREATE USER 'etl'@'%' IDENTIFIED BY 'Pylon#Sage31';", ["Pylon#Sage31"]),
    "htpasswd-batch": ("htpasswd -bc /etc/nginx/.htpasswd ops Grove-Tinder-12", ["Grove-Tinder-12"]),
    "rabbitmq-add-user": ("rabbitmqctl add_user billing Flint-Meadow-63", ["Flint-Meadow-63"]),
    "net-use-user": ("net use S: \\\\nas\\media /user:home\\kim Cedar-Gull-27", ["Cedar-Gull-27"]),
    "echo-to-password-stdin": (
        "echo 'Ridge-Falcon-52' | podman login -u ci --password-stdin quay.example",
        ["Ridge-Falcon-52"],
    ),
}


@pytest.mark.parametrize("form", sorted(SECRETS))
def test_the_secret_is_redacted_by_its_structure(form: str) -> None:
    text, secrets = SECRETS[form]
    out, kinds = redact(text)
    assert kinds, out
    for secret in secrets:
        assert gone(secret, out), out


LOOK_ALIKES = {
    "k8s-env-plain-value": "env:\n  - name: LOG_FORMAT\n    value: json-lines",
    "k8s-env-value-from": "- name: DB_PASSWORD\n  valueFrom:\n    secretKeyRef:\n      name: db\n      key: password",
    "csv-without-credentials": "name,email,token_count\nalice,alice@example.com,42\n",
    "csv-password-date-column": "id,name,password_changed_at\n7,bo,2026-03-04\n",
    "hash-given-to-a-call": "assert verify_sha1('da39a3ee5e6b4b0d3255bfef95601890afd80709')",
    "commit-given-to-a-call": "repo.git.checkout('4b825dc642cb6eb9a060e54bf8d69288fbee4904')",
    "base64-image-in-code": "data = base64.b64decode('j8+6egl7bW1cgD9+E60AtXAAGydhSrh+Xv/Co+7gti6xUsMCFPRIbm7xRJlHEvFJ9KsACKdyBmJzh77dOWewRYlQTkc=')",
    "object-id-given-to-a-call": "stripe.Price.retrieve('price_1Qb7Zr8Xm2Lq7Vb4Nc9Ks1Jd')",
    "uuid-in-a-log-call": "log.info('job 0f8e7d6c-5b4a-4392-8170-6f5e4d3c2b1a done')",
    "public-jwk": '{"kty":"EC","crv":"P-256","use":"sig","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU","y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"}',
    "pagination-token": "GET /v2/orders?limit=50&next_token=5c1e9a3f7b2d4e6a returns the next page",
    "page-token-camel": "request.nextPageToken = 'c2Vjb25kLXBhZ2U6MjAw'",
    "mock-sms-code": "测试环境短信验证码固定为 888888，不会真的发送",
    "publishable-key-by-name": "STRIPE_PUBLISHABLE_KEY=pk_test_51Mz8Xq7Lm2Nc8Zp4Rt1Yh6Jk3Wd9Sf5Ga0Bv",
    "public-map-token": "map.accessToken = 'pk.eyJ1IjoiYWNtZSIsImEiOiJjbGV4YW1wbGUifQ.Zr8Xm2Lq7Vb4Nc9Ks1Jd6H'",
    "firebase-web-config": 'firebase.initializeApp({apiKey: "AIzaSyZr8Xm2Lq7Vb4Nc9Ks1Jd6Hf3Ga5Tw0Ye", authDomain: "acme.firebaseapp.com"})',
    "sentry-public-dsn": "SENTRY_DSN=https://4f2a9c1e7b3d5f8a0c2e4b6d8f1a3c5e@o123456.ingest.sentry.io/7654321",
    "community-headcount": "our community is 4000 strong",
    "dict-key-in-prose": "the cache hit for key: npm-4f2a9c1e7b3d-node20 was restored",
    "arrow-key": "press the arrow key 3 times",
    "auth-command-without-token": "gh auth login --with-token < token.txt",
    "echo-into-plain-file": "echo 9b3e7c1a5d2f8e4b6a0c9d3f7e1b5a2c > build/commit.txt",
    "door-code-policy": "the door code is required after 8pm",
    "ak-sk-in-docs": "AK/SK are explained in the cloud docs",
    "password-policy-on-the-line-above": "deploy finished\nthat's the password policy we agreed",
    "wrapped-after-marker-prose": "ghp_Zr8Xm2Lq7Vb4Nc9Ks1Jd6Hf3Ga5Tw0Ye\nrelease notes follow",
    "go-dsn-with-placeholder": 'dsn := "app:${DB_PASS}@tcp(db:3306)/app"',
    "sql-identified-by-placeholder": "ALTER USER app IDENTIFIED BY '<new password>';",
    "combination-in-prose": "the combination of both flags is what breaks it",
    "cloud-names-without-keys": "阿里云 OSS 的 bucket 是 media-assets-2026-prod，地域 oss-cn-shanghai，SDK 版本 3.18.1",
    "cloud-project-id": "华为云 region cn-north-4, project id 0a1b2c3d4e5f60718293a4b5c6d7e8f9",
    "changed-theme-from-the-default": "changed the theme from the default to Solarized-Dark2",
    "json-value-word": '{"use":"sig","alg":"RS256","n":"sXchDaQebHnPiGvyDOAT4saGEUetSyo9MKLOoWFsueri23bOdgWp4Dy1Wl"}',
}


@pytest.mark.parametrize("form", sorted(LOOK_ALIKES))
def test_the_look_alike_survives_the_structure_rules(form: str) -> None:
    text = LOOK_ALIKES[form]
    if form == "wrapped-after-marker-prose":  # the token goes, the prose line stays
        assert redact(text)[0].endswith("\nrelease notes follow")
        return
    assert redact(text)[0] == text


@pytest.mark.parametrize(
    "form",
    ["jwk-private-members", "wrapped-token-rest", "echo-into-key-file", "toml-triple-quoted"],
)
def test_the_structure_is_read_inside_a_jsonl_string_too(form: str) -> None:
    # the hook redacts Claude Code's JSONL lines as they are: quotes escaped, lines as \n
    import json

    text, secrets = SECRETS[form]
    line = json.dumps({"type": "user", "message": {"role": "user", "content": text}})
    out, _kinds = redact(line)
    json.loads(out)
    for secret in secrets:
        assert gone(secret, out), out


def test_a_json_value_word_inside_a_jsonl_string_is_no_credential_word() -> None:
    import json

    line = json.dumps({"content": LOOK_ALIKES["json-value-word"]})
    assert redact(line)[0] == line
