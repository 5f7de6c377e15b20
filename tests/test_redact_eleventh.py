"""Issue 22, eleventh round: secrets read from the structure around them, tested with values of
their own (no set's sentence or value) on both sides: what each rule catches and what the same
neighbourhood must keep.

* a subscript's quoted key and make's ``?=`` connect a value to its credential word; a value of
  a generated kind (api-key, token, secret) that is one lower-case word is no key;
* a call's literals that open with a connection string and a user give the password third; a
  connection-string literal is never a generated token;
* a modular-crypt hash in an account file's second field (shadow, htpasswd) is a credential;
* a passphrase ends at an aside opening after it; four random groups of four letters after a
  password word are an app password;
* Samba's ``-U user%password`` and ``echo 'user:password' | chpasswd``; the lines under a comment
  line that opens with a file named for a secret;
* a header directive ``Authorization "Basic …"`` and a setting whose name ends in ``auth``;
* a code of capitals and digits mixed after a code word.
"""

from __future__ import annotations

import pytest

from memory.redact import redact
from tests.helpers.redaction import gone, kept

# ------------------------------------------------------------------ subscripts and make


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("$settings['mail']['password'] = 'Quokka_Rider_41';", "Quokka_Rider_41"),
        ('cfg["db_password"] = "Heron-Lamp-882"', "Heron-Lamp-882"),
        ('os.environ["BILLING_API_TOKEN"] = "tk9sd8f7g6h5j4k3m2"', "tk9sd8f7g6h5j4k3m2"),
        ("SMTP_PASS ?= Marsh_Otter_57", "Marsh_Otter_57"),
    ],
)
def test_a_subscripts_quoted_key_and_makes_conditional_assignment_give_a_value(
    text: str, secret: str
) -> None:
    out, kinds = redact(text)
    assert gone(secret, out) and kinds


@pytest.mark.parametrize(
    "text",
    [
        'if row["password"] == "Quokka_Rider_41":',  # a comparison, not an assignment
        'cfg["password"] = read_secret("db")',  # a call gives it
        'data["password_policy"] = "strict"',
        "os.environ['AWS_SECRET_ACCESS_KEY'] = 'testing'",  # a mocked cloud's fixture
        "STRIPE_SECRET_KEY = 'placeholder'",
    ],
)
def test_a_subscript_or_an_assignment_keeps_what_is_no_value(text: str) -> None:
    kept(text)


def test_a_password_of_one_lower_case_word_is_still_a_password() -> None:
    out, _ = redact("DB_PASSWORD = 'marmoset'")
    assert gone("marmoset", out)


# ------------------------------------------------------------------ connection calls


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ('c = DriverManager.getConnection("jdbc:mysql://db:3306/shop", "shop", "Ledger_Fox_19");', "Ledger_Fox_19"),
        ("$db = new PDO('pgsql:host=db;dbname=crm', 'crm', 'Crm-Ledger-2031');", "Crm-Ledger-2031"),
    ],
)
def test_the_third_literal_after_a_connection_string_and_a_user_is_the_password(
    text: str, secret: str
) -> None:
    out, kinds = redact(text)
    assert gone(secret, out) and kinds == ["password"]


@pytest.mark.parametrize(
    "text",
    [
        'c = DriverManager.getConnection("jdbc:mysql://db:3306/shop", "shop", "");',
        'c = DriverManager.getConnection("jdbc:mysql://db:3306/shop", "shop", "${DB_PASS}");',
        'c = DriverManager.getConnection("jdbc:mysql://db:3306/shop", "shop", "password");',
        'client.connect("https://api.example.com/v2", "region-1", "v2.3.1")',
        'c = DriverManager.getConnection("jdbc:mysql://db:3306/shop", user, pw);',
    ],
)
def test_a_connection_call_keeps_its_url_an_empty_a_templated_or_a_version_literal(text: str) -> None:
    kept(text)


# ------------------------------------------------------------------ account files


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        (
            "bob:$6$rounds=5000$saltsalt$Jx8dfKsd93kdfnv8sdfkSDFj3498sdfkjsdfSDFkj2349:19000:0:99999:7:::",
            "$6$rounds=5000$saltsalt$Jx8dfKsd93kdfnv8sdfkSDFj3498sdfkjsdfSDFkj2349",
        ),
        ("root:x:0:0:root:/root:/bin/bash\nalice:$apr1$abcd1234$Kj3h4k5j6h7k8j9h0k1j2h", "$apr1$abcd1234$Kj3h4k5j6h7k8j9h0k1j2h"),
        ('{"out": "web:$y$j9T$Qw3rTy$Zx8Cv7Bn6Mm5Ll4Kk3Jj2Hh1\\nok"}', "$y$j9T$Qw3rTy$Zx8Cv7Bn6Mm5Ll4Kk3Jj2Hh1"),
    ],
)
def test_a_crypt_hash_in_an_account_files_second_field_goes(text: str, secret: str) -> None:
    out, kinds = redact(text)
    assert gone(secret, out) and kinds == ["password"]


@pytest.mark.parametrize(
    "text",
    [
        'HASH = "$2b$12$KIXQJhb8Hn7uCn.Y1z1A9uU8j7H6g5F4d3S2a1Q0w9E8r7T6y5U4i"',
        "bcrypt hashes look like $2b$12$KIXQJhb8Hn7uCn.Y1z1A9uU8j7H6g5F4d3S2a1Q0w9E8r7T6y5U4i in that column",
        "the format is user:$6$salt$hash",
    ],
)
def test_a_crypt_hash_in_a_sentence_or_a_test_stays(text: str) -> None:
    kept(text)


# ------------------------------------------------------------------ phrases and app passwords


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("my gpg passphrase is lantern copper meadow violin (four words) if asked", "lantern copper meadow violin"),
        ("私钥的密码短语是yueliang zai tian shang（有空格）", "yueliang zai tian shang"),
        ("spring.mail.password=qzvt bnwk rplm xsdf", "qzvt bnwk rplm xsdf"),
    ],
)
def test_a_phrase_ends_at_an_aside_and_random_letter_groups_are_an_app_password(
    text: str, secret: str
) -> None:
    out, _ = redact(text)
    assert gone(secret, out)


@pytest.mark.parametrize(
    "text",
    [
        "Password: this will fail when the vault is sealed",
        "the passphrase is stored (in vault) for now",
    ],
)
def test_words_after_a_password_word_stay(text: str) -> None:
    kept(text)


# ------------------------------------------------------------------ commands


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("smbclient //nas/docs -U 'ACME\\bob%Tiger-Lily-2033'", "Tiger-Lily-2033"),
        ("rpcclient -U bob%Tiger-Lily-2033 10.0.0.5", "Tiger-Lily-2033"),
        ("echo 'webadmin:Tiger-Lily-2033' | sudo chpasswd", "Tiger-Lily-2033"),
    ],
)
def test_samba_and_chpasswd_give_their_passwords_on_the_command_line(text: str, secret: str) -> None:
    out, kinds = redact(text)
    assert gone(secret, out) and kinds == ["password"]


@pytest.mark.parametrize(
    "text",
    [
        'rpcclient -U "" -N 10.0.0.5',
        "printf 'Usage: %s -U user%%pass'",
        'echo "user:password" | chpasswd',
        "echo 'build:ok' | tee status.txt",
    ],
)
def test_an_empty_user_a_usage_line_or_a_placeholder_pair_stays(text: str) -> None:
    kept(text)


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("# .vault_pass (chmod 600)\nplover-Quill-Basin-62", "plover-Quill-Basin-62"),
        ("# auth.txt for openvpn --auth-user-pass\nkim.lee\nVpn_Kim#Winter9", "Vpn_Kim#Winter9"),
    ],
)
def test_the_lines_under_a_comment_naming_a_secrets_file_are_the_file(text: str, secret: str) -> None:
    out, kinds = redact(text)
    assert gone(secret, out) and kinds == ["secret"]


@pytest.mark.parametrize(
    "text",
    [
        "# auth.py\ndef login(): pass",  # a source file about a credential
        "// passwords.md\nsee the wiki",  # a sentence
        "# token.txt.example\nreplace-with-your-token",
        "# auth.txt for openvpn\nkim.lee",  # the user's line alone
    ],
)
def test_the_lines_under_a_comment_naming_a_source_file_or_a_placeholder_stay(text: str) -> None:
    kept(text)


# ------------------------------------------------------------------ headers and settings


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ('proxy_set_header Authorization "Basic Zx81kQm2pL9vT4wN7cR3yB6s";', "Zx81kQm2pL9vT4wN7cR3yB6s"),
        ('RequestHeader set Authorization "SSWS 00aZx81kQm2pL9vT4wN7cR3yB6sQm9iOlRp"', "00aZx81kQm2pL9vT4wN7cR3yB6sQm9iOlRp"),
        ("port 6380\nmasterauth Tiger-Lily-2033", "Tiger-Lily-2033"),
    ],
)
def test_a_header_directive_and_a_glued_auth_setting_give_their_values(text: str, secret: str) -> None:
    out, kinds = redact(text)
    assert gone(secret, out) and kinds


@pytest.mark.parametrize(
    "text",
    [
        'the Authorization "Bearer" scheme is described in RFC 6750',
        "masterauth yes",
        "we use basicauth middleware here",
    ],
)
def test_a_header_name_or_an_auth_setting_without_a_value_stays(text: str) -> None:
    kept(text)


# ------------------------------------------------------------------ issued codes


@pytest.mark.parametrize(
    ("text", "secret"),
    [("邮箱收到的验证码是 K4P9TZ，帮我输一下", "K4P9TZ"), ("the verification code is X7Q2", "X7Q2")],
)
def test_a_code_of_capitals_and_digits_mixed_after_a_code_word_goes(text: str, secret: str) -> None:
    out, kinds = redact(text)
    assert secret not in out and kinds == ["pin"]


@pytest.mark.parametrize("text", ["PIN: ISO9001", "验证码是 HTTP2 协议发来的", "the door code is B12"])
def test_a_name_and_its_number_after_a_code_word_stays(text: str) -> None:
    kept(text)
