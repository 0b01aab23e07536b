"""`cc = "cubic"` end to end (the packet-level rules are in crates/tcplab-core/tests/cubic.rs): a
bulk transfer that loses one segment reduces ssthresh to Linux's 717/1024 of the window (Reno: half
the flight), the run is deterministic, and the knob is in every profile's full listing."""

from __future__ import annotations

import tcplab

SCENARIO = {
    "name": "cubic-one-drop",
    "duration": "5s",
    "topology": {"kind": "single_link", "rate": "10Mbps", "delay": "20ms"},
    # RFC 6675 recovery with Reno unless `cc` says otherwise (the old `linux` model): the two
    # controllers over the same recovery.
    "tcp": {"profile": "rfc6675-iw10", "mss": "1000B", "delayed_ack": False},
    "flows": [{"bytes": "unlimited", "drops": [{"kind": "data", "segment": 40}]}],
}


def first_reduction(cc: str) -> tuple[float, float]:
    """(cwnd before the first ssthresh change, ssthresh after it), in segments of 1000 B."""
    d = {**SCENARIO, "tcp": {**SCENARIO["tcp"], "cc": cc}}
    tcp = tcplab.run(d, series=True).series.tcp
    tcp = tcp[tcp.dir == "a2b"].reset_index(drop=True)
    finite = tcp.ssthresh < 1e15
    i = int(finite.idxmax())
    assert finite.any() and i > 0
    return tcp.cwnd[i - 1] / 1000, tcp.ssthresh[i] / 1000


def test_cubic_reduces_ssthresh_to_717_of_1024_of_cwnd():
    w, ss = first_reduction("cubic")
    # cubictcp_recalc_ssthresh: max(cwnd·717/1024, 2) from cwnd, in whole packets.
    assert ss == max(int(w) * 717 // 1024, 2), (w, ss)
    w_reno, ss_reno = first_reduction("reno")
    assert abs(ss_reno - w_reno / 2) <= 1, (w_reno, ss_reno)  # RFC 5681 eq. 4: FlightSize/2


def test_cubic_runs_are_deterministic_and_differ_from_reno():
    d = {**SCENARIO, "tcp": {**SCENARIO["tcp"], "cc": "cubic"}}
    a, b = tcplab.run(d), tcplab.run(d)
    assert a.connections.to_dict() == b.connections.to_dict()
    reno = tcplab.run(SCENARIO)
    assert a.connections.to_dict() != reno.connections.to_dict()


def test_a_bad_cc_names_the_key():
    d = {**SCENARIO, "tcp": {**SCENARIO["tcp"], "cc": "vegas"}}
    try:
        tcplab.run(d)
    except tcplab.ScenarioError as e:
        assert e.path == "tcp.cc" and "reno" in str(e) and "cubic" in str(e), e
    else:
        raise AssertionError("cc = \"vegas\" was accepted")
