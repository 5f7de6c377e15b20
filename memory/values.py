"""Frozen value classes on the start-up path, without dataclass code generation.

``@dataclass(frozen=True)`` writes six methods per class as source text and ``exec``\\ s them when
its module is imported: about a millisecond a class, and ``dreamd status``, ``recall`` and
``doctor`` build the config's eight sections on every run (issue 20: each command within 3×
``python -c pass``). A :class:`FrozenValue` subclass names its fields in ``__slots__`` (in
order, hence ``noqa: RUF023``) and stores them from a typed ``__init__`` with :meth:`FrozenValue.set_fields`; equality,
hashing, ``repr``, :meth:`~FrozenValue.replace` and :meth:`~FrozenValue.to_dict` are derived
from those fields as a frozen dataclass derives them. ``dataclasses.replace``/``asdict`` do not
apply to these classes: use the methods.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing is a start-up cost too
if TYPE_CHECKING:
    from typing import Any, Self

__all__ = ["FrozenError", "FrozenValue"]


class FrozenError(AttributeError):
    """A field of a :class:`FrozenValue` was assigned or deleted (``dataclasses.FrozenInstanceError``'s role)."""


class FrozenValue:
    """Base of a frozen value: fields in ``__slots__``, set once by :meth:`set_fields`."""

    __slots__: tuple[str, ...] = ()

    def set_fields(self, **values: Any) -> None:
        """Store every field (all of ``__slots__``, no other name), once: from ``__init__``."""
        fields = type(self).__slots__
        if fields and hasattr(self, fields[0]):
            raise FrozenError(f"{type(self).__name__} is frozen: its fields are set once")
        if set(values) != set(fields):
            raise TypeError(f"{type(self).__name__}: fields {sorted(fields)}, got {sorted(values)}")
        for name in fields:
            object.__setattr__(self, name, values[name])

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in type(self).__slots__)

    def to_dict(self) -> dict[str, Any]:
        """Field name → value, in field order (shallow: a field holding a value stays one)."""
        return {name: getattr(self, name) for name in type(self).__slots__}

    def replace(self, **changes: Any) -> Self:
        """A copy with ``changes`` (``dataclasses.replace``): an unknown name is a TypeError."""
        return type(self)(**{**self.to_dict(), **changes})

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in type(self).__slots__)
        return f"{type(self).__qualname__}({shown})"

    def __setattr__(self, name: str, value: object) -> None:
        raise FrozenError(f"cannot assign to field {name!r} of frozen {type(self).__name__}")

    def __delattr__(self, name: str) -> None:
        raise FrozenError(f"cannot delete field {name!r} of frozen {type(self).__name__}")

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (type(self), self.to_dict()))


def _rebuild(cls: type[FrozenValue], values: dict[str, Any]) -> FrozenValue:
    return cls(**values)
