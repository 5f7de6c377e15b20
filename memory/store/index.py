"""MEMORY.md: the derived, bounded index an agent loads into its system prompt (DESIGN §2.3 step 5).

Rebuildable from the manifest at any time and never the authority. Bounded by lines and bytes;
when entries are left out, the last line says how many and where the rest are, so nothing is
dropped silently (the failure Claude Code users hit past 200 lines).
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import attrgetter

from memory.store.manifest import ManifestEntry
from memory.store.records import TYPES

DEFAULT_MAX_LINES = 200
DEFAULT_MAX_BYTES = 25_000
HEADER = "# Memory index\n\n<!-- Derived from manifest.json by dreamd; edits here are archived, not kept. -->\n"
SECTION_TITLES = {
    "user": "## User",
    "feedback": "## Feedback",
    "project": "## Project",
    "reference": "## Reference",
}


def _entry_line(entry: ManifestEntry) -> str:
    desc = " ".join(entry.description.split())
    label = " ".join(entry.display_name.replace("[", "(").replace("]", ")").split())
    return f"- [{label}]({entry.file}) — {desc}\n"


def _footer(left_out: int) -> str:
    noun = "entry" if left_out == 1 else "entries"
    return (
        f"\n_{left_out} more {noun} not shown here; `dreamd recall` and manifest.json have them all._\n"
    )


def render_index(
    entries: Sequence[ManifestEntry],
    *,
    max_lines: int = DEFAULT_MAX_LINES,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> bytes:
    """Render the index; the most recently updated entries win when space runs out.

    Only the entries that can be shown are rendered, so a commit into a large set does not pay
    for lines it will never write.
    """
    # Reserve room for the header, section titles and a footer.
    reserve_lines = HEADER.count("\n") + 2 * len(TYPES) + 3
    reserve_bytes = len(HEADER.encode()) + sum(len(t) + 2 for t in SECTION_TITLES.values()) + 120
    budget_lines = max(max_lines - reserve_lines, 0)
    budget_bytes = max(max_bytes - reserve_bytes, 0)
    # Manifest order is roughly update order, which Timsort ranks in near-linear time.
    ranked = sorted(entries, key=attrgetter("updated_at", "name"), reverse=True)[:budget_lines]
    chosen: list[ManifestEntry] = []
    lines_by_name: dict[str, str] = {}
    used_bytes = 0
    for entry in ranked:
        line = _entry_line(entry)
        size = len(line.encode())
        if used_bytes + size > budget_bytes:
            break
        chosen.append(entry)
        lines_by_name[entry.name] = line
        used_bytes += size
    parts = [HEADER]
    for type_ in TYPES:
        section = sorted((e for e in chosen if e.type == type_), key=lambda e: e.name)
        if section:
            parts.append(f"\n{SECTION_TITLES[type_]}\n")
            parts.extend(lines_by_name[e.name] for e in section)
    others = sorted((e for e in chosen if e.type not in TYPES), key=lambda e: e.name)
    if others:
        parts.append("\n## Other\n")
        parts.extend(lines_by_name[e.name] for e in others)
    left_out = len(entries) - len(chosen)
    if left_out:
        parts.append(_footer(left_out))
    return "".join(parts).encode()
