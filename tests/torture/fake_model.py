"""A scripted Anthropic endpoint for torture runs with ``--backend anthropic``.

It is :class:`tests.fake_anthropic.FakeAnthropic` (a real HTTP server on 127.0.0.1) with an
endless, seeded script instead of a finite list: each request gets a valid answer (what the
offline model would say for the request's own payload, so the pipeline can make progress),
or one of the failure shapes a real endpoint produces — text that is not JSON, a fenced JSON
block, a ``max_tokens`` stop, a tool call, an extraction item with an extra field, 429/500/529
(retried), a 400 (permanent), or a hang longer than the client's timeout.

``mode = "valid"`` (used while the harness drains the spool at the end) answers validly only.
"""

from __future__ import annotations

import io
import json
import random
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.fake_anthropic import FakeAnthropic, Hang, ScriptItem, Status, message

MIX: tuple[tuple[str, float], ...] = (
    ("valid", 0.55),
    ("not-json", 0.07),
    ("fenced", 0.04),
    ("max-tokens", 0.04),
    ("tool-call", 0.03),
    ("extra-field", 0.04),
    ("429", 0.06),
    ("529", 0.04),
    ("500", 0.04),
    ("400", 0.02),
    ("hang", 0.07),
)


class ScriptedAnthropic(FakeAnthropic):
    """Answers every request from the seeded mix; counts what it answered."""

    def __init__(self, seed: str, *, hang_seconds: float) -> None:
        from dreamd.models.offline.model import OfflineModel

        super().__init__()
        self.rng = random.Random(seed)
        self.hang_seconds = hang_seconds
        self.mode = "chaos"
        self.answered: Counter[str] = Counter()
        self._offline = OfflineModel()
        self._local = threading.local()
        self._rng_lock = threading.Lock()

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("content-length") or 0)
        raw = handler.rfile.read(length)
        self._local.body = raw
        handler.rfile = io.BytesIO(raw)
        super()._handle(handler)

    def _valid_text(self) -> tuple[str, str | None]:
        try:
            body: Any = json.loads(self._local.body)
        except (ValueError, AttributeError):
            return "[]", "end_turn"

        def text(blocks: Any) -> str:
            if isinstance(blocks, str):
                return blocks
            return "".join(b.get("text", "") for b in blocks or () if isinstance(b, dict))

        system = text(body.get("system"))
        prompt = "".join(text(m.get("content")) for m in body.get("messages") or () if isinstance(m, dict))
        completion = self._offline.complete(system, prompt, int(body.get("max_tokens") or 4096))
        return completion.text, completion.stop_reason

    def _next(self) -> ScriptItem | None:
        with self._rng_lock:
            roll = self.rng.random()
        kind = "valid"
        if self.mode != "valid":
            for name, weight in MIX:
                if roll < weight:
                    kind = name
                    break
                roll -= weight
        with self._lock:
            self.answered[kind] += 1
        text, stop = self._valid_text()
        if kind == "valid":
            return message(text, stop_reason=stop)
        if kind == "not-json":
            return message("Sure! Here are the memories I found: none really.")
        if kind == "fenced":
            return message(f"```json\n{text}\n```")
        if kind == "max-tokens":
            return message(text, stop_reason="max_tokens")
        if kind == "tool-call":
            return message(text, tool_use=[("save_memory", {"name": "x"})])
        if kind == "extra-field":
            return message(json.dumps([{"name": "x", "type": "user", "description": "d", "body": "b",
                                        "path": "/etc/passwd"}]))
        if kind in ("429", "529", "500", "400"):
            return Status(int(kind), f"torture: scripted {kind}")
        return Hang(self.hang_seconds, message(text, stop_reason=stop))
