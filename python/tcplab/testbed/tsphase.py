"""The phase of a host's TCP timestamps clock, read from a capture of what it sent.

Linux stamps TSval from a millisecond clock (`tcp_time_stamp_ts`: the host's monotonic clock in
ms, plus a per-connection offset of whole milliseconds), so where its ticks fall relative to the
connection's first packet is a property of the run, not of TCP, and the RTT samples a TSecr gives
(whole milliseconds, `tcp_rtt_tsopt_us`) follow it: a 40.3 ms path reads 40 or 41 ms depending on
when in its millisecond a segment left. The simulator's clock ticks on whole milliseconds of its
own time, moved by the `ts_offset` knob; `offset_for` gives the knob's value that puts the
simulated ticks where the real host's were, relative to each side's SYN.

Each packet i sent at capture time t_i with TSval v_i bounds the phase: with y the time from the
host's last tick before its SYN to the SYN (ms, 0 ≤ y < 1) and τ_i = t_i − t_SYN in ms,
v_i − v_SYN = ⌊τ_i + y⌋, so y ∈ [v_i − v_SYN − τ_i, v_i − v_SYN + 1 − τ_i). The intersection over
all packets is the estimate; at tens of packets per millisecond it is a few microseconds wide.
The capture's stamp comes a few microseconds after the stack's TSval (the veth and the capture
point), a bias of that size.
"""

from __future__ import annotations

from typing import Optional

MS = 1e-3


def phase(pcap, direction: str = "a2b") -> Optional[dict]:
    """`since_tick_ms`: the time from the sending host's last timestamp tick to its SYN (the
    middle of the interval the packets allow), with the interval (`lo_ms`, `hi_ms`) and the
    number of packets read; None without a SYN carrying a timestamp. If capture jitter makes the
    bounds cross, the middle of the crossed interval is given (`hi_ms` < `lo_ms` says so)."""
    from .. import trace

    p = trace.packets(pcap)
    s = p[(p["dir"] == direction) & p["tsval"].notna()]
    syn = s[s["syn"]]
    if syn.empty:
        return None
    t0 = float(syn["time_s"].iloc[0])
    v0 = int(syn["tsval"].iloc[0])
    lo, hi = 0.0, 1.0
    n = 0
    for t, v in zip(s["time_s"], s["tsval"]):
        tau = (float(t) - t0) / MS
        w = (int(v) - v0) % (1 << 32)
        if tau < 0 or w > 1 << 31:
            continue
        lo = max(lo, w - tau)
        hi = min(hi, w + 1 - tau)
        n += 1
    return {"since_tick_ms": (lo + hi) / 2, "lo_ms": lo, "hi_ms": hi, "packets": n}


def offset_for(since_tick_ms: float, sim_syn_s: float) -> str:
    """The `ts_offset` that makes the simulated clock's last tick before its SYN (sent at
    `sim_syn_s`) come `since_tick_ms` before it, as a duration string."""
    syn_ns = round(sim_syn_s * 1e9)
    want = round(since_tick_ms * 1e6)
    off = (want - syn_ns) % 1_000_000
    return f"{off}ns"
