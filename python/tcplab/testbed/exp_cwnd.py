"""`cwnd`: CUBIC's congestion window, the untuned kernel against the `linux` profile, over 10 s bulk
transfers on {10, 50} Mb/s × {20, 100} ms RTT, 10 seeds, in two variants (docs/testbed.md,
"CUBIC's window against the kernel, 10 seeds"):

- `loss`: 1 % random loss as the same drop pattern on both sides: for seed s, data segment k is
  dropped (its first transmission only) when the k-th draw of Python's `random.Random(s)`
  (MT19937) is below 0.01 (`drop_pattern`), given to both as the flow's `drops`; the queue holds
  `LOSS_QUEUE` packets, so nothing else is lost;
- `droptail`: no drops asked for, a drop-tail queue of one bandwidth-delay product (`bdp_packets`)
  that CUBIC overflows.

Per run: the kernel's cwnd and ssthresh from `ss -tin` in the sender's namespace about every 10 ms
(testbed/sssample.py) and the simulator's `tcp` series, both resampled (last value held) on a
10 ms grid from each side's first data packet; the median over the grid of
|cwnd_sim − cwnd_kernel| / cwnd_kernel; each side's goodput (its own capture, first data packet to
the acknowledgment of the last byte); and, when slow start ended by HyStart, the exit cwnd
(kernel: /proc/net/netstat's TCPHystartTrainCwnd / TCPHystartDelayCwnd and its first ssthresh;
simulator: its first ssthresh, set outside recovery).
"""

from __future__ import annotations

import json
import math
import random
import statistics as st
from pathlib import Path
from typing import Optional

from .gridcmp import grid, relative_error, step_at  # noqa: F401  (step_at: also the experiment's own)

RATES = ("10Mbps", "50Mbps")
RTTS_MS = (20, 100)
SEEDS = 10
#: Seeds, rate and RTT of the quick mode (tests).
QUICK_SEEDS = 2
DURATION_S = 10.0
LOSS_P = 0.01
#: The random-loss variant's queue (packets): far more than CUBIC's window reaches at 1 % loss.
LOSS_QUEUE = 5000
#: The shortest transfer a pilot may give (segments): past the initial window and HyStart's
#: low window of 16, whatever the drops.
MIN_SEGMENTS = 20
#: The grid on which both windows are compared (seconds).
GRID_S = 0.010
#: The IP packet a full data segment makes (1448 B of data, 12 B of timestamps, 40 B of headers):
#: the unit of the drop-tail queue's bandwidth-delay product.
PACKET_BYTES = 1500
VARIANTS = ("loss", "droptail")
#: Testbed runs tried when `ss` showed the connection not once (2 of 80 runs on a loaded machine:
#: the sampler's loop started after the transfer).
SAMPLE_ATTEMPTS = 2


def drop_pattern(seed: int, n: int, p: float = LOSS_P) -> list:
    """The data segments (1-based) of an `n`-segment transfer dropped for `seed`: segment k when
    the k-th `random()` of `random.Random(seed)` is below p. A prefix of the pattern of a longer
    transfer, so the length can be chosen after the pattern."""
    if n < 0 or not (0.0 <= p <= 1.0):
        raise ValueError(f"drop_pattern: n = {n}, p = {p}: want n ≥ 0 and 0 ≤ p ≤ 1")
    rng = random.Random(seed)
    return [k for k in range(1, n + 1) if rng.random() < p]


def rate_bps(rate: str) -> float:
    from .. import units

    return float(units.rate_bps(rate))


def bdp_packets(rate: str, rtt_ms: float) -> int:
    """One bandwidth-delay product in full-sized packets (`PACKET_BYTES`), rounded."""
    return max(1, round(rate_bps(rate) * rtt_ms / 1e3 / 8 / PACKET_BYTES))


def window_error(k_times, k_cwnd, s_times, s_cwnd, end_s: float, grid_s: float = GRID_S) -> dict:
    """Both windows on a common grid 0, grid_s, ... < end_s (times relative to each side's first
    data): the median and the 90th percentile over the grid of |sim − kernel| / kernel, the
    points compared, and the grid values themselves. Points before either side's first sample
    are left out."""
    pts = grid(end_s, grid_s)
    k = step_at(k_times, k_cwnd, pts)
    s = step_at(s_times, s_cwnd, pts)
    pairs = [(a, b) for a, b in zip(k, s) if a is not None and b is not None]
    # The time-averaged windows' ratio: blind to a shift in time of the same sawtooth, which
    # the pointwise error counts in full.
    mean_ratio = (sum(b for _, b in pairs) / sum(a for a, _ in pairs)) if pairs and sum(a for a, _ in pairs) > 0 else None
    return {**relative_error(k, s), "mean_ratio": mean_ratio, "grid": pts, "kernel": k, "sim": s}


def capture_times(path, payload: int = 1448) -> dict:
    """From a capture at the data sender: the first data packet's time, the time everything
    sent was acknowledged, the data bytes, goodput over that span, the retransmitted packets and
    the data segments (1-based, of `payload` bytes) whose first byte they carry."""
    from .. import trace

    pk = trace.packets(path)
    d = pk[(pk["dir"] == "a2b") & (pk["len"] > 0)]
    if d.empty:
        raise ValueError(f"{path}: no data packets")
    t0 = float(d["time_s"].iloc[0])
    end_seq = int((d["seq"] + d["len"]).max())
    first_seq = int(d["seq"].min())
    a = pk[(pk["dir"] == "b2a") & pk["ack"].notna()]
    done = a[a["ack"].astype("int64") >= end_seq]
    t1 = float(done["time_s"].iloc[0]) if not done.empty else float(pk["time_s"].iloc[-1])
    nbytes = end_seq - first_seq
    rx = d[d["retx"].astype(bool)]
    # The data segments (of `payload` bytes from the first) whose first byte a retransmission
    # carries: after a segment the kernel cut short, its segments no longer start on them.
    segs = set()
    for q, n in zip(rx["seq"], rx["len"]):
        lo, hi = int(q) - first_seq, int(q) - first_seq + int(n)
        segs.update(range(-(-lo // payload), -(-hi // payload)))
    segs = sorted(k + 1 for k in segs)
    return {"t0": t0, "t1": t1, "bytes": nbytes, "complete": not done.empty, "goodput_bps": nbytes * 8 / max(t1 - t0, 1e-9),
            "retx": len(rx), "retx_segments": segs}


def sim_window(series_tcp, smss: int) -> tuple:
    """The simulated sender's (times, cwnd in packets, ssthresh in packets or None, state);
    `smss`: the bytes of one packet in its window."""
    t = series_tcp[series_tcp["dir"] == "a2b"]
    ss = [None if (v is None or (isinstance(v, float) and math.isnan(v)) or str(v) == "<NA>") else int(v) // smss for v in t["ssthresh"]]
    return list(map(float, t["time_s"])), [int(c) // smss for c in t["cwnd"]], ss, list(map(str, t["state"]))


def sim_hystart_exit(times, cwnd, ssth, state) -> Optional[dict]:
    """The simulator's slow-start exit by HyStart: the first ssthresh, set while in avoidance
    (a loss sets it in recovery or loss instead)."""
    for t, c, s, st_ in zip(times, cwnd, ssth, state):
        if s is not None:
            return {"t": t, "ssthresh": s, "cwnd": c, "by_hystart": st_ == "avoidance"}
    return None


def kernel_hystart_exit(rows, counters: dict) -> dict:
    """The kernel's: its HyStart counters (one connection, so a *Cwnd counter is the window at the
    detection), and the first ssthresh `ss` showed."""
    first = next(((t, c, s) for t, c, s in rows if s is not None), None)
    train, delay = counters.get("TCPHystartTrainDetect", 0), counters.get("TCPHystartDelayDetect", 0)
    exit_cwnd = counters.get("TCPHystartTrainCwnd") if train else counters.get("TCPHystartDelayCwnd") if delay else None
    return {"counters": counters, "by": "train" if train else "delay" if delay else None, "cwnd": exit_cwnd,
            "first_ssthresh": first[2] if first else None, "first_ssthresh_t": first[0] if first else None}


def scenario(variant: str, rate: str, rtt_ms: float, seed: int, nseg: int, payload: int) -> dict:
    queue = LOSS_QUEUE if variant == "loss" else bdp_packets(rate, rtt_ms)
    flow = {"bytes": nseg * payload}
    if variant == "loss":
        flow["drops"] = [{"kind": "data", "segment": k} for k in drop_pattern(seed, nseg)]
    return {"name": f"cwnd-{variant}-{rate}-{rtt_ms}ms-s{seed}",
            "topology": {"kind": "single_link", "rate": rate, "delay": f"{rtt_ms / 2:g}ms", "queue": queue},
            "tcp": {"profile": "linux"}, "flows": [flow]}


def transfer_segments(variant: str, rate: str, rtt_ms: float, seed: int, payload: int, duration_s: float = DURATION_S) -> int:
    """The transfer's length: the whole segments the simulator has acknowledged `duration_s`
    after its first data packet under the same drops (a pilot run over a transfer the link could
    not finish in that time), so that each side's transfer lasts about `duration_s`; the testbed
    takes only finite transfers (docs/testbed.md, "The subset")."""
    from .. import api

    nmax = int(rate_bps(rate) * duration_s / 8 / payload * 1.1) + 10
    r = api.run(scenario(variant, rate, rtt_ms, seed, nmax, payload), seed=seed, series="tcp")
    t = r.series.tcp
    t = t[t["dir"] == "a2b"]
    t0 = float(t["time_s"].iloc[0])
    upto = t[t["time_s"] <= t0 + duration_s]
    acked = int(upto["snd_una"].iloc[-1]) - 1
    return max(MIN_SEGMENTS, acked // payload)


def plot(path: Path, kt, kc, st_, sc, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 4))
    ax.step(kt, kc, where="post", label="kernel (ss -tin)", lw=1)
    ax.step(st_, sc, where="post", label="simulator (linux)", lw=1)
    ax.set_xlabel("seconds since the first data packet")
    ax.set_ylabel("cwnd (packets)")
    ax.set_title(title)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def one_run(out: Path, variant: str, rate: str, rtt_ms: float, seed: int, payload: int, duration_s: float = DURATION_S) -> dict:
    """One testbed run with the kernel sampled (out/cwnd/<run>/: captures, ss.tsv, hystart.json,
    scenario.json), then `analyse` of it."""
    from .sssample import sample_run, write_run

    d = out / "cwnd" / f"{variant}-{rate}-{rtt_ms}ms-s{seed}"
    d.mkdir(parents=True, exist_ok=True)
    nseg = transfer_segments(variant, rate, rtt_ms, seed, payload, duration_s)
    scen = scenario(variant, rate, rtt_ms, seed, nseg, payload)
    for attempt in range(SAMPLE_ATTEMPTS):
        rows, sampler = sample_run(scen, d, timeout=max(120.0, 12 * duration_s))
        if sampler.error:
            raise RuntimeError(f"cwnd {d.name}: {sampler.error}")
        if len(rows) >= 2:
            break
    else:
        raise RuntimeError(f"cwnd {d.name}: ss showed the connection in none of {SAMPLE_ATTEMPTS} runs")
    write_run(d, rows, scen, variant=variant, rate=rate, rtt_ms=rtt_ms, seed=seed, segments=nseg, payload=payload)
    (d / "hystart.json").write_text(json.dumps(sampler.hystart))
    return analyse(d)


def read_ss(path: Path) -> list:
    """ss.tsv's rows: (wall-clock s, cwnd, ssthresh or None, rtt ms or None)."""
    rows = []
    for line in Path(path).read_text().splitlines():
        f = line.split("\t")
        rows.append((float(f[0]), int(f[1]), int(f[2]) if f[2] else None, float(f[3]) if len(f) > 3 and f[3] else None))
    return rows


def analyse(d: Path, jiffy_tick: Optional[dict] = None, hz: int = 250) -> dict:
    """The metrics of one run directory (written by `one_run`): the simulator is run again on the
    run's scenario and seed (deterministic), with its capture at the sender and its `tcp` series.
    With `jiffy_tick` (`tsphase.jiffy_tick` of the experiment's receivers), also a calibrated
    window error, shown apart: the simulation at the kernel's clock phases, its jiffies and its
    timestamps clock relative to the SYN (`clocks`). Writes cwnd.png and cwnd.json."""
    from .. import api

    d = Path(d)
    meta = json.loads((d / "scenario.json").read_text())
    scen, seed, payload = meta["scenario"], meta["seed"], meta["payload"]
    rows = read_ss(d / "ss.tsv")
    counters = json.loads((d / "hystart.json").read_text())
    rec = json.loads((d / "testbed.json").read_text())
    kcap = capture_times(rec["captures"]["sender"], payload)
    sim = api.run(scen, seed=seed, series="tcp", pcap=d / "sim-sender.pcap")
    scap = capture_times(d / "sim-sender.pcap", payload)
    pattern = [x["segment"] for x in scen["flows"][0].get("drops", [])]
    # The simulator counts cwnd in bytes of the segment it sends (the MSS less the timestamp
    # option: 1448 B), Linux in packets.
    s_t, s_c, s_s, s_state = sim_window(sim.series.tcp, payload)
    k_t = [r[0] - kcap["t0"] for r in rows]
    k_c = [r[1] for r in rows]
    s_rel = [t - scap["t0"] for t in s_t]
    end = min(kcap["t1"] - kcap["t0"], scap["t1"] - scap["t0"])
    err = window_error(k_t, k_c, s_rel, s_c, end)
    clocks = None
    if jiffy_tick:
        from . import tsphase

        ph = tsphase.phase(rec["captures"]["sender"])
        sets = [f"tcp.jiffy_offset={tsphase.jiffy_offset_for(jiffy_tick['tick_s'], hz, tsphase.syn_time(rec['captures']['sender']), tsphase.syn_time(d / 'sim-sender.pcap'))}"]
        if ph:
            sph = tsphase.phase(d / "sim-sender.pcap")
            sets.append(f"tcp.ts_offset={tsphase.offset_for(ph['since_tick_ms'] - (sph['since_tick_ms'] if sph else 0.0), 0.0)}")
        csim = api.run(scen, seed=seed, series="tcp", sets=sets)
        c_t, c_c, _, _ = sim_window(csim.series.tcp, payload)
        # The same clock as the run without the offsets: the SYN leaves at the same time.
        cerr = window_error(k_t, k_c, [t - scap["t0"] for t in c_t], c_c, end)
        clocks = {"sets": sets, "median_rel": cerr["median"], "p90_rel": cerr["p90"], "mean_cwnd_ratio": cerr["mean_ratio"]}
    plot(d / "cwnd.png", k_t, k_c, s_rel, s_c,
         f"{meta['variant']}, {meta['rate']}, RTT {meta['rtt_ms']:g} ms, seed {seed}: median |Δcwnd|/cwnd {err['median'] if err['median'] is not None else float('nan'):.3f}")
    from .lab import box_timing

    box = json.loads((d / "box-stats.json").read_text()) if (d / "box-stats.json").exists() else {}
    khy = kernel_hystart_exit([(t, c, s) for t, c, s in zip(k_t, k_c, [r[2] for r in rows])], counters)
    res = {"variant": meta["variant"], "rate": meta["rate"], "rtt_ms": meta["rtt_ms"], "seed": seed, "segments": meta["segments"],
           "bytes": meta["segments"] * payload, "drops": len(scen["flows"][0].get("drops", [])), "queue": scen["topology"]["queue"],
           "median_rel": err["median"], "p90_rel": err["p90"], "points": err["points"], "mean_cwnd_ratio": err["mean_ratio"], "samples": len(rows),
           "sample_period_ms": (1e3 * (rows[-1][0] - rows[0][0]) / (len(rows) - 1)) if len(rows) > 1 else None,
           "duration_kernel_s": kcap["t1"] - kcap["t0"], "duration_sim_s": scap["t1"] - scap["t0"],
           "goodput_kernel_bps": kcap["goodput_bps"], "goodput_sim_bps": scap["goodput_bps"],
           "goodput_ratio": scap["goodput_bps"] / kcap["goodput_bps"], "complete": kcap["complete"] and scap["complete"],
           "retx_kernel": kcap["retx"], "retx_sim": scap["retx"],
           # Every segment of the pattern sent again: the drop reached both senders.
           "pattern_resent_kernel": set(pattern) <= set(kcap["retx_segments"]), "pattern_resent_sim": set(pattern) <= set(scap["retx_segments"]),
           "hystart_kernel": khy, "hystart_sim": sim_hystart_exit(s_rel, s_c, s_s, s_state), "clocks": clocks,
           # The box's counts (box-stats.json is written four times a second: the last quarter
           # second of a run may be missing from them).
           "box_dropped_by_seq": box.get("dropped_by_seq"),
           # How far the box kept to its schedule (a stall of the machine shows here).
           "box_timing": box_timing(box, since=kcap["t0"]),
           # The box's queue drops, per link direction (data direction first).
           "box_dropped_queue": [int(v.get("dropped", 0)) for v in box.get("links") or []]}
    (d / "cwnd.json").write_text(json.dumps(res, indent=1, default=str))
    return res


def _hy(r) -> str:
    k, s = r["hystart_kernel"], r["hystart_sim"]
    if not (k["by"] and s and s["by_hystart"]):
        return "–"
    return f"{k['cwnd']}/{s['ssthresh']}"


def valid(r: dict) -> bool:
    """A run the table counts: the kernel sampled, and each segment of the drop pattern sent
    again by both senders (the drop reached the kernel)."""
    return r.get("median_rel") is not None and r.get("pattern_resent_kernel", True) and r.get("pattern_resent_sim", True)


def table(runs: list, cells: list) -> str:
    clocked = any(r.get("clocks") for r in runs)
    lines = ["| variant | rate | RTT | seeds | median of medians of \\|Δcwnd\\|/cwnd | worst seed (its median) | goodput sim/kernel (median, min–max) | "
             "mean cwnd sim/kernel (median) | HyStart exit cwnd kernel/sim (seeds where both exit by HyStart) |"
             + (" the same median, sim at the kernel's clock phases |" if clocked else ""), "|---|---|---|---|---|---|---|---|---|" + ("---|" if clocked else "")]
    for variant, rate, rtt in cells:
        rs = [r for r in runs if (r["variant"], r["rate"], r["rtt_ms"]) == (variant, rate, rtt) and valid(r)]
        if not rs:
            continue
        meds = [r["median_rel"] for r in rs]
        worst = max(rs, key=lambda r: r["median_rel"])
        gr = [r["goodput_ratio"] for r in rs]
        mr = [r["mean_cwnd_ratio"] for r in rs if r.get("mean_cwnd_ratio") is not None] or [float("nan")]
        hy = [_hy(r) for r in rs if _hy(r) != "–"]
        lines.append(f"| {variant} | {rate} | {rtt} ms | {len(rs)} | {st.median(meds) * 100:.1f} % | {worst['seed']} ({worst['median_rel'] * 100:.1f} %) | "
                     f"{st.median(gr):.3f} ({min(gr):.3f}–{max(gr):.3f}) | {st.median(mr):.3f} | {', '.join(hy) if hy else '–'} |"
                     + (f" {st.median([r['clocks']['median_rel'] for r in rs if r.get('clocks')]) * 100:.1f} % |" if clocked and any(r.get("clocks") for r in rs) else (" – |" if clocked else "")))
    left = [f"{r['variant']} {r['rate']} {r['rtt_ms']} ms seed {r['seed']}" for r in runs if not valid(r)]
    if left:
        lines.append(f"\nLeft out (no kernel samples, or a dropped segment the kernel never resent): {', '.join(left)}.")
    return "\n".join(lines)


def cwnd(out: Path, quick: bool, variants=VARIANTS, seeds: Optional[int] = None) -> tuple[str, dict]:
    """The experiment (`tcplab testbed experiments --only cwnd [--quick]`): every cell, seed and
    variant, one testbed run and one simulation each; out/cwnd/<run>/ holds each run's captures,
    ss.tsv, cwnd.png and cwnd.json."""
    from .. import api, units

    cfg = api.profiles()["linux"]
    smss = int(units.size_bytes(cfg["mss"]))
    payload = smss - (12 if cfg.get("timestamps") else 0)  # 1448 B: what each data segment carries
    rates = RATES[:1] if quick else RATES
    rtts = RTTS_MS[:1] if quick else RTTS_MS
    nseeds = seeds or (QUICK_SEEDS if quick else SEEDS)
    cells = [(v, r, t) for v in variants for r in rates for t in rtts]
    runs = []
    for v, r, t in cells:
        for s in range(1, nseeds + 1):
            runs.append(one_run(Path(out), v, r, t, s, payload))
    text = table(runs, cells)
    return text, {"runs": runs, "payload": payload, "smss": smss}


def reanalyse(out: Path, clocks: bool = False, hz: int = 250) -> tuple[str, dict]:
    """`analyse` again every run under out/cwnd/ (no testbed run: the captures, ss.tsv and the
    HyStart counters are kept), and the table; with `clocks`, each run also simulated at the
    kernel's clock phases (the jiffies' tick pooled over the runs' receivers)."""
    dirs = [d for d in sorted((Path(out) / "cwnd").iterdir()) if (d / "scenario.json").exists()]
    tick = None
    if clocks:
        from . import tsphase

        tick = tsphase.jiffy_tick([d / "real-receiver.pcap" for d in dirs if (d / "real-receiver.pcap").exists()], hz)
    runs = [analyse(d, tick, hz) for d in dirs]
    cells = []
    for r in runs:
        c = (r["variant"], r["rate"], r["rtt_ms"])
        if c not in cells:
            cells.append(c)
    return table(runs, cells), {"runs": runs}
