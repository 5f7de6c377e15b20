"""Cutting inputs that are too big for one model call, without dropping any of them.

Two places meet a model's limits (issue 10, item 5):

- **Extraction windows.** A long session does not fit one prompt. :func:`windows` cuts the
  turns after a session's cursor into windows, oldest first, each rendering within the input
  budget. Every turn is in exactly one window, whole, except a single turn longer than the
  budget, which gets windows of its own, one slice each, in order. A window that ends on a
  turn boundary carries the cursor value to commit with its records; a slice that is not the
  last of its turn carries none (the cursor can only move over whole turns, so its records
  wait for the turn's last slice).
- **Plan batches.** :func:`plan_batches` cuts a set into disjoint batches: the candidate
  groups of :mod:`dreamd.models.candidates` first, each whole in one batch, then the other
  records (same type together, name order); :func:`halves` splits one the model refused (a
  ``max_tokens`` stop grows with the batch) so each half can be planned again, down to
  ``MIN_PLAN_BATCH``.

Pure functions over values: the caller (:mod:`dreamd.jobs.work`) does the calls and commits.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

from memory.transcripts import Turn, render_turn

__all__ = ["MIN_PLAN_BATCH", "PLAN_BATCH", "Window", "halves", "plan_batches", "windows"]

T = TypeVar("T")


class _Typed(Protocol):
    """A record as batching sees it (``PlanRecord``, ``Record``): its type and its name."""

    @property
    def type(self) -> str: ...

    @property
    def name(self) -> str: ...


R = TypeVar("R", bound=_Typed)

PLAN_BATCH = 120
"""Records per plan call. One answer must fit in ``max_tokens``; past a few hundred records a
whole-set plan is truncated (and refused) for good, so large sets are planned in batches."""

MIN_PLAN_BATCH = 8
"""A refused batch is split in halves while it holds more than this many records. A model
that refuses everything then costs about ``2 n / MIN_PLAN_BATCH`` calls, not ``2 n``."""


@dataclass(frozen=True)
class Window:
    """Turns for one extraction call.

    ``start`` is the cursor before it (turns of the transcript already consumed); ``end`` the
    cursor to commit with its records, or None for a slice that is not its turn's last.
    """

    turns: list[Turn]
    start: int
    end: int | None

    @property
    def chars(self) -> int:
        return len("\n".join(render_turn(t) for t in self.turns))


def _slices(turn: Turn, max_chars: int) -> list[Turn]:
    header = len(render_turn(Turn(turn.role, "", turn.timestamp, turn.message_id)))
    room = max_chars - header
    if room < 1:
        raise ValueError(f"extraction budget of {max_chars} characters cannot hold one turn header")
    return [
        Turn(turn.role, turn.text[i : i + room], turn.timestamp, turn.message_id)
        for i in range(0, len(turn.text), room)
    ] or [turn]


def windows(turns: Sequence[Turn], start: int, max_chars: int) -> list[Window]:
    """The turns after ``start`` (``turns`` is what follows the cursor) in windows of at most
    ``max_chars`` rendered characters, oldest first (see the module docstring).

    Invariants: the windows' turns, slices joined, are ``turns`` in order; every window renders
    within ``max_chars``; the last window's ``end`` is ``start + len(turns)``.
    """
    out: list[Window] = []
    pending: list[Turn] = []
    used = 0
    first = start
    for i, turn in enumerate(turns):
        position = start + i
        cost = len(render_turn(turn)) + (1 if pending else 0)
        if pending and used + cost > max_chars:
            out.append(Window(pending, first, position))
            pending, used, first = [], 0, position
            cost = len(render_turn(turn))
        if cost <= max_chars:
            pending.append(turn)
            used += cost
            continue
        pieces = _slices(turn, max_chars)
        for k, piece in enumerate(pieces):
            last = k == len(pieces) - 1
            out.append(Window([piece], position, position + 1 if last else None))
        first = position + 1
    if pending:
        out.append(Window(pending, first, start + len(turns)))
    return out


def plan_batches(
    records: Sequence[R],
    size: int,
    groups: Sequence[Sequence[int]] = (),
    *,
    cost: Callable[[Sequence[R]], int] | None = None,
    budget: int | None = None,
) -> list[list[R]]:
    """Disjoint batches of at most ``size`` covering ``records``, always at least one (an empty
    set still yields one, empty, plan call).

    ``groups`` (positions in ``records``, disjoint, each at most ``size``: what
    :func:`dreamd.models.candidates.candidate_groups` gives) are kept whole, each in one batch:
    filled in order of their first record (type, then name), a group that does not fit the
    open batch opening the next. The records in no group follow, of one type together and in
    name order (each its own unit). Without groups that is the whole set in type and name order.

    ``cost`` of a unit (a group, or one loose record) and ``budget`` bound a batch's answer
    too: a batch of many groups asks for many merges, and an answer cut at ``max_tokens`` is
    refused and planned again in halves (paying twice). A unit over the budget alone still
    gets a batch of its own."""
    placed: set[int] = set()
    for g in groups:
        placed.update(g)
    whole = [sorted((records[i] for i in g), key=_type_name) for g in groups if g]
    whole = [g[k : k + size] for g in whole for k in range(0, len(g), size)]  # never over size
    units = sorted(whole, key=lambda g: _type_name(g[0]))
    units += [[r] for r in sorted((r for i, r in enumerate(records) if i not in placed), key=_type_name)]
    out: list[list[R]] = []
    current: list[R] = []
    spent = 0
    for unit in units:
        price = cost(unit) if cost is not None and budget is not None else 0
        over = budget is not None and cost is not None and spent + price > budget
        if current and (len(current) + len(unit) > size or over):
            out.append(current)
            current, spent = [], 0
        current.extend(unit)
        spent += price
    if current or not out:
        out.append(current)
    return out


def _type_name(record: _Typed) -> tuple[str, str]:
    return (str(record.type), str(record.name))


def halves(
    batch: Sequence[T], minimum: int = MIN_PLAN_BATCH, group: Callable[[T], object] | None = None
) -> list[list[T]] | None:
    """The two halves of a refused batch, or None when it is too small to split further.

    With ``group`` (a record's candidate group; None for a record in none) the cut falls on
    the boundary between two groups nearest the middle, so a group stays whole where it can
    (a merge needs both records in one call); a batch that is one group is cut in the middle."""
    if len(batch) <= minimum or len(batch) < 2:
        return None
    mid = len(batch) // 2
    if group is not None:
        keys = [group(r) for r in batch]
        cuts = [i for i in range(1, len(batch)) if keys[i] is None or keys[i] != keys[i - 1]]
        if cuts:
            mid = min(cuts, key=lambda i: (abs(i - len(batch) / 2), i))
    return [list(batch[:mid]), list(batch[mid:])]
