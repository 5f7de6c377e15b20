"""The one fake clock of the tests: time moves only when a test moves it (no sleeps).

``FakeClock(now)`` is a callable returning ``now`` — a float for monotonic/epoch clocks, a
datetime for wall clocks; ``advance(seconds)`` moves it, and with ``step`` every call first moves
it by ``step`` seconds (for code that reads the clock before and after something it times).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Generic, TypeVar

T = TypeVar("T", float, datetime)


class FakeClock(Generic[T]):
    def __init__(self, now: T, *, step: float = 0.0) -> None:
        self.now: T = now
        self.step = step

    def __call__(self) -> T:
        if self.step:
            self.advance(self.step)
        return self.now

    def advance(self, seconds: float) -> None:
        if isinstance(self.now, datetime):
            self.now = self.now + timedelta(seconds=seconds)
        else:
            self.now = self.now + seconds
