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


def syn_time(pcap) -> float:
    """The time of the connection opener's SYN in a capture (the origin the clock phases are
    taken from)."""
    from .. import trace

    pk = trace.packets(pcap)
    syn = pk[(pk["dir"] == "a2b") & pk["syn"]]
    if syn.empty:
        raise ValueError(f"{pcap}: the connection's SYN is not in the capture")
    return float(syn["time_s"].iloc[0])


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


def timer_acks(receiver_pcap, quiet_s: float = 0.002) -> list:
    """Capture times of the receiver's ACKs that no arrival released: sent `quiet_s` or more
    after the last data segment came in (delayed ACKs, whose timer fires on a jiffy)."""
    from .. import trace

    p = trace.packets(receiver_pcap)
    out, last = [], None
    for t, d, n in zip(p["time_s"].to_numpy(float), p["dir"].to_numpy(), p["len"].to_numpy()):
        if d == "a2b" and n > 0:
            last = t
        elif d == "b2a" and last is not None and t - last >= quiet_s:
            out.append(float(t))
    return out


def jiffy_tick(receiver_pcaps, hz: int) -> Optional[dict]:
    """Where the kernel's jiffies tick in wall-clock time, modulo one jiffy: the delayed-ACK
    timers of the runs' receivers fire on ticks (the timer wheel's level 0) and their ACKs leave
    a softirq's latency later, so the phases of those ACKs cluster just after the tick. The tick
    is the cluster's low edge (its 2nd percentile); the jiffies are one clock for every
    namespace of the kernel, so all the runs of a session pool. None without timer ACKs."""
    import numpy as np

    j = 1.0 / hz
    times = [t for p in receiver_pcaps for t in timer_acks(p)]
    if not times:
        return None
    ph = np.mod(np.array(times), j)
    # Centre on the circular mean so a cluster across the jiffy's edge stays whole.
    ang = ph / j * 2 * np.pi
    centre = (np.angle(np.mean(np.exp(1j * ang))) / (2 * np.pi) % 1.0) * j
    rel = (ph - centre + j / 2) % j - j / 2
    near = rel[np.abs(rel) < j / 8]
    tick = (centre + float(np.quantile(near, 0.02))) % j
    return {"tick_s": float(tick), "acks": len(times), "in_cluster": int(len(near)), "spread_s": float(near.max() - near.min()) if len(near) else None}


def jiffy_offset_for(tick_s: float, hz: int, real_syn_s: float, sim_syn_s: float = 0.0) -> str:
    """The `jiffy_offset` that puts the simulated ticks where the kernel's were relative to the
    SYN: the kernel's last tick before its SYN came (real_syn − tick) mod 1/hz before it."""
    j_ns = round(1e9 / hz)
    since = round(((real_syn_s - tick_s) % (1.0 / hz)) * 1e9)
    return f"{min((since - round(sim_syn_s * 1e9)) % j_ns, j_ns - 1)}ns"
