"""memory.redact.carried: a text in pieces or JSON-escaped is redacted as the text it is."""

from __future__ import annotations

import json

from memory.redact import redact
from memory.redact.carried import redact_carried, redact_groups
from memory.redact.engine import MARKER, run

KEY = (
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7yPqW2mB9xQeVt4hLk0sZc8nR3uJfYd6aGb1oXwTe5Hs\n"
    "Qm2Lp8vKc4Nj7Rt0Yw3Ux6Zb9Fh1Dg5Ea2Cs8Vk4Mn7Pq0Lt3Jr6Wy9Xz2Bv5\n-----END RSA PRIVATE KEY-----"
)
SAID = "the password for the admin user is hunter2Secret! so keep it out of the wiki"


def test_located_spans_rebuild_the_redacted_text() -> None:
    from memory.redact import DETECTORS

    text = f"{SAID}\nDB_PASSWORD=Wq4Harbor9Fern\n{KEY}\n密码为 Xk29dLq8z。"
    located: list[tuple[int, int, str]] = []
    out, _kinds = run(text, DETECTORS, None, located)
    rebuilt, last = [], 0
    for start, end, kind in sorted(located):
        rebuilt += [text[last:start], MARKER.format(kind=kind)]
        last = end
    assert "".join([*rebuilt, text[last:]]) == out


def test_pieces_are_read_joined_and_each_keeps_its_place() -> None:
    pieces = [SAID[:40], SAID[40:50], SAID[50:]]  # the value cut in the middle
    assert all("hunter2Secret!" not in p for p in pieces)
    [out], kinds = redact_groups([pieces])
    assert kinds == ["password"] and len(out) == 3
    assert "".join(out) == redact(SAID)[0]


def test_an_escaped_key_block_is_read_decoded_and_only_it_is_replaced() -> None:
    carried = json.dumps({"stdout": KEY, "exit_code": 0})
    out, kinds = redact_carried(carried)
    assert "private-key" in kinds and "MIIEow" not in out
    assert json.loads(out) == {"stdout": "[REDACTED:private-key]", "exit_code": 0}


def test_json_in_json_and_unicode_escapes_are_decoded_level_by_level() -> None:
    said = "数据库的密码为 Xk29dLq8z，别告诉别人。"
    twice = json.dumps({"result": json.dumps({"note": said})})  # \\u escapes inside a string
    out, _kinds = redact_carried(twice)
    assert json.loads(json.loads(out)["result"]) == {"note": redact(said)[0]}


def test_a_literal_cut_at_the_text_end_is_read_up_to_its_last_whole_escape() -> None:
    carried = json.dumps({"stdout": KEY})[:-60] + "\\u00"  # a tool output cut at 1,024 characters
    out, _kinds = redact_carried(carried)
    assert "MIIEow" not in out and "[REDACTED:private-key]" in out


def test_text_without_a_secret_comes_back_unchanged_and_redacting_twice_changes_nothing() -> None:
    plain = [
        json.dumps({"sha": "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b", "path": "C:\\tmp\\x"}),
        "ok",
    ]
    assert redact_groups([plain]) == ([plain], [])
    once, _ = redact_groups([[json.dumps({"stdout": KEY})], [SAID[:30], SAID[30:]]])
    assert redact_groups(once)[0] == once
