"""DCTCP's sawtooth period against the counts Alizadeh et al.'s eq. 10 rests on
(experiments/dctcp/analysis.py, docs/ecn.md "DCTCP against its analysis"): with two flows at
1 Gb/s, 1 ms and K = 20, each flow's period brings the analysis' W* + 1 marks but two
reductions, one per window that carried an ECE (RFC 3168 §6.1.2; Linux tcp_fastretrans_alert /
tcp_try_to_open), which is why α sits about 30 % below eq. 10."""

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


def test_two_flows_take_two_reductions_and_w_plus_one_marks_a_period(analysis):
    p = analysis.periods(2, 20, "1Gbps", 1e-3, seconds=2.0, warmup=1.0, seed=1)
    # 1 s after the warm-up holds about 100 periods: a mean over them is stable to a few percent.
    assert p["cuts_per_period"] == pytest.approx(2.0, abs=0.1)
    assert p["marks_per_period"] == pytest.approx(p["W*"] + 1, rel=0.05)
    # α is eq. 10's with two reductions a period, not with one.
    assert p["alpha"] == pytest.approx(p["alpha_r"], rel=0.10)
    assert p["alpha"] < 0.8 * p["alpha_eq10"]
