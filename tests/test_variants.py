"""Presets (the studies' TCP variants), SACK from Python, and the `tcplab variants` command."""

from __future__ import annotations

import json

import pytest

import tcplab

LADHA = ["newreno", "sack", "sack-iw", "sack-iw-lt", "sack-iw-lt-abc1", "sack-iw-lt-abc1-er"]
MATHIS = ["tahoe", "reno", "newreno", "sack1", "fack-rh"]

# Three segments of one 20-segment window dropped, 100 ms RTT: the SACK flavours repair them in
# about one round trip, NewReno in one round trip per loss.
THREE_LOSSES = """\
[topology]
kind = "single_link"
rate = "1Gbps"
delay = "50ms"
[tcp]
preset = "{preset}"
mss = 1000
initial_window = 20
initial_ssthresh = 20000
delayed_ack = false
[[flows]]
bytes = 40000
drops = [{{ kind = "data", segment = 5 }}, {{ kind = "data", segment = 9 }}, {{ kind = "data", segment = 13 }}]
"""


def test_every_preset_of_both_studies_is_listed():
    v = tcplab.variants()
    # and the ns-2 agents beside them
    assert set(LADHA + MATHIS + ["fack", "sack-rh"]) == set(v)
    assert v["fack"]["settings"]["variant"] == "fack" and v["fack"]["settings"]["sack_blocks"] == 3
    # Ladha's variants are cumulative: each adds one mechanism to the one before.
    s = [v[n]["settings"] for n in LADHA[1:]]
    assert [x["initial_window"] for x in s] == [1, "rfc3390", "rfc3390", "rfc3390", "rfc3390"]
    assert [x["limited_transmit"] for x in s] == [False, False, True, True, True]
    assert [x["abc"] for x in s] == [0, 0, 0, 1, 1]
    assert [x["early_retransmit"] for x in s] == [False, False, False, False, True]
    assert all(x["variant"] == "sack" and x["sack"] for x in s)
    assert v["sack1"]["settings"]["sack_blocks"] == 3
    assert v["fack-rh"]["settings"]["variant"] == "fack-rh"
    # Over another profile only the mechanism knobs change.
    ns2 = tcplab.variants("ns2")
    assert ns2["sack"]["config"]["rto_initial"] == tcplab.profiles()["ns2"]["rto_initial"]
    assert ns2["sack"]["config"]["variant"] == "sack"


def test_unknown_profile_for_variants_is_refused():
    with pytest.raises(tcplab.ScenarioError, match="unknown profile"):
        tcplab.variants("win95")


@pytest.mark.parametrize("preset", ["sack", "sack1", "fack-rh"])
def test_sack_flavours_repair_three_losses_in_about_one_round_trip(preset):
    r = tcplab.run(THREE_LOSSES.format(preset=preset), seed=1)
    c = r.connections.iloc[0]
    assert c["sack_transfers"] == 1
    assert (c["timeouts"], c["retransmits"], c["sack_retransmits"], c["recoveries"]) == (0, 3, 3, 1)
    assert c["recovery_time_s"] < 0.13
    assert r.tcp[0]["variant"] == preset


def test_newreno_needs_a_round_trip_per_loss():
    r = tcplab.run(THREE_LOSSES.format(preset="newreno"), seed=1)
    c = r.connections.iloc[0]
    assert (c["timeouts"], c["retransmits"], c["sack_retransmits"], c["sack_transfers"]) == (0, 3, 0, 0)
    assert c["recovery_time_s"] > 0.28


def test_knobs_written_after_a_preset_win():
    r = tcplab.run(THREE_LOSSES.format(preset="sack-iw-lt-abc1-er") + "", seed=1, sets=["tcp.abc=2"])
    assert r.tcp[0]["abc"] == 2 and r.tcp[0]["early_retransmit"] is True


def test_unknown_preset_names_the_key():
    with pytest.raises(tcplab.ScenarioError) as e:
        tcplab.run(THREE_LOSSES.format(preset="vegas"))
    assert e.value.path == "tcp.preset"
    assert "sack-iw-lt" in str(e.value)


@pytest.mark.parametrize(
    "iw, first_flight",
    [({"segments": 4, "bytes": "4KB"}, 4), ("4380B", 4), ("rfc6928", 10), (2, 2)],
)
def test_initial_window_forms(iw, first_flight):
    # MSS 1000: Allman's lesser of 4 segments and 4096 bytes = 4 segments; 4380 B = 4 segments.
    scen = {
        "topology": {"kind": "single_link", "rate": "1Gbps", "delay": "50ms"},
        "tcp": {"mss": 1000, "initial_window": iw, "delayed_ack": False},
        "flows": [{"bytes": 1000 * first_flight}],
    }
    r = tcplab.run(scen, seed=1)
    # The whole transfer fits the initial window: one round trip of data after the handshake.
    assert r.transfers.iloc[0]["transfer_time_s"] == pytest.approx(0.15, abs=0.002)
    scen["flows"][0]["bytes"] = 1000 * first_flight + 1
    r = tcplab.run(scen, seed=1)
    assert r.transfers.iloc[0]["transfer_time_s"] == pytest.approx(0.25, abs=0.002)


def test_bad_initial_window_names_the_key():
    with pytest.raises(tcplab.ScenarioError) as e:
        tcplab.run({"topology": {"kind": "single_link", "rate": "1Gbps", "delay": "1ms"}, "tcp": {"initial_window": {"segs": 4}}, "flows": [{"bytes": 1}]})
    assert e.value.path.startswith("tcp.initial_window")
    assert "segs" in str(e.value)


def test_variants_command_lists_every_preset(cli):
    p = cli("variants")
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0].split()[:3] == ["preset", "study", "variant"]
    names = [line.split()[0] for line in lines[1:]]
    assert set(names) == set(LADHA + MATHIS + ["fack", "sack-rh"])
    row = dict(zip(lines[0].split(), lines[1 + names.index("sack-iw-lt-abc1-er")].split()))
    assert (row["variant"], row["sack"], row["iw"], row["lt"], row["abc"], row["er"]) == ("sack", "on", "rfc3390", "on", "1", "on")


def test_variants_command_json_and_bad_profile(cli):
    p = cli("variants", "--json", "--profile", "bsd")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout) == tcplab.variants("bsd")
    p = cli("variants", "--profile", "win95")
    assert p.returncode == 2
    assert p.stderr.startswith("error:") and "win95" in p.stderr
