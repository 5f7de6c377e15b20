"""Issue 22, tenth round: false positives of the detector's structure reading, each fixed by the
structural property it shows, tested with examples of its own (no set's sentence or value) on
both sides: what the rule leaves and what the same neighbourhood must still lose.

* a service or login word inside a URL's host or path is no context for a token, and a slash
  with a space before it and none after opens a path, not a user/password pair;
* a JWT header alone (base64url of registered header parameters, no payload, no signature) is
  public;
* in a block that names an example file before it, a value spelled out in words is what to
  fill in; a generated value there is still caught;
* ``<name>:<name>:<hex>`` after the bare word ``key`` is a store's id.
"""

from __future__ import annotations

import base64
import json

import pytest

from memory.redact import redact
from memory.redact.context import in_example_file, spelled_out
from memory.redact.values import jwt_header_only
from tests.helpers.redaction import gone


def b64url(obj: dict[str, object]) -> str:
    return base64.urlsafe_b64encode(json.dumps(obj, separators=(",", ":")).encode()).decode().rstrip("=")


# ------------------------------------------------------------------ URLs: host and path


@pytest.mark.parametrize(
    "text",
    [
        "see https://wandb.ai/orchard-lab/vision/runs/q7tm3kz9 for the loss curve",
        "the sweep lives at wandb.ai/orchard-lab/sweeps/h2k9pq7x/overview",
        "open https://console.twilio.com/us1/monitor/logs/sms/SMa81c2f09d7e3b5 to check",
    ],
)
def test_a_service_name_in_a_urls_host_or_path_is_no_context_for_a_token(text: str) -> None:
    assert redact(text) == (text, [])


def test_the_service_word_outside_a_url_still_finds_its_token() -> None:
    key = "c81f3b9e2d7a4f60b5e8a1d3c9f7e2b4a6d8c0e1"
    out, kinds = redact(f"then run wandb login {key} on the box")
    assert gone(key, out) and kinds


def test_a_credential_in_a_urls_own_structure_still_goes() -> None:
    out, _ = redact("curl https://ops:Vq8#mLr2Tz9w@wandb.internal.corp/api")
    assert gone("Vq8#mLr2Tz9w", out)


@pytest.mark.parametrize(
    "text",
    [
        "登录接口 PUT /v2/login，传 mobile 和验证码",
        "the sign-in call is GET /auth/callback and it returns a cookie",
    ],
)
def test_a_slash_that_opens_a_path_is_not_a_pair(text: str) -> None:
    assert redact(text) == (text, [])


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("the login is ops / Kq7pzW2m", "Kq7pzW2m"),
        ("账号 ops/Kq7pzW2m 登录后台", "Kq7pzW2m"),
    ],
)
def test_a_pair_around_its_slash_still_goes(text: str, secret: str) -> None:
    out, kinds = redact(text)
    assert gone(secret, out) and "password" in kinds


# ------------------------------------------------------------------ JWT header


def test_a_jwt_header_alone_is_public() -> None:
    header = b64url({"alg": "ES256", "typ": "JWT", "kid": "k-2031"})
    assert jwt_header_only(header)
    text = f"our access token always begins with {header} since that's the ES256 header"
    assert redact(text) == (text, [])


def test_a_payload_or_a_whole_jwt_is_not_a_header_alone() -> None:
    payload = b64url({"sub": "u-5521", "scope": "admin", "exp": 2061000000})
    assert not jwt_header_only(payload)
    header = b64url({"alg": "HS256", "typ": "JWT"})
    whole = f"{header}.{payload}.Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MGFiY2RlZg"
    assert not jwt_header_only(whole)
    out, kinds = redact(f"the session token is {whole}")
    assert gone(payload, out) and kinds


def test_a_header_with_a_parameter_no_header_registers_is_not_spared() -> None:
    assert not jwt_header_only(b64url({"alg": "HS256", "secret": "k"}))
    assert not jwt_header_only(b64url({"typ": "JWT"}))  # no alg: not a JOSE header


# ------------------------------------------------------------------ example files


def test_spelled_out_reads_words_not_generated_values() -> None:
    assert spelled_out("put-a-48-char-secret-here")
    assert spelled_out("FILL_ME_IN")
    assert not spelled_out("q8Zr2mVt7Kp")
    assert not spelled_out("hunter2")
    assert not spelled_out("a-b-c")  # no word of three letters


def test_a_spelled_out_value_in_an_example_file_is_a_placeholder() -> None:
    text = (
        "# config.sample.env (copy it and fill it in)\n"
        "SESSION_SECRET=put-a-48-char-secret-here\n"
        "MAIL_PASSWORD=ask-the-ops-channel"
    )
    assert redact(text) == (text, [])


def test_a_generated_value_in_an_example_file_is_still_caught() -> None:
    real = "x9Qm2Lr7Vt4Kp8Zs3Nw6"
    text = f"# .env.example\nSESSION_SECRET=put-a-48-char-secret-here\nMAIL_PASSWORD={real}"
    out, kinds = redact(text)
    assert gone(real, out) and kinds
    assert "put-a-48-char-secret-here" in out


def test_the_example_file_covers_its_block_only() -> None:
    text = "# .env.example\nA=1\n\n# .env (the real one)\nSESSION_SECRET=put-a-48-char-secret-here"
    assert not in_example_file(text, text.index("SESSION_SECRET"))
    assert in_example_file(text, text.index("A=1"))
    out, _ = redact(text)
    assert "put-a-48-char-secret-here" not in out


def test_an_example_file_named_in_another_text_redacted_with_it_does_not_cover_it() -> None:
    """The hook redacts a transcript's JSONL records joined by line breaks, and decoded texts
    joined by lines holding one quote: a file one text names is not the next text's file."""
    from memory.redact.carried import SEPARATOR, redact_groups

    named = "copy config.sample.env to config.env before the first run"
    real = "MAIL_PASSWORD=lantern-harbor-42"
    records = [json.dumps({"type": "user", "message": {"content": [{"type": "text", "text": t}]}}) for t in (named, real)]
    joined = "\n".join(records)
    assert not in_example_file(joined, joined.index("MAIL_PASSWORD"))
    assert "lantern-harbor-42" not in redact(joined)[0]
    together = named + SEPARATOR + real
    assert not in_example_file(together, together.index("MAIL_PASSWORD"))
    [[_], [out]], _kinds = redact_groups([[named], [real]])
    assert "lantern-harbor-42" not in out
    assert redact(real)[0] == "MAIL_PASSWORD=[REDACTED:password]"  # caught alone
    assert redact(named + "\n" + real) == (named + "\n" + real, [])  # one text: its own file


def test_a_host_named_example_is_not_an_example_file() -> None:
    text = "smtp host is mail.example.com\nMAIL_PASSWORD=ask-the-ops-channel"
    assert not in_example_file(text, text.index("MAIL_PASSWORD"))


# ------------------------------------------------------------------ namespaced keys


@pytest.mark.parametrize(
    "text",
    [
        "[store] hit key=thumb:v2:9c1e7a04b3d2f5e6a7c8d9e0f1a2b3c4d5e6f7a8 age=31s",
        "evicted key=feed:user:88213 after the deploy",
    ],
)
def test_a_key_of_namespace_parts_is_an_id(text: str) -> None:
    assert redact(text) == (text, [])


def test_a_key_with_one_part_or_a_credential_name_still_goes() -> None:
    out, kinds = redact("signing_key=rk:Vh3pQ9xT2mZ8wL5nK7bR4cY6")
    assert gone("Vh3pQ9xT2mZ8wL5nK7bR4cY6", out) and kinds
    out, kinds = redact("api_key=tenant:prod:Vh3pQ9xT2mZ8wL5nK7bR4cY6")
    assert gone("Vh3pQ9xT2mZ8wL5nK7bR4cY6", out) and kinds
