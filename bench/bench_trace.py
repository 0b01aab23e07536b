"""Trace analyser benchmark: tcplab's analyser against tcptrace on the same capture.

    python3 bench/bench_trace.py [--reps 3] [--keep PATH]

Writes a capture of about 1.1 million packets from a simulation (bench/scenarios/trace_capture.toml:
16 NewReno flows, 100 Mb/s bottleneck, 0.1 % loss, captured on the bottleneck, headers only),
then times `tcplab.trace.report()` and `tcptrace -l -r -n` on it (file in the page cache; best of
--reps) and prints packets/s for each and the ratio, with the two tools' retransmission counts side
by side as a check that they analysed the same thing.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import tcplab


def run_in(scenario, sets, cwd):
    """`tcplab.run` in `cwd`: a scenario's capture path is relative to the current directory."""
    here = os.getcwd()
    os.chdir(cwd)
    try:
        return tcplab.run(scenario, sets=sets)
    finally:
        os.chdir(here)

HERE = Path(__file__).resolve().parent


def best(f, reps: int) -> tuple[float, object]:
    out, times = None, []
    for _ in range(reps):
        t0 = time.perf_counter()
        out = f()
        times.append(time.perf_counter() - t0)
    return min(times), out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--keep", type=Path, default=None, help="write the capture here and keep it")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="tcplab-bench-trace-")
    path = args.keep or Path(tmp) / "bench.pcap"
    try:
        t0 = time.perf_counter()
        r = run_in(HERE / "scenarios" / "trace_capture.toml", sets=[f'capture=[{{ path = "{path.name}", link = "bottleneck" }}]'], cwd=path.parent)
        sim_s = time.perf_counter() - t0
        size = path.stat().st_size
        with open(path, "rb") as f:  # into the page cache
            while f.read(1 << 22):
                pass
        t_ours, rep = best(lambda: tcplab.trace.report(path), args.reps)
        pkts = rep["reader"]["packets"]
        ours_rexmt = sum(c["a2b_rexmt_segs"] + c["b2a_rexmt_segs"] for c in rep["connections"])
        print(f"capture: {pkts} packets, {size / 1e6:.1f} MB, {len(rep['connections'])} connections "
              f"(simulated and written in {sim_s:.2f} s; simulator retransmissions {int(r.connections.retransmits.sum())})")
        print(f"tcplab.trace.report: {t_ours:.3f} s  {pkts / t_ours / 1e6:.2f} M packets/s  retransmitted segments {ours_rexmt}")
        if shutil.which("tcptrace") is None:
            print("tcptrace: not installed (apt-get install tcptrace); no comparison")
            return 0
        def tt():
            return subprocess.run(["tcptrace", "-l", "-r", "-n", str(path)], capture_output=True, text=True, check=True).stdout
        t_tt, out = best(tt, args.reps)
        tt_rexmt = sum(int(x) for x in re.findall(r"rexmt data pkts:\s+(\d+)", out))
        print(f"tcptrace -l -r -n:   {t_tt:.3f} s  {pkts / t_tt / 1e6:.2f} M packets/s  retransmitted segments {tt_rexmt}")
        print(f"ratio: tcplab is {t_tt / t_ours:.1f}x tcptrace's speed")
    finally:
        if args.keep is None:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
