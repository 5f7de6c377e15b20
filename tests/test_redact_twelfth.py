"""Issue 22, twelfth round: secrets read from the structure around them, tested with values of
their own (no set's sentence or value) on both sides: what each rule catches and what the same
neighbourhood must keep.

* Claude Code's tool display (``● Bash(<command>)`` and the output under ``⎿``): what a command
  naming a secret or a secret's file printed; the display's output ends at its first line that is
  not indented; a camel-case file name ending in a credential word names a secret's file;
* a command's ``-p``/``-P`` flag: after a user flag of either case, or anywhere when its value has
  a password's shape (letters, digits and a symbol like ``!`` or ``#``, none of ``/=:,.``);
  ``-u user,password``; ``echo <password> | sudo -S``.
"""

from __future__ import annotations

import pytest

from memory.redact import redact
from tests.helpers.redaction import gone, kept

# ------------------------------------------------------------------ the tool display


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("● Bash(cat ~/.deploy_pass)\n  ⎿  tangerine-Vessel-58", "tangerine-Vessel-58"),
        (
            "● Bash(cat app/config/master.key)\n  ⎿  5c0e9a71d2b84f63a90e1c27d4b85f06",
            "5c0e9a71d2b84f63a90e1c27d4b85f06",
        ),
        (
            "⏺ Bash(sudo cat /srv/ci/secrets/bootstrapAdminPassword)\n  ⎿  7f3e21c9b04d4a6e8c5d",
            "7f3e21c9b04d4a6e8c5d",
        ),
        (
            "● Bash(kubectl get secret mq-login -o jsonpath='{.data.password}' | base64 -d)\n"
            "  ⎿  Rabbit_Hutch#72",
            "Rabbit_Hutch#72",
        ),
        (
            '● Bash(kubectl -n ci get secret runner-token -o jsonpath="{.data.token}")\n'
            "  ⎿  bWFkZS11cC12YWx1ZS1mb3ItYS10ZXN0Cg==",
            "bWFkZS11cC12YWx1ZS1mb3ItYS10ZXN0Cg==",
        ),
        (
            "● Bash(cat ~/.config/tool/api_token)\n  ⎿  q8Zr2LmX0pVt\n     W4nB7sKd1yHc",
            "W4nB7sKd1yHc",
        ),
    ],
)
def test_tool_display_output_of_a_command_naming_a_secret_is_redacted(
    text: str, secret: str
) -> None:
    assert gone(secret, redact(text)[0])


@pytest.mark.parametrize(
    "text",
    [
        # the command names no secret
        "● Bash(cat build/VERSION)\n  ⎿  v4.12.0-rc3",
        "● Bash(git rev-parse HEAD)\n  ⎿  3f9c2a1e7b6d5c4b3a29180f7e6d5c4b3a291807",
        # the names of variables, not their values
        "● Bash(env | cut -d= -f1 | grep -i token)\n  ⎿  GITHUB_TOKEN\n     NPM_TOKEN",
        # the output ended: the next line is not indented
        "● Bash(env | cut -d= -f1 | grep -i token)\n  ⎿  GITHUB_TOKEN\n     NPM_TOKEN\n"
        "名字都在这里，值没有贴出来",
        "● Bash(cat ~/.npm_token)\n  ⎿  (No content)\nok7Lw2Rq9vXz was the old one, gone now",
        # a source file about a token, not one
        "● Bash(cat src/auth_token.py)\n  ⎿  TOKEN_TTL=3600",
    ],
)
def test_tool_display_output_keeps_what_is_no_printed_secret(text: str) -> None:
    kept(text)


# ------------------------------------------------------------------ a command's password flag


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("ipmitool -I lanplus -H 10.9.8.7 -U root -P Otter_Bay4 sol activate", "Otter_Bay4"),
        ("mosquitto_sub -h broker.lan -u meter3 -P 'Juniper-58#z' -t power/#", "Juniper-58#z"),
        ("7z x -pW4lnut!Cask9 -o./out ledger.7z", "W4lnut!Cask9"),
        ("unzip -P 'Brass#Kettle7' payroll.zip", "Brass#Kettle7"),
        ("zip -r -P Cedar@Moth41 out.zip ./docs", "Cedar@Moth41"),
        ("lftp -u mirror,Heron!Pond33 ftp://files.example.test", "Heron!Pond33"),
        ("echo 'Pebble%Ridge19' | sudo -S apt-get update", "Pebble%Ridge19"),
        ("printf 'Lynx^Harbor64' | sudo -k -S reboot", "Lynx^Harbor64"),
    ],
)
def test_password_flags_read_from_the_command_shape_are_redacted(text: str, secret: str) -> None:
    assert gone(secret, redact(text)[0])


@pytest.mark.parametrize(
    "text",
    [
        "scp -P 2222 report.pdf ops@jump.example.test:/tmp/",
        "mysql -h db -u app -P 3306 -e 'select 1'",
        "mysql -h db -u app -P3306 -e 'select 1'",
        "xargs -P 8 -n 1 gzip",
        "gcc -pthread -O2 -o server main.c",
        "mkdir -p build/out#2 && ls",
        "rsync -P ./a#1/ backup:/srv/a/",
        "docker run -p 8080:80 -u 1000 nginx",
        "echo 'restarting now' | sudo -S systemctl restart nginx",
        'echo "$SUDO_PASS" | sudo -S true',
        "lftp -u anonymous, ftp.example.test",
    ],
)
def test_password_flags_keep_ports_paths_and_options(text: str) -> None:
    kept(text)


# ------------------------------------------------------------------ a code sent to be typed back


@pytest.mark.parametrize(
    ("text", "secrets"),
    [
        ("the code the bank just sent is 604 318, quick", ["604 318"]),
        ("login code right now: 275093 (it expires soon)", ["275093"]),
        ("[auth] sent sms user=9921 code=813502 channel=sms", ["813502"]),
        ("快递柜的校验码是 447126，帮我取一下", ["447126"]),
        ("备用的动态码我记了两个：50917342、81264093", ["50917342", "81264093"]),
        ("Code: 3917 2046 — type it in the app", ["3917 2046"]),
    ],
)
def test_a_code_of_one_time_length_after_its_word_is_redacted(
    text: str, secrets: list[str]
) -> None:
    out = redact(text)[0]
    assert all(secret not in out for secret in secrets)


@pytest.mark.parametrize(
    "text",
    [
        'the API answered {"code": 40102, "msg": "expired"}',
        "exit code 137 after 4 retries",
        "the error code is 500213 in the vendor's table",
        "zip code 941107 is not a valid one",
        "测试环境的验证码固定为 111111，不会真的发短信",
        "see the code in lines 270-318 of parser.py",
        "code review of PR 482913 is done",
        "barcode 590123412345 on the box",
        "the code is 6 digits long, 123456 is just an example of the length",
        "code 2025.11.03 release notes",
    ],
)
def test_a_number_after_code_that_is_no_sent_code_is_kept(text: str) -> None:
    kept(text)


# ------------------------------------------------------------------ user / password, any user


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("the runner logs in as svc-ci / Marlin_Creek_88 for now", "Marlin_Creek_88"),
        ("堡垒机 ops / Tb8!jumpHost，用完退出", "Tb8!jumpHost"),
        ("- 监控后台：grafana_ro / Vw@dash2031x", "Vw@dash2031x"),
    ],
)
def test_a_user_and_a_made_up_value_around_a_spaced_slash_is_a_login(
    text: str, secret: str
) -> None:
    assert gone(secret, redact(text)[0])


@pytest.mark.parametrize(
    "text",
    [
        "read / write access for the bucket",
        "branch main / release-2024 today",
        "x86_64 / arm64 builds",
        "node18 / node20 images",
        "GPT-4o / Claude-3.5 compared",
        "dev / staging-2 env",
        "see docs/Setup_Guide_2.md",
        "open Console / Projects / Alpha2025 for the list",
        "ops / Tb8jumpHost9 / more is a menu path",
    ],
)
def test_a_spaced_slash_between_words_names_or_versions_is_kept(text: str) -> None:
    kept(text)


# ------------------------------------------------------------------ Markdown table columns


@pytest.mark.parametrize(
    ("text", "secrets"),
    [
        (
            "| env | host | user | password |\n|---|---|---|---|\n"
            "| stage | 10.0.0.5 | deploy | Kq8#vessel22 |\n"
            "| prod | 10.0.0.6 | deploy | Zr4!lantern9 |",
            ["Kq8#vessel22", "Zr4!lantern9"],
        ),
        (
            "| 环境 | 账号 | 密码 |\n| :--- | :--- | :--- |\n| 测试 | qa_ops | Cs7@mango_41 |",
            ["Cs7@mango_41"],
        ),
        (
            "| bot | token |\n|-----|-------|\n| alerts | `Xq3vB8nW2kLp9sTz4yHc7dRf` |",
            ["Xq3vB8nW2kLp9sTz4yHc7dRf"],
        ),
    ],
)
def test_a_markdown_table_column_named_for_a_credential_is_redacted(
    text: str, secrets: list[str]
) -> None:
    out = redact(text)[0]
    assert all(gone(secret, out) for secret in secrets)


@pytest.mark.parametrize(
    "text",
    [
        # "password" in a body row is a field's name, not the header of a column
        "| field | type |\n|---|---|\n| password | string |\n| email2 | string |",
        # notes, placeholders and masks in the column
        "| service | user | password |\n|---|---|---|\n| db | app | in vault |\n"
        "| cache | - | none |\n| queue | mq | ******** |\n| ci | bot | `${CI_PASS}` |",
        # no rule under the line: not a table's header
        "| user | password |\n| deploy | Kq8#vessel22 is what the doc says |",
    ],
)
def test_a_markdown_table_keeps_what_is_no_credential_cell(text: str) -> None:
    kept(text)


# ------------------------------------------------------------------ cookie strings


@pytest.mark.parametrize(
    ("text", "secrets"),
    [
        (
            "抓包看到 cookie 里的 auth_k=5f1e0c9a7b3d2e4f6a8b0c1d2e3f4a5b_1733112233 能直接用",
            ["5f1e0c9a7b3d2e4f6a8b0c1d2e3f4a5b_1733112233"],
        ),
        (
            "the cookies: lang=en; sess_v2=b71c%2C9940213377%2Cq7Zk%2AmR4tW9xLp2Nd; theme=dark",
            ["b71c%2C9940213377%2Cq7Zk%2AmR4tW9xLp2Nd"],
        ),
        (
            "cookie 关键两个：uid_tk=0c4f8e2a9b7d6c5e4f3a2b1c0d9e8f7a; ssn=Wq8ZrT3kLm9NvB2xYc7P",
            ["0c4f8e2a9b7d6c5e4f3a2b1c0d9e8f7a", "Wq8ZrT3kLm9NvB2xYc7P"],
        ),
    ],
)
def test_the_generated_values_of_a_cookie_string_are_redacted(
    text: str, secrets: list[str]
) -> None:
    out = redact(text)[0]
    assert all(gone(secret, out) for secret in secrets)


@pytest.mark.parametrize(
    "text",
    [
        "cookie prefs: theme=dark; lang=zh-CN; tz=Asia/Shanghai; consent=accepted-2025",
        "the cookie banner shows _ga=GA1.2.1288431930.1733112233 for analytics",
        "Set-Cookie 里没有会话，刷新就掉登录",
        "cookie-cutter templates: name=project_template_v2_for_services",
    ],
)
def test_a_cookie_string_keeps_preferences_flags_and_analytics_ids(text: str) -> None:
    kept(text)


# ------------------------------------------------------------------ a prefixed string literal


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        (
            'app.secret_key = b"7d1c9e0f3a5b2d4c6e8f0a1b3c5d7e9f2a4b6c8d0e1f2a3b"',
            "7d1c9e0f3a5b2d4c6e8f0a1b3c5d7e9f2a4b6c8d0e1f2a3b",
        ),
        ("SIGNING_KEY = b'Qm4xTz8vRk2nLw7pYc3s'", "Qm4xTz8vRk2nLw7pYc3s"),
        ('token = r"Vb5nXq2kLm8zRt4wPy7c"', "Vb5nXq2kLm8zRt4wPy7c"),
        ('db_password = Rb"Kq8vessel22x"', "Kq8vessel22x"),
    ],
)
def test_a_credential_assigned_a_prefixed_string_literal_is_redacted(
    text: str, secret: str
) -> None:
    assert gone(secret, redact(text)[0])


@pytest.mark.parametrize(
    "text",
    [
        "password = b",
        'token = b""',
        'greeting = b"hello there 2"',
        "password = bogus_rule_name",
    ],
)
def test_a_prefixed_literal_keeps_what_is_no_value(text: str) -> None:
    kept(text)


# ------------------------------------------------------------------ a terminal's prompt


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        (
            '$ kubectl get secret pg -o jsonpath="{.data.password}" | base64 -d\nRab_Hutch#72x',
            "Rab_Hutch#72x",
        ),
        (
            "$ kubectl -n ci get secret runner -o jsonpath='{.data.token}'\n"
            "dGhpcy1pcy1hLW1hZGUtdXAtdG9rZW4tMjAyNgo=",
            "dGhpcy1pcy1hLW1hZGUtdXAtdG9rZW4tMjAyNgo=",
        ),
    ],
)
def test_what_a_prompted_command_naming_a_secret_printed_is_redacted(
    text: str, secret: str
) -> None:
    assert gone(secret, redact(text)[0])


@pytest.mark.parametrize(
    "text",
    [
        "costs 5$ each\nXq7pLm2vB9nW4kRt8sZc3d",
        "$ grep -c token app.log\n4211",
        "$ wc -l secrets.txt\n120 secrets.txt",
        "$ ls secrets/\ndb.key  api.key",
        "$ cat token_notes.md\nrotate-weekly-2024",
        "$ git log -1 --format=%h\nb7c41e2",
    ],
)
def test_a_prompted_command_keeps_what_is_no_printed_secret(text: str) -> None:
    kept(text)
