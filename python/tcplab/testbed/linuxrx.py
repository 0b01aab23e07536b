"""Linux 6.x's timers and receiver, simulated (`linux6`) and on the kernel (docs/testbed.md,
"Linux's RTO and ACKs").

(a) `rto_end`: after a loss-free bulk transfer of about 20 RTTs, the sender's RTO: the kernel's
    `tcpi_rto` (TCP_INFO, read by the testbed's client once the transfer is over) against the
    simulated sender's (`[[series]]` tcp, its last row).
(b) `ack_replay`: the kernel receiver's data arrivals (its capture) replayed into the simulated
    receiver (`tcplab.script`'s simulated stack, the same TCP code), and the ACKs of both compared
    for the first data segments: count, ACK numbers, send times (matched by ACK number). The simulator's jiffies
    are aligned with the kernel's, whose phase is read off the kernel's timer-driven ACKs.

    >>> from tcplab.testbed import linuxrx
    >>> rows = linuxrx.rto_end("out/", rtts_ms=(20, 60, 150))          # root: runs the testbed
    >>> linuxrx.ack_replay("out/rtt60")                               # a run's directory
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Optional, Sequence

#: The transfer's length in RTTs for (a).
RTTS = 20


def bulk(rtt_ms: float, rate_mbps: float = 10.0, rtts: int = RTTS, profile: str = "linux6") -> dict:
    """A single link of `rate_mbps` and `rtt_ms` (two one-way delays of half), one bulk transfer of
    about `rtts` RTTs at the link's rate, with profile `profile`. The receive window is 1.25 times
    the path's bandwidth-delay product (at least 64 KB, Linux's first window): the sender is held
    by it before the unlimited queue grows far, so the RTT stays near the path's and nothing is
    lost."""
    bdp = rate_mbps * 1e6 / 8 * rtt_ms / 1e3
    nbytes = int(bdp * rtts)
    rwnd = max(65536, int(1.25 * bdp))
    return {"name": f"linuxrx-{rtt_ms:g}ms", "topology": {"kind": "single_link", "rate": f"{rate_mbps:g}Mbps", "delay": f"{rtt_ms / 2:g}ms"},
            "tcp": {"profile": profile, "rwnd": f"{rwnd}B"}, "flows": [{"bytes": f"{nbytes}B"}]}


def kernel_info(rec: dict) -> Optional[dict]:
    """The sender's `tcp_info` at the end of the (first) transfer of a testbed run's record."""
    from ..script.kernel import parse_tcp_info

    for c in rec.get("conns", []):
        if c.get("tcp_info"):
            return parse_tcp_info(bytes.fromhex(c["tcp_info"]))
    return None


def sim_end(scenario: dict, seed: Optional[int] = None) -> dict:
    """The simulated sender's SRTT, RTTVAR and RTO after its last event (the `tcp` series)."""
    from .. import api

    d = dict(scenario)
    d["series"] = [{"kind": "tcp"}]
    r = api.run(d, seed=seed)
    t = r.series.tcp
    snd = t[t["dir"] == "a2b"]
    last = snd.iloc[-1]
    res = {k: float(last[k]) for k in ("srtt_s", "rttvar_s", "rto_s") if k in last.index}
    conn = r.connections.iloc[0]
    res.update(rtt_samples=int(conn["rtt_samples"]), rtt_max_s=float(conn["rtt_max_s"]))
    return res


def kernel_window(workdir, host: str = "sender") -> int:
    """The most data the kernel's sender had in flight (highest sequence sent less the highest
    ACK), from its capture: the receive window it was held by."""
    from .. import trace

    pk = trace.packets(Path(workdir) / f"real-{host}.pcap")
    hi = una = top = 0
    for d, end, ln, ack in zip(pk["dir"], pk["end"], pk["len"], pk["ack"]):
        if d == "a2b" and ln > 0:
            hi = max(hi, int(end))
        elif d == "b2a" and ack is not None and str(ack) != "<NA>":
            una = max(una, int(ack))
        top = max(top, hi - una)
    return top


def rto_end(out, rtts_ms: Sequence[float] = (20, 60, 150), rate_mbps: float = 10.0, timeout: float = 60.0, profile: str = "linux6") -> list:
    """(a) for each RTT: one testbed run (needs root) and its simulation, the simulated receive
    window set to what the kernel's sender had in flight at most (`kernel_window`), so that both
    fill the queue alike. Rows: rtt_ms, the kernel's tcpi_rto/rtt/rttvar (ms), the simulated
    RTO/SRTT/RTTVAR (ms) and RTT samples, the RTO difference in jiffies of the kernel's HZ."""
    from . import run

    out = Path(out)
    rows = []
    for rtt in rtts_ms:
        scen = bulk(rtt, rate_mbps, profile=profile)
        d = out / f"rtt{rtt:g}"
        rec = run(scen, d, timeout=timeout)
        ki = kernel_info(rec) or {}
        scen["tcp"]["rwnd"] = f"{kernel_window(d)}B"
        sim = sim_end(scen)
        hz = rec.get("kernel_hz") or 250
        k_rto = ki.get("tcpi_rto", float("nan")) / 1e3
        s_rto = sim.get("rto_s", float("nan")) * 1e3
        rows.append({"rtt_ms": rtt, "kernel_rto_ms": k_rto, "kernel_srtt_ms": ki.get("tcpi_rtt", float("nan")) / 1e3,
                     "kernel_rttvar_ms": ki.get("tcpi_rttvar", float("nan")) / 1e3, "sim_rto_ms": s_rto,
                     "sim_srtt_ms": sim.get("srtt_s", float("nan")) * 1e3, "sim_rttvar_ms": sim.get("rttvar_s", float("nan")) * 1e3,
                     "sim_rtt_samples": sim.get("rtt_samples"), "sim_rtt_max_ms": sim.get("rtt_max_s", float("nan")) * 1e3,
                     "window": scen["tcp"]["rwnd"],
                     "diff_jiffies": (s_rto - k_rto) / (1e3 / hz), "hz": hz, "dir": str(d)})
    (out / "rto_end.json").write_text(json.dumps(rows, indent=1))
    return rows


def _receiver_packets(workdir: Path, host: str = "receiver"):
    from .. import trace

    pk = trace.packets(workdir / f"real-{host}.pcap")
    conns = pk.attrs["connections"]
    data = [c for c in conns if c.get("data_dir")]
    if not data:
        raise ValueError(f"{workdir}: no connection with data in real-{host}.pcap")
    c = data[0]
    return pk[pk["conn"] == c["conn"]], c["data_dir"]


def jiffy_phase(acks: list, arrivals: list, jiffy: float) -> float:
    """The kernel's jiffy phase (seconds, in the capture's clock): timer-driven ACKs leave on a
    tick. Taken from the ACKs sent more than 2 ms after the last data arrival (the circular
    median of their times modulo a jiffy); 0 when there are none."""
    import bisect
    import math

    ph = []
    for t in acks:
        i = bisect.bisect_right(arrivals, t) - 1
        if i >= 0 and t - arrivals[i] > 0.002:
            ph.append((t % jiffy) / jiffy * 2 * math.pi)
    if not ph:
        return 0.0
    x, y = sum(math.cos(a) for a in ph), sum(math.sin(a) for a in ph)
    return (math.atan2(y, x) % (2 * math.pi)) / (2 * math.pi) * jiffy


#: net.ipv4.tcp_rmem[2] of the testbed kernel (6.16 and later: 32 MB) and net.core.rmem_max.
RMEM_MAX, CORE_RMEM_MAX = 32 << 20, 212992


def linux_wscale(route_window: Optional[int]) -> int:
    """The window scale a Linux receiver announces (tcp_select_initial_window: ilog2 of
    min(max(64 KB, tcp_rmem[2], rmem_max), the route window) − 15, 0 to 14): the capture's
    window fields are shifted by it (RFC 7323 §2.3)."""
    space = max(65536, RMEM_MAX, CORE_RMEM_MAX)
    if route_window:
        space = min(space, route_window)
    return max(0, min(14, space.bit_length() - 1 - 15))


def ack_replay(workdir, n_segments: int = 100, tcp: Optional[dict] = None, hz: Optional[int] = None, tol_ms: float = 1.0) -> dict:
    """(b) Replay the kernel receiver's inbound segments of a testbed run (`workdir`) into the
    simulated receiver (`tcp`, default the `linux6` profile with the run's `rwnd`, the route
    window) and compare the ACKs sent while the first `n_segments` data segments arrived.
    Timestamps are replayed with TSecr moved onto the simulated receiver's clock (the kernel's
    TSval offset, read off its own segments, taken away; within 1 ms). Returns counts, the
    pairs, how many agree in ACK number and within `tol_ms`, and how many advertise the same
    window (`same_window`, scaled by the receiver's window scale)."""
    from .. import _core

    workdir = Path(workdir)
    rec = json.loads((workdir / "testbed.json").read_text())
    hz = hz or rec.get("kernel_hz") or 250
    jiffy = 1.0 / hz
    pk, data_dir = _receiver_packets(workdir)
    inbound = pk[pk["dir"] == data_dir]
    outbound = pk[pk["dir"] != data_dir]
    arrivals = sorted(float(t) for t, ln in zip(inbound["time_s"], inbound["len"]) if ln > 0)
    has_ts = "tsval" in pk.columns
    rwnd = rec.get("scenario", {}).get("tcp", {}).get("rwnd")
    wscale = linux_wscale(_core.quantity("size", rwnd) if rwnd else None)
    real_acks_all = [(float(t), int(a), int(w) << wscale) for t, a, w, ln, syn, fin in zip(outbound["time_s"], outbound["ack"], outbound["win"], outbound["len"], outbound["syn"], outbound["fin"])
                     if ln == 0 and not syn and not fin]
    phase = jiffy_phase([t for t, _, _ in real_acks_all], arrivals, jiffy)
    t_first = float(inbound["time_s"].iloc[0])
    base = phase + jiffy * ((t_first - phase) // jiffy)
    ts_off = None
    if has_ts:
        # The kernel's TSval is its 1 ms clock plus a random offset (tsoffset): TSval(τ) =
        # floor(τ + c) in ms of the replay's clock τ, where c is the largest TSval − τ over the
        # receiver's own segments (each is captured a little after it was stamped). Without a
        # jiffy phase from timer-driven ACKs, the replay's clock is shifted by the fraction of c,
        # so that its milliseconds (and jiffies, which tick on the same clock) start where the
        # kernel's do; TSecr is then moved onto it by the whole part.
        xs = [int(v) - (float(t) - base) * 1e3 for t, v in zip(outbound["time_s"], outbound["tsval"]) if v is not None and str(v) != "<NA>"]
        if xs:
            c = max(xs)
            if phase == 0.0:
                base -= (c - math.floor(c)) / 1e3
                c = math.floor(c)
            ts_off = int(math.floor(c + 1e-9))
    cfg = tcp or {"profile": "linux6", "hz": hz, **({"rwnd": rwnd} if rwnd else {})}
    sim = _core.ScriptSim(json.dumps(cfg))
    sim.listen()
    out = []
    data_seen, end_n, t_next = 0, None, None
    tsv = inbound["tsval"] if has_ts else [None] * len(inbound)
    tse = inbound["tsecr"] if has_ts else [None] * len(inbound)
    for t, flags, seq, ack, ln, win, sack, tv, te in zip(inbound["time_s"], inbound["tcp_flags"], inbound["seq"], inbound["ack"], inbound["len"], inbound["win"], inbound["sack"], tsv, tse):
        tau = float(t) - base
        out += sim.advance(tau)
        if int(ln) > 0:
            data_seen += 1
            if data_seen == n_segments:
                end_n = int(seq) + int(ln)
            if data_seen == n_segments + 1:
                t_next = tau
                break
        # PSH too: the kernel's sender marks the last segment of each skb, and a full segment
        # with PSH makes the receiver's read send its ACK (ICSK_ACK_PUSHED, tcp_cleanup_rbuf).
        f = (0x02 if "S" in flags else 0) | (0x10 if "." in flags or "A" in flags else 0) | (0x01 if "F" in flags else 0) | (0x08 if "P" in flags else 0)
        a = 0 if ack is None or str(ack) == "<NA>" else int(ack)
        ts = None
        if ts_off is not None and tv is not None and str(tv) != "<NA>":
            ecr = 0 if te is None or str(te) == "<NA>" or int(te) == 0 else (int(te) - ts_off) % (1 << 32)
            ts = (int(tv) % (1 << 32), ecr)
        sim.inject(f, int(seq), a, int(win), int(ln), list(sack), "S" in flags, 1460 if "S" in flags else None, ts)
    if t_next is None:
        t_next = float("inf")
        out += sim.advance(float(inbound["time_s"].iloc[-1]) - base + 1.0)
    sim_acks = [(t, a, w) for (t, fl, s, a, ln, w, sp, sk, _ts) in out if ln == 0 and not (fl & 0x03) and t < t_next and (end_n is None or a <= end_n)]
    real_acks = [(t - base, a, w) for t, a, w in real_acks_all if t - base < t_next and (end_n is None or a <= end_n)]
    # ACKs matched by their ACK number (each side's first ACK of a number; a repeated number is a
    # window update).
    first_real, first_sim = {}, {}
    for t, a, w in real_acks:
        first_real.setdefault(a, (t, w))
    for t, a, w in sim_acks:
        first_sim.setdefault(a, (t, w))
    common = sorted(set(first_real) & set(first_sim))
    pairs = [{"ack": a, "real_ms": first_real[a][0] * 1e3, "sim_ms": first_sim[a][0] * 1e3, "diff_ms": (first_sim[a][0] - first_real[a][0]) * 1e3,
              "real_wnd": first_real[a][1], "sim_wnd": min(first_sim[a][1], 65535 << wscale), "sim_wnd_bytes": first_sim[a][1]} for a in common]
    agree = sum(1 for p in pairs if abs(p["diff_ms"]) <= tol_ms)
    res = {"data_segments": min(data_seen, n_segments), "real_acks": len(real_acks), "sim_acks": len(sim_acks), "same_ack_number": len(common),
           "only_real": len(set(first_real) - set(first_sim)), "only_sim": len(set(first_sim) - set(first_real)),
           "within_tol": agree, "tol_ms": tol_ms, "same_window": sum(1 for p in pairs if p["real_wnd"] == p["sim_wnd"]), "wscale": wscale, "max_abs_diff_ms": max((abs(p["diff_ms"]) for p in pairs), default=None),
           "jiffy_phase_ms": phase * 1e3, "pairs": pairs}
    (workdir / "ack_replay.json").write_text(json.dumps(res, indent=1))
    return res
