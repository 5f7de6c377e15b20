"""Value classes on the start-up path, without dataclass code generation.

``@dataclass`` writes its methods per class as source text and ``exec``\\ s them when its module
is imported (about a millisecond a class), and importing :mod:`dataclasses` brings ``inspect``,
``ast``, ``dis`` and ``tokenize`` with it: ``dreamd status``, ``recall`` and ``doctor`` build the
config's eight sections and read the store's records and manifest on every run (issue 20: each
command within 3× ``python -c pass``). A :class:`Value` or :class:`FrozenValue` subclass names
its fields in ``__slots__`` (in order, hence ``noqa: RUF023``) and stores them from a typed
``__init__`` with :meth:`Value.set_fields`; equality, ``repr``, :meth:`~Value.replace` and
:meth:`~Value.to_dict` are derived from those fields as a dataclass derives them, and a
:class:`FrozenValue` is also hashed by them and refuses assignment (``frozen=True``), while a
plain :class:`Value` is mutable and unhashable (a dataclass with ``eq`` and without ``frozen``).
``dataclasses.replace``/``asdict`` do not apply to these classes: use the methods.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing is a start-up cost too
if TYPE_CHECKING:
    from typing import Any, ClassVar, Self

__all__ = ["FrozenError", "FrozenValue", "Value"]


class FrozenError(AttributeError):
    """A field of a :class:`FrozenValue` was assigned or deleted (``dataclasses.FrozenInstanceError``'s role)."""


class Value:
    """Base of a mutable value: fields in ``__slots__``, set by :meth:`set_fields` from ``__init__``.

    Every value can be weakly referenced, as a dataclass instance can (the base's one slot is
    ``__weakref__``; a subclass's ``__slots__`` are its fields only)."""

    __slots__: tuple[str, ...] = ("__weakref__",)
    __hash__: ClassVar[None] = None  # type: ignore[assignment]  # mutable and compared by value

    def set_fields(self, **values: Any) -> None:
        """Store every field (all of ``__slots__``, no other name): from ``__init__``."""
        fields = type(self).__slots__
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
        return self._values() == other._values()

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in type(self).__slots__)
        return f"{type(self).__qualname__}({shown})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (type(self), self.to_dict()))


class FrozenValue(Value):
    """Base of a frozen value: fields in ``__slots__``, set once by :meth:`set_fields`."""

    __slots__: tuple[str, ...] = ()

    def set_fields(self, **values: Any) -> None:
        """Store every field (all of ``__slots__``, no other name), once: from ``__init__``."""
        fields = type(self).__slots__
        if fields and hasattr(self, fields[0]):
            raise FrozenError(f"{type(self).__name__} is frozen: its fields are set once")
        super().set_fields(**values)

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(self._values())

    def __setattr__(self, name: str, value: object) -> None:
        raise FrozenError(f"cannot assign to field {name!r} of frozen {type(self).__name__}")

    def __delattr__(self, name: str) -> None:
        raise FrozenError(f"cannot delete field {name!r} of frozen {type(self).__name__}")


def _rebuild(cls: type[Value], values: dict[str, Any]) -> Value:
    return cls(**values)
