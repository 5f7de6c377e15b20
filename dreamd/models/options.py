"""The ``[model]`` keys every backend shares, read and checked once (no SDK imported here)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dreamd.config import parse_duration
from memory.errors import ConfigError

DEFAULT_MODEL = "claude-sonnet-4-6"
DEFAULT_TIMEOUT = 60.0
DEFAULT_MAX_RETRIES = 2
DEFAULT_MAX_TOKENS = 4096


def seconds(value: Any, where: str) -> float:
    """A timeout as seconds (number) or a duration string like ``"60s"``; must be positive."""
    if not isinstance(value, str | int | float) or isinstance(value, bool):
        raise ConfigError(f"{where}: expected a duration like '60s', got {value!r}")
    result = parse_duration(value, where=where)
    if result <= 0:
        raise ConfigError(f"{where}: must be positive, got {value!r}")
    return result


def integer(value: Any, where: str, minimum: int) -> int:
    if isinstance(value, int) and not isinstance(value, bool) and value >= minimum:
        return value
    raise ConfigError(f"{where}: expected an integer >= {minimum}, got {value!r}")


def string(section: Mapping[str, Any], key: str, default: str) -> str:
    value = section.get(key, default)
    if not isinstance(value, str):
        raise ConfigError(f"[model] {key}: expected a string, got {value!r}")
    return value


@dataclass(frozen=True)
class ModelOptions:
    model: str
    timeout: float
    max_retries: int
    max_tokens: int


def common_options(section: Mapping[str, Any]) -> ModelOptions:
    """``model``, ``timeout``, ``max_retries`` and ``max_tokens`` of a ``[model]`` section
    (missing keys take the documented defaults)."""
    return ModelOptions(
        model=string(section, "model", DEFAULT_MODEL),
        timeout=seconds(section.get("timeout", DEFAULT_TIMEOUT), "[model] timeout"),
        max_retries=integer(section.get("max_retries", DEFAULT_MAX_RETRIES), "[model] max_retries", 0),
        max_tokens=integer(section.get("max_tokens", DEFAULT_MAX_TOKENS), "[model] max_tokens", 1),
    )
