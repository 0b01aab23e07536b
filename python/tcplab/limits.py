"""Limits on runs: the wall time and events a single run may spend (`tcplab.run(max_wall=,
max_events=)`), and the time and memory each run of a sweep may take (`run_timeout`,
`run_memory`). The values are written as in scenarios: `"10s"`, `"2min"`, `"2GB"` (KB = 1024 B).
See docs/sweeps.md#limits-on-runs.
"""

from __future__ import annotations

import math
import operator
from typing import Any, Optional

from . import units
from ._core import RunLimitError

__all__ = ["RunLimitError", "seconds", "size_bytes", "events", "MAX_SECONDS"]

# The longest wall time a run may be given (`max_wall`, `--max-wall`, `run_timeout`,
# `--run-timeout`): 10^9 s, about 31 years. The clock cannot hold a deadline past about 9.2e18 s.
MAX_SECONDS = 1e9

def _quantity(value: Any, read, what: str, example: str) -> float:
    """A positive quantity: a number in the base unit (seconds, bytes), or a string with a unit
    read by the core's own parser (`tcplab.units`), so `"2GB"` means here what it means in a
    scenario."""
    if isinstance(value, bool):
        raise ValueError(f"{what}: expected a number or a string such as {example!r}, got {value!r}")
    if isinstance(value, (int, float)) or (hasattr(value, "item") and not isinstance(value, str)):
        x = float(value)
    elif isinstance(value, str):
        try:
            x = float(value)
        except ValueError:
            try:
                x = read(value.strip(), what)
            except ValueError as e:
                raise ValueError(f"{what}: {value!r} is not a quantity such as {example!r} ({str(e).removeprefix(what + ': ')})") from None
    else:
        raise ValueError(f"{what}: expected a number or a string such as {example!r}, got {value!r}")
    if not math.isfinite(x) or x <= 0:
        raise ValueError(f"{what}: must be more than 0, got {value!r}")
    return x


def seconds(value: Any, what: str) -> Optional[float]:
    """A duration in seconds: a number of seconds, or a string with a unit (`"10s"`, `"2min"`)."""
    if value is None:
        return None
    try:
        x = _quantity(value, units.seconds, what, "10s")
    except ValueError as e:
        if "beyond the largest" not in str(e):
            raise
        x = math.inf  # past what the core's clock holds: past MAX_SECONDS too
    if x > MAX_SECONDS:
        raise ValueError(f"{what}: at most {MAX_SECONDS:g} s (about 31 years), got {value!r}")
    return x


def size_bytes(value: Any, what: str) -> Optional[int]:
    """A size in bytes: a number of bytes, or a string with a unit (`"2GB"`, 1 KB = 1024 B)."""
    if value is None:
        return None
    return int(_quantity(value, units.size_bytes, what, "2GB"))


def events(value: Any, what: str = "max_events") -> Optional[int]:
    """A number of events: an integer from 1 to 2**64 - 1 (a seed's range, less 0)."""
    if value is None:
        return None
    try:
        n = seed(value)
    except ValueError:
        n = 0
    if n < 1:
        raise ValueError(f"{what}: expected an integer from 1 to 2**64 - 1, got {value!r}")
    return n


def seed(seed: Any) -> Optional[int]:
    """A seed: an integer from 0 to 2**64 - 1 (int or numpy integer, not bool), or None."""
    if seed is None:
        return None
    try:
        if isinstance(seed, bool):
            raise TypeError
        n = operator.index(seed)  # int and numpy integers
    except TypeError:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}") from None
    if not 0 <= n < 2**64:
        raise ValueError(f"seed must be an integer from 0 to 2**64 - 1, got {seed!r}")
    return n
