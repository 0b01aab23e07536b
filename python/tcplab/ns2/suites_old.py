"""ns-2.35's older validation suites, `test-suite-rfc2581.tcl`, `test-suite-LimTransmit.tcl`,
`test-suite-simple.tcl` and `test-suite-tcp.tcl`, as tcplab scenarios (our transcription of each
test's topology, agents, knobs and drops; no ns-2 code), run by `tcplab.ns2.suites` like the
others (docs/ns2.md).

All four set `Agent/TCP useHeaders_ false`: a data packet is `packetSize_` bytes on the wire
(`TcpAgent::output()`, tcp/tcp.cc), tcplab's `use_headers = false`; and ns-2's RTO rule before
RFC 2988 (`rfc2988_ false`, `rtt_timeout()` and `rtt_backoff()`), tcplab's `ns2_rfc2988 =
false` (`simple`, `LimTransmit`, `rfc2581`; `tcp` keeps ns-2.35's `rfc2988_` true). Their
`updated_rttvar_ false` is read by no C++ code of ns-2.35. A test that needs something else
tcplab or its export lacks is listed with the reason.
"""

from __future__ import annotations

import copy
import functools

# tcplab.ns2.suites registers this module's suites (`register`) and hands it its SuiteTest record
# and drop-position search, so that the import runs one way (tests/test_layering.py).

#: ns-2's default DropTail `queue-limit` 50: 49 waiting (docs/ns2.md "Queue limits").
_DT50 = 49

#: `create-connection`'s agent types: the tcplab preset.
_AGENTS = {"Tahoe": "tahoe", "Reno": "reno", "Newreno": "newreno", "Sack1": "sack1"}


def _net4(delay: str) -> dict:
    """Topology/net4: s1, s2 -- r1 at 8 Mb/s, 0 ms; r1 -- k1 at 800 kb/s, `delay`, `queue-limit`
    8 both ways (7 waiting); the feeders keep ns-2's `queue-limit` 50. rfc2581's net4
    (`topologies.tcl`) has a 10 ms bottleneck, LimTransmit's own one 100 ms. The suites' error
    module sits on r1 -> k1; the export puts it at the flow's first link, s1 -> r1, which counts
    the same packets (only fid 1 crosses it)."""
    links = [("s1", "r1", "8Mbps", "0ms", _DT50), ("s2", "r1", "8Mbps", "0ms", _DT50), ("r1", "k1", "800kbps", delay, 7)]
    return {"kind": "custom", "nodes": ["s1", "s2", "r1", "k1"],
            "links": [{"name": f"{a}{b}", "a": a, "b": b, "rate": r, "delay": d, "queue": q} for a, b, r, d, q in links]}


def _old_tcp(k, agent: str, tick: str, rto_min: str, *, syn: bool, iw: int, lt: bool, bugfix: bool, delack: str,
             fill_immediate: bool) -> dict:
    """ns-2.35's defaults (tcl/lib/ns-default.tcl) as tcplab knobs, with what these suites set at
    their top: `useHeaders_` false, `rfc2988_` false, `precisionReduce_` false (the `ns2`
    profile's), `rtxcur_init_` 6, `tcpTick_` `tick`, `minrto_` `rto_min`; a DelAck sink."""
    preset = _AGENTS[agent]
    tcp = {
        "profile": "ns2", "preset": preset, "mss": "1000B", "initial_window": iw, "rwnd": f"{28 * 1000}B",   # window_ 28
        # syn_ with delay_growth_ (both true or both false in these suites); a SYN of 40 bytes.
        "handshake": syn, "syn_options": 0,
        "use_headers": False,                                                 # useHeaders_ false
        "ns2_rfc2988": False,                                                 # rfc2988_ false
        "rto_initial": "6s", "rto_min": rto_min, "rto_max": "60s",            # maxrto_ 60 (ns-2.35)
        "timer_tick": tick, "clock_granularity": tick,                        # tcpTick_
        "limited_transmit": lt, "limited_transmit_send_one": lt,              # singledup_
        "restart_after_idle": True,                                           # slow_start_restart_ true
        "recover_guard": bugfix,                                              # bugFix_
        "delayed_ack": True, "delack_timeout": delack,                        # TCPSink/DelAck interval_
        "delack_fill_immediate": fill_immediate,                              # RFC2581_immediate_ack_
    }
    if preset == "newreno":
        # ns-2.35's newreno_changes1_ 1, partial_window_deflation_ 1, exit_recovery_fix_ 0.
        tcp.update({"newreno_recover_guard": bugfix, "slow_but_steady": False, "partial_window_deflation": True,
                    "exit_recovery_fix": False, **k.NEWRENO_AGENT})
    if preset == "sack1":
        tcp["sack_blocks"] = 3                                                # TCPSink/Sack1 maxSackBlocks_ 3
    return tcp


def _net4_test(k, suite: str, name: str, delay: str, tcp: dict, packets: int, start: float, stop: float, positions: list):
    """An FTP from s1 to k1 that `produce`s `packets` packets at `start`, run to `stop`, the
    packets of fid 1 at `positions` dropped (an `ErrorModel/List` on r1 -> k1)."""
    sc = {
        "name": f"{suite}/{name}",
        "topology": _net4(delay),
        "tcp": copy.deepcopy(tcp),
        "flows": [{"name": "ftp", "from": "s1", "to": "k1", "bytes": f"{packets * 1000}B", "start": f"{start:g}s"}],
        "duration": f"{stop:g}s",
    }
    unreached: list = []
    sc["flows"][0]["drops"] = k.drops_at_positions(sc, positions, past_end=unreached)
    if not sc["flows"][0]["drops"]:
        del sc["flows"][0]["drops"]
    return k.SuiteTest(suite, name, sc, [p for p in positions if p not in unreached], unreached=unreached)


# --- test-suite-rfc2581.tcl --------------------------------------------------------------

#: The suite's tests: name -> agent. Each drops packets 3 and 4; `immediateAck*` with the sink's
#: RFC2581_immediate_ack_ true, `noImmediateAck*` false; the DelAck sinks' interval_ 200 ms.
RFC2581_AGENTS = {"": "Tahoe", "Reno": "Reno", "NewReno": "Newreno", "Sack": "Sack1"}


@functools.lru_cache(maxsize=None)
def rfc2581(k) -> tuple:
    """The 8 tests of test-suite-rfc2581.tcl: net4 (a 10 ms bottleneck), `syn_` and
    `delay_growth_` false, `windowInit_` 1, `singledup_` 0, `minrto_` 0, `tcpTick_` 0.1, bugFix_
    ns-2.35's true, `window_` 28; an FTP of 10 packets at 1 s, run to 3 s; packets 3 and 4
    dropped. The sinks' `SYN_immediate_ack_` false delays the ACK of packet 0, as tcplab's
    receiver delays the first segment's."""
    out = []
    for suffix, agent in RFC2581_AGENTS.items():
        for imm in (True, False):
            name = f"{'immediateAck' if imm else 'noImmediateAck'}{suffix}"
            tcp = _old_tcp(k, agent, "100ms", "0s", syn=False, iw=1, lt=False, bugfix=True, delack="200ms", fill_immediate=imm)
            out.append(_net4_test(k, "rfc2581", name, "10ms", tcp, 10, 1.0, 3.0, [3, 4]))
    return tuple(out)


# --- test-suite-LimTransmit.tcl ----------------------------------------------------------

LIMTRANSMIT_TESTS = {"onedrop_sack": False, "onedrop_SA_sack": True, "onedrop_ECN_sack": False, "nodrop_sack": False}
_ECN = ("ecn_ 1 and the error model's markecn_ (the listed packet marked, not dropped), which the export does not write; "
        "tcplab's drop filters only drop")


@functools.lru_cache(maxsize=None)
def lim_transmit(k) -> tuple:
    """The 4 tests of test-suite-LimTransmit.tcl: its own net4 (a 100 ms bottleneck), Sack1
    with `syn_` true, `windowInit_` 2 (ns-2.35's), `singledup_` 0 (1 in `onedrop_SA_sack`),
    `bugFix_` false, `minrto_` 1, `tcpTick_` 0.5 (its last setting); a Sack1 DelAck sink with
    `SYN_immediate_ack_` false (`delack_synack`); `window_` 28, an FTP of 7 packets at 0, run to
    6 s; packet 1 (the first data packet) dropped, none in `nodrop_sack` (its list names packet
    1000)."""
    out = []
    for name, lt in LIMTRANSMIT_TESTS.items():
        if "ECN" in name:
            out.append(k.SuiteTest("LimTransmit", name, None, [1], reason=_ECN))
            continue
        tcp = _old_tcp(k, "Sack1", "500ms", "1s", syn=True, iw=2, lt=lt, bugfix=False, delack="100ms", fill_immediate=True)
        tcp["delack_synack"] = True                                           # SYN_immediate_ack_ false
        out.append(_net4_test(k, "LimTransmit", name, "100ms", tcp, 7, 0.0, 6.0, [] if name == "nodrop_sack" else [1]))
    return tuple(out)


# --- test-suite-simple.tcl ---------------------------------------------------------------

#: The suite's topologies: bottleneck (rate, delay, queue-limit both ways) and the feeders'
#: (rate, delay). net0a's RED (thresh_ and maxthresh_ 1000, queue-limit 5) never drops early.
_SIMPLE_NETS = {"net0": ("8Mbps", "5ms", "800kbps", "100ms", 6), "net0a": ("8Mbps", "5ms", "800kbps", "100ms", 5),
                "net1": ("10Mbps", "5ms", "1.5Mbps", "100ms", 23)}


def _red_never(limit: int) -> dict:
    """net0a's RED: `thresh_` and `maxthresh_` 1000 (the suite's other RED parameters), so the
    average never reaches a threshold and only a full queue drops: `queue-limit` N is N waiting
    (REDQueue::enque()). tcplab's RED wants max_th above min_th: 1001, which no average reaches
    either."""
    return {"kind": "red", "packets": limit,
            "red": {"min_th": 1000, "max_th": 1001, "w_q": 0.002, "max_p": 0.1, "wait": True, "gentle": True, "mean_pktsize": "500B"}}


def _simple_topology(net: str, delays: dict, limit, reverse_limit) -> dict:
    """`net` with the test's changes: `delays` of the feeder links (`$ns_ delay`), the
    bottleneck's `queue-limit` r1 -> k1 and k1 -> r1 (ns-2's N is N − 1 waiting)."""
    fr, fd, br, bd, q = _SIMPLE_NETS[net]
    queue = _red_never if net == "net0a" else (lambda n: n - 1)
    links = [("s1", "r1", fr, delays.get("s1", fd), _DT50), ("s2", "r1", fr, delays.get("s2", fd), _DT50),
             ("r1", "k1", br, bd, queue(limit or q))]
    topo = {"kind": "custom", "nodes": ["s1", "s2", "r1", "k1"],
            "links": [{"name": f"{a}{b}", "a": a, "b": b, "rate": r, "delay": d, "queue": qq} for a, b, r, d, qq in links]}
    topo["links"][2]["reverse_queue"] = queue(reverse_limit or limit or q)
    return topo


def _simple_tcp(k, agent: str, window: int, *, mss: int = 1000, bugfix: bool = True, delack: bool = False,
                headers: bool = False) -> dict:
    """ns-2.35's defaults with the suite's globals (`useHeaders_` false, `rfc2988_` false,
    `tcpTick_` 0.1, `minrto_` 1, `rtxcur_init_` 6, `singledup_` 0): `syn_` true (a 40-byte SYN
    acknowledged at once), `windowInit_` 2, `precisionReduce_` true, `maxrto_` 60,
    `slow_start_restart_` true; `opencwnd()` on every new ACK (`grow_when_not_cwnd_limited`).
    Its DelAck test (`delayed`) keeps ns-2.35's `SYN_immediate_ack_` true."""
    preset = _AGENTS[agent]
    tcp = {
        "profile": "ns2", "preset": preset, "mss": f"{mss}B", "initial_window": 2, "rwnd": f"{window * mss}B",
        "handshake": True, "syn_options": 0, "use_headers": headers, "ns2_rfc2988": False,
        "rto_initial": "6s", "rto_min": "1s", "rto_max": "60s", "timer_tick": "100ms", "clock_granularity": "100ms",
        "limited_transmit": False, "limited_transmit_send_one": False, "restart_after_idle": True,
        "recover_guard": bugfix, "precision_reduce": True, "grow_when_not_cwnd_limited": True,
        "delayed_ack": delack,
    }
    if delack:
        tcp["delack_timeout"] = "100ms"                                   # DelAck interval_ 100 ms
    return tcp


#: The suite's tests, in its order.
SIMPLE_TESTS = ("tahoe1", "tahoe1Bytes", "tahoe1RED", "tahoe1REDbytes", "tahoe2", "tahoe3", "tahoe3RED", "tahoe4", "no_bug", "bug",
                "reno1", "reno", "renoA", "reno2", "reno3", "reno4", "reno4a", "reno5", "reno5_nobug", "telnet", "delayed", "phase",
                "phase1", "phase2", "timers", "manyflows", "stats", "statsECN", "stats1", "stats1Bytes", "stats1a", "stats1aBytes",
                "statsHeaders", "stats2", "stats3", "stats4", "statsTFRC")
#: Transcribed tests: name -> (net, flows, stop, changes). A flow is (from, agent, window_,
#: start, packets produced or None for `start`, knobs); changes: "q" the bottleneck's
#: queue-limit (both ways unless "rq" sets k1 -> r1), "s1"/"s2" a feeder's delay.
SIMPLE_RUN = {
    "tahoe1": ("net0", [("s1", "Tahoe", 50, 0.0, None, {})], 5.0, {}),
    "tahoe2": ("net0", [("s1", "Tahoe", 14, 1.0, None, {})], 5.0, {}),
    "tahoe3": ("net0", [("s1", "Tahoe", 100, 1.0, None, {}), ("s2", "Tahoe", 16, 0.5, None, {})], 8.0, {"q": 8}),
    "tahoe4": ("net0", [("s1", "Tahoe", 30, 0.0, None, {}), ("s2", "Tahoe", 30, 0.0, None, {})], 25.0, {"q": 11, "s2": "200ms"}),
    "no_bug": ("net1", [("s1", "Tahoe", 50, 1.0, None, {}), ("s2", "Tahoe", 50, 1.75, 99, {})], 6.0, {"s1": "3ms"}),
    "bug": ("net1", [("s1", "Tahoe", 50, 1.0, None, {"bugfix": False}), ("s2", "Tahoe", 50, 1.75, 100, {"bugfix": False})], 6.0,
            {"s1": "3ms"}),
    "reno1": ("net0", [("s1", "Reno", 14, 1.0, None, {})], 5.0, {}),
    "renoA": ("net0", [("s1", "Reno", 28, 1.0, None, {}), ("s1", "Reno", 4, 1.2, 6, {}), ("s1", "Reno", 4, 1.2, 6, {})], 5.0,
              {"q": 8, "rq": 6}),
    "reno2": ("net0", [("s1", "Reno", 50, 1.0, None, {}), ("s2", "Reno", 20, 1.0, None, {})], 10.0, {"q": 9, "rq": 6}),
    "reno3": ("net0", [("s1", "Reno", 100, 1.0, None, {}), ("s2", "Reno", 16, 0.5, None, {})], 8.0, {"q": 8}),
    "reno5": ("net0", [("s1", "Reno", 50, 1.0, None, {"bugfix": False}), ("s2", "Reno", 20, 1.1, None, {"bugfix": False})], 10.0,
              {"q": 9, "rq": 6}),
    "reno5_nobug": ("net0", [("s1", "Reno", 50, 1.0, None, {}), ("s2", "Reno", 20, 1.1, None, {})], 10.0, {"q": 9, "rq": 6}),
    "delayed": ("net0", [("s1", "Tahoe", 50, 1.0, None, {"delack": True})], 4.0, {}),
    "phase": ("net0", [("s1", "Tahoe", 32, 5.0, None, {}), ("s2", "Tahoe", 32, 1.0, None, {})], 25.0,
              {"q": 16, "rq": 100, "s2": "3ms"}),
    "phase1": ("net0", [("s1", "Tahoe", 32, 5.0, None, {}), ("s2", "Tahoe", 32, 1.0, None, {})], 25.0,
               {"q": 16, "rq": 100, "s2": "9.5ms"}),
    "stats": ("net0", [("s1", "Tahoe", 30, 1.0, None, {}), ("s2", "Tahoe", 30, 1.0, None, {})], 10.1,
              {"q": 10, "s2": "200ms"}),
    "stats1": ("net0", [("s1", "Tahoe", 30, 1.0, 9, {"mss": 100}), ("s2", "Tahoe", 30, 1.0, 9, {"mss": 100})], 10.1,
               {"q": 10, "s2": "200ms"}),
    # net0a: the bottleneck's RED never drops early (`_red_never`).
    "tahoe1RED": ("net0a", [("s1", "Tahoe", 50, 0.0, None, {})], 5.0, {}),
    "tahoe3RED": ("net0a", [("s1", "Tahoe", 100, 1.0, None, {}), ("s2", "Tahoe", 16, 0.5, None, {})], 8.0, {"q": 8}),
    "stats1a": ("net0a", [("s1", "Tahoe", 30, 1.0, 9, {"mss": 100}), ("s2", "Tahoe", 30, 1.0, 9, {"mss": 100})], 10.1,
                {"q": 10, "s2": "200ms"}),
    # useHeaders_ true for this test alone.
    "statsHeaders": ("net0a", [("s1", "Tahoe", 30, 1.0, 9, {"mss": 100, "headers": True}),
                               ("s2", "Tahoe", 30, 1.0, 9, {"mss": 100, "headers": True})], 10.1, {"q": 10, "s2": "200ms"}),
}
_BYTES_Q = "; a queue in bytes (queue_in_bytes_), which the export does not write"
_RANDOM = "; RED's early drops (drop_rand_) draw from ns-2's random stream: compare as statistics, not packets"
#: The suite's other tests and why each is not expressible.
SIMPLE_REFUSED = {
    "tahoe1Bytes": _BYTES_Q, "tahoe1REDbytes": _BYTES_Q,
    "reno": "; maxcwnd_ (a cap on cwnd_), no tcplab knob",
    "reno4": "; maxcwnd_ (no tcplab knob)" + _RANDOM,
    "reno4a": "; maxcwnd_ (no tcplab knob)" + _RANDOM,
    "telnet": "; Telnet sources (exponential interarrivals from ns-2's stream) and timerfix_ false",
    "phase2": "; overhead_ (a random delay before each send, from ns-2's stream)",
    "timers": "; timerfix_ false (the timer restarted before the RTT sample updates the RTO, newack(); no tcplab knob)",
    "manyflows": "; ten flows of random sizes and start times drawn in Tcl from ns-2's RNG",
    "statsECN": "; ECN (RED setbit_, ecn_)", "stats1Bytes": _BYTES_Q, "stats1aBytes": _BYTES_Q, "stats2": _RANDOM, "stats3": "; a QueueMonitor's RTT and sequence statistics" + _RANDOM,
    "stats4": _RANDOM, "statsTFRC": "; a TFRC flow (Agent/TFRC)",
}


def _simple_test(k, name: str):
    net, flows, stop, ch = SIMPLE_RUN[name]
    topo = _simple_topology(net, {n: ch[n] for n in ("s1", "s2") if n in ch}, ch.get("q"), ch.get("rq"))
    fl = []
    for i, (src, agent, window, start, packets, knobs) in enumerate(flows):
        tcp = _simple_tcp(k, agent, window, **knobs)
        mss = knobs.get("mss", 1000)
        fl.append({"name": f"ftp{i}", "from": src, "to": "k1", "bytes": "unlimited" if packets is None else f"{packets * mss}B",
                   "start": f"{start:g}s", "tcp": tcp})
    # tcplab numbers connections as they open; the export gives each the fid of that number, so
    # the flows are written in the order they start (the suite's fids play no part: nothing is
    # dropped by list).
    fl.sort(key=lambda f: float(f["start"][:-1]))
    # The first flow's knobs stand as the scenario's [tcp] too (what the classifier reads).
    sc = {"name": f"simple/{name}", "topology": topo, "tcp": copy.deepcopy(fl[0]["tcp"]), "flows": fl, "duration": f"{stop:g}s"}
    return k.SuiteTest("simple", name, sc)


@functools.lru_cache(maxsize=None)
def simple(k) -> tuple:
    """The 37 tests of test-suite-simple.tcl, in the suite's order: those of `SIMPLE_RUN` run,
    the others listed with `SIMPLE_REFUSED`'s reason."""
    out = []
    for n in SIMPLE_TESTS:
        if n in SIMPLE_RUN:
            out.append(_simple_test(k, n))
        else:
            out.append(k.SuiteTest("simple", n, None, reason=SIMPLE_REFUSED[n].lstrip("; ")))
    return tuple(out)


# --- test-suite-tcp.tcl ------------------------------------------------------------------

#: What a test needs besides the suite's globals (read from each test's Tcl).
TCP_TESTS = {
    "ecn": "; ECN (old_ecn_, setbit_)", "timers": "", "timersA": "; timerfix_ false", "timersAfix": "",
    "timersA1": "; rttvar_exp_ 3, timerfix_ false", "timersA2": "; timestamps_ true, timerfix_ false",
    "timersA3": "; timestamps_ true, T_SRTT_BITS 5, T_RTTVAR_BITS 4, timerfix_ false", "timers1": "", "timers2": "",
    "timers3": "", "timers4": "", "timers5": "", "timers_backoffs": "", "stats1": "",
    **{n: "; QOption_ (Quick-Start-like idle handling) / control_increase_" for n in (
        "quiescent_100ms", "quiescentB", "quiescentB_qoption", "underutilized_100ms", "underutilized_100ms_control",
        "underutilized_100ms_control_Q", "underutilized_100ms_Q", "underutilized_100ms_control_Reno",
        "underutilized_100ms_control_Newreno", "underutilized_100ms_control_Sack", "quiescent_100ms_fine",
        "quiescent_100ms_coarse", "quiescent_1ms_fine", "quiescent_1ms_coarse", "quiescent_500ms_fine",
        "quiescent_500ms_coarse")},
    "dialup": "", "dialup1": "",
}



def _red(limit: int) -> dict:
    """The suite's RED (`thresh_` 5, `maxthresh_` 15, `q_weight_` 0.002 in packets; ns-2.35's
    `linterm_` 10, `wait_` and `gentle_` true, `mean_pktsize_` 500): `queue-limit` N waiting
    (REDQueue::enque()). Its `setbit_` marks ECN-capable packets only; the agents send none."""
    return {"kind": "red", "packets": limit,
            "red": {"min_th": 5, "max_th": 15, "w_q": 0.002, "max_p": 0.1, "wait": True, "gentle": True, "mean_pktsize": "500B"}}


def _tcp_net(net: str, q=None) -> tuple:
    """topologies.tcl's net0 and net2 and the suite's own net4, net6 and net8: (topology, the
    sink's node). `q`: the bottleneck's `queue-limit` one way (its other way keeps the net's)."""
    if net == "net2":
        nodes = ["s1", "s2", "r1", "r2", "s3", "s4"]
        rows = [("s1", "r1", "10Mbps", "2ms", _DT50), ("s2", "r1", "10Mbps", "3ms", _DT50), ("r1", "r2", "1.5Mbps", "20ms", _red(q or 25)),
                ("s3", "r2", "10Mbps", "4ms", _DT50), ("s4", "r2", "10Mbps", "5ms", _DT50)]
        rev, sink = _red(25), "r2"
    else:
        nodes, sink = ["s1", "s2", "r1", "k1"], "k1"
        feed = ("8Mbps", "5ms")
        if net == "net8":
            rows = [("s1", "s2", "1000Mbps", "0ms", _DT50), ("s2", "r1", "9.6kbps", "1ms", _DT50), ("r1", "k1", "800kbps", "10ms", _red(25))]
            rev = _red(25)
        else:
            bott = {"net0": ("800kbps", "100ms", (q or 6) - 1, 5), "net4": ("800kbps", "10ms", 1, 1),
                    "net6": ("800kbps", "20ms", _red(25), _red(25))}[net]
            rows = [("s1", "r1", *feed, _DT50), ("s2", "r1", *feed, _DT50), ("r1", "k1", bott[0], bott[1], bott[2])]
            rev = bott[3] if net != "net0" else (q or 6) - 1
    topo = {"kind": "custom", "nodes": nodes,
            "links": [{"name": f"{a}{b}", "a": a, "b": b, "rate": r, "delay": d, "queue": qq} for a, b, r, d, qq in rows]}
    topo["links"][2]["reverse_queue"] = rev
    return topo, sink


def _tcp_tcp(k, agent: str, window: int, *, tick: str = "100ms", delack: bool = False, mss: int = 1000, syn: bool = False,
             iw: int = 1, rto_min: str = "0s", rfc2988: bool = True) -> dict:
    """The suite's globals (`useHeaders_` false, `windowInit_` 1, `singledup_` 0, `minrto_` 0,
    `syn_` and `delay_growth_` false, `tcpTick_` 0.1, `rtxcur_init_` 6, `precisionReduce_`
    false, `rfc2988_` true; the DelAck sink's `SYN_immediate_ack_` false) over ns-2.35's
    defaults (`maxrto_` 60, `slow_start_restart_` true, `opencwnd()` on every new ACK)."""
    tcp = {
        "profile": "ns2", "preset": _AGENTS[agent], "mss": f"{mss}B", "initial_window": iw, "rwnd": f"{window * mss}B",
        "handshake": syn, "syn_options": 0, "use_headers": False, "ns2_rfc2988": rfc2988,
        "rto_initial": "6s", "rto_min": rto_min, "rto_max": "60s", "timer_tick": tick, "clock_granularity": tick,
        "limited_transmit": False, "limited_transmit_send_one": False, "restart_after_idle": True,
        "recover_guard": True, "grow_when_not_cwnd_limited": True, "delayed_ack": delack,
    }
    if delack:
        tcp["delack_timeout"] = "100ms"
    if agent == "Sack1":
        tcp["sack_blocks"] = 3
    return tcp


#: Transcribed tests: name -> (net, bottleneck queue-limit or None, flows, stop, drops of fid 1
#: by position, feeder delays). A flow is (from, agent, window_, start, packets or None, knobs).
TCP_RUN = {
    "timers": ("net4", None, [("s2", "Tahoe", 3, 0.09, None, {})], 25.0, [0, 1], {}),
    "timersAfix": ("net4", None, [("s1", "Tahoe", 5, 0.0, 1600, {})], 3.5, [2, 7, 9, 10, 11], {}),
    "timers1": ("net2", 29, [("s1", "Reno", 40, 0.0, 180, {"delack": True})], 4.0, [], {}),
    "timers2": ("net2", 29, [("s1", "Reno", 40, 0.0, 180, {"delack": True, "tick": "500ms"})], 4.0, [], {}),
    "timers3": ("net2", 29, [("s1", "Reno", 40, 0.0, 180, {"delack": True, "tick": "1ms"})], 4.0, [], {}),
    "timers4": ("net2", 29, [("s1", "Reno", 10, 0.0, None, {"delack": True, "tick": "1ms"})], 2.0, [], {}),
    "timers5": ("net2", 29, [("s1", "Reno", 2, 0.0, None, {"delack": True, "tick": "1ms"})], 2.0, [], {}),
    "timers_backoffs": ("net6", None, [("s1", "Tahoe", 1, 0.0, 30, {})], 400.0, list(range(10, 20)), {}),
    "stats1": ("net0", 10, [("s1", "Reno", 30, 1.0, None, {}), ("s2", "Tahoe", 3, 1.0, None, {})], 10.1, [], {"s2": "200ms"}),
    # windowInitOption_ 2: IW 3 for 1500-byte packets (TcpAgent::initial_window()); syn_ and
    # delay_growth_ true, minrto_ 1, window_ 20 (ns-2.35's), a Sack1 sink without delayed ACKs.
    "dialup": ("net8", None, [("s1", "Sack1", 20, 0.0, None, {"mss": 1500, "syn": True, "iw": 3, "rto_min": "1s"})], 30.01, [], {}),
    "dialup1": ("net8", None, [("s1", "Sack1", 20, 0.0, None, {"mss": 1500, "syn": True, "iw": 3, "rto_min": "1s", "rfc2988": False})],
                30.01, [], {}),
}


def _tcp_test(k, name: str):
    net, q, flows, stop, drops, delays = TCP_RUN[name]
    topo, sink = _tcp_net(net, q)
    for lk in topo["links"]:
        if lk["a"] in delays and lk["b"] == "r1":
            lk["delay"] = delays[lk["a"]]
    fl = []
    for i, (src, agent, window, start, packets, knobs) in enumerate(flows):
        tcp = _tcp_tcp(k, agent, window, **knobs)
        mss = knobs.get("mss", 1000)
        fl.append({"name": f"ftp{i}", "from": src, "to": sink, "bytes": "unlimited" if packets is None else f"{packets * mss}B",
                   "start": f"{start:g}s", "tcp": tcp})
    sc = {"name": f"tcp/{name}", "topology": topo, "tcp": copy.deepcopy(fl[0]["tcp"]), "flows": fl, "duration": f"{stop:g}s"}
    if not drops:
        return k.SuiteTest("tcp", name, sc)
    unreached: list = []
    sc["flows"][0]["drops"] = k.drops_at_positions(sc, drops, past_end=unreached)
    return k.SuiteTest("tcp", name, sc, [p for p in drops if p not in unreached], unreached=unreached)


@functools.lru_cache(maxsize=None)
def tcp(k) -> tuple:
    """The 32 tests of test-suite-tcp.tcl: those of `TCP_RUN` run, the others listed with their
    reasons (`TCP_TESTS`)."""
    return tuple(_tcp_test(k, n) if n in TCP_RUN else k.SuiteTest("tcp", n, None, reason=extra.lstrip("; "))
                 for n, extra in TCP_TESTS.items())


def register(k) -> dict:
    """The suites this module transcribes, for tcplab.ns2.suites.TRANSCRIBED: name -> a function
    returning its tests. `k` is tcplab.ns2.suites (its SuiteTest and drops_at_positions)."""
    return {name: functools.partial(f, k) for name, f in (("LimTransmit", lim_transmit), ("rfc2581", rfc2581), ("simple", simple),
                                                           ("tcp", tcp))}
