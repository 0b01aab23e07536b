"""Allman, Hayes & Ostermann 1998, "An Evaluation of TCP with Larger Initial Windows": the modem test
(16 KB transfers over 28.8 kb/s with IW 1-32, paired with IW 1) as stored sweeps over the modem's
unknown buffer and delay, checks A1-A4, Figures 4a/4b, and the slow-start formulas (eq. 1, 2, 5, 6)
beside simulated loss-free transfers.

    tcplab reproduce allman98 [--quick] [--out DIR] [--workers N]

The Internet test (100 real hosts, A5-A8) is not part of this module yet (docs/reproductions.md).
Published numbers: TARGETS.md §1.
"""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import List, Optional

import numpy as np
import pandas as pd

from ..report import Check, Report

SCALES = ("tiny", "quick", "full")
HERE = Path(__file__).resolve()
IWS = (1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 24, 32)
QUEUES = (16, 24, 32)          # modem buffer, packets
DELAYS = ("50ms", "100ms", "150ms")  # one-way propagation delay of the dial-up path
DEFAULT = (24, "100ms")        # the setting the checks judge (the others are shown)
MSS = 512
SEGMENTS = 16384 // MSS        # 32

CHOICES = [
    "Sender: the `bsd` profile (4.4BSD Reno: 500 ms slow timer, 200 ms delayed-ACK tick, initial RTO 6 s), MSS 512, the initial "
    "window in segments (`initial_window = k`, the paper's `initwin_segs`), a 32 KB receive window (the paper's receivers advertised "
    "more than 16 KB); the receiver delays ACKs as a BSD stack does.",
    "Path: one 28.8 kb/s link. The modem's buffer and the path's delay are not in the paper: the runs sweep buffers of "
    f"{', '.join(map(str, QUEUES))} packets and one-way delays of {', '.join(DELAYS)}; the checks judge {DEFAULT[0]} packets and "
    f"{DEFAULT[1]}, and the figures show every setting. CSLIP header compression is not modelled (40 bytes of headers a segment).",
    "Transfer time: the connection at the sender, from the SYN to the acknowledgment of the FIN (as tcptrace reports a connection "
    "traced at the sender). A simulated path without random loss gives the same time in each of the paper's 30 rounds, so one "
    "run per IW stands for the 30 (their spread is zero).",
    "Time saved by IW k: the mean over test groups of (T(1) − T(k)) / T(1) × 100, the mean of per-group percentages (§1.4 does not "
    "say which; with identical rounds both readings agree). Extra retransmissions: the mean of R(k) − R(1) per transfer.",
]


def scenario_path() -> Path:
    p = HERE.parent / "allman98" / "modem.toml"
    if not p.is_file():
        raise FileNotFoundError(f"{p}: the base scenario of the reproduction is missing from this installation")
    return p


def _grid(scale: str):
    if scale == "tiny":
        return (1, 4, 16, 32), (24,), ("100ms",)
    if scale == "quick":
        return IWS, (16, 24), ("100ms",)
    return IWS, QUEUES, DELAYS


def _sweep(axes: dict, name: str, store_dir: Path, workers, progress, sets=()):
    from ..sweep import sweep

    store_dir.mkdir(parents=True, exist_ok=True)
    return sweep(str(scenario_path()), sweep={"name": name, "axes": axes, "replicates": 1, "seed": 1}, store=store_dir / f"{name}.duckdb",
                 workers=workers, progress=progress, sets=list(sets), retry_failed=True)


def modem_runs(scale: str, out: Path, workers, progress) -> pd.DataFrame:
    iws, queues, delays = _grid(scale)
    s = _sweep({"topology.queue": list(queues), "topology.delay": list(delays), "tcp.initial_window": list(iws)},
               f"allman98_modem_{scale}", out / "store", workers, progress)
    t = s.transfers.rename(columns={"topology.queue": "queue", "topology.delay": "delay", "tcp.initial_window": "iw"})
    t["time_s"] = t["acked_s"] - t["start_s"]
    base = t[t["iw"] == 1].set_index(["queue", "delay", "replicate"])
    t = t.join(base[["time_s", "retransmits"]].rename(columns={"time_s": "time1_s", "retransmits": "rexmit1"}), on=["queue", "delay", "replicate"])
    t["saved_pct"] = (t["time1_s"] - t["time_s"]) / t["time1_s"] * 100
    t["extra_rexmit"] = t["retransmits"] - t["rexmit1"]
    cols = ["queue", "delay", "iw", "replicate", "time_s", "saved_pct", "retransmits", "extra_rexmit", "timeouts", "fast_retransmits"]
    t = t[cols].sort_values(["queue", "delay", "iw"], kind="mergesort").reset_index(drop=True)
    t.to_csv(out / "tables" / "modem_runs.csv", index=False)
    return t


def _checks(t: pd.DataFrame) -> List[Check]:
    q, d = DEFAULT
    m = t[(t["queue"] == q) & (t["delay"] == d)].groupby("iw")[["saved_pct", "extra_rexmit"]].mean()
    if m.empty:
        return []
    at = f"(buffer {q} packets, {d} one way)"
    checks = []
    mid = m.loc[[k for k in m.index if 3 <= k <= 16]]
    checks.append(Check(f"A1 modem {at}: time saved by IW 3–16 vs IW 1, mean %", "≈ 10", round(mid["saved_pct"].mean(), 1),
                        rule=lambda o, p: 5 <= float(o) <= 20, tol_text="5 to 20 %"))
    small = m.loc[[k for k in m.index if k <= 16]]
    checks.append(Check(f"A2 modem {at}: extra retransmissions per transfer with IW ≤ 16, largest", "0", round(small["extra_rexmit"].max(), 2),
                        rule=lambda o, p: float(o) <= 0, tol_text="none"))
    if 32 in m.index:
        checks.append(Check(f"A3 modem {at}: IW 32 transfer time vs IW 1, % change", "≈ +50", round(-m.loc[32, "saved_pct"], 1),
                            rule=lambda o, p: 20 <= float(o) <= 100, tol_text="+20 to +100 %"))
        checks.append(Check(f"A3 modem {at}: IW 32 extra retransmissions per transfer", "> 0", round(m.loc[32, "extra_rexmit"], 2),
                            rule=lambda o, p: float(o) > 0, tol_text="above 0"))
    if 4 in m.index:
        checks.append(Check(f"A4 modem {at}: IW 4 time saved vs IW 1, %", "≈ 10", round(m.loc[4, "saved_pct"], 1),
                            rule=lambda o, p: 5 <= float(o) <= 20, tol_text="5 to 20 %"))
        checks.append(Check(f"A4 modem {at}: IW 4 extra retransmissions per transfer", "0", round(m.loc[4, "extra_rexmit"], 2),
                            rule=lambda o, p: float(o) <= 0, tol_text="none"))
    return checks


def _figures(report: Report, t: pd.DataFrame, out: Path) -> None:
    from .mathis97 import _plt, _save

    plt = _plt()
    for col, stem, ylabel, title in (("saved_pct", "fig4a_time_saved", "time saved vs IW 1 (%)", "Fig. 4a: modem, time saved"),
                                     ("extra_rexmit", "fig4b_retransmissions", "extra retransmitted segments per transfer", "Fig. 4b: modem, retransmissions")):
        fig, ax = plt.subplots(figsize=(6.2, 4))
        for (q, d), g in t.groupby(["queue", "delay"], sort=True):
            g = g.groupby("iw")[col].mean()
            bold = (q, d) == DEFAULT
            ax.plot(g.index, g.values, marker="o", lw=2.2 if bold else 1, alpha=1 if bold else 0.6, label=f"buffer {q}, {d}" + (" (judged)" if bold else ""))
        ax.axhline(0, color="grey", lw=0.8)
        ax.set_xscale("log", base=2)
        ax.set_xticks(list(IWS))
        ax.set_xticklabels([str(k) for k in IWS])
        ax.set_xlabel("initial window (segments of 512 B)")
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        ax.legend(fontsize=7)
        png, svg = _save(fig, out / "figures", stem)
        report.figure(png, f"{title} — every modem setting; the judged one bold", svg)


def slow_start_table(scale: str, out: Path, workers, progress) -> pd.DataFrame:
    """Loss-free 16 KB transfers on a fast path (100 Mb/s, RTT 200 ms, no queue limit) with and
    without delayed ACKs, beside the paper's eq. 1/5 and 2/6 and the rounds of §1.6."""
    iws = (1, 2, 3, 4, 8, 16, 32) if scale != "tiny" else (1, 4, 32)
    sets = ['topology.rate="100Mbps"', 'topology.queue="unlimited"']
    s = _sweep({"topology.delay": ["100ms"], "tcp.delayed_ack": [False, True], "tcp.initial_window": list(iws)}, f"allman98_ss_{scale}",
               out / "store", workers, progress, sets=sets)
    t = s.transfers.rename(columns={"tcp.delayed_ack": "da", "tcp.initial_window": "iw"})
    rtt = 0.2
    t["rtts"] = (t["delivered_s"] - t["established_s"]) / rtt
    rows = []
    for iw in iws:
        r = _rounds(iw, SEGMENTS)
        no_da = t[(t["iw"] == iw) & (~t["da"])]["rtts"].mean()
        da = t[(t["iw"] == iw) & (t["da"])]["rtts"].mean()
        rows.append({"IW": iw, "rounds (§1.6)": r, "eq. 5: log2 32 − log2 IW": round(math.log2(SEGMENTS) - math.log2(iw), 2),
                     "tcplab, ACK every segment (RTTs)": round(no_da, 2), "expected (rounds − ½)": r - 0.5,
                     "eq. 6: 2(log2 32 − log2 IW)": round(2 * (math.log2(SEGMENTS) - math.log2(iw)), 2),
                     "tcplab, delayed ACKs (RTTs)": round(da, 2)})
    df = pd.DataFrame(rows)
    df.to_csv(out / "tables" / "slow_start.csv", index=False)
    return df


def _rounds(iw: int, segments: int) -> int:
    """Data-sending rounds of a loss-free slow start that grows cwnd by one segment per ACK, one
    ACK per segment (TARGETS.md §1.6: IW 1 → 1, 2, 4, 8, 16, 1 = 6 rounds)."""
    sent, cwnd, n = 0, iw, 0
    while sent < segments:
        k = min(cwnd, segments - sent)
        sent += k
        cwnd += k
        n += 1
    return n


def estimate_seconds(scale: str, workers: int) -> float:
    n = {"tiny": 10, "quick": 40, "full": 120}[scale]
    return n * 0.02 / max(1, workers) + 5


def reproduce(out="results/allman98", scale: str = "full", workers: Optional[int] = None, progress: Optional[bool] = None, log=print) -> dict:
    if scale not in SCALES:
        raise ValueError(f"scale must be one of {SCALES}, not {scale!r}")
    out = Path(out)
    (out / "tables").mkdir(parents=True, exist_ok=True)
    report = Report(f"Allman, Hayes & Ostermann 1998 — tcplab reproduction ({scale})")
    report.text("Every number below is computed from the runs of this reproduction; the paper's are from its §6 and Figures 4–5 "
                "(TARGETS.md §1.5). A verdict is 'within' when our value meets the stated rule.")
    report.text("Choices where the paper is silent, and ours:")
    for c in CHOICES:
        report.text("• " + c)
    t0 = time.perf_counter()
    log(f"allman98 modem test ({scale})")
    t = modem_runs(scale, out, workers, progress)
    report.heading("The modem test (§6.3, Fig. 4)")
    summary = t.groupby(["queue", "delay", "iw"])[["time_s", "saved_pct", "retransmits", "extra_rexmit", "timeouts"]].mean().round(3).reset_index()
    csv = out / "tables" / "modem.csv"
    summary.to_csv(csv, index=False)
    report.table(summary, "Modem test: transfer time, time saved and retransmissions per IW and modem setting", csv)
    report.compare(_checks(t), "Checks A1–A4 (modem)")
    _figures(report, t, out)
    log(f"allman98 slow-start formulas ({scale})")
    report.heading("Slow start: the paper's formulas beside loss-free transfers")
    ss = slow_start_table(scale, out, workers, progress)
    report.table(ss, "16 KB (32 segments of 512 B), RTT 200 ms, 100 Mb/s, no loss: time from the first data segment to the last byte "
                 "delivered, in RTTs", out / "tables" / "slow_start.csv")
    checks = [Check(f"§1.6 rounds, IW {int(r['IW'])}, ACK every segment: simulated RTTs", r["expected (rounds − ½)"], r["tcplab, ACK every segment (RTTs)"],
                    rule=lambda o, p: abs(float(o) - float(p)) <= 0.1, tol_text="± 0.1 RTT") for r in ss.to_dict("records")]
    checks += [Check(f"eq. 2/6, IW {int(r['IW'])}: delayed ACKs take at least as long", "≥ ACK-every-segment time", r["tcplab, delayed ACKs (RTTs)"],
                     rule=(lambda a: lambda o, p: float(o) >= a - 1e-9)(r["tcplab, ACK every segment (RTTs)"]), tol_text="not faster")
               for r in ss.to_dict("records")]
    report.compare(checks, "Loss-free slow start against §1.6 and eq. 2/6")
    report.heading("Not yet reproduced")
    report.text("The Internet test (§6.4, Fig. 5; A5–A8: 100 hosts, 74 % of IW 1 transfers loss-free) needs a population of synthetic "
                "paths; it is not part of this report yet.")
    paths = report.write(out)
    s = report.summary()
    s["elapsed_s"] = time.perf_counter() - t0
    return {"paths": paths, "summary": s, "out": out}
