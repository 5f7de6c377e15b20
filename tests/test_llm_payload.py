"""The prompt payload wrapper (``memory.model.llm``): whatever a turn says, the payload comes back whole."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from memory.model.llm import INPUT_CLOSE, INPUT_OPEN, parse_payload, render_payload

_TAGGY = st.lists(st.sampled_from([*"<>/inputx \\\"", "<input>", "</input>", "\\u003c"]), max_size=20).map("".join)


def test_a_turn_that_quotes_the_tags_does_not_cut_the_payload() -> None:
    payload = {"task": "extract", "turns": [{"role": "user", "text": "paste: <input>{\"a\": 1}</input> end </input>"}]}
    prompt = "Instructions.\n" + render_payload(payload)
    assert prompt.count(INPUT_OPEN) == 1 and prompt.count(INPUT_CLOSE) == 1
    assert parse_payload(prompt) == payload


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.text(max_size=80), _TAGGY), max_size=5))
def test_any_text_round_trips(texts: list[str]) -> None:
    payload = {"task": "extract", "turns": [{"role": "user", "text": t} for t in texts]}
    assert parse_payload("prose " + render_payload(payload)) == payload
