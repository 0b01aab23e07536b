"""The units of a scenario, read by the core's own parser (crates/tcplab-core/src/units.rs).

Python never parses a duration, size or rate itself: each reader here hands the text to the core
(`_core.quantity`), so `"1.5s"`, `"16KB"` (16·1024 B), `"10kB"` (10·1000 B) or `"28.8kbps"` mean in
Python exactly what they mean in a scenario, with the core's limits and messages. A plain number
is taken in the base unit where the scenario schema takes one (sizes in bytes); a duration or a
rate needs its unit, as in a scenario.
"""

from __future__ import annotations

from typing import Any

from . import _core

__all__ = ["duration_ns", "seconds", "size_bytes", "rate_bps", "initial_window_segments"]


def _text(value: Any, what: str, example: str) -> str:
    if isinstance(value, str):
        return value
    raise ValueError(f"{what}: expected a string with a unit such as {example!r}, got {value!r}")


def duration_ns(value: Any, what: str = "duration") -> int:
    """A scenario duration (`"35ms"`, `"1.5s"`) in nanoseconds."""
    try:
        return _core.quantity("duration", _text(value, what, "35ms"))
    except ValueError as e:
        raise ValueError(f"{what}: {e}") from None


def seconds(value: Any, what: str = "duration") -> float:
    """A scenario duration in seconds."""
    return duration_ns(value, what) / 1e9


def size_bytes(value: Any, what: str = "size") -> int:
    """A scenario size (`"16KB"`, `"1460B"`, or a number of bytes) in bytes."""
    if isinstance(value, int) and not isinstance(value, bool):
        if value < 0:
            raise ValueError(f"{what}: expected a non-negative size, got {value!r}")
        return value
    try:
        return _core.quantity("size", _text(value, what, "16KB"))
    except ValueError as e:
        raise ValueError(f"{what}: {e}") from None


def rate_bps(value: Any, what: str = "rate") -> int:
    """A scenario rate (`"10Mbps"`, `"28.8kbps"`) in bits per second."""
    try:
        return _core.quantity("rate", _text(value, what, "10Mbps"))
    except ValueError as e:
        raise ValueError(f"{what}: {e}") from None


def initial_window_segments(value: Any, mss: int, what: str = "initial_window") -> int:
    """The whole segments of a resolved `initial_window` (`10`, `"rfc3390"`, `"4380B"`,
    `{"segments": 4, "bytes": "4KB"}`) at this MSS, as the core's sender computes them
    (`InitialWindow::bytes`: RFC 3390, RFC 6928, Allman et al.'s lesser of two limits)."""
    import json

    try:
        return _core.initial_window_bytes(json.dumps(value), int(mss)) // int(mss)
    except ValueError as e:
        raise ValueError(f"{what}: {e}") from None
