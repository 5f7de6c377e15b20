"""The values every extraction rule shares: where a sentence was said (:class:`Ctx`) and what a
rule recognised in it (:class:`Found`), and the shape of a rule (:data:`Rule`).

A rule looks at the *core* of one sentence (lead-ins peeled, see
:mod:`dreamd.models.offline.extract.structure`) with its :class:`Ctx` and returns a :class:`Found`
or None; :mod:`dreamd.models.offline.extract.pipeline` shapes a :class:`Found` into a record.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass
class Found:
    """A sentence a rule recognised: the record's parts before names and dates are settled.

    ``fact`` becomes the body's first line, ``slug_source`` the words the name is made of
    (after ``name_prefix``); ``priority`` 0 marks explicit remember-requests; ``said`` is the
    user's own words the fact came from (kept in the body when the fact line rewords them).
    """

    kind: str
    type: str
    name_prefix: str
    slug_source: str
    fact: str
    description: str
    reason: str | None = None
    how: str | None = None
    priority: int = 1
    extra_lines: list[str] = field(default_factory=list)
    said: str | None = None


@dataclass(frozen=True)
class Ctx:
    """Where a sentence was said: who said it, on which day, what came next, what led it in."""

    role: str
    day: dt.date
    next_sentence: str | None
    standing: bool = False
    remember: bool = False


Rule = Callable[[str, Ctx], Found | None]


__all__ = ["Ctx", "Found", "Rule"]
