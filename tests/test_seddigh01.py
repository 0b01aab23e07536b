"""The Seddigh & Devetsikiotis 2001 reproduction on the tiny scale (the report, its tables and
checks), and its pieces that do not need a sweep: Jain's index, §3's drops, Table 2's method."""

from __future__ import annotations

import math

import pandas as pd
from click.testing import CliRunner

import tcplab
from tcplab.cli import main
from tcplab.experiments import seddigh01

from conftest import assert_check_kinds


def test_metrics_are_the_papers():
    t = pd.Series([1.0, 1.0, 4.0])
    m = seddigh01.metrics(t)
    assert m["objects"] == 3 and m["t_avg_s"] == 2.0
    assert math.isclose(m["std_s"], math.sqrt(2.0))
    # FI = (Σ T)² / (N Σ T²) = 36 / (3 · 18), and FI = 1 / (1 + CV²) with the population std.
    assert math.isclose(m["fi"], 36 / 54) and math.isclose(m["fi"], 1 / (1 + m["cv"] ** 2))
    assert seddigh01.metrics(pd.Series([], dtype=float))["objects"] == 0


def test_intranet_drops_cost_the_initial_rto_of_the_repairing_end():
    d = seddigh01.intranet().set_index("case")
    assert d.loc["no drop", "added_s"] == 0
    assert abs(d.loc["SYN dropped", "added_s"] - 3.0) < 0.01
    assert abs(d.loc["SYN-ACK dropped", "added_s"] - 6.0) < 0.01
    assert abs(d.loc["GET dropped", "added_s"] - 3.0) < 0.01
    assert d.loc["GET dropped", "retransmits"] == 1 and d.loc["SYN dropped", "handshake_retransmitted"]


def test_table2_measures_what_each_profile_configures(tmp_path):
    t = seddigh01.table2(tmp_path, 4).set_index("profile")
    assert (t["fetches"] == 4).all()
    # linux22 on its 10 ms jiffies: 3 s to within a tick, doubling.
    assert abs(t.loc["linux22", "initial_rto_s"] - 3.0) <= 0.01 and abs(t.loc["linux22", "backoff"] - 2.0) <= 0.01
    # The 500 ms slow timer of the BSD stacks: a SYN goes again 5.5 to 6 s after it.
    assert 5.5 <= t.loc["netbsd10", "initial_rto_s"] <= 6.0
    assert t.loc["vxworks54", "backoff"] > 2.5


def test_tiny_reproduction(tmp_path):
    out = tmp_path / "s"
    res = CliRunner().invoke(main, ["reproduce", "seddigh01", "--scale", "tiny", "--out", str(out), "--workers", "0", "-q"])
    assert res.exit_code == 0, res.output
    loss = pd.read_csv(out / "tables" / "e_loss.csv")
    assert set(loss["rto_s"]) == {0.5, 6.5} and (loss["objects"] > 50).all() and (loss["loss_pct"] > 0).all()
    gran = pd.read_csv(out / "tables" / "e_granularity_rtt.csv")
    assert set(gran["case"]) == {"500 ms"} and (gran["objects"] > 50).all()
    checks = pd.read_csv(out / "checks.csv", keep_default_na=False)
    fi = checks[checks["quantity"].str.startswith("FI = 1 / (1 + CV²)")]
    assert len(fi) == 1 and fi["verdict"].iloc[0] == "within"
    assert checks["quantity"].str.startswith("§3:").sum() == 3
    assert (out / "figures" / "rto_vs_loss.png").is_file() and (out / "report.html").is_file()
    # One sweep a model: model 1's E-loss grid and the paper's count, model 2's case.
    runs = {p.name: len(tcplab.load(p).runs) for p in (out / "store").glob("*.duckdb")}
    assert runs == {"seddigh01_model1_tiny.duckdb": 3, "seddigh01_model2_tiny.duckdb": 2}
    # The identity and the configured timeouts are sanity checks; the loss levels met by chosen FTP
    # counts are calibration; none of them counts in the headline.
    res = seddigh01.reproduce(out, scale="tiny", workers=0, progress=False, log=lambda m: None)
    assert_check_kinds(res["checks"], out)
    kind = {c.what: c.kind for c in res["checks"]}
    assert kind["FI = 1 / (1 + CV²) on every run of ours: largest difference"] == "sanity"
    assert {k for w, k in kind.items() if w.startswith("§3:")} == {"sanity"}
    assert {k for w, k in kind.items() if "per direction (mean over initial RTOs)" in w} == {"calibration"}


def _model1_objects(spacing: str, rto: str) -> int:
    import tcplab

    sets = seddigh01._ftp_sets(25) + ["duration=150s", "apps.0.pages=30", f'apps.0.page_spacing="{spacing}"', f"tcp.rto_initial={rto}"]
    return len(tcplab.run(str(seddigh01.scenario("model1")), seed=2001, sets=sets).objects)


def test_model1_open_loop_starts_the_same_objects_whatever_the_initial_rto():
    # Pages spaced start to start (the paper's WebTraf): each session starts all its pages, so the
    # objects started do not depend on the initial RTO; spaced end to start, a larger initial RTO
    # makes pages longer and fewer of them start in the run.
    open_ = {rto: _model1_objects("start_to_start", rto) for rto in ("0.5s", "6.5s")}
    closed = {rto: _model1_objects("end_to_start", rto) for rto in ("0.5s", "6.5s")}
    assert open_["0.5s"] == open_["6.5s"] > 500
    assert closed["6.5s"] < closed["0.5s"] < open_["0.5s"]


def test_model1_sweep_runs_each_point_once_longest_first():
    # E-loss's grid (3 levels x 8 initial RTOs) and the paper's 3 FTP counts at 3 s, of which
    # (25 FTPs, 3 s) is both E-loss's 2.2 % level and the paper's 6.4 % count: run once.
    full = seddigh01.model1_points("full")
    assert len(full) == len(set(full)) == 3 * 8 + 3 - 1
    assert full.count((25, 3.0)) == 1 and {(8, 3.0), (40, 3.0), (280, 0.5), (280, 6.5)} <= set(full)
    assert [n for n, _ in full] == sorted((n for n, _ in full), reverse=True)
    assert seddigh01.model1_points("tiny") == [(25, 0.5), (25, 6.5), (8, 3.0)]
