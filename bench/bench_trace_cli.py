"""The `tcplab trace` command against `tcptrace`, whole commands timed at every size from 10^4
packets up: what a user waits for, start-up included.

    python3 bench/bench_trace_cli.py [--reps 5] [--sizes 10000,100000,1000000]

Writes the capture of bench/scenarios/trace_capture.toml (16 NewReno flows on a 100 Mb/s
bottleneck, about 1.1 million packets, headers only), cuts it into captures of the first N
records, and for each size times, interleaved and best of --reps (the file in the page cache):

    tcplab trace PATH            against  tcptrace -n PATH          (a line per connection)
    tcplab trace --flows PATH    against  tcptrace -l -r -n PATH    (every connection in full)

It also times `python -c pass` (the interpreter with this environment's site-packages) and
`tcplab --version` (the command's start-up alone), and prints the ratios, all from one run of the
script: the machine is shared, so only ratios measured together are compared.
"""

from __future__ import annotations

import argparse
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import tcplab
from bench_trace import run_in  # the scenario's capture path is relative to the working directory


HERE = Path(__file__).resolve().parent


def tcplab_command() -> list[str]:
    """The `tcplab` console script of this interpreter's environment."""
    exe = Path(sys.executable).with_name("tcplab")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "tcplab.cli"]


def prefix(src: Path, dst: Path, n: int) -> int:
    """Write the pcap header and the first `n` records of `src` (a classic little-endian pcap) to
    `dst`; returns the records written."""
    data = src.read_bytes()
    off, k = 24, 0
    while k < n and off + 16 <= len(data):
        caplen = struct.unpack_from("<I", data, off + 8)[0]
        off += 16 + caplen
        k += 1
    dst.write_bytes(data[:off])
    return k


def timed(cmd: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--sizes", default="10000,100000,300000,1000000")
    args = ap.parse_args()
    sizes = [int(x) for x in args.sizes.split(",")]
    tt = shutil.which("tcptrace")
    me = tcplab_command()
    tmp = Path(tempfile.mkdtemp(prefix="tcplab-bench-cli-"))
    try:
        full = tmp / "full.pcap"
        run_in(HERE / "scenarios" / "trace_capture.toml", sets=[f'capture=[{{ path = "{full.name}", link = "bottleneck" }}]'], cwd=full.parent)
        # Start-up: the interpreter alone (with this machine's site-packages), then tcplab's.
        py = min(timed([sys.executable, "-c", "pass"]) for _ in range(args.reps))
        start = min(timed(me + ["--version"]) for _ in range(args.reps))
        print(f"tcplab {tcplab.__version__}; start-up: python -c pass {py * 1e3:.0f} ms, `tcplab --version` "
              f"{start * 1e3:.0f} ms (tcplab's own {max(0.0, start - py) * 1e3:.0f} ms); "
              f"load average {os.getloadavg()[0]:.1f}; best of {args.reps}, interleaved")
        print(f"{'packets':>9}  {'tcplab trace':>12}  {'tcptrace -n':>11}  {'ratio':>6}  "
              f"{'trace --flows':>13}  {'tcptrace -l -r -n':>17}  {'ratio':>6}")
        for n in sizes:
            p = tmp / f"n{n}.pcap"
            got = prefix(full, p, n)
            with open(p, "rb") as f:  # into the page cache
                while f.read(1 << 22):
                    pass
            pairs = [(me + ["trace", str(p)], [tt, "-n", str(p)] if tt else None),
                     (me + ["trace", "--flows", str(p)], [tt, "-l", "-r", "-n", str(p)] if tt else None)]
            best = [[float("inf"), float("inf")] for _ in pairs]
            for _ in range(args.reps):
                for i, (ours, theirs) in enumerate(pairs):
                    best[i][0] = min(best[i][0], timed(ours))
                    if theirs:
                        best[i][1] = min(best[i][1], timed(theirs))
            cells = []
            for ours, theirs in best:
                cells += [f"{ours:.3f} s", f"{theirs:.3f} s" if tt else "-", f"{theirs / ours:.1f}x" if tt else "-"]
            print(f"{got:>9}  {cells[0]:>12}  {cells[1]:>11}  {cells[2]:>6}  {cells[3]:>13}  {cells[4]:>17}  {cells[5]:>6}")
        if not tt:
            print("tcptrace: not installed (apt-get install tcptrace); tcplab alone was timed")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
