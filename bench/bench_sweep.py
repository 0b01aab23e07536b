"""Per-run overhead of a sweep: 10,000 tiny runs (one 1000-byte segment, no handshake, 1 ms one
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
import tempfile
import time
from pathlib import Path

import tcplab
from tcplab import _core

TINY = {
    "name": "tiny",
    "topology": {"kind": "single_link", "rate": "10Mbps", "delay": "1ms"},
    "tcp": {"handshake": False, "fin": False},
    "flows": [{"name": "f", "bytes": 1000}],
}
TARGET_MS = 5.0  # the goal: a 10,000-run sweep of tiny runs adds under 5 ms per run


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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=10_000)
    ap.add_argument("--modes", default=None, help=f"comma-separated: serial, pool1, pool{cores()}, dask (default: all)")
    ap.add_argument("--json", default=None, help="also write the figures as JSON here")
    a = ap.parse_args()
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
