#!/usr/bin/env python3
"""Whole commands against the call inside Python: what a fresh `tcplab run` costs beyond the run.

    python3 bench/bench_startup.py                # 64-flow bench dumbbell, 100 s simulated, 5 repetitions
    python3 bench/bench_startup.py --quick        # 10 s simulated, 3 repetitions

Two measurements, both from this one run of the script (the machine is shared: only figures
measured together are compared):

1. Start-up, on a tiny scenario (one 10 KB transfer over one link): `python -c pass` (the
   interpreter with this environment's site-packages), `tcplab --version` (the command line
   loaded), `tcplab validate FILE` and `tcplab run FILE`, whole processes, median of --reps.
2. The 64-flow bench dumbbell (bench/scenarios/dumbbell.toml with `topology.pairs=64`,
   `flows.0.count=64`): the whole process `tcplab run FILE --set ...` (start-up, the run, printing
   the tables) against the in-process time, the `tcplab.run(FILE, sets=...)` call timed in this
   process after a warm-up run, interleaved (process, call, process, ...), medians.

3. Against ns-2.35 (when `ns` is installed; otherwise the reason is printed and the part skipped):
   the 1-flow bench dumbbell over the `ns2` profile (the scenario of bench/vs_ns2.py, 100 s
   simulated unless --duration), as whole processes: `tcplab run FILE --set ...` against
   `ns FILE.tcl` (the script `tcplab ns2 export` writes, without a trace), interleaved, the
   median of the per-pair ratios.

Targets (issue "Scale"): a fresh `tcplab run` of a tiny scenario under 0.2 s of wall time, and the
whole-process run of the 64-flow bench within 3x of the in-process time. Issue "speed against
ns-2": the whole `tcplab run` of the 1-flow dumbbell at most 0.5x the whole `ns` process.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCENARIO = HERE / "scenarios" / "dumbbell.toml"
TINY = """name = "tiny"
duration = "1s"
[topology]
kind = "single_link"
rate = "10Mbps"
delay = "10ms"
[[flows]]
bytes = "10KB"
"""


def tcplab_command() -> list[str]:
    """The `tcplab` console script of this interpreter's environment."""
    exe = Path(sys.executable).with_name("tcplab")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "tcplab.cli"]


def timed(cmd: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=True)
    return time.perf_counter() - t0


def ns2_whole_process(cmd: list[str], reps: int, duration: float | None):
    """Whole `ns` against whole `tcplab run` on the 1-flow dumbbell of bench/vs_ns2.py, interleaved:
    (ns-2 walls, tcplab walls, per-pair ratios tcplab / ns-2); None (with the reason printed) without `ns`."""
    import shutil

    if shutil.which("ns") is None:
        print("\nns-2 comparison skipped: ns-2's `ns` is not installed (sudo apt-get install ns2).")
        return None
    from tcplab.ns2.script import export
    from vs_ns2 import sets_for

    sets = sets_for(1, duration if duration is not None else 100.0)
    with tempfile.TemporaryDirectory() as tmp:
        tcl = Path(tmp) / "dumbbell1.tcl"
        tcl.write_text(export(SCENARIO, sets=sets, trace=False).tcl, encoding="utf-8")
        ns_cmd = [shutil.which("ns"), str(tcl)]
        tl_cmd = [*cmd, "run", str(SCENARIO), *(x for s in sets for x in ("--set", s))]
        timed(ns_cmd), timed(tl_cmd)  # warm-up
        nw, tw = [], []
        for _ in range(max(reps, 5)):
            nw.append(timed(ns_cmd))
            tw.append(timed(tl_cmd))
    return nw, tw, [t / n for t, n in zip(tw, nw)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="10 s simulated, 3 repetitions")
    ap.add_argument("--reps", type=int, default=None, help="repetitions (default 5; 3 with --quick)")
    ap.add_argument("--flows", type=int, default=64, help="flows of the bench dumbbell (default 64)")
    ap.add_argument("--duration", type=float, default=None, metavar="S", help="simulated seconds (default the scenario's 100 s; 10 with --quick)")
    a = ap.parse_args(argv)
    reps = a.reps or (3 if a.quick else 5)
    duration = a.duration if a.duration is not None else (10.0 if a.quick else None)

    import tcplab

    cmd = tcplab_command()
    with tempfile.TemporaryDirectory() as tmp:
        tiny = Path(tmp) / "tiny.toml"
        tiny.write_text(TINY, encoding="utf-8")
        startup = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "tcplab --version": [*cmd, "--version"],
            "tcplab validate tiny.toml": [*cmd, "validate", str(tiny)],
            "tcplab run tiny.toml": [*cmd, "run", str(tiny)],
        }
        for c in startup.values():
            timed(c)  # warm-up: the page cache
        times: dict = {k: [] for k in startup}
        for _ in range(reps):
            for k, c in startup.items():
                times[k].append(timed(c))

    sets = [f"topology.pairs={a.flows}", f"flows.0.count={a.flows}"]
    if duration is not None:
        sets.append(f'duration="{duration:g}s"')
    whole_cmd = [*cmd, "run", str(SCENARIO), *(x for s in sets for x in ("--set", s))]

    def in_process() -> float:
        t0 = time.perf_counter()
        tcplab.run(SCENARIO, seed=1, sets=sets)
        return time.perf_counter() - t0

    in_process()  # warm-up
    whole, inproc = [], []
    for _ in range(reps):
        whole.append(timed(whole_cmd))
        inproc.append(in_process())

    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"tcplab {tcplab.__version__}, Python {sys.version.split()[0]}, medians of {reps} (min–max)")
    print()
    print("| command (tiny scenario) | wall s |")
    print("|---|---|")
    for k, v in times.items():
        print(f"| `{k}` | {med[k]:.3f} ({min(v):.3f}–{max(v):.3f}) |")
    sim = "100 s" if duration is None else f"{duration:g} s"
    w, i = statistics.median(whole), statistics.median(inproc)
    print()
    print(f"| bench dumbbell, {a.flows} flows, {sim} simulated | wall s |")
    print("|---|---|")
    print(f"| whole process `tcplab run` | {w:.3f} ({min(whole):.3f}–{max(whole):.3f}) |")
    print(f"| in-process `tcplab.run()` | {i:.3f} ({min(inproc):.3f}–{max(inproc):.3f}) |")
    print(f"| ratio | {w / i:.2f}x |")
    print()
    ns2 = ns2_whole_process(cmd, reps, duration)
    if ns2 is not None:
        nw, tw, ratios = ns2
        r = statistics.median(ratios)
        print()
        print(f"| bench dumbbell, 1 flow, ns2 profile, {sim} simulated | wall s |")
        print("|---|---|")
        print(f"| whole process `ns FILE.tcl` (ns-2.35) | {statistics.median(nw):.3f} ({min(nw):.3f}–{max(nw):.3f}) |")
        print(f"| whole process `tcplab run FILE` | {statistics.median(tw):.3f} ({min(tw):.3f}–{max(tw):.3f}) |")
        print(f"| tcplab / ns-2 (median of the {len(ratios)} interleaved pairs) | {r:.2f}x |")
        print()
        print(f"whole `tcplab run` at most 0.5x `ns`: {'met' if r <= 0.5 else 'NOT met'} ({r:.2f}x)")
    tiny_ok = med["tcplab run tiny.toml"] < 0.2
    print(f"tiny `tcplab run` under 0.2 s: {'met' if tiny_ok else 'NOT met'} ({med['tcplab run tiny.toml']:.3f} s); "
          f"whole process within 3x of in-process: {'met' if w <= 3 * i else 'NOT met'} ({w / i:.2f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
