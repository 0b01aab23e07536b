#!/usr/bin/env python3
"""Two tcplab builds against each other: the bench dumbbell run alternately in two Python
environments (say, the ordinary install and `scripts/build_pgo.sh`'s), wall times and whether
they give the same results.

    python3 bench/ab_builds.py VENV_A/bin/python VENV_B/bin/python
    python3 bench/ab_builds.py A B --flows 1 16 64 --reps 6 --runs 5

Each repetition starts one child per environment and N, in turn, A first in odd repetitions and
B first in even ones: the child imports tcplab, runs the scenario once to warm up, then --runs
times, and reports its median wall time and a digest of the connections table. The table shows,
per N, each build's median over repetitions, B's speed-up (the median of per-repetition ratios,
and the ratio of the best runs) and whether every run of both builds gave the same connections
table; the exit status is 1 where one did not. The scenario is
bench/scenarios/dumbbell.toml with vs_ns2.py's `ns2` profile and 100 s simulated.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCENARIO = HERE / "scenarios" / "dumbbell.toml"
NS2_SETS = ["tcp.profile=ns2", "tcp.delack_segments=2", "tcp.delack_timeout=200ms"]

#: What each child runs: argv is the scenario, N, runs, the simulated duration and the sets.
CHILD = """
import hashlib, json, statistics, sys, time
import tcplab
path, n, k, d = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
sets = json.loads(sys.argv[5]) + [f"topology.pairs={n}", f"flows.0.count={n}", f"duration={d}"]
tcplab.run(path, sets=sets)
walls = []
for _ in range(k):
    t = time.perf_counter()
    r = tcplab.run(path, sets=sets)
    walls.append(time.perf_counter() - t)
print(json.dumps({"wall": statistics.median(walls), "best": min(walls), "digest": hashlib.sha256(r.connections.to_csv().encode()).hexdigest(), "module": tcplab.__file__}))
"""


def interpreter(p: str) -> str:
    """An interpreter named on the command line, as a path that works from any directory (not
    resolved: a venv's python is a symlink whose own path says which environment it is)."""
    found = os.path.abspath(p) if os.sep in p else shutil.which(p)
    if not found or not os.access(found, os.X_OK):
        raise SystemExit(f"ab_builds.py: {p}: no such interpreter")
    return found


def child(python: str, n: int, runs: int, duration: str) -> dict:
    # From a neutral directory, so that the environment's installed tcplab is the one imported,
    # never a source tree on the path.
    out = subprocess.run([python, "-c", CHILD, str(SCENARIO), str(n), str(runs), duration, json.dumps(NS2_SETS)], capture_output=True, text=True, cwd="/", timeout=3600)
    if out.returncode != 0:
        raise SystemExit(f"ab_builds.py: {python} failed at N = {n}:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("a", metavar="PYTHON_A", help="the first environment's python (the base)")
    ap.add_argument("b", metavar="PYTHON_B", help="the second environment's python (the build measured against it)")
    ap.add_argument("--flows", type=int, nargs="+", default=[1, 16, 64], metavar="N")
    ap.add_argument("--reps", type=int, default=6, help="repetitions, A and B alternating (default 6)")
    ap.add_argument("--runs", type=int, default=5, help="runs per child, their median taken (default 5)")
    ap.add_argument("--duration", default="100s", help="simulated time (default 100s)")
    a = ap.parse_args(argv)
    if a.reps < 1 or a.runs < 1:
        ap.error("--reps and --runs are at least 1")
    pythons = [("a", interpreter(a.a)), ("b", interpreter(a.b))]
    res: dict = {}
    for rep in range(a.reps):
        for n in a.flows:
            for name, python in pythons if rep % 2 == 0 else pythons[::-1]:
                res.setdefault((n, name), []).append(child(python, n, a.runs, a.duration))
        print(f"repetition {rep + 1}/{a.reps} done", file=sys.stderr)
    mods = {name: res[(a.flows[0], name)][0]["module"] for name in ("a", "b")}
    if mods["a"] == mods["b"]:
        print(f"ab_builds.py: warning: both environments import the same tcplab ({mods['a']})", file=sys.stderr)
    print(f"A: {mods['a']}\nB: {mods['b']}\n")
    print("| N | A median ms | B median ms | B speed-up (median of pairs) | B speed-up (best runs) | same connections table |")
    print("|---|---|---|---|---|---|")
    differ = False
    for n in a.flows:
        wa = [x["wall"] for x in res[(n, "a")]]
        wb = [x["wall"] for x in res[(n, "b")]]
        same = len({x["digest"] for x in res[(n, "a")] + res[(n, "b")]}) == 1
        differ |= not same
        best = min(x["best"] for x in res[(n, "a")]) / min(x["best"] for x in res[(n, "b")])
        print(f"| {n} | {statistics.median(wa) * 1e3:.2f} | {statistics.median(wb) * 1e3:.2f} | {statistics.median(x / y for x, y in zip(wa, wb)):.3f} "
              f"| {best:.3f} | {'yes' if same else 'NO'} |")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
