"""The ns-2 column of Seddigh & Devetsikiotis 2001's HTTP model 2 (E-granularity, E-RTT).

- With `ns`: model 2 runs in ns-2 without a trace at the initial RTOs 0.5 and 6.5 s, its objects'
  times and the bottleneck's loss read from the script's log, cached in the output folder (a rerun
  runs no ns-2).
- The checks carry ns-2's value of the same quantity, computed from ns-2's runs by the same rule.
- Without `ns`: the checks say "ns-2 not installed".
"""

from __future__ import annotations

import pandas as pd
import pytest

from tcplab.experiments import seddigh01 as s01
from tcplab.ns2 import runner
from conftest import needs_ns


def small_grid(monkeypatch):
    """Model 2 at 500 ms with 20 FTPs a direction, 5 objects a session, 90 s."""
    grid = s01._grid("tiny") | {"m2_count": 5, "m2_duration": "90s"}
    monkeypatch.setattr(s01, "_grid", lambda scale: grid)


@needs_ns
def test_model2_runs_in_ns2_and_is_cached(tmp_path, monkeypatch):
    small_grid(monkeypatch)
    (tmp_path / "tables").mkdir()
    n, why = s01.ns2_gran_runs("tiny", tmp_path, log=lambda m: None, workers=2)   # both initial RTOs at once
    assert why == "" and list(n["rto_s"]) == [0.5, 6.5] and set(n["case"]) == {"500 ms"}
    assert (n["objects"] + n["unfinished"] == 50).all() and (n["objects"] >= 45).all()   # 10 sessions of 5 objects
    assert (n["loss_pct"] > 0).all() and (n["t_avg_s"] > 0.3).all()
    assert len(list((tmp_path / "ns2").glob("model2_500ms_*.json"))) == 2
    monkeypatch.setattr(runner, "run_log", lambda *a, **k: pytest.fail("ns-2 ran again"))
    again, _ = s01.ns2_gran_runs("tiny", tmp_path, log=lambda m: None)
    pd.testing.assert_frame_equal(n, again)


@needs_ns
def test_model1_pages_run_in_ns2(tmp_path, monkeypatch):
    grid = s01._grid("tiny") | {"m1_duration": "70s", "loss_levels": {2.2: 8}}
    monkeypatch.setattr(s01, "_grid", lambda scale: grid)
    (tmp_path / "tables").mkdir()
    n, why = s01.ns2_loss_runs("tiny", tmp_path, log=lambda m: None)
    assert why == "" and list(n["rto_s"]) == [0.5, 6.5] and set(n["level"]) == {2.2} and set(n["ftps"]) == {8}
    # 10 sessions from 50 s, pages Exp(2 s) apart of 2.54 objects on average: some 100-200 objects in 20 s.
    assert (n["objects"] > 50).all() and (n["loss_pct"] > 0).all()
    assert len(list((tmp_path / "ns2").glob("model1_loss8_*.json"))) == 2


def frame(t_lo, t_hi, fi_lo=0.6, fi_hi=0.3):
    return pd.DataFrame([dict(case="500 ms", granularity_ms=500, ftps=20, rto_s=r, t_avg_s=t, std_s=t, fi=f, cv=1.0, loss_pct=1.7,
                              objects=10, unfinished=0, timeouts=0) for r, t, f in ((0.5, t_lo, fi_lo), (6.5, t_hi, fi_hi))])


@pytest.mark.filterwarnings("ignore:The behavior of DataFrame concatenation:FutureWarning")   # the empty E-loss frame of this test
def test_checks_carry_ns2s_value_of_the_same_quantity():
    gran, n = frame(1.0, 1.5), frame(1.2, 1.2, fi_hi=0.5)
    loss = pd.DataFrame(columns=["level", "rto_s", "t_avg_s", "std_s", "fi", "cv", "loss_pct", "ftps"])
    checks = {c.what: c for c in s01._checks(loss, pd.DataFrame(columns=["ftps", "level", "loss_pct"]), gran, n)}
    assert checks["E-granularity 500 ms: T_avg (s) at initial RTO 6.5 s"].ns2 == 1.2
    assert checks["E-granularity 500 ms: T_avg (s) change from 0.5 s to 6.5 s, %"].ns2 == 0.0
    assert checks["E-granularity 500 ms: T_avg(6.5 s) − T_avg(0.5 s), s"].ns2 == 0.0
    fi = checks["E-granularity 500 ms: FI at initial RTO 6.5 s"]
    assert fi.ns2 == 0.5 and fi.ok is True and fi.verdict_for(fi.ns2) is False     # tcplab within, ns-2 not
    assert checks["E-granularity 500 ms: bottleneck loss with 20 FTPs, %"].ns2 == 1.7
    # Without ns-2 runs: the reason.
    none = {c.what: c for c in s01._checks(loss, pd.DataFrame(columns=["ftps", "level", "loss_pct"]), gran, None, "ns-2 not installed")}
    assert none["E-granularity 500 ms: FI at initial RTO 6.5 s"].ns2 == "ns-2 not installed"


def test_without_ns_the_column_says_so(tmp_path, monkeypatch):
    def missing():
        raise runner.Ns2NotFound(runner.INSTALL_HINT)

    monkeypatch.setattr(runner, "ns_binary", missing)
    n, why = s01.ns2_gran_runs("tiny", tmp_path, log=lambda m: None)
    assert n is None and why == "ns-2 not installed"
    assert s01.ns2_runs("tiny", tmp_path, log=lambda m: None) == ((None, "ns-2 not installed"), (None, "ns-2 not installed"))
