"""Sweeps. Two measurements:

`--scaling`: a sweep of 64 realistic runs (the bench dumbbell with 8 bulk flows through a
100 Mb/s bottleneck for 13 s simulated, about 60 ms of wall time a run; 8 queue sizes x 8
replicates) on 1 and on 2 workers, alternately, each into a fresh store: the wall time of the
`tcplab.sweep()` call in this process, and of a whole `tcplab sweep` command in a fresh process,
and the ratio 1 worker / 2 workers (the goal: at least 1.8). "Workers busy" is the time spent
inside the core's runs over workers x wall time: what the coordinator, start-up and shutdown
leave of the workers' time. Other load on the machine slows the runs themselves (in-core ms/run
grows) but not this share. "Bare processes" runs the same 64 runs in 1 or 2 processes that only
call the core: the ratio the machine itself gives at that moment, the ceiling of any sweep.

    python3 bench/bench_sweep.py --scaling              # 3 repetitions of each
    python3 bench/bench_sweep.py --scaling --reps 5 --json out.json
    python3 bench/bench_sweep.py --scaling --before DIR # also the command of another build, interleaved

`--before DIR`: DIR holds another build of the `tcplab` package (DIR/tcplab, e.g. an earlier
commit's python/tcplab with this build's compiled `_core` copied in); its whole `tcplab sweep`
command (run with PYTHONPATH=DIR) is measured in the same rounds, so that both builds' ratios come
from one session. Every command, on 1 worker as on 2, is a coordinator process and a local pool
of that many worker processes.

Default: per-run overhead of a sweep: 10,000 tiny runs (one 1000-byte segment, no handshake, 1 ms one
way: about 20 µs in the core), in this process, in a local pool of 1 worker and of every core, and
on a Dask LocalCluster, each into a fresh DuckDB store on disk.

    overhead per run = (sweep wall time − in-core simulation time / workers) / runs

The wall time is the whole `tcplab.sweep()` call: parsing and expanding the grid (one core
validation per point for the run keys), starting the executor, batching, moving the rows back,
DuckDB transactions, and reading the tidy tables back. The in-core time is the sum of the runs'
`wall_time_s` (the time inside `_core.run_scenario`), divided by the workers that ran in parallel.

    python3 bench/bench_sweep.py                 # 10,000 runs, every mode
    python3 bench/bench_sweep.py --runs 1000     # quicker
    python3 bench/bench_sweep.py --modes serial,pool1 --json out.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Optional

import tcplab
from tcplab import _core

TINY = {
    "name": "tiny",
    "topology": {"kind": "single_link", "rate": "10Mbps", "delay": "1ms"},
    "tcp": {"handshake": False, "fin": False},
    "flows": [{"name": "f", "bytes": 1000}],
}
TARGET_MS = 5.0  # the goal: a 10,000-run sweep of tiny runs adds under 5 ms per run

DUMBBELL = Path(__file__).resolve().parent / "scenarios" / "dumbbell.toml"
# The realistic sweep: bench/scenarios/dumbbell.toml with these overrides, and this sweep table.
REALISTIC_SETS = ["topology.pairs=8", "flows.0.count=8", 'topology.bottleneck_rate="100Mbps"', 'duration="13s"']
REALISTIC_SWEEP = """
[sweep]
name = "bench-scaling"
replicates = 8
axes."topology.queue" = [20, 40, 60, 80, 100, 150, 200, 300]
"""
TARGET_RATIO = 1.8  # the goal: 64 realistic runs at least 1.8x faster on 2 workers than on 1


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def tiny_sweep(runs: int) -> dict:
    """`runs` = points x 100 replicates; the points vary the delay (a distinct scenario each)."""
    replicates = 100 if runs >= 100 else runs
    points = max(1, runs // replicates)
    d = dict(TINY)
    d["sweep"] = {"name": "bench", "replicates": replicates, "axes": {"topology.delay": {"range": [1, points + 1]}}}
    d["sweep"]["axes"]["topology.delay"]["unit"] = "ms"
    return d


def measure(mode: str, runs: int, workdir: Path) -> dict:
    n = cores()
    kw = {
        "serial": dict(workers=0),
        "pool1": dict(workers=1),
        f"pool{n}": dict(workers=n),
        "dask": dict(dask="local", workers=n),
    }[mode]
    store = workdir / f"{mode}.duckdb"
    spec = tiny_sweep(runs)
    t0 = time.perf_counter()
    res = tcplab.sweep(spec, store=store, progress=False, **kw)
    wall = time.perf_counter() - t0
    assert len(res.runs) == runs and (res.runs["status"] == "ok").all(), res.failed.head()
    parallel = 1 if mode == "serial" else kw["workers"]
    sim = float(res.runs["wall_time_s"].sum())
    t1 = time.perf_counter()
    again = tcplab.sweep(spec, store=store, progress=False, **kw)
    rerun = time.perf_counter() - t1
    assert again.stats["skipped"] == runs
    return {
        "mode": mode,
        "workers": parallel,
        "runs": runs,
        "wall_s": wall,
        "runs_per_s": runs / wall,
        "core_ms_per_run": sim / runs * 1e3,
        "overhead_ms_per_run": (wall - sim / parallel) / runs * 1e3,
        "rerun_s": rerun,
        "lost_batches": res.stats.get("lost_batches", 0),
    }


def scaling_once(workers: int, how: str, workdir: Path, scenario: Path, before: Optional[str] = None) -> dict:
    """One sweep of the 64 realistic runs into a fresh store: `how` = "call" (tcplab.sweep() in
    this process), "command" (`tcplab sweep` in a fresh process) or "before" (the command of the
    build in the directory `before`)."""
    store = workdir / f"{how}{workers}.duckdb"
    store.unlink(missing_ok=True)
    load0 = os.getloadavg()[0]
    if how == "call":
        t0 = time.perf_counter()
        res = tcplab.sweep(scenario, store=store, workers=workers, sets=REALISTIC_SETS, progress=False)
        wall = time.perf_counter() - t0
        runs = res.runs
    else:
        cmd = [sys.executable, "-m", "tcplab.cli", "sweep", str(scenario), "--workers", str(workers), "--store", str(store), "-q"]
        for s in REALISTIC_SETS:
            cmd += ["--set", s]
        env = dict(os.environ)
        if how == "before":
            env["PYTHONPATH"] = os.pathsep.join(p for p in (before, env.get("PYTHONPATH")) if p)
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True, text=True, env=env)
        wall = time.perf_counter() - t0
        runs = tcplab.load(store).runs
    assert len(runs) == 64 and (runs["status"] == "ok").all(), runs
    return {"how": how, "workers": workers, "wall_s": wall, "in_core_s": float(runs["wall_time_s"].sum()), "load_before": load0}


BARE = r"""
import sys
from tcplab import _core
text = open(sys.argv[1], encoding="utf-8").read()
k, i = int(sys.argv[2]), int(sys.argv[3])
sets = sys.argv[4:]
queues = [20, 40, 60, 80, 100, 150, 200, 300]
for n in range(i, 64, k):
    _core.run_scenario(text, "toml", 1 + n % 8, sets + [f"topology.queue={queues[n // 8]}"])
"""


def bare_once(workers: int) -> dict:
    """The same 64 runs split over `workers` processes that only call the core (no coordinator,
    no store): what the machine gives two processes at that moment, the ceiling of any sweep."""
    load0 = os.getloadavg()[0]
    t0 = time.perf_counter()
    ps = [subprocess.Popen([sys.executable, "-c", BARE, str(DUMBBELL), str(workers), str(i), *REALISTIC_SETS]) for i in range(workers)]
    for p in ps:
        if p.wait() != 0:
            raise RuntimeError("a bare run failed")
    return {"how": "bare", "workers": workers, "wall_s": time.perf_counter() - t0, "in_core_s": float("nan"), "load_before": load0}


def scaling(reps: int, json_out, before: Optional[str] = None) -> None:
    workdir = Path(tempfile.mkdtemp(prefix="tcplab-bench-sweep-"))
    scenario = workdir / "scaling.toml"
    scenario.write_text(DUMBBELL.read_text(encoding="utf-8") + REALISTIC_SWEEP, encoding="utf-8")
    rows = []
    try:
        scaling_once(2, "call", workdir, scenario)  # warm-up: page cache, first imports
        for _ in range(reps):
            for w in (1, 2):
                rows.append(bare_once(w))
            for how in ("call", "command", *(["before"] if before else [])):
                for w in (1, 2):
                    rows.append(scaling_once(w, how, workdir, scenario, before))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print(f"tcplab {_core.__version__}, Python {platform.python_version()}, {cores()} cores, load average {os.getloadavg()}")
    print()
    print("| what | workers | wall s (median) | wall s (min) | in-core ms/run (median) | workers busy (median) | load average (1 min) |")
    print("|---|---|---|---|---|---|---|")
    summary = {}
    names = {"bare": "bare processes, no coordinator", "call": "tcplab.sweep() call", "command": "`tcplab sweep` command",
             "before": "`tcplab sweep` command, --before build"}
    hows = ("bare", "call", "command", *(["before"] if before else []))
    for how in hows:
        for w in (1, 2):
            rs = [r for r in rows if r["how"] == how and r["workers"] == w]
            walls = [r["wall_s"] for r in rs]
            summary[(how, w)] = (statistics.median(walls), min(walls))
            loads = [r["load_before"] for r in rs]
            if how == "bare":
                core, busy = "-", "-"
            else:
                core = f"{statistics.median(r['in_core_s'] for r in rs) / 64 * 1e3:.0f}"
                busy = f"{statistics.median(r['in_core_s'] / (w * r['wall_s']) for r in rs):.0%}"
            print(f"| {names[how]} | {w} | {statistics.median(walls):.2f} | {min(walls):.2f} | {core} | {busy} | {min(loads):.1f}–{max(loads):.1f} |")
    print()
    ceiling = summary[("bare", 1)][0] / summary[("bare", 2)][0]
    print(f"bare processes: 1 / 2 = {ceiling:.2f} (medians): what this machine gave two processes meanwhile")
    for how in hows[1:]:
        med = summary[(how, 1)][0] / summary[(how, 2)][0]
        best = summary[(how, 1)][1] / summary[(how, 2)][1]
        print(f"{names[how].replace('`', '')}: 1 worker / 2 workers = {med:.2f} (medians), {best:.2f} (minima), {med / ceiling:.0%} of the bare ratio; "
              f"target >= {TARGET_RATIO}: {'met' if med >= TARGET_RATIO else 'NOT met'}")
    if json_out:
        Path(json_out).write_text(json.dumps(rows, indent=2), encoding="utf-8")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=10_000)
    ap.add_argument("--modes", default=None, help=f"comma-separated: serial, pool1, pool{cores()}, dask (default: all)")
    ap.add_argument("--json", default=None, help="also write the figures as JSON here")
    ap.add_argument("--scaling", action="store_true", help="64 realistic runs on 1 and 2 workers instead (see above)")
    ap.add_argument("--reps", type=int, default=3, help="with --scaling: repetitions of each measurement")
    ap.add_argument("--before", default=None, metavar="DIR", help="with --scaling: also the command of the tcplab package in DIR/tcplab (see above)")
    a = ap.parse_args()
    if a.before and not (Path(a.before) / "tcplab" / "__init__.py").is_file():
        ap.error(f"--before {a.before}: no tcplab package in it ({Path(a.before) / 'tcplab'})")
    if a.scaling:
        scaling(a.reps, a.json, os.path.abspath(a.before) if a.before else None)
        return
    modes = a.modes.split(",") if a.modes else ["serial", "pool1", f"pool{cores()}", "dask"]
    workdir = Path(tempfile.mkdtemp(prefix="tcplab-bench-sweep-"))
    rows = []
    try:
        for m in modes:
            rows.append(measure(m, a.runs, workdir))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    print(f"tcplab {_core.__version__}, Python {platform.python_version()}, {cores()} cores, load average {load}")
    print()
    print("| executor | workers | runs | wall s | runs/s | in-core ms/run | overhead ms/run | rerun (all stored) s |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        name = {"serial": "serial (in process)", "dask": "Dask LocalCluster"}.get(r["mode"], "local pool")
        print(
            f"| {name} | {r['workers']} | {r['runs']:,} | {r['wall_s']:.2f} | {r['runs_per_s']:,.0f} | "
            f"{r['core_ms_per_run']:.3f} | {r['overhead_ms_per_run']:.3f} | {r['rerun_s']:.2f} |"
        )
    worst = max(r["overhead_ms_per_run"] for r in rows)
    print()
    print(f"largest overhead {worst:.3f} ms/run: target < {TARGET_MS} ms/run {'met' if worst < TARGET_MS else 'NOT met'}")
    if a.json:
        Path(a.json).write_text(json.dumps(rows, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
