"""Real beside simulated: the same analyser (`tcplab.trace`) on both captures, connection by
connection, and both time-sequence graphs on one figure."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Optional

#: The figures compared, per connection: (column, meaning, capture). The capture is the one at
#: the data sender ("sender"), the active opener ("client") or the passive one ("server").
METRICS = [
    ("transfer_time_s", "SYN to the acknowledgement of everything (s)", "sender"),
    ("iw_segs", "initial window: data segments before the first ACK of data", "sender"),
    ("rexmt_segs", "retransmitted data segments", "sender"),
    ("retx_timeout", "retransmissions after a silence of at least 150 ms (a timeout)", "sender"),
    ("retx_fast", "retransmissions right after duplicate ACKs or SACKs (fast retransmit, recovery)", "sender"),
    ("retx_other", "other retransmissions (go-back-N after a timeout, probes)", "sender"),
    ("first_retx_after_s", "from the first transmission of the first retransmitted segment to its retransmission (s)", "sender"),
    ("syn_retransmits", "SYN retransmissions", "client"),
    ("syn_times_s", "times of the SYN retransmissions after the first SYN (s)", "client"),
    ("synack_retransmits", "SYN-ACK retransmissions", "server"),
    ("synack_times_s", "times of the SYN-ACK retransmissions after the first SYN-ACK (s)", "server"),
    ("request_retx_after_s", "request/response: the request's retransmission after its first transmission (s)", "client"),
    ("goodput_bps", "unique bytes · 8 / transfer time", "sender"),
    ("rtt_avg_s", "mean RTT of the data (s)", "sender"),
    ("handshake_rtt_s", "SYN to the ACK of the SYN-ACK (s)", "client"),
]


def retx_after(pk, conn: int, direction: str):
    """The time from the first transmission of the first retransmitted data segment of one
    direction to its retransmission, or None."""
    c = pk[(pk["conn"] == conn) & (pk["dir"] == direction) & (pk["len"] > 0)]
    first = {}
    for t, seq, retx in zip(c["time_s"], c["seq"], c["retx"]):
        if retx and int(seq) in first:
            return float(t - first[int(seq)])
        first.setdefault(int(seq), float(t))
    return None


def retx_kinds(pk, conn: int, direction: str) -> dict:
    """Classify one direction's retransmitted data segments, from the capture alone: `timeout`
    when the sender had been silent for at least 150 ms (Linux's and the `linux` profile's RTO is
    at least 200 ms), `fast` when the last packet from the peer, at most 50 ms before, was a
    duplicate ACK or carried SACK blocks, `other` for the rest."""
    c = pk[pk["conn"] == conn]
    last_send = None
    last_peer = None  # (time, dupish)
    out = {"timeout": 0, "fast": 0, "other": 0}
    for t, d, ln, retx, dup, sack in zip(c["time_s"], c["dir"], c["len"], c["retx"], c.get("dup_ack", [False] * len(c)), c.get("sack", [()] * len(c))):
        if d != direction:
            last_peer = (t, bool(dup) or bool(sack))
            continue
        if ln > 0 and retx:
            if last_send is not None and t - last_send >= 0.150 and (last_peer is None or t - last_peer[0] >= 0.150):
                out["timeout"] += 1
            elif last_peer is not None and last_peer[1] and t - last_peer[0] <= 0.050:
                out["fast"] += 1
            else:
                out["other"] += 1
        if ln > 0:
            last_send = t
    return out


def connections(path) -> dict:
    """The connections of a capture with the figures of `METRICS`, keyed by the active opener's
    port (side a of the analyser)."""
    import pandas as pd

    from .. import trace

    df = trace.analyze(path)
    pk = trace.packets(path)

    def num(v):
        return None if v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v)) else float(v)

    def times(iv):
        out, acc = [], 0.0
        for x in iv if isinstance(iv, (list, tuple)) else []:
            acc += x
            out.append(round(acc, 4))
        return out

    rows = {}
    for _, c in df.iterrows():
        d = c.data_dir if isinstance(c.data_dir, str) else "a2b"
        kinds = retx_kinds(pk, int(c.conn), d)
        row = {
            "conn": int(c.conn), "a": c.a, "b": c.b, "first_s": float(c.first_s),
            "transfer_time_s": num(c.transfer_time_s), "iw_segs": num(c.iw_segs), "rexmt_segs": num(c.rexmt_segs),
            "retx_timeout": kinds["timeout"], "retx_fast": kinds["fast"], "retx_other": kinds["other"],
            "first_retx_after_s": retx_after(pk, int(c.conn), d),
            "syn_retransmits": num(c.syn_retransmits), "syn_times_s": times(c.syn_intervals_s),
            "synack_retransmits": num(c.synack_retransmits), "synack_times_s": times(c.synack_intervals_s),
            "request_retx_after_s": retx_after(pk, int(c.conn), "a2b") if d == "b2a" else None,
            "goodput_bps": num(c.throughput_bps), "rtt_avg_s": num(c.rtt_avg_s), "handshake_rtt_s": num(c.handshake_rtt_s),
        }
        rows.setdefault(int(str(c.a).rsplit(":", 1)[1]), row)
    return rows


def pair(conns: list, real: dict, sim: dict) -> "pd.DataFrame":
    """A long table (connection, metric, real, sim, diff = sim − real; lists element by element)
    for the planned connections `conns`, each figure read from its capture (`METRICS`): `real` and
    `sim` map a host to `connections()` of its capture."""
    import pandas as pd

    out = []
    for c in conns:
        where = {"sender": c["sender"], "client": c["client"], "server": c["server"]}
        for m, _, cap in METRICS:
            a = real.get(where[cap], {}).get(c["sport"], {}).get(m)
            b = sim.get(where[cap], {}).get(c["sport"], {}).get(m)
            if isinstance(a, list) or isinstance(b, list):
                a, b = a or [], b or []
                diff = [round(y - x, 4) for x, y in zip(a, b)] if len(a) == len(b) else None
            else:
                diff = (b - a) if a is not None and b is not None else None
            out.append({"connection": c["label"], "metric": m, "real": a, "sim": b, "diff": diff})
    return pd.DataFrame(out)


def render(table) -> str:
    """The comparison as text, one block per connection."""
    def f(v):
        if v is None or (isinstance(v, float) and math.isnan(v)):
            return "-"
        if isinstance(v, list):
            return "[" + ", ".join(f"{x:.3f}" for x in v) + "]"
        if isinstance(v, float):
            if abs(v) >= 1e5:
                return f"{v:,.0f}"
            return f"{v:.4g}"
        return str(v)

    lines = []
    for label, g in table.groupby("connection", sort=False):
        lines.append(label)
        lines.append(f"  {'metric':20s} {'real':>22s} {'simulated':>22s} {'sim - real':>20s}")
        for r in g.to_dict("records"):
            pct = ""
            real, diff = r["real"], r["diff"]
            if isinstance(real, (int, float)) and isinstance(diff, (int, float)) and real and r["metric"] in ("transfer_time_s", "goodput_bps", "rtt_avg_s"):
                pct = f" ({100 * diff / real:+.1f}%)"
            lines.append(f"  {r['metric']:20s} {f(real):>22s} {f(r['sim']):>22s} {f(diff) + pct:>20s}")
    return "\n".join(lines)


def differences(rec: dict) -> list:
    """Loud lines for what the two sides of a testbed run do differently by construction, read
    from the run's record (`testbed.json`): the knobs where the simulated profile models something
    else than the kernel did (`divergences`, planned by `untuned.divergences`), and, with
    `--stock`, the host's default congestion control when it is not the flows' `cc`."""
    from .untuned import render

    out = []
    table = render(rec.get("divergences") or [])
    if table:
        out.append(table)
    real = rec.get("default_congctl")
    if rec.get("stock") and not rec.get("congctl") and real:
        for cc in rec.get("sim_cc") or []:
            if cc != real:
                out.append(f"warning: --stock: the real side ran the host's congestion control {real!r}; the simulated "
                           f"flows run {cc!r}: window growth and reductions differ by construction")
    out.extend(rec.get("notes") or [])
    return out


def render_counters(kernel: dict, result) -> str:
    """Retransmissions by kind as each side counted them itself: the kernel's counters of each
    host (all its connections) beside the simulator's instruments of the flows sent from it."""
    lines = []
    conns = result.connections if len(result.connections) else None
    for h, k in kernel.items():
        if not any(k.values()):
            continue
        sim = {}
        if conns is not None:
            mine = conns[conns["src"] == h]
            sim = {c: int(mine[c].sum()) for c in ("retransmits", "timeouts", "fast_retransmits", "syn_retransmits", "delack_timeouts") if c in mine}
        kern = ", ".join(f"{n} {v}" for n, v in k.items() if v)
        lines.append(f"kernel counters of {h}: {kern}")
        if sim:
            lines.append(f"  simulated flows from {h}: " + ", ".join(f"{n} {v}" for n, v in sim.items()))
    return "\n".join(lines)


def figure(real_pcap, sim_pcap, out, conn_real: Optional[int] = None, conn_sim: Optional[int] = None, title: str = ""):
    """Both time-sequence graphs (tcplab.plot.tsg) on one figure, side by side on the same axes
    ranges: the real capture on the left, the simulated one on the right."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from .. import plot, trace

    fig, axes = plt.subplots(1, 2, figsize=(13, 5), sharex=True, sharey=True)
    plot.tsg(trace.packets(real_pcap), conn=conn_real, ax=axes[0], title=f"real Linux {title}".strip())
    plot.tsg(trace.packets(sim_pcap), conn=conn_sim, ax=axes[1], title=f"simulated {title}".strip())
    axes[1].set_ylabel("")
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return Path(out)
