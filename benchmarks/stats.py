"""Percentiles for the benchmark scripts (one definition: nearest rank on the sorted samples)."""

from __future__ import annotations


def pct(values: list[float], q: float) -> float:
    """The ``q`` quantile (0–1) of ``values``: the sample at rank ``round(q * (n - 1))``; NaN
    when there are none."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]
