#!/usr/bin/env python3
"""Benchmark UDP cross traffic: Ladha et al.'s topology (experiments/topologies/ladha04.toml) with
32 Pareto ON/OFF sources at an aggregate mean of 1 Mb/s in each direction across the 1 Mb/s core,
and its 20 KB TCP transfer at 10 s, for 1000 simulated seconds.

    python3 bench/bench_cross.py             # 1000 s simulated, 5 repetitions, seed 1
    python3 bench/bench_cross.py --quick     # smoke check: 100 s simulated, 1 repetition
    python3 bench/bench_cross.py --json out.json

Wall time is the whole `tcplab.run()` call (parsing, building, the run, the result frames), with
time.perf_counter(); the table shows the median and the fastest of the repetitions, events per
second at the median, and the UDP packets the sources sent. Everything but wall time is
deterministic (a fixed seed).
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCENARIO = HERE.parent / "experiments" / "topologies" / "ladha04.toml"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="100 s simulated, one repetition")
    ap.add_argument("--reps", type=int, default=None, help="repetitions (default 5; 1 with --quick)")
    ap.add_argument("--duration", type=float, default=None, help="simulated seconds (default 1000; 100 with --quick)")
    ap.add_argument("--aggregate", default="1Mbps", help="aggregate mean rate of each direction's 16 sources")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", type=Path, default=None, help="also write the runs as JSON")
    a = ap.parse_args()
    import tcplab

    duration = a.duration or (100.0 if a.quick else 1000.0)
    reps = a.reps or (1 if a.quick else 5)
    sets = [f'duration="{duration:g}s"', f'apps.0.aggregate_rate="{a.aggregate}"', f'apps.1.aggregate_rate="{a.aggregate}"']
    tcplab.run(SCENARIO, seed=a.seed, sets=sets + ['duration="10s"'])  # warm-up, untimed
    runs = []
    for _ in range(reps):
        t0 = time.perf_counter()
        r = tcplab.run(SCENARIO, seed=a.seed, sets=sets)
        runs.append({"wall_s": time.perf_counter() - t0, "events": r.meta["events"], "packets": r.meta["packets_created"],
                     "udp_pkts": int(r.udp["sent_pkts"].sum()), "udp_mean_bps": float(r.udp["mean_bps"].sum())})
    walls = sorted(x["wall_s"] for x in runs)
    med = statistics.median(walls)
    ev = runs[0]["events"]
    print(f"Ladha et al.'s topology, {a.aggregate} aggregate each way, {duration:g} s simulated, seed {a.seed}, {reps} repetitions "
          f"({platform.machine()}, Python {platform.python_version()})")
    print()
    print("| simulated s | events | packets | UDP packets sent | UDP mean (both ways) | wall median s | wall best s | events/s (median) | simulated s per wall s |")
    print("|---|---|---|---|---|---|---|---|---|")
    print(f"| {duration:g} | {ev:,} | {runs[0]['packets']:,} | {runs[0]['udp_pkts']:,} | {runs[0]['udp_mean_bps'] / 1e6:.3f} Mb/s "
          f"| {med:.3f} | {walls[0]:.3f} | {ev / med / 1e6:.2f} M | {duration / med:,.0f} |")
    if a.json:
        a.json.write_text(json.dumps({"duration_s": duration, "aggregate": a.aggregate, "seed": a.seed, "runs": runs}, indent=1))


if __name__ == "__main__":
    main()
