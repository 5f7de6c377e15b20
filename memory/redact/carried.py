"""Text carried in pieces or escaped: redacted as the text it is, put back where it was.

A transcript does not hold a text as one string. Claude Code splits a message into several
text blocks and a tool's output into several pieces, and a tool output that is itself JSON
holds a text JSON-escaped (``\\n`` for a line break, ``\\"`` for a quote, ``\\u7ed9``) inside
one of its string values. Redacting the file's lines as they are, the redactor saw a key block
as one line of ``\\n``-joined base64 and a value cut across two strings, and missed what it
removes from the same text said plainly (issue 22). Here each text is read as it was written:

* a *group* is the pieces of one text (the consecutive text blocks of a message, the pieces of
  a tool result), read joined end to end;
* every JSON string literal with an escape in it (``"…\\n…"``, one cut at the end of a tool
  output included) is read decoded as well, and so are the literals inside that, to
  :data:`DEPTH` levels;
* a span either reading finds is replaced in the pieces as they are: the marker goes in the
  piece where the span starts, the rest of the span is taken out of every piece it covers, and
  everything else (escapes included) is left byte for byte.

All groups go through one redactor pass, and all decoded literals through one more per level,
so a 30 MB session costs a scan or two, not one per string. The invariant
(``tests/test_hook_carriers.py``): whatever :func:`memory.redact.redact` removes from a text,
it is removed from that text however a transcript carries it.
"""

from __future__ import annotations

from bisect import bisect_right
from itertools import accumulate, repeat
from operator import add

from memory.redact.engine import MARKER, Lazy, Span, run

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

SEPARATOR = '\n"\n"\n"\n"\n"\n'
"""Between texts redacted together: no replacement spans a quote, and no detector reads a
value on the lines after its word this far."""
DEPTH = 3
"""Levels of JSON-in-JSON decoded (a tool result holding JSON holding an escaped file)."""

_LITERAL = Lazy(r'"([^"\\]*(?:\\.[^"\\]*)*)("|\Z)', 0x10)  # re.DOTALL
"""A JSON string literal, or one running to the end of the text (a cut tool output)."""
_ESCAPE = Lazy(r'\\(?:u([0-9a-fA-F]{4})(?:\\u([dD][c-fC-F][0-9a-fA-F]{2}))?|(["\\/bfnrt]))')
_SIMPLE = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


class _Decoded:
    """A literal's body decoded, and where each decoded offset lies in the body."""

    __slots__ = ("at", "decoded", "segments", "starts")

    def __init__(self, decoded: str, segments: list[tuple[int, int, int, int]], at: int) -> None:
        self.decoded = decoded
        self.segments = segments  # (decoded start, decoded length, body start, body length)
        self.starts = [segment[0] for segment in segments]
        self.at = at  # the body's offset in its text

    def to_text(self, pos: int, *, end: bool) -> int:
        """A decoded offset as an offset of the escaped text (an escape is taken whole)."""
        i = bisect_right(self.starts, pos - 1 if end else pos) - 1
        if i < 0:
            return self.at
        d_start, d_len, b_start, b_len = self.segments[i]
        if d_len == b_len:  # plain characters
            return self.at + b_start + min(pos - d_start, d_len)
        return self.at + b_start + (b_len if end else 0)


def _decode(body: str, at: int, closed: bool) -> _Decoded | None:
    """``body`` of a JSON string literal decoded with its offsets; None when it is not one
    (``\\d`` of a regex). A literal cut at the text's end loses a half-written last escape."""
    out: list[str] = []
    segments: list[tuple[int, int, int, int]] = []
    size = last = 0
    for m in _ESCAPE.finditer(body):
        if "\\" in body[last : m.start()]:
            return None
        if m.start() > last:
            segments.append((size, m.start() - last, last, m.start() - last))
            out.append(body[last : m.start()])
            size += m.start() - last
        if m.group(3) is not None:
            char = _SIMPLE[m.group(3)]
        elif m.group(2) is not None and 0xD800 <= int(m.group(1), 16) < 0xDC00:
            high, low = int(m.group(1), 16), int(m.group(2), 16)
            char = chr(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))
        else:
            if m.group(2) is not None:  # not a pair: the second escape is read on its own
                char = chr(int(m.group(1), 16))
                segments.append((size, 1, m.start(), 6))
                out.append(char)
                size += 1
                segments.append((size, 1, m.start() + 6, 6))
                out.append(chr(int(m.group(2), 16)))
                size += 1
                last = m.end()
                continue
            char = chr(int(m.group(1), 16))
        segments.append((size, 1, m.start(), m.end() - m.start()))
        out.append(char)
        size += 1
        last = m.end()
    rest = body[last:]
    if "\\" in rest:
        if closed or len(rest) - rest.index("\\") > 6:
            return None
        rest = rest[: rest.index("\\")]  # cut inside an escape
    if rest:
        segments.append((size, len(rest), last, len(rest)))
        out.append(rest)
    return _Decoded("".join(out), segments, at)


def _literals(text: str) -> list[_Decoded]:
    """The escaped JSON string literals of ``text``, decoded."""
    found: list[_Decoded] = []
    for m in _LITERAL.finditer(text):
        body = m.group(1)
        if "\\" in body:
            decoded = _decode(body, m.start(1), bool(m.group(2)))
            if decoded is not None:
                found.append(decoded)
    return found


def _offsets(texts: Sequence[str]) -> list[int]:
    """Where each text starts in ``SEPARATOR.join(texts)`` (computed in C: a session holds
    thousands of texts and most of them hold nothing to look at)."""
    return list(accumulate(map(add, map(len, texts), repeat(len(SEPARATOR))), initial=0))


def _spans_of(texts: Sequence[str], depth: int) -> tuple[dict[int, list[Span]], list[str]]:
    """For each text the redactor finds something in, as it is or in its escaped literals
    decoded (to ``depth`` levels), the spans in the text's own offsets (by the text's index);
    and the kinds found. Only the texts with a span or a backslash cost a step of their own."""
    located: list[Span] = []
    from memory.redact import DETECTORS

    joined = SEPARATOR.join(texts)
    _out, kinds = run(joined, DETECTORS, None, located)
    spans: dict[int, list[Span]] = {}
    escaped = depth > 0 and "\\" in joined
    if not located and not escaped:
        return spans, kinds
    starts = _offsets(texts)
    if located:
        located.sort()
        for s, e, kind in located:
            i = bisect_right(starts, s) - 1
            base = starts[i]
            spans.setdefault(i, []).append((s - base, min(e - base, len(texts[i])), kind))
    if escaped:
        owners: list[int] = []
        literals: list[_Decoded] = []
        at = joined.find("\\")
        while at >= 0:  # each text with a backslash, once
            i = bisect_right(starts, at) - 1
            for lit in _literals(texts[i]):
                owners.append(i)
                literals.append(lit)
            at = joined.find("\\", starts[i + 1])
        if literals:
            inner, more = _spans_of([lit.decoded for lit in literals], depth - 1)
            kinds += [k for k in more if k not in kinds]
            for j, found in sorted(inner.items()):
                lit = literals[j]
                spans.setdefault(owners[j], []).extend(
                    (lit.to_text(s, end=False), lit.to_text(e, end=True), k) for s, e, k in found
                )
    return spans, kinds


def _merged(spans: list[Span]) -> list[Span]:
    out: list[Span] = []
    for s, e, kind in sorted(spans):
        if out and s < out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], e), out[-1][2])
        elif e > s:
            out.append((s, e, kind))
    return out


def apply_spans(pieces: Sequence[str], spans: list[Span]) -> list[str]:
    """``pieces`` with the spans (offsets of their joined text) replaced: the marker in the
    piece where a span starts, the rest of it taken out of every piece it covers."""
    out: list[str] = []
    at = 0
    for piece in pieces:
        end = at + len(piece)
        cuts = [(max(s, at), min(e, end), k, s >= at) for s, e, k in spans if s < end and e > at]
        if not cuts:
            out.append(piece)
        else:
            parts: list[str] = []
            last = at
            for s, e, kind, starts_here in cuts:
                parts.append(piece[last - at : s - at])
                if starts_here:
                    parts.append(MARKER.format(kind=kind))
                last = e
            parts.append(piece[last - at :])
            out.append("".join(parts))
        at = end
    return out


def find_spans(texts: Sequence[str]) -> tuple[dict[int, list[Span]], list[str]]:
    """The spans to replace in each text, read as it is and with its escaped literals decoded
    (module docstring), merged, by the index of the text; texts with none are left out. And
    the kinds found."""
    spans, kinds = _spans_of(texts, DEPTH)
    return {i: _merged(found) for i, found in spans.items()}, kinds


def redact_groups(groups: Sequence[Sequence[str]]) -> tuple[list[list[str]], list[str]]:
    """Each group's pieces redacted as the one text they make, read as it is and with its
    escaped literals decoded (module docstring); the kinds found. Pieces and groups are never
    merged: the caller puts each piece back where it came from."""
    found, kinds = find_spans(["".join(group) for group in groups])
    out = [
        apply_spans(group, found[i]) if i in found else list(group)
        for i, group in enumerate(groups)
    ]
    return out, kinds


def redact_carried(text: str) -> tuple[str, list[str]]:
    """One text redacted as it is and with its escaped JSON literals decoded."""
    [[out]], kinds = redact_groups([[text]])
    return out, kinds


__all__ = ["DEPTH", "SEPARATOR", "apply_spans", "find_spans", "redact_carried", "redact_groups"]
