"""Build the configured model backend from a ``[model]`` config section (DESIGN §6, §10).

Backends are imported only when chosen: ``offline`` never loads the Anthropic SDK,
``claude-code`` only runs the user's ``claude`` CLI, and this module itself imports nothing
heavy, so the CLI can import it on any path.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Mapping
from typing import Any

from memory.errors import ConfigError
from memory.model.llm import Model
from memory.values import FrozenValue

BACKENDS = ("offline", "anthropic", "claude-code")


def make_model(section: Mapping[str, Any] | Any, *, env: Mapping[str, str] | None = None) -> Model:
    """The backend named by ``section["backend"]`` (default ``offline``).

    ``section`` is the ``[model]`` mapping, or a ``dreamd.config.ModelConfig``.
    ``env`` (default ``os.environ``) is where the Anthropic backend finds its credential and the
    claude-code backend its ``PATH`` (and what its child process inherits).
    Raises ConfigError for an unknown backend or a missing key.
    """
    if isinstance(section, FrozenValue):  # a ModelConfig
        section = section.to_dict()
    elif dataclasses.is_dataclass(section) and not isinstance(section, type):
        section = dataclasses.asdict(section)
    if not isinstance(section, Mapping):
        raise ConfigError(f"[model]: expected a table, got {type(section).__name__}")
    backend = section.get("backend", "offline")
    if backend == "offline":
        # imported by name: the offline backend is its own module, loaded only when chosen
        offline = importlib.import_module("dreamd.models.offline.model")
        model: Model = offline.OfflineModel()
        return model
    if backend == "anthropic":
        from dreamd.models.anthropic_backend import AnthropicModel

        return AnthropicModel.from_config(section, env=env)
    if backend == "claude-code":
        from dreamd.models.claude_code_backend import ClaudeCodeModel

        return ClaudeCodeModel.from_config(section, env=env)
    raise ConfigError(
        f"[model] backend: unknown backend {backend!r}; expected one of {', '.join(BACKENDS)}"
    )
