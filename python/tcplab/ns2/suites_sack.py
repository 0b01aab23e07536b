"""ns-2.35's `tcl/test/test-suite-sack.tcl` written as tcplab scenarios (our transcription of each
test's topology, agents and knobs; no ns-2 code), for `tcplab.ns2.suites` (docs/ns2.md).

The suite drops nothing by list: its losses are queue overflows (and RED's drops on net2), so
every test is run as its Tcl builds it and the two simulators drop what their queues drop. It
keeps ns-2.35's defaults besides `minrto_ 1` and the RED parameters it sets: Sack1 agents with
`syn_` true, `windowInit_` 2, `singledup_` 1, `rtxcur_init_` 3 s, `tcpTick_` 10 ms, and
`precisionReduce_` true (`TcpAgent::slowdown()`, tcp/tcp.cc: the fast retransmit's `cwnd_` is
the unrounded half window), tcplab's `precision_reduce`.
"""

from __future__ import annotations

import copy
from typing import Optional


def _links(*rows) -> list:
    return [{"name": f"{a}{b}", "a": a, "b": b, "rate": r, "delay": d, "queue": q} for a, b, r, d, q in rows]


def _dt(limit: int) -> int:
    """ns-2's DropTail `queue-limit N` holds N − 1 waiting (docs/ns2.md "Queue limits")."""
    return limit - 1


#: ns-2's default `queue-limit` 50 of a link the suite does not limit.
FEEDER = _dt(50)

#: The suite's RED (`Queue/RED set ...` at its top; the rest ns-2.35's defaults, ns-default.tcl):
#: thresh_ 5, maxthresh_ 15, q_weight_ 0.002, packets not bytes, linterm_ 10, wait_ and gentle_
#: true, mean_pktsize_ 500. ns-2's `queue-limit` N on RED is N waiting (REDQueue::enque()).
def _red(limit: int) -> dict:
    return {"kind": "red", "packets": limit,
            "red": {"min_th": 5, "max_th": 15, "w_q": 0.002, "max_p": 0.1, "wait": True, "gentle": True, "mean_pktsize": "500B"}}


#: The suite's topologies: name -> (nodes, links). The bottleneck's queue-limit holds both ways.
TOPOLOGIES = {
    "net0": (["s1", "s2", "r1", "k1"],
             _links(("s1", "r1", "8Mbps", "5ms", FEEDER), ("s2", "r1", "8Mbps", "5ms", FEEDER), ("r1", "k1", "800kbps", "100ms", _dt(6)))),
    "net1": (["s1", "s2", "r1", "k1"],
             _links(("s1", "r1", "10Mbps", "5ms", FEEDER), ("s2", "r1", "10Mbps", "5ms", FEEDER), ("r1", "k1", "1.5Mbps", "100ms", _dt(23)))),
    "net2": (["s1", "s2", "r1", "r2", "s3", "s4"],
             _links(("s1", "r1", "10Mbps", "2ms", FEEDER), ("s2", "r1", "10Mbps", "3ms", FEEDER), ("r1", "r2", "1.5Mbps", "20ms", None),
                    ("s3", "r2", "10Mbps", "4ms", FEEDER), ("s4", "r2", "10Mbps", "5ms", FEEDER))),
    "net4": (["s1", "s2", "r1", "k1"],
             _links(("s1", "r1", "10Mbps", "5ms", FEEDER), ("s2", "r1", "10Mbps", "5ms", FEEDER), ("r1", "k1", "1.5Mbps", "20ms", _dt(25)))),
}


def _topology(net: str, bottleneck_queue=None, rate=None, delay=None, s1_delay=None) -> dict:
    nodes, links = copy.deepcopy(TOPOLOGIES[net])
    if net == "net2":
        links[2]["queue"] = _red(bottleneck_queue if bottleneck_queue is not None else 25)
    elif bottleneck_queue is not None:
        links[2]["queue"] = bottleneck_queue
    if rate:
        links[2]["rate"] = rate
    if delay:
        links[2]["delay"] = delay
    if s1_delay:
        links[0]["delay"] = s1_delay
    return {"kind": "custom", "nodes": nodes, "links": links}


def _tcp(**kw) -> dict:
    """The suite's agents: Agent/TCP/Sack1 with TCPSink/Sack1, ns-2.35's defaults and minrto_ 1."""
    tcp = {"profile": "ns2", "preset": "sack1", "handshake": True, "syn_options": 0, "rto_min": "1s",
           "limited_transmit": True, "limited_transmit_send_one": True,   # singledup_ 1
           "precision_reduce": True,                                      # precisionReduce_ true
           "grow_when_not_cwnd_limited": True}                            # opencwnd() on every new ACK
    tcp.update(kw)
    return tcp


def _flow(src: str, dst: str, window: int, start: float, size: Optional[int] = None, **tcp) -> dict:
    f = {"name": f"tcp{src}", "from": src, "to": dst, "start": f"{start:g}s",
         "bytes": "unlimited" if size is None else f"{size * 1000}B"}
    own = {"rwnd": f"{window * 1000}B", **tcp}
    f["tcp"] = own
    return f


def _scenario(name: str, topo: dict, flows: list, stop: float, **tcp) -> dict:
    return {"name": f"sack/{name}", "topology": topo, "tcp": _tcp(**tcp), "flows": flows, "duration": f"{stop:g}s"}


def _tests() -> list:
    """(name, scenario or None, reason) for each test of the suite, in its order."""
    out = []
    # sack1: net0, window_ 14, FTP from 1 s to 5 s. sack1z: the same from 0 s with maxburst_ 4.
    out.append(("sack1", _scenario("sack1", _topology("net0"), [_flow("s1", "k1", 14, 1.0)], 5.0), ""))
    out.append(("sack1z", _scenario("sack1z", _topology("net0"), [_flow("s1", "k1", 14, 0.0)], 5.0, max_burst=4), ""))
    # sack1a / sack1aa: window_ 20, from 0 s (sack1aa with maxburst_ 4).
    out.append(("sack1a", _scenario("sack1a", _topology("net0"), [_flow("s1", "k1", 20, 0.0)], 5.0), ""))
    out.append(("sack1aa", _scenario("sack1aa", _topology("net0"), [_flow("s1", "k1", 20, 0.0)], 5.0, max_burst=4), ""))
    # sack1b / sack1c: window_ 26 / 27, from 0 s.
    out.append(("sack1b", _scenario("sack1b", _topology("net0"), [_flow("s1", "k1", 26, 0.0)], 5.0), ""))
    out.append(("sack1c", _scenario("sack1c", _topology("net0"), [_flow("s1", "k1", 27, 0.0)], 5.0), ""))
    # sack3: queue-limit 8 both ways; tcp1 (fid 0) s1 -> k1 window_ 100 from 1 s, tcp2 (fid 1)
    # s2 -> k1 window_ 16 from 0.5 s, both bugFix_ false; to 4 s. Written in the order they
    # start, as tcplab numbers its connections (nothing is dropped by fid here).
    out.append(("sack3", _scenario("sack3", _topology("net0", bottleneck_queue=_dt(8)),
                                   [_flow("s2", "k1", 16, 0.5, recover_guard=False), _flow("s1", "k1", 100, 1.0, recover_guard=False)], 4.0), ""))
    # sack5 / sack5a: net1 with s1 -- r1 at 3 ms; tcp1 window_ 50 from 1 s, tcp2 window_ 50
    # `produce 100` (100 packets) at 1.75 s, bugFix_ false; to 6 s (sack5a: maxburst_ 4).
    for name, burst in (("sack5", 0), ("sack5a", 4)):
        out.append((name, _scenario(name, _topology("net1", s1_delay="3ms"),
                                    [_flow("s1", "k1", 50, 1.0, recover_guard=False), _flow("s2", "k1", 50, 1.75, size=100, recover_guard=False)],
                                    6.0, max_burst=burst), ""))
    # sackB2: windowInit_ 1; queue-limit 9 on r1 -> k1 only (k1 -> r1 keeps 6); tcp1 window_ 50,
    # tcp2 window_ 20, both from 1 s; to 8 s.
    topo = _topology("net0", bottleneck_queue=_dt(9))
    topo["links"][2]["reverse_queue"] = _dt(6)
    out.append(("sackB2", _scenario("sackB2", topo, [_flow("s1", "k1", 50, 1.0), _flow("s2", "k1", 20, 1.0)], 8.0, initial_window=1), ""))
    # sackB4 / sackB4a: net2, RED bottleneck r1 -> r2 with queue-limit 29 (r2 -> r1 keeps 25);
    # window_ 40 from 0 s to 2 s (sackB4a: maxburst_ 4).
    for name, burst in (("sackB4", 0), ("sackB4a", 4)):
        topo = _topology("net2", bottleneck_queue=29)
        topo["links"][2]["reverse_queue"] = _red(25)
        out.append((name, _scenario(name, topo, [_flow("s1", "r2", 40, 0.0)], 2.0, max_burst=burst), ""))
    delayed = "an ErrorModel with delay_pkt_ delays packets 7-10 on r1 -> r2 (flows[i].delays, which the export refuses)"
    out.append(("FalsePipe", None, delayed))
    out.append(("FalsePipe1", None, delayed + "; and packet 7 dropped"))
    # sack_dupacks: net4, window_ 200, from 0.1 s to 3 s; sack_dupacks1: numdupacksFrac_ 4.
    out.append(("sack_dupacks", _scenario("sack_dupacks", _topology("net4"), [_flow("s1", "k1", 200, 0.1)], 3.0), ""))
    # sack_finiteflow: r1 -- k1 made again at 100 Mb/s, 5 ms, queue-limit 4; 21 packets from r1
    # at 0.01 s; to 3 s.
    out.append(("sack_finiteflow", _scenario("sack_finiteflow", _topology("net4", bottleneck_queue=_dt(4), rate="100Mbps", delay="5ms"),
                                             [_flow("r1", "k1", 200, 0.01, size=21)], 3.0), ""))
    out.append(("sack_dupacks1", _scenario("sack_dupacks1", _topology("net4"), [_flow("s1", "k1", 200, 0.1)], 3.0, dupthresh_frac=4), ""))
    return out


def tests() -> list:
    """The tests of test-suite-sack.tcl: (name, scenario or None, why not expressible)."""
    return _tests()
