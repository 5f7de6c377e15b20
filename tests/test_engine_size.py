"""The offline engine's size in tokens: the count issue 23's growth rule is read by."""

from __future__ import annotations

from pathlib import Path

from benchmarks import engine_size

ROOT = Path(__file__).resolve().parent.parent

# The engine's code tokens may not grow: main's count after the twelfth round (57,452 before
# it). A change that adds code to the engine pays for it elsewhere in the engine, and a round
# that shrinks it lowers this.
TOKEN_CEILING = 57_055


def test_layout_is_not_code() -> None:
    short = "def f(a, b):\n    # why\n    return (a +\n            b)\n"
    joined = "def f(a, b):\n    return (a + b)  # why\n"
    assert engine_size.code_tokens(short) == engine_size.code_tokens(joined) == 14


def test_engine_tokens_do_not_grow() -> None:
    measured = engine_size.measure(ROOT / "dreamd" / "models" / "offline")
    assert measured.files > 0
    assert measured.tokens <= TOKEN_CEILING, (
        f"the offline engine holds {measured.tokens:,} code tokens, over its ceiling of "
        f"{TOKEN_CEILING:,}: shrink it elsewhere by as much as it grew"
    )
