"""Segment by segment: does the simulator send what the kernel sent?

Two captures at the data sender (the real one and the simulated one) are read with
`tcplab.trace.packets`; for one connection (found by its client port) the data sender's segments
(SYN, data, FIN: everything of the data direction that is not a pure ACK) are compared in order,
by (relative sequence number, payload length, SYN/FIN/RST). PSH is compared apart (`psh_same`,
`psh_first_diff`): the `linux` profile sets it where the kernel does (the last segment of each
skb of two segments or more, and the write queue's pushes: tcp/tso.rs `psh_at`), and Linux's
receiver reads it (a full segment with PSH is ACKed at the read), but other profiles set none.
Send times are compared from the first SYN: within max(1 ms, 2 % of the time since it).

`match(real, sim, port)` says how many segments agree, where the first difference is and what
each side sent there.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Optional, Tuple

#: The segments the `drops` experiment compares (and transfers): the data sender's first 500.
DROP_SEGMENTS = 500

#: A segment as compared: (relative seq, payload bytes, flags among S, F, R).
Seg = Tuple[int, int, str]


@dataclass
class SegMatch:
    port: int
    compared: int                    # segments compared (the shorter side, at most `n`)
    real_n: int
    sim_n: int
    same: int                        # leading segments with the same (seq, len, flags)
    timed: int                       # of those, sent within the time tolerance
    first_diff: Optional[int] = None  # index of the first segment that differs, None if none
    real_at: List[Tuple[float, Seg]] = field(default_factory=list)  # a few segments from the first difference
    sim_at: List[Tuple[float, Seg]] = field(default_factory=list)
    worst_dt_ms: float = 0.0         # the largest |Δt| among the identical leading segments
    late: Optional[int] = None       # index of the first identical segment sent out of tolerance
    psh_same: int = 0                # of the identical leading segments, those with PSH on both or neither
    psh_first_diff: Optional[int] = None  # index of the first of them with PSH on one side only

    @property
    def ok(self) -> bool:
        return self.first_diff is None and self.late is None

    def describe(self) -> str:
        if self.ok:
            return f"identical: {self.compared} segments, |Δt| ≤ {self.worst_dt_ms:.2f} ms"
        if self.first_diff is None:
            return f"same segments, but segment {self.late} is sent {self.worst_dt_ms:.2f} ms apart (tolerance max(1 ms, 2 %))"

        def fmt(x):
            t, (seq, ln, fl) = x
            return f"{t * 1e3:.1f} ms seq {seq} len {ln}{(' ' + fl) if fl else ''}"

        r = "; ".join(fmt(x) for x in self.real_at) or "nothing"
        s = "; ".join(fmt(x) for x in self.sim_at) or "nothing"
        return f"first difference at segment {self.first_diff}: kernel {r} | simulator {s}"


def _segments(path, port: int, n: int) -> List[Tuple[float, Seg, bool]]:
    """The data sender's segments (not pure ACKs) of the connection whose client port is `port`,
    in capture order, times from its first SYN, each with whether it carries PSH."""
    from .. import trace

    conns = trace.analyze(path)
    conns = conns[conns["a"].astype(str).str.endswith(f":{port}")]
    if conns.empty:
        return []
    pk = trace.packets(path)
    conn = int(conns["conn"].iloc[0])
    c = pk[pk["conn"] == conn]
    # The data direction: the one with more payload bytes.
    by = c.groupby("dir", observed=True)["len"].sum()
    d = str(by.idxmax()) if len(by) else "a2b"
    c = c[c["dir"] == d]
    t0 = float(c["time_s"].iloc[0]) if len(c) else 0.0
    out = []
    for t, seq, ln, syn, fin, rst, fl in zip(c["time_s"], c["seq"], c["len"], c["syn"], c["fin"], c["rst"], c["tcp_flags"]):
        if int(ln) == 0 and not (syn or fin or rst):
            continue
        flags = ("S" if syn else "") + ("F" if fin else "") + ("R" if rst else "")
        out.append((float(t) - t0, (int(seq), int(ln), flags), "P" in str(fl)))
        if len(out) >= n:
            break
    return out


def match(real_pcap, sim_pcap, port: int, n: int = 500, context: int = 3, port_b: Optional[int] = None) -> SegMatch:
    """Compare the first `n` segments the data sender of connection `port` sent, kernel against
    simulator (see the module's doc). `port_b`, when the second capture's connection has another
    client port (two kernel runs compared with each other, `testbed/floor.py`)."""
    r = _segments(real_pcap, port, n)
    s = _segments(sim_pcap, port if port_b is None else port_b, n)
    k = min(len(r), len(s))
    same = 0
    while same < k and r[same][1] == s[same][1]:
        same += 1
    first_diff = None if (same == k and len(r) == len(s)) or (same == k and k >= n) else same
    worst, late, timed = 0.0, None, 0
    psh = [r[i][2] == s[i][2] for i in range(same)]
    psh_first = next((i for i, ok in enumerate(psh) if not ok), None)
    for i in range(same):
        dt = abs(r[i][0] - s[i][0])
        tol = max(1e-3, 0.02 * r[i][0])
        if dt <= tol:
            timed += 1
        elif late is None:
            late = i
        worst = max(worst, dt * 1e3)
    m = SegMatch(port=port, compared=k, real_n=len(r), sim_n=len(s), same=same, timed=timed, first_diff=first_diff,
                 worst_dt_ms=worst, late=late, psh_same=sum(psh), psh_first_diff=psh_first)
    if first_diff is not None:
        m.real_at = [(t, g) for t, g, _ in r[first_diff:first_diff + context]]
        m.sim_at = [(t, g) for t, g, _ in s[first_diff:first_diff + context]]
    return m
