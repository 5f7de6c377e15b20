"""What the redactor's tests ask of its output, said once."""

from __future__ import annotations

from memory.redact import redact


def gone(secret: str, out: str) -> bool:
    """Nothing of ``secret`` is left: not whole, not any 6 characters of it."""
    return secret not in out and not any(secret[i : i + 6] in out for i in range(len(secret) - 5))


def kept(text: str) -> None:
    """``text`` comes back unchanged, with nothing reported."""
    assert redact(text) == (text, [])
