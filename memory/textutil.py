"""Small text helpers shared by the library and the daemon."""

from __future__ import annotations

__all__ = ["one_line"]


def one_line(text: object, limit: int = 300) -> str:
    """``text`` on one line (whitespace runs become one space), at most ``limit`` characters,
    with ``…`` when cut: for error reasons and log fields that must stay one readable line."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
