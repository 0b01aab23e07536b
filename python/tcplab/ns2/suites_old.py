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

LIMTRANSMIT_TESTS = ("onedrop_sack", "onedrop_SA_sack", "onedrop_ECN_sack", "nodrop_sack")
_SYN_DELAYED = ("TCPSink SYN_immediate_ack_ false with syn_ true: the DelAck sink delays its ACK of the SYN (packet 0) by "
                "interval_ (DelAckSink::recv(), tcp/tcp-sink.cc), where tcplab's passive opener answers a SYN at once "
                "(no tcplab knob)")
_ECN = "; and ecn_ 1 with the error model's markecn_ (a marked packet, not a drop), which the export does not write"


@functools.lru_cache(maxsize=None)
def lim_transmit(k) -> tuple:
    """The 4 tests of test-suite-LimTransmit.tcl (Sack1, `syn_` true, a DelAck sink with
    `SYN_immediate_ack_` false): not expressible, see `_SYN_DELAYED`."""
    return tuple(k.SuiteTest("LimTransmit", n, None, [1], reason=_SYN_DELAYED + (_ECN if "ECN" in n else ""))
                 for n in LIMTRANSMIT_TESTS)


# --- test-suite-simple.tcl and test-suite-tcp.tcl ----------------------------------------

_SIMPLE_GLOBAL = "not transcribed yet (useHeaders_ false and rfc2988_ false are tcplab knobs now)"
_TCP_GLOBAL = "not transcribed yet (useHeaders_ false is a tcplab knob now)"
#: What a test needs besides the suite's globals (read from each test's Tcl).
SIMPLE_TESTS = {
    "tahoe1": "", "tahoe1Bytes": "; a DropTail queue in bytes", "tahoe1RED": "", "tahoe1REDbytes": "; RED in bytes",
    "tahoe2": "", "tahoe3": "", "tahoe3RED": "", "tahoe4": "", "no_bug": "", "bug": "", "reno1": "", "reno": "",
    "renoA": "", "reno2": "", "reno3": "", "reno4": "", "reno4a": "", "reno5": "", "reno5_nobug": "",
    "telnet": "; Telnet sources and timerfix_ false", "delayed": "", "phase": "", "phase1": "", "phase2": "",
    "timers": "; timerfix_ false", "manyflows": "", "stats": "", "statsECN": "; ECN (setbit_, ecn_)", "stats1": "",
    "stats1Bytes": "", "stats1a": "", "stats1aBytes": "", "statsHeaders": "", "stats2": "", "stats3": "", "stats4": "",
    "statsTFRC": "; a TFRC flow (Agent/TFRC)",
}
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


@functools.lru_cache(maxsize=None)
def simple(k) -> tuple:
    """The 37 tests of test-suite-simple.tcl."""
    return tuple(k.SuiteTest("simple", n, None, reason=_SIMPLE_GLOBAL + extra) for n, extra in SIMPLE_TESTS.items())


@functools.lru_cache(maxsize=None)
def tcp(k) -> tuple:
    """The 32 tests of test-suite-tcp.tcl."""
    return tuple(k.SuiteTest("tcp", n, None, reason=_TCP_GLOBAL + extra) for n, extra in TCP_TESTS.items())


def register(k) -> dict:
    """The suites this module transcribes, for tcplab.ns2.suites.TRANSCRIBED: name -> a function
    returning its tests. `k` is tcplab.ns2.suites (its SuiteTest and drops_at_positions)."""
    return {name: functools.partial(f, k) for name, f in (("LimTransmit", lim_transmit), ("rfc2581", rfc2581), ("simple", simple),
                                                           ("tcp", tcp))}
