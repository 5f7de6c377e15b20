"""The stdlib loggers of ``memory.*``, with :mod:`logging` imported at the first message.

``import logging`` costs a command's start-up about 9 ms (it brings ``traceback``, ``string``,
``weakref`` and ``threading``: issue 20), and the readers ``dreamd status``, ``log``, ``recall``
and ``doctor`` log nothing on a healthy directory. A module keeps ``log = get_logger(name)`` at
import as before; :mod:`logging` and ``logging.getLogger(name)`` are looked up at the first
attribute used, and every call goes to that real logger (handlers, levels, ``caplog`` as usual).
A command that wants its own handler for these lines (``dreamd recall``'s one-line format) hands
it to :func:`configure_at_first_use`, so it too is only set up when a line is written.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing is a start-up cost too
if TYPE_CHECKING:
    import logging
    from collections.abc import Callable

__all__ = ["configure_at_first_use", "get_logger"]

_pending_setup: list[Callable[[], None]] = []


class _LazyLogger:
    __slots__ = ("_logger", "_name")

    def __init__(self, name: str) -> None:
        self._name = name
        self._logger: logging.Logger | None = None

    def __getattr__(self, attr: str) -> object:
        logger = self._logger
        if logger is None:
            while _pending_setup:
                _pending_setup.pop(0)()
            import logging

            logger = self._logger = logging.getLogger(self._name)
        return getattr(logger, attr)

    def __repr__(self) -> str:
        return f"<lazy logger {self._name}>"


def get_logger(name: str) -> logging.Logger:
    """``logging.getLogger(name)``, resolved at its first use (see the module docstring)."""
    logger: logging.Logger = _LazyLogger(name)  # type: ignore[assignment]
    return logger


def configure_at_first_use(setup: Callable[[], None]) -> None:
    """Run ``setup`` (say, ``logging.basicConfig(...)``) before the first of these loggers is
    used; at once when :mod:`logging` is already imported (someone may be logging already)."""
    import sys

    if "logging" in sys.modules:
        setup()
    else:
        _pending_setup.append(setup)
