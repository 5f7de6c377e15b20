"""The six MCP tools of ``dreamd mcp`` as data: names, descriptions written for a model, JSON
input schemas, and the one check that holds arguments to those schemas.

The schemas are what clients show a model, and :func:`check_arguments` reads the same
dictionaries, so what a tool promises and what it accepts cannot drift apart. A failed check is
a :class:`~memory.errors.UsageError` of one sentence naming the tool and the argument. Stdlib
only: no SDK import.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from memory.errors import UsageError

__all__ = ["INSTRUCTIONS", "SPECS", "TOOLS", "ToolSpec", "check_arguments"]

MAX_QUERY_CHARS = 4096
MAX_RECALL_LIMIT = 20
MAX_LOG_LIMIT = 100
MAX_PATH_CHARS = 4096
TYPES = ("user", "feedback", "project", "reference")
NAME_PATTERN = "^[a-z0-9][a-z0-9_-]{0,63}$"

INSTRUCTIONS = (
    "Long-term memory kept as Markdown records (types: user, feedback, project, reference) that "
    "survive across sessions. Call recall with the user's request before answering anything that "
    "may depend on earlier sessions; call remember for durable facts worth keeping (who the user "
    "is, how they want you to work, project decisions, where things are); call forget when the "
    "user asks you to drop something. Record bodies are shown for the current request only."
)

# ---------------------------------------------------------------------------- tool schemas

_MEMORY_DIR: dict[str, Any] = {
    "type": "string",
    "maxLength": MAX_PATH_CHARS,
    "description": (
        "Absolute path of the memory directory to use. Omit it to use this server's own "
        "directory; another one must lie inside the roots the user configured."
    ),
}
_NAME: dict[str, Any] = {
    "type": "string",
    "pattern": NAME_PATTERN,
    "description": "Record name: lowercase letters, digits, '-' or '_', at most 64 characters (e.g. 'prefers-tabs').",
}


def _schema(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {**properties, "memory_dir": _MEMORY_DIR},
        "required": required,
        "additionalProperties": False,
    }


@dataclass(frozen=True)
class ToolSpec:
    name: str
    title: str
    description: str
    input_schema: dict[str, Any]
    read_only: bool
    destructive: bool = False
    idempotent: bool = True


TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "recall",
        "Recall memories",
        "Find the memories relevant to a request. Returns at most `limit` records, each with its "
        "name, type, one-line description and body (long bodies are cut; the answer then gives "
        "the path of the full file). Use it before answering anything that may depend on what "
        "the user said or decided in earlier sessions.",
        _schema(
            {
                "query": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": MAX_QUERY_CHARS,
                    "description": "What you need to know, in the user's words (e.g. 'how do we deploy?').",
                },
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_RECALL_LIMIT,
                    "description": "Most records to return (default: the configured recall limit, 5).",
                },
            },
            ["query"],
        ),
        read_only=True,
    ),
    ToolSpec(
        "list_memories",
        "List memories",
        "List every record in the memory directory: name, type and one-line description, no "
        "bodies. Use it to see what is known before remembering something new or to find the "
        "name to pass to get_memory or forget.",
        _schema(
            {
                "type": {
                    "type": "string",
                    "enum": list(TYPES),
                    "description": "Only records of this type.",
                }
            },
            [],
        ),
        read_only=True,
    ),
    ToolSpec(
        "get_memory",
        "Read one memory",
        "Read one record in full (name, type, description, whole body, file path).",
        _schema({"name": _NAME}, ["name"]),
        read_only=True,
    ),
    ToolSpec(
        "remember",
        "Remember",
        "Save one memory as a record file, committed at once. Types: 'user' (who the user is, "
        "their role and preferences), 'feedback' (how to work: what to avoid, what to keep "
        "doing), 'project' (goals, deadlines, decisions and why), 'reference' (where things "
        "are: trackers, dashboards, documents). Giving the `name` of an existing record "
        "replaces that record (the old version stays in history); without `name` a new record "
        "is always added. Secrets (passwords, API keys, tokens, private keys) are redacted before writing, in the name too. "
        "The answer names the record and the generation committed.",
        _schema(
            {
                "type": {"type": "string", "enum": list(TYPES), "description": "The kind of memory."},
                "description": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": 1024,
                    "description": "One line saying what this memory is (shown in every listing).",
                },
                "body": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": 65536,
                    "description": (
                        "The memory itself, in Markdown (at most 64 KiB). For feedback and project "
                        "records add a '**Why:**' and a '**How to apply:**' line."
                    ),
                },
                "name": {**_NAME, "description": _NAME["description"] + " Omit it to derive one from the description."},
            },
            ["type", "description", "body"],
        ),
        read_only=False,
        idempotent=False,
    ),
    ToolSpec(
        "forget",
        "Forget",
        "Remove one record from the memory set, committed at once. The file is kept in the "
        "directory's history, so the user can undo it with `dreamd rollback`.",
        _schema({"name": _NAME}, ["name"]),
        read_only=False,
        destructive=True,
        idempotent=False,
    ),
    ToolSpec(
        "memory_log",
        "Memory history",
        "The most recent generations of the memory set, newest first: what each one added, "
        "updated, merged or removed, and by what (a session's extraction, a dream, a manual or "
        "MCP write, a rollback).",
        _schema(
            {
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_LOG_LIMIT,
                    "description": "Most generations to show (default 10).",
                }
            },
            [],
        ),
        read_only=True,
    ),
)
SPECS = {t.name: t for t in TOOLS}


# ---------------------------------------------------------------------------- argument checks

def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def check_arguments(spec: ToolSpec, arguments: Any) -> dict[str, Any]:
    """``arguments`` checked against the tool's own input schema (the subset it uses).

    Raises UsageError with one sentence naming the tool and the argument.
    """
    tool = spec.name
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise UsageError(f"{tool}: arguments must be an object, got {_json_type(arguments)}")
    props: dict[str, Any] = spec.input_schema["properties"]
    unknown = sorted(k for k in arguments if k not in props)
    if unknown:
        raise UsageError(f"{tool}: unknown argument {unknown[0]!r} (expected {', '.join(props)})")
    for name in spec.input_schema["required"]:
        if arguments.get(name) is None:
            raise UsageError(f"{tool}: missing required argument {name!r}")
    out: dict[str, Any] = {}
    for name, value in arguments.items():
        if value is None:
            continue  # an explicit null is the same as leaving an optional argument out
        rule = props[name]
        if rule["type"] == "integer":
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            if isinstance(value, bool) or not isinstance(value, int):
                raise UsageError(f"{tool}: {name} must be an integer, got {_json_type(value)}")
            low, high = rule.get("minimum"), rule.get("maximum")
            if (low is not None and value < low) or (high is not None and value > high):
                raise UsageError(f"{tool}: {name} must be between {low} and {high}, got {value}")
        else:
            if not isinstance(value, str):
                raise UsageError(f"{tool}: {name} must be a string, got {_json_type(value)}")
            if "enum" in rule and value not in rule["enum"]:
                raise UsageError(f"{tool}: {name} {value[:40]!r} is not one of {', '.join(rule['enum'])}")
            if len(value) < rule.get("minLength", 0) or not value.strip():
                raise UsageError(f"{tool}: {name} is empty")
            if "maxLength" in rule and len(value) > rule["maxLength"]:
                raise UsageError(f"{tool}: {name} is over {rule['maxLength']} characters")
            if "pattern" in rule and not re.fullmatch(rule["pattern"], value):
                raise UsageError(f"{tool}: {name} {value[:70]!r} must match {rule['pattern']}")
        out[name] = value
    return out
