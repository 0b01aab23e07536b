"""tcplab beside ns-2 on one scenario: both runs read as the same per-packet columns, a table per
connection and per link, the first packet where they diverge, and both time-sequence graphs on
one figure (docs/ns2.md).

"Packet-identical" means the same packets sent, received and dropped, at the same microsecond
(ns-2 writes its trace rounded to the microsecond; tcplab's times are rounded the same way, half
up, as ns-2's `Trace::round()`). "Agreeing at the core" means, per connection, the same number of
timeouts, the same set of retransmitted segments, and data segments sent within 3 %.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Optional

from .. import api
from .runner import DEFAULT_WALL_S, Ns2Run, run as ns2_run

#: Data segments sent may differ by this fraction and still agree at the core.
CORE_NTX_TOLERANCE = 0.03


def sim_run(scenario, sets=(), seed: Optional[int] = None):
    """tcplab's run as (segments, drops, result)."""
    r = api.run(scenario, sets=sets, seed=seed, series=["segments", "drops"])
    return r.series.segments, r.series.drops, r


def _us(t: float) -> int:
    return int(math.floor(t * 1e6 + 0.5))


def events(seg, drops) -> list:
    """Every packet event as a comparable tuple, in time order (microseconds); events of one
    microsecond in a canonical order, since the two simulators may log simultaneous events in
    different orders. The ACK number is compared on packets without data only (ns-2's one-way
    agents carry none on data)."""
    out = []
    for t, ev, c, d, seq, ln, syn, ack, fin in zip(seg["time_s"], seg["event"], seg["conn"], seg["dir"], seg["seq"], seg["len"], seg["syn"],
                                                   seg["ack"], seg["fin"]):
        a = -1 if (ln > 0 or ack is None or ack is _NA()) else int(ack)
        out.append((_us(float(t)), 0 if ev == "tx" else 1, int(c), str(d), int(seq), int(ln), bool(syn), a, bool(fin)))
    if drops is not None:
        for t, c, d, seq, ln, syn, fin in zip(drops["time_s"], drops["conn"], drops["dir"], drops["seq"], drops["len"], drops["syn"], drops["fin"]):
            if c is None or c is _NA() or c != c:   # a UDP datagram: counted per link only
                continue
            out.append((_us(float(t)), 2, int(c), str(d), int(seq), int(ln), bool(syn), -1, bool(fin)))
    out.sort()
    return out


def _NA():
    import pandas as pd

    return pd.NA


EVENT_NAMES = {0: "sent", 1: "received", 2: "dropped"}


def describe(e: Optional[tuple]) -> str:
    if e is None:
        return "(no other event at this microsecond)"
    t, k, c, d, seq, ln, syn, ack, fin = e
    what = "SYN" if syn and d == "a2b" else "SYN-ACK" if syn else (f"data seq {seq} len {ln}" if ln else f"ACK {ack}")
    if fin:
        what += " with FIN" if ln else "" if what.startswith("ACK") else ""
        what = what if ln else f"FIN seq {seq}"
    return f"{t / 1e6:.6f} s  conn {c} {d}  {what} {EVENT_NAMES[k]}"


def first_divergence(ea: list, eb: list) -> Optional[tuple]:
    """The first microsecond at which the two runs' events differ, as (time in µs, the first
    event only tcplab has then, the first event only ns-2 has then); None when identical. An
    event missing on one side is None there."""
    from collections import Counter, defaultdict

    ga, gb = defaultdict(list), defaultdict(list)
    for e in ea:
        ga[e[0]].append(e)
    for e in eb:
        gb[e[0]].append(e)
    for t in sorted(set(ga) | set(gb)):
        ca, cb = Counter(ga.get(t, ())), Counter(gb.get(t, ()))
        if ca != cb:
            only_a = sorted((ca - cb).elements())
            only_b = sorted((cb - ca).elements())
            return t, (only_a[0] if only_a else None), (only_b[0] if only_b else None)
    return None


def conn_summary(seg, drops) -> dict:
    """Per connection, from the packets alone (the same rules on both simulators): data
    segments sent, retransmissions by kind (sent on an arriving ACK, or at an instant when no
    packet reached the sender: a timer fired), timeouts (the instants of the latter), the set of
    retransmitted sequence numbers, transfer time (first packet sent to the last ACK received)
    and goodput."""
    out = {}
    for c in sorted(set(int(x) for x in seg["conn"])):
        s = seg[seg["conn"] == c]
        tx = s[(s["event"] == "tx") & (s["dir"] == "a2b")]
        data = tx[tx["len"] > 0]
        rx_at_sender = set(_us(float(t)) for t in s[(s["event"] == "rx") & (s["dir"] == "b2a")]["time_s"])
        rtx = data[data["retx"]]
        rtx_us = [_us(float(t)) for t in rtx["time_s"]]
        timeouts = sorted(set(rtx_us) - rx_at_sender)
        on_timer = sum(1 for u in rtx_us if u not in rx_at_sender)
        acks = s[(s["event"] == "rx") & (s["dir"] == "b2a")]
        # Times at ns-2's trace resolution, so that equal runs give equal figures.
        t0 = _us(float(tx["time_s"].min())) / 1e6 if len(tx) else 0.0
        t1 = _us(float(acks["time_s"].max())) / 1e6 if len(acks) else t0
        unique = int((data["end"].max() - 1)) if len(data) else 0
        dur = t1 - t0
        out[c] = {
            "data_segs": int(len(data)),
            "retransmits": int(len(rtx)),
            "retx_timer": on_timer,                   # sent when no packet arrived: a timer fired
            "retx_ack": int(len(rtx)) - on_timer,     # sent on an arriving ACK (fast retransmit, recovery)
            "timeouts": len(timeouts),
            "retx_set": frozenset(int(x) for x in rtx["seq"]),
            "transfer_s": dur,
            "goodput_bps": unique * 8 / dur if dur > 0 else 0.0,
            "drops": int((drops["conn"].astype("float64") == c).sum()) if drops is not None and len(drops) else 0,
        }
    return out


def link_drops(drops) -> dict:
    out: dict = {}
    if drops is None:
        return out
    for lk in drops["link"]:
        out[str(lk)] = out.get(str(lk), 0) + 1
    return out


def core_agrees(a: dict, b: dict) -> bool:
    if set(a) != set(b):
        return False
    for c in a:
        x, y = a[c], b[c]
        if x["timeouts"] != y["timeouts"] or x["retx_set"] != y["retx_set"]:
            return False
        if abs(x["data_segs"] - y["data_segs"]) > CORE_NTX_TOLERANCE * max(x["data_segs"], y["data_segs"]):
            return False
    return True


@dataclass
class Comparison:
    identical: bool
    core: bool
    divergence: Optional[tuple]          # (index, tcplab event, ns-2 event)
    tcplab: dict
    ns2: dict
    links_tcplab: dict
    links_ns2: dict
    sim_segments: object = None
    ns2_run: Optional[Ns2Run] = None
    events_tcplab: list = field(default_factory=list)
    events_ns2: list = field(default_factory=list)
    figure: Optional[str] = None
    notes: list = field(default_factory=list)

    @property
    def text(self) -> str:
        return render(self)


def render(c: Comparison) -> str:
    lines = ["per connection          tcplab        ns-2"]
    names = [("data_segs", "data segments", "{:d}"), ("retransmits", "retransmissions", "{:d}"),
             ("retx_ack", "  on an ACK", "{:d}"), ("retx_timer", "  on a timer", "{:d}"), ("timeouts", "timeouts", "{:d}"),
             ("transfer_s", "transfer time (s)", "{:.6f}"), ("goodput_bps", "goodput (b/s)", "{:.0f}")]
    for conn in sorted(set(c.tcplab) | set(c.ns2)):
        lines.append(f"connection {conn}")
        for key, label, fmt in names:
            a = c.tcplab.get(conn, {}).get(key)
            b = c.ns2.get(conn, {}).get(key)
            fa = fmt.format(a) if a is not None else "-"
            fb = fmt.format(b) if b is not None else "-"
            lines.append(f"  {label:<22}{fa:>12}{fb:>12}{'' if fa == fb else '   differs'}")
    lines.append("per link (drops)")
    for lk in sorted(set(c.links_tcplab) | set(c.links_ns2)):
        a, b = c.links_tcplab.get(lk, 0), c.links_ns2.get(lk, 0)
        lines.append(f"  {lk:<22}{a:>12}{b:>12}{'' if a == b else '   differs'}")
    if c.divergence is None:
        lines.append("packet-identical: every packet sent, received and dropped at the same microsecond")
    else:
        t, a, b = c.divergence
        lines.append(f"first divergence at {t / 1e6:.6f} s (what only one side has then):")
        lines.append(f"  tcplab: {describe(a)}")
        lines.append(f"  ns-2:   {describe(b)}")
        lines.append(f"agreeing at the core (timeouts, retransmitted set, data segments within 3 %): {'yes' if c.core else 'no'}")
    for n in c.notes:
        lines.append(f"note: {n}")
    return "\n".join(lines)


def plot(sim_seg, ns_seg, path: str, title: str = "") -> str:
    """Both time-sequence graphs (data sent, ACKs received at the sender) on one figure."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 5))
    for seg, label, m, col in ((sim_seg, "tcplab", "o", "tab:blue"), (ns_seg, "ns-2", "x", "tab:red")):
        tx = seg[(seg["event"] == "tx") & (seg["dir"] == "a2b") & (seg["len"] > 0)]
        ax.scatter(tx["time_s"], tx["seq"], s=14, marker=m, color=col, label=f"{label}: data sent")
        ack = seg[(seg["event"] == "rx") & (seg["dir"] == "b2a")]
        ax.step(ack["time_s"], ack["ack"].astype("float64"), where="post", color=col, alpha=0.5, lw=1, label=f"{label}: ACKs received")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("sequence number (bytes)")
    ax.set_title(title or "tcplab beside ns-2")
    ax.legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def compare(scenario, sets=(), seed: Optional[int] = None, max_wall: float = DEFAULT_WALL_S, figure: Optional[str] = None,
            keep: Optional[str] = None) -> Comparison:
    """Run `scenario` in tcplab and in ns-2 and compare them packet by packet."""
    nr = ns2_run(scenario, sets=sets, max_wall=max_wall, keep=keep, seed=seed)
    seg, drops, _ = sim_run(scenario, sets=sets, seed=seed)
    ea, eb = events(seg, drops), events(nr.segments, nr.drops)
    div = first_divergence(ea, eb)
    a, b = conn_summary(seg, drops), conn_summary(nr.segments, nr.drops)
    c = Comparison(div is None, core_agrees(a, b), div, a, b, link_drops(drops), link_drops(nr.drops), sim_segments=seg,
                   ns2_run=nr, events_tcplab=ea, events_ns2=eb, notes=list(nr.notes))
    if figure:
        c.figure = plot(seg, nr.segments, figure)
    return c
