#!/usr/bin/env python3
"""The cost of the time-series hooks (docs/series.md) on the per-packet path: the simulator core
alone on the benchmark dumbbell, timed in one session for

  before   the core built at `--before` (default `main`), which has no series hooks;
  off      this core, no [[series]] (the default): each hook is one untaken branch;
  tcp      this core, [[series]] kind = "tcp" (a row per change of a connection's state);
  all      this core, every kind (tcp, segments, queue, drops);
  sampled  this core, tcp and queue sampled every 10 ms.

    python3 bench/bench_series.py                      # N = 16 flows, 100 s simulated, 15 rounds
    python3 bench/bench_series.py --quick              # N = 4, 10 s simulated, 3 rounds
    python3 bench/bench_series.py --before d9be3d1     # the build to compare with

The "before" core is built from a detached git worktree of `--before` in a temporary directory
(into target/bench-series-before: a full release build the first time), with this harness
(`crates/tcplab-core/examples/series_speed.rs`, which uses only the API both versions have)
copied in. Rounds interleave the variants (one run of each, in turn), so that noise on a shared
machine falls on all of them; the table gives the median and the spread (min-max) of the wall
times of the core's `run()` (parse and validation excluded), and the rows recorded (from the
Python package, one extra run).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SCENARIO = HERE / "scenarios" / "dumbbell.toml"
EXAMPLE = "series_speed"
SERIES = {
    "off": "",
    "tcp": '[[series]]\nkind = "tcp"\n',
    "all": "".join(f'[[series]]\nkind = "{k}"\n' for k in ("tcp", "segments", "queue", "drops")),
    "sampled": '[[series]]\nkind = "tcp"\ninterval = "10ms"\n[[series]]\nkind = "queue"\ninterval = "10ms"\n',
}


def build(crate_root: Path, target: Path) -> Path:
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "tcplab-core", "--example", EXAMPLE],
                   cwd=crate_root, check=True, env={**__import__("os").environ, "CARGO_TARGET_DIR": str(target)})
    return target / "release" / "examples" / EXAMPLE


def build_before(rev: str, tmp: Path) -> Path:
    wt = tmp / "before"
    subprocess.run(["git", "worktree", "add", "-q", "--detach", str(wt), rev], cwd=ROOT, check=True)
    ex = wt / "crates" / "tcplab-core" / "examples"
    ex.mkdir(exist_ok=True)
    shutil.copy(ROOT / "crates" / "tcplab-core" / "examples" / f"{EXAMPLE}.rs", ex / f"{EXAMPLE}.rs")
    # A target directory of its own that outlives the worktree, so that a second run builds
    # only what changed.
    return build(wt, ROOT / "target" / "bench-series-before")


def time_once(binary: Path, scenario: Path, sets: list) -> tuple[float, int]:
    args = [str(binary), str(scenario), "1"] + [a for s in sets for a in ("--set", s)]
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout.split()
    return float(out[0]), int(out[1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--before", default="main", help="git revision of the core without series (default: main)")
    ap.add_argument("--flows", type=int, default=None)
    ap.add_argument("--rounds", type=int, default=None)
    ap.add_argument("--quick", action="store_true", help="N = 4, 10 s simulated, 3 rounds")
    a = ap.parse_args()
    n = a.flows or (4 if a.quick else 16)
    rounds = a.rounds or (3 if a.quick else 15)
    sets = [f"topology.pairs={n}", f"flows.0.count={n}"] + (['duration="10s"'] if a.quick else [])
    rev = subprocess.run(["git", "rev-parse", "--short", a.before], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
    with tempfile.TemporaryDirectory(prefix="tcplab-bench-series-") as t:
        tmp = Path(t)
        print(f"building the core at {rev} (before) and at {head} (this tree) ...", file=sys.stderr)
        before = build_before(a.before, tmp)
        after = build(ROOT, ROOT / "target")
        scen = {}
        base = SCENARIO.read_text()
        for k, extra in SERIES.items():
            p = tmp / f"{k}.toml"
            p.write_text(base + "\n" + extra)
            scen[k] = p
        variants = [("before", before, scen["off"])] + [(k, after, scen[k]) for k in SERIES]
        times: dict = {k: [] for k, _, _ in variants}
        events: dict = {}
        for _ in range(rounds):
            for k, binary, sc in variants:
                w, ev = time_once(binary, sc, sets)
                times[k].append(w)
                events[k] = ev
        subprocess.run(["git", "worktree", "remove", "--force", str(tmp / "before")], cwd=ROOT, check=False)
    try:
        import tcplab

        rows = {}
        for k, extra in SERIES.items():
            if not extra:
                rows[k] = 0
                continue
            r = tcplab.run(base + "\n" + extra, seed=1, sets=sets)
            rows[k] = sum(len(r.series._tables[t]["time_ns"][1]) // 8 for t in r.series)
    except ImportError:
        rows = {}
    assert len(set(events.values())) == 1, f"the variants simulated different runs: {events}"
    ev = next(iter(events.values()))
    ref = statistics.median(times["before"])
    print(f"N = {n} flows, {'10' if a.quick else '100'} s simulated, {ev} events, {rounds} rounds; before = {rev}, this tree = {head}\n")
    print("| series | median wall (ms) | min-max (ms) | ns/event | vs before | rows recorded |")
    print("|---|---|---|---|---|---|")
    for k, ts in times.items():
        m = statistics.median(ts)
        print(f"| {k} | {m * 1e3:.1f} | {min(ts) * 1e3:.1f}-{max(ts) * 1e3:.1f} | {m / ev * 1e9:.1f} | {(m / ref - 1) * 100:+.1f} % | "
              f"{rows.get(k, '') if k != 'before' else 0} |")


if __name__ == "__main__":
    main()
