"""The redaction loop: detectors find spans, each span becomes ``[REDACTED:<kind>]``.

A detector is a function over :class:`Anchors` returning ``(start, end, kind)`` spans of the
current text. Detectors run in a fixed order (``memory.redact.DETECTORS``); after one that found
something the text is rebuilt and the next one sees the markers, never the secret. A marker
carries no part of the value, and no detector matches a marker, so redacting twice changes
nothing.

Anchors are lower-case literals that any match contains, declared with :func:`register`; one
pass finds all of them (:class:`Anchors`) and detectors only look near those positions: no
regex scans the whole text, which keeps a 3 MB transcript on the hook's budget.
"""

from __future__ import annotations

import _sre  # type: ignore[import-not-found]
import re
import sys
from bisect import bisect_left

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence
    from pathlib import Path

MARKER = "[REDACTED:{kind}]"


class Lazy:
    """A regex compiled on first use: compiling all of them cost ~25 ms of CPU per hook
    process, and a Stop hook on one appended turn meets few of their anchors."""

    __slots__ = ("_compiled", "flags", "pattern")

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.pattern = pattern
        self.flags = flags
        self._compiled: re.Pattern[str] | None = None
        MADE.append(self)

    @property
    def rx(self) -> re.Pattern[str]:
        if self._compiled is None:
            self._compiled = compile_pattern(self.pattern, self.flags)
        return self._compiled

    def match(self, text: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self.rx.match(text, pos, endpos)

    def search(self, text: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self.rx.search(text, pos, endpos)

    def finditer(
        self, text: str, pos: int = 0, endpos: int = sys.maxsize
    ) -> Iterator[re.Match[str]]:
        return self.rx.finditer(text, pos, endpos)

    def split(self, text: str) -> list[str]:
        return [part for part in self.rx.split(text) if part is not None]


MADE: list[Lazy] = []
"""Every :class:`Lazy` made (the detectors make theirs at import): what a code file written
ahead of the first hook holds (:mod:`memory.redact.saved`)."""


CodeEntry = tuple[int, list[int], int, dict[str, int], tuple[str | None, ...]]
"""What ``re`` makes of a pattern: its final flags, its SRE code, the number of groups, the
group names by index and the reverse."""

_CODE: dict[tuple[str, int], CodeEntry] = {}
"""Compiled code by ``(pattern, flags)``: loaded from a :func:`load_code` file, and every
pattern this process compiled (what :func:`save_code` writes when something was new)."""
_CODE_STATE = {"new": 0}
_CODE_USED: set[tuple[str, int]] = set()
MAX_CODE = 1024
"""Patterns a code file keeps at most (the redactor has a few hundred; older versions' ones
go when it would pass this)."""

CODE_TAG = f"{sys.implementation.cache_tag}-{getattr(_sre, 'MAGIC', 0)}-{_sre.CODESIZE}"
"""The interpreter a code file is for (its name carries it): SRE code from another CPython
version is never read."""


def _compile_recording(pattern: str, flags: int) -> re.Pattern[str]:
    """``re.compile`` as CPython 3.11+ does it (``re._compiler.compile``), keeping the code."""
    compiled: re.Pattern[str]
    try:
        from re import _compiler, _parser  # type: ignore[attr-defined]

        parsed = _parser.parse(pattern, flags)
        groupindex = dict(parsed.state.groupdict)
        indexgroup: list[str | None] = [None] * parsed.state.groups
        for name, index in groupindex.items():
            indexgroup[index] = name
        entry: CodeEntry = (  # the opcodes are int subclasses: plain ints only when saved
            int(flags | parsed.state.flags),
            _compiler._code(parsed, flags),
            parsed.state.groups - 1,
            groupindex,
            tuple(indexgroup),
        )
        compiled = _sre.compile(pattern, *entry)
    except Exception:  # another interpreter's internals: compiled as usual, not kept
        return re.compile(pattern, flags)
    key = (pattern, int(flags))
    _CODE[key] = entry
    _CODE_USED.add(key)
    _CODE_STATE["new"] += 1
    return compiled


def compile_pattern(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """``re.compile(pattern, flags)``, from the code of a :func:`load_code` file when it holds
    the pattern: CPython compiles a pattern in Python (``re._parser``, ``re._compiler``), and
    the ~100 the hook meets on a long session were ~12 % of a cold Stop's instructions (a CJK
    range sets every code point of it one by one). ``_sre.compile`` checks the code it is
    given (an invalid one raises), and an entry it refuses is compiled afresh; the pattern
    made is the one ``re.compile`` makes (``tests/test_redact_code.py`` compares them with
    ``==``, which compares flags and code)."""
    key = (pattern, int(flags))
    entry = _CODE.get(key)
    if entry is not None:
        try:
            compiled: re.Pattern[str] = _sre.compile(pattern, *entry)
        except Exception:
            del _CODE[key]
        else:
            _CODE_USED.add(key)
            return compiled
    return _compile_recording(pattern, flags)


def code_path(folder: Path) -> Path:
    """The code file for this interpreter (:data:`CODE_TAG`) in ``folder``."""
    return folder / f"{CODE_TAG}.marshal"


def read_code(path: Path) -> object:
    """What the code file ``path`` holds, unmarshalled; raises OSError (missing, unreadable) or
    ValueError, EOFError, TypeError (not marshal data)."""
    import marshal

    return marshal.loads(path.read_bytes())


def load_code(path: Path) -> None:
    """Take the compiled patterns of ``path`` (written by :func:`save_code` for
    :data:`CODE_TAG`); a missing or unreadable file is no error (patterns compile as usual)."""
    try:
        loaded = read_code(path)
    except (OSError, ValueError, EOFError, TypeError):
        return
    if isinstance(loaded, dict):
        for key, entry in loaded.items():
            _CODE.setdefault(key, entry)


def save_code(path: Path, *, force: bool = False) -> bool:
    """Write every compiled pattern this process holds to ``path`` when one was compiled
    since the last load or save, or ``force`` (atomic, not fsynced: a lost file is rebuilt);
    whether it wrote. Up to :data:`MAX_CODE` patterns: past that, the ones of this process
    only."""
    if not _CODE_STATE["new"] and not force:
        return False
    import marshal

    from memory.fsutil import replace_atomic

    held = dict(_CODE)  # a copy: a daemon's worker thread may compile meanwhile
    keys = held if len(held) <= MAX_CODE else set(_CODE_USED) & held.keys()
    kept = {}
    for key in keys:
        flags, code, groups, groupindex, indexgroup = held[key]
        kept[key] = (flags, list(map(int, code)), groups, groupindex, indexgroup)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    replace_atomic(path, marshal.dumps(kept), mode=0o600, sync_dir=False, durable=False)
    _CODE_STATE["new"] = 0
    return True


Span = tuple[int, int, str]


_REGISTERED: dict[str, int] = {}
_DECLARED: set[tuple[str, ...]] = set()
"""Anchor tuples already checked against :data:`_REGISTERED` (detectors pass constants)."""
_AUTOMATON: list[object] = []


def register(*anchors: str) -> tuple[str, ...]:
    """Declare anchors a detector will ask for (at import time); returns them."""
    for anchor in anchors:
        if anchor not in _REGISTERED:
            _REGISTERED[anchor] = len(_REGISTERED)
            _AUTOMATON.clear()
    return anchors


def _automaton() -> tuple[object, list[str]]:
    if not _AUTOMATON:
        import ahocorasick_rs

        names = list(_REGISTERED)
        # a DFA: ~0.7 ms to build, and with ~160 anchors it searches 3 MB in half the time the
        # default (an NFA) takes
        automaton = ahocorasick_rs.BytesAhoCorasick(
            [a.encode("utf-8") for a in names], implementation=ahocorasick_rs.Implementation.DFA
        )
        _AUTOMATON.extend((automaton, names))
    return _AUTOMATON[0], _AUTOMATON[1]  # type: ignore[return-value]


def in_marker(text: str, pos: int) -> bool:
    """``pos`` is inside a ``[REDACTED:<kind>]`` marker: its kind names what was there, which
    some detectors take for context (an AWS marker next to an unlabelled secret key) and
    none may take for a credential word."""
    at = text.rfind("[REDACTED:", max(0, pos - 40), pos + 1)
    return at != -1 and text.find("]", at, pos) == -1


class Anchors:
    """Where the registered anchors occur in one text, all found in one pass.

    One Aho-Corasick pass (``ahocorasick_rs``, in Rust) over the UTF-8 bytes, ASCII-lowered,
    finds every anchor in every casing: ``str.find`` per anchor cost ~2.5 ms per anchor on a
    3 MB transcript, which sixty anchors could not afford. Byte offsets are character offsets
    for ASCII text; otherwise they are converted in one walk over the hits.
    """

    __slots__ = ("_hits", "text")

    def __init__(self, text: str) -> None:
        self.reset(text)

    def reset(self, text: str) -> None:
        self.text = text
        self._hits: dict[str, list[int]] | None = None

    def positions(self, anchors: Sequence[str]) -> list[int]:
        """Where any of ``anchors`` occurs, sorted, each position once. Most calls (one per
        pattern of every detector, for every text) find nothing: that case costs a dictionary
        look-up per anchor, and one anchor's hits are already in order."""
        key = anchors if isinstance(anchors, tuple) else tuple(anchors)
        if key not in _DECLARED:
            if any(a not in _REGISTERED for a in key):  # not declared: found all the same
                register(*key)
                self._hits = None
            _DECLARED.add(key)
        hits = self._hits if self._hits is not None else self._scan()
        lists = [hits[a] for a in anchors if a in hits]
        if not lists:
            return []
        if len(lists) == 1:
            return list(lists[0])
        return sorted({p for found in lists for p in found})

    def _scan(self) -> dict[str, list[int]]:
        automaton, names = _automaton()
        text = self.text
        data = text.encode("utf-8", "surrogatepass").lower()
        matches = automaton.find_matches_as_indexes(data, overlapping=True)  # type: ignore[attr-defined]
        hits: dict[str, list[int]] = {}
        if len(data) == len(text):
            for index, start, _end in matches:
                hits.setdefault(names[index], []).append(start)
        else:
            byte_at, char_at = 0, 0
            for index, start, _end in sorted(matches, key=lambda m: m[1]):
                char_at += len(data[byte_at:start].decode("utf-8", "surrogatepass"))
                byte_at = start
                hits.setdefault(names[index], []).append(char_at)
        self._hits = hits
        return hits


Mark = tuple[int, int, int, int, str]
"""A marker in the current text, ``(start, end)``, the span of the original it replaced and
its kind."""


def _to_origin(marks: list[Mark], pos: int, *, end: bool) -> int:
    """``pos`` of the current text in the original's coordinates; inside a marker, the start
    (or, for an ``end``, the end) of what it replaced."""
    shift = 0
    for start, stop, o_start, o_end, _kind in marks:
        if stop <= pos:
            shift = o_end - stop
        elif start < pos:
            return o_end if end else o_start
        else:
            break
    return pos + shift


MARKER_RE = Lazy(r"\[REDACTED:[a-z0-9-]+\]")
"""A marker as :data:`MARKER` writes it."""


def _outside_markers(markers: list[tuple[int, int]], starts: list[int], start: int, end: int) -> tuple[int, int]:
    """A span cut back to whole markers (``markers`` in order, ``starts`` their starts): one
    that starts or ends inside a marker (a detector reading ``[REDACTED:password]@host`` as a
    URL's user and password) would leave half a marker, ``[REDACTED:[REDACTED:password]``. A
    span taking a whole marker in is kept."""
    i = bisect_left(starts, start) - 1  # the one marker that can hold ``start``
    if i >= 0 and start < markers[i][1]:
        start = markers[i][1]
    i = bisect_left(starts, end) - 1
    if i >= 0 and end < markers[i][1]:
        end = markers[i][0]
    return start, end


def _rebuild(
    anchors: Anchors,
    spans: list[Span],
    kinds: list[str],
    values: list[tuple[str, str]] | None,
    marks: list[Mark] | None = None,
) -> None:
    text = anchors.text
    pieces: list[str] = []
    last = 0
    size = 0  # of the new text so far
    new_marks: list[Mark] = []
    old = iter(marks or ())
    pending = next(old, None)
    inside = [m.span() for m in MARKER_RE.finditer(text)] if "[REDACTED:" in text else []
    starts = [m[0] for m in inside]
    for start, end, kind in sorted(spans, key=lambda s: (s[0], -s[1])):
        if inside:
            start, end = _outside_markers(inside, starts, start, end)
        if start < last or end <= start:
            continue
        marker = MARKER.format(kind=kind)
        if marks is not None:
            while pending is not None and pending[0] < start:  # kept before this span
                if pending[1] <= start:
                    shift = size + (pending[0] - last)
                    new_marks.append((shift, shift + pending[1] - pending[0], *pending[2:]))
                pending = next(old, None)
            while pending is not None and pending[0] < end:  # taken into this span
                pending = next(old, None)
            origin = (_to_origin(marks, start, end=False), _to_origin(marks, end, end=True))
            at = size + start - last
            new_marks.append((at, at + len(marker), *origin, kind))
        pieces.append(text[last:start])
        pieces.append(marker)
        size += start - last + len(marker)
        if values is not None:
            values.append((text[start:end], kind))
        last = end
        if kind not in kinds:
            kinds.append(kind)
    pieces.append(text[last:])
    if marks is not None:
        while pending is not None:
            if pending[0] >= last:
                shift = size + (pending[0] - last)
                new_marks.append((shift, shift + pending[1] - pending[0], *pending[2:]))
            pending = next(old, None)
        marks[:] = new_marks
    anchors.reset("".join(pieces))


def run(
    text: str,
    detectors: Sequence[Callable[[Anchors], list[Span]]],
    values: list[tuple[str, str]] | None = None,
    located: list[Span] | None = None,
) -> tuple[str, list[str]]:
    """``text`` with every span the detectors find replaced, and the kinds found (in order).

    ``values``, when given, receives ``(replaced substring, kind)`` pairs (for the name and
    fragment checks; never logged or written). ``located``, when given, receives the spans
    replaced as ``(start, end, kind)`` of ``text`` itself, in order (a detector that runs
    after another sees its markers; a span that takes a marker in covers what it replaced):
    for a text made of pieces carried apart, which :mod:`memory.redact.carried` puts back.
    """
    kinds: list[str] = []
    anchors = Anchors(text)
    found: list[tuple[str, str]] = []
    marks: list[Mark] | None = [] if located is not None else None
    for detect in detectors:
        spans = detect(anchors)
        if spans:
            _rebuild(anchors, spans, kinds, found, marks)
    if found:
        again = repeated_values(anchors.text, found)
        if again:
            _rebuild(anchors, again, kinds, None, marks)
    if values is not None:
        values.extend(found)
    if located is not None and marks:
        located.extend((o_start, o_end, kind) for _s, _e, o_start, o_end, kind in marks)
    return anchors.text, kinds


REPEAT_MIN = 6
"""A value found as a secret this long or longer goes at every other place it occurs."""


def repeated_values(text: str, found: Sequence[tuple[str, str]]) -> list[Span]:
    """Spans of ``text`` where a value already found as a secret (``(value, kind)`` pairs,
    as :func:`run` collects them) occurs again.

    A password said once after its word ("the password is Xq7!bt2kk") is no less a secret
    where it is repeated without one ("I typed Xq7!bt2kk and it worked"): what one detector
    proved about the value holds for the whole text. A value shorter than
    :data:`REPEAT_MIN` is not looked for, one under eight characters only as a token of its
    own (not inside a longer word). Linear in the text per distinct value."""
    spans: list[Span] = []
    seen: set[str] = set()
    for value, kind in found:
        value = value.strip()
        if len(value) < REPEAT_MIN or value in seen:
            continue
        seen.add(value)
        bounded = len(value) < 8
        at = text.find(value)
        while at != -1:
            end = at + len(value)
            inside = bounded and (
                (at > 0 and text[at - 1].isalnum()) or (end < len(text) and text[end].isalnum())
            )
            if not inside and not in_marker(text, at):
                spans.append((at, end, kind))
            at = text.find(value, end)
    return spans
