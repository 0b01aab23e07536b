"""ns-2.35's validation suite `test-suite-tcp-init-win.tcl` as tcplab scenarios (our
transcription of each test's topology, agents, knobs and drops; no ns-2 code), run by
`tcplab.ns2.suites` like the others (docs/ns2.md). The older suites (`simple`, `tcp`,
`LimTransmit`, `rfc2581`) are in `suites_old`.

`tcp-init-win` keeps ns-2.35's defaults (`tcl/lib/ns-default.tcl`) but for what each test sets:
`minrto_` 0.2, `maxrto_` 60, `rtxcur_init_` 3, `window_` 20, `windowInit_` 2, `singledup_` 1,
`slow_start_restart_` true, the sink's `maxSackBlocks_` 3, NewReno's `newreno_changes1_` 1 and
`partial_window_deflation_` 1, and `precisionReduce_` true. tcplab's `ns2` profile writes
`precisionReduce_` false (`ssthresh_whole_segments`); the two rules differ only where
`slowdown()` halves `cwnd_` for a fast recovery (`CLOSE_CWND_HALF`, `tcp/tcp.cc`), never at a
timeout or in Tahoe's fast retransmit. A Reno-family test whose tcplab run enters fast recovery
from a window other than an even whole number of packets (where the two rules part) is therefore
listed as not expressible, with that reason; the others run.
"""

from __future__ import annotations

import copy
import functools

# tcplab.ns2.suites registers this module's suites (`register`) and hands it its SuiteTest record
# and drop-position search, so that the import runs one way (tests/test_layering.py).

# --- test-suite-tcp-init-win.tcl ---------------------------------------------------------

#: The suite's RED (`Queue/RED` with its global thresh_ 5, maxthresh_ 15, q_weight_ 0.002 and
#: ns-2.35's linterm_ 10, wait_ and gentle_ true, mean_pktsize_ 500), `queue-limit` 25 both ways.
#: Its `setbit_` true marks ECN-capable packets only; the agents send none (ecn_ 0), so RED
#: drops, as tcplab's RED with `ecn = false` does.
_RED25 = {"packets": 25, "red": {"min_th": 5, "max_th": 15, "w_q": 0.002, "max_p": 0.1, "wait": True, "gentle": True,
                                 "mean_pktsize": "500B"}}
#: ns-2's default DropTail `queue-limit` 50: 49 waiting (docs/ns2.md "Queue limits").
_DT50 = 49


def _net(kind: str) -> dict:
    """Topology/net6 (100 Mb/s feeders, a 10 Mb/s 100 ms RED bottleneck), net8 (s1 -- s2 at
    1000 Mb/s, a 9.6 kb/s 1 ms DropTail link s2 -- r1, an 800 kb/s 10 ms RED link r1 -- k1)."""
    if kind == "net6":
        links = [("s1", "r1", "100Mbps", "5ms", _DT50), ("s2", "r1", "100Mbps", "5ms", _DT50), ("r1", "k1", "10Mbps", "100ms", _RED25)]
    elif kind == "net8":
        links = [("s1", "s2", "1000Mbps", "0ms", _DT50), ("s2", "r1", "9.6kbps", "1ms", _DT50), ("r1", "k1", "800kbps", "10ms", _RED25)]
    else:
        raise ValueError(kind)
    return {"kind": "custom", "nodes": ["s1", "s2", "r1", "k1"],
            "links": [{"name": f"{a}{b}", "a": a, "b": b, "rate": r, "delay": dl, "queue": copy.deepcopy(q)} for a, b, r, dl, q in links]}


#: `make_tcp`'s agent types: the tcplab preset.
_AGENTS = {"Tahoe": "tahoe", "Reno": "reno", "Newreno": "newreno", "Sack": "sack1"}


def _iw_by_size(size: int) -> int:
    """`windowInitOption_` 2: `TcpAgent::initial_window()` takes 4 packets up to 1095 bytes, 3
    below 2190, else 2 (tcp/tcp.cc); written as that whole number of segments."""
    return 4 if size <= 1095 else 3 if size < 2190 else 2


def _init_win_tcp(k, agent: str, mss: int = 1000, iw: int = 2, syn: bool = True, rto_min: str = "200ms") -> dict:
    """ns-2.35's defaults, as tcplab knobs, for one agent of the suite (`k`: tcplab.ns2.suites)."""
    preset = _AGENTS[agent]
    tcp = {
        "profile": "ns2", "preset": preset, "mss": f"{mss}B", "initial_window": iw, "rwnd": f"{20 * mss}B",
        # syn_ true with delay_growth_ true: a 40-byte packet 0, cwnd 1 until its ACK, then the IW.
        "handshake": syn, "syn_options": 0,
        "rto_initial": "3s", "rto_min": rto_min, "rto_max": "60s",
        "limited_transmit": True, "limited_transmit_send_one": True,   # singledup_ 1
        "restart_after_idle": True,                                     # slow_start_restart_ true
        "recover_guard": True,                                          # bugFix_ true
    }
    if preset == "newreno":
        tcp.update({"newreno_recover_guard": True, "slow_but_steady": False, "partial_window_deflation": True,
                    "exit_recovery_fix": False, **k.NEWRENO_AGENT})
    if preset == "sack1":
        tcp["sack_blocks"] = 3                                          # TCPSink maxSackBlocks_ 3
    return tcp


def _halves_in_recovery(sc: dict) -> bool:
    """Whether tcplab's run of `sc` enters a fast recovery from a window that ns-2's
    `precisionReduce_` true would halve otherwise than the `ns2` profile: `slowdown()` takes
    `windowd()` / 2 unrounded there, ⌊`window()` / 2⌋ here, which agree only for a window of an
    even whole number of packets (the window before the entry: min(cwnd, rwnd))."""
    from .. import api
    from .script import nbytes

    resolved = api.validate(sc, tcp=True)["flows"]
    st = api.run(sc, series=["tcp"]).series.tcp
    st = st[st["dir"] == "a2b"]
    for c, rows in st.groupby("conn", observed=True):
        k = resolved[int(c)]["tcp"]
        mss = nbytes(k["mss"], "tcp.mss")
        rwnd = nbytes(k["rwnd"], "tcp.rwnd")
        state, cwnd = list(rows["state"]), [int(x) for x in rows["cwnd"]]
        for i in range(1, len(state)):
            if state[i] == "recovery" and state[i - 1] != "recovery" and min(cwnd[i - 1], rwnd) % (2 * mss):
                return True
    return False


_PRECISION = ("precisionReduce_ true (ns-2.35's default, which the suite keeps) and a fast recovery from a window that is "
              "not an even number of packets: slowdown() sets cwnd_ to the unrounded half window, tcplab's ns2 profile to the "
              "whole one (ssthresh_whole_segments)")
_SYN_OPTION2 = ("windowInitOption_ 2 and a dropped SYN: TcpAgent::timeout() turns windowInitOption_ to 1, so data "
                "starts at windowInit_ (2), neither the size-based IW nor tcplab's IW of one segment after a lost SYN "
                "(iw_one_after)")
_NS1_COMPAT = ("Queue/RED ns1_compat_ true (no tcplab knob), and RED's early drops of two 40-packet windows draw from "
               "ns-2's random stream (compare such runs as statistics, not packets)")
_NO_BUGFIX_SS = ("bugfix_ss_ 0: besides keeping the IW after a lost SYN (tcplab's iw_one_after = 0), it withholds the "
                 "fast retransmit of the first data packet (TcpAgent::dupack_action(), highest_ack_ == 0); tcplab has "
                 "no knob for the second rule, and the export leaves ns-2's default bugfix_ss_ 1")


def _init_win_test(k, name: str, net: str, flows: list, duration: float, drop_positions: tuple = (), syn_drop: bool = False,
                   precision_free: bool = False):
    """One test: `flows` are (from, agent tcp knobs); FTPs start at 0. The suite's drops
    (`drop_pkt`: an `ErrorModel/Periodic` of `offset_` n, `period_` 1000 on r1 -> k1 for fid 0,
    whose counter starts at 1) drop fid 0's packet at position n − 1, never the 1000th after it
    within these runs; the export puts them on s1 -> r1, which only fid 0 crosses in them."""
    sc = {
        "name": f"tcp-init-win/{name}",
        "topology": _net(net),
        "flows": [{"name": f"ftp{i}", "from": src, "to": "k1", "bytes": "unlimited", "start": "0s", "tcp": tcp}
                  for i, (src, tcp) in enumerate(flows)],
        "duration": f"{duration:g}s",
    }
    # The profile is the same for every flow; the scenario's [tcp] names it for the export's messages.
    sc["tcp"] = {"profile": "ns2"}
    drops: list = []
    if syn_drop:
        drops.append({"kind": "syn"})
    if drop_positions:
        drops += k.drops_at_positions(sc, list(drop_positions))
    if drops:
        sc["flows"][0]["drops"] = drops
    positions = ([0] if syn_drop else []) + list(drop_positions)
    if not precision_free and _halves_in_recovery(sc):
        return k.SuiteTest("tcp-init-win", name, None, positions, reason=_PRECISION)
    return k.SuiteTest("tcp-init-win", name, sc, positions)


@functools.lru_cache(maxsize=None)
def tcp_init_win(k) -> tuple:
    """The 25 tests of test-suite-tcp-init-win.tcl (`k`: tcplab.ns2.suites)."""
    SuiteTest = k.SuiteTest
    out = []
    for v in ("Tahoe", "Reno", "Newreno", "Sack"):
        low = {"Tahoe": "tahoe", "Reno": "reno", "Newreno": "newreno", "Sack": "sack"}[v]
        tahoe = v == "Tahoe"
        # <v>1: windowInitOption_ 2, three flows of 1000, 1500 and 2500-byte packets, run 1 s.
        out.append(_init_win_test(k, f"{low}1", "net6", [("s1", _init_win_tcp(k, v, 1000, _iw_by_size(1000))),
                                                      ("s2", _init_win_tcp(k, v, 1500, _iw_by_size(1500))),
                                                      ("s2", _init_win_tcp(k, v, 2500, _iw_by_size(2500)))], 1.0, precision_free=tahoe))
        # <v>2: static windows; the first flow without syn_ and delay_growth_ (IW 6 at once).
        out.append(_init_win_test(k, f"{low}2", "net6", [("s1", _init_win_tcp(k, v, 1000, 6, syn=False)),
                                                      ("s2", _init_win_tcp(k, v, 1000, 2)),
                                                      ("s2", _init_win_tcp(k, v, 1000, 6))], 1.0, precision_free=tahoe))
        out.append(SuiteTest("tcp-init-win", f"{low}3", None, [0], reason=_SYN_OPTION2))
        out.append(SuiteTest("tcp-init-win", f"{low}4", None, [], reason=_NS1_COMPAT))
    # slowLink*: net8, Sack, minrto_ 1, run 30 s.
    out.append(_init_win_test(k, "slowLink", "net8", [("s1", _init_win_tcp(k, "Sack", 1000, _iw_by_size(1000), rto_min="1s"))], 30.0))
    out.append(_init_win_test(k, "slowLink1", "net8", [("s1", _init_win_tcp(k, "Sack", 1500, _iw_by_size(1500), rto_min="1s"))], 30.0))
    out.append(_init_win_test(k, "slowLink2", "net8", [("s1", _init_win_tcp(k, "Sack", 1500, 2, rto_min="1s"))], 30.0))
    # dropped*: windowInit_ 4 (windowInitOption_ 1), run 5 s; bugfix_ss_ 0 in the odd-numbered ones.
    out.append(SuiteTest("tcp-init-win", "droppedSYN", None, [0], reason=_NO_BUGFIX_SS))
    out.append(_init_win_test(k, "droppedSYN1", "net6", [("s1", _init_win_tcp(k, "Newreno", 1000, 4))], 5.0, syn_drop=True))
    out.append(SuiteTest("tcp-init-win", "droppedPKT", None, [1], reason=_NO_BUGFIX_SS))
    out.append(_init_win_test(k, "droppedPKT1", "net6", [("s1", _init_win_tcp(k, "Newreno", 1000, 4))], 5.0, drop_positions=(1,)))
    out.append(SuiteTest("tcp-init-win", "droppedPKT2", None, [1], reason=_NO_BUGFIX_SS))
    out.append(_init_win_test(k, "droppedPKT3", "net6", [("s1", _init_win_tcp(k, "Sack", 1000, 4))], 5.0, drop_positions=(1,)))
    return tuple(out)


def register(k) -> dict:
    """The suites this module transcribes, for tcplab.ns2.suites.TRANSCRIBED: name -> a function
    returning its tests. `k` is tcplab.ns2.suites (its SuiteTest and drops_at_positions)."""
    return {name: functools.partial(f, k) for name, f in (("tcp-init-win", tcp_init_win),)}
