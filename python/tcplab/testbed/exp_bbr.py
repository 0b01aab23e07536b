"""`bbr`: BBR v1, the untuned kernel's `tcp_bbr.c` (route `congctl bbr`) against the `linux`
profile with `cc = "bbr"` (docs/testbed.md, "BBR against the kernel"), over bulk transfers of
about `DURATION_S` seconds (past `bbr_min_rtt_win_sec`, 10 s, so one PROBE_RTT happens) on
{10, 50} Mb/s × {40, 100} ms RTT, in two variants:

- `clean`: no loss, a queue of `QUEUE_BDPS` bandwidth-delay products (STARTUP's window of
  2.89·BDP fits, so nothing overflows);
- `loss`: 1 % random loss as the same drop pattern on both sides (`exp_cwnd.drop_pattern`: data
  segment k dropped once, by sequence number), the same queue.

Per run, the kernel's BBR state from `ss -tin` in the sender's namespace about every 10 ms
(`bbr:(bw,mrtt,pacing_gain,cwnd_gain)`, `pacing_rate`, cwnd; `bbr_get_info`) and the simulator's
`tcp` series (`bbr_mode`, `bbr_bw`, `pacing_rate`, cwnd), times from each side's SYN:

- the mode sequence and the time of each change. The kernel does not report its mode; its gains
  name it (`bbr_update_gains`): STARTUP paces and sizes cwnd at `bbr_high_gain` (2.89), DRAIN
  paces at `bbr_drain_gain` (1/2.89) with the high cwnd gain, PROBE_BW has cwnd gain 2
  (`bbr_cwnd_gain`) and PROBE_RTT both gains 1. A change is known to lie between the last
  sample in the old mode and the first in the new one: the simulator's change is compared with
  that interval (0 inside it);
- each PROBE_RTT's length and its smallest cwnd (`bbr_cwnd_min_target`, 4);
- the bandwidth estimate and the pacing rate after STARTUP: the medians over PROBE_BW on a 10 ms
  grid (most of the gain cycle's 8 phases pace at gain 1, so the median is the gain-1 rate);
- goodput (each side's capture) and retransmissions.

`tcplab testbed experiments --only bbr [--quick]`.
"""

from __future__ import annotations

import json
import statistics as st
from pathlib import Path
from typing import Optional, Sequence

from .exp_cwnd import bdp_packets, capture_times, drop_pattern
from . import tsphase
from .gridcmp import grid, step_at

RATES = ("10Mbps", "50Mbps")
RTTS_MS = (40, 100)
VARIANTS = ("clean", "loss")
#: Long enough for one PROBE_RTT (10 s after the minimum RTT was first seen) and its return to
#: PROBE_BW.
DURATION_S = 13.0
#: The quick mode's transfer: STARTUP, DRAIN and a few PROBE_BW cycles, no PROBE_RTT.
QUICK_DURATION_S = 3.0
#: The queue in bandwidth-delay products (and at least `MIN_QUEUE` packets): STARTUP's window
#: (cwnd gain 2.89) fits with room to spare, so the clean variant loses nothing.
QUEUE_BDPS = 4
MIN_QUEUE = 200
#: The seed of the loss variant's drop pattern.
LOSS_SEED = 1
GRID_S = 0.010
#: The gains `ss` prints (`bbr_get_info`: gain / BBR_UNIT, printed with %g).
HIGH_GAIN = 739 / 256  # bbr_high_gain = BBR_UNIT * 2885 / 1000 + 1
DRAIN_GAIN = 88 / 256  # bbr_drain_gain = BBR_UNIT * 1000 / 2885
MODES = ("startup", "drain", "probe_bw", "probe_rtt")
#: Letters for the table's mode sequences.
LETTER = {"startup": "S", "drain": "D", "probe_bw": "B", "probe_rtt": "R"}


# -- the kernel's BBR state from `ss -tin` ---------------------------------------------------

_UNITS = {"": 1.0, "K": 1e3, "M": 1e6, "G": 1e9}


def _rate(text: str, key: str) -> Optional[float]:
    """A rate `ss` prints in bits per second with a unit suffix (`pacing_rate 24.9Mbps`), in
    bytes per second."""
    import re

    m = re.search(r"\b" + key + r"[ :]([\d.]+)([KMG]?)bps", text)
    return float(m.group(1)) * _UNITS[m.group(2)] / 8 if m else None


def parse_ss_bbr(text: str):
    """(cwnd, bw B/s, mrtt ms, pacing_gain, cwnd_gain, pacing_rate B/s or None) of the first
    connection in `ss -tin` output, or None when it shows no BBR state."""
    import re

    m = re.search(r"\bcwnd:(\d+)", text)
    b = re.search(r"bbr:\(bw:([\d.]+)([KMG]?)bps,mrtt:([\d.]+)(?:,pacing_gain:([\d.]+))?(?:,cwnd_gain:([\d.]+))?", text)
    if not (m and b):
        return None
    return (int(m.group(1)), float(b.group(1)) * _UNITS[b.group(2)] / 8, float(b.group(3)),
            float(b.group(4)) if b.group(4) else None, float(b.group(5)) if b.group(5) else None, _rate(text, "pacing_rate"))


def kernel_mode(bw: float, pacing_gain: Optional[float], cwnd_gain: Optional[float]) -> Optional[str]:
    """The mode `bbr_update_gains` gives these gains: STARTUP (both high), DRAIN (pacing at the
    drain gain, cwnd at the high one), PROBE_BW (cwnd gain 2), PROBE_RTT (both 1). Before the
    first ACK (no bandwidth sample yet) the connection is in STARTUP (`bbr_init`). None for
    gains no mode gives."""
    if not bw:
        return "startup"
    if pacing_gain is None or cwnd_gain is None:
        return None
    near = lambda a, b: abs(a - b) < 0.01  # noqa: E731  (ss prints 6 significant digits)
    if near(cwnd_gain, HIGH_GAIN):
        return "startup" if near(pacing_gain, HIGH_GAIN) else "drain" if near(pacing_gain, DRAIN_GAIN) else None
    if near(cwnd_gain, 2.0):
        return "probe_bw"
    if near(cwnd_gain, 1.0) and near(pacing_gain, 1.0):
        return "probe_rtt"
    return None


def changes(times: Sequence[float], modes: Sequence[Optional[str]]) -> list:
    """The mode changes of a sampled series: (mode, time of the last sample in the old mode, time
    of the first in the new one), the first entry (mode, None, first time). Samples whose mode
    is None are skipped."""
    out, prev_t, prev_m = [], None, None
    for t, m in zip(times, modes):
        if m is None:
            continue
        if m != prev_m:
            out.append((m, prev_t, t))
        prev_t, prev_m = t, m
    return out


def interval_distance(t: float, lo: Optional[float], hi: float) -> float:
    """How far `t` lies outside [lo, hi] (0 inside; lo None: only the upper end binds), signed:
    negative before, positive after."""
    if lo is not None and t < lo:
        return t - lo
    if t > hi:
        return t - hi
    return 0.0


def compare_modes(kernel: list, sim: list, rtt_s: float) -> dict:
    """The kernel's changes (`changes` of its samples) against the simulator's (exact times: lo
    = hi), matched in order while the modes agree. Per matched change: the mode, the kernel's
    interval, the simulator's time and the distance (s and round trips)."""
    ks = [m for m, _, _ in kernel]
    ss = [m for m, _, _ in sim]
    rows, n = [], 0
    for (km, lo, hi), (sm, _, t) in zip(kernel, sim):
        if km != sm:
            break
        n += 1
        if lo is None:
            continue  # the first mode: entered at the start on both sides
        d = interval_distance(t, lo, hi)
        rows.append({"mode": km, "kernel_lo": lo, "kernel_hi": hi, "sim": t, "dt_s": d, "dt_rtt": d / rtt_s})
    worst = max((abs(r["dt_rtt"]) for r in rows), default=None)
    return {"kernel": "".join(LETTER[m] for m in ks), "sim": "".join(LETTER[m] for m in ss), "same_sequence": ks == ss,
            "matched": n, "changes": rows, "within_1rtt": sum(abs(r["dt_rtt"]) <= 1.0 + 1e-9 for r in rows),
            "worst_abs_dt_rtt": worst}


def probe_rtts(times: Sequence[float], modes: Sequence[Optional[str]], cwnd: Sequence[float]) -> list:
    """Each PROBE_RTT of a series: its start (first sample in it), its length (to the first
    sample after it; None if the series ends in it) and the smallest cwnd in it."""
    out, cur = [], None
    for t, m, c in zip(times, modes, cwnd):
        if m is None:
            continue
        if m == "probe_rtt":
            if cur is None:
                cur = {"start": t, "length": None, "min_cwnd": c}
            else:
                cur["min_cwnd"] = min(cur["min_cwnd"], c)
        elif cur is not None:
            cur["length"] = t - cur["start"]
            out.append(cur)
            cur = None
    if cur is not None:
        out.append(cur)
    return out


def median_in(times, values, modes, mode: str, step: float = GRID_S) -> Optional[float]:
    """The median on a `step` grid of a step series over the grid points where `modes` (a step
    series on the same times) is `mode`; None without such points or values."""
    if not len(times):
        return None
    pts = grid(times[-1], step, inclusive=True)
    v = step_at(times, values, pts)
    m = step_at(times, modes, pts)
    xs = [a for a, b in zip(v, m) if b == mode and a is not None and a > 0]
    return st.median(xs) if xs else None


def rel(sim: Optional[float], ref: Optional[float]) -> Optional[float]:
    return None if sim is None or not ref else (sim - ref) / ref


# -- one run -------------------------------------------------------------------------------

def scenario(variant: str, rate: str, rtt_ms: float, nseg: int, payload: int, seed: int = LOSS_SEED) -> dict:
    flow: dict = {"bytes": nseg * payload}
    if variant == "loss":
        flow["drops"] = [{"kind": "data", "segment": k} for k in drop_pattern(seed, nseg)]
    queue = max(MIN_QUEUE, QUEUE_BDPS * bdp_packets(rate, rtt_ms))
    return {"name": f"bbr-{variant}-{rate}-{rtt_ms}ms",
            "topology": {"kind": "single_link", "rate": rate, "delay": f"{rtt_ms / 2:g}ms", "queue": queue},
            "tcp": {"profile": "linux", "cc": "bbr"}, "flows": [flow]}


def transfer_segments(variant: str, rate: str, rtt_ms: float, payload: int, duration_s: float) -> int:
    """The whole segments the simulator has acknowledged `duration_s` after its first data packet
    (a pilot over a transfer the link cannot finish in that time): each side's transfer then
    lasts about `duration_s`."""
    from .. import api
    from .exp_cwnd import rate_bps

    nmax = int(rate_bps(rate) * duration_s / 8 / payload * 1.1) + 10
    r = api.run(scenario(variant, rate, rtt_ms, nmax, payload), seed=LOSS_SEED, series="tcp")
    t = r.series.tcp
    t = t[t["dir"] == "a2b"]
    upto = t[t["time_s"] <= float(t["time_s"].iloc[0]) + duration_s]
    return max(20, (int(upto["snd_una"].iloc[-1]) - 1) // payload)


def one_run(out: Path, variant: str, rate: str, rtt_ms: float, payload: int, duration_s: float) -> dict:
    """The testbed run with the kernel sampled (out/bbr/<run>/: captures, ss.tsv, scenario.json),
    then `analyse`."""
    from .sssample import sample_run, write_run

    d = Path(out) / "bbr" / f"{variant}-{rate}-{rtt_ms}ms"
    d.mkdir(parents=True, exist_ok=True)
    nseg = transfer_segments(variant, rate, rtt_ms, payload, duration_s)
    scen = scenario(variant, rate, rtt_ms, nseg, payload)
    rows, sampler = sample_run(scen, d, parse=parse_ss_bbr, timeout=max(120.0, 12 * duration_s))
    if sampler.error:
        raise RuntimeError(f"bbr {d.name}: {sampler.error}")
    if len(rows) < 2:
        raise RuntimeError(f"bbr {d.name}: ss showed the connection's BBR state {len(rows)} times")
    write_run(d, rows, scen, variant=variant, rate=rate, rtt_ms=rtt_ms, segments=nseg, payload=payload)
    return analyse(d)


def read_ss(path: Path) -> list:
    """ss.tsv's rows: (wall-clock s, cwnd, bw, mrtt, pacing_gain, cwnd_gain, pacing_rate)."""
    rows = []
    for line in Path(path).read_text().splitlines():
        f = line.split("\t")
        rows.append((float(f[0]), int(f[1]), float(f[2]), float(f[3]),
                     *(float(x) if x else None for x in f[4:7])))
    return rows


def analyse(d: Path, jiffy_tick: Optional[dict] = None, hz: int = 250) -> dict:
    """The metrics of one run directory (written by `one_run`); the simulator is run again on the
    scenario (deterministic) with its capture at the sender and its `tcp` series. The calibrated
    column (`ts_phased`) simulates it again at the kernel's timestamps clock phase and, with
    `jiffy_tick` (`tsphase.jiffy_tick` of the experiment's receivers), its jiffies' phase too.
    Writes bbr.json and bbr.png."""
    from .. import api
    from .lab import box_timing

    d = Path(d)
    meta = json.loads((d / "scenario.json").read_text())
    scen, payload, rtt_s = meta["scenario"], meta["payload"], meta["rtt_ms"] / 1e3
    rec = json.loads((d / "testbed.json").read_text())
    kcap = capture_times(rec["captures"]["sender"], payload)
    k0 = tsphase.syn_time(rec["captures"]["sender"])
    rows = read_ss(d / "ss.tsv")
    kt = [r[0] - k0 for r in rows]
    kmodes = [kernel_mode(r[2], r[4], r[5]) for r in rows]
    kcwnd = [r[1] for r in rows]
    kbw = [r[2] for r in rows]
    kpace = [r[6] for r in rows]

    sim = api.run(scen, seed=LOSS_SEED, series="tcp", pcap=d / "sim-sender.pcap")
    scap = capture_times(d / "sim-sender.pcap", payload)
    s0 = tsphase.syn_time(d / "sim-sender.pcap")
    t = sim.series.tcp
    t = t[t["dir"] == "a2b"]
    st_ = [float(x) - s0 for x in t["time_s"]]
    smodes = [str(m) if str(m) in MODES else None for m in t["bbr_mode"]]
    scwnd = [int(c) / payload for c in t["cwnd"]]
    sbw = [float(x) for x in t["bbr_bw"]]
    space = [None if str(x) in ("<NA>", "nan", "None") else float(x) for x in t["pacing_rate"]]

    modes = compare_modes(changes(kt, kmodes), changes(st_, smodes), rtt_s)
    # The same simulation with its timestamps clock ticking where the kernel's did relative to
    # the SYN (`tsphase`; the TSecr RTT samples, whole milliseconds, decide when min_rtt last
    # fell with loss), and its jiffies where the kernel's were (min_rtt's stamp and PROBE_RTT's
    # 200 ms count them): a calibrated comparison, shown apart.
    phased = None
    kph, sph = tsphase.phase(rec["captures"]["sender"]), tsphase.phase(d / "sim-sender.pcap")
    if kph and sph:
        pscen = json.loads(json.dumps(scen))
        pscen.setdefault("tcp", {})["ts_offset"] = tsphase.offset_for(kph["since_tick_ms"] - sph["since_tick_ms"], 0.0)
        if jiffy_tick:
            pscen["tcp"]["jiffy_offset"] = tsphase.jiffy_offset_for(jiffy_tick["tick_s"], hz, tsphase.syn_time(rec["captures"]["sender"]),
                                                                    tsphase.syn_time(d / "sim-sender.pcap"))
        psim = api.run(pscen, seed=LOSS_SEED, series="tcp")
        pt = psim.series.tcp
        pt = pt[pt["dir"] == "a2b"]
        # The same clock as the run without the offset: the SYN leaves at the same simulated time.
        pst = [float(x) - s0 for x in pt["time_s"]]
        pmodes = [str(m) if str(m) in MODES else None for m in pt["bbr_mode"]]
        phased = {"kernel_since_tick_ms": kph["since_tick_ms"], "ts_offset": pscen["tcp"]["ts_offset"],
                  "jiffy_offset": pscen["tcp"].get("jiffy_offset"),
                  "modes": compare_modes(changes(kt, kmodes), changes(pst, pmodes), rtt_s),
                  "probe_rtt_sim": probe_rtts(pst, pmodes, [int(c) / payload for c in pt["cwnd"]])}
    kpr, spr = probe_rtts(kt, kmodes, kcwnd), probe_rtts(st_, smodes, scwnd)
    bw_k, bw_s = median_in(kt, kbw, kmodes, "probe_bw"), median_in(st_, sbw, smodes, "probe_bw")
    pr_k, pr_s = median_in(kt, kpace, kmodes, "probe_bw"), median_in(st_, space, smodes, "probe_bw")
    pattern = [x["segment"] for x in scen["flows"][0].get("drops", [])]
    gaps = [b - a for a, b in zip(kt, kt[1:])]
    box = json.loads((d / "box-stats.json").read_text()) if (d / "box-stats.json").exists() else {}
    plot(d / "bbr.png", kt, kcwnd, kbw, st_, scwnd, sbw, f"BBR, {meta['variant']}, {meta['rate']}, RTT {meta['rtt_ms']:g} ms")
    res = {"variant": meta["variant"], "rate": meta["rate"], "rtt_ms": meta["rtt_ms"], "segments": meta["segments"],
           "drops": len(pattern), "queue": scen["topology"]["queue"], "samples": len(rows),
           "sample_gap_ms": {"median": 1e3 * st.median(gaps), "max": 1e3 * max(gaps)} if gaps else None,
           "unknown_kernel_samples": sum(m is None for m in kmodes),
           "modes": modes, "probe_rtt_kernel": kpr, "probe_rtt_sim": spr, "ts_phased": phased,
           "bw_kernel": bw_k, "bw_sim": bw_s, "bw_error": rel(bw_s, bw_k),
           "pacing_kernel": pr_k, "pacing_sim": pr_s, "pacing_error": rel(pr_s, pr_k),
           "goodput_kernel_bps": kcap["goodput_bps"], "goodput_sim_bps": scap["goodput_bps"],
           "goodput_ratio": scap["goodput_bps"] / kcap["goodput_bps"], "complete": kcap["complete"] and scap["complete"],
           "retx_kernel": kcap["retx"], "retx_sim": scap["retx"],
           "pattern_resent_kernel": set(pattern) <= set(kcap["retx_segments"]),
           "pattern_resent_sim": set(pattern) <= set(scap["retx_segments"]),
           "box_timing": box_timing(box, since=kcap["t0"]),
           "box_dropped_queue": [int(v.get("dropped", 0)) for v in box.get("links") or []]}
    (d / "bbr.json").write_text(json.dumps(res, indent=1, default=str))
    return res


def plot(path: Path, kt, kc, kbw, st_, sc, sbw, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a1, a2) = plt.subplots(2, 1, figsize=(9, 5.5), sharex=True)
    a1.step(kt, kc, where="post", label="kernel (ss -tin)", lw=1)
    a1.step(st_, sc, where="post", label="simulator (linux, bbr)", lw=1)
    a1.set_ylabel("cwnd (packets)")
    a1.legend()
    a1.set_title(title)
    a2.step(kt, [8 * x / 1e6 for x in kbw], where="post", lw=1)
    a2.step(st_, [8 * x / 1e6 for x in sbw], where="post", lw=1)
    a2.set_ylabel("bandwidth estimate (Mb/s)")
    a2.set_xlabel("seconds since the SYN")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


# -- the experiment ------------------------------------------------------------------------

def cases(quick: bool) -> list:
    if quick:
        return [("clean", RATES[0], RTTS_MS[0])]
    return [(v, r, t) for v in VARIANTS for r in RATES for t in RTTS_MS]


def _ms(v) -> str:
    return "–" if v is None else f"{1e3 * v:.0f}"


def _pct(v) -> str:
    return "–" if v is None else f"{100 * v:+.1f} %"


def _mbps(v) -> str:
    return "–" if v is None else f"{8 * v / 1e6:.3f}"


def row(r: dict) -> str:
    m = r["modes"]
    kp, sp = r["probe_rtt_kernel"], r["probe_rtt_sim"]
    prs = (f"{', '.join(_ms(p['length']) for p in kp) or '–'} / {', '.join(_ms(p['length']) for p in sp) or '–'}; "
           f"cwnd {min((p['min_cwnd'] for p in kp), default='–')} / {min((round(p['min_cwnd']) for p in sp), default='–')}")
    worst = "–" if m["worst_abs_dt_rtt"] is None else f"{m['worst_abs_dt_rtt']:.2f}"
    ph = r.get("ts_phased")
    phc = "–" if not ph else f"{ph['modes']['within_1rtt']} of {len(ph['modes']['changes'])}"
    return (f"| {r['variant']} | {r['rate']} | {r['rtt_ms']} ms | {m['kernel']} / {m['sim']} | {m['within_1rtt']} of {len(m['changes'])} | {phc} | {worst} | "
            f"{', '.join(_ms(p['start']) for p in kp) or '–'} / {', '.join(_ms(p['start']) for p in sp) or '–'} | {prs} | "
            f"{_mbps(r['bw_kernel'])} / {_mbps(r['bw_sim'])} ({_pct(r['bw_error'])}) | {_mbps(r['pacing_kernel'])} / {_mbps(r['pacing_sim'])} ({_pct(r['pacing_error'])}) | "
            f"{r['goodput_ratio']:.3f} | {r['retx_kernel']} / {r['retx_sim']} |")


HEADER = ["| variant | rate | RTT | modes kernel / sim | changes within 1 RTT | the same, sim at the kernel's clock phases | worst \\|Δt\\| (RTT) | PROBE_RTT starts (ms) kernel / sim | "
          "PROBE_RTT lengths (ms) kernel / sim | bw estimate in PROBE_BW (Mb/s) kernel / sim | pacing rate in PROBE_BW (Mb/s) kernel / sim | "
          "goodput sim/kernel | retransmissions kernel / sim |", "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]


def bbr(out: Path, quick: bool) -> tuple[str, dict]:
    """Every case of `cases(quick)`, one testbed run and one simulation each; out/bbr/<run>/
    holds each run's captures, ss.tsv, bbr.json and bbr.png."""
    from .. import api, units

    cfg = api.profiles()["linux"]
    payload = int(units.size_bytes(cfg["mss"])) - (12 if cfg.get("timestamps") else 0)
    dur = QUICK_DURATION_S if quick else DURATION_S
    dirs = []
    for v, r, t in cases(quick):
        one_run(Path(out), v, r, t, payload, dur)
        dirs.append(Path(out) / "bbr" / f"{v}-{r}-{t}ms")
    # Analysed again once all have run: the calibrated column's jiffies tick is pooled over them.
    return analyse_all(dirs)


def table(runs: list) -> str:
    lines = list(HEADER) + [row(r) for r in runs]
    lines.append("\nModes: S STARTUP, D DRAIN, B PROBE_BW, R PROBE_RTT (the kernel's read from its gains). A change's Δt is the "
                 "simulator's time outside the interval between the kernel's last sample in the old mode and its first in the new one.")
    return "\n".join(lines)


def reanalyse(out: Path, hz: int = 250) -> tuple[str, dict]:
    """`analyse` again every run under out/bbr/ (the captures and ss.tsv are kept), and the table;
    the calibrated column at the kernel's timestamps and jiffies phases (the jiffies' tick pooled
    over the runs' receivers, when their captures hold timer-driven ACKs)."""
    return analyse_all([d for d in sorted((Path(out) / "bbr").iterdir()) if (d / "scenario.json").exists()], hz)


def analyse_all(dirs: Sequence[Path], hz: int = 250) -> tuple[str, dict]:
    """`analyse` each run directory with the jiffies' tick pooled over their receivers, and the
    table."""
    tick = tsphase.jiffy_tick([d / "real-receiver.pcap" for d in dirs if (d / "real-receiver.pcap").exists()], hz)
    runs = [analyse(d, tick, hz) for d in dirs]
    return table(runs), {"runs": runs}
