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

Targets (issue "Scale"): a fresh `tcplab run` of a tiny scenario under 0.2 s of wall time, and the
whole-process run of the 64-flow bench within 3x of the in-process time.
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
    tiny_ok = med["tcplab run tiny.toml"] < 0.2
    print(f"tiny `tcplab run` under 0.2 s: {'met' if tiny_ok else 'NOT met'} ({med['tcplab run tiny.toml']:.3f} s); "
          f"whole process within 3x of in-process: {'met' if w <= 3 * i else 'NOT met'} ({w / i:.2f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
