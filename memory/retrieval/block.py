"""The ``<relevant_memories>`` block: capping record text and rendering it (DESIGN §7).

Split from :mod:`memory.retrieval.recall` so that ``dreamd hook`` can answer ``UserPromptSubmit`` with
exactly the block ``recall`` renders (and ``SessionStart`` with the same bounded index) while
importing only ``re``: the hook runs at every prompt, and the store (YAML, filelock,
dataclasses) would triple its start-up time.
"""

from __future__ import annotations

import re
from pathlib import Path

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs the hook ~10 ms
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Protocol

    class Shown(Protocol):
        """What a rendered record needs (``memory.retrieval.recall.RecalledRecord`` has it)."""

        @property
        def name(self) -> str: ...
        @property
        def type(self) -> str: ...
        @property
        def description(self) -> str: ...
        @property
        def file(self) -> str: ...
        @property
        def text(self) -> str: ...


_TAG_RE = re.compile(r"<(?=/?\s*(?:memory|relevant_memories)\b)", re.IGNORECASE)


def _neutralise(text: str) -> str:
    """Stop record text from opening or closing our elements (``<memory``, ``</memory``,
    ``<relevant_memories``…); all other text, code with ``<`` included, stays readable."""
    return _TAG_RE.sub("&lt;", text)


def _attr(value: str) -> str:
    return (
        value.replace("&", "&amp;")
        .replace('"', "&quot;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace("\n", " ")
    )


def truncation_note(path: str) -> str:
    return f"[… truncated; full record: {path}]"


def cap_text(body: str, *, path: str, max_lines: int, max_bytes: int) -> tuple[str, bool]:
    """``body`` cut to ``max_lines`` lines and ``max_bytes`` UTF-8 bytes, note included.

    Cuts at a line boundary when one lies in the second half of the allowance, else at a
    character boundary (never inside a UTF-8 sequence). Returns (text, truncated).
    """
    text = body.rstrip("\n")
    lines = text.split("\n") if text else []
    if len(lines) <= max_lines and len(text.encode("utf-8")) <= max_bytes:
        return text, False
    note = truncation_note(path)
    keep_lines = max(0, max_lines - 1)
    head = "\n".join(lines[:keep_lines])
    allowance = max(0, max_bytes - len(note.encode("utf-8")) - 1)
    data = head.encode("utf-8")
    if len(data) > allowance:
        cut = data[:allowance]
        newline = cut.rfind(b"\n")
        if newline >= allowance // 2:
            cut = cut[:newline]
        head = cut.decode("utf-8", errors="ignore")
    head = head.rstrip()
    return (head + "\n" + note) if head else note, True


def body_problem(text: str, path: str | Path) -> str | None:
    """One line naming ``path`` when ``text`` (its content, decoded with replacement) is not
    text to put in a model's context (:func:`memory.fsutil.text_problem`), else None. The one
    check for MEMORY.md and record bodies, wherever they reach a model: the hook's context,
    ``memory.recall`` and the MCP server."""
    from memory.fsutil import printable, text_problem

    problem = text_problem(text)
    return None if problem is None else f"{printable(path)}: {problem}; not put in the model's context"


def render_element(rec: Shown) -> str:
    """One ``<memory>`` element: description line, blank line, capped body."""
    inner = _neutralise(rec.description)
    if rec.text:
        inner += "\n\n" + _neutralise(rec.text)
    return (
        f'<memory name="{_attr(rec.name)}" type="{_attr(rec.type)}" file="{_attr(rec.file)}">\n'
        f"{inner}\n</memory>\n"
    )


def render_block(records: Sequence[Shown]) -> str:
    """The ``<relevant_memories>`` block for ``records``; "" when there are none."""
    if not records:
        return ""
    return (
        "<relevant_memories>\n"
        + "".join(render_element(r) for r in records)
        + "</relevant_memories>\n"
    )


def bounded_index(path: str | Path, *, max_lines: int, max_bytes: int) -> str:
    """The MEMORY.md at ``path`` ("" when there is none), bounded even when someone edited it
    by hand: at most ``max_lines`` lines and ``max_bytes`` bytes, cut at a line boundary.

    Only its first ``max_bytes`` are ever read, and only from a regular file: a MEMORY.md that
    is a symbolic link (to a private key, say), a FIFO or a directory raises UnsafeFileError
    naming it, and nothing of it reaches the model (DESIGN §2, "A directory is not trusted");
    so does one that is not text (NUL or control bytes, invalid UTF-8: :func:`body_problem`)."""
    from memory.fsutil import read_regular_or_none

    data = read_regular_or_none(path, max_bytes=max_bytes, oversize="truncate")
    if data is None:
        return ""
    text = data.decode("utf-8", errors="replace")
    problem = body_problem(text, path)
    if problem is not None:
        from memory.errors import UnsafeFileError

        raise UnsafeFileError(problem)
    lines = text.splitlines(keepends=True)[:max_lines]
    out = "".join(lines)
    encoded = out.encode("utf-8")
    if len(encoded) > max_bytes:
        cut = encoded[:max_bytes]
        newline = cut.rfind(b"\n")
        out = (cut[: newline + 1] if newline >= 0 else cut).decode("utf-8", errors="ignore")
    return out
