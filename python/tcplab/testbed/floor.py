"""The kernel against itself: the floor under the testbed's comparisons (docs/testbed.md#the-floor).

A testbed experiment compares the simulator with one run of the kernel. The kernel does not repeat
itself exactly: the same case run again on the same testbed meets other host latencies, other
wake-ups of the delay box and of the endpoints, and wherever a timer and an arrival race (a delayed
ACK against the next segment, `tcp_tso_should_defer`'s 1 ms age test, the compressed SACK against a
retransmission, CUBIC's next increment against the next loss) the race can go either way. A
deterministic model sends one outcome of each race. So a goal that asks the simulator to agree with
the kernel more closely than two runs of the kernel agree with each other cannot be met on that
testbed by any model, and a comparison's verdict means little without the kernel's own agreement
beside it.

`drops(runs)`, `cwnd(runs)`, `ecn(runs)` and `bbr(runs)` take two or more kept output directories of the same
experiment (`tcplab testbed experiments --only NAME -o DIR`) and apply each experiment's own
measure, case by case, twice: between the kernel's runs (every pair of them, the earlier run as
the reference) and between the simulator and each kernel run. The simulator is run again, once a
case, on the first run's scenario of it (deterministic: the model as it is now, not the one the
runs were analysed with; the runs of a case must have the same scenario, up to the transfer's
length for `cwnd` and `bbr`, whose comparisons end with the shorter transfer).

The kernel's side of a kernel-to-kernel comparison is sampled on both sides (`ss` every 10–20 ms
for `cwnd`, `ecn` and `bbr`), the simulator's side of the other is exact: a sampled window's
staleness adds to the kernel-to-kernel window error, and a mode change known only between two
samples on both sides makes the kernel-to-kernel timing more lenient.
`tcplab testbed floor NAME DIR DIR [DIR ...]` prints the two side by side.

`cwnd` also shows, apart, the simulator calibrated to each run's measured path (`calibrated_scenario`:
the one-way delay lengthened by the box's measured excess over its own model), where a model
exact to the microsecond sits on an edge a real path's tens of microseconds decide.
"""

from __future__ import annotations

import itertools
import json
import statistics as st
import tempfile
from pathlib import Path
from typing import Optional, Sequence

from . import TestbedError

#: The experiments this module measures (each keeps its cases in the subdirectory of its name).
EXPERIMENTS = ("drops", "cwnd", "ecn", "bbr")


def common_cases(runs: Sequence[Path], sub: str, marker: str) -> list:
    """The case directories' names present (with `marker` in them) under `run/sub/` of every run,
    sorted. Raises TestbedError naming the run and what is missing when there is none."""
    if len(runs) < 2:
        raise TestbedError(f"the floor needs two runs of the experiment or more, got {len(runs)}")
    sets = []
    for r in runs:
        base = Path(r) / sub
        if not base.is_dir():
            raise TestbedError(f"{r}: no {sub}/ directory (a kept output of `tcplab testbed experiments --only {sub} -o DIR`?)")
        # A stalled attempt kept beside its case (`<case>.stalled<k>`, exp_ecn) is not a case.
        sets.append({d.name for d in base.iterdir() if (d / marker).exists() and ".stalled" not in d.name})
    names = sorted(set.intersection(*sets))
    if not names:
        raise TestbedError(f"no case of {sub}/ with {marker} is in every run ({', '.join(str(r) for r in runs)})")
    return names


def _pairs(n: int) -> list:
    return list(itertools.combinations(range(n), 2))


def _case_text(rec: dict) -> str:
    """A testbed record's case (its scenario and the sets over it), as comparable text."""
    return json.dumps({"scenario": rec["scenario"], "sets": list(rec.get("sets") or ())}, sort_keys=True)


#: The `cwnd` and `ecn` experiments' goal for the median |Δcwnd|/cwnd.
CWND_GOAL = 0.05
#: The `cwnd` experiment's goal for goodput (|ratio − 1|) and for HyStart's exit cwnd (segments).
GOODPUT_GOAL = 0.03
HYSTART_GOAL = 1


def _transfer_free(meta: dict, shortest: int, seed: bool = True) -> str:
    """A `cwnd` or `bbr` run's scenario (and seed) without what follows from the transfer's
    length (each run is as long as the simulator of its day acknowledged in the experiment's
    time: its bytes, and the drops of the pattern beyond the shorter length), as comparable
    text."""
    d = json.loads(json.dumps(meta["scenario"]))
    for f in d.get("flows", []):
        f.pop("bytes", None)
        f["drops"] = [x for x in f.get("drops", []) if x.get("segment", 0) <= shortest]
    return json.dumps({"scenario": d, "seed": meta["seed"] if seed else None}, sort_keys=True)


# -- drops: segment by segment (testbed/segmatch.py) ---------------------------------------------

def drops(runs: Sequence[Path], n: Optional[int] = None) -> dict:
    """The `drops` experiment's measure (the data sender's first `n` segments: the same (seq,
    len, SYN/FIN) and send times within max(1 ms, 2 %), `segmatch.match`) between every pair of
    kernel runs and between the simulator and each run, case by case."""
    from . import segmatch, simulate

    n = n or segmatch.DROP_SEGMENTS
    runs = [Path(r) for r in runs]
    names = common_cases(runs, "drops", "testbed.json")
    pairs = _pairs(len(runs))
    cases = {}
    with tempfile.TemporaryDirectory(prefix="tcplab-floor-") as tmp:
        for name in names:
            recs = [json.loads((r / "drops" / name / "testbed.json").read_text()) for r in runs]
            if any(_case_text(x) != _case_text(recs[0]) for x in recs[1:]):
                raise TestbedError(f"drops/{name}: the runs' scenarios or sets differ (testbed.json): not the same case")
            ports = [int(x["connections"][0]["sport"]) for x in recs]
            caps = [r / "drops" / name / "real-sender.pcap" for r in runs]
            sd = Path(tmp) / name
            sd.mkdir()
            simulate(recs[0]["scenario"], sd, ["sender"], sets=recs[0].get("sets", ()))
            kk = {f"{i}-{j}": segmatch.match(caps[i], caps[j], ports[i], n=n, port_b=ports[j]) for i, j in pairs}
            sk = [segmatch.match(caps[i], sd / "sim-sender.pcap", ports[i], n=n) for i in range(len(runs))]
            cases[name] = {"kernel_kernel": {k: _seg(m) for k, m in kk.items()}, "sim_kernel": [_seg(m) for m in sk]}
    summary = {"cases": len(names),
               "kernel_kernel": {f"{i}-{j}": _seg_sum(cases, lambda c, k=f"{i}-{j}": c["kernel_kernel"][k]) for i, j in pairs},
               "sim_kernel": [_seg_sum(cases, lambda c, i=i: c["sim_kernel"][i]) for i in range(len(runs))]}
    # Per case: the kernel agreeing with itself in every pair, and the simulator with every run.
    summary["sim_always"] = sum(all(v["ok"] for v in c["sim_kernel"]) for c in cases.values())
    summary.update(_repeats(cases, lambda v: v["ok"]))
    return {"experiment": "drops", "runs": [str(r) for r in runs], "segments": n, "cases": cases, "summary": summary}


def _repeats(cases: dict, ok) -> dict:
    """Where the kernel repeats itself (`ok` of every pair of its runs) a miss of the simulator is
    the model's; elsewhere the kernel's own outcome varies. The cases the kernel repeats, and
    those of them the simulator does not match in every run."""
    steady = [n for n, c in cases.items() if c["kernel_kernel"] and all(v is not None and ok(v) for v in c["kernel_kernel"].values())]
    miss = [n for n in steady if not all(v is not None and ok(v) for v in cases[n]["sim_kernel"])]
    return {"kernel_repeats": len(steady), "sim_matches_there": len(steady) - len(miss), "kernel_repeats_cases": steady,
            "sim_misses_where_kernel_repeats": miss}


def _seg(m) -> dict:
    return {"ok": m.ok, "same": m.same, "timed": m.timed, "compared": m.compared, "worst_dt_ms": m.worst_dt_ms, "late": m.late,
            "first_diff": m.first_diff}


def _seg_sum(cases: dict, pick) -> dict:
    v = [pick(c) for c in cases.values()]
    return {"ok": sum(x["ok"] for x in v), "same_cases": sum(x["first_diff"] is None for x in v), "timed": sum(x["timed"] for x in v),
            "segments": sum(x["compared"] for x in v)}


# -- cwnd: the window on a 10 ms grid (testbed/exp_cwnd.py) --------------------------------------

def cwnd(runs: Sequence[Path]) -> dict:
    """The `cwnd` experiment's measure (the median over a 10 ms grid of |cwnd − cwnd_ref| /
    cwnd_ref, each side's window from its first data packet, up to the shorter transfer's end;
    goodput from each capture) between every pair of kernel runs (the kernel's `ss` samples) and
    between the simulator (its `tcp` series) and each run, per run; and per cell (variant, rate,
    RTT) the median over its seeds, as the experiment's table gives it."""
    from . import exp_cwnd as ec

    runs = [Path(r) for r in runs]
    names = common_cases(runs, "cwnd", "ss.tsv")
    pairs = _pairs(len(runs))
    cases = {}
    for name in names:
        dirs = [r / "cwnd" / name for r in runs]
        metas = [json.loads((d / "scenario.json").read_text()) for d in dirs]
        shortest = min(int(m["segments"]) for m in metas)
        if any(_transfer_free(m, shortest) != _transfer_free(metas[0], shortest) for m in metas[1:]):
            raise TestbedError(f"cwnd/{name}: the runs' scenarios or seeds differ (scenario.json): not the same case")
        meta = metas[0]
        payload = int(meta["payload"])
        kern, invalid = [], []
        for i, (d, m) in enumerate(zip(dirs, metas)):
            cap = ec.capture_times(d / "real-sender.pcap", payload)
            rows = ec.read_ss(d / "ss.tsv")
            kern.append((cap, [r[0] - cap["t0"] for r in rows], [r[1] for r in rows]))
            # As the experiment's table (`exp_cwnd.valid`): a run whose kernel was not sampled,
            # or did not send every segment of the pattern again (the drop never reached it),
            # is left out.
            pattern = {x["segment"] for x in m["scenario"]["flows"][0].get("drops", [])}
            if not rows or not pattern <= set(cap["retx_segments"]):
                invalid.append(i)
        scap, s_rel, s_c, s_hy, sim_valid = _sim_side(meta["scenario"], meta["seed"], payload)
        # HyStart's exit as the experiment reads it: the kernel's HyStart counters (the window at
        # its detection), the simulator's first ssthresh set in avoidance. A run without its
        # counters (hystart.json), or whose counters name a detection without its window, is not
        # compared; nor, as above, a run left out or a simulator that missed the drop pattern.
        k_hy, k_known = [], []
        for i, d in enumerate(dirs):
            counters = json.loads((d / "hystart.json").read_text()) if (d / "hystart.json").exists() else None
            k = ec.kernel_hystart_exit([], counters or {})
            k_hy.append(k["cwnd"] if k["by"] else None)
            k_known.append(counters is not None and (k["by"] is None or k["cwnd"] is not None) and i not in invalid)

        def exit_cmp(i, other, other_ok=True):
            return same_exit(k_hy[i], other) if k_known[i] and other_ok else None

        def err(i, b_cap, b_t, b_c, j=None):
            cap_a, t_a, c_a = kern[i]
            if not t_a or not b_t or i in invalid or j in invalid:
                return None
            end = min(cap_a["t1"] - cap_a["t0"], b_cap["t1"] - b_cap["t0"])
            e = ec.window_error(t_a, c_a, b_t, b_c, end)
            return {"median": e["median"], "p90": e["p90"], "points": e["points"], "mean_ratio": e["mean_ratio"],
                    "goodput_ratio": b_cap["goodput_bps"] / cap_a["goodput_bps"]}

        # Calibrated, shown apart: the simulator on each run's path as measured (the box's
        # excess over its own model, `pathexcess`; the one-way delay lengthened by the mean of
        # the two directions' medians), where the run kept its receiver's capture.
        calibrated = []
        for i, d in enumerate(dirs):
            scen, ex = calibrated_scenario(meta["scenario"], d)
            if scen is None:
                calibrated.append(None)
                continue
            ccap, c_rel, c_c, c_hy, c_valid = _sim_side(scen, meta["seed"], payload)
            calibrated.append({"one_way_ms": ex, "window": err(i, ccap, c_rel, c_c) if c_valid else None,
                               "hystart": exit_cmp(i, c_hy, c_valid)})
        cases[name] = {"variant": meta["variant"], "rate": meta["rate"], "rtt_ms": meta["rtt_ms"], "seed": meta["seed"],
                       "invalid_runs": invalid,
                       "kernel_kernel": {f"{i}-{j}": err(i, *kern[j], j=j) for i, j in pairs},
                       "sim_valid": sim_valid,
                       "sim_kernel": [err(i, scap, s_rel, s_c) if sim_valid else None for i in range(len(runs))],
                       "hystart": {"kernel": k_hy, "sim": s_hy, "kernel_known": k_known, "sim_known": sim_valid,
                                   "kernel_kernel": {f"{i}-{j}": exit_cmp(i, k_hy[j], k_known[j]) for i, j in pairs},
                                   "sim_kernel": [exit_cmp(i, s_hy, sim_valid) for i in range(len(runs))]},
                       "calibrated": calibrated}
    cells = {}
    for c in cases.values():
        cells.setdefault(f"{c['variant']}-{c['rate']}-{c['rtt_ms']:g}ms", []).append(c)
    summary = {}
    for key, cs in cells.items():
        by_seed = {f"s{c['seed']}": c for c in cs}
        row = {"seeds": len(cs), "invalid": sum(len(c["invalid_runs"]) for c in cs), "kernel_kernel": {}, "sim_kernel": [],
               **_repeats(by_seed, lambda v: v["median"] is not None and v["median"] <= CWND_GOAL)}
        for i, j in pairs:
            row["kernel_kernel"][f"{i}-{j}"] = _median([c["kernel_kernel"][f"{i}-{j}"] for c in cs])
        for i in range(len(runs)):
            row["sim_kernel"].append(_median([c["sim_kernel"][i] for c in cs]))
        # Goodput: the seeds within the goal, of those compared.
        row["goodput"] = {"kernel_kernel": {p: _count([c["kernel_kernel"][p] for c in cs], _goodput_ok) for p in row["kernel_kernel"]},
                          "sim_kernel": [_count([c["sim_kernel"][i] for c in cs], _goodput_ok) for i in range(len(runs))],
                          **_repeats(by_seed, _goodput_ok)}
        # HyStart's exit: the seeds where the two sides leave slow start alike (both by HyStart
        # within the goal, or neither by HyStart), of those where either side leaves by it.
        hy = {n: c["hystart"] for n, c in by_seed.items()}
        # Where the kernel repeats: the seeds where some side leaves by HyStart (no exit on
        # either side of a pair is alike).
        seen = {n: _hystart_alike(h, h["sim_kernel"]) for n, h in hy.items() if _hystart_seen(h)}
        row["hystart"] = {"kernel_kernel": {p: _count([h["kernel_kernel"][p] for h in hy.values()], bool) for p in row["kernel_kernel"]},
                          "sim_kernel": [_count([h["sim_kernel"][i] for h in hy.values()], bool) for i in range(len(runs))],
                          "seeds": len(seen), **_repeats(seen, bool)}
        row["calibrated"] = _calibrated_cell(by_seed, len(runs))
        summary[key] = row
    return {"experiment": "cwnd", "runs": [str(r) for r in runs], "cases": cases, "cells": summary}


def calibrated_scenario(scen: dict, d: Path) -> tuple:
    """A single-link case's scenario on the path a kept run measured (`d`: its captures at both
    hosts): the one-way delay lengthened by the box's measured excess over its own model (the
    mean of the two directions' medians, `pathexcess.median_excess_ms`), and that excess in ms;
    (None, None) when the run kept no receiver capture or no box statistics, or its box dropped
    from its queue (the excess model is a FIFO of the packets both ends saw, which a queue's drops
    leave; the statistics are written four times a second, so a drop in a run's last quarter
    second may not be in them)."""
    from ..units import rate_bps, seconds
    from . import pathexcess

    if not (d / "real-receiver.pcap").exists() or _box_queue_drops(d) != 0:
        return None, None
    topo = scen["topology"]
    delay_s = seconds(topo["delay"])
    ex = pathexcess.median_excess_ms(d / "real-sender.pcap", d / "real-receiver.pcap", rate_bps(topo["rate"]), delay_s)
    if ex is None:
        return None, None
    return dict(scen, topology=dict(topo, delay=f"{delay_s * 1e3 + ex['one_way_ms']:.4f}ms")), ex["one_way_ms"]


def _box_queue_drops(d: Path) -> Optional[int]:
    """The packets the delay box's queues dropped in a kept run (box-stats.json), None if unknown."""
    f = d / "box-stats.json"
    if not f.exists():
        return None
    try:
        return sum(int(v.get("dropped", 0)) for v in json.loads(f.read_text()).get("links") or [])
    except (ValueError, AttributeError, TypeError) as e:
        raise TestbedError(f"{f}: not the delay box's statistics ({e})") from None


def _sim_side(scen: dict, seed: int, payload: int) -> tuple:
    """The simulator's side of a `cwnd` case: its capture's times, its window (seconds from its
    first data packet, packets), its exit from slow start by HyStart (ssthresh in packets, None
    for another exit), and whether it sent every segment of the drop pattern again (as
    `exp_cwnd.valid` asks of both sides)."""
    from .. import api
    from . import exp_cwnd as ec

    with tempfile.TemporaryDirectory(prefix="tcplab-floor-") as tmp:
        sim = api.run(scen, seed=seed, series="tcp", pcap=Path(tmp) / "sim-sender.pcap")
        scap = ec.capture_times(Path(tmp) / "sim-sender.pcap", payload)
    s_t, s_c, s_s, s_state = ec.sim_window(sim.series.tcp, payload)
    s_rel = [t - scap["t0"] for t in s_t]
    hy = ec.sim_hystart_exit(s_rel, s_c, s_s, s_state)
    pattern = {x["segment"] for x in scen["flows"][0].get("drops", [])}
    return scap, s_rel, s_c, (hy["ssthresh"] if hy and hy["by_hystart"] else None), pattern <= set(scap["retx_segments"])


def _calibrated_cell(by_seed: dict, n: int) -> dict:
    """A cell's calibrated comparison (each run against the simulator on that run's measured
    path): the median window error per run, the seeds within the goodput goal and those alike in
    HyStart's exit per run, and, for each of the three goals, the seeds where the kernel repeats
    itself and the calibrated simulator does not meet the goal against every run."""
    def win(c, i):
        k = c["calibrated"][i]
        return k and k["window"]

    out = {"runs_measured": [sum(c["calibrated"][i] is not None for c in by_seed.values()) for i in range(n)],
           "sim_kernel": [_median([win(c, i) for c in by_seed.values()]) for i in range(n)],
           "goodput": [_count([win(c, i) for c in by_seed.values()], _goodput_ok) for i in range(n)],
           "hystart": [_count([(c["calibrated"][i] or {}).get("hystart") for c in by_seed.values()], bool) for i in range(n)]}
    # Only seeds with every run calibrated (and the calibrated simulator valid) are counted.
    measured = {k: c for k, c in by_seed.items() if all(x is not None and x["window"] is not None for x in c["calibrated"])}
    runs = {k: {"kernel_kernel": c["kernel_kernel"], "sim_kernel": [win(c, i) for i in range(n)]} for k, c in measured.items()}
    views = {
        "window": (runs, lambda v: v["median"] is not None and v["median"] <= CWND_GOAL),
        "goodput": (runs, _goodput_ok),
        "hystart": ({k: _hystart_alike(c["hystart"], [x["hystart"] for x in c["calibrated"]]) for k, c in measured.items()
                     if _hystart_seen(c["hystart"])}, bool)}
    for goal, (cases, ok) in views.items():
        r = _repeats(cases, ok)
        out[f"{goal}_repeats"] = r["kernel_repeats"]
        out[f"{goal}_misses"] = r["sim_misses_where_kernel_repeats"]
    return out


def _hystart_alike(h: dict, sim: list) -> dict:
    """A seed's HyStart comparisons as the kernel-repeats view reads them (`_repeats`): every
    pair of kernel runs and the simulator's comparison `sim` with each run, alike unless their
    exits differ (no exit on either side is alike)."""
    return {"kernel_kernel": {p: v is not False for p, v in h["kernel_kernel"].items()}, "sim_kernel": [v is not False for v in sim]}


def _hystart_seen(h: dict) -> bool:
    """A seed whose exits every run and the simulator tell (`kernel_known`, `sim_known`), and
    where some side leaves slow start by HyStart: one the kernel-repeats view counts (no exit on
    either side of a pair is alike there)."""
    return all(h["kernel_known"]) and h["sim_known"] and (h["sim"] is not None or any(k is not None for k in h["kernel"]))


def same_exit(a: Optional[int], b: Optional[int]) -> Optional[bool]:
    """Two slow-start exits alike: both by HyStart with windows within `HYSTART_GOAL` segments,
    or neither by HyStart (None: not compared)."""
    if a is None and b is None:
        return None
    return a is not None and b is not None and abs(a - b) <= HYSTART_GOAL


def _goodput_ok(e: Optional[dict]) -> Optional[bool]:
    return None if e is None else abs(e["goodput_ratio"] - 1) <= GOODPUT_GOAL


def _count(values: list, ok) -> list:
    """[within the goal, compared] over `values` (None: not compared)."""
    v = [ok(x) for x in values if x is not None]
    v = [x for x in v if x is not None]
    return [sum(map(bool, v)), len(v)]



def _median(errs: list) -> Optional[float]:
    v = [e["median"] for e in errs if e and e["median"] is not None]
    return st.median(v) if v else None


# -- ecn: the reductions, paired, and the window (testbed/exp_ecn.py) ----------------------------

def ecn(runs: Sequence[Path]) -> dict:
    """The `ecn` experiment's measure between every pair of kernel runs and between the simulator
    and each run: the ECN reductions (CWR-flagged data segments in the sender's capture) paired in
    order within 10 round trips (`exp_ecn.pair_reductions`), how many within ±1 round trip, and
    the median |Δcwnd|/cwnd on a 10 ms grid (`ss` samples against `ss` samples or the simulator's
    `tcp` series). A case meets the experiment's goal when every reduction is paired within
    ±1 round trip and the median window error is at most 5 %."""
    from . import exp_ecn as ee
    from . import simulate

    runs = [Path(r) for r in runs]
    names = common_cases(runs, "ecn", "ecn.json")
    pairs = _pairs(len(runs))
    cases = {}
    for name in names:
        dirs = [r / "ecn" / name for r in runs]
        recs = [json.loads((d / "testbed.json").read_text()) for d in dirs]
        if any(_case_text(x) != _case_text(recs[0]) for x in recs[1:]):
            raise TestbedError(f"ecn/{name}: the runs' scenarios or sets differ (testbed.json): not the same case")
        scen = recs[0]["scenario"]
        rtt_s = _rtt_s(scen)
        kern = []
        for d in dirs:
            facts = ee.capture_facts(d / "real-sender.pcap")
            t, c = _tsv(d / "cwnd-real.tsv")
            kern.append((facts, t, c))
        with tempfile.TemporaryDirectory(prefix="tcplab-floor-") as tmp:
            res = simulate(scen, tmp, ["sender"], series=True)
            sfacts = ee.capture_facts(Path(tmp) / "sim-sender.pcap")
        tcp = res.series.tcp
        tcp = tcp[tcp["dir"] == "a2b"]
        payload = ee._payload_mss(scen)
        sim = (sfacts, [float(x) - sfacts["t0"] for x in tcp["time_s"]], [int(x) / payload for x in tcp["cwnd"]])

        def cmp(a, b):
            pr = ee.pair_reductions(a[0]["cwr_s"], b[0]["cwr_s"], rtt_s)
            end = min(a[0]["last_data_s"], b[0]["last_data_s"])
            cw = ee.cwnd_error(a[1], a[2], b[1], b[2], end=end) if a[1] and b[1] else {"median": None}
            n_a, n_b = len(a[0]["cwr_s"]), len(b[0]["cwr_s"])
            ok = (len(pr["pairs"]) == n_a == n_b and pr["within_1rtt"] == n_a and cw["median"] is not None and cw["median"] <= CWND_GOAL
                  and a[0]["retx"] == 0 and b[0]["retx"] == 0)
            return {"reductions": [n_a, n_b], "paired": len(pr["pairs"]), "within_1rtt": pr["within_1rtt"],
                    "max_abs_dt_rtt": pr["max_abs_dt_rtt"], "cwnd_median": cw["median"], "ok": ok}

        cases[name] = {"kernel_kernel": {f"{i}-{j}": cmp(kern[i], kern[j]) for i, j in pairs},
                       "sim_kernel": [cmp(kern[i], sim) for i in range(len(runs))]}
    summary = {"cases": len(names),
               "kernel_kernel": {f"{i}-{j}": sum(c["kernel_kernel"][f"{i}-{j}"]["ok"] for c in cases.values()) for i, j in pairs},
               "sim_kernel": [sum(c["sim_kernel"][i]["ok"] for c in cases.values()) for i in range(len(runs))],
               **_repeats(cases, lambda v: v["ok"])}
    return {"experiment": "ecn", "runs": [str(r) for r in runs], "cases": cases, "summary": summary}


def _rtt_s(scen: dict) -> float:
    from ..units import seconds

    return 2 * seconds(scen["topology"]["delay"])


def _tsv(path: Path) -> tuple:
    t, c = [], []
    for line in Path(path).read_text().splitlines():
        f = line.split("\t")
        t.append(float(f[0]))
        c.append(float(f[1]))
    return t, c


# -- bbr: the mode changes and the estimates in PROBE_BW (testbed/exp_bbr.py) ---------------------

def interval_gap(a_lo: Optional[float], a_hi: float, b_lo: Optional[float], b_hi: float) -> float:
    """How far apart two intervals are (0 when they overlap; lo None: open below), signed:
    positive when b lies after a. A kernel's mode change is known only to lie between its last
    sample in the old mode and its first in the new one: two runs' changes agree as far as their
    intervals overlap."""
    if b_lo is not None and b_lo > a_hi:
        return b_lo - a_hi
    if a_lo is not None and b_hi < a_lo:
        return b_hi - a_lo
    return 0.0


def compare_kernel_modes(a: list, b: list, rtt_s: float) -> dict:
    """Two kernel runs' mode changes (`exp_bbr.changes` of their samples), matched in order while
    the modes agree, as `exp_bbr.compare_modes` matches the simulator's; each change's distance
    is the gap between the two intervals."""
    from .exp_bbr import LETTER

    rows, n = [], 0
    for (am, alo, ahi), (bm, blo, bhi) in zip(a, b):
        if am != bm:
            break
        n += 1
        if alo is None:
            continue
        d = interval_gap(alo, ahi, blo, bhi)
        rows.append({"mode": am, "dt_s": d, "dt_rtt": d / rtt_s})
    return {"a": "".join(LETTER[m] for m, _, _ in a), "b": "".join(LETTER[m] for m, _, _ in b),
            "same_sequence": [m for m, _, _ in a] == [m for m, _, _ in b], "matched": n, "changes": rows,
            "within_1rtt": sum(abs(r["dt_rtt"]) <= 1.0 + 1e-9 for r in rows)}


def bbr(runs: Sequence[Path]) -> dict:
    """The `bbr` experiment's measure between every pair of kernel runs and between the simulator
    and each run: the mode changes (the kernel's read from its `ss` gains) matched in order, how
    many within ±1 base round trip, and the medians over PROBE_BW of the bandwidth estimate and
    the pacing rate (goal: within 5 %). A case meets the goal when the mode sequences are the
    same, every change is within a round trip and both medians within 5 %."""
    from .. import api
    from . import exp_bbr as eb
    from . import tsphase

    runs = [Path(r) for r in runs]
    names = common_cases(runs, "bbr", "ss.tsv")
    pairs = _pairs(len(runs))
    cases = {}
    for name in names:
        dirs = [r / "bbr" / name for r in runs]
        metas = [json.loads((d / "scenario.json").read_text()) for d in dirs]
        shortest = min(int(m["segments"]) for m in metas)
        if any(_transfer_free(m, shortest, seed=False) != _transfer_free(metas[0], shortest, seed=False) for m in metas[1:]):
            raise TestbedError(f"bbr/{name}: the runs' scenarios differ (scenario.json): not the same case")
        meta = metas[0]
        payload, rtt_s = int(meta["payload"]), meta["rtt_ms"] / 1e3
        kern = []
        for d in dirs:
            k0 = tsphase.syn_time(d / "real-sender.pcap")
            rows = eb.read_ss(d / "ss.tsv")
            kt = [r[0] - k0 for r in rows]
            km = [eb.kernel_mode(r[2], r[4], r[5]) for r in rows]
            kern.append((eb.changes(kt, km), eb.median_in(kt, [r[2] for r in rows], km, "probe_bw"),
                         eb.median_in(kt, [r[6] for r in rows], km, "probe_bw")))
        with tempfile.TemporaryDirectory(prefix="tcplab-floor-") as tmp:
            sim = api.run(meta["scenario"], seed=eb.LOSS_SEED, series="tcp", pcap=Path(tmp) / "sim-sender.pcap")
            s0 = tsphase.syn_time(Path(tmp) / "sim-sender.pcap")
        t = sim.series.tcp
        t = t[t["dir"] == "a2b"]
        sim_t = [float(x) - s0 for x in t["time_s"]]
        sm = [str(m) if str(m) in eb.MODES else None for m in t["bbr_mode"]]
        sp = [None if str(x) in ("<NA>", "nan", "None") else float(x) for x in t["pacing_rate"]]
        simk = (eb.changes(sim_t, sm), eb.median_in(sim_t, [float(x) for x in t["bbr_bw"]], sm, "probe_bw"), eb.median_in(sim_t, sp, sm, "probe_bw"))

        def verdict(m: dict, a, b) -> dict:
            # `exp_bbr.compare_modes` names its sequences kernel and sim, ours a and b.
            seqs = [m["a"], m["b"]] if "a" in m else [m["kernel"], m["sim"]]
            bw, pace = eb.rel(b[1], a[1]), eb.rel(b[2], a[2])
            ok = (m["same_sequence"] and m["within_1rtt"] == len(m["changes"]) and bw is not None and abs(bw) <= 0.05
                  and pace is not None and abs(pace) <= 0.05)
            return {"sequence": seqs, "changes": len(m["changes"]),
                    "within_1rtt": m["within_1rtt"], "bw_error": bw, "pacing_error": pace, "ok": ok}

        cases[name] = {"rate": meta["rate"], "rtt_ms": meta["rtt_ms"], "variant": meta["variant"],
                       "kernel_kernel": {f"{i}-{j}": verdict(compare_kernel_modes(kern[i][0], kern[j][0], rtt_s), kern[i], kern[j]) for i, j in pairs},
                       "sim_kernel": [verdict(eb.compare_modes(kern[i][0], simk[0], rtt_s), kern[i], simk) for i in range(len(runs))]}

    def total(pick) -> dict:
        v = [pick(c) for c in cases.values()]
        return {"ok": sum(x["ok"] for x in v), "changes": sum(x["changes"] for x in v), "within_1rtt": sum(x["within_1rtt"] for x in v)}

    summary = {"cases": len(names),
               "kernel_kernel": {f"{i}-{j}": total(lambda c, k=f"{i}-{j}": c["kernel_kernel"][k]) for i, j in pairs},
               "sim_kernel": [total(lambda c, i=i: c["sim_kernel"][i]) for i in range(len(runs))],
               **_repeats(cases, lambda v: v["ok"])}
    return {"experiment": "bbr", "runs": [str(r) for r in runs], "cases": cases, "summary": summary}


# -- the report ---------------------------------------------------------------------------------

def measure(name: str, runs: Sequence[Path]) -> dict:
    if name not in EXPERIMENTS:
        raise TestbedError(f"unknown experiment {name!r} for the floor (one of {', '.join(EXPERIMENTS)})")
    return {"drops": drops, "cwnd": cwnd, "ecn": ecn, "bbr": bbr}[name](runs)


def _pct(v) -> str:
    return "–" if v is None else f"{100 * v:.1f} %"


def report(res: dict) -> str:
    """Markdown: the kernel against itself beside the simulator against the kernel."""
    runs = res["runs"]
    head = "\n".join(f"run {i}: {r}" for i, r in enumerate(runs, 1))
    kind = res["experiment"]
    if kind == "cwnd":
        return head + "\n\n" + _cwnd_report(res)
    s = res["summary"]
    if kind == "drops":
        lines = [head, "", f"{s['cases']} cases, the first {res['segments']} segments each; a case counts when every segment is the same and "
                 "sent within max(1 ms, 2 %).", "",
                 "| compared | cases within the tolerance | cases with the same segments | segments within the tolerance |", "|---|---|---|---|"]
        lines += _rows(s, lambda v: f"{v['ok']} of {s['cases']} | {v['same_cases']} | {v['timed']} of {v['segments']}")
        lines.append(f"\nThe simulator within the tolerance of every kernel run: {s['sim_always']} of {s['cases']}.")
        lines.append(_repeats_text(s, "within the tolerance in every pair of its runs"))
        return "\n".join(lines)
    if kind == "bbr":
        lines = [head, "", f"{s['cases']} cases; a case counts when the mode sequences are the same, every change is within ±1 base "
                 "round trip and the bandwidth estimate and pacing rate in PROBE_BW are within 5 %.", "",
                 "| compared | cases meeting the goal | mode changes within ±1 round trip |", "|---|---|---|"]
        lines += _rows(s, lambda v: f"{v['ok']} of {s['cases']} | {v['within_1rtt']} of {v['changes']}")
    else:
        lines = [head, "", f"{s['cases']} cases; a case counts when every reduction is paired within ±1 round trip, the median "
                 "|Δcwnd|/cwnd is at most 5 % and neither side retransmits.", "",
                 "| compared | cases meeting the goal |", "|---|---|"]
        lines += _rows(s, lambda v: f"{v} of {s['cases']}")
    lines.append("\n" + _repeats_text(s, "meeting the goal in every pair of its runs"))
    return "\n".join(lines)


def _pair_name(p: str) -> tuple:
    """'0-2' → (1, 3): a pair of runs as the report numbers them."""
    a, b = (int(x) + 1 for x in p.split("-"))
    return a, b


def _rows(s: dict, cell) -> list:
    """A table's rows: each pair of kernel runs, then the simulator against each run, `cell(v)`
    writing the columns after the first."""
    rows = [f"| kernel run {a} against kernel run {b} | {cell(v)} |" for (a, b), v in ((_pair_name(k), v) for k, v in s["kernel_kernel"].items())]
    return rows + [f"| simulator against kernel run {i} | {cell(v)} |" for i, v in enumerate(s["sim_kernel"], 1)]


def _cwnd_report(res: dict) -> str:
    """The `cwnd` floor's three tables, one row a cell: the window error, goodput and HyStart's
    exit, each of the experiment's goals."""
    cells = sorted(res["cells"].items())
    pairs = list(cells[0][1]["kernel_kernel"]) if cells else []
    cols = [f"kernel {a} vs {b}" for a, b in map(_pair_name, pairs)] + [f"simulator vs kernel {i}" for i in range(1, len(res["runs"]) + 1)]
    bad = sum(r["invalid"] for _, r in cells)

    def table(first: str, last: str, vals, repeats) -> list:
        out = [f"| cell | {first} | " + " | ".join(cols) + f" | {last} | of those, the simulator within the goal of every run |",
               "|---|---|" + "---|" * len(cols) + "---|---|"]
        for key, row in cells:
            r = repeats(row)
            out.append(f"| {key} | {vals(row)[0]} | " + " | ".join(vals(row)[1:]) + f" | {r['kernel_repeats']} | {r['sim_matches_there']} |")
        return out

    def of(c: list) -> str:
        return f"{c[0]} of {c[1]}" if c[1] else "–"

    lines = ["Median over the seeds of each run's median |Δcwnd|/cwnd (10 ms grid)"
             + (f"; {bad} kernel runs left out (not sampled, or the drop pattern did not reach the kernel)." if bad else ".")
             + f" A seed 'repeats' when every pair of kernel runs is within {100 * CWND_GOAL:g} %.", ""]
    lines += table("seeds", "seeds the kernel repeats",
                   lambda r: [str(r["seeds"])] + [_pct(r["kernel_kernel"][p]) for p in pairs] + [_pct(v) for v in r["sim_kernel"]], lambda r: r)
    lines += ["", f"Goodput: the seeds within {100 * GOODPUT_GOAL:g} % of the reference run's, of those compared.", ""]
    lines += table("seeds", "seeds the kernel repeats",
                   lambda r: [str(r["seeds"])] + [of(r["goodput"]["kernel_kernel"][p]) for p in pairs] + [of(v) for v in r["goodput"]["sim_kernel"]],
                   lambda r: r["goodput"])
    lines += ["", f"HyStart's exit: the seeds where both sides leave slow start alike (by HyStart with windows within ±{HYSTART_GOAL} "
              "segment, or neither by HyStart), of those where either side leaves by it (the kernel's HyStart counters, the "
              "simulator's first ssthresh set in avoidance).", ""]
    lines += table("seeds with an exit by HyStart", "seeds the kernel repeats",
                   lambda r: [str(r["hystart"]["seeds"])] + [of(r["hystart"]["kernel_kernel"][p]) for p in pairs]
                   + [of(v) for v in r["hystart"]["sim_kernel"]], lambda r: r["hystart"])
    if any(any(r["calibrated"]["runs_measured"]) for _, r in cells):
        n = len(res["runs"])
        lines += ["", "Calibrated, shown apart: the simulator on each run's path as measured (the one-way delay lengthened by "
                  "the box's measured excess over its own model, `pathexcess`; runs without their receiver's capture or box "
                  "statistics, or whose box dropped from its queue, are not compared). The window error (median over the seeds), the seeds within the goodput goal and those alike in "
                  "HyStart's exit, against each run; then the seeds where the kernel repeats itself and the calibrated "
                  "simulator misses a run (window / goodput / HyStart; seeds with every run calibrated).", "",
                  "| cell | " + " | ".join(f"window vs kernel {i}" for i in range(1, n + 1)) + " | "
                  + " | ".join(f"goodput vs kernel {i}" for i in range(1, n + 1)) + " | "
                  + " | ".join(f"HyStart vs kernel {i}" for i in range(1, n + 1)) + " | misses where the kernel repeats |",
                  "|---|" + "---|" * (3 * n + 1)]
        for key, row in cells:
            c = row["calibrated"]
            miss = " / ".join(f"{len(c[f'{g}_misses'])} of {c[f'{g}_repeats']}" for g in ("window", "goodput", "hystart"))
            lines.append(f"| {key} | " + " | ".join(_pct(v) for v in c["sim_kernel"]) + " | " + " | ".join(of(v) for v in c["goodput"])
                         + " | " + " | ".join(of(v) for v in c["hystart"]) + f" | {miss} |")
    return "\n".join(lines)


def _repeats_text(s: dict, how: str) -> str:
    miss = s["sim_misses_where_kernel_repeats"]
    return (f"The kernel repeats itself ({how}) in {s['kernel_repeats']} of {s['cases']} cases; the simulator matches every "
            f"run in {s['sim_matches_there']} of them" + (f" (not in {', '.join(miss)})." if miss else "."))
