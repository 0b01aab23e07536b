"""Every numeric key of docs/scenarios.md ("Numeric keys") tried with nan, inf, -inf, a negative
value, zero, its documented minimum and its documented maximum + 1: each is accepted exactly when
the table says it is in range, and otherwise refused as a ScenarioError naming the key's path."""

from __future__ import annotations

import math
import re
from decimal import Decimal

import pytest

import tcplab
from conftest import REPO

DOC = REPO / "docs" / "scenarios.md"

BASES = {
    "single_link": {
        "topology": {"kind": "single_link", "rate": "10Mbps", "delay": "10ms"},
        "flows": [{"bytes": 1000}],
        "series": [{"kind": "tcp"}],
    },
    "dumbbell": {
        "topology": {"kind": "dumbbell", "pairs": 1, "access_rate": "100Mbps", "access_delay": "1ms",
                     "bottleneck_rate": "10Mbps", "bottleneck_delay": "10ms"},
        "flows": [{"from": "s1", "to": "r1", "bytes": 1000}],
    },
    "custom": {
        "topology": {"kind": "custom", "nodes": ["a", "b"], "links": [{"a": "a", "b": "b", "rate": "1Mbps", "delay": "1ms"}]},
        "flows": [{"from": "a", "to": "b", "bytes": 1000}],
    },
}


def rows() -> list:
    text = DOC.read_text(encoding="utf-8")
    section = text.split("### Numeric keys", 1)[1].split("\n#", 1)[0]
    out = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 5 or not cells[0].startswith("`"):
            continue
        key, kind, lo, hi, given = cells
        out.append((key.strip("`"), kind, lo.strip("`"), hi.strip("`"), re.findall(r"`([^`]*)`", given)))
    return out


ROWS = rows()


def test_the_table_is_there_and_covers_the_schema():
    keys = {r[0] for r in ROWS}
    assert len(ROWS) >= 50
    for k in ["duration", "topology.loss", "tcp.mss", "tcp.rto_backoff", "flows.0.count", "flows.0.think", "topology.pairs"]:
        assert k in keys


def magnitude(kind: str, s: str) -> Decimal:
    """The number of a documented bound (`4611686018427387904ns`, `1bps`, `65495`)."""
    return Decimal(re.fullmatch(r"(-?[0-9.e+]+)(ns|bps)?", s).group(1))


def written(kind: str, v) -> str:
    """A value as an override writes it for `kind`: units where the kind needs them, and bare
    `nan`/`inf` (which no unit makes finite)."""
    if isinstance(v, float) and not math.isfinite(v):
        return {"nan": "nan", "inf": "inf", "-inf": "-inf"}[repr(v)]
    unit = {"duration": "ns", "rate": "bps"}.get(kind)
    if unit:
        return f'"{v}{unit}"'
    return str(v)


def display(key: str) -> str:
    return re.sub(r"\.(\d+)", r"[\1]", key)


def trials(kind: str, lo: str, hi: str):
    """(value, accepted?) for the walk."""
    lo_n, hi_n = magnitude(kind, lo), magnitude(kind, hi)
    out = [(math.nan, False), (math.inf, False), (-math.inf, False), (-1, False), (0, lo_n <= 0 <= hi_n)]
    step = 1 if kind in ("integer", "size", "duration", "rate") or hi_n == hi_n.to_integral_value() else Decimal("0.5")
    above = hi_n + step
    if float(above) != float(hi_n):  # a maximum a float cannot exceed by one is "any finite number"
        out.append((int(above) if above == above.to_integral_value() else float(above), False))
    out.append((int(lo_n) if lo_n == lo_n.to_integral_value() else float(lo_n), True))
    return out


@pytest.mark.parametrize("key, kind, lo, hi, given", ROWS, ids=[r[0] for r in ROWS])
def test_each_numeric_key_at_and_beyond_its_range(key, kind, lo, hi, given):
    base_kind = next((g.split("=", 1)[1].strip('"') for g in given if g.startswith("topology.kind=")), "single_link")
    base = BASES[base_kind]
    sets = [g for g in given if not g.startswith("topology.kind=")]
    partners = {display(g.split("=", 1)[0]) for g in sets}
    for value, accepted in trials(kind, lo, hi):
        override = f"{key}={written(kind, value)}"
        try:
            tcplab.validate(base, sets=sets + [override])
            outcome = None
        except tcplab.ScenarioError as e:
            outcome = e
        if accepted:
            assert outcome is None, f"{override}: documented as valid, refused: {outcome}"
        else:
            assert outcome is not None, f"{override}: documented as out of range, accepted"
            assert outcome.path == display(key) or outcome.path in partners, f"{override}: refused at {outcome.path!r}: {outcome}"
            assert outcome.reason
