"""tcplab beside ns-2 (docs/ns2.md).

- The export: what ns-2 cannot express is refused by key path; the knobs of the `ns2` profile
  land on the agents' variables; a chosen drop becomes its position in an `ErrorModel/List`;
  every example scenario either exports or is refused by a key path. No `ns` needed.
- Without `ns`, the commands say how to install it and exit 2.
- With `ns` (CI installs the `ns2` package): the trace reader maps ns-2's packet numbers to
  tcplab's byte sequence, and the differential cases of `tcplab.ns2.diff` that are packet-identical
  today are asserted identical, while each known class of difference is asserted to show exactly
  as named (its cause, the ns-2 function, in docs/ns2.md): none is skipped silently.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import tcplab
from tcplab import ns2
from tcplab.ns2 import diff
from tcplab.ns2.script import export
from conftest import needs_ns


EXAMPLES = Path(tcplab.__file__).resolve().parent / "examples"

BASE = {
    "topology": {"kind": "single_link", "rate": "1500kbps", "delay": "10ms", "queue": 20},
    "tcp": {"profile": "ns2", "preset": "reno", "handshake": True, "syn_options": 0},
    "flows": [{"name": "f", "bytes": "20000B"}],
}


def scenario(**over) -> dict:
    import copy

    d = copy.deepcopy(BASE)
    for k, v in over.items():
        if k == "tcp":
            d["tcp"].update(v)
        elif k == "flow":
            d["flows"][0].update(v)
        else:
            d[k] = v
    return d


# --- the export (no ns needed) ---


@pytest.mark.parametrize("over, path", [
    ({"tcp": {"preset": "sack"}}, "tcp.variant"),
    ({"tcp": {"rwnd": "20500B"}}, "tcp.rwnd"),
    ({"tcp": {"abc": 1}}, "tcp.abc"),
    ({"tcp": {"rto_model": "rfc6298"}}, "tcp.rto_model"),
    ({"tcp": {"fin": True, "handshake": False}}, "tcp.handshake"),
    ({"tcp": {"profile": "ns2-full", "preset": "fack"}}, "tcp.variant"),
    ({"tcp": {"profile": "ns2-full", "precision_reduce": True}}, "tcp.precision_reduce"),
    ({"tcp": {"profile": "ns2-full", "preset": "newreno", "newreno_inflate_after_quiet_exit": True}}, "tcp.newreno_inflate_after_quiet_exit"),
    ({"tcp": {"initial_window": "rfc3390"}}, "tcp.initial_window"),
    ({"tcp": {"limited_transmit": True}}, "tcp.limited_transmit"),
    ({"flow": {"bytes": "20500B"}}, "flows[0].bytes"),
    ({"flow": {"repeat": 2}}, "flows[0].repeat"),
    ({"flow": {"delays": [{"kind": "data", "segment": 3, "by": "5ms"}, {"kind": "data", "segment": 5, "by": "6ms"}]}},
     "flows[0].delays[1].by"),
    ({"flow": {"delays": [{"kind": "data", "segment": 3, "by": "5ms"}], "drops": [{"kind": "data", "segment": 6}]}},
     "flows[0].delays"),
    ({"flow": {"tcp": {"variant": "fack-rh", "sack": True}}}, "flows[0].tcp.variant"),
    ({"topology": {"kind": "single_link", "rate": "1Mbps", "delay": "10ms", "queue": {"bytes": "20KB"}}}, "topology.queue.bytes"),
    ({"topology": {"kind": "single_link", "rate": "1Mbps", "delay": "10ms", "loss": 0.01, "loss_pattern": "periodic"}}, "topology.loss_pattern"),
    ({"apps": [{"kind": "reqresp", "response": "10KB"}]}, "apps[0].mode"),
    ({"apps": [{"kind": "http10", "response": "10KB"}]}, "apps[0].mode"),
    ({"apps": [{"kind": "ftp", "file": "1MB"}]}, "apps[0].mode"),         # two-way: FullTcp (the ns2-full profile) only
    ({"apps": [{"kind": "http11", "response": "10KB"}]}, "apps[0].tcp.fin"),      # http11: FullTcp (ns2-full) only
    ({"apps": [{"kind": "cbr", "rate": "100kbps"}]}, "apps[0].packet"),
    ({"apps": [{"kind": "onoff", "rate": "100kbps", "packet": "200B", "on": {"pareto": {"shape": 1.5, "mean": "1s"}},
                "off": {"exponential": "1s"}}]}, "apps[0].on"),
])
def test_export_refuses_what_ns2_cannot_express_by_key_path(over, path):
    with pytest.raises(tcplab.ScenarioError) as e:
        export(scenario(**over))
    assert e.value.path == path, str(e.value)
    assert "ns-2 cannot express this" in str(e.value)


def test_export_maps_the_ns2_profile_knobs_to_the_agent():
    tcl = export(scenario(tcp={"preset": "newreno", "initial_window": 3, "max_burst": 4, "delayed_ack": True})).tcl
    for line in ("[new Agent/TCP/Newreno]", "set packetSize_ 1000", "set window_ 20", "set windowInit_ 3", "set syn_ 1",
                 "set tcpTick_ 0.01", "set minrto_ 1", "set maxrto_ 64", "set rtxcur_init_ 3", "set maxburst_ 4",
                 "set singledup_ 0", "set precisionReduce_ 0", "set bugFix_ 1", "set exit_recovery_fix_ 0",
                 "set newreno_changes1_ 1", "[new Agent/TCPSink/DelAck]", "set interval_ 0.1",
                 "$ns duplex-link $n(0) $n(1) 1500000 0.01 DropTail"):
        assert line in tcl, line
    # tcplab's 20 waiting packets are ns-2's DropTail queue-limit 21 (DropTail::enque()).
    assert "$ns queue-limit $n(0) $n(1) 21" in tcl


def test_export_sack_agents_take_the_sack_sink():
    tcl = export(scenario(tcp={"preset": "sack1"})).tcl
    assert "[new Agent/TCP/Sack1]" in tcl and "[new Agent/TCPSink/Sack1]" in tcl and "set maxSackBlocks_ 3" in tcl
    tcl = export(scenario(tcp={"preset": "fack", "delayed_ack": True})).tcl
    assert "[new Agent/TCP/Fack]" in tcl and "[new Agent/TCPSink/Sack1/DelAck]" in tcl


def test_a_chosen_drop_is_its_position_among_the_flows_packets():
    # With a SYN (packet 0) and IW 1, data segments 1, 2, 3 leave as packets 1, 2, 3 (ns-2 counts from 0).
    s = export(scenario(tcp={"initial_window": 1}, flow={"drops": [{"kind": "data", "segment": 3}]}))
    assert "$el_0_a2b droplist {3}" in s.tcl and "bind $el_0_a2b 0" in s.tcl
    # The second transmission of segment 2 comes after every packet sent before its repair.
    s = export(scenario(flow={"drops": [{"kind": "data", "segment": 2, "transmissions": [1, 2]}]}))
    assert "droplist {2 " in s.tcl


def test_a_chosen_delay_is_ns2s_delay_model_at_its_position():
    # Segment 5 is packet 5 (packet 0 is the SYN): one ErrorModel/List with delay_pkt_ holds it
    # 50 ms, bound to the flow behind s -> r's enqueue trace (the trace shows it when sent).
    sc = scenario(flow={"delays": [{"kind": "data", "segment": 5, "by": "50ms"}, {"kind": "data", "segment": 9, "by": "50ms"}]})
    tcl = export(sc).tcl
    for line in ("$dl_0_a2b set delay_pkt_ true", "$dl_0_a2b set drop_ false", "$dl_0_a2b set delay_ 0.05",
                 "$dl_0_a2b droplist {5 9}", "$ed_0_a2b bind $dl_0_a2b 0", "$ed_0_a2b target [[[$ns link $n(0) $n(1)] set enqT_] target]",
                 "[[$ns link $n(0) $n(1)] set enqT_] target $ed_0_a2b"):
        assert line in tcl.splitlines(), line
    # An ACK delay is counted among the ACKs (the SYN-ACK is packet 0 of that direction).
    tcl = export(scenario(flow={"delays": [{"kind": "ack", "number": 3, "by": "5ms"}]})).tcl
    assert "$dl_0_b2a droplist {3}" in tcl.splitlines() and "$dl_0_b2a set delay_ 0.005" in tcl.splitlines()


@needs_ns
def test_a_delayed_segment_reorders_as_in_ns2():
    # Held longer than the rest of the window takes: three duplicates, a spurious fast retransmit.
    c = ns2.compare(scenario(flow={"bytes": "60000B", "delays": [{"kind": "data", "segment": 12, "by": "60ms"}]}))
    assert c.identical, c.text
    a = c.tcplab[0]
    assert a["retx_ack"] >= 1 and 12 * 1000 - 999 in a["retx_set"]


def test_red_and_random_loss_are_exported():
    tcl = export(scenario(topology={"kind": "single_link", "rate": "1Mbps", "delay": "10ms", "loss": 0.01,
                                    "queue": {"kind": "red", "packets": 30}})).tcl
    assert "RED ;# link" in tcl and "set thresh_ 5" in tcl and "set maxthresh_ 15" in tcl and "set linterm_ 10" in tcl
    assert "$ns queue-limit $n(0) $n(1) 30" in tcl   # RED drops at qlim_ waiting (REDQueue::enque())
    assert "set rate_ 0.01" in tcl and "[new RandomVariable/Uniform]" in tcl


def test_every_example_exports_or_is_refused_by_key_path():
    outcomes = {}
    for f in sorted(EXAMPLES.glob("*.toml")):
        try:
            export(f)
            outcomes[f.name] = "exported"
        except tcplab.ScenarioError as e:
            assert e.path, f"{f.name}: a refusal without a key path: {e}"
            outcomes[f.name] = e.path
    assert outcomes, "no examples found"
    assert "exported" in outcomes.values() or all(outcomes.values())


def test_without_ns_the_commands_say_how_to_install_it_and_exit_2(tmp_path):
    scen = tmp_path / "s.toml"
    scen.write_text('[topology]\nkind = "single_link"\nrate = "1Mbps"\ndelay = "10ms"\n[tcp]\nprofile = "ns2"\n[[flows]]\nbytes = "10000B"\n')
    env = {**os.environ, "PATH": str(tmp_path)}   # no `ns` there
    for cmd in ("run", "compare"):
        out = subprocess.run([sys.executable, "-m", "tcplab.cli", "ns2", cmd, str(scen)], capture_output=True, text=True, env=env, timeout=60)
        assert out.returncode == 2, out.stderr
        assert "apt-get install ns2" in out.stderr
    # The export needs no ns.
    out = subprocess.run([sys.executable, "-m", "tcplab.cli", "ns2", "export", str(scen)], capture_output=True, text=True, env=env, timeout=60)
    assert out.returncode == 0 and "$ns run" in out.stdout


def test_a_refusal_is_one_error_line_with_exit_2(tmp_path, cli):
    scen = tmp_path / "s.toml"
    scen.write_text('[topology]\nkind = "single_link"\nrate = "1Mbps"\ndelay = "10ms"\n[tcp]\nprofile = "ns2"\nvariant = "fack-rh"\nsack = true\n[[flows]]\nbytes = "10000B"\n')
    out = cli("ns2", "export", scen)
    assert out.returncode == 2 and out.stderr.startswith("error: tcp.variant: ns-2 cannot express this")


# --- with ns ---


@needs_ns
def test_ns2_is_stopped_at_its_wall_time():
    sc = scenario(topology=DUMBBELL, flows=[{"from": "s{i}", "to": "r{i}", "count": 2, "bytes": "unlimited"}], duration="300s")
    with pytest.raises(ns2.Ns2Error, match="wall time"):
        ns2.run(sc, max_wall=0.2)


@needs_ns
def test_trace_maps_packet_numbers_to_tcplab_bytes():
    r = ns2.run(scenario(tcp={"initial_window": 2}, flow={"bytes": "5000B"}))
    seg = r.segments
    tx = seg[(seg["event"] == "tx") & (seg["dir"] == "a2b")]
    assert bool(tx["syn"].iloc[0]) and int(tx["seq"].iloc[0]) == 0        # ns-2's packet 0 with syn_
    assert [int(x) for x in tx["seq"].iloc[1:]] == [1, 1001, 2001, 3001, 4001]
    acks = seg[(seg["event"] == "tx") & (seg["dir"] == "b2a")]
    assert bool(acks["syn"].iloc[0]) and int(acks["ack"].iloc[0]) == 1     # the SYN's ACK stands as the SYN-ACK
    assert int(acks["ack"].iloc[-1]) == 5001
    assert set(tx["wire_bytes"].iloc[1:]) == {1040}


#: A hand-made ns-2 trace of the 5000-byte transfer of `scenario(...)`: the SYN and its ACK (the
#: SYN-ACK), data packet 1 dropped at its queue and sent again, its ACK and a duplicate.
HAND_TRACE = """\
+ 0.000000 0 1 tcp 40 ------- 0 0.0 1.0 0 0
- 0.000000 0 1 tcp 40 ------- 0 0.0 1.0 0 0
r 0.010213 0 1 tcp 40 ------- 0 0.0 1.0 0 0
+ 0.010213 1 0 ack 40 ------- 0 1.0 0.0 0 1
r 0.020427 1 0 ack 40 ------- 0 1.0 0.0 0 1
+ 0.020427 0 1 tcp 1040 ------- 0 0.0 1.0 1 2
d 0.020427 0 1 tcp 1040 ------- 0 0.0 1.0 1 2
+ 1.020427 0 1 tcp 1040 ------- 0 0.0 1.0 1 3
r 1.036000 0 1 tcp 1040 ------- 0 0.0 1.0 1 3
+ 1.036000 1 0 ack 40 ------- 0 1.0 0.0 1 4
+ 1.040000 1 0 ack 40 ------- 0 1.0 0.0 1 5
"""


def test_read_trace_gives_the_segments_columns_row_by_row(tmp_path):
    from tcplab.ns2 import runner

    script = export(scenario(tcp={"initial_window": 2}, flow={"bytes": "5000B"}))
    (tmp_path / "t.tr").write_text(HAND_TRACE)
    seg, drops = runner.read_trace(str(tmp_path / "t.tr"), script)
    assert list(seg.columns) == runner.SEGMENT_COLUMNS
    cols = ["dir", "time_s", "seq", "len", "end", "ack", "tcp_flags", "syn", "retx", "dup_ack", "event", "tx", "wire_bytes"]
    rows = [tuple(None if v is pd.NA else v for v in r) for r in seg[cols].itertuples(index=False)]
    assert rows == [
        ("a2b", 0.0, 0, 0, 1, None, "S", True, False, False, "tx", 1, 40),
        ("a2b", 0.010213, 0, 0, 1, None, "S", True, False, False, "rx", 1, 40),
        ("b2a", 0.010213, 0, 0, 1, 1, "SA", True, False, False, "tx", 1, 40),
        ("b2a", 0.020427, 0, 0, 1, 1, "SA", True, False, False, "rx", 1, 40),
        ("a2b", 0.020427, 1, 1000, 1001, None, "A", False, False, False, "tx", 1, 1040),
        ("a2b", 1.020427, 1, 1000, 1001, None, "A", False, True, False, "tx", 2, 1040),
        ("a2b", 1.036, 1, 1000, 1001, None, "A", False, True, False, "rx", 2, 1040),
        ("b2a", 1.036, 1, 0, 1, 1001, "A", False, False, False, "tx", 0, 40),
        ("b2a", 1.04, 1, 0, 1, 1001, "A", False, False, True, "tx", 0, 40),
    ]
    assert set(seg["conn"]) == {0} and set(seg["flow"]) == {"f"} and all(s == () for s in seg["sack"])
    assert not seg["fin"].any() and not seg["rst"].any()
    assert {c: str(t) for c, t in seg.dtypes.items()} == {
        "conn": "int64", "dir": "category", "time_s": "float64", "seq": "int64", "len": "int64", "end": "int64", "ack": "Int64",
        "tcp_flags": "object", "syn": "bool", "fin": "bool", "rst": "bool", "retx": "bool", "dup_ack": "bool", "sack": "object",
        "event": "object", "tx": "int64", "flow": "object", "wire_bytes": "int64"}
    assert list(seg["dir"].cat.categories) == ["a2b", "b2a"]
    assert drops.to_dict("records") == [dict(time_s=0.020427, link="link:sender->receiver", reason="queue", conn=0, dir="a2b",
                                             seq=1, len=1000, syn=False, fin=False, retx=False, tx=1, wire_bytes=1040)]
    # An empty trace: no rows, the same columns and types.
    (tmp_path / "e.tr").write_text("")
    empty, _ = runner.read_trace(str(tmp_path / "e.tr"), script)
    assert len(empty) == 0 and empty.dtypes.equals(seg.dtypes)


#: Generated cases (tcplab.ns2.diff.case(i), seed 1) and what they show today.
IDENTICAL = [0, 1, 2, 5, 6, 7, 11, 12,            # tahoe, reno, newreno with drops, DelAck on and off
             3,                                    # sack1, 4 drops: 8 bytes a SACK block (sack_option_header off)
             90,                                   # tahoe with DelAck: a go-back-N copy of the highest in-order packet delayed
             9, 249,                               # fack, IW 3: cwnd 2 after the SYN; IW 1: a new ACK with SACK blocks a duplicate
             73, 88, 153, 193,                     # sack1: the ACK that starts recovery sends the fast retransmission alone
             203]                                  # sack1: recover_ = 0 once the recovery is over
KNOWN = {
    27: "same-instant order",     # newreno, a queue overflow at the instant the link frees
}


@needs_ns
@pytest.mark.parametrize("i", IDENTICAL)
def test_generated_cases_are_packet_identical(i):
    sc = diff.case(i)
    c = ns2.compare(sc)
    assert c.identical, f"case {i}: {c.text}"
    assert c.core and c.tcplab == c.ns2


DUMBBELL = {"kind": "dumbbell", "pairs": 2, "access_rate": "10Mbps", "access_delay": "1ms", "bottleneck_rate": "1500kbps",
            "bottleneck_delay": "20ms", "queue": 10}


@needs_ns
@pytest.mark.parametrize("over", [
    {"flow": {"drops": [{"kind": "syn"}]}},                                            # the SYN timeout (ssthresh 2, IW 1)
    {"flow": {"drops": [{"kind": "ack", "number": k} for k in (2, 3, 4)]}},            # ACKs lost on the way back
    {"tcp": {"preset": "newreno"}, "flow": {"drops": [{"kind": "data", "segment": 4, "transmissions": [1, 2]}]}},
    {"topology": DUMBBELL, "tcp": {"preset": "newreno"},                                # two flows through one bottleneck
     "flows": [{"from": "s{i}", "to": "r{i}", "count": 2, "bytes": "50000B", "start_spacing": "30ms", "drops": [{"kind": "data", "segment": 5}]}]},
], ids=["syn-drop", "ack-drops", "lost-retransmission", "dumbbell-two-flows"])
def test_drop_kinds_and_topologies_are_packet_identical(over):
    c = ns2.compare(scenario(**over))
    assert c.identical, c.text


@needs_ns
@pytest.mark.parametrize("i, cls", sorted(KNOWN.items()))
def test_known_classes_of_difference_show_as_named(i, cls):
    sc = diff.case(i)
    c = ns2.compare(sc)
    assert not c.identical
    assert diff.classify(sc, c) == cls, c.text


@needs_ns
def test_a_timeout_in_recovery_halves_the_uninflated_window_in_ns2():
    """A lost fast retransmission: the timer fires in Reno's recovery. ns-2's RenoTcpAgent::timeout()
    zeroes dupwnd_ first, and so does the ns2 profile: ssthresh 5 segments (not 10, half the
    inflated window), and the runs are packet-identical."""
    sc = scenario(tcp={"initial_window": 4}, flow={"bytes": "60000B", "drops": [{"kind": "data", "segment": 20, "transmissions": [1, 2]}]})
    c = ns2.compare(sc)
    assert c.identical, c.text
    assert c.tcplab[0]["timeouts"] == c.ns2[0]["timeouts"] == 1
    r = tcplab.run(sc, series=["tcp"])
    t = r.series.tcp
    assert int(t[t["state"] == "loss"]["ssthresh"].iloc[0]) == 5000


def test_ns2_full_flows_export_as_two_fulltcp_agents():
    tcl = export(scenario(tcp={"profile": "ns2-full", "preset": "newreno", "handshake": True, "syn_options": 0}, flow={"bytes": "3000B"})).tcl
    for line in ("set tcp(0) [new Agent/TCP/FullTcp/Newreno]", "set sink(0) [new Agent/TCP/FullTcp/Newreno]", "$sink(0) listen",
                 "$tcp(0) set segsize_ 536", "$sink(0) set segsperack_ 1", "$sink(0) set interval_ 0.1", "$tcp(0) set nodelay_ 0",
                 "$tcp(0) set tcprexmtthresh_ 3", "advance-bytes 3000; $tcp(0) set close_on_empty_ true", "Trace set show_tcphdr_ 1"):
        assert line in tcl, line


@needs_ns
def test_ns2_full_sends_the_handshakes_own_ack_as_ns2():
    """ns-2's FullTcp sends the handshake's ACK as a packet of its own before the data, and so does
    the `ns2-full` profile (`handshake_ack_alone`); the trace reader reads FullTcp's byte sequence,
    ACK numbers and flags (FIN on the last data segment)."""
    sc = scenario(tcp={"profile": "ns2-full", "preset": "reno"}, flow={"bytes": "3000B"})
    c = ns2.compare(sc)
    assert c.core
    seg = c.ns2_run.segments
    tx = seg[(seg["event"] == "tx") & (seg["dir"] == "a2b")]
    assert [int(x) for x in tx["seq"]] == [0, 1, 1, 537, 1073, 1609, 2145, 2681, 3002]
    assert list(tx["tcp_flags"])[-2] == "FA" and int(tx["len"].iloc[-2]) == 320
    ours = tcplab.run(sc, series=["segments"]).series.segments
    ours = ours[(ours["event"] == "tx") & (ours["dir"] == "a2b")]
    assert [int(x) for x in ours["seq"]][:3] == [0, 1, 1] and int(ours["len"].iloc[1]) == 0
    # The FIN rides on the last data segment in both (`close_on_empty_`; the profile's
    # `fin_with_data`): the sender's packets are the same to its FIN. The first difference is the
    # other end's close: ns-2's FullTcp sink closes on the FIN (`halfclose_` false) and sends its
    # own FIN after its ACK at that instant; a [[flows]] receiver has no application to close it.
    assert list(ours["tcp_flags"])[-1] == "FA" and int(ours["len"].iloc[-1]) == 320
    assert [int(x) for x in ours["seq"]] == [int(x) for x in tx["seq"]][:-1]
    t, a, b = c.divergence
    assert a is None and b[1] == 0 and b[3] == "b2a" and b[8] and b[5] == 0, c.text


CBR = {"kind": "cbr", "rate": "500kbps", "packet": "500B", "start": "100ms", "stop": "2s"}


def test_udp_sources_export_as_ns2_traffic_generators():
    pareto = {"kind": "onoff", "rate": "400kbps", "packet": "210B", "on": {"pareto": {"shape": 1.5, "mean": "100ms"}},
              "off": {"pareto": {"shape": 1.5, "mean": "200ms"}}, "stop": "3s"}
    tcl = export(scenario(apps=[CBR, pareto])).tcl
    for line in ("set app(0) [new Application/Traffic/CBR]", "$app(0) set rate_ 500000", "$app(0) set packetSize_ 500",
                 '$ns at 2 "$app(0) stop"', "set app(1) [new Application/Traffic/Pareto]", "$app(1) set shape_ 1.5",
                 "$app(1) set burst_time_ 0.1", "$app(1) set idle_time_ 0.2", "$app(1) set rate_ 400000"):
        assert line in tcl, line


@needs_ns
def test_tcp_beside_cbr_cross_traffic_is_packet_identical():
    """A CBR source (deterministic in both) sharing the link with a Reno transfer: the same TCP
    packets and the same drops on the link, the datagrams' among them."""
    c = ns2.compare(scenario(flow={"bytes": "100000B"}, apps=[CBR]))
    assert c.identical, c.text
    assert c.links_tcplab == c.links_ns2 and sum(c.links_ns2.values()) > c.ns2[0]["drops"]   # UDP drops too


@needs_ns
def test_random_loss_and_red_run_in_ns2():
    """ns-2 draws from its own streams: these compare as statistics; here, that they run and drop."""
    topo = {"kind": "custom", "nodes": ["sender", "router", "receiver"], "links": [
        {"a": "sender", "b": "router", "rate": "10Mbps", "delay": "1ms"},
        {"a": "router", "b": "receiver", "rate": "1500kbps", "delay": "20ms", "loss": 0.05,
         "queue": {"kind": "red", "packets": 30, "red": {"min_th": 3, "max_th": 9, "max_p": 0.1, "w_q": 0.02}}}]}
    r = ns2.run(scenario(topology=topo, tcp={"initial_window": 4}, flows=[{"from": "sender", "to": "receiver", "bytes": "200000B"}]))
    assert len(r.drops) > 0 and set(r.drops["link"]) == {"link1:router->receiver"}
    tx = r.segments[(r.segments["event"] == "tx") & (r.segments["dir"] == "a2b")]
    assert int(tx["end"].max()) == 200001   # every byte sent, the transfer complete


@needs_ns
def test_an_unlimited_fulltcp_transfer_runs_to_the_duration():
    sc = scenario(tcp={"profile": "ns2-full", "preset": "reno"}, flow={"bytes": "unlimited"}, duration="3s")
    c = ns2.compare(sc)
    assert c.core and c.ns2[0]["data_segs"] == c.tcplab[0]["data_segs"] > 900, c.text


@needs_ns
def test_sackrh_also_starts_at_cwnd_2_after_the_syn():
    """SackRHTcpAgent::recv() opens cwnd_ on the SYN's ACK without the reset to windowInit_ (1 in
    the preset): ns-2 and tcplab (`syn_ack_opens_cwnd`) send the first two data segments together."""
    sc = scenario(tcp={"preset": "sack-rh"}, flow={"bytes": "30000B", "drops": [{"kind": "data", "segment": 7}]})
    c = ns2.compare(sc)
    assert c.core, c.text
    for ev in (c.events_tcplab, c.events_ns2):
        data = [e for e in ev if e[1] == 0 and e[3] == "a2b" and e[5] > 0]
        assert [e[4] for e in data if e[0] == data[0][0]] == [1, 1001]


def test_a_refusal_under_another_profile_says_which_to_write():
    with pytest.raises(tcplab.ScenarioError) as e:
        export({"topology": BASE["topology"], "flows": [{"bytes": "10000B"}]})
    assert e.value.path == "tcp.rto_model" and "write one of them" in str(e.value)


@needs_ns
def test_without_a_syn_packet_0_is_40_bytes_short():
    """The `ns2` profile as it is (no handshake): ns-2's packet 0 leaves without its header."""
    sc = diff.case(0, as_is=True)
    c = ns2.compare(sc)
    assert diff.classify(sc, c) == "no SYN"
    ns_first = c.ns2_run.segments.iloc[0]
    assert int(ns_first["wire_bytes"]) == 1000 and int(ns_first["len"]) == 1000


@needs_ns
def test_compare_command_prints_the_table_and_draws_the_figure(tmp_path, cli):
    scen = tmp_path / "s.toml"
    scen.write_text('[topology]\nkind = "single_link"\nrate = "1500kbps"\ndelay = "10ms"\nqueue = 20\n'
                    '[tcp]\nprofile = "ns2"\npreset = "reno"\nhandshake = true\nsyn_options = 0\n'
                    '[[flows]]\nbytes = "20000B"\ndrops = [{kind = "data", segment = 6}]\n')
    fig = tmp_path / "tsg.png"
    out = cli("ns2", "compare", scen, "--plot", fig, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "packet-identical" in out.stdout and "retransmissions" in out.stdout and fig.stat().st_size > 0
    out = cli("ns2", "run", scen, "--csv", tmp_path / "p.csv", timeout=120)
    assert out.returncode == 0 and "1 retransmissions" in out.stdout


# --- ns-2.35's validation suites run live (tcplab.ns2.suites) ---

from tcplab.ns2 import suites  # noqa: E402


def test_tcp_variants_suite_is_transcribed_with_its_drop_lists():
    # No ns needed: the scenarios, and the packets their drops hit, come from tcplab's own runs.
    ts = {t.name: t for t in suites.tests("tcpVariants")}
    assert len(ts) == 74
    refused = sorted(n for n, t in ts.items() if t.scenario is None)
    assert refused == ["multiple2_partial_ack_sack", "multiple_partial_ack_sack"]
    assert "partial_ack_" in ts["multiple_partial_ack_sack"].reason
    # The second drop of twodrops_reno ({14 28}) is packet 28: the fast retransmission of 14.
    assert ts["twodrops_reno"].scenario["flows"][0]["drops"] == [{"kind": "data", "segment": 14, "transmissions": [1, 2]}]
    # FullTcp's packet 1 is the handshake's ACK (tcplab's too, `handshake_ack_alone`): packet 16
    # carries data segment 15.
    assert ts["onedrop_reno_full"].scenario["flows"][0]["drops"] == [{"kind": "data", "segment": 15, "transmissions": [1]}]
    for n in ("onedrop_reno", "twodrops_reno", "fourdrops_sack", "onedrop_reno_full", "multiple_tahoe"):
        assert suites.drops_as_in_suite(ts[n]) is True, n


#: Suite tests and what they show today: packet-identical, or the named class of their first
#: divergence (docs/ns2.md), with whether they still agree at the core.
SUITE_TESTS = {
    ("tcpVariants", "onedrop_reno"): ("identical", True),
    ("tcpVariants", "twodrops_SA_newreno"): ("identical", True),
    ("tcpVariants", "multiple2_tahoe"): ("identical", True),
    ("tcpVariants", "onedrop_sack"): ("identical", True),   # 8 bytes a SACK block, as ns-2
    ("tcpVariants", "onedrop_fack"): ("identical", True),   # cwnd 2 after the SYN (syn_ack_opens_cwnd)
    ("tcpVariants", "twodrops_reno"): ("identical", True),  # the timeout in recovery, as ns-2
    ("tcpVariants", "onedrop_newreno_full"): ("identical", True),   # the handshake's ACK alone
    ("tcpVariants", "threedrops_reno_full"): ("identical", True),   # FullTcp's second fast retransmit
    ("tcpVariants", "onedrop_sack_full"): ("identical", True),      # opencwnd() on recovery's last ACK
    ("tcpVariants", "fourdrops_sack_full"): ("identical", True),
    ("tcpVariants", "multiple_SA_sack"): ("Sack1 scoreboard cleared on a new ACK", True),
    ("newreno", "newreno1_BF"): ("identical", True),
    ("newreno", "newreno_rto_dup"): ("identical", True),    # send_much(0, 0, 2) (newreno_recovery_burst)
    ("newreno", "reno1"): ("identical", True),              # cwnd 1 from a window of 3 (halve_cwnd_unfloored)
    ("newreno", "impatient1"): ("identical", True),
    ("newreno", "reno5a"): ("identical", True),             # four packets held back 50 ms (delay_pkt_)
    ("newreno", "sack5"): ("identical", True),
    ("newreno", "newreno5"): ("identical", True),           # newreno_inflate_after_quiet_exit
    ("newreno", "newreno5_noLT"): ("identical", True),
    ("newreno", "newreno_rto_loss_ackf"): ("identical", True),
    ("tcp-init-win", "sack1"): ("identical", True),         # IW 4, 3, 2 by packet size (windowInitOption_ 2)
    ("tcp-init-win", "reno2"): ("no SYN", True),
    ("tcp-init-win", "slowLink"): ("identical", True),
    ("tcp-init-win", "droppedSYN1"): ("identical", True),
    ("tcp-init-win", "droppedPKT3"): ("identical", True),
    ("rfc2581", "immediateAck"): ("identical", True),        # useHeaders_ false, rfc2988_ false
    ("rfc2581", "noImmediateAckSack"): ("identical", True),
    ("LimTransmit", "onedrop_SA_sack"): ("identical", True),  # the SYN's ACK delayed (delack_synack)
    ("simple", "tahoe1"): ("identical", True),
    ("simple", "reno2"): ("identical", True),
    ("simple", "tahoe1RED"): ("identical", True),
    ("simple", "phase"): ("same-instant order", False),       # two packets reach r1 at 5.005040 s
    ("simple", "bug"): ("Tahoe without bugFix_", False),
    ("tcp", "timers_backoffs"): ("identical", True),          # ten drops, the backoff
    ("tcp", "dialup1"): ("identical", True),                  # rfc2988_ false, 1500-byte packets at 9.6 kb/s
    ("tcp", "timers1"): ("RTT tick phase", True),
}


def test_newreno_suite_is_transcribed_with_its_refusals():
    ts = {t.name: t for t in suites.tests("newreno")}
    assert len(ts) == 64 and sum(t.scenario is not None for t in ts.values()) == 60
    assert "timestamps_" in ts["newreno_rto_dup_ts"].reason and "ts_option_size_" in ts["newreno_rto_dup_ts"].reason
    # Reordering: packet 25 of fid 1 (data segment 25 after the SYN) held back 50 ms.
    assert ts["newreno5"].scenario["flows"][0]["delays"] == [{"kind": "data", "segment": 25, "transmissions": [1], "by": "50ms"}]
    assert ts["newreno5"].scenario["topology"]["links"][2]["queue"] == 79
    assert suites.drops_as_in_suite(ts["reno5a"]) is True and ts["reno5a"].delayed == [25, 31, 35, 40]
    # ackf: the ACK positions {23 24 25 26} lie past the 23 ACKs sent by 6 s, as does data packet 43.
    ackf = ts["newreno_rto_loss_ackf"]
    assert ackf.unreached == [43, "ACK 23", "ACK 24", "ACK 25", "ACK 26"] and suites.drops_as_in_suite(ackf) is True
    tcp = ts["newreno1_A_BF_LC"].scenario["tcp"]
    assert (tcp["limited_transmit"], tcp["newreno_recover_guard"], tcp["slow_but_steady"], tcp["newreno_less_careful"]) == (True, True, False, True)
    assert ts["impatient4"].scenario["duration"] == "20s" and ts["impatient4"].scenario["tcp"]["rwnd"] == "32000B"
    assert suites.drops_as_in_suite(ts["newreno_rto_loss"]) is True


def test_older_suites_are_transcribed_headerless_with_their_refusals():
    """LimTransmit, rfc2581, simple and tcp run ns-2's packets without headers (useHeaders_
    false: `use_headers`) and, but for tcp, its RTO before RFC 2988 (`ns2_rfc2988`)."""
    counts = {"LimTransmit": (4, 3), "rfc2581": (8, 8), "simple": (37, 21), "tcp": (32, 11)}
    for suite, (n, ok) in counts.items():
        ts = suites.tests(suite)
        assert (len(ts), sum(t.scenario is not None for t in ts)) == (n, ok), suite
        for t in ts:
            if t.scenario is None:
                assert t.reason, t.name
                continue
            tcplab.validate(t.scenario)
            for f in t.scenario["flows"]:
                want_headers = t.name == "statsHeaders"
                assert f.get("tcp", t.scenario["tcp"]).get("use_headers") is want_headers, t.name
            assert t.scenario["tcp"]["ns2_rfc2988"] is (suite == "tcp" and t.name != "dialup1"), t.name
    ts = {t.name: t for t in suites.tests("rfc2581")}
    # Packets 3 and 4 of the flow without a SYN: data segments 4 and 5.
    assert ts["immediateAckSack"].scenario["flows"][0]["drops"] == [{"kind": "data", "segment": 4, "transmissions": [1]},
                                                                     {"kind": "data", "segment": 5, "transmissions": [1]}]
    assert suites.drops_as_in_suite(ts["noImmediateAck"]) is True
    assert ts["noImmediateAck"].scenario["tcp"]["delack_fill_immediate"] is False
    tcl = export(ts["immediateAckReno"].scenario).tcl
    for line in ("set useHeaders_ false", "set rfc2988_ false", "set delay_growth_ false", "set SYN_immediate_ack_ false",
                 "set tcpTick_ 0.1", "set minrto_ 0"):
        assert line in tcl, line
    lt = {t.name: t for t in suites.tests("LimTransmit")}
    assert lt["onedrop_SA_sack"].scenario["tcp"]["limited_transmit"] and lt["onedrop_sack"].scenario["tcp"]["delack_synack"]
    assert "markecn_" in lt["onedrop_ECN_sack"].reason and lt["nodrop_sack"].drops == []
    assert "SYN_immediate_ack_ false" in export(lt["onedrop_sack"].scenario).tcl
    simple = {t.name: t for t in suites.tests("simple")}
    assert "maxcwnd_" in simple["reno"].reason and "queue_in_bytes_" in simple["tahoe1Bytes"].reason
    # tahoe3: the flow from s2 starts first and is written first (connection 0 in both).
    assert [f["from"] for f in simple["tahoe3"].scenario["flows"]] == ["s2", "s1"]
    assert simple["tahoe1RED"].scenario["topology"]["links"][2]["queue"]["red"]["min_th"] == 1000
    tcp = {t.name: t for t in suites.tests("tcp")}
    assert "QOption_" in tcp["quiescent_100ms"].reason and "timerfix_ false" in tcp["timersA"].reason
    assert tcp["timers_backoffs"].drops == list(range(10, 20)) and suites.drops_as_in_suite(tcp["timers_backoffs"]) is True
    assert tcp["dialup"].scenario["tcp"]["initial_window"] == 3 and tcp["dialup"].scenario["tcp"]["handshake"] is True


def test_sack_suite_is_transcribed_as_its_tcl_builds_it():
    ts = {t.name: t for t in suites.tests("sack")}
    assert len(ts) == 17 and sorted(n for n, t in ts.items() if t.scenario is None) == ["FalsePipe", "FalsePipe1"]
    assert all("delay_pkt_" in ts[n].reason for n in ("FalsePipe", "FalsePipe1"))
    for t in ts.values():
        if t.scenario is not None:
            tcp = t.scenario["tcp"]
            # ns-2.35's defaults the suite keeps: Sack1, syn_, singledup_ 1, precisionReduce_ true.
            assert (tcp["preset"], tcp["handshake"], tcp["limited_transmit"], tcp["precision_reduce"]) == ("sack1", True, True, True)
            assert tcp["grow_when_not_cwnd_limited"] and t.drops == []
            tcplab.validate(t.scenario)
    # sack3: two flows, window_ 16 from 0.5 s and window_ 100 (bugFix_ false) from 1 s, queue-limit 8.
    sc = ts["sack3"].scenario
    assert [(f["start"], f["tcp"]["rwnd"], f["tcp"]["recover_guard"]) for f in sc["flows"]] == [("0.5s", "16000B", False), ("1s", "100000B", False)]
    assert sc["topology"]["links"][2]["queue"] == 7
    # sackB2: queue-limit 9 on r1 -> k1 only; sackB4: RED both ways, 29 and 25.
    assert ts["sackB2"].scenario["topology"]["links"][2]["queue"] == 8 and ts["sackB2"].scenario["topology"]["links"][2]["reverse_queue"] == 5
    b4 = ts["sackB4"].scenario["topology"]["links"][2]
    assert (b4["queue"]["kind"], b4["queue"]["packets"], b4["reverse_queue"]["packets"]) == ("red", 29, 25)
    assert b4["queue"]["red"]["min_th"] == 5 and b4["queue"]["red"]["max_th"] == 15 and b4["queue"]["red"]["w_q"] == 0.002
    assert ts["sack_dupacks1"].scenario["tcp"]["dupthresh_frac"] == 4 and ts["sack1z"].scenario["tcp"]["max_burst"] == 4
    # The export writes ns-2.35's precisionReduce_ true, and the RED queue both ways.
    tcl = export(ts["sackB4"].scenario).tcl
    assert "set precisionReduce_ 1" in tcl and "$ns duplex-link $n(2) $n(3) 1500000 0.02 RED" in tcl


#: The sack suite's tests and what they show today (docs/ns2.md).
SACK_SUITE_TESTS = {
    "sack1a": ("identical", True),
    "sack1z": ("identical", True),          # maxburst_ 4: cwnd_ grows unfilled (grow_when_not_cwnd_limited)
    "sack3": ("identical", True),           # two flows
    "sack_finiteflow": ("identical", True),
    "sack_dupacks1": ("microsecond rounding", True),   # send_one() below numdupacks(cwnd_) first
    "sack1": ("same-instant order", False),
}


@needs_ns
@pytest.mark.parametrize("name", sorted(SACK_SUITE_TESTS))
def test_sack_suite_tests_show_as_named(name):
    t = next(t for t in suites.tests("sack") if t.name == name)
    o = suites.run_test(t)
    cls, core = SACK_SUITE_TESTS[name]
    assert o.expressible and o.faithful_drops is None
    assert (o.cls, o.core) == (cls, core), o.comparison.text
    assert o.identical == (cls == "identical")


def test_tcp_init_win_suite_is_transcribed():
    ts = {t.name: t for t in suites.tests("tcp-init-win")}
    assert len(ts) == 25
    # windowInitOption_ 2: IW 4, 3 and 2 packets of 1000, 1500 and 2500 bytes; three flows from 0 s.
    fl = ts["reno1"].scenario["flows"]
    assert [(f["from"], f["tcp"]["mss"], f["tcp"]["initial_window"]) for f in fl] == [("s1", "1000B", 4), ("s2", "1500B", 3), ("s2", "2500B", 2)]
    assert fl[0]["tcp"]["rto_min"] == "200ms" and fl[0]["tcp"]["restart_after_idle"] is True
    assert ts["sack2"].scenario["flows"][0]["tcp"]["handshake"] is False     # syn_ false, delay_growth_ false
    # ErrorModel/Periodic offset_ 1 is the SYN, offset_ 2 the first data packet.
    assert ts["droppedSYN1"].scenario["flows"][0]["drops"] == [{"kind": "syn"}]
    assert ts["droppedPKT3"].scenario["flows"][0]["drops"] == [{"kind": "data", "segment": 1, "transmissions": [1]}]
    assert suites.drops_as_in_suite(ts["droppedPKT3"]) is True
    red = ts["slowLink"].scenario["topology"]["links"][2]["queue"]
    assert red["packets"] == 25 and red["red"]["gentle"] is True
    refused = {n: t.reason for n, t in ts.items() if t.scenario is None}
    assert sorted(refused) == sorted([f"{v}{i}" for v in ("tahoe", "reno", "newreno", "sack") for i in (3, 4)]
                                     + ["droppedSYN", "droppedPKT", "droppedPKT2"])
    assert "windowInitOption_ 2" in refused["reno3"] and "ns1_compat_" in refused["sack4"] and "bugfix_ss_ 0" in refused["droppedPKT"]


@needs_ns
@pytest.mark.parametrize("suite, name", sorted(SUITE_TESTS))
def test_suite_tests_show_as_named(suite, name):
    t = next(t for t in suites.tests(suite) if t.name == name)
    o = suites.run_test(t)
    cls, core = SUITE_TESTS[(suite, name)]
    assert o.expressible and o.faithful_drops is (True if (t.drops or t.delayed or t.ack_drops) else None)
    assert (o.cls, o.core) == (cls, core), o.comparison.text
    assert o.identical == (cls == "identical")
    if name == "twodrops_reno":
        # Both time out once in recovery and restart from half the uninflated window
        # (RenoTcpAgent::timeout()): the same segments.
        a, b = o.comparison.tcplab[0], o.comparison.ns2[0]
        assert a["timeouts"] == b["timeouts"] == 1 and a["retx_set"] == b["retx_set"]
        assert a["data_segs"] == b["data_segs"]


def test_suites_command_without_ns_exits_2(tmp_path):
    env = {**os.environ, "PATH": str(tmp_path)}   # no `ns` there
    out = subprocess.run([sys.executable, "-m", "tcplab.ns2.suites", "--test", "onedrop_reno"], capture_output=True, text=True,
                         env=env, timeout=120)
    assert out.returncode == 2, out.stderr
    assert "apt-get install ns2" in out.stderr


@needs_ns
def test_suites_command_prints_the_counts(tmp_path):
    out = subprocess.run([sys.executable, "-m", "tcplab.ns2.suites", "--test", "onedrop_reno", "--test", "onedrop_sack"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    rows = {ln.split()[0]: ln.split()[1:5] for ln in out.stdout.splitlines() if ln.startswith(("tcpVariants", "all"))}
    assert rows["tcpVariants"] == ["2", "2", "2", "2"]
    bad = subprocess.run([sys.executable, "-m", "tcplab.ns2.suites", "--test", "nosuchtest"], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "nosuchtest" in bad.stderr
