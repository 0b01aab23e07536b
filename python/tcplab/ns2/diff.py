"""Differential runs: generated small scenarios in the subset ns-2 expresses, with deterministic
drops, run in tcplab and in ns-2 and compared packet by packet (docs/ns2.md).

    python -m tcplab.ns2.diff --n 250            # the counts of docs/ns2.md
    python -m tcplab.ns2.diff --n 20 --show      # each case's first divergence

Each case: a single link or three nodes (sender, router, receiver), one of the `tahoe`, `reno`,
`newreno`, `sack1`, `fack` presets over the `ns2` profile, IW 1-4, delayed ACKs on or off, 0-4
chosen data segments dropped, a 30-segment transfer, sometimes a queue small enough to overflow.
The agents start with ns-2.35's default SYN (`syn_`, tcplab's `handshake = true` with
`syn_options = 0`, ns-2's packet 0 being 40 bytes); `--profile-as-is` keeps the profile's own
start (no handshake) instead.
"""

from __future__ import annotations

import argparse
import random
import sys
from collections import Counter
from typing import Optional

VARIANTS = ("tahoe", "reno", "newreno", "sack1", "fack")
SEGMENTS = 30


def case(i: int, seed: int = 1, as_is: bool = False) -> dict:
    """The i-th generated scenario (a dict), a pure function of (i, seed)."""
    rng = random.Random(seed * 1_000_003 + i)
    variant = VARIANTS[i % len(VARIANTS)]
    three = rng.random() < 0.5
    overflow = rng.random() < 0.25
    queue = rng.choice((4, 6, 8)) if overflow else 30
    if three:
        topo = {"kind": "custom", "nodes": ["sender", "router", "receiver"], "links": [
            {"name": "access", "a": "sender", "b": "router", "rate": "10Mbps", "delay": "1ms", "queue": 100},
            {"name": "bottleneck", "a": "router", "b": "receiver", "rate": rng.choice(("800kbps", "1500kbps")),
             "delay": rng.choice(("10ms", "40ms")), "queue": queue}]}
    else:
        topo = {"kind": "single_link", "rate": rng.choice(("1500kbps", "10Mbps")), "delay": rng.choice(("10ms", "35ms")), "queue": queue}
    ndrops = rng.randint(0, 4)
    segs = sorted(rng.sample(range(1, 21), ndrops))
    tcp = {"profile": "ns2", "preset": variant, "initial_window": rng.randint(1, 4), "delayed_ack": rng.random() < 0.5}
    if not as_is:
        tcp.update({"handshake": True, "syn_options": 0})
    return {"name": f"ns2diff-{i}", "topology": topo, "tcp": tcp,
            "flows": [{"name": "bulk", **({"from": "sender", "to": "receiver"} if three else {}), "bytes": f"{SEGMENTS * 1000}B", "drops": [{"kind": "data", "segment": k} for k in segs]}]}


#: The classes of first divergence, each with the ns-2 function behind it (docs/ns2.md).
CLASSES = {
    "identical": "packet-identical",
    "no SYN": "without syn_, TcpAgent::output() sends packet 0 without its header (tcp/tcp.cc), where tcplab's first "
              "segment carries one (the export writes delay_growth_ false and the DelAck sink's SYN_immediate_ack_ false, "
              "as tcplab's sender and receiver behave)",
    "Fack initial window": "FackTcpAgent::recv_newack_helper() opens cwnd_ on the SYN's ACK, without TcpAgent::recv()'s reset "
                           "to windowInit_: data starts at cwnd 2 whatever windowInit_ (tcp/tcp-fack.cc; SackRHTcpAgent::recv() "
                           "alike, tcp/tcp-sack-rh.cc)",
    "SACK option size": "the Sack1 sink adds 8 bytes per SACK block (Sacker::append_ack(), tcp/tcp-sink.cc); tcplab's option "
                        "is 4 + 8n bytes (kind, length, two NOPs): each SACK-carrying ACK arrives 32 bits' time later",
    "DelAck duplicate": "the DelAck sink delays the ACK of a retransmitted copy of its highest in-order packet, taking it "
                        "for an in-order arrival (DelAckSink::recv(), tcp/tcp-sink.cc); tcplab acknowledges a duplicate at once",
    "timeout in recovery": "RenoTcpAgent::timeout() (and NewReno's, inherited) zeroes dupwnd_ before TcpAgent::timeout() halves "
                           "the window: ssthresh is half the uninflated cwnd_ (tcp/tcp-reno.cc); tcplab halves the inflated window",
    "FullTcp handshake ACK": "FullTcpAgent::recv() in SYN_SENT sets TF_ACKNOW on a SYN-ACK without data: the handshake's ACK "
                             "leaves on its own before the first data segment (tcp/tcp-full.cc); tcplab's first data segment carries it",
    "NewReno recovery burst": "in fast recovery (dupacks_ >= numdupacks_, newreno_changes_ 0) NewRenoTcpAgent::recv() sends with "
                              "send_much(0, 0, 2): at most 2 packets per ACK besides a partial ACK's retransmission "
                              "(tcp/tcp-newreno.cc); tcplab sends all its window allows",
    "small-window halving": "slowdown() floors ssthresh_ at 2 but sets cwnd_ to half the window unfloored: from a window of 2 "
                            "or 3, cwnd_ 1, so the Reno and NewReno recovery window is 1 + 3 duplicate ACKs (tcp/tcp.cc); tcplab's is "
                            "ssthresh + 3 = 5 and sends one more packet",
    "microsecond rounding": "the same packets at instants one microsecond apart: tcplab's link rounds each transmission time "
                            "up to a whole nanosecond (5 546 667 ns for 1040 B at 1.5 Mb/s, 5 546 666.7 in ns-2's double) and the "
                            "nanoseconds a busy link accumulates carry an instant over the half microsecond where both traces round",
    "same-instant order": "ns-2's clock is a double: a packet arriving as a link finishes sending is enqueued before or after "
                          "the link takes its next packet as the two floating-point times round (Scheduler, common/scheduler.cc); "
                          "tcplab's integer clock makes them simultaneous and orders them by scheduling",
    "unclassified": "no rule above explains it (printed with --show)",
}


def _later(e: tuple, others: list, within_us: int = 1000) -> bool:
    """Whether `others` holds the same event up to `within_us` later."""
    return any(o[1:] == e[1:] and e[0] < o[0] <= e[0] + within_us for o in others)


def classify(sc: dict, cmp) -> str:
    """The named cause of a difference (a key of CLASSES), from the scenario and the first
    divergence. "unclassified" when no rule applies."""
    if cmp.identical:
        return "identical"
    tcp = sc["tcp"]
    t, a, b = cmp.divergence
    if b is not None and a is None and b[1] == 0 and b[3] == "a2b" and b[5] == 0 and not b[6] and b[7] == 1:
        return "FullTcp handshake ACK"
    if not tcp.get("handshake") and tcp.get("use_headers", True):
        # With use_headers off every data packet leaves without its header, packet 0 too.
        return "no SYN"
    first_data = min((e[0] for e in cmp.events_ns2 if e[1] == 0 and e[3] == "a2b" and e[5] > 0), default=None)
    if tcp["preset"] in ("fack", "sack-rh") and tcp.get("initial_window", 1) != 2 and first_data is not None and t <= first_data:
        return "Fack initial window"
    if (a is None) != (b is None):
        e, others = (a, cmp.events_ns2) if b is None else (b, cmp.events_tcplab)
        if any(o[1:] == e[1:] and abs(o[0] - e[0]) == 1 for o in others):
            return "microsecond rounding"
    if tcp["preset"] in ("sack1", "fack") and a is None and b is not None and _later(b, cmp.events_tcplab):
        return "SACK option size"
    if tcp.get("delayed_ack") and b is None and a is not None and a[1] == 0 and a[3] == "b2a":
        acked = max((e[7] for e in cmp.events_tcplab if e[0] < t and e[1] == 0 and e[3] == "b2a"), default=-1)
        if any(e[0] == t and e[1] == 1 and e[3] == "a2b" and e[5] > 0 and e[4] + e[5] <= acked for e in cmp.events_tcplab):
            return "DelAck duplicate"
    lost_rexmit = any(max(d.get("transmissions", [1])) > 1 for f in sc["flows"] for d in f.get("drops", []))
    if tcp["preset"] in ("reno", "newreno") and lost_rexmit and b is None and a is not None and a[1] == 0 and a[3] == "a2b":
        return "timeout in recovery"
    if (a is None) != (b is None) and (a or b)[1] == 2:
        return "same-instant order"
    return "unclassified"


def main(argv: Optional[list] = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tcplab.ns2.diff", description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=50, help="cases (default 50)")
    ap.add_argument("--seed", type=int, default=1, help="the generator's seed (default 1)")
    ap.add_argument("--profile-as-is", action="store_true", help="keep the ns2 profile's start (no handshake)")
    ap.add_argument("--show", action="store_true", help="print each differing case's first divergence")
    args = ap.parse_args(argv)
    from .pair import compare, describe
    from .runner import Ns2NotFound

    ident, core = Counter(), Counter()
    total = Counter()
    classes = Counter()
    try:
        for i in range(args.n):
            sc = case(i, args.seed, args.profile_as_is)
            v = sc["tcp"]["preset"]
            c = compare(sc)
            total[v] += 1
            ident[v] += c.identical
            core[v] += c.core
            cl = classify(sc, c)
            classes[cl] += 1
            if args.show and not c.identical:
                t, a, b = c.divergence
                print(f"case {i} ({v}, IW {sc['tcp']['initial_window']}, delack {sc['tcp']['delayed_ack']}, "
                      f"drops {[d['segment'] for d in sc['flows'][0]['drops']]}, {sc['topology']['kind']}): {cl}; core {'yes' if c.core else 'no'}")
                print(f"    at {t / 1e6:.6f} s only tcplab: {describe(a)}\n    at {t / 1e6:.6f} s only ns-2:   {describe(b)}")
    except Ns2NotFound as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    n = sum(total.values())
    print(f"{n} cases (seed {args.seed}{', profile as is' if args.profile_as_is else ''}): "
          f"{sum(ident.values())} packet-identical, {sum(core.values())} agreeing at the core")
    for v in VARIANTS:
        if total[v]:
            print(f"  {v:<8} {ident[v]:>3}/{total[v]} identical, {core[v]:>3}/{total[v]} core")
    print("first-divergence classes:")
    for cl, k in classes.most_common():
        print(f"  {cl}: {k}  ({CLASSES[cl]})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
