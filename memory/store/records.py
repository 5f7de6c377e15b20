"""Record files: Markdown with YAML frontmatter (DESIGN §2.1).

Two kinds of files meet here. Records dreamd writes have a slug ``name``, one of the four
types, a one-line description and a body, and are rendered by :func:`render_record`. Files
others wrote (Claude Code's free-text ``name``, ``type`` nested under ``metadata:``,
learn-claude-code's ``<name>.md``, BOM, CRLF, no trailing newline) are *read* defensively and
never rewritten: their manifest key is the slug of the file stem.

Reading refuses, with the file named in the error: non-UTF-8 bytes, YAML anchors/aliases
(billion-laughs), frontmatter over 8 KiB, bodies over 64 KiB, and, in strict mode, an unknown
type.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping

from memory.errors import RecordError
from memory.values import FrozenValue

TYPE_CHECKING = False  # not typing's: importing typing is a start-up cost (issue 20)
if TYPE_CHECKING:
    from typing import Any

TYPES: tuple[str, ...] = ("user", "feedback", "project", "reference")
NAME_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}\Z")
MAX_FRONTMATTER_BYTES = 8 * 1024
MAX_BODY_BYTES = 64 * 1024
MAX_DESCRIPTION_CHARS = 1024
FIELDS = ("name", "type", "description", "body")
OPTIONAL_FIELDS = ("importance", "expires")
"""What a person or program may add when writing a record (not a model: its answers stay strict)."""


class Record(FrozenValue):
    """One memory. ``name`` is the manifest key (always a valid slug).

    ``extra``: frontmatter keys other than name/type/description, kept as they were (a new
    empty dict when not given). ``title``: the file's own ``name:`` when it is free text
    (foreign files), for display. A :class:`~memory.values.FrozenValue`, not a dataclass
    (start-up, issue 20): ``rec.replace(name=…)`` for ``dataclasses.replace``."""

    __slots__ = ("name", "type", "description", "body", "extra", "title")  # noqa: RUF023 (field order)
    name: str
    type: str
    description: str
    body: str
    extra: Mapping[str, Any]
    title: str | None

    def __init__(
        self, name: str, type: str, description: str, body: str,
        extra: Mapping[str, Any] | None = None, title: str | None = None,
    ) -> None:  # fmt: skip
        self.set_fields(
            name=name, type=type, description=description, body=body,
            extra={} if extra is None else extra, title=title,
        )  # fmt: skip

    @property
    def importance(self) -> float:
        value = self.extra.get("importance", 0.5)
        if isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value <= 1:
            return float(value)
        return 0.5

    @property
    def expires(self) -> str | None:
        value = self.extra.get("expires")
        return None if value is None else str(value)

    def as_fields(self) -> dict[str, str]:
        return {"name": self.name, "type": self.type, "description": self.description, "body": self.body}

    def job_fields(self) -> dict[str, Any]:
        """The four fields plus ``importance``/``expires`` when set: what a remember job carries."""
        out: dict[str, Any] = dict(self.as_fields())
        out.update({k: self.extra[k] for k in OPTIONAL_FIELDS if k in self.extra})
        return out


def sha256_hex(data: bytes) -> str:
    """The hex sha256 of ``data`` (a record's identity in the manifest).

    CPython's built-in ``_sha256`` first: ``hashlib`` loads OpenSSL, which costs a reading command
    (``status``, ``recall``, ``doctor``) about 3.5 ms, more than hashing its records (issue 20).
    Both give the same digest; an interpreter without the built-in module uses hashlib."""
    try:
        from _sha256 import sha256  # type: ignore[import-not-found]
    except ImportError:  # pragma: no cover - CPython 3.11 always builds it
        from hashlib import sha256
    digest: str = sha256(data).hexdigest()
    return digest


def unique_name(name: str, taken: set[str]) -> str:
    """``name`` or ``name-2``, ``name-3`` … so a collision never overwrites."""
    if name not in taken:
        return name
    n = 2
    while True:
        suffix = f"-{n}"
        candidate = name[: 64 - len(suffix)].rstrip("-_") + suffix
        if candidate not in taken and NAME_RE.match(candidate):
            return candidate
        n += 1


def slugify(text: str, *, max_len: int = 64) -> str:
    """A valid record name from free text; non-Latin text falls back to a stable hash."""
    norm = unicodedata.normalize("NFKD", text)
    ascii_text = norm.encode("ascii", "ignore").decode("ascii").lower()
    slug = re.sub(r"[^a-z0-9_]+", "-", ascii_text).strip("-_")
    slug = re.sub(r"-{2,}", "-", slug)[:max_len].rstrip("-_")
    if not slug:
        import hashlib

        slug = "r-" + hashlib.sha1(text.encode("utf-8")).hexdigest()[:10]
    if not NAME_RE.match(slug):
        slug = ("r" + slug)[:max_len]
    return slug


def infer_type(stem: str) -> str:
    for t in TYPES:
        if stem.lower().startswith(t + "_") or stem.lower().startswith(t + "-"):
            return t
    return "project"


_loader: list[Any] = []


def _no_alias_loader() -> Any:
    """A SafeLoader that refuses anchors and aliases (no YAML bombs, no shared nodes); PyYAML
    is imported on first use, so commands that never parse a record do not pay for it."""
    if not _loader:
        import yaml

        class _NoAliasLoader(yaml.SafeLoader):
            def compose_node(self, parent: Any, index: Any) -> Any:
                event = self.peek_event()  # type: ignore[no-untyped-call]
                if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
                    raise yaml.YAMLError("YAML anchors and aliases are not allowed")
                return super().compose_node(parent, index)

        _loader.append(_NoAliasLoader)
    return _loader[0]


_flat: list[Any] = []


def _flat_loader() -> Any:
    """libyaml's ``CSafeLoader`` that builds a flat mapping of strings (what every record
    dreamd writes has: ``name``, ``description``, ``type``) straight from the composed nodes:
    the safe constructor would make each one ``node.value`` too, through four calls a scalar.
    Any other document (a number, a date, a list, a merge key, a tag) is constructed as
    ``CSafeLoader`` does; None without libyaml."""
    if not _flat:
        import yaml

        base = getattr(yaml, "CSafeLoader", None)
        if base is None:
            _flat.append(None)
            return None
        string, mapping = "tag:yaml.org,2002:str", "tag:yaml.org,2002:map"

        class _FlatLoader(base):  # type: ignore[misc, valid-type]
            def construct_document(self, node: Any) -> Any:
                if isinstance(node, yaml.MappingNode) and node.tag == mapping and all(
                    isinstance(k, yaml.ScalarNode) and k.tag == string
                    and isinstance(v, yaml.ScalarNode) and v.tag == string
                    for k, v in node.value
                ):  # fmt: skip
                    return {k.value: v.value for k, v in node.value}
                return super().construct_document(node)

        _flat.append(_FlatLoader)
    return _flat[0]


def _fast_load(text: str) -> tuple[bool, Any]:
    """``(True, data)`` when libyaml's C loader could parse ``text`` safely, else
    ``(False, None)``: the pure-Python loader then decides, with its own errors.

    A frontmatter without ``&`` or ``*`` can hold no anchor and no alias, so the C loader
    (the same safe constructor and resolver, about ten times faster to scan) needs no alias
    check; text with either character, text the C loader refuses, and a PyYAML without libyaml
    all take the checked pure-Python path, so what is accepted and every error are unchanged.
    """
    import yaml

    fast = _flat_loader()
    if fast is None or "&" in text or "*" in text:
        return False, None
    try:
        return True, yaml.load(text, Loader=fast)
    except (yaml.YAMLError, RecursionError, ValueError, OverflowError, TypeError):
        return False, None


def load_yaml_mapping(text: str, *, where: str) -> dict[str, Any]:
    import yaml

    try:
        done, data = _fast_load(text)
        if not done:
            data = yaml.load(text, Loader=_no_alias_loader())
    except yaml.YAMLError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise RecordError(f"{where}: invalid YAML frontmatter: {first}") from None
    except RecursionError:
        raise RecordError(f"{where}: YAML frontmatter is nested too deep") from None
    except (ValueError, OverflowError, TypeError) as exc:
        # A value YAML's own constructors refuse: ``2026-02-30`` (day out of range), an integer
        # of 5,000 digits (Python's int limit), a timestamp past year 9999.
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise RecordError(f"{where}: frontmatter value YAML cannot hold: {first[:120]}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise RecordError(f"{where}: frontmatter is not a mapping")
    return {str(k): v for k, v in data.items()}


def split_frontmatter(data: bytes, *, where: str) -> tuple[str | None, str]:
    """Decode and split a record file into (frontmatter text or None, body)."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RecordError(f"{where}: not valid UTF-8 (byte {exc.start})") from None
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not text.startswith("---\n"):
        return None, text
    end = text.find("\n---", 3)
    while end != -1:
        after = end + 4
        if after == len(text) or text[after] == "\n":
            fm = text[4 : end + 1]
            body = text[after + 1 :] if after < len(text) else ""
            return fm, body
        end = text.find("\n---", end + 1)
    raise RecordError(f"{where}: frontmatter is not closed with '---'")


def _clean_body(body: str) -> str:
    return body.strip("\n") + "\n" if body.strip() else ""


def parse_record(
    data: bytes,
    *,
    where: str,
    stem: str | None = None,
    strict: bool = False,
    max_body_bytes: int = MAX_BODY_BYTES,
) -> Record:
    """Parse a record file's bytes.

    ``where`` names the file in errors. ``stem`` (the file name without ``.md``) is given for
    files read from a directory: it becomes the key when the frontmatter ``name`` is not a slug
    and it drives type inference. ``strict`` refuses unknown or missing types and non-slug
    names instead of inferring them.
    """
    fm_text, body = split_frontmatter(data, where=where)
    if fm_text is None:
        raise RecordError(f"{where}: no YAML frontmatter (file must start with '---')")
    if len(fm_text.encode("utf-8")) > MAX_FRONTMATTER_BYTES:
        raise RecordError(f"{where}: frontmatter over {MAX_FRONTMATTER_BYTES} bytes")
    if len(body.encode("utf-8")) > max_body_bytes:
        raise RecordError(f"{where}: body over {max_body_bytes} bytes")
    meta = load_yaml_mapping(fm_text, where=where)

    raw_name = meta.pop("name", None)
    raw_type = meta.pop("type", None)
    raw_desc = meta.pop("description", None)
    metadata = meta.get("metadata")
    if raw_type is None and isinstance(metadata, dict) and "type" in metadata:
        raw_type = metadata["type"]

    title: str | None = None
    name_text = "" if raw_name is None else str(raw_name).strip()
    if NAME_RE.match(name_text) and (stem is None or slugify(stem) == name_text or strict):
        name = name_text
    elif strict:
        raise RecordError(f"{where}: name {name_text!r} is not a slug like 'prefers-tabs'")
    else:
        name = slugify(stem) if stem else slugify(name_text or "record")
        title = name_text or None

    type_text = "" if raw_type is None else str(raw_type).strip().lower()
    if type_text not in TYPES:
        if strict:
            raise RecordError(
                f"{where}: type {type_text or '(missing)'!r} is not one of {', '.join(TYPES)}"
            )
        type_text = infer_type(stem or name)

    desc = "" if raw_desc is None else " ".join(str(raw_desc).split())
    if not desc:
        if strict:
            raise RecordError(f"{where}: description is missing")
        first = next((ln.strip("#-* ").strip() for ln in body.splitlines() if ln.strip()), "")
        desc = (title or first or name)[:200]
    return Record(
        name=name,
        type=type_text,
        description=desc,
        body=_clean_body(body),
        extra=meta,
        title=title,
    )


def validate_fields(item: Any, *, where: str, optional: tuple[str, ...] = ()) -> Record:
    """Validate a record proposed by a model, the CLI or a job: exactly the four fields.

    ``optional`` names further fields allowed (``OPTIONAL_FIELDS`` for people and programs;
    a model's answer gets none). Raises RecordError naming the offending field.
    """
    if not isinstance(item, dict):
        raise RecordError(f"{where}: record must be an object, got {type(item).__name__}")
    keys = set(item) - {k for k in optional if k in item}
    if keys != set(FIELDS):
        missing = sorted(set(FIELDS) - keys)
        extra = sorted(keys - set(FIELDS))
        parts = []
        if missing:
            parts.append("missing " + ", ".join(missing))
        if extra:
            parts.append("unexpected " + ", ".join(extra))
        raise RecordError(f"{where}: record fields must be exactly {', '.join(FIELDS)} ({'; '.join(parts)})")
    for key in FIELDS:
        if not isinstance(item[key], str):
            raise RecordError(f"{where}: {key} must be a string")
    return make_record(
        item["name"], item["type"], item["description"], item["body"], where=where,
        importance=item.get("importance"), expires=item.get("expires"),
    )  # fmt: skip


def make_record(
    name: str,
    type_: str,
    description: str,
    body: str,
    *,
    where: str = "record",
    extra: Mapping[str, Any] | None = None,
    importance: Any = None,
    expires: Any = None,
) -> Record:
    """Build a Record dreamd will write, enforcing the rules for records dreamd creates.

    ``importance`` (a number from 0 to 1) and ``expires`` (an ISO date, ``YYYY-MM-DD``) are
    optional frontmatter fields (DESIGN §2.1); ``None`` leaves them out.
    """
    if not NAME_RE.match(name):
        raise RecordError(f"{where}: name {name!r} must match {NAME_RE.pattern}")
    if type_ not in TYPES:
        raise RecordError(f"{where}: type {type_!r} is not one of {', '.join(TYPES)}")
    desc = description.strip()
    if not desc:
        raise RecordError(f"{where}: description is empty")
    if "\n" in desc or "\r" in desc:
        raise RecordError(f"{where}: description must be one line")
    desc = " ".join(desc.split())  # as parse_record reads it back
    if len(desc) > MAX_DESCRIPTION_CHARS:
        raise RecordError(f"{where}: description over {MAX_DESCRIPTION_CHARS} characters")
    if not body.strip():
        raise RecordError(f"{where}: body is empty")
    clean = _clean_body(body.replace("\r\n", "\n").replace("\r", "\n"))
    if len(clean.encode("utf-8")) > MAX_BODY_BYTES:
        raise RecordError(f"{where}: body over {MAX_BODY_BYTES} bytes")
    meta = dict(extra or {})
    if importance is not None:
        meta["importance"] = check_importance(importance, where=where)
    if expires is not None:
        meta["expires"] = check_expires(expires, where=where)
    return Record(name=name, type=type_, description=desc, body=clean, extra=meta)


def check_importance(value: Any, *, where: str) -> float:
    """``importance`` as a float in [0, 1] (RecordError naming ``where`` otherwise)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise RecordError(f"{where}: importance must be a number from 0 to 1, got {value!r}")
    return float(value)


def check_expires(value: Any, *, where: str) -> str:
    """``expires`` as an ISO date string ``YYYY-MM-DD`` (RecordError naming ``where`` otherwise)."""
    import datetime as dt

    if isinstance(value, dt.date) and not isinstance(value, dt.datetime):
        return value.isoformat()
    if isinstance(value, str) and re.fullmatch(r"\d{4}-\d{2}-\d{2}", value.strip()):
        try:
            return dt.date.fromisoformat(value.strip()).isoformat()
        except ValueError:
            pass
    raise RecordError(f"{where}: expires must be a date like 2026-12-31, got {value!r}")


def render_record(record: Record) -> bytes:
    """Render a record dreamd writes. ``parse_record(render_record(r))`` gives ``r`` back."""
    head: dict[str, Any] = {
        "name": record.name,
        "description": record.description,
        "type": record.type,
    }
    head.update(record.extra)
    import yaml

    fm = yaml.safe_dump(head, sort_keys=False, allow_unicode=True, width=10_000)
    return f"---\n{fm}---\n{record.body}".encode()
