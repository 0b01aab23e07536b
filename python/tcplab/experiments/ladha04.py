"""Ladha, Amer, Caro & Iyengar 2004, "On the Prevalence and Evaluation of Recent TCP Enhancements",
the simulations (§3.3-3.6 of TARGETS.md): 20 KB and 100 KB transfers across a 1 Mb/s core loaded
by Pareto ON/OFF cross traffic in both directions, for the six cumulative variants, against the
aggregate cross-traffic rate; checks L1-L5, and the figures.

    tcplab reproduce ladha04 [--quick] [--out DIR] [--workers N]

and the 10 MB transfers against the loss rate (L6, L7; Fig. 6 and the LT counts of Fig. 7).
"""

from __future__ import annotations

from pathlib import Path
import math
from typing import List, Optional, Sequence

import numpy as np
import pandas as pd

from ..report import Check, Report
from . import figures
from .study import SCALES, begin, finish, ns2_cached_run, ns2_map, run_sweep, scenario_file, table  # noqa: F401

VARIANTS = ("newreno", "sack", "sack-iw", "sack-iw-lt", "sack-iw-lt-abc1", "sack-iw-lt-abc1-er")
LABEL = {"newreno": "NewReno", "sack": "SACK", "sack-iw": "SACK-IW", "sack-iw-lt": "SACK-IW-LT", "sack-iw-lt-abc1": "SACK-IW-LT-ABC1",
         "sack-iw-lt-abc1-er": "SACK-IW-LT-ABC1-ER"}
LOADS_KBPS = (0, 200, 400, 600, 700, 800, 850, 900, 950, 1000)
SIZES = ("20KB", "100KB")

CHOICES = [
    "Topology and cross traffic: experiments/topologies/ladha04.toml (its comments say where the paper is silent: two cross-traffic "
    "nodes per router, 16 Pareto ON/OFF sources each way, shape 1.5, the 44/576/1500-byte mix drawn per packet, 50-packet queues "
    "off the core). The x-axis is the aggregate mean rate of each direction's 16 sources; each source's ON rate is derived from it "
    "exactly (docs/scenarios.md, UDP sources), since with a 1 ms ON time the familiar rate·ON/(ON+OFF) would send about 4× too much.",
    "TCP: the ns2 profile (ns-2's timers of the time) with the six cumulative presets of §3.4, MSS 1460, delayed ACKs with a 200 ms "
    "timer, the ns2 profile's receiver window of 20000 B (13 full segments: the scenario sets none, and the paper does not state it); the transfer starts at 10 s. Transfer time: from the SYN to the acknowledgment of the last byte at the sender.",
    "Drops of the TCP flow are its data segments sent less those that reached the receiver (new segments plus the duplicates the "
    "receiver counted), not its retransmissions: NewReno's go-back-N after a timeout resends segments the receiver already holds, "
    "and counting those as drops made NewReno's loss rate look 15–20 % higher than SACK's at the same cross traffic. "
    "Fig. 6 compares the variants at equal loss rate, as the paper does: each variant's mean transfer time per load is "
    "interpolated against its own mean loss rate. "
    "'LT invocations' are segments sent by Limited Transmit (up to two per invocation) and 'ER invocations' fast retransmits "
    "made by Early Retransmit.",
]


def scenario_path() -> Path:
    return scenario_file("topologies", "ladha04.toml")


#: How the quick grid differs from the full one, per check it weakens (report.mark_scale_limits).
SCALE_LIMITS = {"quick": [
    (r"^L[1-5]|^L3/L5", "every variant, size and load, but 3 seeds instead of 10: each mean and share rests on fewer transfers"),
    (r"^L[67] ", "the 10 MB transfers with 2 seeds instead of 5"),
]}


def _grid(scale: str):
    if scale == "tiny":
        return ("newreno", "sack-iw-lt-abc1-er"), ("20KB",), (0, 600, 1000), 1
    if scale == "quick":
        return VARIANTS, SIZES, LOADS_KBPS, 3
    return VARIANTS, SIZES, LOADS_KBPS, 10


def runs(scale: str, out: Path, workers, progress) -> pd.DataFrame:
    variants, sizes, loads, seeds = _grid(scale)
    rates = [f"{k}kbps" for k in loads]
    s = run_sweep(scenario_path(), f"ladha04_{scale}", out / "store", zip=[{"apps.0.aggregate_rate": rates, "apps.1.aggregate_rate": rates}],
                  axes={"tcp.preset": list(variants), "flows.0.bytes": list(sizes)}, replicates=seeds, workers=workers, progress=progress)
    c = s.connections.drop(columns=["variant"]).rename(columns={"tcp.preset": "variant", "flows.0.bytes": "size"})
    t = s.transfers.set_index("key")
    c["load_kbps"] = c["apps.0.aggregate_rate"].str.removesuffix("kbps").astype(int)
    c["time_s"] = (c["key"].map(t["acked_s"]) - c["key"].map(t["start_s"]))
    c["drops"] = _drops(c, t)
    cols = ["variant", "size", "load_kbps", "replicate", "seed", "time_s", "drops", "timeouts", "limited_transmits", "early_retransmits"]
    c = c[cols].sort_values(["size", "variant", "load_kbps", "replicate"], kind="mergesort").reset_index(drop=True)
    c.to_csv(out / "tables" / "runs.csv", index=False)
    return c


INV = ("the instrument counts segments sent under Limited Transmit; a duplicate ACK releases one new segment, so that is one per invocation "
       "(RFC 6675's pipe rule can release two when one duplicate ACK reports two segments)")


def _drops(c: pd.DataFrame, t: pd.DataFrame) -> pd.Series:
    """Data segments of the TCP flow lost on the way: those sent less those that arrived (each new
    segment once, plus the duplicates the receiver counted). Every segment here is a whole MSS
    but the last, so the new segments are ⌈bytes / MSS⌉; a completed transfer received them all."""
    new = np.ceil(c["key"].map(t["bytes"]) / c["mss"])
    return c["segs_sent"] - new - c["dup_segments"]


# --- the ns-2 column ---------------------------------------------------------------------------
#
# The rows of the sweep whose variant ns-2.35's agents express, run in ns-2 (tcplab.ns2: the same
# scenario exported with its host groups and its 32 ON/OFF sources of the per-packet size mix),
# the same quantities computed from ns-2's packets. ns-2 draws the cross traffic from its own
# streams (seeded with the row's seed): the two columns compare as statistics over the seeds,
# never run by run.

#: tcplab's variant -> the sets that make it ns-2's agent: NewReno is /Newreno, SACK ns-2's Sack1
#: (RFC 2018 SACK with Reno-style recovery; the paper's ns-2 SACK), IW windowInit_ 3 (RFC 3390's
#: 4380 B in 1460-byte segments), LT singledup_ (send_one()). ABC and Early Retransmit have no
#: ns-2.35 counterpart (the export refuses tcp.abc and tcp.early_retransmit).
NS2_VARIANTS = {
    "newreno": ['tcp.preset="newreno"'],
    "sack": ['tcp.preset="sack1"', "tcp.sack_blocks=4"],
    "sack-iw": ['tcp.preset="sack1"', "tcp.sack_blocks=4", "tcp.initial_window=3"],
    "sack-iw-lt": ['tcp.preset="sack1"', "tcp.sack_blocks=4", "tcp.initial_window=3", "tcp.limited_transmit=true",
                   "tcp.limited_transmit_send_one=true"],
}
#: ns-2's one-way agents send whole packets and count their window in packets: the transfer is
#: rounded up to whole 1460-byte packets (20 KB: 15, 21900 B; 100 KB: 71, 103660 B) and tcplab's
#: 20000-byte receiver window (the ns2 profile's) is 13 packets (18980 B).
MSS = 1460
NS2_RWND = 'tcp.rwnd="18980B"'
NS2_WALL_S = 60.0
#: Bumped when the cells computed from ns-2's packets change (the cache key).
NS2_CELLS_VERSION = 2


NS2_TEXT = ("ns-2 column: the rows of NewReno, SACK, SACK-IW and SACK-IW-LT run in ns-2.35 too (`tcplab.ns2`: the same scenario with its "
            "host groups and its 32 Pareto ON/OFF sources of the 44/576/1500-byte mix, ns-2's /Newreno and /Sack1 agents with "
            "windowInit_ 3 and singledup_ for IW and LT), each quantity computed from ns-2's packets by the rules of tcplab's columns. "
            "ns-2's one-way agents send whole packets: its transfers are 15 and 71 packets of 1460 B (21900 and 103660 B, against "
            "20480 and 102400), its window 13 packets (tcplab's 20000 B). ns-2 draws the cross traffic from its own streams, seeded "
            "with each row's seed: the columns compare as means over the seeds, not run by run. Not in ns-2:")


def ns2_bytes(size: str) -> int:
    """The transfer in whole packets for ns-2: `size` ("20KB") rounded up to MSS multiples."""
    from .. import units

    b = int(units.size_bytes(size, "flows.0.bytes"))
    return -(-b // MSS) * MSS


def ns2_sets(variant: str, size: str, load_kbps: int) -> List[str]:
    return NS2_VARIANTS[variant] + [f'flows.0.bytes="{ns2_bytes(size)}B"', NS2_RWND, f'apps.0.aggregate_rate="{load_kbps}kbps"',
                                    f'apps.1.aggregate_rate="{load_kbps}kbps"']


def ns2_unexpressed() -> str:
    """Why the ABC and ER variants have no ns-2 rows: the export's own refusals."""
    from .study import ns2_refusal

    base = NS2_VARIANTS["sack-iw-lt"] + [f'flows.0.bytes="{ns2_bytes("20KB")}B"', NS2_RWND]
    return "; ".join(f"{LABEL[v]}: {ns2_refusal(scenario_path(), base + [s])}" for v, s in
                     (("sack-iw-lt-abc1", "tcp.abc=1"), ("sack-iw-lt-abc1-er", "tcp.early_retransmit=true")))


def limited_transmits(seg: pd.DataFrame, conn: int = 0, dupthresh: int = 3) -> int:
    """New data segments sent at the instant a first or second duplicate ACK reached the sender
    outside a recovery (RFC 3042; ns-2's singledup_ sends one per duplicate ACK, `send_one()` in
    `tcp/tcp.cc`), from the packets. A recovery runs from a retransmission until an ACK covers
    everything sent before it (`recover`, RFC 6582): the new data NewReno sends on the duplicate
    ACKs after a partial ACK is not Limited Transmit."""
    s = seg[seg["conn"] == conn].sort_values("time_s", kind="mergesort")
    dups, lt_at, n, highest, una, recover = 0, set(), 0, 0, 0, 0
    for t, d, ev, ln, end, ack, dup, retx in zip(s["time_s"], s["dir"], s["event"], s["len"], s["end"], s["ack"], s["dup_ack"], s["retx"]):
        us = int(round(float(t) * 1e6))
        if d == "b2a" and ev == "rx":
            a = 0 if pd.isna(ack) else int(ack)
            if a > una:
                una, dups = a, 0
            elif dup:
                dups += 1
            if 0 < dups < dupthresh and una >= recover:
                lt_at.add(us)
        elif d == "a2b" and ev == "tx" and ln > 0:
            if retx:
                recover = max(recover, highest)
            elif int(end) > highest:
                if us in lt_at and una >= recover:
                    n += 1
                highest = int(end)
    return n


def ns2_cells(run) -> dict:
    """Transfer time, drops, timeouts and Limited Transmit segments of the TCP flow, from ns-2's
    packets by the rules tcplab's columns follow (`_drops`: data segments sent less those that
    arrived; time: the first packet sent to the last ACK received)."""
    from ..ns2.pair import conn_summary

    seg = run.segments
    summ = conn_summary(seg, run.drops)[0]
    a2b = seg[(seg["conn"] == 0) & (seg["dir"] == "a2b") & (seg["len"] > 0)]
    drops = int((a2b["event"] == "tx").sum() - (a2b["event"] == "rx").sum())
    return {"time_s": summ["transfer_s"], "drops": drops, "timeouts": summ["timeouts"], "limited_transmits": limited_transmits(seg),
            "data_segs": summ["data_segs"]}


def ns2_runs(c: pd.DataFrame, out: Path, log=print, seeds: Optional[int] = None, workers: Optional[int] = None):
    """The sweep's rows (variant, size, load, seed) of the variants ns-2 expresses, each run in
    ns-2 or read from its cache `out/ns2/<variant>_<size>_<load>_<digest>.json` (`study.ns2_cached_run`:
    the digest of the exported script, scenario, sets and seed as ns-2 runs them), `workers` runs of `ns` at
    once (`study.ns2_map`). Returns (frame with the columns
    of `runs()` that ns-2 gives, or None; the reason there is none, or "")."""
    from ..ns2 import runner

    try:
        runner.ns_binary()
    except runner.Ns2NotFound:
        return None, "ns-2 not installed"
    rows = c[c["variant"].isin(list(NS2_VARIANTS))][["variant", "size", "load_kbps", "replicate", "seed"]].drop_duplicates()
    if seeds is not None:
        rows = rows[rows["replicate"] < seeds]
    got, failed = [], []
    keys = list(rows.itertuples(index=False))
    calls = [lambda v=v, size=size, load=load, seed=seed: ns2_cached_run(
        scenario_path(), ns2_sets(v, size, int(load)), int(seed), out / "ns2", f"{v}_{size}_{int(load)}", ns2_cells,
        version=NS2_CELLS_VERSION, max_wall=NS2_WALL_S, record={"scenario": "topologies/ladha04.toml"}) for v, size, load, _, seed in keys]
    for (v, size, load, rep, seed), cells in zip(keys, ns2_map(calls, workers, keep=(runner.Ns2Error,))):
        if isinstance(cells, runner.Ns2Error):
            failed.append(f"{v} {size} {load} kb/s seed {seed}: {cells}")
            continue
        got.append(dict(variant=v, size=size, load_kbps=int(load), replicate=int(rep), seed=int(seed), **cells))
    if failed:
        log(f"ns-2 failed on {len(failed)} of {len(rows)} runs; first: {failed[0]}")
    if not got:
        return None, "ns-2 failed: " + (failed[0] if failed else "no row of a variant ns-2 expresses")
    n = pd.DataFrame(got).sort_values(["size", "variant", "load_kbps", "replicate"], kind="mergesort").reset_index(drop=True)
    n.to_csv(out / "tables" / "runs_ns2.csv", index=False)
    return n, ""


class _WithAbove(float):
    """L5's value (mean drops a run below 800 kb/s) carrying its own mean from 800 kb/s, so that
    the rule judges ns-2's value against ns-2's runs, tcplab's against tcplab's."""
    above: float = math.nan


def _with_above(below: float, above: float) -> float:
    v = _WithAbove(below)
    v.above = above
    return v


def _l1(x: pd.DataFrame) -> int:
    return int(x[(x["load_kbps"] < 800) & (x["size"] == "20KB")]["drops"].sum())


def _l5_drops(x: pd.DataFrame):
    big = x[x["size"] == "100KB"]
    if not (len(big) and (big["load_kbps"] >= 800).any() and (big["load_kbps"] < 800).any()):
        return None
    return _with_above(round(big[big["load_kbps"] < 800]["drops"].mean(), 2), float(big[big["load_kbps"] >= 800]["drops"].mean()))


def _mean_time(x: pd.DataFrame, size: str, variants, loads):
    """{variant: mean time over `loads`} for `size`, or None when a variant or load is missing."""
    m = x.groupby(["size", "variant", "load_kbps"])["time_s"].mean()
    try:
        return {v: float(np.mean([m[(size, v, k)] for k in loads])) for v in variants}
    except KeyError:
        return None


def _lt_share(x: pd.DataFrame, size: str, f):
    lt = x[x["variant"].isin(["sack-iw-lt", "sack-iw-lt-abc1", "sack-iw-lt-abc1-er"]) & (x["size"] == size)]
    return round(f(lt["limited_transmits"]).mean() * 100, 1) if len(lt) else None


def _checks(c: pd.DataFrame, n: Optional[pd.DataFrame] = None, why_not: str = "") -> List[Check]:
    """Checks L1-L5 on tcplab's runs `c`; each with ns-2's value of the same quantity from ns-2's
    runs `n` (the variants ns-2 expresses), or the reason there is none (`why_not`)."""
    def theirs(f, needs: str = ""):
        if needs:
            return f"ns-2: not expressible ({needs})"
        if n is None:
            return why_not or None
        v = f(n)
        return "ns-2: no runs of these variants" if v is None else v

    checks = []
    checks.append(Check("L1 (20 KB, Fig. 2): TCP drops with aggregate cross traffic below 800 kb/s (every variant and seed)", 0, _l1(c),
                        rule=lambda o, p: int(o) == 0, tol_text="none", plausible=(0, 50), why="the paper's Fig. 2: not one loss below 800 kb/s",
                        ns2=theirs(_l1)))
    l5 = _l5_drops(c)
    if l5 is not None:
        checks.append(Check("L5 (100 KB): drops start rising at 800 kb/s: mean drops a run below 800 / from 800 kb/s", "few / more",
                            l5, rule=lambda o, p: float(o) < 1 and getattr(o, "above", l5.above) > 2 * float(o),
                            tol_text="below 1, and the mean from 800 kb/s more than twice it",
                            plausible=(0, 10), note=f"from 800 kb/s: {l5.above:.2f}" + (f"; ns-2's {n_l5.above:.2f}" if (n_l5 := (_l5_drops(n) if n is not None else None)) is not None else ""),
                            why="Fig. 5's drops are near 0 below 800 kb/s and rise after", ns2=theirs(_l5_drops)))
    high = [k for k in (900, 950, 1000) if k in set(c["load_kbps"])]
    four = ("newreno", "sack", "sack-iw", "sack-iw-lt")
    if "20KB" in set(c["size"]) and high and set(four) <= set(c["variant"]):
        at = _mean_time(c, "20KB", four, high)
        t2 = lambda x: _mean_time(x, "20KB", four, high)  # noqa: E731
        nt = t2(n) if n is not None else None
        nnote = lambda f: f"; ns-2 {f(nt)}" if nt else ""  # noqa: E731
        checks.append(Check("L2 (20 KB, 900–1000 kb/s): SACK-IW faster than SACK and NewReno (mean time, s)", "SACK-IW < SACK, NewReno",
                            round(at["sack-iw"] - min(at["sack"], at["newreno"]), 3),
                            rule=lambda o, p: float(o) < 0, tol_text="SACK-IW's time minus the faster of the two below 0", plausible=(-3, 3),
                            note=f"SACK-IW {at['sack-iw']:.2f} s, SACK {at['sack']:.2f} s, NewReno {at['newreno']:.2f} s"
                            + nnote(lambda t: f"{t['sack-iw']:.2f}, {t['sack']:.2f}, {t['newreno']:.2f} s"), why="the paper's claim is an order (Fig. 2)",
                            ns2=theirs(lambda x: None if (t := t2(x)) is None else round(t["sack-iw"] - min(t["sack"], t["newreno"]), 3))))
        checks.append(Check("L2 (20 KB, 900–1000 kb/s): SACK-IW-LT at least as fast as SACK-IW (mean time, s)", "SACK-IW-LT ≤ SACK-IW",
                            round(at["sack-iw-lt"] / at["sack-iw"], 3), rule=lambda o, p: float(o) <= 1.05,
                            tol_text="ratio at most 1.05", plausible=(0.5, 2), note=f"{at['sack-iw-lt']:.2f} vs {at['sack-iw']:.2f} s"
                            + nnote(lambda t: f"{t['sack-iw-lt']:.2f} vs {t['sack-iw']:.2f} s"),
                            why="'≥' in the paper; 5 % allows the seeds' spread of a mean over 30 runs",
                            ns2=theirs(lambda x: None if (t := t2(x)) is None else round(t["sack-iw-lt"] / t["sack-iw"], 3))))
        checks.append(Check("L2 (20 KB, 900–1000 kb/s): NewReno slightly better than SACK (mean time NewReno / SACK)", "< 1",
                            round(at["newreno"] / at["sack"], 3), rule=lambda o, p: float(o) < 1, tol_text="ratio below 1", plausible=(0.5, 2),
                            note=f"{at['newreno']:.2f} vs {at['sack']:.2f} s" + nnote(lambda t: f"{t['newreno']:.2f} vs {t['sack']:.2f} s"),
                            why="the paper's claim is an order (Fig. 2)",
                            ns2=theirs(lambda x: None if (t := t2(x)) is None else round(t["newreno"] / t["sack"], 3))))
    m = c.groupby(["size", "variant", "load_kbps"])["time_s"].mean()
    if "100KB" in set(c["size"]) and 1000 in set(c["load_kbps"]) and {"sack-iw", "sack-iw-lt-abc1"} <= set(c["variant"]):
        gain = m[("100KB", "sack-iw", 1000)] - m[("100KB", "sack-iw-lt-abc1", 1000)]
        checks.append(Check("L4 (100 KB, 1 Mb/s): LT + ABC saves against SACK-IW (mean transfer time, s)", "> 10", round(gain, 2),
                            rule=lambda o, p: float(o) > 10, tol_text="more than 10 s", plausible=(-5, 30),
                            why="the paper's own bound (Fig. 4)", ns2=theirs(None, "tcp.abc")))
    hi100 = sorted(k for k in set(c["load_kbps"]) if k > 800)
    if "100KB" in set(c["size"]) and hi100 and {"newreno", "sack"} <= set(c["variant"]):
        t = _mean_time(c, "100KB", ("newreno", "sack"), hi100)
        t4 = lambda x: _mean_time(x, "100KB", ("newreno", "sack"), hi100)  # noqa: E731
        nt = t4(n) if n is not None else None
        checks.append(Check("L4 (100 KB, above 800 kb/s): SACK slightly better than NewReno (mean time SACK / NewReno)", "< 1",
                            round(t["sack"] / t["newreno"], 3), rule=lambda o, p: float(o) < 1, tol_text="ratio below 1", plausible=(0.5, 2),
                            note=f"{t['sack']:.2f} vs {t['newreno']:.2f} s" + (f"; ns-2 {nt['sack']:.2f} vs {nt['newreno']:.2f} s" if nt else ""),
                            why="the paper's claim is an order (Fig. 4)",
                            ns2=theirs(lambda x: None if (u := t4(x)) is None else round(u["sack"] / u["newreno"], 3))))
    lt_note = INV + ("; ns-2's value is over its one LT variant, SACK-IW-LT (ABC and ER have no ns-2 counterpart)" if n is not None else "")
    if _lt_share(c, "20KB", lambda s: s == 0) is not None:
        checks.append(Check("L3 (20KB, all loads): runs of the LT variants with no Limited Transmit invocation, %", 51, _lt_share(c, "20KB", lambda s: s == 0),
                            rule=lambda o, p: abs(float(o) - float(p)) <= 25, tol_text="± 25 points", plausible=(0, 100), note=lt_note,
                            why="read off Fig. 3b's CDF; its runs are not ours (its loads' mix), so a quarter of the runs",
                            ns2=theirs(lambda x: _lt_share(x, "20KB", lambda s: s == 0))))
    if _lt_share(c, "100KB", lambda s: s >= 2) is not None:
        checks.append(Check("L5 (100 KB, all loads): runs of the LT variants with ≥ 2 LT invocations, %", 100, _lt_share(c, "100KB", lambda s: s >= 2),
                            rule=lambda o, p: float(o) >= 75, tol_text="at least 75 %", plausible=(0, 100), note=lt_note,
                            why="'all runs' read off Fig. 5's CDF; a quarter allowed for its loads' mix",
                            ns2=theirs(lambda x: _lt_share(x, "100KB", lambda s: s >= 2))))
        checks.append(Check("L5 (100 KB, all loads): runs with > 8 LT invocations, %", 20, _lt_share(c, "100KB", lambda s: s > 8),
                            rule=lambda o, p: abs(float(o) - float(p)) <= 15, tol_text="± 15 points", plausible=(0, 100), note=lt_note,
                            why="read off Fig. 5's CDF to about 5 points; 15 for its loads' mix",
                            ns2=theirs(lambda x: _lt_share(x, "100KB", lambda s: s > 8))))
    er = c[c["variant"] == "sack-iw-lt-abc1-er"]
    for size, paper in (("20KB", 3.0), ("100KB", 2.5)):
        x = er[er["size"] == size]
        if len(x):
            share = (x["early_retransmits"] > 0).mean() * 100
            checks.append(Check(f"L3/L5 ({size}, all loads): runs with an Early Retransmit, %", paper, round(share, 1),
                                rule=lambda o, p: 0 < float(o) <= 15, tol_text="rare but seen: above 0, at most 15 %", plausible=(0, 30),
                                note=f"{int((x['early_retransmits'] > 0).sum())} of {len(x)} runs",
                                why="the paper saw it in a few % of runs; 0 would mean the mechanism was never exercised",
                                ns2=theirs(None, "tcp.early_retransmit")))
    return checks


def _figures(report: Report, c: pd.DataFrame, out: Path) -> None:
    plt = figures.plt()
    markers = "osD^v<>"
    for size in [s for s in SIZES if s in set(c["size"])]:
        fig, axes = plt.subplots(1, 2, figsize=(11, 4))
        for i, v in enumerate([v for v in VARIANTS if v in set(c["variant"])]):
            d = c[(c["size"] == size) & (c["variant"] == v)].groupby("load_kbps")
            axes[0].plot(d["time_s"].mean().index, d["time_s"].mean().values, marker=markers[i % 7], label=LABEL[v])
            axes[1].plot(d["drops"].mean().index, d["drops"].mean().values, marker=markers[i % 7], label=LABEL[v])
        axes[0].set_ylabel("transfer time (s), mean over seeds")
        axes[1].set_ylabel("drops of the TCP flow, mean over seeds")
        for ax in axes:
            ax.set_xlabel("aggregate cross traffic (kb/s, each direction)")
            ax.axvline(800, color="grey", ls=":", lw=1)
        axes[0].legend(fontsize=7)
        fig.suptitle(f"{size} transfer vs cross traffic (Figs. {'2–3' if size == '20KB' else '4–5'})")
        png, svg = figures.save(fig, out / "figures", f"transfer_{size}")
        report.figure(png, f"{size}: transfer time and drops vs aggregate cross traffic per variant; the dotted line is 800 kb/s", svg)
    lt = c[c["variant"].isin(["sack-iw-lt", "sack-iw-lt-abc1", "sack-iw-lt-abc1-er"])]  # all loads, as the paper counts
    if len(lt):
        fig, ax = plt.subplots(figsize=(6, 4))
        for size in [s for s in SIZES if s in set(lt["size"])]:
            x = np.sort(lt[lt["size"] == size]["limited_transmits"].values)
            ax.step(x, np.arange(1, len(x) + 1) / len(x), where="post", label=size)
        ax.set_xlabel("Limited Transmit segments per run")
        ax.set_ylabel("fraction of runs")
        ax.set_title("CDF of Limited Transmit invocations over runs (LT variants, all loads)")
        ax.legend()
        png, svg = figures.save(fig, out / "figures", "lt_cdf")
        report.figure(png, "CDF of Limited Transmit per run (Figs. 3b, 5b)", svg)


BULK_LOADS_KBPS = (800, 850, 900, 950, 1000)


def bulk_runs(scale: str, out: Path, workers, progress) -> pd.DataFrame:
    """The 10 MB transfers (§3.5): each variant across loads that give loss rates from under 1 %
    to about 10 %; loss rate = drops / new data packets."""
    if scale == "tiny":
        variants, loads, seeds, size = ("sack-iw-lt-abc1",), (1000,), 1, "1MB"
    else:
        variants, loads, seeds, size = VARIANTS, BULK_LOADS_KBPS, (2 if scale == "quick" else 5), "10MB"
    rates = [f"{k}kbps" for k in loads]
    s = run_sweep(scenario_path(), f"ladha04_bulk_{scale}", out / "store", zip=[{"apps.0.aggregate_rate": rates, "apps.1.aggregate_rate": rates}],
                  axes={"tcp.preset": list(variants)}, replicates=seeds, sets=[f'flows.0.bytes="{size}"'], workers=workers, progress=progress)
    c = s.connections.drop(columns=["variant"]).rename(columns={"tcp.preset": "variant"})
    t = s.transfers.set_index("key")
    c["load_kbps"] = c["apps.0.aggregate_rate"].str.removesuffix("kbps").astype(int)
    c["time_s"] = c["key"].map(t["acked_s"]) - c["key"].map(t["start_s"])
    new_pkts = np.ceil(c["key"].map(t["bytes"]) / c["mss"])
    # §3.5: loss rate = packets dropped / new data packets sent (drops, not retransmissions).
    c["drops"] = _drops(c, t)
    c["loss_pct"] = c["drops"] / new_pkts * 100
    cols = ["variant", "load_kbps", "replicate", "seed", "time_s", "loss_pct", "drops", "retransmits", "timeouts", "limited_transmits", "early_retransmits"]
    c = c[cols].sort_values(["variant", "load_kbps", "replicate"], kind="mergesort").reset_index(drop=True)
    c.to_csv(out / "tables" / "bulk_runs.csv", index=False)
    return c


def at_equal_loss(b: pd.DataFrame, a: str, z: str):
    """Fig. 6 compares at equal loss rate: each variant's mean time per load, interpolated against
    its own mean loss rate, at every measured loss rate of either inside both ranges. Returns
    (loss rates %, times of `a`, times of `z`)."""
    g = {v: b[b["variant"] == v].groupby("load_kbps")[["loss_pct", "time_s"]].mean().sort_values("loss_pct") for v in (a, z)}
    lo, hi = max(g[a]["loss_pct"].min(), g[z]["loss_pct"].min()), min(g[a]["loss_pct"].max(), g[z]["loss_pct"].max())
    x = np.unique(np.concatenate([g[a]["loss_pct"].values, g[z]["loss_pct"].values]))
    x = x[(x >= lo) & (x <= hi)]
    return x, np.interp(x, g[a]["loss_pct"], g[a]["time_s"]), np.interp(x, g[z]["loss_pct"], g[z]["time_s"])


def _bulk_checks(b: pd.DataFrame) -> List[Check]:
    checks = []
    m = b.groupby(["variant", "load_kbps"])[["time_s", "loss_pct"]].mean()
    vs = set(b["variant"])
    if {"newreno", "sack"} <= vs:
        # Fig. 6's x-axis is the loss rate: each variant's mean time per load, interpolated
        # against its own loss rate, compared where the loss rates match (`at_equal_loss`).
        x, nr, sk = at_equal_loss(b, "newreno", "sack")
        low = x < 9
        if low.any():
            worst = float(np.max(np.abs(nr[low] / sk[low] - 1)) * 100)
            checks.append(Check("L6 (10 MB): NewReno and SACK alike below 9 % loss, at equal loss rate: largest difference of mean times, %", "≈ 0",
                                round(worst, 1), rule=lambda o, p: float(o) <= 15, tol_text="within 15 %", plausible=(0, 60),
                                why="Fig. 6's two curves coincide within its resolution; 15 % for the seeds' spread of 10 MB times"))
        hi = x >= 9
        if hi.any():
            r = float(np.mean(sk[hi] / nr[hi]))
            checks.append(Check("L6 (10 MB): SACK better than NewReno from 9 % loss, at equal loss rate (mean time SACK / NewReno)", "< 1 (≈ 10 % better)",
                                round(r, 3), rule=lambda o, p: float(o) < 1, tol_text="ratio below 1", plausible=(0.5, 2),
                                note=f"loss rates {x[hi].min():.1f}–{x[hi].max():.1f} %", why="the paper's claim is an order (Fig. 6)"))
    if {"sack-iw", "sack-iw-lt"} <= vs:
        loads = sorted(set(b["load_kbps"]))
        wins = sum(m.loc[("sack-iw-lt", k), "time_s"] <= m.loc[("sack-iw", k), "time_s"] for k in loads)
        checks.append(Check("L6 (10 MB): SACK-IW-LT at least as fast as SACK-IW, share of loads where it holds", 1.0, round(wins / len(loads), 3),
                            rule=lambda o, p: float(o) >= 1, tol_text="every load", plausible=(0, 1), note=f"{wins} of {len(loads)} loads",
                            why="the paper: 'better at all loss rates'"))
    if {"sack-iw-lt", "sack-iw-lt-abc1"} <= vs:
        a, l = m.xs("sack-iw-lt-abc1")["time_s"].mean(), m.xs("sack-iw-lt")["time_s"].mean()
        checks.append(Check("L6 (10 MB): ABC1 reduces the time further (mean over loads, ABC1 / LT)", "< 1", round(a / l, 3),
                            rule=lambda o, p: float(o) < 1, tol_text="ratio below 1", plausible=(0.5, 2), note=f"{a:.1f} vs {l:.1f} s",
                            why="the paper's claim is an order (Fig. 6)"))
    lt = b[b["variant"].isin(["sack-iw-lt", "sack-iw-lt-abc1", "sack-iw-lt-abc1-er"])]
    if len(lt):
        checks.append(Check("L7 (10 MB): runs of the LT variants with more than 400 LT invocations, %", 50, round((lt["limited_transmits"] > 400).mean() * 100, 1),
                            rule=lambda o, p: abs(float(o) - float(p)) <= 25, tol_text="± 25 points", plausible=(0, 100), note=INV,
                            why="read off Fig. 7's CDF; our loss rates are not the paper's, so a quarter of the runs"))
        checks.append(Check("L7 (10 MB): runs with at least 100 LT invocations, %", "> 90", round((lt["limited_transmits"] >= 100).mean() * 100, 1),
                            rule=lambda o, p: float(o) >= 75, tol_text="at least 75 %", plausible=(0, 100), note=INV,
                            why="the paper's '> 90 %' less 15 points for our loss rates"))
    er = b[b["variant"] == "sack-iw-lt-abc1-er"]
    if len(er):
        checks.append(Check("L7 (10 MB): runs with an Early Retransmit, %", 2.5, round((er["early_retransmits"] > 0).mean() * 100, 1),
                            rule=lambda o, p: 0 < float(o) <= 15, tol_text="rare but seen: above 0, at most 15 %", plausible=(0, 30),
                            note=f"{int((er['early_retransmits'] > 0).sum())} of {len(er)} runs",
                            why="the paper saw it in 2.5 % of runs; 0 would mean the mechanism was never exercised"))
    return checks


def _bulk_figure(report: Report, b: pd.DataFrame, out: Path) -> None:
    plt = figures.plt()
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    markers = "osD^v<>"
    for i, v in enumerate([v for v in VARIANTS if v in set(b["variant"])]):
        g = b[b["variant"] == v].groupby("load_kbps")[["loss_pct", "time_s"]].mean().sort_values("loss_pct")
        ax.plot(g["loss_pct"], g["time_s"], marker=markers[i % 7], label=LABEL[v])
    ax.set_xlabel("loss rate (%: drops / new data packets)")
    ax.set_ylabel("transfer time (s), mean over seeds")
    ax.set_title("10 MB transfer vs loss rate (Fig. 6)")
    ax.legend(fontsize=7)
    png, svg = figures.save(fig, out / "figures", "bulk_vs_loss")
    report.figure(png, "10 MB transfer time vs loss rate per variant (Fig. 6)", svg)


#: Seeds of the ns-2 column per scale (the sweep's first ones): the full scale's ns-2 rows are
#: 4 variants × 2 sizes × 10 loads × 5 seeds, about a second each on one core.
NS2_SEEDS = {"tiny": 1, "quick": 3, "full": 5}


def estimate_seconds(scale: str, workers: int, ns2: bool = True) -> float:
    n = {"tiny": 6, "quick": 360, "full": 1200}[scale]
    bulk = {"tiny": 1, "quick": 60, "full": 150}[scale] * 1.5
    ns2 = {"tiny": 3, "quick": 240, "full": 400}[scale] * 0.8 if ns2 else 0.0
    return (n * 0.05 + bulk + ns2) / max(1, workers) + 5   # ns-2's runs too, `workers` at once


def reproduce(out="results/ladha04", scale: str = "full", workers: Optional[int] = None, progress: Optional[bool] = None, log=print,
              command: Optional[Sequence[str]] = None, ns2: bool = True) -> dict:
    out = Path(out)
    report, t0 = begin("ladha04", 'Ladha, Amer, Caro & Iyengar 2004 (simulations)', out, scale, command, lambda: f"1–{_grid(scale)[3]} (every point once per seed)" if _grid(scale)[3] > 1 else "1",
                          "the results of the paper's §3.4 (Figs. 2–7), read as L1–L7", CHOICES, silent='the paper')
    log(f"ladha04 transfers vs cross traffic ({scale})")
    c = runs(scale, out, workers, progress)
    summ = c.groupby(["size", "variant", "load_kbps"])[["time_s", "drops", "limited_transmits", "early_retransmits"]].mean().round(3).reset_index()
    csv = out / "tables" / "transfers.csv"
    summ.to_csv(csv, index=False)
    report.heading("20 KB and 100 KB transfers against the aggregate cross traffic (Figs. 2–5)")
    report.table(summ, "Mean over seeds per size, variant and aggregate cross-traffic rate", csv)
    n, why_not = None, ""
    if ns2:
        log(f"ladha04 in ns-2 ({scale}: {NS2_SEEDS[scale]} seed(s) a row)")
        n, why_not = ns2_runs(c, out, log, seeds=NS2_SEEDS[scale], workers=workers)
        report.text(NS2_TEXT + " " + ns2_unexpressed() + ".")
        if n is not None:
            ns = n.groupby(["size", "variant", "load_kbps"])[["time_s", "drops", "timeouts", "limited_transmits"]].mean().round(3).reset_index()
            mine = c[c["variant"].isin(list(NS2_VARIANTS)) & (c["replicate"] < NS2_SEEDS[scale])]
            mine = mine.groupby(["size", "variant", "load_kbps"])[["time_s", "drops", "timeouts", "limited_transmits"]].mean().round(3).reset_index()
            both = ns.merge(mine, on=["size", "variant", "load_kbps"], suffixes=(" ns-2", " tcplab"))
            table(report, both[["size", "variant", "load_kbps"] + [f"{q} {w}" for q in ("time_s", "drops", "timeouts", "limited_transmits") for w in ("ns-2", "tcplab")]],
                  out, "transfers_ns2", f"ns-2 beside tcplab: mean over the same {NS2_SEEDS[scale]} seed(s) per size, variant and load "
                  "(ns-2's cross traffic is drawn from its own streams: compare the means, not the runs)")
        else:
            report.text(f"ns-2 column: none ({why_not}).")
    report.compare(_checks(c, n, why_not), "Checks L1–L5")
    _figures(report, c, out)
    log(f"ladha04 10 MB transfers vs loss rate ({scale})")
    b = bulk_runs(scale, out, workers, progress)
    report.heading("10 MB transfers against the loss rate (Figs. 6–7)")
    bs = b.groupby(["variant", "load_kbps"])[["loss_pct", "time_s", "drops", "retransmits", "timeouts", "limited_transmits", "early_retransmits"]].mean().round(3).reset_index()
    table(report, bs, out, "bulk", "10 MB transfers (1 MB on the tiny scale): mean over seeds per variant and load")
    report.compare(_bulk_checks(b), "Checks L6–L7")
    _bulk_figure(report, b, out)
    return finish(report, out, t0)
