"""A consolidation plan in words, as ``dreamd consolidate --dry-run`` and the console's dream
preview show it."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path

from memory.model.answer_gate import PlanOp

__all__ = ["render_plan"]


def render_plan(memory_dir: Path, plan: Sequence[PlanOp]) -> str:
    """A consolidation plan as a readable diff (``dreamd consolidate --dry-run``): each result as
    the commit would write it, redacted, so a preview never shows what a record never holds."""
    from memory.store.transaction import MemoryStore

    store = MemoryStore(memory_dir)
    by_name = {e.name: e for e in store.read().records}
    if not plan:
        return "no changes: the set is already consolidated\n"
    from memory.store.redaction import redact_record

    lines: list[str] = []
    for op in plan:
        sources = list(op.source_names)
        if op.result is not None:  # what the commit would write: the model's answer redacted (issue 22)
            op = dataclasses.replace(op, result=redact_record(op.result)[0])
        if op.result is None:
            lines.append(f"drop {', '.join(sources)}")
            for n in sources:
                e = by_name.get(n)
                lines.append(f"  - {n}: {e.description if e else '?'}")
            continue
        verb = "rewrite" if sources == [op.result.name] else "merge"
        lines.append(f"{verb} {', '.join(sources)} -> {op.result.name} [{op.result.type}]")
        for n in sources:
            e = by_name.get(n)
            lines.append(f"  - {n}: {e.description if e else '?'}")
        lines.append(f"  + {op.result.name}: {op.result.description}")
        for body_line in op.result.body.splitlines():
            lines.append(f"  +   {body_line}")
    return "\n".join(lines) + "\n"
