"""What ``dreamd hook`` sends of a Claude Code session file: what extraction reads, in parts.

A long session file is mostly bulk extraction never reads: ``progress`` records (subagent
streams), file-history snapshots, attachments, the ``toolUseResult`` copy of every tool
output, tool outputs themselves (extraction keeps one summary line of each), thinking blocks
and image data. Copying all of it made a 31 MB session a 34 MB job that ``max_job_bytes``
refused, and cost the hook most of its time. :func:`conversation_lines` keeps the ``user`` and
``assistant`` records (uuids, timestamps, session ids and flags intact) and shrinks only what
the parser reduces anyway, so parsing the kept lines gives the same turns as parsing the file.

It is cheap where the bytes are: a record's top-level ``type`` is read from the raw line when
it comes before any nested object (Claude Code writes it early for every bulky type), so
dropped records are never decoded; only large conversation records are.

:func:`split_parts` cuts the kept lines into parts under the job limit at turn boundaries
(before a ``user`` record, where the parser starts a new turn), greedily from the start: the
parts of a growing file keep their boundaries, so per-part extraction cursors stay valid.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import stat
from operator import getitem
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

CONVERSATION = (b"user", b"assistant")
TOOL_TEXT_KEEP = 1024
"""Characters of a tool output or tool input kept: enough for the one line extraction shows."""
_TYPE = b'"type":"'
_THINKING = ("thinking", "redacted_thinking", "reasoning")
_TOOL_USE = ("tool_use", "server_tool_use", "mcp_tool_use")
_MEDIA = ("image", "document", "file", "input_image", "input_file", "input_audio")


def _text_of(value: Any) -> str:
    from memory.transcripts import text_of

    return text_of(value)


KEEP_LOOKAHEAD = 256
"""Characters past :data:`TOOL_TEXT_KEEP` the redactor sees before a tool text is cut: a token
that starts before the cut is found whole (a private key block by its armour line)."""

_SEPARATOR = '\n"\n'
"""Between the tool texts redacted together: no replacement spans a quote (memory.redact)."""


class _Cuts:
    """Tool texts longer than :data:`TOOL_TEXT_KEEP`, redacted BEFORE they are cut.

    Cut first, a token starting near the end lost its tail, and the redactor no longer knew
    the 20-character head it left (issue 22). Each long text is held at the kept part and
    :data:`KEEP_LOOKAHEAD` more, and the last ``2 * KEEP_LOOKAHEAD`` characters of all of them
    (around the cut: tool outputs are most of a 30 MB session) are redacted in one pass when
    the records are done (one call per whole text cost a cold Stop 68 % more), then cut; a
    marker the cut would halve goes whole. The line's redaction does the rest.
    """

    def __init__(self) -> None:
        self.slots: list[tuple[Any, Any]] = []
        self.pieces: dict[int, list[int]] = {}
        """A tool result's content joined from several pieces: their lengths (by the block's
        id), so :meth:`_Texts.redact` reads them joined as they were written."""

    def put(self, container: Any, key: Any, text: str) -> None:
        if len(text) <= TOOL_TEXT_KEEP:
            container[key] = text
            return
        container[key] = text[: TOOL_TEXT_KEEP + KEEP_LOOKAHEAD]
        self.slots.append((container, key))

    def finish(self) -> None:
        if not self.slots:
            return
        from memory.redact import redact

        head = TOOL_TEXT_KEEP - KEEP_LOOKAHEAD
        # Only the end of each text needs it now: a secret wholly in the first part is found by
        # the redaction of the line, which sees it whole (one split by the window's start too).
        texts = [container[key][head:] for container, key in self.slots]
        out, kinds = redact(_SEPARATOR.join(texts))
        parts = out.split(_SEPARATOR) if kinds else texts
        if len(parts) != len(texts):  # a text held the separator: one by one instead
            parts = [redact(t)[0] for t in texts]
        for (container, key), tail in zip(self.slots, parts, strict=True):
            text = container[key][:head] + tail
            cut = text[:TOOL_TEXT_KEEP]
            marker = cut.rfind("[REDACTED:")
            container[key] = cut[:marker] if marker >= 0 and "]" not in cut[marker:] else cut
        self.slots = []


def _shrink_input(value: Any, cuts: _Cuts, slots: list[Any]) -> Any:
    """A tool input with every string held by ``cuts``, each one's place appended to
    ``slots`` (container, key: a text of its own, :class:`_Texts`)."""
    if isinstance(value, dict):
        out: dict[Any, Any] = {}
        for k, v in value.items():
            if isinstance(v, str):
                cuts.put(out, k, v)
                slots += (out, k)
            else:
                out[k] = _shrink_input(v, cuts, slots)
        return out
    if isinstance(value, list):
        items: list[Any] = [None] * min(len(value), 64)
        for i, v in enumerate(value[:64]):
            if isinstance(v, str):
                cuts.put(items, i, v)
                slots += (items, i)
            else:
                items[i] = _shrink_input(v, cuts, slots)
        return items
    return value


def _shrink_block(block: dict[str, Any], kind: Any, cuts: _Cuts) -> Any:
    """A block that is not text nor a tool's input (:func:`_minimal`) as extraction reads it."""
    if kind in _THINKING:
        return None
    if kind == "tool_result" or (isinstance(kind, str) and kind.endswith("_tool_result")):
        small = dict(block)
        content = block.get("content")
        pieces = [t for t in (_text_of(item) for item in content) if t] if isinstance(content, list) else []
        cuts.put(small, "content", "\n".join(pieces) if pieces else _text_of(content))
        if len(pieces) > 1:
            cuts.pieces[id(small)] = [len(t) for t in pieces]
        return small
    if kind in _MEDIA:
        return {"type": kind}
    return block


KEPT_KEYS = ("type", "uuid", "sessionId", "timestamp", "isSidechain", "isMeta", "isCompactSummary")
"""Top-level fields the Claude Code parser reads besides ``message``; the rest is bookkeeping."""
MESSAGE_KEYS = ("role", "id", "content")
_TEXT_BLOCK_KEYS = frozenset({"type", "text", "cache_control"})
_RESULT_BLOCK_KEYS = frozenset({"type", "tool_use_id", "content", "is_error", "cache_control"})


def _minimal(record: dict[str, Any], cuts: _Cuts, texts: _Texts) -> tuple[dict[str, Any], bool]:
    """The record with only what the parser reads, its texts registered in ``texts`` (one walk
    does both); and whether every string of it that is not an id, a type or a flag is one of
    those texts (a prompt, text blocks, a tool result's content), so that its line's
    redaction as JSON text would read nothing more. A tool input (its keys are context:
    ``{"password": …}``) or a block of any other shape is not."""
    out = {k: record[k] for k in KEPT_KEYS if k in record}
    message = record.get("message")
    if not isinstance(message, dict):
        if "message" in record:
            out["message"] = message
        return out, message is None
    slim = {k: message[k] for k in MESSAGE_KEYS if k in message}
    out["message"] = slim
    content = slim.get("content")
    slots = texts.slots
    if isinstance(content, str):
        slots += (slim, "content")
        return out, True
    if not isinstance(content, list):
        return out, content is None
    blocks: list[Any] = []
    slim["content"] = blocks
    run = -1  # the text of the text blocks in a row (its index), -1 when not in one
    whole = True
    for block in content:
        if not isinstance(block, dict):
            blocks.append(block)
            run, whole = -1, False
            if isinstance(block, str):
                slots += (blocks, len(blocks) - 1)
            continue
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str):
            blocks.append(block)
            if run < 0:
                run = len(slots) >> 1
                slots += (block, "text")
            else:
                texts.runs.setdefault(run, [slots[2 * run]]).append(block)
            if whole and len(block) != 2 and not block.keys() <= _TEXT_BLOCK_KEYS:
                whole = False
            continue
        if kind == "tool_result":  # the commonest other block, as :meth:`_Texts.block` reads it
            small = _shrink_block(block, kind, cuts)
            blocks.append(small)
            run = -1
            lengths = texts.pieces.get(id(small))
            if lengths:
                texts.joined[len(slots) >> 1] = lengths
            slots += (small, "content")
            if whole and not small.keys() <= _RESULT_BLOCK_KEYS:
                whole = False
            if small.get("input") is not None:
                texts.strings(small, "input")
            continue
        inputs: list[Any] | None = None
        if kind in _TOOL_USE:
            small = dict(block)
            raw = block.get("input")
            # a tool input's strings come after the block's content (:meth:`_Texts.block`)
            inputs = [] if "content" in block else slots
            if isinstance(raw, str):
                cuts.put(small, "input", raw)
                inputs += (small, "input")
            else:
                small["input"] = _shrink_input(raw, cuts, inputs)
        else:
            small = _shrink_block(block, kind, cuts)
            if small is None:
                continue
        blocks.append(small)
        run = -1
        if not texts.block(small, kind, whole) and whole:
            whole = False
        if inputs is None:
            if small.get("input") is not None:
                texts.strings(small, "input")
        elif inputs is not slots:
            slots += inputs
    return out, whole


class _Texts:
    """The texts of the kept records, each as the pieces it is carried in, registered while
    the records are shrunk: a message's consecutive text blocks together, a tool result's
    pieces together, each string of a tool input alone. A text is at a slot (container, key,
    in ``slots`` two by two), the first of its pieces for a run of text blocks (``runs``: all
    of them, by the text's index) or the pieces joined by line breaks for a tool result in
    pieces (``joined``: their lengths). The texts are read when all records are in and the
    long tool texts are cut (:class:`_Cuts`), and redacted in one go (:meth:`redact`); only
    those with something to replace cost more than a list entry (a 30 MB session holds
    thousands of them)."""

    __slots__ = ("joined", "pieces", "runs", "slots")

    def __init__(self, pieces: dict[int, list[int]]) -> None:
        self.slots: list[Any] = []
        self.runs: dict[int, list[dict[str, Any]]] = {}
        self.joined: dict[int, list[int]] = {}
        self.pieces = pieces

    def content(self, blocks: list[Any]) -> None:
        """Registers the texts of a list of blocks nested in a block (as :func:`_minimal`
        does for a message's content, nothing shrunk)."""
        slots = self.slots
        run = -1
        for i, block in enumerate(blocks):
            if not isinstance(block, dict):
                run = -1
                if isinstance(block, str):
                    slots += (blocks, i)
                continue
            kind = block.get("type")
            if kind == "text" and isinstance(block.get("text"), str):
                if run < 0:
                    run = len(slots) >> 1
                    slots += (block, "text")
                else:
                    self.runs.setdefault(run, [slots[2 * run]]).append(block)
                continue
            run = -1
            self.block(block, kind, False)
            if block.get("input") is not None:
                self.strings(block, "input")

    def block(self, block: dict[str, Any], kind: Any, whole: bool) -> bool:
        """Registers the texts of a block that is not a text block, but for its input's
        strings (the caller's); whether it holds no string but those texts, ids, types and
        flags (``whole``: False when the caller needs not know)."""
        inner = block.get("content")
        if isinstance(inner, str):
            if kind != "text":
                lengths = self.pieces.get(id(block))
                if lengths:
                    self.joined[len(self.slots) >> 1] = lengths
                self.slots += (block, "content")
            return whole and kind == "tool_result" and block.keys() <= _RESULT_BLOCK_KEYS
        if isinstance(inner, list):
            self.content(inner)
        return whole and kind in _MEDIA and len(block) == 1

    def strings(self, container: Any, key: Any) -> None:
        value = container[key]
        if isinstance(value, str):
            self.slots += (container, key)
        elif isinstance(value, dict):
            for k in value:
                self.strings(value, k)
        elif isinstance(value, list):
            for k in range(len(value)):
                self.strings(value, k)

    def _pieces(self, i: int, text: str) -> list[str]:
        """The pieces of text ``i`` (``text``: what its slot holds)."""
        if i in self.runs:
            return [block["text"] for block in self.runs[i]]
        if i in self.joined:
            return _split_joined(text, self.joined[i])
        return [text]

    def redact(self) -> None:
        """Every text redacted as the text it is (:mod:`memory.redact.carried`): decoded from
        the file's JSON, a message's consecutive text blocks and a tool result's pieces joined
        as they were written, JSON-escaped literals inside decoded; each replacement put back
        in the pieces it spans. The lines' own redaction after this reads the records as JSON
        (a tool input's ``"password": …``); together the hook removes at least what the
        redactor removes from the text itself."""
        slots = self.slots
        if not slots:
            return
        containers, keys = slots[0::2], slots[1::2]
        texts: list[str] = list(map(getitem, containers, keys))
        for i in (*self.runs, *self.joined):
            texts[i] = "".join(self._pieces(i, texts[i]))
        from memory.redact.carried import apply_spans, find_spans

        found, _kinds = find_spans(texts)
        for i, spans in found.items():
            container, key = containers[i], keys[i]
            before = self._pieces(i, container[key])
            after = apply_spans(before, spans)
            if after == before:
                continue
            if i in self.runs:
                for block, text in zip(self.runs[i], after, strict=True):
                    block["text"] = text
            else:
                container[key] = "\n".join(after)  # one piece, or a tool result's pieces


def _split_joined(text: str, lengths: list[int]) -> list[str]:
    """``text`` (pieces of these lengths joined by line breaks, maybe cut) as its pieces."""
    parts: list[str] = []
    at = 0
    for n in lengths:
        if at > len(text):
            break
        parts.append(text[at : at + n])
        at += n + 1
    return parts


FAST_JSON_BYTES = 1024 * 1024
"""From this much input on, orjson decodes and re-encodes the records: about twice as fast as
the stdlib, but importing it costs ~15 ms (it loads dataclasses), more than it saves on the
small transcripts most hooks see."""


def _stdlib_loads(raw: bytes) -> Any:
    return json.loads(raw)


def _stdlib_dumps(value: Any) -> bytes:
    """Compact UTF-8 JSON; a lone surrogate becomes "?"."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "replace")


def _fast_codec() -> tuple[Callable[[bytes], Any], Callable[[Any], bytes]]:
    """orjson, falling back to the stdlib for what orjson refuses and Python's ``json`` (the
    daemon's parser) accepts: lone surrogates, NaN, integers over 64 bits."""
    import orjson

    def loads(raw: bytes) -> Any:
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError:
            return json.loads(raw)

    def dumps(value: Any) -> bytes:
        try:
            return orjson.dumps(value)
        except (TypeError, orjson.JSONEncodeError):
            return _stdlib_dumps(value)

    return loads, dumps


def conversation_lines(
    data: bytes, begin: int = 0, stop: int | None = None, *, read: list[bool] | None = None
) -> list[tuple[bytes, bytes]]:
    """``(type, line)`` for the file's ``user``/``assistant`` records, rebuilt with only what
    the parser reads (module docstring), every text in them redacted as the text it is
    (:meth:`_Texts.redact`). Lines that are not JSON objects are dropped (the parser skips
    them too); records of other types are skipped without being decoded. Only
    ``data[begin:stop]`` is read (no copy of a 30 MB buffer is made to look at part of it).
    ``read``, when given, receives for each line whether all its strings were read as text
    (:func:`_minimal`), so that its redaction as JSON text can skip it.
    """
    kept: list[tuple[bytes, dict[str, Any]]] = []
    whole: list[bool] = []
    cuts = _Cuts()
    texts = _Texts(cuts.pieces)
    find = data.find
    pos, size = begin, len(data) if stop is None else stop
    loads, dumps = (
        _fast_codec() if size - begin >= FAST_JSON_BYTES else (_stdlib_loads, _stdlib_dumps)
    )
    while pos < size:
        end = find(b"\n", pos, size)
        if end < 0:
            end = size
        start, pos = pos, end + 1
        while start < end and data[start] in b" \t\r":
            start += 1
        if start >= end or data[start] != 0x7B:  # "{"
            continue
        at = find(_TYPE, start, end)
        if at >= 0 and find(b"{", start + 1, at) < 0 and find(b"[", start + 1, at) < 0:
            close = find(b'"', at + len(_TYPE), end)
            if data[at + len(_TYPE) : close] not in CONVERSATION:
                continue
        elif (
            at >= 0
            and find(b'"type":"user"', start, end) < 0
            and (find(b'"type":"assistant"', start, end) < 0)
        ):
            continue  # compact JSON whose top-level type is neither
        try:
            record = loads(data[start:end])
        except (ValueError, RecursionError):
            continue
        if not isinstance(record, dict) or record.get("type") not in ("user", "assistant"):
            continue
        minimal, all_read = _minimal(record, cuts, texts)
        kept.append((record["type"].encode(), minimal))
        whole.append(all_read)
    cuts.finish()
    texts.redact()
    if read is not None:
        read.extend(whole)
    return [(kind, dumps(minimal)) for kind, minimal in kept]


def escaped_size(line: bytes) -> int:
    """Bytes ``line`` takes inside a JSON string (quotes and backslashes escaped, plus \\n)."""
    return len(line) + line.count(b'"') + line.count(b"\\") + 2


def split_parts(lines: list[tuple[bytes, bytes]], budget: int) -> list[list[bytes]]:
    """``lines`` in order, cut before ``user`` records into parts of at most ``budget`` bytes.

    A single turn larger than ``budget`` becomes a part of its own (the spool then names the
    limit it broke); no line is ever dropped or reordered.
    """
    parts: list[list[bytes]] = []
    current: list[bytes] = []
    size = 0
    for kind, line in lines:
        cost = escaped_size(line)
        if current and size + cost > budget and kind == b"user":
            parts.append(current)
            current, size = [], 0
        current.append(line)
        size += cost
    if current:
        parts.append(current)
    return parts


# ----------------------------------------------------------------------------- the prefix cache

CACHE_CHECK_BYTES = 4096
MAX_CACHED = 64
MAX_READ_BYTES = 128 * 1024 * 1024
"""The most of a session file one hook call reads (what is new since the cached prefix)."""


def _redacted(
    lines: list[tuple[bytes, bytes]], read: list[bool] | None = None
) -> list[tuple[bytes, bytes]]:
    """The lines redacted as JSON text too (``memory.redact``), in one pass, but for those
    ``read`` says were read whole as text already (:func:`_minimal`): a tool input's
    ``"password": "…"`` is a credential only with its key.

    Redaction never spans a quote, so it never joins two JSONL records: the line count holds.
    A line the replacement left unparsable (a value read across a string's closing quote)
    gets :func:`_scrubbed` instead: the daemon's parser would skip it, turn and all.
    """
    which = [i for i in range(len(lines)) if read is None or not read[i]]
    if not which:
        return lines
    from memory.redact import redact

    text, kinds = redact(b"\n".join(lines[i][1] for i in which).decode("utf-8", "replace"))
    if not kinds:
        return lines
    redone = text.encode("utf-8", "replace").split(b"\n")
    if len(redone) != len(which):  # defensive: redact line by line instead
        redone = [redact(lines[i][1].decode("utf-8", "replace"))[0].encode() for i in which]
    out = list(lines)
    for i, after in zip(which, redone, strict=True):
        kind, before = lines[i]
        if after != before:
            try:
                _stdlib_loads(after)
            except (ValueError, RecursionError):
                after = _scrubbed(before)
            out[i] = (kind, after)
    return out


def _scrubbed(line: bytes) -> bytes:
    """``line`` with what its redaction as JSON text found taken out of its decoded strings:
    for a replacement that broke the line's JSON (a value read across a string's closing
    quote into the next block), which the daemon's parser would skip, turn and all."""
    from memory.redact import redact_found, scrub_fragments

    found = redact_found(line.decode("utf-8", "replace"))[2]
    values = []
    for value, kind in found:
        try:
            values.append((_stdlib_loads(b'"' + value.encode() + b'"'), kind))
        except (ValueError, RecursionError):
            values.append((value, kind))
        for part in value.replace("\\n", "\n").split("\\"):  # each side of an escape
            values.append((part, kind))

    def scrub(value: Any) -> Any:
        if isinstance(value, str):
            return scrub_fragments(value, values)[0]
        if isinstance(value, dict):
            return {k: scrub(v) for k, v in value.items()}
        if isinstance(value, list):
            return [scrub(v) for v in value]
        return value

    return _stdlib_dumps(scrub(_stdlib_loads(line)))


def _prompt_parts(record: Any) -> list[str] | None:
    """The text of a user prompt record as Claude Code writes it: its content a string (one
    part) or a list of ``{"type": "text", "text": …}`` parts (images or documents between
    them are skipped); None for anything else (a tool result, a line without text)."""
    message = record.get("message") if isinstance(record, dict) else None
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return None
    parts = []
    for block in content:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text" and isinstance(block.get("text"), str):
            parts.append(block["text"])
        elif kind not in _MEDIA:
            return None
    return parts or None


def _prompt(line: bytes) -> tuple[Any, list[str]] | None:
    """A user prompt line's record and the parts of its text (:func:`_prompt_parts`)."""
    try:
        record = _stdlib_loads(line)
    except (ValueError, RecursionError):
        return None
    parts = _prompt_parts(record)
    return None if parts is None else (record, parts)


def _replaced(parts: list[str], before: str, after: str) -> list[str]:
    """``parts`` (``before`` in pieces) made ``after``: what changed (between the longest
    common head and tail) goes in the part where it starts and is taken out of every part it
    covers, as :func:`memory.redact.carried.apply_spans` puts a marker back; the rest stays."""
    head = 0
    limit = min(len(before), len(after))
    while head < limit and before[head] == after[head]:
        head += 1
    tail = 0
    while tail < limit - head and before[-1 - tail] == after[-1 - tail]:
        tail += 1
    start, end, new = head, len(before) - tail, after[head : len(after) - tail]
    out: list[str] = []
    at = 0
    for i, part in enumerate(parts):
        stop = at + len(part)
        last = i == len(parts) - 1
        if stop < start or (stop == start and not last) or at > end:
            out.append(part)  # wholly before or after the change
        else:
            here = part[: max(0, start - at)] + (new if at <= start else "")
            out.append(here + part[max(0, end - at) :] if end <= stop else here)
        at = stop
    return out


def _across_turns(
    cached: list[tuple[bytes, bytes]], fresh: list[tuple[bytes, bytes]]
) -> list[tuple[bytes, bytes]]:
    """``fresh`` with a secret said across two of the user's prompts redacted in the second
    ("the rsync password is" in one prompt, the value alone in the next: each line, redacted
    alone, holds none), whether a prompt's content is a string or a list of text parts (its
    parts read joined end to end, the change put back in the parts it covers). The last
    cached prompt is the first of a pair when the session's next Stop brings the value;
    cached lines themselves are never rewritten."""
    prompts: list[tuple[int, Any, list[str]]] = []  # index in fresh (-1: cached), record, parts
    for kind, line in reversed(cached):
        if kind == b"user" and b"tool_result" not in line:
            found = _prompt(line)
            if found is not None:
                prompts.append((-1, *found))
                break
    for i, (kind, line) in enumerate(fresh):
        if kind == b"user" and b"tool_result" not in line:
            found = _prompt(line)
            if found is not None:
                prompts.append((i, *found))
    if len(prompts) < 2 or all(i < 0 for i, _r, _p in prompts[1:]):
        return fresh
    from memory.redact import redact_turns

    befores = ["".join(parts) for _i, _r, parts in prompts]
    texts = redact_turns(befores, redacted=True)
    out = list(fresh)
    for (i, record, parts), before, after in zip(prompts, befores, texts, strict=True):
        if i < 0 or after == before:
            continue
        message = record["message"]
        if isinstance(message["content"], str):
            message["content"] = after
        else:
            blocks = [b for b in message["content"] if isinstance(b, dict) and b.get("type") == "text"]
            for block, text in zip(blocks, _replaced(parts, before, after), strict=True):
                block["text"] = text
        out[i] = (out[i][0], _stdlib_dumps(record))
    return out


def _cache_file(cache_dir: Path, path: Path) -> Path:
    import zlib

    raw = os.fsencode(os.path.realpath(path))
    return cache_dir / f"{zlib.crc32(raw):08x}-{zlib.adler32(raw):08x}.cache"


def _check(data: bytes) -> str:
    import zlib

    return f"{zlib.crc32(data):08x}-{len(data)}"


def read_conversation(
    path: Path,
    cache_dir: Path | None,
    *,
    max_read: int = MAX_READ_BYTES,
    code_dir: Path | None = None,
) -> tuple[list[tuple[bytes, bytes]], dict[str, int]]:
    """The session file's conversation lines, redacted, and what it cost (bytes read, reused).

    Claude Code only appends to a session file, and the Stop hook runs after every turn: the
    lines of the prefix processed last time are kept in ``cache_dir`` (one file per session
    file, the same bytes a job carries) with the prefix's length and a checksum of its last
    4 KiB. When the file still starts with that prefix, only what was appended is read and
    decoded; otherwise (rewritten, truncated, another file under that name) all of it is.
    Raises FileNotFoundError when the file does not exist (yet).

    ``code_dir`` keeps the redactor's compiled patterns between hook processes
    (:func:`memory.redact.engine.load_code`), as bytecode keeps its modules: compiling them
    was ~12 % of a cold Stop's instructions. A file it cannot write costs the next call a
    compile, never this one's job.
    """
    code_file = _load_code(code_dir)
    cached: list[tuple[bytes, bytes]] = []
    offset = 0
    # O_NONBLOCK: a FIFO under the session's name must not hold the turn until the timeout.
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    with open(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        os.set_blocking(fd, True)
        cache = _cache_file(cache_dir, path) if cache_dir is not None else None
        if cache is not None:
            try:
                with open(cache, "rb") as c:
                    header = json.loads(c.readline())
                    body = c.read()
                prefix_end = int(header["offset"])
                if (header["dev"], header["ino"]) == (
                    st.st_dev,
                    st.st_ino,
                ) and st.st_size >= prefix_end:
                    f.seek(max(0, prefix_end - CACHE_CHECK_BYTES))
                    if _check(f.read(min(prefix_end, CACHE_CHECK_BYTES))) == header["check"]:
                        offset = prefix_end
                        cached = [
                            (b"user" if ln[:1] == b"u" else b"assistant", ln[2:])
                            for ln in body.split(b"\n")
                            if ln
                        ]
            except (OSError, ValueError, KeyError, TypeError):
                offset, cached = 0, []
        if st.st_size - offset > max_read:
            # Checked on fstat, before a byte is read: a 500 MB session would cost gigabytes and
            # most of the hook's timeout. A session that grows turn by turn is read a turn at a
            # time (the cache), so only a file that arrives this large at once meets this.
            raise OSError(
                errno.EFBIG,
                f"{st.st_size - offset} new bytes, over the {max_read}-byte limit the hook reads in one turn; "
                "not read",
                str(path),
            )
        f.seek(offset)
        data = f.read(max_read + 1)
    complete = data.rfind(b"\n") + 1
    read: list[bool] = []
    fresh = _redacted(conversation_lines(data, 0, complete, read=read), read)
    read = []
    tail = _redacted(conversation_lines(data, complete, read=read), read)
    fresh = _across_turns(cached, fresh)
    lines = cached + fresh
    if cache is not None and cache_dir is not None and complete:
        prefix_end = offset + complete
        check_from = max(0, complete - CACHE_CHECK_BYTES)
        if complete >= CACHE_CHECK_BYTES or offset == 0:
            check = _check(data[check_from:complete])
        else:  # the checked window reaches back into the cached prefix
            with open(path, "rb") as f:
                f.seek(max(0, prefix_end - CACHE_CHECK_BYTES))
                check = _check(f.read(min(prefix_end, CACHE_CHECK_BYTES)))
        header = {"dev": st.st_dev, "ino": st.st_ino, "offset": prefix_end, "check": check}
        body = json.dumps(header).encode() + b"\n" + b"".join((b"u " if k == b"user" else b"a ") + ln + b"\n" for k, ln in lines)
        try:  # a cache: a full disk costs the next call a full read, never this one's job
            write_cache(cache, body)
            _prune(cache_dir)
        except OSError:
            pass
    if code_file is not None:
        from memory.redact.engine import save_code

        with contextlib.suppress(OSError):
            save_code(code_file)
    return lines + tail, {"read_bytes": len(data), "reused_bytes": offset}


def _load_code(code_dir: Path | None) -> Path | None:
    """The redactor's compiled-pattern file in ``code_dir`` (one per interpreter), loaded."""
    if code_dir is None:
        return None
    from memory.redact.engine import code_path, load_code

    code_file = code_path(code_dir)
    load_code(code_file)
    return code_file


def write_cache(path: Path, data: bytes) -> None:
    """Replace the hook's cache file ``path`` (its folder made private when missing), atomic
    but not fsynced (a lost cache is rebuilt). A write that fails (a full disk) names ``path``
    and leaves no temp file behind (:func:`memory.fsutil.replace_atomic`); the hook used to
    leave one partial ``.<name>.<pid>.tmp`` per call."""
    from memory.fsutil import replace_atomic

    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    replace_atomic(path, data, mode=0o600, sync_dir=False, durable=False)


def forget_cached(path: Path, cache_dir: Path) -> None:
    """Drop the cache of a session file (at ``SessionEnd``)."""
    with contextlib.suppress(OSError):
        os.unlink(_cache_file(cache_dir, path))


def _prune(cache_dir: Path) -> None:
    try:
        entries = sorted(
            (e.stat().st_mtime, e.path) for e in os.scandir(cache_dir) if e.name.endswith(".cache")
        )
    except OSError:
        return
    for _, stale in entries[: max(0, len(entries) - MAX_CACHED)]:
        with contextlib.suppress(OSError):
            os.unlink(stale)
