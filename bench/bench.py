#!/usr/bin/env python3
"""Benchmark tcplab on the dumbbell of bench/scenarios/dumbbell.toml with N = 1, 16, 64 NewReno bulk
flows over a 10 Mb/s bottleneck, 100 s of simulated time.

    python3 bench/bench.py              # N = 1, 16, 64; 100 s simulated; 7 repetitions
    python3 bench/bench.py --quick      # smoke check: 10 s simulated, 2 repetitions
    python3 bench/bench.py --json out.json   # also write every run and the summary as JSON
    python3 bench/bench.py --max-wall 3600   # every run with a wall budget (the loop sweeps use)

Wall time is the time of the whole `tcplab.run()` call (scenario parsing and validation, building
the network, the simulation, and turning the result rows into DataFrames), measured with
time.perf_counter() in this process. Runs are interleaved across N (rep 1 of every N, then rep 2,
...) after one untimed warm-up run, so that a burst of noise on a shared machine is spread over all
N; the table shows medians. Everything except wall time is deterministic (the scenario has no
random element), so goodput, events and packet counts are the same in every repetition.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCENARIO = HERE / "scenarios" / "dumbbell.toml"
BOTTLENECK = "bottleneck:left->right"


def sets_for(n: int, duration_s: float | None) -> list[str]:
    s = [f"topology.pairs={n}", f"flows.0.count={n}"]
    if duration_s is not None:
        s.append(f'duration="{duration_s:g}s"')
    return s


def run_once(tcplab, text: str, n: int, duration_s: float | None, limits: dict | None = None) -> dict:
    """One timed run; returns the figures of one row."""
    t0 = time.perf_counter()
    r = tcplab.run(text, seed=1, sets=sets_for(n, duration_s), **(limits or {}))
    wall = time.perf_counter() - t0
    links = r.links.set_index("link")
    b = links.loc[BOTTLENECK]
    conns = r.connections
    mss = int(conns["mss"].iloc[0])
    # Largest possible goodput: the bottleneck rate times payload / wire bytes (40 B of IPv4 + TCP
    # headers per full segment).
    capacity = float(b["rate_bps"]) * mss / (mss + 40)
    goodput = float(conns["goodput_bps"].sum())
    return {
        "flows": n,
        "sim_time_s": float(r.meta["sim_time_s"]),
        "wall_s": wall,
        "events": int(r.meta["events"]),
        "bottleneck_sent_pkts": int(b["sent_pkts"]),
        "bottleneck_dropped_pkts": int(b["dropped_pkts"]),
        "bottleneck_utilization": float(b["utilization"]),
        "goodput_bps": goodput,
        "goodput_capacity_bps": capacity,
        "retransmits": int(conns["retransmits"].sum()),
        "timeouts": int(conns["timeouts"].sum()),
        "fast_retransmits": int(conns["fast_retransmits"].sum()),
    }


def summarise(runs: list[dict]) -> dict:
    """Median wall time over repetitions; the deterministic figures from the first run."""
    first = runs[0]
    walls = sorted(r["wall_s"] for r in runs)
    wall = statistics.median(walls)
    s = {k: v for k, v in first.items() if k != "wall_s"}
    s.update(
        reps=len(runs),
        wall_median_s=wall,
        wall_min_s=walls[0],
        wall_max_s=walls[-1],
        events_per_s=first["events"] / wall,
        bottleneck_pkts_per_wall_s=first["bottleneck_sent_pkts"] / wall,
        sim_seconds_per_wall_s=first["sim_time_s"] / wall,
        goodput_fraction_of_capacity=first["goodput_bps"] / first["goodput_capacity_bps"],
    )
    # Every repetition must simulate the same thing.
    for r in runs[1:]:
        for k in ("events", "bottleneck_sent_pkts", "goodput_bps"):
            if r[k] != first[k]:
                s.setdefault("nondeterministic", []).append(k)
    return s


def markdown(rows: list[dict]) -> str:
    head = (
        "| N | sim s | reps | wall median s (min–max) | events | events/s | bottleneck pkts | "
        "bottleneck pkts/wall s | aggregate goodput Mb/s | of capacity | bottleneck util. | drops | timeouts |"
    )
    sep = "|" + "---|" * 13
    out = [head, sep]
    for s in rows:
        out.append(
            f"| {s['flows']} | {s['sim_time_s']:g} | {s['reps']} "
            f"| {s['wall_median_s']:.4f} ({s['wall_min_s']:.4f}–{s['wall_max_s']:.4f}) "
            f"| {s['events']:,} | {s['events_per_s'] / 1e6:.2f} M "
            f"| {s['bottleneck_sent_pkts']:,} | {s['bottleneck_pkts_per_wall_s'] / 1e6:.3f} M "
            f"| {s['goodput_bps'] / 1e6:.3f} | {100 * s['goodput_fraction_of_capacity']:.1f} % "
            f"| {100 * s['bottleneck_utilization']:.1f} % | {s['bottleneck_dropped_pkts']:,} | {s['timeouts']} |"
        )
    return "\n".join(out)


def machine() -> dict:
    cpu = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"nproc": os.cpu_count(), "cpu": cpu or platform.processor(), "python": platform.python_version(), "platform": platform.platform()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="short smoke version: 10 s simulated, 2 repetitions")
    ap.add_argument("--flows", type=int, nargs="+", default=[1, 16, 64], metavar="N", help="numbers of flows (default 1 16 64)")
    ap.add_argument("--reps", type=int, default=None, help="timed repetitions per N (default 7; 2 with --quick)")
    ap.add_argument("--duration", type=float, default=None, metavar="S", help="simulated seconds (default: the scenario's 100 s; 10 with --quick)")
    ap.add_argument("--scenario", type=Path, default=SCENARIO, help="scenario file (default bench/scenarios/dumbbell.toml)")
    ap.add_argument("--json", metavar="PATH", help="also write runs and summary as JSON to PATH ('-' for stdout)")
    ap.add_argument("--max-wall", type=float, default=None, metavar="S", help="run with this wall budget (s): the budgeted event loop of sweeps")
    a = ap.parse_args(argv)
    limits = {} if a.max_wall is None else {"max_wall": a.max_wall}

    try:
        import tcplab
    except ImportError as e:
        print(f"bench.py: cannot import tcplab ({e}); install it first: python3 -m pip install .", file=sys.stderr)
        return 2

    reps = a.reps if a.reps is not None else (2 if a.quick else 7)
    duration = a.duration if a.duration is not None else (10.0 if a.quick else None)
    if reps < 1 or any(n < 1 for n in a.flows):
        ap.error("--reps and every N must be at least 1")
    text = a.scenario.read_text(encoding="utf-8")

    run_once(tcplab, text, a.flows[0], duration, limits)  # warm-up: page in the extension, allocators
    runs: dict[int, list[dict]] = {n: [] for n in a.flows}
    for _ in range(reps):
        for n in a.flows:
            runs[n].append(run_once(tcplab, text, n, duration, limits))
    rows = [summarise(runs[n]) for n in a.flows]

    m = machine()
    budget = "" if a.max_wall is None else f", every run with max_wall={a.max_wall:g} s"
    print(f"tcplab {tcplab.__version__}, {a.scenario.name}, {m['nproc']} CPUs ({m['cpu']}), Python {m['python']}{budget}")
    print()
    print(markdown(rows))
    print()
    print("Wall: the whole tcplab.run() call, median of the repetitions. Capacity: 10 Mb/s x MSS / (MSS + 40 B).")
    bad = [s for s in rows if "nondeterministic" in s]
    if bad:
        print("WARNING: results differ between repetitions for N =", [s["flows"] for s in bad])
    if a.json:
        doc = {"machine": m, "tcplab_version": tcplab.__version__, "scenario": a.scenario.name, "duration_s": duration, "summary": rows, "runs": runs}
        text_out = json.dumps(doc, indent=2)
        if a.json == "-":
            print(text_out)
        else:
            Path(a.json).write_text(text_out + "\n", encoding="utf-8")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
