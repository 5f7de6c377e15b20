"""memory — what an agent imports: hand transcripts to dreamd and read memories back.

The client API is assembled here with an explicit ``__all__`` (a test pins it). Attributes
are loaded lazily (PEP 562) so ``import memory`` costs almost nothing and never pulls in
anthropic, watchdog or apscheduler — agents call this from hooks at every turn.

    job_id = memory.submit(transcript, memory_dir="/home/me/code/app/.memory", session_id=sid)
    result = memory.recall("/home/me/code/app/.memory", "how do we deploy?")
    print(result.block)            # a <relevant_memories> block for this request only
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs agents ~10 ms per hook
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "DreamdError",
    "MemoryStore",
    "RecallSession",
    "Record",
    "forget",
    "index_text",
    "recall",
    "remember",
    "request_consolidation",
    "submit",
]

_WHERE = {
    "DreamdError": "memory.errors",
    "MemoryStore": "memory.store.transaction",
    "RecallSession": "memory.retrieval.recall",
    "Record": "memory.store.records",
    "forget": "memory.client",
    "index_text": "memory.retrieval.recall",
    "recall": "memory.retrieval.recall",
    "remember": "memory.client",
    "request_consolidation": "memory.client",
    "submit": "memory.client",
}

if TYPE_CHECKING:
    from memory.client import forget, remember, request_consolidation, submit
    from memory.errors import DreamdError
    from memory.retrieval.recall import RecallSession, index_text, recall
    from memory.store.records import Record
    from memory.store.transaction import MemoryStore


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'memory' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
