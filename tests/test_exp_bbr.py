"""The `bbr` testbed experiment (python/tcplab/testbed/exp_bbr.py, docs/testbed.md "BBR against
the kernel"): reading the kernel's mode from `ss`, the mode changes and their comparison, the
PROBE_RTT episodes and the medians over PROBE_BW without a kernel, and the quick mode on the real
stack (root; skipped with the reason where the namespaces cannot be made, as
tests/test_testbed.py does)."""

from __future__ import annotations

import pytest

from tcplab.testbed import exp_bbr, lab
from tcplab.testbed.exp_bbr import changes, compare_modes, interval_distance, kernel_mode, median_in, parse_ss_bbr, probe_rtts

WHY = lab.missing()

SS = ("ESTAB 0 0 10.0.0.1:40000 10.0.1.1:5001\n\t cubic wscale:7,7 rto:244 rtt:43.1/1.2 mss:1448 cwnd:86 bytes_sent:1000 "
      "bbr:(bw:9.67Mbps,mrtt:40.45,pacing_gain:1.25,cwnd_gain:2) send 23.1Mbps pacing_rate 11.9Mbps delivery_rate 9.6Mbps")


def test_ss_gives_cwnd_the_model_and_the_pacing_rate_in_bytes():
    cwnd, bw, mrtt, pg, cg, pace = parse_ss_bbr(SS)
    assert (cwnd, mrtt, pg, cg) == (86, 40.45, 1.25, 2.0)
    assert bw == pytest.approx(9.67e6 / 8)
    assert pace == pytest.approx(11.9e6 / 8)  # not delivery_rate's 9.6
    assert parse_ss_bbr("ESTAB 0 0 a b\n\t cubic cwnd:10") is None


@pytest.mark.parametrize("bw,pg,cg,mode", [
    (0.0, 1.0, 1.0, "startup"),  # before the first ACK: bbr_init's STARTUP
    (1e6, 2.88672, 2.88672, "startup"),  # bbr_high_gain = 739/256
    (1e6, 0.34375, 2.88672, "drain"),  # bbr_drain_gain = 88/256
    (1e6, 1.25, 2.0, "probe_bw"), (1e6, 0.75, 2.0, "probe_bw"), (1e6, 1.0, 2.0, "probe_bw"),
    (1e6, 1.0, 1.0, "probe_rtt"),
    (1e6, 1.5, 1.5, None), (1e6, None, 2.0, None),
])
def test_the_gains_name_the_mode(bw, pg, cg, mode):
    assert kernel_mode(bw, pg, cg) == mode


def test_changes_keep_the_interval_each_change_lies_in():
    t = [0.0, 0.1, 0.2, 0.3, 0.4, 0.5]
    m = ["startup", "startup", None, "drain", "probe_bw", "probe_bw"]
    assert changes(t, m) == [("startup", None, 0.0), ("drain", 0.1, 0.3), ("probe_bw", 0.3, 0.4)]


def test_a_time_inside_the_interval_is_no_difference():
    assert interval_distance(0.25, 0.2, 0.3) == 0.0
    assert interval_distance(0.15, 0.2, 0.3) == pytest.approx(-0.05)
    assert interval_distance(0.42, 0.2, 0.3) == pytest.approx(0.12)
    assert interval_distance(0.0, None, 0.3) == 0.0


def test_modes_compared_in_order_until_they_part():
    k = [("startup", None, 0.0), ("drain", 0.50, 0.52), ("probe_bw", 0.60, 0.62), ("probe_rtt", 10.0, 10.01)]
    s = [("startup", None, 0.0), ("drain", 0.51, 0.51), ("probe_bw", 0.66, 0.66), ("drain", 10.2, 10.2)]
    c = compare_modes(k, s, rtt_s=0.04)
    assert (c["kernel"], c["sim"], c["same_sequence"], c["matched"]) == ("SDBR", "SDBD", False, 3)
    assert [r["mode"] for r in c["changes"]] == ["drain", "probe_bw"]
    assert c["changes"][0]["dt_s"] == 0.0 and c["changes"][1]["dt_rtt"] == pytest.approx(1.0)
    assert c["within_1rtt"] == 2 and c["worst_abs_dt_rtt"] == pytest.approx(1.0)


def test_probe_rtt_episodes_have_a_start_a_length_and_the_smallest_window():
    t = [0.0, 1.0, 1.1, 1.2, 1.3, 2.0, 2.1]
    m = ["probe_bw", "probe_rtt", "probe_rtt", "probe_rtt", "probe_bw", "probe_rtt", "probe_rtt"]
    c = [80, 10, 4, 4, 80, 6, 4]
    got = probe_rtts(t, m, c)
    assert got[0] == {"start": 1.0, "length": pytest.approx(0.3), "min_cwnd": 4}
    assert got[1] == {"start": 2.0, "length": None, "min_cwnd": 4}


def test_the_median_over_a_mode_is_taken_on_the_grid():
    # bw 10 for 0.5 s of STARTUP, then PROBE_BW: 30 from 0.5 s, 20 from 0.7 s (a grid of 0.1 s).
    t = [0.0, 0.5, 0.7, 0.8]
    v = [10.0, 30.0, 20.0, 20.0]
    m = ["startup", "probe_bw", "probe_bw", "probe_bw"]
    assert median_in(t, v, m, "probe_bw", step=0.1) == pytest.approx(25.0)  # the points 0.5 … 0.8: 30, 30, 20, 20
    assert median_in(t, v, m, "probe_rtt", step=0.1) is None


def test_the_cases_cover_both_variants_rates_and_round_trips():
    full = exp_bbr.cases(quick=False)
    assert len(full) == len(exp_bbr.VARIANTS) * len(exp_bbr.RATES) * len(exp_bbr.RTTS_MS) == 8
    assert exp_bbr.DURATION_S > 10.0, "past bbr_min_rtt_win_sec: one PROBE_RTT"
    assert exp_bbr.cases(quick=True) == [("clean", "10Mbps", 40)]


def test_the_loss_variant_drops_the_same_segments_on_both_sides():
    s = exp_bbr.scenario("loss", "10Mbps", 40, 1000, 1448)
    drops = [d["segment"] for d in s["flows"][0]["drops"]]
    from tcplab.testbed.exp_cwnd import drop_pattern

    assert drops == drop_pattern(exp_bbr.LOSS_SEED, 1000) and 0 < len(drops) < 30
    assert s["tcp"] == {"profile": "linux", "cc": "bbr"}
    assert s["topology"]["queue"] == 200  # max(200, 4 × 33-packet BDP)
    assert "drops" not in exp_bbr.scenario("clean", "10Mbps", 40, 1000, 1448)["flows"][0]


@pytest.mark.skipif(WHY is not None, reason=f"the testbed needs the real stack: {WHY}")
def test_quick_bbr_run_against_the_kernel(tmp_path):
    """10 Mb/s × 40 ms, 3 s, no loss: both go STARTUP → DRAIN → PROBE_BW, each change within 2
    round trips of the kernel's (the goal of 1 plus the box's start-up latency and `ss`'s 10–25
    ms between samples on a loaded machine), the bandwidth estimate and the pacing rate in
    PROBE_BW within 5 % (the issue's goal: the bottleneck's rate fixes both), no retransmission."""
    text, res = exp_bbr.bbr(tmp_path, quick=True)
    (r,) = res["runs"]
    m = r["modes"]
    assert m["kernel"] == m["sim"] == "SDB", m
    assert m["worst_abs_dt_rtt"] is not None and m["worst_abs_dt_rtt"] <= 2.0, m
    assert r["bw_error"] is not None and abs(r["bw_error"]) <= 0.05, r
    assert r["pacing_error"] is not None and abs(r["pacing_error"]) <= 0.05, r
    assert r["retx_kernel"] == 0 and r["retx_sim"] == 0
    assert r["samples"] > 50 and r["unknown_kernel_samples"] == 0
    assert "| clean | 10Mbps | 40 ms | SDB / SDB |" in text
