"""``dreamd doctor``'s line about ``[recall] embeddings``: the model is there, or why not.

Nothing is loaded: the files are located and their sha256 checked (what the daemon would do
before loading), and the runtime libraries are looked up without importing them.
"""

from __future__ import annotations

import importlib.util

from dreamd.cli.doctor import FAIL, OK, Check
from dreamd.config import RecallConfig
from dreamd.embeddings.model import INSTALL_HINT, EmbeddingsUnavailable, locate

RUNTIME = ("numpy", "onnxruntime", "tokenizers")


def check_embeddings(recall: RecallConfig) -> list[Check]:
    """No line when the key is unset; else one OK or FAIL line naming the model."""
    if not recall.embeddings:
        return []
    missing = [m for m in RUNTIME if importlib.util.find_spec(m) is None]
    if missing:
        return [Check(FAIL, "embeddings", f"{', '.join(missing)} not installed for [recall] embeddings", INSTALL_HINT)]
    try:
        files = locate(recall.embeddings)
    except EmbeddingsUnavailable as exc:
        return [Check(FAIL, "embeddings", str(exc).removeprefix("embeddings: "), INSTALL_HINT)]
    spec = files.spec
    return [Check(OK, "embeddings", f"{spec.name} from {spec.weights_dist} (sha256 checked), recall fuses it with keywords")]

