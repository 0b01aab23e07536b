"""Two step series compared on one time grid: a window sampled at irregular times (the kernel's
`ss -tin` rows) against another (the simulator's `tcp` series), as the `cwnd` and `ecn`
experiments compare them. Each value holds from its time to the next sample."""

from __future__ import annotations

import math
import statistics as st
from typing import Sequence

#: Grid points within this of a sample's time count as at or after it (i·step in floating point).
EPS_S = 1e-12


def grid(end: float, step: float, inclusive: bool = False) -> list:
    """0, step, 2·step, ... below `end` (up to and including it with `inclusive`)."""
    n = int(math.floor(end / step + 1e-9)) + 1 if inclusive else max(0, int(math.ceil(end / step - 1e-9)))
    return [i * step for i in range(n)]


def step_at(times: Sequence[float], values: Sequence, points: Sequence[float]) -> list:
    """The value of a step series at each of `points` (non-decreasing): the last value at or
    before it, None before the first sample."""
    out, j, n = [], -1, len(times)
    for g in points:
        while j + 1 < n and times[j + 1] <= g + EPS_S:
            j += 1
        out.append(values[j] if j >= 0 else None)
    return out


def relative_error(ref: Sequence, other: Sequence) -> dict:
    """|other − ref| / ref at the points where both have a value and ref > 0: how many, their
    median and their 90th percentile (the value at index ⌊0.9·n⌋ of the sorted errors); None
    without such points."""
    errs = sorted(abs(b - a) / a for a, b in zip(ref, other) if a is not None and b is not None and a > 0)
    if not errs:
        return {"points": 0, "median": None, "p90": None}
    return {"points": len(errs), "median": st.median(errs), "p90": errs[min(len(errs) - 1, int(0.9 * len(errs)))]}


def first_at(start: float, step: float) -> int:
    """The index of the first grid point at or after `start`."""
    return int(math.ceil(start / step - 1e-9))


__all__ = ["grid", "step_at", "relative_error", "first_at"]
