#!/usr/bin/env python3
"""Run the benchmark dumbbell (bench/scenarios/dumbbell.toml) in ns-2.35 and in tcplab and compare
wall time and aggregate goodput.

    python3 bench/vs_ns2.py             # N = 1, 16, 64, 1024; 100 s simulated; 3 repetitions
    python3 bench/vs_ns2.py --quick     # 10 s simulated, N = 1 and 16, one repetition

Without `ns` (the Debian/Ubuntu package `ns2`) it prints how to install it and exits with status 0
(nothing is compared).

Both simulators run one TCP: the scenario with `tcp.profile = "ns2"` over its own knobs (NewReno,
MSS 1448, IW 10, delayed ACKs of 200 ms, an unlimited window, a handshake), since ns-2's agents
have ns-2's timers and RTO estimator; `tcplab ns2 export` writes the Tcl script (docs/ns2.md): the
same links (100 Mb/s, 1 ms access; 10 Mb/s, 20 ms bottleneck), the same queue (100 packets
waiting: DropTail queue-limit 101), the same MSS and IW, `Agent/TCP/Newreno` with
`Agent/TCPSink/DelAck`, FTP from 0 s. ns-2 writes no trace here. Two ns-2 wall times: its `run`
(`$ns run` to the end of the simulation, timed inside the script with `clock microseconds`: the
simulation alone, as ns-3's `Simulator::Run()` in vs_ns3.py) and the whole `ns` process (Tcl
start-up and building the topology included), measured from this script. tcplab's is the whole
tcplab.run() call, the median of --tcplab-runs runs one after the other (each a whole run; the
results are identical). ns-2 and tcplab runs alternate and never overlap; the table shows medians
over repetitions.

Goodput: ns-2's highest cumulative ACK of each agent x MSS x 8 / duration; tcplab's bytes
delivered in order x 8 / duration; summed over flows.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCENARIO = HERE / "scenarios" / "dumbbell.toml"
#: The scenario's own knobs, over the ns2 profile (what ns-2's agents can run).
NS2_SETS = ["tcp.profile=ns2", "tcp.delack_segments=2", "tcp.delack_timeout=200ms"]
MARK = "VS_NS2_ACK "
RUN_MARK = "VS_NS2_RUN_US "


def sets_for(n: int, duration: float) -> list:
    return NS2_SETS + [f"topology.pairs={n}", f"flows.0.count={n}", f"duration={duration:g}s"]


def ns2_run(n: int, duration: float, workdir: str) -> dict:
    from tcplab.ns2.script import export

    s = export(SCENARIO, sets=sets_for(n, duration), trace=False)
    # The export's `finish` (at the duration) prints ns-2's own run time and each sender's highest
    # ACK first, then does what it did.
    report = ("proc finish {} {\n    global tcp\n    puts \"" + RUN_MARK + "[expr {[clock microseconds] - $::vs_run_t0}]\"\n"
              "    foreach i [lsort -integer [array names tcp]] { puts \"" + MARK + "$i [$tcp($i) set ack_]\" }\n")
    assert s.tcl.count("proc finish {} {\n") == 1 and s.tcl.rstrip().endswith("$ns run"), "the exported script changed shape"
    tcl = s.tcl.replace("proc finish {} {\n", report)
    tcl = tcl.rstrip()[: -len("$ns run")] + "set ::vs_run_t0 [clock microseconds]\n$ns run\n"
    path = Path(workdir) / f"dumbbell{n}.tcl"
    path.write_text(tcl)
    t0 = time.perf_counter()
    out = subprocess.run([shutil.which("ns"), str(path)], capture_output=True, text=True, timeout=3600)
    wall = time.perf_counter() - t0
    if out.returncode != 0:
        raise RuntimeError(f"ns failed: {out.stderr[-500:]}")
    acks = [int(line.split()[2]) for line in out.stdout.splitlines() if line.startswith(MARK)]
    run_s = next(int(line.split()[1]) for line in out.stdout.splitlines() if line.startswith(RUN_MARK)) / 1e6
    mss = s.conns[0].mss
    # Packet 0 is the SYN: an ACK of packet a acknowledges a data packets.
    delivered = sum(max(0, a) for a in acks) * mss
    return {"wall_s": wall, "run_s": run_s, "goodput_bps": delivered * 8 / duration, "flows": len(acks)}


def tcplab_run(n: int, duration: float, runs: int) -> dict:
    import tcplab

    walls, r = [], None
    for _ in range(runs):
        t0 = time.perf_counter()
        r = tcplab.run(SCENARIO, sets=sets_for(n, duration))
        walls.append(time.perf_counter() - t0)
    c = r.connections
    return {"wall_s": statistics.median(walls), "goodput_bps": float(c["bytes_delivered"].sum()) * 8 / duration,
            "retransmits": int(c["retransmits"].sum())}


def main(argv: list | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--flows", type=int, nargs="+", default=None, metavar="N", help="numbers of flows (default 1 16 64 1024; 1 16 with --quick)")
    ap.add_argument("--reps", type=int, default=None, help="repetitions of each simulator per N (default 3; 1 with --quick)")
    ap.add_argument("--duration", type=float, default=None, metavar="S", help="simulated seconds (default 100; 10 with --quick)")
    ap.add_argument("--quick", action="store_true", help="10 s simulated, N = 1 and 16, one repetition")
    ap.add_argument("--tcplab-runs", type=int, default=5, metavar="K", help="tcplab runs per repetition, their median taken (default 5)")
    ap.add_argument("--json", metavar="PATH", help="also write runs and summary as JSON to PATH")
    a = ap.parse_args(argv)
    if shutil.which("ns") is None:
        print("vs_ns2.py: ns-2's `ns` is not installed (sudo apt-get install ns2); nothing compared.", file=sys.stderr)
        return 0
    flows = a.flows or ([1, 16] if a.quick else [1, 16, 64, 1024])
    reps = a.reps or (1 if a.quick else 3)
    duration = a.duration or (10.0 if a.quick else 100.0)
    runs: dict = {n: {"ns2": [], "tcplab": []} for n in flows}
    with tempfile.TemporaryDirectory(prefix="vs-ns2-") as work:
        for rep in range(reps):
            for n in flows:
                runs[n]["ns2"].append(ns2_run(n, duration, work))
                runs[n]["tcplab"].append(tcplab_run(n, duration, a.tcplab_runs))
                print(f"rep {rep + 1}/{reps} N={n}: ns-2 run {runs[n]['ns2'][-1]['run_s']:.3f} s (whole {runs[n]['ns2'][-1]['wall_s']:.3f} s), "
                      f"tcplab {runs[n]['tcplab'][-1]['wall_s']:.4f} s", file=sys.stderr)
    rows = []
    for n in flows:
        ns_w = [x["wall_s"] for x in runs[n]["ns2"]]
        ns_r = [x["run_s"] for x in runs[n]["ns2"]]
        tl_w = [x["wall_s"] for x in runs[n]["tcplab"]]
        rows.append({"flows": n, "ns2_run_median_s": statistics.median(ns_r), "ns2_wall_median_s": statistics.median(ns_w),
                     "tcplab_wall_median_s": statistics.median(tl_w),
                     "run_ratio_median": statistics.median(x / y for x, y in zip(ns_r, tl_w)),
                     "ratio_median": statistics.median(x / y for x, y in zip(ns_w, tl_w)),
                     "ns2_goodput_bps": runs[n]["ns2"][-1]["goodput_bps"], "tcplab_goodput_bps": runs[n]["tcplab"][-1]["goodput_bps"]})
    import tcplab

    print(f"tcplab {tcplab.__version__} vs ns-2.35, {duration:g} s simulated, {reps} repetition(s)")
    print()
    print("| N | ns-2 `run` s | ns-2 whole process s | tcplab wall s | ns-2 `run` / tcplab | ns-2 whole / tcplab | ns-2 goodput Mb/s | tcplab goodput Mb/s |")
    print("|---|---|---|---|---|---|---|---|")
    for s in rows:
        print(f"| {s['flows']} | {s['ns2_run_median_s']:.3f} | {s['ns2_wall_median_s']:.3f} | {s['tcplab_wall_median_s']:.4f} | {s['run_ratio_median']:.1f}x "
              f"| {s['ratio_median']:.1f}x | {s['ns2_goodput_bps'] / 1e6:.3f} | {s['tcplab_goodput_bps'] / 1e6:.3f} |")
    if a.json:
        Path(a.json).write_text(json.dumps({"runs": {str(k): v for k, v in runs.items()}, "summary": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
