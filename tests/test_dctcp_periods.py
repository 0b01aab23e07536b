"""DCTCP's sawtooth period against the counts Alizadeh et al.'s eq. 10 rests on
(experiments/dctcp/analysis.py, docs/ecn.md "DCTCP against its analysis"): with two flows at
1 Gb/s, 1 ms and K = 20, each flow's period brings the analysis' W* + 1 marks and one reduction
(RFC 3168 §6.1.2, once per window of data: the ECE on the ACK of the window's own last segment
starts none; Linux tcp_fastretrans_alert holds CWR until something above high_seq is ACKed),
and α sits where eq. 10's balance puts it once the round trip in which the window is held is
counted."""

import importlib.util
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def analysis():
    spec = importlib.util.spec_from_file_location("dctcp_analysis", REPO / "experiments" / "dctcp" / "analysis.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_two_flows_take_one_reduction_and_w_plus_one_marks_a_period(analysis):
    p = analysis.periods(2, 20, "1Gbps", 1e-3, seconds=2.0, warmup=1.0, seed=1)
    # 1 s after the warm-up holds about 100 periods: a mean over them is stable to a few percent.
    # Two reductions a period (the ECE on the ACK of exactly high_seq taken for a new window's)
    # would read 2.0 here.
    assert p["cuts_per_period"] == pytest.approx(1.0, abs=0.1)
    assert p["marks_per_period"] == pytest.approx(p["W*"] + 1, rel=0.05)
    # α is eq. 10's balance with the held round trip (T − 1 round trips of growth a period)...
    assert p["alpha"] == pytest.approx(p["alpha_held"], rel=0.05)
    # ...and about 11 % below eq. 10's sqrt(2/W*), which grows the window every round trip.
    assert 0.80 * p["alpha_eq10"] < p["alpha"] < 0.95 * p["alpha_eq10"]


def test_the_held_round_trip_balance_tends_to_eq_10(analysis):
    # (sqrt(1 + 2(W* + 1)) − 1)/W* → sqrt(2/W*) as W* grows; two reductions a period lower it.
    for w in (50.0, 500.0, 5000.0):
        eq10 = (2 / w) ** 0.5
        assert analysis.alpha_held(w) < eq10
    assert analysis.alpha_held(5000.0) == pytest.approx((2 / 5000.0) ** 0.5, rel=0.02)
    assert analysis.alpha_held(50.0, 2.0) < analysis.alpha_held(50.0, 1.0)
