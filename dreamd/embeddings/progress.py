"""``dreamd status``'s line about embeddings: how much of a directory's set is embedded.

Light on purpose (no numpy, no model): it reads only the cache's header and hashes.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

TYPE_CHECKING = False  # not typing's: importing typing is a start-up cost (issue 20)
if TYPE_CHECKING:
    from typing import Any

    from dreamd.config import RecallConfig
    from memory.store.manifest import Manifest


def embeddings_status(directory: Path, recall: RecallConfig, manifest: Manifest) -> dict[str, Any]:
    """``dreamd status``'s embedding progress of one directory ({} when the key is unset).

    Reads only the cache's header and hashes, never its vectors."""
    if not recall.embeddings:
        return {}
    # here, not at the top: its tokenizer's patterns cost a status without embeddings
    from memory.retrieval.embed import cached_shas

    have = cached_shas(directory, recall.embeddings) or set()
    wanted = {e.sha256 for e in manifest.records}
    return {"embeddings": {"model": recall.embeddings, "embedded": len(wanted & have), "records": len(wanted)}}


def render_embeddings_status(d: Mapping[str, Any]) -> list[str]:
    e = d.get("embeddings")
    if not e:
        return []
    if e["embedded"] >= e["records"]:
        return [f"  embeddings {e['model']}: all {e['records']:,} records embedded"]
    return [f"  embeddings {e['model']}: {e['embedded']:,} of {e['records']:,} records embedded"
            " (the daemon embeds the rest in the background)"]
