"""The `linux6` profile on the testbed's side (docs/testbed.md, "Linux's RTO and ACKs"), without
root: its knobs mapped or checked by the plan, and the ACK replay of `tcplab.testbed.linuxrx`
checked on a capture of the simulator itself, where it must reproduce every ACK exactly.
"""

from __future__ import annotations

import json
import os

import pytest

import tcplab
from tcplab.testbed import build, lab, linuxrx

LINK = {"kind": "single_link", "rate": "10Mbps", "delay": "30ms"}


def test_linux6_is_a_profile_with_linux_timers_and_receiver():
    """`linux` is the Linux 6.x model, `linux6` the same profile under the version's name, and
    `rfc6675-iw10` the old `linux` model: the same constants without Linux's own mechanisms."""
    p = tcplab.profiles()
    l6, l, old = p["linux6"], p["linux"], p["rfc6675-iw10"]
    assert l6 == l
    own = ("rto_model", "hz", "delack_model", "comp_sack_nr", "cc", "cwnd_validation", "loss", "tlp", "reduction", "timestamps", "fin_with_data", "tso_defer", "ecn", "rcv_buffer", "ssthresh_from_cwnd",
           "dsack", "undo", "frto", "syn_linear_timeouts", "syn_options", "handshake_ack_alone")
    assert tuple(l[k] for k in own) == ("linux", 250, "linux", 44, "cubic", "linux", "rack", True, "prr", True, True, True, "accept", "linux", True, True, True, True, 4,
                                        12, True)
    assert tuple(old[k] for k in own) == ("rfc6298", 0, "rfc", 0, "reno", "rfc5681", "dupthresh", False, "halve", False, False, False, "off", "fixed", False, False, False, False, 0,
                                          8, False)
    assert {k: v for k, v in l.items() if k not in own} == {k: v for k, v in old.items() if k not in own}


def test_plan_maps_sack_compression_and_checks_hz():
    scen = {"topology": LINK, "tcp": {"profile": "linux6"}, "flows": [{"bytes": "100KB"}]}
    plan, _ = build(scen)
    for h in ("sender", "receiver"):
        assert plan.sysctls[h]["net.ipv4.tcp_comp_sack_nr"] == 44
    plan, _ = build({**scen, "tcp": {"profile": "rfc6675-iw10"}})
    assert plan.sysctls["receiver"]["net.ipv4.tcp_comp_sack_nr"] == 0
    hz = lab.kernel_hz()
    if hz is None:
        pytest.skip("this kernel's CONFIG_HZ is not readable (/proc/config.gz, /boot/config-*)")
    other = 1000 if hz != 1000 else 250
    with pytest.raises(tcplab.ScenarioError) as e:
        build({**scen, "tcp": {"profile": "linux6", "hz": other}})
    assert e.value.path == "tcp.hz" and f"CONFIG_HZ={hz}" in str(e.value)


def test_jiffy_phase_from_timer_driven_acks():
    j = 0.004
    arrivals = [0.0100, 0.2000, 0.5000]
    # ACKs 40 ms after an arrival, on ticks at 1.3 ms + k·4 ms; one immediate ACK is ignored.
    acks = [0.0100 + 0.00001, 0.0413 + 0.0080, 0.2413, 0.5413 + 0.0000]
    assert linuxrx.jiffy_phase(acks, arrivals, j) == pytest.approx(0.0013, abs=1e-6)
    assert linuxrx.jiffy_phase([0.01001], arrivals, j) == 0.0


def test_ack_replay_of_the_simulators_own_capture_is_exact(tmp_path):
    """A `linux6` transfer captured at the receiver, taken for a kernel run: replayed, the
    simulated receiver sends the same ACKs at the same times."""
    scen = {"topology": LINK, "tcp": {"profile": "linux6"}, "flows": [{"bytes": "300KB"}],
            "capture": [{"path": "real-receiver.pcap", "node": "receiver"}]}
    here = os.getcwd()
    os.chdir(tmp_path)
    try:
        tcplab.run(scen)
    finally:
        os.chdir(here)
    (tmp_path / "testbed.json").write_text(json.dumps({"kernel_hz": 250}))
    res = linuxrx.ack_replay(tmp_path, n_segments=100)
    assert res["data_segments"] == 100
    assert res["real_acks"] == res["sim_acks"] == res["same_ack_number"] == res["within_tol"] > 50
    assert res["only_real"] == res["only_sim"] == 0
    assert res["max_abs_diff_ms"] < 0.001


def test_linux_wscale_is_tcp_select_initial_window_s():
    """tcp_select_initial_window(): ilog2(min(max(64 KB, tcp_rmem[2] = 32 MB, rmem_max), route
    window)) − 15, within 0..14: the testbed runs' route windows of 64 KB, 93 750 B and 234 375 B
    gave scales 1, 1 and 2 (their captured windows), none gives 10."""
    assert [linuxrx.linux_wscale(w) for w in (None, 65536, 93750, 234375, 1 << 40)] == [10, 1, 1, 2, 10]
    assert linuxrx.linux_wscale(20000) == 0


def test_packets_carry_the_timestamps_option(tmp_path):
    """trace.packets' tsval/tsecr columns: a `linux6` capture (timestamps on) has them on every
    segment; an `rfc6675-iw10` capture (timestamps off) has none."""
    here = os.getcwd()
    os.chdir(tmp_path)
    try:
        for profile in ("linux6", "rfc6675-iw10"):
            tcplab.run({"topology": LINK, "tcp": {"profile": profile}, "flows": [{"bytes": "20KB"}],
                        "capture": [{"path": f"{profile}.pcap", "node": "receiver"}]})
    finally:
        os.chdir(here)
    for profile, on in (("linux6", True), ("rfc6675-iw10", False)):
        pk = tcplab.trace.packets(tmp_path / f"{profile}.pcap")
        assert pk["tsval"].notna().all() == on and pk["tsecr"].notna().any() == on
        if on:
            # RFC 7323 §3.2: the SYN's TSecr is 0; the simulated clock starts at 0, so the
            # SYN-ACK echoes TSval 0 too; after that TSecr follows the 1 ms clock.
            assert (pk.loc[pk["tcp_flags"] == "S", "tsecr"] == 0).all()
            assert (pk.loc[~pk["syn"], "tsecr"] > 0).all()
