#!/usr/bin/env python3
"""Run the benchmark dumbbell (bench/scenarios/dumbbell.toml) in ns-3 and in tcplab and compare
wall time and aggregate goodput.

    python3 -m pip install ns3          # optional: the ns-3 Python wheel (ns-3.44); not a CI dependency
    python3 bench/vs_ns3.py             # N = 1, 16, 64; 100 s simulated; 3 repetitions
    python3 bench/vs_ns3.py --quick     # 10 s simulated, N = 1 and 64, one repetition

Without an importable `ns3` module it prints why and exits with status 0 (nothing is compared).

Each ns-3 run is a fresh child process (this script with --child), so every run starts from the
same state; the ns-3 wall time is that of Simulator::Run() alone, measured in the child. Importing
the wheel (cppyy JIT, about 10 s) and building the topology from Python are reported apart and not
counted. The tcplab wall time is the whole tcplab.run() call in this process, as in bench.py;
a tcplab run lasts tens of milliseconds, shorter than the scheduler's hiccups on a shared
machine, so each repetition's figure is the median of --tcplab-runs (default 5) runs one after
the other (each a whole run; the results are identical), where ns-3's is one run of seconds.
ns-3 and tcplab runs alternate, never overlap, and the table shows medians over repetitions.

The ns-3 model, made to match the tcplab scenario:
  - PointToPointDumbbellHelper: N leaves each side on 100 Mb/s / 1 ms links, routers joined by a
    10 Mb/s / 20 ms link; global routing.
  - Traffic control: the default root queue disc (FqCoDel) that address assignment installs is
    removed from every device, so each PointToPointNetDevice's DropTail queue is the only queue:
    100 packets on the bottleneck devices, 100000 (in effect unlimited) on the access devices.
    As in tcplab, the packet being serialised is not in the queue.
  - TCP: TcpNewReno with TcpClassicRecovery (ns-3's default is PRR), SegmentSize 1448,
    InitialCwnd 10 (the default), DelAckCount 2 and DelAckTimeout 200 ms (the defaults),
    SACK off, timestamps off (tcplab has neither; a data packet is 1448 + 40 B in both, plus the
    2 B PPP header in ns-3), limited transmit off (tcplab has none), send and receive buffers
    4 MiB (window scaling on, the default) so that the window, not the buffer, limits a flow,
    MinRto 1 s and the other RTO defaults as they are.
  - Applications: BulkSend (MaxBytes 0 = unlimited, SendSize 1448) on s{i} to a PacketSink on r{i},
    all started at 0 s; Simulator::Stop at the scenario's duration.
  - Goodput: bytes received by the PacketSinks x 8 / duration (tcplab: bytes delivered in order
    x 8 / duration, summed over flows).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCENARIO = HERE / "scenarios" / "dumbbell.toml"
BOTTLENECK = "bottleneck:left->right"
# Published wall times of ns-3.44 for this scenario on this class of machine (1 and 64 flows).
PUBLISHED_NS3_S = {1: 3.4, 64: 11.0}
MARK = "VS_NS3_RESULT "

# C++ counters hooked to ns-3 trace sources (a Python callback per packet would dominate the run).
COUNTERS_CPP = r"""
#include <cstdint>
namespace tcplab_bench {
static uint64_t tc_drops = 0, retransmissions = 0, recoveries = 0, losses = 0;
void TcDrop(ns3::Ptr<const ns3::Packet>) { ++tc_drops; }
void Retx(ns3::Ptr<const ns3::Packet>, const ns3::TcpHeader&, const ns3::Address&, const ns3::Address&,
          ns3::Ptr<const ns3::TcpSocketBase>) { ++retransmissions; }
void State(ns3::TcpSocketState::TcpCongState_t, ns3::TcpSocketState::TcpCongState_t n) {
    if (n == ns3::TcpSocketState::CA_RECOVERY) ++recoveries;
    if (n == ns3::TcpSocketState::CA_LOSS) ++losses;
}
void HookSockets() {
    ns3::Config::ConnectWithoutContextFailSafe("/NodeList/*/$ns3::TcpL4Protocol/SocketList/*/Retransmission", ns3::MakeCallback(&Retx));
    ns3::Config::ConnectWithoutContextFailSafe("/NodeList/*/$ns3::TcpL4Protocol/SocketList/*/CongState", ns3::MakeCallback(&State));
}
void Hook(ns3::Ptr<ns3::Node> router) {
    router->GetObject<ns3::TrafficControlLayer>()->TraceConnectWithoutContext("TcDrop", ns3::MakeCallback(&TcDrop));
    // The BulkSend sockets exist once the applications have started (at 0 s).
    ns3::Simulator::Schedule(ns3::NanoSeconds(1), &HookSockets);
}
}
"""


def ns3_child(n: int, duration_s: float) -> dict:
    """Build and run the scenario in ns-3 (in this process); return the figures."""
    t0 = time.perf_counter()
    from ns import ns  # the ns3 wheel
    import cppyy

    t1 = time.perf_counter()
    cfg = ns.Config.SetDefault
    cfg("ns3::TcpL4Protocol::SocketType", ns.TypeIdValue(ns.TcpNewReno.GetTypeId()))
    cfg("ns3::TcpL4Protocol::RecoveryType", ns.TypeIdValue(ns.TcpClassicRecovery.GetTypeId()))
    cfg("ns3::TcpSocket::SegmentSize", ns.UintegerValue(1448))
    cfg("ns3::TcpSocket::InitialCwnd", ns.UintegerValue(10))
    cfg("ns3::TcpSocket::DelAckCount", ns.UintegerValue(2))
    cfg("ns3::TcpSocket::DelAckTimeout", ns.TimeValue(ns.MilliSeconds(200)))
    cfg("ns3::TcpSocket::SndBufSize", ns.UintegerValue(4 << 20))
    cfg("ns3::TcpSocket::RcvBufSize", ns.UintegerValue(4 << 20))
    cfg("ns3::TcpSocketBase::Sack", ns.BooleanValue(False))
    cfg("ns3::TcpSocketBase::Timestamp", ns.BooleanValue(False))
    cfg("ns3::TcpSocketBase::LimitedTransmit", ns.BooleanValue(False))

    access = ns.PointToPointHelper()
    access.SetDeviceAttribute("DataRate", ns.StringValue("100Mbps"))
    access.SetChannelAttribute("Delay", ns.StringValue("1ms"))
    access.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", ns.QueueSizeValue(ns.QueueSize("100000p")))
    bottleneck = ns.PointToPointHelper()
    bottleneck.SetDeviceAttribute("DataRate", ns.StringValue("10Mbps"))
    bottleneck.SetChannelAttribute("Delay", ns.StringValue("20ms"))
    bottleneck.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", ns.QueueSizeValue(ns.QueueSize("100p")))
    d = ns.PointToPointDumbbellHelper(n, access, n, access, bottleneck)
    d.InstallStack(ns.InternetStackHelper())
    d.AssignIpv4Addresses(
        ns.Ipv4AddressHelper(ns.Ipv4Address("10.1.0.0"), ns.Ipv4Mask("255.255.255.0")),
        ns.Ipv4AddressHelper(ns.Ipv4Address("10.2.0.0"), ns.Ipv4Mask("255.255.255.0")),
        ns.Ipv4AddressHelper(ns.Ipv4Address("10.3.0.0"), ns.Ipv4Mask("255.255.255.0")),
    )
    ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()

    # Remove every root queue disc: the device DropTail queues are then the only queues.
    tch = ns.TrafficControlHelper()
    for i in range(ns.NodeList.GetNNodes()):
        node = ns.NodeList.GetNode(i)
        tc = node.GetObject[ns.TrafficControlLayer]()
        for j in range(node.GetNDevices()):
            dev = node.GetDevice(j)
            if tc.GetRootQueueDiscOnDevice(dev):
                tch.Uninstall(dev)
                if tc.GetRootQueueDiscOnDevice(dev):
                    raise RuntimeError("could not remove the root queue disc")

    port = 50000
    sink_helper = ns.PacketSinkHelper("ns3::TcpSocketFactory", ns.InetSocketAddress(ns.Ipv4Address.GetAny(), port).ConvertTo())
    sinks = ns.ApplicationContainer()
    sources = ns.ApplicationContainer()
    for i in range(n):
        sinks.Add(sink_helper.Install(d.GetRight(i)))
        bulk = ns.BulkSendHelper("ns3::TcpSocketFactory", ns.InetSocketAddress(d.GetRightIpv4Address(i), port).ConvertTo())
        bulk.SetAttribute("MaxBytes", ns.UintegerValue(0))
        bulk.SetAttribute("SendSize", ns.UintegerValue(1448))
        sources.Add(bulk.Install(d.GetLeft(i)))
    sinks.Start(ns.Seconds(0))
    sources.Start(ns.Seconds(0))

    # The left router's device 0 is its end of the bottleneck (the helper installs it first).
    bdev = ns.DynamicCast[ns.PointToPointNetDevice](d.GetLeft().GetDevice(0))
    rate = ns.DataRateValue()
    if bdev:
        bdev.GetAttribute("DataRate", rate)
    if not bdev or rate.Get().GetBitRate() != 10_000_000:
        raise RuntimeError("the left router's device 0 is not the bottleneck")
    cppyy.cppdef(COUNTERS_CPP)
    counters = cppyy.gbl.tcplab_bench
    counters.Hook(d.GetLeft())
    ns.Simulator.Stop(ns.Seconds(duration_s))
    t2 = time.perf_counter()
    ns.Simulator.Run()
    t3 = time.perf_counter()

    rx = sum(int(ns.DynamicCast[ns.PacketSink](sinks.Get(i)).GetTotalRx()) for i in range(n))
    q = bdev.GetQueue()
    out = {
        "flows": n,
        "duration_s": duration_s,
        "import_s": t1 - t0,
        "setup_s": t2 - t1,
        "run_s": t3 - t2,
        "events": int(ns.Simulator.GetEventCount()),
        "goodput_bps": rx * 8 / duration_s,
        # Accepted into the device queue = sent, but for the few still queued at the end.
        "bottleneck_sent_pkts": int(q.GetTotalReceivedPackets()) - int(q.GetNPackets()),
        "bottleneck_dropped_pkts": int(counters.tc_drops) + int(q.GetTotalDroppedPackets()),
        "retransmits": int(counters.retransmissions),
        "fast_recoveries": int(counters.recoveries),
        "rto_episodes": int(counters.losses),
    }
    ns.Simulator.Destroy()
    return out


def run_ns3(n: int, duration_s: float) -> dict:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", str(n), "--duration", repr(duration_s)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    for line in p.stdout.splitlines():
        if line.startswith(MARK):
            return json.loads(line[len(MARK):])
    # cppyy prints harmless "Failed to materialize symbols" notes on import; show the rest.
    err = "\n".join(l for l in p.stderr.splitlines() if "materialize symbols" not in l)
    raise RuntimeError(f"the ns-3 child failed (status {p.returncode}):\n{err[-3000:]}")


def run_tcplab(tcplab, text: str, n: int, duration_s: float, runs: int = 1) -> dict:
    sets = [f"topology.pairs={n}", f"flows.0.count={n}", f'duration="{duration_s:g}s"']
    walls = []
    for _ in range(max(1, runs)):
        t0 = time.perf_counter()
        r = tcplab.run(text, seed=1, sets=sets)
        walls.append(time.perf_counter() - t0)
    wall = statistics.median(walls)
    b = r.links.set_index("link").loc[BOTTLENECK]
    c = r.connections
    return {
        "flows": n,
        "wall_s": wall,
        "events": int(r.meta["events"]),
        "goodput_bps": float(c["goodput_bps"].sum()),
        "bottleneck_sent_pkts": int(b["sent_pkts"]),
        "bottleneck_dropped_pkts": int(b["dropped_pkts"]),
        "retransmits": int(c["retransmits"].sum()),
        "fast_recoveries": int(c["fast_retransmits"].sum()),
        "timeouts": int(c["timeouts"].sum()),
    }


def markdown(rows: list[dict]) -> str:
    out = [
        "| N | ns-3 Run() s | (ns-3 setup s) | tcplab wall s | ns-3 / tcplab wall | events ns-3 / tcplab | ns-3 goodput Mb/s | tcplab goodput Mb/s | tcplab − ns-3 | "
        "bottleneck pkts ns-3 / tcplab | drops ns-3 / tcplab | retransmits ns-3 / tcplab | fast recoveries ns-3 / tcplab | RTO: ns-3 episodes / tcplab expiries |",
        "|" + "---|" * 14,
    ]
    for s in rows:
        a, b = s["ns3"], s["tcplab"]
        out.append(
            f"| {s['flows']} | {s['ns3_run_median_s']:.3f} | ({s['ns3_setup_median_s']:.2f}) | {s['tcplab_wall_median_s']:.4f} "
            f"| {s['ratio_median']:.0f}x | {a['events'] / 1e6:.2f} M / {b['events'] / 1e6:.2f} M | {a['goodput_bps'] / 1e6:.3f} | {b['goodput_bps'] / 1e6:.3f} | {100 * s['goodput_rel_diff']:+.1f} % "
            f"| {a['bottleneck_sent_pkts']:,} / {b['bottleneck_sent_pkts']:,} | {a['bottleneck_dropped_pkts']:,} / {b['bottleneck_dropped_pkts']:,} "
            f"| {a['retransmits']:,} / {b['retransmits']:,} | {a['fast_recoveries']} / {b['fast_recoveries']} | {a['rto_episodes']} / {b['timeouts']} |"
        )
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--flows", type=int, nargs="+", default=None, metavar="N", help="numbers of flows (default 1 16 64; 1 64 with --quick)")
    ap.add_argument("--reps", type=int, default=None, help="repetitions of each simulator per N (default 3; 1 with --quick)")
    ap.add_argument("--duration", type=float, default=None, metavar="S", help="simulated seconds (default 100; 10 with --quick)")
    ap.add_argument("--quick", action="store_true", help="10 s simulated, N = 1 and 64, one repetition")
    ap.add_argument("--tcplab-runs", type=int, default=5, metavar="K", help="tcplab runs per repetition, their median taken (default 5)")
    ap.add_argument("--json", metavar="PATH", help="also write runs and summary as JSON to PATH ('-' for stdout)")
    ap.add_argument("--child", type=int, metavar="N", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    duration = a.duration if a.duration is not None else (10.0 if a.quick else 100.0)

    if a.child is not None:
        print(MARK + json.dumps(ns3_child(a.child, duration)), flush=True)
        return 0

    if importlib.util.find_spec("ns") is None:
        print(
            "vs_ns3.py: the ns-3 Python module is not importable (`from ns import ns` fails), so there is "
            "nothing to compare.\nInstall the optional wheel with `python3 -m pip install ns3` and run again. "
            f"Published figures for this scenario: ns-3.44 needs about {PUBLISHED_NS3_S[1]} s (1 flow) to "
            f"{PUBLISHED_NS3_S[64]} s (64 flows) of wall time; see bench/README.md.",
            file=sys.stderr,
        )
        return 0
    try:
        import tcplab
    except ImportError as e:
        print(f"vs_ns3.py: cannot import tcplab ({e}); install it first: python3 -m pip install .", file=sys.stderr)
        return 2

    flows = a.flows or ([1, 64] if a.quick else [1, 16, 64])
    reps = a.reps if a.reps is not None else (1 if a.quick else 3)
    text = SCENARIO.read_text(encoding="utf-8")
    run_tcplab(tcplab, text, flows[0], duration)  # warm-up
    runs: dict[int, dict[str, list]] = {n: {"ns3": [], "tcplab": []} for n in flows}
    for rep in range(reps):
        for n in flows:
            try:
                runs[n]["ns3"].append(run_ns3(n, duration))
            except RuntimeError as e:
                if "No module named" in str(e) or "ImportError" in str(e):
                    print(f"vs_ns3.py: ns-3 could not be imported in the child process; nothing compared.\n{e}", file=sys.stderr)
                    return 0
                raise
            runs[n]["tcplab"].append(run_tcplab(tcplab, text, n, duration, a.tcplab_runs))
            print(f"rep {rep + 1}/{reps} N={n}: ns-3 Run() {runs[n]['ns3'][-1]['run_s']:.3f} s, tcplab {runs[n]['tcplab'][-1]['wall_s']:.4f} s", file=sys.stderr)

    rows = []
    for n in flows:
        ns3_runs, tl_runs = runs[n]["ns3"], runs[n]["tcplab"]
        ns3_run = statistics.median(r["run_s"] for r in ns3_runs)
        tl_wall = statistics.median(r["wall_s"] for r in tl_runs)
        ratio = statistics.median(x["run_s"] / y["wall_s"] for x, y in zip(ns3_runs, tl_runs))
        g3, gt = ns3_runs[0]["goodput_bps"], tl_runs[0]["goodput_bps"]
        rows.append(
            {
                "flows": n,
                "duration_s": duration,
                "reps": reps,
                "ns3_run_median_s": ns3_run,
                "ns3_setup_median_s": statistics.median(r["setup_s"] for r in ns3_runs),
                "ns3_import_median_s": statistics.median(r["import_s"] for r in ns3_runs),
                "tcplab_wall_median_s": tl_wall,
                "ratio_median": ratio,
                "goodput_rel_diff": (gt - g3) / g3 if g3 else float("nan"),
                "ns3": ns3_runs[0],
                "tcplab": tl_runs[0],
            }
        )

    print(f"tcplab {tcplab.__version__} vs ns-3 ({_ns3_version()}), {duration:g} s simulated, {reps} repetition(s), {os.cpu_count()} CPUs")
    print()
    print(markdown(rows))
    print()
    print(f"ns-3 / tcplab wall: median over repetitions of (ns-3 Simulator::Run() time / tcplab.run() time, the median of {a.tcplab_runs} runs).")
    print(f"ns-3 import (cppyy) took {statistics.median(r['ns3_import_median_s'] for r in rows):.1f} s per process, not counted.")
    if duration == 100.0:
        for s in rows:
            if s["flows"] in PUBLISHED_NS3_S:
                p = PUBLISHED_NS3_S[s["flows"]]
                print(f"N={s['flows']}: published ns-3.44 wall {p} s -> {p / s['tcplab_wall_median_s']:.0f}x tcplab's median.")
    if a.json:
        doc = {"duration_s": duration, "summary": rows, "runs": runs}
        t = json.dumps(doc, indent=2)
        if a.json == "-":
            print(t)
        else:
            Path(a.json).write_text(t + "\n", encoding="utf-8")
    return 0


def _ns3_version() -> str:
    try:
        from importlib.metadata import version

        return "ns3 wheel " + version("ns3")
    except Exception:  # noqa: BLE001 - only for the header line
        return "ns3 wheel, version unknown"


if __name__ == "__main__":
    sys.exit(main())
