"""The testbed: one scenario on the real Linux stack and in the simulator (docs/testbed.md).

- What Linux cannot honour is refused with the key path, before anything is created (no root
  needed).
- A small scenario run both ways (root, ip, tcpdump, nft, ethtool; skipped with the reason
  otherwise): a loss-free 150 KB transfer (initial window exact, transfer time within 10 %), then
  a transfer whose first SYN is dropped (the SYN retransmission within 50 ms of the simulated one),
  and a 10 KB fetch whose GET is dropped (its retransmission within 50 ms of the simulated one).
- Nothing is left (namespaces, veths, nftables tables, processes) after a normal run, a failed
  run and an interrupted one.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import tcplab
from tcplab import testbed
from tcplab.testbed import lab, nft

SCENARIO = {
    "name": "testbed-check",
    "topology": {"kind": "single_link", "rate": "10Mbps", "delay": "20ms", "queue": 100},
    "tcp": {"profile": "linux"},
    "flows": [
        {"name": "clean", "bytes": "150KB"},
        {"name": "synloss", "bytes": "20KB", "start": "700ms", "drops": [{"kind": "syn"}]},
        # Data segment 30 dropped by the delay box by its sequence number (beyond the first window).
        {"name": "segloss", "bytes": "60KB", "start": "1500ms", "drops": [{"kind": "data", "segment": 30}]},
    ],
    # A 10 KB fetch whose GET is lost (Seddigh et al. §3), after the flows.
    "apps": [{"kind": "reqresp", "request": "300B", "response": "10KB", "start": "2600ms", "drops": [{"kind": "request"}]}],
}


def refused(s, sets=()):
    with pytest.raises(tcplab.ScenarioError) as e:
        testbed.build(s, sets=sets)
    return e.value.path, str(e.value)


@pytest.mark.parametrize("sets, path, words", [
    (["tcp.variant=reno", "tcp.reduction=\"halve\""], "tcp.variant", "SACK-based"),
    (["tcp.abc=0"], "tcp.abc", "`linux` profile's value 2"),
    (["flows.0.tcp.rto_initial=\"3s\""], "flows[0].tcp.rto_initial", "Linux has no setting"),
    (["tcp.clock_granularity=\"1ms\""], "tcp.clock_granularity", "must equal rto_min"),
    (["tcp.mss=9000"], "tcp.mss", "88 to 1460"),
    (["topology.queue={packets=10, red={}}"], "topology.queue.red", "RED"),
    (["flows.1.drops=[{kind=\"data\", segment=3, transmissions=[1, 2]}]"], "flows[1].drops[0].transmissions", "first transmission"),
    (["duration=\"10s\""], "duration", "finite transfers"),
])
def test_what_linux_cannot_honour_is_refused_with_the_key_path(sets, path, words):
    p, msg = refused(SCENARIO, sets)
    assert p == path, msg
    assert words in msg and "cannot run this on Linux" in msg


@pytest.mark.parametrize("sets, path, words", [
    # The reproducer: a reordering the simulator models, which the testbed used to ignore and run.
    (["flows.0.delays=[{kind=\"data\", segment=3, by=\"30ms\"}]"], "flows[0].delays", "reordered"),
    (["apps.0.server_tcp={initial_window=4}"], "apps[0].server_tcp", "server's end"),
    (["apps.0.kind=\"http10\"", "apps.0.page_spacing=\"start_to_start\""], "apps[0].page_spacing", "end of a page"),
])
def test_keys_the_testbed_would_ignore_are_refused_by_key_path(sets, path, words):
    p, msg = refused(SCENARIO, sets)
    assert p == path, msg
    assert words in msg and "cannot run this on Linux" in msg


def test_a_flow_without_the_linux_profile_is_told_to_use_it():
    path, msg = refused(dict(SCENARIO, tcp={"delayed_ack": False}))
    assert path.startswith("tcp.") and "profile 'rfc'" in msg and 'write profile = "linux"' in msg, msg


def test_subset_refusals_name_the_key():
    custom = {"topology": {"kind": "custom", "nodes": ["a", "b"], "links": [{"a": "a", "b": "b", "rate": "1Mbps", "delay": "1ms"}]},
              "tcp": {"profile": "linux"}, "flows": [{"from": "a", "to": "b", "bytes": "1KB"}]}
    assert refused(custom)[0] == "topology.kind"
    rv = dict(SCENARIO, flows=[], apps=[{"kind": "reqresp", "response": {"exponential": "8KB"}}])
    assert refused(rv)[0] == "apps[0].response"
    ftp = dict(SCENARIO, flows=[], apps=[{"kind": "ftp", "file": "1KB"}])
    assert refused(ftp)[0] == "apps[0].kind"


def test_the_comparison_says_loudly_when_the_real_side_runs_another_algorithm():
    from tcplab.testbed.sidebyside import differences

    assert differences({"stock": False, "congctl": None, "default_congctl": "bbr", "sim_cc": ["cubic"]}) == []
    # --stock: the host's default congestion control, said when it is not the flows' `cc`.
    stock = differences({"stock": True, "congctl": None, "default_congctl": "bbr", "sim_cc": ["cubic"]})
    assert len(stock) == 1 and "'bbr'" in stock[0] and "'cubic'" in stock[0] and stock[0].startswith("warning:")
    assert differences({"stock": True, "congctl": None, "default_congctl": "cubic", "sim_cc": ["cubic"]}) == []
    # --congctl: a divergence of the plan, in the table that opens the comparison.
    plan, _ = testbed.build(SCENARIO, congctl="reno")
    assert plan.routes[("sender", "receiver")]["congctl"] == "reno"
    out = differences({"stock": False, "congctl": "reno", "divergences": plan.divergences})
    assert len(out) == 1 and out[0].startswith("warning:") and "\n  cc " in out[0] and "reno (--congctl)" in out[0], out


def test_the_plan_maps_knobs_to_linux():
    plan, _ = testbed.build(SCENARIO, sets=["tcp.initial_window=4", "tcp.rto_min=\"300ms\"", "tcp.clock_granularity=\"300ms\"", "tcp.mss=1000", "tcp.delayed_ack=false"])
    snd = plan.routes[("sender", "receiver")]
    rcv = plan.routes[("receiver", "sender")]
    # The `linux` profile's controller, CUBIC, on both ends.
    assert snd["initcwnd"] == 4 and snd["advmss"] == 1000 and snd["congctl"] == "cubic" == rcv["congctl"]
    assert rcv["quickack"] == 1 and rcv["advmss"] == 1000
    s = plan.sysctls["sender"]
    assert s["net.ipv4.tcp_rto_min_us"] == 300000 and s["net.ipv4.tcp_sack"] == 1
    assert [c.sport for c in plan.conns] == [10000, 10001, 10002, 40001]  # the simulator's ports
    # Data segment 30 of flow 2, by sequence number in the delay box: its first byte is data byte
    # 29 · 988 (MSS 1000 less the 12 bytes of the timestamp option the kernel sends: its mss_cache).
    assert plan.seq_drops == [dict(frm="sender", ports=[10002], port_field="sport", offsets=[29 * 988], path="flows[2].drops[0]")]
    plan.sysctls["sender"]["net.ipv4.tcp_timestamps"] = 0
    assert plan.payload("sender", 1460) == 1460 and plan.payload("receiver", 1460) == 1448
    # The SYN drop: the first transmission of flow 1's SYN, on the box's port to the receiver.
    assert plan.drops[0] == dict(to="receiver", frm="sender", match="syn", ports=[10001], port_field="sport", nth=[1], path="flows[1].drops[0]")
    rules = nft.ruleset(plan)
    # On the box's port to the receiver (p1): flow 1's first SYN counted into a set and dropped.
    assert 'hook egress device "p1"' in rules and "tcp sport { 10001 }" in rules and "add @d0_1 { tcp sport } drop" in rules
    # The app's GET: data from the client (receiver) to the server, on the port to the sender (p0);
    # with timestamps a pure ACK is 52 bytes.
    assert 'hook egress device "p0"' in rules and "ip length > 52 jump d1" in rules
    lossy, _ = testbed.build(SCENARIO, sets=["topology.loss=0.01"])
    assert "numgen random mod 1000000 < 10000 drop" in nft.ruleset(lossy)
    # ACKs 20 to 22 of a flow: one counter for the three (each drop entry with its own counter
    # never counted the ACKs an earlier entry had dropped, and dropped ACKs 20, 22 and 24).
    acks, _ = testbed.build(SCENARIO, sets=['flows.0.drops=[{kind="ack", number=20}, {kind="ack", number=21}, {kind="ack", number=22}]'])
    assert len([d for d in acks.drops if d["match"] == "ack"]) == 3
    (m,) = [d for d in nft.merged(acks.drops) if d["match"] == "ack"]
    assert m["nth"] == [20, 21, 22]
    rules = nft.ruleset(acks)
    (chain,) = re.findall(r"\(syn \| fin \| rst\) == 0 jump (d\d+)", rules)
    assert [int(k) for k in re.findall(rf"add @{chain}_(\d+) {{ tcp dport }} drop", rules)] == [22, 21, 20], rules
    # --stock: the host's default congestion control; the kernel untuned as without it.
    stock, _ = testbed.build(SCENARIO, stock=True)
    assert "congctl" not in stock.routes[("sender", "receiver")] and stock.sysctls["sender"]["net.ipv4.tcp_recovery"] == 1
    # The flow's controller is the route's congctl, on both ends.
    bbr, _ = testbed.build(SCENARIO, sets=['tcp.cc="bbr"'])
    assert bbr.routes[("sender", "receiver")]["congctl"] == "bbr" == bbr.routes[("receiver", "sender")]["congctl"]


def test_the_kernel_runs_untuned_and_every_divergence_is_loud():
    """The `linux` profile against the untuned kernel: every mechanism at Linux's default (RACK,
    TLP, timestamps, F-RTO, D-SACK, compressed SACKs, linear SYN timeouts, ECN when asked), the
    profile's CUBIC as the congestion control, and only what no profile models listed as a
    divergence. A knob of the scenario that models something else is listed, not obeyed."""
    from tcplab.testbed import untuned

    plan, _ = testbed.build(SCENARIO)
    for h in ("sender", "receiver"):
        for k, v in untuned.UNTUNED.items():
            assert plan.sysctls[h][k] == v, (h, k)
        assert plan.sysctls[h]["net.ipv4.tcp_ecn"] == 2
    assert plan.routes[("sender", "receiver")]["congctl"] == "cubic"
    assert plan.divergences == []
    # `tlp = false`, `timestamps = false` and `syn_linear_timeouts = 0` over `linux`: the kernel
    # keeps its own; each is said.
    plan, _ = testbed.build(SCENARIO, sets=["tcp.tlp=false", "tcp.timestamps=false", "tcp.syn_linear_timeouts=0"])
    assert "tcp_syn_linear_timeouts 4" in {d["knob"]: d for d in plan.divergences}["syn_linear_timeouts"]["kernel"]
    assert plan.sysctls["sender"]["net.ipv4.tcp_early_retrans"] == 3 and plan.sysctls["sender"]["net.ipv4.tcp_timestamps"] == 1
    knobs = {d["knob"]: d for d in plan.divergences}
    assert knobs["tlp"]["sim"] is False and "tail loss probes" in knobs["tlp"]["kernel"]
    assert knobs["timestamps"]["sim"] is False and "MSS − 12" in knobs["timestamps"]["kernel"]
    text = untuned.render(plan.divergences)
    assert text.startswith("warning:") and "\n  tlp " in text and "\n  timestamps " in text
    # `ecn = "on"` asks for ECN (tcp_ecn 1) on the flow's hosts.
    plan, _ = testbed.build(SCENARIO, sets=['tcp.ecn="on"'])
    assert plan.sysctls["sender"]["net.ipv4.tcp_ecn"] == 1


def test_the_old_model_gets_a_tuned_kernel_only_when_the_scenario_names_it():
    """`rfc6675-iw10` (the old `linux` profile: RFC 6675 recovery with Reno, no RACK, TLP or
    timestamps) gets the tuned kernel it models; what no setting reaches (Linux's estimator,
    receiver, PRR, ...) is listed. With --stock it runs against the untuned kernel, and RACK, TLP
    and timestamps join the list."""
    from tcplab.testbed import untuned

    old = dict(SCENARIO, tcp={"profile": "rfc6675-iw10", "delayed_ack": False})
    plan, _ = testbed.build(old)
    s = plan.sysctls["sender"]
    assert (s["net.ipv4.tcp_recovery"], s["net.ipv4.tcp_early_retrans"], s["net.ipv4.tcp_timestamps"], s["net.ipv4.tcp_syn_linear_timeouts"]) == (0, 0, 0, 0)
    assert plan.routes[("sender", "receiver")]["congctl"] == "reno"
    assert plan.seq_drops[0]["offsets"] == [29 * 1460] and {d["match"] for d in plan.drops} == {"syn", "data"}
    knobs = {d["knob"] for d in plan.divergences}
    # ssthresh_from_cwnd: the kernel's tcp_reno_ssthresh (cwnd/2) against the RFC's FlightSize/2.
    assert knobs == {"rto_model", "delack_model", "reduction", "cwnd_validation", "fin_with_data", "tso_defer", "rcv_buffer", "ssthresh_from_cwnd",
                     "syn_options", "handshake_ack_alone"}, knobs
    plan, _ = testbed.build(old, stock=True)
    assert plan.sysctls["sender"]["net.ipv4.tcp_recovery"] == 1 and "congctl" not in plan.routes[("sender", "receiver")]
    knobs = {d["knob"] for d in plan.divergences}
    assert {"loss", "tlp", "timestamps", "comp_sack_nr", "dsack", "undo", "frto", "syn_linear_timeouts"} <= knobs, knobs
    # The tuned and the untuned kernel on one host: refused (Linux sets these per host).
    mixed = dict(SCENARIO, flows=[{"bytes": "10KB"}, {"bytes": "10KB", "tcp": {"profile": untuned.TUNED_PROFILE}}], apps=[])
    with pytest.raises(tcplab.ScenarioError) as e:
        testbed.build(mixed)
    assert e.value.path == "flows[1].tcp" and "per host" in str(e.value), str(e.value)


def test_a_dumbbell_is_planned_link_by_link():
    db = {"topology": {"kind": "dumbbell", "pairs": 2, "access_rate": "100Mbps", "access_delay": ["2ms", "10ms"],
                       "bottleneck_rate": "5Mbps", "bottleneck_delay": "20ms", "queue": 30},
          "tcp": {"profile": "linux"}, "flows": [{"from": "s{i}", "to": "r{i}", "count": 2, "bytes": "10KB"}]}
    plan, _ = testbed.build(db)
    assert plan.hosts == ["s1", "s2", "r1", "r2"]
    names = [plan.links[i].name for i in plan.paths[("s1", "r2")]]
    assert names == ["access_s1:s1->left", "bottleneck:left->right", "access_r2:right->r2"]
    assert [plan.links[i].name for i in plan.paths[("r2", "s1")]] == ["access_r2:r2->right", "bottleneck:right->left", "access_s1:left->s1"]
    bn = plan.links[plan.paths[("s1", "r1")][1]]
    assert (bn.rate_bps, bn.delay_s, bn.limit_pkts) == (5e6, 0.020, 30)
    assert plan.links[plan.paths[("s2", "r2")][0]].delay_s == 0.010
    assert [c.sport for c in plan.conns] == [10000, 10001]
    with pytest.raises(tcplab.ScenarioError) as e:
        testbed.build(db, shaper="tbf")
    assert e.value.path == "topology.kind"
    assert refused(db, ["topology.access_delay=\"2ms\"", "topology.pairs=5"])[0] == "topology.pairs"


# -- on the real stack -------------------------------------------------------------------------

WHY = lab.missing()
real = pytest.mark.skipif(WHY is not None, reason=f"the testbed needs the real stack: {WHY}")


def leftovers() -> list:
    """What a testbed run could leave: its namespaces, veths or nftables tables in the root
    namespace, processes of its servers, clients, delay box or captures."""
    # Namespaces of other live testbed runs (another process running experiments) are theirs.
    others, ours = set(), []
    for n in lab.namespaces():
        pid = n[len(lab.PREFIX):].split("-")[0]
        if int(pid) != os.getpid() and os.path.exists(f"/proc/{pid}"):
            try:
                others.add(os.stat(f"/run/netns/{n}").st_ino)
            except OSError:
                pass
        else:
            ours.append(n)
    out = [f"namespace {n}" for n in ours]
    # The testbed makes its veths inside its namespaces (eth0 in a host, pK in the box): none may
    # appear in the root namespace.
    links = subprocess.run(["ip", "-o", "link", "show", "type", "veth"], capture_output=True, text=True).stdout
    names = [ln.split(":")[1].strip().split("@")[0] for ln in links.splitlines() if ":" in ln]
    out += [f"veth {n}" for n in names if re.fullmatch(r"p\d+|eth0", n)]
    tables = subprocess.run(["nft", "list", "tables"], capture_output=True, text=True).stdout
    out += [f"nft {t}" for t in tables.splitlines() if "tcplab_testbed" in t]
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        try:
            netns = os.stat(f"/proc/{pid}/ns/net").st_ino
        except OSError:
            continue
        if netns in others:
            continue
        if lab.PEER in cmd or "tcplab.testbed.boxmain" in cmd or ("tcpdump" in cmd and "real-" in cmd):
            out.append(f"process {pid}: {cmd.strip()}")
    return out


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    if WHY:
        pytest.skip(WHY)
    d = tmp_path_factory.mktemp("tb")
    rec = testbed.run(SCENARIO, d, timeout=20)
    c = testbed.compare(d)
    return rec, c, d


def value(c, conn, metric, side):
    t = c.table
    return t[(t.connection == conn) & (t.metric == metric)][side].iloc[0]


@real
def test_a_small_scenario_both_ways(both):
    rec, c, d = both
    clean, synloss = "flows[0]#1 transfer 1", "flows[1]#1 transfer 1"
    segloss = "flows[2]#1 transfer 1"
    assert set(c.table.connection) == {clean, synloss, segloss, "apps[0] object 1"}, c.text
    # The initial window: exactly IW 10 on both (initcwnd 10; no TLP after the first flight).
    assert value(c, clean, "iw_segs", "real") == value(c, clean, "iw_segs", "sim") == 10, c.text
    assert value(c, clean, "rexmt_segs", "real") == 0 and value(c, clean, "syn_retransmits", "real") == 0
    # The loss-free transfer time within 10 %.
    r, s = value(c, clean, "transfer_time_s", "real"), value(c, clean, "transfer_time_s", "sim")
    assert abs(s - r) <= 0.10 * r, c.text
    # The dropped SYN: retransmitted once, 1 s (the initial RTO) after, within 50 ms of the simulation.
    assert value(c, synloss, "syn_retransmits", "real") == value(c, synloss, "syn_retransmits", "sim") == 1, c.text
    rt, st = value(c, synloss, "syn_times_s", "real"), value(c, synloss, "syn_times_s", "sim")
    assert len(rt) == len(st) == 1 and abs(rt[0] - st[0]) <= 0.050, c.text
    # After a single SYN retransmission Linux keeps its initial window (tcp_init_transfer sets
    # cwnd 1 only when total_retrans > 1): the linux profile's iw_one_after = 2 does the same.
    assert value(c, synloss, "iw_segs", "real") == value(c, synloss, "iw_segs", "sim") == 10, c.text
    # The lost GET: re-sent by the tail loss probe, whose 2·SRTT + rto_min (one segment out) is
    # capped by the RTO of 240 ms (SRTT 40 ms + rto_min, the handshake's sample), in 4 ms jiffies
    # on the timer wheel; the kernel's the same within 50 ms.
    get = "apps[0] object 1"
    r, s = value(c, get, "request_retx_after_s", "real"), value(c, get, "request_retx_after_s", "sim")
    assert 0.240 <= s <= 0.252 and abs(r - s) <= 0.050, c.text
    assert value(c, get, "iw_segs", "real") == value(c, get, "iw_segs", "sim") == 8, c.text  # 10 KB: 7 full segments and 20 bytes
    # Data segment 30, dropped once by sequence number on the real side and by the filter in the
    # simulator: one retransmitted segment on each, and it is segment 30.
    assert value(c, segloss, "rexmt_segs", "real") == value(c, segloss, "rexmt_segs", "sim") == 1, c.text
    assert (rec.get("box") or {}).get("dropped_by_seq") == 1, rec.get("box")
    assert c.figure is not None and c.figure.exists()
    # The comparison opens with what the two sides do differently by construction: for `linux`
    # nothing (every untuned default the kernel runs has its knob), so the connections at once.
    text = (d / "compare.txt").read_text()
    assert "warning:" not in text and "flows[0]#1 transfer 1\n" in text, text


@real
def test_every_dropped_segment_of_a_flow_is_dropped_by_the_box(tmp_path):
    """Several data segments of one flow, each a drop rule of its own: the box drops each once
    (it once read only the first rule of a connection), and both sides retransmit the same
    segments. The sender hands the kernel the whole transfer in one write, so every segment but
    the last is full (a write per 64 KB made Linux end a segment at each write's end)."""
    from tcplab.testbed import segmatch

    scen = {"topology": {"kind": "single_link", "rate": "10Mbps", "delay": "10ms", "queue": 400},
            "tcp": {"profile": "linux"},
            "flows": [{"bytes": "300KB", "drops": [{"kind": "data", "segment": 12}, {"kind": "data", "segment": 20}]}]}
    rec = testbed.run(scen, tmp_path, timeout=20)
    assert (rec.get("box") or {}).get("dropped_by_seq") == 2, rec.get("box")
    c = testbed.compare(tmp_path)
    conn = "flows[0]#1 transfer 1"
    assert value(c, conn, "rexmt_segs", "real") == value(c, conn, "rexmt_segs", "sim") == 2, c.text
    segs = segmatch._segments(rec["captures"]["sender"], rec["connections"][0]["sport"], 10_000)
    lens = [ln for _, (_, ln, fl), _psh in segs if ln > 0]
    from tcplab import units

    n = int(units.size_bytes("300KB"))
    full, rest = divmod(n, 1448)  # 1460 less the timestamp option's 12 bytes
    assert len(lens) == full + (rest > 0) + 2 and set(lens[:-1]) == {1448} and lens[-1] == (rest or 1448), lens
    # PSH as the kernel sets it (tcp/tso.rs `psh_at`): the initial window leaves in skbs of two
    # segments, each ending with PSH, on both sides; and the kernel's data segments carry some.
    m = segmatch.match(rec["captures"]["sender"], tmp_path / "sim-sender.pcap", rec["connections"][0]["sport"], n=200)
    assert m.same >= 11 and (m.psh_first_diff is None or m.psh_first_diff >= 11), (m.psh_first_diff, m.describe())
    assert [i for i, (_, (_, ln, _), p) in enumerate(segs[:11]) if p] == [2, 4, 6, 8, 10], segs[:11]
    assert leftovers() == []


@real
def test_route_quickack_against_the_linux_profile_without_delayed_acks(tmp_path):
    """`delayed_ack = false` is route `quickack 1` on the kernel's receiver and the `linux`
    profile's receiver with icsk_ack.dst_quick_ack: both ACK every segment, and the receive
    buffer autotunes as with delayed ACKs. A path whose BDP (50 Mb/s × 40 ms = 250 KB) is four
    times the first window: the model that left the window at 64 KB sent about 13 Mb/s and took
    three times the kernel's time (16.4 s against 4.55 s for 25 MB; 3 MB here)."""
    from tcplab.testbed import segmatch

    scen = {"topology": {"kind": "single_link", "rate": "50Mbps", "delay": "20ms", "queue": 2000},
            "tcp": {"profile": "linux", "delayed_ack": False},
            "flows": [{"bytes": "3MB"}]}
    rec = testbed.run(scen, tmp_path, timeout=20)
    c = testbed.compare(tmp_path)
    conn = "flows[0]#1 transfer 1"
    r, s = value(c, conn, "transfer_time_s", "real"), value(c, conn, "transfer_time_s", "sim")
    # Within 3 %: a loss-free transfer of about 10 round trips, each within the box's timing.
    assert abs(s - r) <= 0.03 * r, c.text
    port = rec["connections"][0]["sport"]
    # The first 100 segments alike; later the kernel's receiver may offer a window a segment
    # short of the simulated one before its autotuning (the timestamps' millisecond phase, as in
    # docs/testbed.md), and its sender then cuts a short segment at the window's edge.
    m = segmatch.match(rec["captures"]["sender"], tmp_path / "sim-sender.pcap", port, n=100)
    assert m.same == m.compared == 100, m.describe()

    def acks(path):
        # Pure ACKs of the receiver (no payload, no SYN or FIN) against the data segments.
        pk = tcplab.trace.packets(path)
        by_dir = pk.groupby("dir", observed=True)["len"].sum()
        data_dir = by_dir.idxmax()
        rev = pk[(pk["dir"] != data_dir) & (pk["len"] == 0) & ~pk["syn"] & ~pk["fin"]]
        return len(rev), int((pk[pk["dir"] == data_dir]["len"] > 0).sum())

    (ra, rd), (sa, sd) = acks(rec["captures"]["sender"]), acks(tmp_path / "sim-sender.pcap")
    # Every data segment acknowledged on its own on both sides (the last ACK may cover the FIN).
    # The kernel may send one segment more: the short one it cuts at a window a segment short of
    # the simulated one (above); seen in a CI run, 2174 data segments against 2173.
    assert 0 <= rd - sd <= 1 and abs(ra - rd) <= 2 and abs(sa - sd) <= 2, (ra, rd, sa, sd)
    assert leftovers() == []


PROBES = {
    # The third-last segment dropped: the kernel's SACK block covers the FIN riding on the last
    # segment (tcp_sack_new_ofo_skb), three segments SACKed, RACK retransmits at once.
    # Checked to the send time: the earlier model sent the same segments, the retransmission 17 ms
    # late.
    # At 10 Mb/s, 20 ms the receive window never limits (a bandwidth-delay product of 25 KB), so
    # no window-edge cut of the kernel's (docs/testbed.md) moves the segments before the loss.
    "fin_sacked": ({"rate": "10Mbps", "delay": "10ms"}, {}, {"bytes": "200KB", "drops": [{"kind": "data", "segment": 139}]}, 1000, True),
    # MSS 536 with timestamps: 524-byte segments are full ones for the receiver
    # (tcp_initialize_rcv_mss), which ACKs every second one; recovery starts on the second SACK.
    # The first 100 segments (the earlier model left the kernel's segments at 69): after the
    # recovery, a segment here and there leaves about 35 ms apart — one side a segment ahead in
    # its window when the sends pause for a delayed ACK, at segment 122, 304 or 714 in three runs
    # (docs/testbed.md, not separated yet).
    "small_mss": ({"rate": "50Mbps", "delay": "20ms"}, {"mss": 536}, {"bytes": "400KB", "drops": [{"kind": "data", "segment": 30}]}, 100, False),
}


@real
@pytest.mark.parametrize("name", sorted(PROBES))
def test_receiver_rules_found_by_probes_against_the_kernel(tmp_path, name):
    """Two of the receiver's rules that runs of the `linux` profile beside the kernel found
    (docs/testbed.md, "Known differences"): with either missing, the simulated sender left the
    kernel's segments at the recovery (the retransmission 17 ms late; recovery a SACK early)."""
    from tcplab.testbed import segmatch

    link, tcp, flow, n, timed = PROBES[name]
    scen = {"topology": {"kind": "single_link", "queue": 2000, **link}, "tcp": {"profile": "linux", **tcp}, "flows": [flow]}
    rec = testbed.run(scen, tmp_path, timeout=20)
    testbed.compare(tmp_path, figure=None)
    m = segmatch.match(rec["captures"]["sender"], tmp_path / "sim-sender.pcap", rec["connections"][0]["sport"], n=n)
    # The same segments (seq, length, flags), and where asked the recovery timed.
    assert m.same == m.compared and m.compared >= 100, m.describe()
    if timed:
        # The recovery's own timing: from the dropped segment's first transmission to its
        # retransmission, on each side, within max(1 ms, 2 %). (Not every send: before the loss a
        # delayed ACK racing the next segment at 20 ms goes either way from run to run on the
        # kernel's side, docs/testbed.md "The floor"; a CI run had segment 31 20.9 ms apart.)
        def recovery_s(path):
            segs = segmatch._segments(path, rec["connections"][0]["sport"], n)
            first = {}
            for t, (seq, ln, _), _psh in segs:
                if ln and seq in first:
                    return t - first[seq]
                first.setdefault(seq, t)
            raise AssertionError(f"{path}: no retransmission")

        kr, sr = recovery_s(rec["captures"]["sender"]), recovery_s(tmp_path / "sim-sender.pcap")
        assert abs(sr - kr) <= max(1e-3, 0.02 * kr), (kr, sr, m.describe())
    assert leftovers() == []


@real
def test_nothing_is_left_after_a_normal_run(both):
    assert leftovers() == []


@real
def test_nothing_is_left_after_a_failed_run(tmp_path):
    with pytest.raises(testbed.TestbedError, match="failure requested after setup"):
        testbed.run(SCENARIO, tmp_path, _fail_after_setup=True)
    assert leftovers() == []
    # A transfer that cannot finish in time fails the run, and takes everything down too.
    slow = dict(SCENARIO, topology=dict(SCENARIO["topology"], rate="100kbps"), flows=[{"bytes": "1MB"}])
    with pytest.raises(testbed.TestbedError, match="timed out|did not finish within"):
        testbed.run(slow, tmp_path / "slow", timeout=1.0)
    assert leftovers() == []


@real
def test_nothing_is_left_after_an_interrupted_run(tmp_path):
    import json

    scen = tmp_path / "s.json"
    scen.write_text(json.dumps(dict(SCENARIO, flows=[{"bytes": "2MB"}], topology=dict(SCENARIO["topology"], rate="2Mbps"))))
    p = subprocess.Popen([sys.executable, "-m", "tcplab.cli", "testbed", "run", str(scen), "-o", str(tmp_path / "out")],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 20
    # Interrupt once the transfer is under way (its capture has started).
    while time.monotonic() < deadline and not list((tmp_path / "out").glob("client-*.json")):
        time.sleep(0.05)
    time.sleep(0.3)
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=30)
    assert p.returncode == 130, err
    assert "interrupted" in err
    assert leftovers() == []


@real
def test_the_experiment_runner(tmp_path):
    """`tcplab testbed experiments --only seddigh --quick`: the Seddigh §3 table, from real runs."""
    from tcplab.testbed import experiments

    md = experiments.run_all(tmp_path, only=["seddigh"], quick=True)
    assert "| GET | the GET (client) |" in md and "| SYN-ACK |" in md
    import json

    res = json.loads((tmp_path / "experiments.json").read_text())["seddigh"]
    for mode in ("untuned",):
        # The GET re-sent by the tail loss probe at the RTO (0.3 s after the handshake's 100 ms
        # sample), the SYN after the initial RTO of 1 s: both on the timer wheel in jiffies, up
        # to 8 jiffies (32 ms) late at these timeouts; the kernel within 50 ms of each.
        get = res[mode]["GET"]
        assert 0.300 <= get["sim"] <= 0.332 and abs(get["real"] - get["sim"]) <= 0.050, res
        syn = res[mode]["SYN"]
        assert 1.0 <= syn["sim"][0] <= 1.032 and abs(syn["real"][0] - syn["sim"][0]) <= 0.050, res
    assert leftovers() == []
    with pytest.raises(ValueError, match="unknown experiment nope"):
        experiments.run_all(tmp_path, only=["nope"])


RECV = """
import json, socket, sys, time
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x88B5))
s.bind(("eth0", 0)); s.settimeout(0.05)
print("ready", flush=True)
got, end = [], time.time() + float(sys.argv[1])
while time.time() < end:
    try:
        d = s.recv(4096)
    except socket.timeout:
        continue
    got.append([time.time(), d[14]])
print(json.dumps(got), flush=True)
"""

SEND = """
import json, socket, sys, time
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind(("eth0", 0))
dst = bytes.fromhex(sys.argv[1].replace(":", ""))
src = bytes.fromhex(sys.argv[2].replace(":", ""))
t = time.time()
for i in range(int(sys.argv[3])):
    s.send(dst + src + b"\\x88\\xb5" + bytes([i]) + b"x" * 1013)
print(json.dumps(t), flush=True)
"""


@real
def test_the_delay_box_queues_transmits_and_delays_like_a_simulated_link(tmp_path):
    """The box's link model, packet by packet: five 1014-byte frames (IP bytes: the frame less
    its Ethernet header) sent back to back into a direction of 1 Mb/s, 20 ms and a drop-tail
    queue of 2: the first is transmitted at once, two wait, two are dropped (the limit counts
    only waiting packets); they leave 8.112 ms apart and arrive 20 ms after their transmission
    ends (net/link.rs's model)."""
    import json

    tag = f"{lab.PREFIX}{os.getpid()}-boxtest"
    a, b, box = f"{tag}-a", f"{tag}-b", f"{tag}-box"
    mac_a, mac_b = "02:74:62:00:01:01", "02:74:62:00:01:02"
    procs = []
    try:
        for ns in (a, b, box):
            subprocess.run(["ip", "netns", "add", ns], check=True)
        for k, (ns, mac) in enumerate(((a, mac_a), (b, mac_b))):
            subprocess.run(["ip", "link", "add", "eth0", "netns", ns, "address", mac, "type", "veth", "peer", "name", f"p{k}", "netns", box], check=True)
            for where, dev in ((ns, "eth0"), (box, f"p{k}")):
                subprocess.run(["ip", "netns", "exec", where, "ip", "link", "set", dev, "up"], check=True)
                subprocess.run(["ip", "netns", "exec", where, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1"], check=True)
        spec = {"devices": ["p0", "p1"], "stats": str(tmp_path / "stats.json"),
                "links": [{"rate_bps": 1_000_000, "delay_ns": 20_000_000, "limit_pkts": 2}, {"rate_bps": 0, "delay_ns": 0}],
                "routes": [{"in": 0, "dst": mac_b, "path": [0], "out": 1}, {"in": 1, "dst": mac_a, "path": [1], "out": 0}]}
        (tmp_path / "box.json").write_text(json.dumps(spec))

        def start(ns, *args):
            # Real-time priority, as the testbed runs its box: on a loaded machine a reader
            # thread woken late would stamp its frames late.
            rt = lab.rt_prefix()
            p = subprocess.Popen(["ip", "netns", "exec", ns, *rt, sys.executable, *args], stdout=subprocess.PIPE, text=True)
            procs.append(p)
            return p

        bx = start(box, "-m", "tcplab.testbed.boxmain", str(tmp_path / "box.json"))
        assert bx.stdout.readline().strip() == "ready"
        rx = start(b, "-c", RECV, "1.5")
        assert rx.stdout.readline().strip() == "ready"
        time.sleep(0.2)
        tx = start(a, "-c", SEND, mac_b, mac_a, "5")
        t0 = json.loads(tx.stdout.readline())
        got = json.loads(rx.stdout.readline())
        assert [i for _, i in got] == [0, 1, 2], got
        tx_s = 1014 * 8 / 1e6
        arrivals = [t - t0 for t, _ in got]
        for k, t in enumerate(arrivals):
            want = (k + 1) * tx_s + 0.020
            assert abs(t - want) < 0.003, (k, arrivals)
        time.sleep(0.3)
        stats = json.loads((tmp_path / "stats.json").read_text())
        assert stats["links"][0] == {"sent": 3, "dropped": 2, "marked": 0}, stats
    finally:
        for p in procs:
            p.kill()
            p.wait(timeout=5)
        for ns in (a, b, box):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
    assert leftovers() == []


@real
def test_a_dumbbell_and_tbf_both_ways(tmp_path):
    """A dumbbell through the box (two pairs, one flow at a time, paths of three link directions
    with their own delays), and a single link whose rate is tc's tbf: each transfer's initial
    window exact and its loss-free transfer time within 10 % of the simulated one."""
    db = {"topology": {"kind": "dumbbell", "pairs": 2, "access_rate": "100Mbps", "access_delay": ["2ms", "8ms"],
                       "bottleneck_rate": "10Mbps", "bottleneck_delay": "15ms", "queue": 100},
          "tcp": {"profile": "linux"},
          "flows": [{"name": "f{i}", "from": "s{i}", "to": "r{i}", "count": 2, "start_spacing": "600ms", "bytes": "100KB"}]}
    testbed.run(db, tmp_path / "db", timeout=20)
    c = testbed.compare(tmp_path / "db", figure=None)
    for i, one_way in ((1, 0.019), (2, 0.031)):
        conn = f"flows[0]#{i} transfer 1"
        assert value(c, conn, "iw_segs", "real") == value(c, conn, "iw_segs", "sim") == 10, c.text
        r, s = value(c, conn, "transfer_time_s", "real"), value(c, conn, "transfer_time_s", "sim")
        assert abs(s - r) <= 0.10 * r, c.text
        # The handshake's RTT: both access links and the bottleneck, twice.
        assert abs(value(c, conn, "handshake_rtt_s", "real") - 2 * one_way) < 0.003, c.text
    single = {"topology": {"kind": "single_link", "rate": "10Mbps", "delay": "20ms"}, "tcp": {"profile": "linux"},
              "flows": [{"bytes": "150KB"}]}
    rec = testbed.run(single, tmp_path / "tbf", timeout=20, shaper="tbf")
    assert rec["shaper"] == "tbf"
    c = testbed.compare(tmp_path / "tbf", figure=None)
    conn = "flows[0]#1 transfer 1"
    assert value(c, conn, "iw_segs", "real") == 10
    r, s = value(c, conn, "transfer_time_s", "real"), value(c, conn, "transfer_time_s", "sim")
    assert abs(s - r) <= 0.10 * r, c.text
    assert leftovers() == []


def test_an_ecn_case_that_met_a_stall_is_run_again(tmp_path, monkeypatch):
    """exp_ecn.run_case_quiet: a run whose box wrote a frame more than STALL_LATE_MS late is
    kept aside and run again, at most STALL_RETRIES times; the result lists the stalls."""
    import json as _json

    from tcplab.testbed import exp_ecn

    lates = iter([29_300.0, 12_000.0, 500.0])
    calls = []

    def fake(scen, d, rtt_s):
        d.mkdir(parents=True, exist_ok=True)
        (d / "box-stats.json").write_text(_json.dumps({"late_us": {"max": next(lates)}}))
        calls.append(d)
        return {"attempt": len(calls)}

    monkeypatch.setattr(exp_ecn, "run_case", fake)
    r = exp_ecn.run_case_quiet({}, tmp_path / "case", 0.02)
    assert r["attempt"] == 3 and r["stalled_late_ms"] == [29.3, 12.0]
    assert (tmp_path / "case.stalled1").is_dir() and (tmp_path / "case.stalled2").is_dir()
    assert _json.loads((tmp_path / "case" / "ecn.json").read_text())["stalled_late_ms"] == [29.3, 12.0]
    # At most STALL_RETRIES more runs: the third stalled attempt is kept as it is.
    lates = iter([20_000.0] * 5)
    calls.clear()
    r = exp_ecn.run_case_quiet({}, tmp_path / "other", 0.02)
    assert len(calls) == 1 + exp_ecn.STALL_RETRIES and len(r["stalled_late_ms"]) == exp_ecn.STALL_RETRIES


def test_the_kernels_syn_options_follow_sack():
    """The kernel's SYN options in the simulator's count (timestamps apart): 12 with SACK (MSS,
    SACK-permitted and its padding, NOP and window scale), 8 without (net.ipv4.tcp_sack 0). The
    `linux` profile's 12 is a divergence for a flow without SACK, and 8 is not."""
    from tcplab.testbed import untuned

    def syn(k):
        return [d for d in untuned.divergences(k, "flows[0].tcp", False, None, None) if d["knob"] == "syn_options"]

    k = dict(tcplab.profiles()["linux"])
    assert syn(k) == []
    k["sack"] = False
    d = syn(k)
    assert len(d) == 1 and d[0]["sim"] == 12 and "8 without" in d[0]["kernel"], d
    k["syn_options"] = 8
    assert syn(k) == []
