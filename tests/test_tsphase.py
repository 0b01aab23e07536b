"""The timestamps clock's phase (`ts_offset`, `testbed.tsphase`): set in a simulation, read back
from its capture; refused at a millisecond or more."""

import pytest

import tcplab
from tcplab.testbed import tsphase

SCEN = {"topology": {"kind": "single_link", "rate": "50Mbps", "delay": "20ms"},
        "tcp": {"profile": "linux"}, "flows": [{"bytes": "300KB"}]}


@pytest.mark.parametrize("offset_us", [0, 137, 600, 999])
def test_the_phase_set_is_the_phase_read_from_the_capture(tmp_path, offset_us):
    scen = {**SCEN, "tcp": {**SCEN["tcp"], "ts_offset": f"{offset_us}us"}}
    pcap = tmp_path / "s.pcap"
    tcplab.run(scen, pcap=pcap)
    ph = tsphase.phase(pcap)
    # The SYN leaves at time 0: the last tick before it came `offset` before it.
    assert ph["lo_ms"] <= offset_us / 1000 <= ph["hi_ms"] + 1e-9, ph
    # 214 packets at 50 Mb/s bound it within 0.05 ms.
    assert ph["hi_ms"] - ph["lo_ms"] < 0.05, ph
    assert tsphase.offset_for(ph["since_tick_ms"], 0.0) == f"{round(ph['since_tick_ms'] * 1e6) % 1_000_000}ns"


def test_the_phase_moves_the_tsecr_samples():
    # A TSecr RTT sample is whole milliseconds (tcp_rtt_tsopt_us): on a 40.3 ms round trip the
    # phase decides whether segments read 40 or 41 ms, and with it the RTT the sender keeps.
    def srtt(off):
        r = tcplab.run({**SCEN, "topology": {**SCEN["topology"], "delay": "20150us"}, "tcp": {**SCEN["tcp"], "ts_offset": off}})
        return r.connections["rtt_min_s"].iloc[0], r.connections["rtt_avg_s"].iloc[0]
    assert srtt("0us") == srtt("0us")
    assert srtt("0us") != srtt("800us")


def test_a_phase_of_a_millisecond_is_refused():
    with pytest.raises(tcplab.ScenarioError, match="ts_offset"):
        tcplab.run({**SCEN, "tcp": {**SCEN["tcp"], "ts_offset": "1ms"}})


@pytest.mark.parametrize("offset_us", [0, 1500, 3900])
def test_the_jiffy_phase_set_is_read_back_from_the_delayed_acks(tmp_path, offset_us):
    # The first segment lost: the recovery leaves single segments whose delayed ACKs go by the
    # timer, on a tick (the receiver's capture, as the testbed keeps it).
    from tcplab.testbed import simulate

    scen = {"topology": {"kind": "single_link", "rate": "5Mbps", "delay": "30ms", "queue": 1000},
            "tcp": {"profile": "linux", "jiffy_offset": f"{offset_us}us"},
            "flows": [{"bytes": "700KB", "drops": [{"kind": "data", "segment": 1}]}]}
    simulate(scen, tmp_path, ["receiver"])
    pcap = tmp_path / "sim-receiver.pcap"
    tick = tsphase.jiffy_tick([pcap], 250)
    assert tick and tick["acks"] >= 1, tick
    # Ticks fall `offset` before whole multiples of 4 ms.
    want = (-offset_us * 1e-6) % 0.004
    assert abs((tick["tick_s"] - want + 0.002) % 0.004 - 0.002) < 1e-6, (tick, want)
    # And the offset that puts ticks there relative to a SYN at 0 is the one set.
    assert tsphase.jiffy_offset_for(tick["tick_s"], 250, 0.0) == f"{(offset_us * 1000) % 4_000_000}ns"
