"""The packaged embedding model for tests: loaded once per run.

When the ``embeddings`` extra is not installed a developer's run skips with the reason; under
CI (``CI`` set, ``.ci/run`` installs the extra) it fails, so a green CI ran the real model.
"""

from __future__ import annotations

import os
from functools import cache

import pytest

from dreamd.embeddings.model import Embedder, EmbeddingsUnavailable, load

MODEL = "all-MiniLM-L6-v2"


@cache
def _load() -> Embedder | str:
    try:
        return load(MODEL)
    except EmbeddingsUnavailable as exc:
        return str(exc)


def embedder() -> Embedder:
    got = _load()
    if isinstance(got, str):
        if os.environ.get("CI"):
            pytest.fail(f"embedding model unavailable under CI: {got}", pytrace=False)
        pytest.skip(got)
    return got
