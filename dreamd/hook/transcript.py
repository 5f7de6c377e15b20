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
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    Slot = tuple[Any, Any, str | None]
    """Where a group of pieces goes back: the container, its key, and the joiner the pieces
    were stored with (None: one piece per container, as a run of text blocks)."""

CONVERSATION = (b"user", b"assistant")
TOOL_TEXT_KEEP = 1024
"""Characters of a tool output or tool input kept: enough for the one line extraction shows."""
_TYPE = b'"type":"'
_THINKING = ("thinking", "redacted_thinking", "reasoning")
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
        id), so :func:`_redact_carried` reads them joined as they were written."""

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


def _shrink_input(value: Any, cuts: _Cuts) -> Any:
    if isinstance(value, dict):
        out: dict[Any, Any] = {}
        for k, v in value.items():
            if isinstance(v, str):
                cuts.put(out, k, v)
            else:
                out[k] = _shrink_input(v, cuts)
        return out
    if isinstance(value, list):
        items: list[Any] = [None] * min(len(value), 64)
        for i, v in enumerate(value[:64]):
            if isinstance(v, str):
                cuts.put(items, i, v)
            else:
                items[i] = _shrink_input(v, cuts)
        return items
    return value


def _shrink_block(block: Any, cuts: _Cuts) -> Any:
    if not isinstance(block, dict):
        return block
    kind = block.get("type")
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
    if kind in ("tool_use", "server_tool_use", "mcp_tool_use"):
        small = dict(block)
        raw = block.get("input")
        if isinstance(raw, str):
            cuts.put(small, "input", raw)
        else:
            small["input"] = _shrink_input(raw, cuts)
        return small
    if kind in _MEDIA:
        return {"type": kind}
    return block


KEPT_KEYS = ("type", "uuid", "sessionId", "timestamp", "isSidechain", "isMeta", "isCompactSummary")
"""Top-level fields the Claude Code parser reads besides ``message``; the rest is bookkeeping."""
MESSAGE_KEYS = ("role", "id", "content")


def _minimal(record: dict[str, Any], cuts: _Cuts) -> dict[str, Any]:
    out = {k: record[k] for k in KEPT_KEYS if k in record}
    message = record.get("message")
    if isinstance(message, dict):
        slim = {k: message[k] for k in MESSAGE_KEYS if k in message}
        if isinstance(slim.get("content"), list):
            blocks = [_shrink_block(b, cuts) for b in slim["content"]]
            slim["content"] = [b for b in blocks if b is not None]
        out["message"] = slim
    elif "message" in record:
        out["message"] = message
    return out


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
    (:func:`_redact_carried`). Lines that are not JSON objects are dropped (the parser skips
    them too); records of other types are skipped without being decoded. Only
    ``data[begin:stop]`` is read (no copy of a 30 MB buffer is made to look at part of it).
    ``read``, when given, receives for each line whether all its strings were read as text
    (:func:`read_as_text`), so that its redaction as JSON text can skip it.
    """
    kept: list[tuple[bytes, dict[str, Any]]] = []
    cuts = _Cuts()
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
        kept.append((record["type"].encode(), _minimal(record, cuts)))
    cuts.finish()
    _redact_carried([minimal for _kind, minimal in kept], cuts.pieces)
    if read is not None:
        read.extend(read_as_text(minimal) for _kind, minimal in kept)
    return [(kind, dumps(minimal)) for kind, minimal in kept]


_TEXT_BLOCK_KEYS = frozenset({"type", "text", "cache_control"})
_RESULT_BLOCK_KEYS = frozenset({"type", "tool_use_id", "content", "is_error", "cache_control"})


def read_as_text(record: dict[str, Any]) -> bool:
    """Every string of the kept ``record`` that is not an id, a type or a flag is a text
    :func:`_redact_carried` read (a prompt, text blocks, a tool result's content): its line's
    redaction as JSON text would read nothing more. A tool input (its keys are context:
    ``{"password": …}``) or a block of any other shape is not."""
    message = record.get("message")
    if not isinstance(message, dict):
        return message is None
    content = message.get("content")
    if isinstance(content, str) or content is None:
        return True
    if not isinstance(content, list):
        return False
    for block in content:
        if not isinstance(block, dict):
            return False
        kind = block.get("type")
        if kind == "text":
            if not block.keys() <= _TEXT_BLOCK_KEYS or not isinstance(block.get("text"), str):
                return False
        elif kind == "tool_result":
            if not block.keys() <= _RESULT_BLOCK_KEYS or not isinstance(block.get("content"), str):
                return False
        elif kind not in _MEDIA or len(block) != 1:
            return False
    return True


def _carriers(content: Any, pieces: dict[int, list[int]], groups: list[list[str]], slots: list[list[Slot]]) -> None:
    """The texts of one message's content, each as the pieces it is carried in: consecutive
    text blocks together, a tool result's pieces together, each string of a tool input alone."""
    run: list[Slot] = []

    def close() -> None:
        if run:
            groups.append([c[k] for c, k, _j in run])
            slots.append(list(run))
            run.clear()

    for i, block in enumerate(content):
        if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
            run.append((block, "text", None))
            continue
        close()
        if not isinstance(block, dict):
            if isinstance(block, str):
                groups.append([block])
                slots.append([(content, i, None)])
            continue
        text = block.get("content")
        if isinstance(text, str) and "content" in block and block.get("type") != "text":
            lengths = pieces.get(id(block))
            parts = _split_joined(text, lengths) if lengths else [text]
            groups.append(parts)
            slots.append([(block, "content", "\n" if lengths else None)])
        elif isinstance(text, list):
            _carriers(text, pieces, groups, slots)
        raw = block.get("input")
        if raw is not None:
            _strings_of(block, "input", groups, slots)
    close()


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


def _strings_of(container: Any, key: Any, groups: list[list[str]], slots: list[list[Slot]]) -> None:
    value = container[key]
    if isinstance(value, str):
        groups.append([value])
        slots.append([(container, key, None)])
    elif isinstance(value, dict):
        for k in value:
            _strings_of(value, k, groups, slots)
    elif isinstance(value, list):
        for k in range(len(value)):
            _strings_of(value, k, groups, slots)


def _redact_carried(records: list[dict[str, Any]], pieces: dict[int, list[int]]) -> None:
    """Every text of the records redacted as the text it is (:mod:`memory.redact.carried`):
    decoded from the file's JSON, a message's consecutive text blocks and a tool result's
    pieces joined as they were written, JSON-escaped literals inside decoded. The lines'
    own redaction after this reads the records as JSON (a tool input's ``"password": …``);
    together the hook removes at least what the redactor removes from the text itself."""
    groups: list[list[str]] = []
    slots: list[list[Slot]] = []
    for record in records:
        message = record.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            groups.append([content])
            slots.append([(message, "content", None)])
        elif isinstance(content, list):
            _carriers(content, pieces, groups, slots)
    if not groups:
        return
    from memory.redact.carried import redact_groups

    out, kinds = redact_groups(groups)
    if not kinds:
        return
    for where, before, after in zip(slots, groups, out, strict=True):
        if after == before:
            continue
        if len(where) == 1:
            container, key, joiner = where[0]
            container[key] = (joiner or "").join(after)
        else:
            for (container, key, _joiner), text in zip(where, after, strict=True):
                container[key] = text


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
    ``read`` says were read whole as text already (:func:`read_as_text`): a tool input's
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


def _prompt(line: bytes) -> str | None:
    """The text of a user prompt line (its content a string), else None (a tool result, an
    assistant line)."""
    try:
        record = _stdlib_loads(line)
    except (ValueError, RecursionError):
        return None
    message = record.get("message") if isinstance(record, dict) else None
    content = message.get("content") if isinstance(message, dict) else None
    return content if isinstance(content, str) else None


def _across_turns(
    cached: list[tuple[bytes, bytes]], fresh: list[tuple[bytes, bytes]]
) -> list[tuple[bytes, bytes]]:
    """``fresh`` with a secret said across two of the user's prompts redacted in the second
    ("the rsync password is" in one prompt, the value alone in the next: each line, redacted
    alone, holds none). The last cached prompt is the first of a pair when the session's
    next Stop brings the value; cached lines themselves are never rewritten."""
    prompts: list[tuple[int, str]] = []  # (index in fresh, or -1 for the cached one), text
    for kind, line in reversed(cached):
        if kind == b"user" and b"tool_result" not in line:
            text = _prompt(line)
            if text is not None:
                prompts.append((-1, text))
                break
    for i, (kind, line) in enumerate(fresh):
        if kind == b"user" and b"tool_result" not in line:
            text = _prompt(line)
            if text is not None:
                prompts.append((i, text))
    if len(prompts) < 2 or all(i < 0 for i, _ in prompts[1:]):
        return fresh
    from memory.redact import redact_turns

    texts = redact_turns([t for _, t in prompts], redacted=True)
    out = list(fresh)
    for (i, before), after in zip(prompts, texts, strict=True):
        if i >= 0 and after != before:
            record = _stdlib_loads(out[i][1])
            record["message"]["content"] = after
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
    path: Path, cache_dir: Path | None, *, max_read: int = MAX_READ_BYTES
) -> tuple[list[tuple[bytes, bytes]], dict[str, int]]:
    """The session file's conversation lines, redacted, and what it cost (bytes read, reused).

    Claude Code only appends to a session file, and the Stop hook runs after every turn: the
    lines of the prefix processed last time are kept in ``cache_dir`` (one file per session
    file, the same bytes a job carries) with the prefix's length and a checksum of its last
    4 KiB. When the file still starts with that prefix, only what was appended is read and
    decoded; otherwise (rewritten, truncated, another file under that name) all of it is.
    Raises FileNotFoundError when the file does not exist (yet).
    """
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
    return lines + tail, {"read_bytes": len(data), "reused_bytes": offset}


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
