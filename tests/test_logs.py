"""Logs: JSON lines with timestamp/level/event, stdlib routed through, no locals, catalogue."""

from __future__ import annotations

import io
import json
import logging
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from dreamd.logs import EVENTS, configure, get_logger, render_event_table

REPO = Path(__file__).resolve().parents[1]
TS = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z$")


@pytest.fixture
def stream() -> Iterator[io.StringIO]:
    out = io.StringIO()
    configure("json", out)
    yield out
    configure("json", io.StringIO())  # detach from this test's buffer


def _lines(out: io.StringIO) -> list[dict[str, object]]:
    return [json.loads(line) for line in out.getvalue().splitlines()]


def test_json_lines_carry_timestamp_level_event_and_context(stream: io.StringIO) -> None:
    get_logger("dreamd.test").info("job.done", job_id="j1", memory_dir="/m", session_id="s")
    (line,) = _lines(stream)
    assert list(line)[:3] == ["timestamp", "level", "event"]
    assert TS.match(str(line["timestamp"]))
    assert (line["level"], line["event"], line["job_id"], line["memory_dir"], line["session_id"]) == (
        "info", "job.done", "j1", "/m", "s")


def test_stdlib_loggers_go_through_the_same_renderer(stream: io.StringIO) -> None:
    logging.getLogger("memory.store").warning("bad %s", "x.md", extra={"event": "store.malformed", "file": "x.md"})
    logging.getLogger("some.library").error("plain %d", 3)
    logging.getLogger("apscheduler.scheduler").info("Running job (noise)")  # quietened to WARNING
    a, b = _lines(stream)
    assert (a["event"], a["level"], a["logger"], a["message"], a["file"]) == (
        "store.malformed", "warning", "memory.store", "bad x.md", "x.md")
    assert (b["event"], b["level"], b["logger"], b["message"]) == ("log.message", "error", "some.library", "plain 3")
    assert TS.match(str(b["timestamp"]))


def _leaky() -> None:
    api_key = "sk-ant-api03-SECRETSECRET"
    transcript = "the user's private words"
    raise ValueError(f"boom {len(api_key) + len(transcript)}")


def test_json_tracebacks_have_frames_but_no_locals(stream: io.StringIO) -> None:
    try:
        _leaky()
    except ValueError:
        get_logger().exception("job.error", job_id="j")
    text = stream.getvalue()
    assert "SECRETSECRET" not in text and "private words" not in text
    (line,) = _lines(stream)
    exc = line["exception"]
    assert isinstance(exc, list) and exc[0]["exc_type"] == "ValueError"
    assert [f["name"] for f in exc[0]["frames"]][-1] == "_leaky"
    assert all("locals" not in f for f in exc[0]["frames"])


def test_stdlib_exception_has_no_locals_either(stream: io.StringIO) -> None:
    try:
        _leaky()
    except ValueError:
        logging.getLogger("watchdog.observers").exception("handler failed")
    assert "SECRETSECRET" not in stream.getvalue()
    assert _lines(stream)[0]["exception"][0]["exc_type"] == "ValueError"  # type: ignore[index]


def test_console_format_is_readable_and_has_no_locals() -> None:
    out = io.StringIO()
    configure("console", out)
    try:
        get_logger().info("daemon.ready", managed_dirs=3)
        try:
            _leaky()
        except ValueError:
            get_logger().exception("job.error")
    finally:
        configure("json", io.StringIO())
    text = out.getvalue()
    assert "daemon.ready" in text and "managed_dirs=3" in text
    assert "Traceback (most recent call last)" in text and "ValueError: boom" in text
    assert "SECRETSECRET" not in text
    assert "\x1b[" not in text  # not a terminal: no colours


def test_auto_format_is_json_when_not_a_terminal() -> None:
    out = io.StringIO()
    configure("auto", out)
    try:
        get_logger().info("daemon.ready")
    finally:
        configure("json", io.StringIO())
    assert json.loads(out.getvalue())["event"] == "daemon.ready"


_LOG_CALL = re.compile(
    r"""\.\s*(?:debug|info|warning|error|exception|critical|msg)\(\s*["']([a-z_]+\.[a-z_.]+)["']""")
_EVENT_KW = re.compile(r"""["']?event["']?\s*[:=]\s*["']([a-z_]+\.[a-z_.]+)["']""")


def _emitted_events() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for path in sorted([*(REPO / "dreamd").rglob("*.py"), *(REPO / "memory").rglob("*.py")]):
        if path.name == "logs.py":
            continue
        text = path.read_text(encoding="utf-8")
        for m in [*_LOG_CALL.finditer(text), *_EVENT_KW.finditer(text)]:
            found.setdefault(m.group(1), []).append(str(path.relative_to(REPO)))
    return found


def test_every_emitted_event_is_catalogued() -> None:
    emitted = _emitted_events()
    assert "job.done" in emitted  # the scan really finds the daemon's log calls
    missing = {name: files for name, files in emitted.items() if name not in EVENTS}
    assert missing == {}


def test_event_catalogue_names_are_dotted_and_documented() -> None:
    for name, meaning in EVENTS.items():
        assert re.fullmatch(r"[a-z_]+\.[a-z_]+", name), name
        assert meaning and meaning[0].isupper(), name


def test_event_table_lists_every_event() -> None:
    table = render_event_table().splitlines()
    assert table[:2] == ["| Event | Meaning (fields) |", "|---|---|"]
    assert len(table) == 2 + len(EVENTS)
    assert any(row.startswith("| `gate.changed` |") for row in table)
