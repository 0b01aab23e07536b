"""DCTCP against its analysis: Alizadeh et al., "Data Center TCP (DCTCP)", SIGCOMM 2010, §3.3.

N long DCTCP flows (`cc = "dctcp"`, Linux `tcp_dctcp.c`'s α with g = 1/16) share a bottleneck of
C packets/s with round trip RTT and a step marking threshold K (RFC 8257 §3.1). The paper's fluid
sawtooth of N synchronised flows predicts, with W* = (C·RTT + K)/N the window at which the queue
reaches K:

    α ≈ sqrt(2 / W*)                                   (eq. 10, the marked fraction per window)
    A = ½ · sqrt(2 N (C·RTT + K))                       (eq. 11, queue oscillation amplitude)
    T_C = ½ · sqrt(2 (C·RTT + K) / N)   round trips     (eq. 12, oscillation period)
    Q_max = K + N,   Q_min = Q_max − A                  (eqs. 13-14)
    K > C·RTT / 7  ⇒  Q_min > 0, full throughput        (eq. 15)

What is measured (after a warm-up): α as the fraction of data segments that arrived CE-marked
(what DCTCP's α averages, RFC 8257 §3.3), the queue's oscillation amplitude as the median over
windows of 3·T_C of (largest − smallest queue) in the bottleneck's queue series, its maximum, and
the bottleneck's utilisation.

    python experiments/dctcp/analysis.py            # the table in docs/ecn.md
    python experiments/dctcp/analysis.py --n 2 --k 20 --rate 1Gbps --rtt 1ms --seconds 3
"""

from __future__ import annotations

import argparse
import math

import numpy as np

import tcplab
from tcplab.units import rate_bps, seconds as to_seconds

PKT_BYTES = 1500  # MSS 1460 + 40 header bytes
MSS = 1460


def scenario(n: int, k: int, rate: str, rtt_s: float, seconds: float, warmup: float) -> str:
    # RTT = 2 · (2 · access delay + bottleneck delay); access links ten times faster.
    access = 10e-6
    bottleneck = rtt_s / 2 - 2 * access
    return f"""
name = "dctcp_n{n}_k{k}"
duration = "{seconds}s"
warmup = "{warmup}s"

[topology]
kind = "dumbbell"
pairs = {n}
access_rate = "10Gbps"
access_delay = "{access * 1e6:.0f}us"
bottleneck_rate = "{rate}"
bottleneck_delay = "{bottleneck * 1e6:.0f}us"
queue = {{ packets = 2000, mark_threshold = {k} }}

[tcp]
cc = "dctcp"
mss = {MSS}
delayed_ack = false
initial_window = 10

[[flows]]
from = "s{{i}}"
to = "r{{i}}"
count = {n}
start_spacing = "1ms"
bytes = "unlimited"
"""


def theory(n: int, k: int, c_pps: float, rtt_s: float) -> dict:
    bdp = c_pps * rtt_s
    w = (bdp + k) / n
    a = 0.5 * math.sqrt(2 * n * (bdp + k))
    return {"C·RTT": bdp, "W*": w, "alpha": math.sqrt(2 / w), "A": a, "T_C_rtts": 0.5 * math.sqrt(2 * (bdp + k) / n),
            "Q_max": k + n, "Q_min": k + n - a, "K_min": bdp / 7}


def measure(n: int, k: int, rate: str, rtt_s: float, seconds: float, warmup: float, seed: int = 1) -> dict:
    link = "bottleneck:left->right"
    r = tcplab.run(scenario(n, k, rate, rtt_s, seconds, warmup), seed=seed, series={"kind": "queue", "links": [link]})
    c = r.connections
    segs = (c["bytes_delivered"] / MSS).sum()
    b = r.links.set_index("link").loc[link]
    q = r.series.queue
    q = q[q.time_s >= warmup]
    col = "pkts" if "pkts" in q else "queue_pkts"
    th = theory(n, k, rate_bps(rate) / (8 * PKT_BYTES), rtt_s)
    win = 3 * th["T_C_rtts"] * rtt_s
    bins = ((q.time_s - warmup) // win).astype(int)
    g = q.groupby(bins)[col]
    amp = (g.max() - g.min()).median()
    return {"alpha": c["ce_received"].sum() / segs, "A": float(amp), "Q_max": float(q[col].max()),
            "Q_mean": float(b["avg_queue_pkts"]), "utilization": float(b["utilization"]),
            "drops": int(b["dropped_pkts"]), "reductions": int(c["ecn_reductions"].sum())}


def periods(n: int, k: int, rate: str, rtt_s: float, seconds: float, warmup: float, seed: int = 1) -> dict:
    """How often each flow reduces in one sawtooth period, and how many marks a period brings it.

    A flow's reductions are read from its cwnd in the `tcp` series: a period's reductions are the
    decreases between two stretches of growth (DCTCP in avoidance only grows between cuts), so
    `cuts / periods` is the number of reductions per period (eq. 10's derivation takes one).
    Marks per period and flow (`ce_received` over the periods) is what the analysis counts as
    W* + 1: every packet of the one round trip in which the queue stands above K."""
    r = tcplab.run(scenario(n, k, rate, rtt_s, seconds, warmup), seed=seed,
                   series={"kind": "tcp", "interval": "20us", "max_rows": 20_000_000})
    t = r.series.tcp
    t = t[t.time_s >= warmup]
    cuts = per = 0
    for _, g in t.groupby("conn"):
        s = np.sign(np.diff(g.cwnd.to_numpy()))
        s = s[s != 0]
        cuts += int((s < 0).sum())
        per += int(((s[1:] < 0) & (s[:-1] > 0)).sum())
    c = r.connections
    th = theory(n, k, rate_bps(rate) / (8 * PKT_BYTES), rtt_s)
    w, cuts_per = th["W*"], cuts / max(per, 1)
    marks = c["ce_received"].sum()  # the connections' counters start at the warm-up's end
    segs = (c["bytes_delivered"] / MSS).sum()
    return {"W*": w, "cuts_per_period": cuts_per, "marks_per_period": marks / max(per, 1), "alpha": c["ce_received"].sum() / segs,
            "alpha_eq10": th["alpha"], "alpha_held": alpha_held(w, cuts_per)}


def alpha_held(w: float, r: float = 1.0) -> float:
    """Eq. 10's balance with the round trip in which the window is held: RFC 3168 §6.1.2 ("SHOULD
    NOT increase the congestion window in response to the receipt of an ECN-Echo ACK"; Linux
    grows nothing in its CWR state) keeps the window from growing through the round trip of
    ECE-carrying ACKs after each of the period's r reductions. A period of T round trips then
    grows T − r packets, equal to r·α/2·W*, and brings α·T·W* = W* + 1 marks:
    α = (sqrt(1 + 2(W* + 1)/r) − 1)/W* (eq. 10's sqrt(2/W*) for large W* and r = 1)."""
    return (math.sqrt(1 + 2 * (w + 1) / r) - 1) / w


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, nargs="*", default=[2, 10])
    ap.add_argument("--k", type=int, default=20)
    ap.add_argument("--rate", default="1Gbps")
    ap.add_argument("--rtt", default="1ms")
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--warmup", type=float, default=1.0)
    ap.add_argument("--periods", action="store_true", help="the reductions and marks of a sawtooth period (N = 2, 10, 40; K = 20, 60)")
    a = ap.parse_args()
    if a.periods:
        rtt_s = to_seconds(a.rtt)
        print("| N | K | W* | reductions per period and flow | marks per period and flow (analysis W* + 1) | α simulated | α eq. 10 | α with the held round trip |")
        print("|---|---|---|---|---|---|---|---|")
        for n, k in ((2, 20), (2, 60), (10, 20), (10, 60), (40, 20)):
            p = periods(n, k, a.rate, rtt_s, a.seconds, a.warmup)
            print(f"| {n} | {k} | {p['W*']:.1f} | {p['cuts_per_period']:.2f} | {p['marks_per_period']:.1f} ({p['W*'] + 1:.1f}) | {p['alpha']:.3f} | "
                  f"{p['alpha_eq10']:.3f} ({100 * (p['alpha'] / p['alpha_eq10'] - 1):+.0f} %) | {p['alpha_held']:.3f} ({100 * (p['alpha'] / p['alpha_held'] - 1):+.0f} %) |")
        return
    rtt_s = to_seconds(a.rtt)
    c_pps = rate_bps(a.rate) / (8 * PKT_BYTES)
    print(f"C = {a.rate} ({c_pps:.0f} packets/s), RTT = {a.rtt}, K = {a.k} packets, {a.seconds} s after {a.warmup} s warm-up")
    print("| N | quantity | analysis | simulated | error |")
    print("|---|---|---|---|---|")
    for n in a.n:
        th = theory(n, a.k, c_pps, rtt_s)
        m = measure(n, a.k, a.rate, rtt_s, a.seconds, a.warmup)
        rows = [("α (marked fraction)", th["alpha"], m["alpha"]), ("amplitude A (packets)", th["A"], m["A"]),
                ("Q_max (packets)", th["Q_max"], m["Q_max"]), ("throughput (utilisation)", 1.0, m["utilization"])]
        for name, t, s in rows:
            print(f"| {n} | {name} | {t:.3f} | {s:.3f} | {100 * (s - t) / t:+.1f} % |")
        print(f"| {n} | (W* = {th['W*']:.1f}, T_C = {th['T_C_rtts']:.1f} RTTs, K_min = C·RTT/7 = {th['K_min']:.1f}; "
              f"mean queue {m['Q_mean']:.1f}, drops {m['drops']}, ECN reductions {m['reductions']}) | | | |")


if __name__ == "__main__":
    main()
