"""ns-2.35's own validation suites (`tcl/test/test-suite-*.tcl`) run live: each test written as a
tcplab scenario, run in tcplab's `ns2` profile and in `ns` through `tcplab.ns2.compare`, and
counted per suite (docs/ns2.md).

    python -m tcplab.ns2.suites                   # the counts of docs/ns2.md
    python -m tcplab.ns2.suites --show            # each differing test's first divergence
    python -m tcplab.ns2.suites --test onedrop_reno --test twodrops_sack

The scenarios are our own transcription of each test's setup (topology, agent, knobs, the packets
its `ErrorModel/List` drops); no ns-2 code is copied. A test whose setup tcplab cannot express (or
whose transcription is not written yet) is listed with the reason, never run under a different
setup.

A suite's `ErrorModel/List` counts the packets of fid 1 that reach the lossy link, from 0
(`ListErrorModel::corrupt()`, `queue/errmodel.cc`). The scenarios name the dropped packets as
tcplab's data segments; `drops_as_in_suite` checks, for each test, that the position list the
export derives from tcplab's run is the suite's list, so the two runs drop what the suite drops.
"""

from __future__ import annotations

import argparse
import copy
import functools
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from typing import Optional

from . import suites_more, suites_old

#: The suites compared, in the order printed. Tests of a suite not transcribed yet are not
#: counted (the output says so).
SUITES = ("tcpVariants", "tcp-init-win", "LimTransmit", "rfc2581", "newreno", "sack", "simple", "tcp")

# --- test-suite-tcpVariants.tcl -------------------------------------------------------------

#: Topology/net4: s1, s2 -- r1 at 8 Mb/s, 0 ms; r1 -- k1 at 800 kb/s, 100 ms, queue-limit 8 both
#: ways (tcplab: 7 waiting, docs/ns2.md "Queue limits"); the feeders keep ns-2's default
#: queue-limit 50 (49 waiting). The suite's error module sits on r1 -> k1; the export puts it at
#: the flow's first link, s1 -> r1, which counts the same packets (docs/ns2.md).
NET4 = {
    "kind": "custom",
    "nodes": ["s1", "s2", "r1", "k1"],
    "links": [
        {"name": "s1r1", "a": "s1", "b": "r1", "rate": "8Mbps", "delay": "0ms", "queue": 49},
        {"name": "s2r1", "a": "s2", "b": "r1", "rate": "8Mbps", "delay": "0ms", "queue": 49},
        {"name": "r1k1", "a": "r1", "b": "k1", "rate": "800kbps", "delay": "100ms", "queue": 7},
    ],
}

#: The drop lists of the suite's tests (`setup TYPE {list}`): one-way agents / FullTcp.
VARIANTS_DROPS = {
    "onedrop": ([14], [16]),
    "twodrops": ([14, 28], [16, 30]),
    "threedrops": ([14, 26, 28], [16, 28, 30]),
    "fourdrops": ([14, 24, 26, 28], [16, 26, 28, 30]),
    "multiple": ([11, 12, 13, 14, 16, 17, 18, 19], None),
    "multiple2": ([11, 12, 13, 14, 16], None),
}
#: Test-name suffix -> tcplab preset (one-way agents, `create-connection TCP/...`).
VARIANTS_AGENTS = {"tahoe": "tahoe", "reno": "reno", "newreno": "newreno", "sack": "sack1", "fack": "fack", "sackRH": "sack-rh"}
#: FullTcp tests: suffix -> preset under `ns2-full` (`FullTcp` is Reno, `FullTcp/Sack` Sack1).
VARIANTS_FULL = {"tahoe": "tahoe", "reno": "reno", "newreno": "newreno", "sack": "sack1"}
#: Which variants each drop pattern has (the suite's classes), plain / _SA_ / _full / partial_ack.
VARIANTS_HAS = {
    "onedrop": (("tahoe", "reno", "newreno", "sack", "fack", "sackRH"), ("tahoe", "reno", "newreno", "sack"), ("tahoe", "reno", "newreno", "sack"), ()),
    "twodrops": (("tahoe", "reno", "newreno", "sack", "fack", "sackRH"), ("tahoe", "reno", "newreno", "sack"), ("tahoe", "reno", "newreno", "sack"), ()),
    "threedrops": (("tahoe", "reno", "newreno", "sack", "fack", "sackRH"), ("tahoe", "reno", "newreno", "sack"), ("tahoe", "reno", "newreno", "sack"), ()),
    "fourdrops": (("tahoe", "reno", "newreno", "sack", "fack", "sackRH"), ("tahoe", "reno", "newreno", "sack"), ("tahoe", "reno", "newreno", "sack"), ()),
    "multiple": (("tahoe", "reno", "newreno", "sack"), ("tahoe", "reno", "newreno", "sack"), (), ("sack",)),
    "multiple2": (("tahoe", "reno", "newreno", "sack"), ("tahoe", "reno", "newreno", "sack"), (), ("sack",)),
}


#: ns-2's one-way NewReno agent's own rules that the `ns2` profile leaves off (its recorded
#: results stay as they were; docs/ns2.md): the suites' NewReno tests set them.
NEWRENO_AGENT = {"newreno_inflate_after_quiet_exit": True}


@dataclass
class SuiteTest:
    suite: str
    name: str
    scenario: Optional[dict]            # None: not expressible (see `reason`)
    drops: list = field(default_factory=list)   # the suite's ErrorModel/List positions
    reason: str = ""                     # why not expressible
    delayed: list = field(default_factory=list)  # the positions its delay model (delay_pkt_) holds back
    ack_drops: list = field(default_factory=list)  # the positions of its ACK drops (k1 -> r1)
    unreached: list = field(default_factory=list)  # listed positions past tcplab's last packet ("ACK p": of its ACKs)


def _variants_tcp(preset: str, limited: bool, full: bool) -> dict:
    """test-suite-tcpVariants.tcl's global settings (`Agent/TCP set ...` at its top) as tcplab
    knobs."""
    tcp = {
        "profile": "ns2-full" if full else "ns2",
        "preset": preset,
        "handshake": True,             # ns-2.35's default syn_ (one-way); FullTcp always opens with a SYN
        "syn_options": 0,              # ns-2's packet 0 is a bare 40-byte header
        "rto_initial": "6s",           # rtxcur_init_ 6.0
        "rto_min": "1s",               # minrto_ 1
        "limited_transmit": limited,   # singledup_ (0, or 1 in the _SA_ tests)
        "limited_transmit_send_one": limited,
    }
    if preset == "newreno" and not full:
        tcp["slow_but_steady"] = True               # newreno_changes1_ 0
        tcp["partial_window_deflation"] = False     # partial_window_deflation_ 0
        tcp["newreno_inflate_after_quiet_exit"] = True   # NewRenoTcpAgent::recv()'s rule (NEWRENO_AGENT)
    return tcp


def _net4_test(suite: str, name: str, tcp: dict, positions: list, net: str = "net4", stop: float = 6.0, window: int = 28,
               full: bool = False, delayed: tuple = (), ack_positions: tuple = ()) -> SuiteTest:
    """A test of the suites built on Topology/net4 (tcpVariants, newreno): an FTP from s1 to k1
    from 1 s to `stop`, `window_` `window` packets, the packets at `positions` of fid 1 dropped
    on r1 -> k1. net4a has queue-limit 80, net4b a 200 ms bottleneck. `delayed`: the positions
    of fid 1's packets its delay model holds back 50 ms on s1 -> r1 (the newreno suite's
    reordering tests); `ack_positions`: those of fid 1's ACKs dropped on k1 -> r1 (`drop_acks`)."""
    topo = copy.deepcopy(NET4)
    if net == "net4a":
        topo["links"][2]["queue"] = 79
    elif net == "net4b":
        topo["links"][2]["delay"] = "200ms"
    tcp = dict(tcp)
    # window_ counts packets: of packetSize_ 1000 (one-way agents), of FullTcp's segsize_ 536.
    tcp["rwnd"] = f"{window * (536 if full else 1000)}B"
    sc = {
        "name": f"{suite}/{name}",
        "topology": topo,
        "tcp": tcp,
        "flows": [{"name": "ftp", "from": "s1", "to": "k1", "bytes": "unlimited", "start": "1s"}],
        "duration": f"{stop:g}s",
    }
    acks = [{"kind": "ack", "number": p} for p in ack_positions]
    # A position tcplab's run never reaches drops nothing there (nor in ns-2, up to where they differ).
    unreached: list = []
    sc["flows"][0]["drops"] = drops_at_positions(sc, positions, keep=acks, past_end=unreached) + acks
    if delayed:
        sc["flows"][0]["delays"] = delays_at_positions(sc, list(delayed), REORDER_DELAY)
    acked = list(ack_positions)
    if acked:
        from .. import api

        seg = api.run(sc, series=["segments"]).series.segments
        n_acks = int(((seg["event"] == "tx") & (seg["dir"] == "b2a") & (seg["conn"] == 0)).sum())
        acked = [p for p in acked if p < n_acks]
    return SuiteTest(suite, name, sc, [p for p in positions if p not in unreached], delayed=list(delayed),
                     ack_drops=acked, unreached=unreached + [f"ACK {p}" for p in ack_positions if p not in acked])


@functools.lru_cache(maxsize=None)
def tcp_variants() -> tuple:
    """The tests of test-suite-tcpVariants.tcl: an FTP from s1 to k1 from 1 s, run to 6 s, with
    chosen packets dropped on r1 -> k1."""
    out = []
    for pattern, (one_way, limited_t, full_t, partial_t) in VARIANTS_HAS.items():
        drops, full_drops = VARIANTS_DROPS[pattern]
        for kind, names in (("", one_way), ("_SA", limited_t), ("_full", full_t), ("_partial_ack", partial_t)):
            for v in names:
                name = f"{pattern}{'_SA' if kind == '_SA' else '_partial_ack' if kind == '_partial_ack' else ''}_{v}{'_full' if kind == '_full' else ''}"
                if kind == "_partial_ack":
                    out.append(SuiteTest("tcpVariants", name, None, drops,
                                         "Agent/TCP partial_ack_ 1 (a retransmission on every partial ACK) has no tcplab knob"))
                    continue
                full = kind == "_full"
                preset = (VARIANTS_FULL if full else VARIANTS_AGENTS)[v]
                out.append(_net4_test("tcpVariants", name, _variants_tcp(preset, kind == "_SA", full), full_drops if full else drops,
                                      full=full))
    return tuple(out)


# --- test-suite-newreno.tcl -----------------------------------------------------------------

_L14 = [14, 26, 28]
_L1 = [14, 15, 16, 17, 18, 19, 20, 21, 25]
_L1A = [24, 25, 26, 27, 28, 29, 31, 33, 36]
_L2 = [24, 25, 26, 28, 31, 35, 40, 45, 46, 47, 48]
_LRTO = list(range(15, 31)) + [37]
_LDUP = _L2 + [51]

#: The suite's tests: name -> (agent, drop list, knobs, net, stop, window). Knobs: LT singledup_
#: (ns-2.35's default 1 where a test does not set it), BF bugFix_ (default true), C1
#: newreno_changes1_ (the suite's global 0), PWD partial_window_deflation_ (global 0), ERF
#: exit_recovery_fix_, LC lessCareful_, ACKH bugFix_ack_.
NEWRENO_TESTS = {
    "reno": ("reno", _L14, "LT BF0"), "reno_noLT": ("reno", _L14, "LT0 BF0"),
    "newreno": ("newreno", _L14, "LT BF0"), "newreno_noLT": ("newreno", _L14, "LT0 BF0"),
    "newreno_B": ("newreno", _L14, "LT BF0 C1 PWD ERF"), "newreno_B_noLT": ("newreno", _L14, "LT0 BF0 C1 PWD ERF"),
    "reno1": ("reno", _L1, "BF0"), "newreno1": ("newreno", _L1, "BF0"), "newreno1_BF": ("newreno", _L1, ""),
    "newreno1_A": ("newreno", _L1, "LT BF0 C1"), "newreno1_A_noLT": ("newreno", _L1, "LT0 BF0 C1"),
    "newreno1_A_BF": ("newreno", _L1, "LT C1"), "newreno1_A_BF_LC": ("newreno", _L1, "LT C1 LC"),
    "newreno1_B0": ("newreno", _L1, "BF0 PWD ERF"), "newreno1_B": ("newreno", _L1, "LT BF0 C1 PWD ERF"),
    "newreno1_B_BF": ("newreno", _L1, "LT C1 PWD ERF"),
    "newreno1_B_BF_LC": ("newreno", _L1, "LT C1 PWD ERF"),   # (its guide says Less Careful; the test sets none)
    "newreno1_B_noLT": ("reno", _L14, "LT0 BF0"),           # (runs Test/reno's body)
    "newreno1A_A": ("newreno", _L1A, "LT BF0 C1"), "newreno1A_A_BF": ("newreno", _L1A, "LT C1"),
    "newreno1A_A_BF_LC": ("newreno", _L1A, "LT C1 LC"), "newreno1A_A_noLT": ("newreno", _L1A, "LT0 BF0 C1"),
    "reno2": ("reno", _L2, "LT BF0"), "reno2_noLT": ("reno", _L2, "LT0 BF0"), "reno2_bugfix": ("reno", _L2, "LT"),
    "reno2_bugfix_noLT": ("reno", _L2, "LT0"),
    "newreno2_A": ("newreno", _L2, "LT BF0 C1"), "newreno2_A_noLT": ("newreno", _L2, "LT0 BF0 C1"),
    "newreno2_A_bugfix": ("newreno", _L2, "C1"), "newreno2_A_bugfix_LC": ("newreno", _L2, "C1 LC"),
    "newreno2_B": ("newreno", _L2, "LT BF0 C1 PWD ERF"), "newreno2_B_noLT": ("newreno", _L2, "LT0 BF0 C1 PWD ERF"),
    "newreno2_B_bugfix": ("newreno", _L2, "C1 PWD ERF"), "newreno2_B_bugfix_LC": ("newreno", _L2, "LC C1 PWD ERF"),
    "newreno6": ("newreno", _L14 + [33], "LT BF0"),
    "newreno_rto_loss": ("newreno", _LRTO, "C1 PWD"), "newreno_rto_loss_ack": ("newreno", _LRTO, "C1 PWD ACKH"),
    "newreno_rto_dup": ("newreno", _LDUP, ""), "newreno_rto_dup_ack": ("newreno", _LDUP, "ACKH"),
    "impatient1": ("newreno", list(range(15, 28)), "net4b 10 16 C1 PWD LT"),
    "slow1": ("newreno", list(range(15, 28)), "net4b 10 16 PWD LT"),
    "impatient2": ("newreno", list(range(15, 20)), "net4b 10 16 C1 PWD LT"),
    "slow2": ("newreno", list(range(15, 20)), "net4b 10 16 PWD LT"),
    "impatient3": ("newreno", [15, 16, 17, 18, 19, 22, 27], "net4b 10 16 C1 PWD LT"),
    "slow3": ("newreno", [15, 16, 17, 18, 19, 22, 27], "net4b 10 16 PWD LT"),
    "impatient4": ("newreno", list(range(30, 56)), "net4b 20 32 C1 PWD LT"),
    "slow4": ("newreno", list(range(30, 56)), "net4b 20 32 PWD LT"),
}
#: The reordering tests (net4a, no drop): name -> (agent, the positions of fid 1's packets its
#: ErrorModel with delay_pkt_ holds back `delay_` 50 ms on s1 -> r1, knobs as above).
REORDER_DELAY = "50ms"
REORDER_TESTS = {
    "newreno5": ("newreno", [25], "LT"), "sack5": ("sack1", [25], "LT"), "newreno5_LC": ("newreno", [25], "LT LC"),
    "newreno5_noLT": ("newreno", [25], "LT0"), "newreno5_noLT_LC": ("newreno", [25], "LT0 LC"),
    "newreno5_noBF": ("newreno", [25], "LT BF0"), "newreno5_noLT_noBF": ("newreno", [25], "LT0 BF0"),
    "reno5": ("reno", [25], "LT"), "reno5_noBF": ("reno", [25], "LT BF0"), "reno5_noLT_noBF": ("reno", [25], "LT0 BF0"),
    "reno5a": ("reno", [25, 31, 35, 40], "LT"), "reno5a_noLT_noBF": ("reno", [25, 31, 35, 40], "LT0 BF0"),
}
#: newreno_rto_loss_ackf: the data packets dropped on r1 -> k1, the ACKs dropped on k1 -> r1.
ACKF = (list(range(15, 31)) + [43], [23, 24, 25, 26])
_TS = ("timestamps_ true (bugFix_ts_, ts_echo_rfc1323_): ns-2's one-way agents add ts_option_size_ 10 bytes to each data "
       "packet (TcpAgent::headersize()), keep the payload packetSize_, send ACKs of 40 bytes, and take an RTT sample from "
       "every ACK's echo rounded to the nearest tick (rtt_update()); tcplab's `timestamps` is RFC 7323's 12-byte option "
       "on every segment with the payload MSS - 12: no tcplab knob gives ns-2's packets")
NEWRENO_REFUSED = {
    "newreno_rto_loss_ts": _TS, "newreno_rto_loss_tsh": _TS, "newreno_rto_dup_ts": _TS, "newreno_rto_dup_tsh": _TS,
}


def _newreno_tcp(agent: str, knobs: str) -> dict:
    k = knobs.split()
    lt = "LT0" not in k            # ns-2.35's default singledup_ 1
    bf = "BF0" not in k            # ns-2.35's default bugFix_ true
    tcp = {"profile": "ns2", "preset": agent, "handshake": True, "syn_options": 0, "rto_initial": "6s", "rto_min": "1s",
           "limited_transmit": lt, "limited_transmit_send_one": lt, "recover_guard": bf}
    if agent == "newreno":
        tcp.update({"newreno_recover_guard": bf, "slow_but_steady": "C1" not in k, "partial_window_deflation": "PWD" in k,
                    "exit_recovery_fix": "ERF" in k, "newreno_less_careful": "LC" in k, "newreno_ack_heuristic": "ACKH" in k,
                    **NEWRENO_AGENT})
    return tcp


@functools.lru_cache(maxsize=None)
def newreno() -> tuple:
    """The tests of test-suite-newreno.tcl (Topology/net4 and its variants, as tcpVariants)."""
    out = []
    for name, (agent, lst, knobs) in NEWRENO_TESTS.items():
        k = knobs.split()
        net, stop, window = ("net4b", float(k[1]), int(k[2])) if k and k[0] == "net4b" else ("net4", 6.0, 28)
        out.append(_net4_test("newreno", name, _newreno_tcp(agent, knobs), lst, net=net, stop=stop, window=window))
    for name, (agent, held, knobs) in REORDER_TESTS.items():
        # `setup TYPE {100000} 0`: the drop list names a packet never sent.
        out.append(_net4_test("newreno", name, _newreno_tcp(agent, knobs), [], net="net4a", delayed=tuple(held)))
    out.append(_net4_test("newreno", "newreno_rto_loss_ackf", _newreno_tcp("newreno", "C1 PWD ACKH"), ACKF[0],
                          ack_positions=tuple(ACKF[1])))
    out += [SuiteTest("newreno", n, None, reason=r) for n, r in NEWRENO_REFUSED.items()]
    return tuple(out)


def drops_at_positions(sc: dict, positions: list, keep: list = (), past_end: Optional[list] = None) -> list:
    """tcplab's drops (data segment k, its n-th transmission) of the packets at `positions`
    among connection 0's packets leaving its host, from 0, as a suite's `ErrorModel/List`
    counts them. Found one at a time: a drop changes only what follows it. FullTcp's packet 1 is
    the handshake's ACK, which the `ns2-full` profile sends on its own too (`handshake_ack_alone`).
    `keep`: drops of other packets (ACKs) in place in every trial run. With `past_end` a list, a
    position past the flow's last packet (which an ErrorModel/List never reaches either) is
    appended to it instead of refused."""
    from .. import api
    from .script import nbytes

    out: list = []
    mss = None
    for p in positions:
        trial = copy.deepcopy(sc)
        trial["flows"][0]["drops"] = list(out) + list(keep)
        r = api.run(trial, series=["segments"])
        seg = r.series.segments
        tx = seg[(seg["event"] == "tx") & (seg["dir"] == "a2b") & (seg["conn"] == 0)]
        if p >= len(tx) and past_end is not None:
            past_end.append(p)
            continue
        if p >= len(tx):
            raise ValueError(f"{sc.get('name')}: the flow sends {len(tx)} packets, none at position {p}")
        row = tx.iloc[p]
        if int(row["len"]) == 0:
            raise ValueError(f"{sc.get('name')}: position {p} is a packet without data")
        if mss is None:
            mss = nbytes(api.validate(sc, tcp=True)["flows"][0]["tcp"]["mss"], "tcp.mss")
        k = (int(row["seq"]) - 1) // mss + 1
        out.append({"kind": "data", "segment": k, "transmissions": [int(row["tx"])]})
    # One entry per segment, its transmissions together.
    merged: dict = {}
    for d in out:
        merged.setdefault(d["segment"], []).extend(d["transmissions"])
    return [{"kind": "data", "segment": k, "transmissions": sorted(v)} for k, v in sorted(merged.items())]


def delays_at_positions(sc: dict, positions: list, by: str) -> list:
    """tcplab's delays (data segment k, its n-th transmission, held `by`) of the packets at
    `positions` among connection 0's packets leaving its host, from 0, as a suite's delay model
    (an `ErrorModel/List` with `delay_pkt_`) counts them; found one at a time, as the drops."""
    from .. import api
    from .script import nbytes

    out: list = []
    mss = nbytes(api.validate(sc, tcp=True)["flows"][0]["tcp"]["mss"], "tcp.mss")
    for p in positions:
        trial = copy.deepcopy(sc)
        trial["flows"][0]["delays"] = list(out)
        seg = api.run(trial, series=["segments"]).series.segments
        tx = seg[(seg["event"] == "tx") & (seg["dir"] == "a2b") & (seg["conn"] == 0)]
        if p >= len(tx):
            raise ValueError(f"{sc.get('name')}: the flow sends {len(tx)} packets, none at position {p}")
        row = tx.iloc[p]
        if int(row["len"]) == 0:
            raise ValueError(f"{sc.get('name')}: position {p} is a packet without data")
        out.append({"kind": "data", "segment": (int(row["seq"]) - 1) // mss + 1, "transmissions": [int(row["tx"])], "by": by})
    return out


# --- test-suite-sack.tcl: transcribed in suites_sack ---------------------------------------

@functools.lru_cache(maxsize=None)
def sack() -> tuple:
    """The tests of test-suite-sack.tcl (tcplab.ns2.suites_sack)."""
    from .suites_sack import tests as sack_tests
    return tuple(SuiteTest("sack", n, sc, reason=r) for n, sc, r in sack_tests())


#: The suites transcribed, each a function returning its tests.
TRANSCRIBED = {"tcpVariants": tcp_variants, "newreno": newreno, "sack": sack}
TRANSCRIBED.update(suites_more.register(sys.modules[__name__]))   # tcp-init-win
TRANSCRIBED.update(suites_old.register(sys.modules[__name__]))    # LimTransmit, rfc2581, simple, tcp
#: Suites whose tests are not transcribed yet: the reason printed in place of their counts.
NOT_TRANSCRIBED = {s: "not transcribed yet" for s in SUITES if s not in TRANSCRIBED}


def tests(suite: Optional[str] = None) -> list:
    """Every transcribed test (of one suite)."""
    all_ = [t for s, f in TRANSCRIBED.items() if suite in (None, s) for t in f()]
    return [t for t in all_ if suite is None or t.suite == suite]


def drops_as_in_suite(t: SuiteTest) -> Optional[bool]:
    """Whether the export drops the packets at the suite's positions (None: nothing dropped or
    not expressible)."""
    from .script import export

    if t.scenario is None or not (t.drops or t.delayed or t.ack_drops):
        return None
    tcl = export(t.scenario).tcl

    def listed(var: str, want: list) -> bool:
        m = re.search(var + r" droplist \{([0-9 ]*)\}", tcl)
        return (m is not None and [int(x) for x in m.group(1).split()] == want) if want else m is None

    return listed(r"\$el_0_a2b", t.drops) and listed(r"\$el_0_b2a", t.ack_drops) and listed(r"\$dl_0_a2b", t.delayed)


def _timeouts(ev: list, before: int) -> list:
    """The instants before `before` (µs) at which connection 0 retransmitted with no packet
    arriving (a timer fired), from the packets alone (as pair.conn_summary counts them)."""
    rx_at = set(e[0] for e in ev if e[1] == 1 and e[3] == "b2a")
    seen: set = set()
    out = []
    for e in ev:
        if e[0] >= before:
            break
        if e[1] == 0 and e[3] == "a2b" and e[2] == 0 and e[5] > 0:
            if e[4] in seen and e[0] not in rx_at and e[0] not in out:
                out.append(e[0])
            seen.add(e[4])
    return out


def classify(sc: dict, cmp) -> str:
    """tcplab.ns2.diff.classify, and three rules for the suites' many-drop recoveries, read from
    the packets and tcplab's own `tcp` series (its sender's state):
    - "timeout in recovery": both time out at the same instant before the divergence, tcplab's
      sender in fast recovery then, and after it tcplab sends more (its ssthresh is half the
      inflated window);
    - "NewReno recovery burst": on an ACK in NewReno's recovery ns-2 sends 2 new packets and
      tcplab more;
    - "small-window halving": tcplab enters fast recovery at the divergence with ssthresh 2
      segments and sends new data there, where ns-2's cwnd_ is 1 (slowdown(), tcp/tcp.cc)."""
    from .. import api
    from .diff import classify as first
    from .script import nbytes

    cl = first(sc, cmp)
    if cl != "unclassified":
        return cl
    t, a, b = cmp.divergence
    if _swapped(cmp, t):
        return "same-instant order"
    if _timer_phase(cmp, t):
        return "RTT tick phase"
    tcp = sc["tcp"]
    if tcp["preset"] == "tahoe" and not tcp.get("recover_guard", True) and b is not None and b[1] == 0 and b[3] == "a2b" \
            and b[5] > 0 and any(e[1] == 1 and e[3] == "b2a" and e[0] == t for e in cmp.events_ns2):
        return "Tahoe without bugFix_"
    if a is None and b is not None and b[1] == 0 and b[3] == "a2b" and b[5] > 0 and sc["tcp"]["preset"] == "newreno" \
            and _dupwnd_after_recovery(sc, cmp, t):
        return "NewReno window inflated after recovery"
    if a is None and b is not None and b[1] == 0 and b[3] == "a2b" and b[5] > 0 and tcp["preset"] == "sack1" \
            and tcp.get("limited_transmit") and _sack_block_known(sc, cmp, t):
        return "Sack1 scoreboard cleared on a new ACK"
    if not (a is not None and b is None and a[1] == 0 and a[3] == "a2b" and a[5] > 0):
        return cl
    preset = sc["tcp"]["preset"]

    def new_at(ev):
        sent_before = max((e[4] for e in ev if e[0] < t and e[1] == 0 and e[3] == "a2b" and e[5] > 0), default=0)
        return [e for e in ev if e[0] == t and e[1] == 0 and e[3] == "a2b" and e[5] > 0 and e[4] > sent_before]

    acked_at_t = any(e[0] == t and e[1] == 1 and e[3] == "b2a" for e in cmp.events_ns2)
    if preset == "newreno" and acked_at_t and len(new_at(cmp.events_ns2)) == 2 and len(new_at(cmp.events_tcplab)) > 2:
        return "NewReno recovery burst"
    if preset not in ("reno", "newreno"):
        return cl
    mss = nbytes(api.validate(sc, tcp=True)["flows"][0]["tcp"]["mss"], "tcp.mss")
    st = api.run(sc, series=["tcp"]).series.tcp
    st = st[(st["conn"] == 0) & (st["dir"] == "a2b")]
    us = (st["time_s"].astype("float64") * 1e6 + 0.5).astype("int64")
    at_t = st[us == t]
    if len(at_t) and at_t["state"].iloc[-1] == "recovery" and int(at_t["ssthresh"].iloc[-1]) == 2 * mss \
            and (st[us < t]["state"].iloc[-1] if (us < t).any() else "") != "recovery":
        return "small-window halving"
    tos_a, tos_b = _timeouts(cmp.events_tcplab, t), _timeouts(cmp.events_ns2, t)
    if tos_b and tos_a == tos_b:
        before = st[us < tos_b[-1]]
        if len(before) and before["state"].iloc[-1] == "recovery":
            return "timeout in recovery"
    return cl


#: Classes of difference found by the suites alone (the generated cases of tcplab.ns2.diff show none).
SUITE_CLASSES = {
    "RTT tick phase": "both time out on the same segment at different instants, all before alike: ns-2's RTT samples "
    "count tcpTick_ boundaries from a phase boot_time_ drawn from its random stream (TcpAgent::reset(), rtt_update(), "
    "tcp/tcp.cc), tcplab's from 0; with a coarse tick the RTO differs by a tick",
    "Tahoe without bugFix_": "ns-2's Tahoe with bugFix_ false fast-retransmits on every third duplicate ACK "
    "(TcpAgent::dupack_action(): `!bug_fix_` goes to tahoe_action, tcp/tcp.cc); tcplab's tahoe keeps the recover guard "
    "whatever recover_guard (tcp/recovery/tahoe.rs)",
    "Sack1 scoreboard cleared on a new ACK": "Sack1TcpAgent::recv() clears its scoreboard on every new ACK outside "
    "fast recovery (scb_->ClearScoreBoard(), tcp/tcp-sack1.cc): the next duplicate's SACK blocks, already known, update it "
    "again (CheckUpdate()) and singledup_'s send_one() sends a segment; tcplab keeps what was SACKed, finds no new SACK "
    "information on that duplicate and, as RFC 6675 §5 step 3 / RFC 3042 have it, sends nothing",
    "NewReno window inflated after recovery": "a NewReno recovery that ends with dupwnd_ 0 (partial ACKs zero it with "
    "partial_window_deflation_ 0) leaves last_cwnd_action_ at CWND_ACTION_DUPACK, so NewRenoTcpAgent::recv() inflates "
    "dupwnd_ on each duplicate past numdupacks_ after a fast retransmit the recover guard (bugFix_) refused, and sends "
    "on it (tcp/tcp-newreno.cc); tcplab's sender, out of recovery, does not",
}


def _firsts(ev: list, kind: int) -> dict:
    """(conn, dir, seq, len, syn) -> the first instant of an event of `kind` (0 tx, 1 rx)."""
    out: dict = {}
    for e in ev:
        if e[1] == kind:
            out.setdefault((e[2], e[3], e[4], e[5], e[6]), e[0])
    return out


def _swapped(cmp, t: int) -> bool:
    """Two packets sent at the same instants in both runs reach their receivers in swapped
    orders, the first of them at `t`: with everything before alike, only the order of two
    events at one instant (a tie the float clock breaks one way and the integer clock the
    other) can swap them in a network of FIFO queues and fixed links."""
    txa, txb = _firsts(cmp.events_tcplab, 0), _firsts(cmp.events_ns2, 0)
    rxa, rxb = _firsts(cmp.events_tcplab, 1), _firsts(cmp.events_ns2, 1)
    for here, there in ((rxa, rxb), (rxb, rxa)):
        for p, tp in here.items():
            if tp != t or p not in there or there[p] <= t or txa.get(p) != txb.get(p):
                continue
            for q, tq in there.items():
                if q != p and q[1] == p[1] and tq < there[p] and here.get(q, -1) > t and txa.get(q) == txb.get(q) is not None:
                    return True
    return False


def _timer_phase(cmp, t: int) -> bool:
    """Both runs retransmit the same segment on a timer (no packet of the connection arrives
    then), one of them at `t`, at different instants: everything before alike, the RTO differs,
    which with ns-2's estimator follows from where its RTT samples fall among the ticks of
    `tcpTick_`, whose phase is `boot_time_`, drawn from ns-2's stream (`TcpAgent::reset()`,
    `rtt_update()`, tcp/tcp.cc)."""
    def retx_on_timer(ev):
        rx = set((e[0], e[2]) for e in ev if e[1] == 1 and e[3] == "b2a")
        seen: set = set()
        out = {}
        for e in ev:
            if e[1] == 0 and e[3] == "a2b" and e[5] > 0:
                k = (e[2], e[4])
                if k in seen and (e[0], e[2]) not in rx:
                    out.setdefault(k, e[0])
                seen.add(k)
        return out

    ra, rb = retx_on_timer(cmp.events_tcplab), retx_on_timer(cmp.events_ns2)
    return any(k in rb and ta != rb[k] and t in (ta, rb[k]) and min(ta, rb[k]) == t for k, ta in ra.items())


def _sender_at_dup_ack(sc: dict, cmp, t: int):
    """When ns-2's ACK at `t` (µs) repeats the one before it (a duplicate): tcplab's first
    sender's `tcp` series, its times in µs, and the flow's dupthresh; else None."""
    from .. import api

    acks = [e for e in cmp.events_ns2 if e[1] == 1 and e[3] == "b2a" and e[0] <= t]
    if len(acks) < 2 or acks[-1][0] != t or acks[-1][7] != acks[-2][7]:
        return None
    st = api.run(sc, series=["tcp"]).series.tcp
    st = st[(st["conn"] == 0) & (st["dir"] == "a2b")]
    us = (st["time_s"].astype("float64") * 1e6 + 0.5).astype("int64")
    dupthresh = int(api.validate(sc, tcp=True)["flows"][0]["tcp"]["dupthresh"])
    return st, us, dupthresh


def _sack_block_known(sc: dict, cmp, t: int) -> bool:
    """ns-2 sends a segment on a duplicate ACK at `t` where tcplab's sender, out of recovery,
    counts the duplicate (below dupthresh) but learns nothing new from its SACK blocks: what they
    cover was SACKed before (tcplab's `sacked` unchanged), so RFC 6675 §5 step 3 / RFC 3042 send
    nothing. ns-2's Sack1 cleared its scoreboard on the last new ACK (`scb_->ClearScoreBoard()`
    in `Sack1TcpAgent::recv()` outside fast recovery, tcp/tcp-sack1.cc), so the same blocks
    update it again (`CheckUpdate()`) and `send_one()` sends (`singledup_`)."""
    found = _sender_at_dup_ack(sc, cmp, t)
    if found is None:
        return False
    st, us, dupthresh = found
    now, before = st[us == t], st[us < t]
    if not len(now) or not len(before):
        return False
    last, prev = now.iloc[-1], before.iloc[-1]
    return last["state"] != "recovery" and 0 < int(last["dupacks"]) < dupthresh \
        and int(last["sacked"]) > 0 and int(last["sacked"]) == int(prev["sacked"])


def _dupwnd_after_recovery(sc: dict, cmp, t: int) -> bool:
    """ns-2 sends new data on a duplicate ACK at `t` where tcplab's sender is out of recovery
    with more than `dupthresh` duplicates and had been in recovery before."""
    found = _sender_at_dup_ack(sc, cmp, t)
    if found is None:
        return False
    st, us, dupthresh = found
    now = st[us <= t]
    return len(now) > 0 and now["state"].iloc[-1] != "recovery" and int(now["dupacks"].iloc[-1]) > dupthresh \
        and bool((now["state"] == "recovery").any())


@dataclass
class Outcome:
    test: SuiteTest
    expressible: bool
    identical: bool = False
    core: bool = False
    cls: str = ""                 # a key of tcplab.ns2.diff.CLASSES, or the refusal
    faithful_drops: Optional[bool] = None
    comparison: object = None


def run_test(t: SuiteTest, max_wall: float = 60.0) -> Outcome:
    from .. import api
    from .pair import compare

    if t.scenario is None:
        return Outcome(t, False, cls=t.reason)
    try:
        faithful = drops_as_in_suite(t)
        c = compare(t.scenario, max_wall=max_wall)
    except api._core.ScenarioError as e:
        return Outcome(t, False, cls=f"refused: {e}")
    return Outcome(t, True, c.identical, c.core, classify(t.scenario, c), faithful, c)


def main(argv: Optional[list] = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tcplab.ns2.suites", description=__doc__.split("\n\n")[0])
    ap.add_argument("--suite", action="append", help="only this suite (repeatable)")
    ap.add_argument("--test", action="append", help="only this test (repeatable)")
    ap.add_argument("--show", action="store_true", help="print each differing test's first divergence")
    args = ap.parse_args(argv)
    from .diff import CLASSES as DIFF_CLASSES
    from .pair import describe

    CLASSES = {**DIFF_CLASSES, **SUITE_CLASSES}
    from .runner import Ns2NotFound

    for s in args.suite or ():
        if s not in SUITES:
            print(f"error: --suite {s!r}: the suites are {', '.join(SUITES)}", file=sys.stderr)
            return 2
    everything = tests()
    unknown = sorted(set(args.test or ()) - {t.name for t in everything})
    if unknown:
        print(f"error: --test {', '.join(unknown)}: no such transcribed test (python -m tcplab.ns2.suites --show lists them)",
              file=sys.stderr)
        return 2
    sel = [t for t in everything if (not args.suite or t.suite in args.suite) and (not args.test or t.name in args.test)]
    per: dict = {}
    causes: dict = {}
    try:
        for t in sel:
            o = run_test(t)
            row = per.setdefault(t.suite, Counter())
            row["tests"] += 1
            row["expressible"] += o.expressible
            row["identical"] += o.identical
            row["core"] += o.core
            if o.expressible and not o.identical:
                causes.setdefault(t.suite, Counter())[o.cls] += 1
            if o.faithful_drops is False:
                row["drops differ"] += 1
            if args.show and not o.identical:
                line = f"{t.suite}/{t.name}: "
                if not o.expressible:
                    print(line + f"not expressible: {o.cls}")
                    continue
                tt, a, b = o.comparison.divergence
                print(line + f"{o.cls}; core {'yes' if o.core else 'no'}"
                      + ("" if o.faithful_drops is not False else "; the export's drop positions differ from the suite's"))
                print(f"    only tcplab: {describe(a)}\n    only ns-2:   {describe(b)}")
    except Ns2NotFound as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"{'suite':<14}{'tests':>6}{'expressible':>13}{'identical':>11}{'core':>6}")
    tot = Counter()
    for s in SUITES:
        if s in per:
            r = per[s]
            tot.update(r)
            print(f"{s:<14}{r['tests']:>6}{r['expressible']:>13}{r['identical']:>11}{r['core']:>6}"
                  + (f"   ({r['drops differ']} with the drop positions not the suite's)" if r["drops differ"] else ""))
        elif s in NOT_TRANSCRIBED and not args.test:
            print(f"{s:<14}  {NOT_TRANSCRIBED[s]}")
    print(f"{'all':<14}{tot['tests']:>6}{tot['expressible']:>13}{tot['identical']:>11}{tot['core']:>6}")
    for s, cs in causes.items():
        print(f"{s}: differences by first-divergence class")
        for cl, k in cs.most_common():
            print(f"  {cl}: {k}" + (f"  ({CLASSES[cl]})" if cl in CLASSES else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
