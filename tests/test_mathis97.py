"""The Mathis et al. 1997 reproduction: grids, a small M1 sweep, the report generator on a tiny sweep,
and the report's comparison logic."""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import pytest

from tcplab.experiments import mathis97 as m97
import tcplab
from tcplab.report import Check, Report, pairs, words


def test_full_m1_grid_is_the_papers():
    rows = m97.m1_rows("full")
    assert {r["tcp.mss"] for r in rows} == {536, 1460, 4312}
    assert sorted({r["topology.delay"] for r in rows}, key=lambda d: float(d[:-2])) == ["3ms", "10ms", "30ms", "100ms", "300ms"]
    ps = sorted({r["topology.loss"] for r in rows})
    assert ps[0] == pytest.approx(3e-5) and ps[-1] == pytest.approx(0.3)
    # log-uniform: equal ratios between neighbours
    ratios = np.diff(np.log(ps))
    assert np.allclose(ratios, ratios[0], rtol=1e-3)
    for r in rows:
        p, d = r["topology.loss"], float(r["topology.delay"][:-2]) / 1000
        dur, warm = float(r["duration"][:-1]), float(r["warmup"][:-1])
        cycle = math.sqrt(8 / (3 * p)) * 2 * d
        assert dur - warm >= 50 * cycle * 0.999, r
        rate = float(r["topology.rate"][:-3])
        model_bps = 1.31 / math.sqrt(p) * r["tcp.mss"] * 8 / (2 * d)
        assert rate >= 9.9 * model_bps, r


def test_m4_grid_has_every_tcp_both_ack_schemes_and_the_share_points():
    rows = m97.m4_rows("quick")
    combos = {(r["tcp.preset"], r["tcp.delayed_ack"]) for r in rows}
    assert combos == {(t, da) for t in m97.TCPS for da in (False, True)}
    assert set(m97.SHARE_P) <= {r["topology.loss"] for r in rows}


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    out = tmp_path_factory.mktemp("mathis97")
    res = m97.reproduce(out, scale="tiny", workers=0, progress=False, log=lambda m: None)
    return out, res


def test_small_m1_sweep_gives_c_in_a_broad_band(tiny):
    out, _ = tiny
    c = pd.read_csv(out / "tables" / "m1_runs.csv")
    clean = c[c["clean"]]
    assert len(clean) >= 2
    # FACK-RH with delayed ACKs: random-loss theory 0.93, the paper ~0.9 at small p; timeouts and
    # the delayed-ACK timer pull it lower at p ~ 0.01. A broad band: a bug (a wrong p or RTT, a
    # window that never halves) lands far outside.
    assert ((clean["C_run"] > 0.55) & (clean["C_run"] < 1.15)).all(), clean[["topology.loss", "p", "C_run"]]
    # p is the TCP's: CA events per acknowledged segment, below the link's loss rate.
    assert (clean["p"] <= clean["topology.loss"] * 1.05).all()


def test_report_is_written_with_every_part(tiny):
    out, res = tiny
    md, page, checks = res["paths"]["markdown"], res["paths"]["html"], res["paths"]["checks"]
    text = md.read_text()
    for part in ("Table 1", "M1", "M2", "Table 2", "Table 3", "Table 4", "against the paper", "tolerance"):
        assert part in text, part
    html = page.read_text()
    assert html.count("data:image/png;base64,") >= 4, "figures embedded: one self-contained file"
    for stem in ("m1_fig3_window_vs_p", "m1_fig4_c_vs_p", "m2_fig5_fig6", "m4_fig8_halving_share"):
        assert (out / "figures" / f"{stem}.png").stat().st_size > 1000
        assert (out / "figures" / f"{stem}.svg").exists()
    df = pd.read_csv(checks)
    assert set(df["verdict"]) <= {"within", "MISSED", "—"}
    assert len(df) == res["summary"]["checks"] + (df["verdict"] == "—").sum()
    # Every Table 4 row has the paper's value beside ours.
    t4 = pd.read_csv(out / "tables" / "m4_table4.csv")
    assert len(t4) == 10 and t4["eq3 C paper"].notna().all()


def test_rerun_reads_the_store(tiny):
    out, _ = tiny
    rows = m97.m1_rows("tiny")
    s = m97._sweep("m1_random_loss.toml", "mathis97_m1_tiny", rows, out / "store", 0, False)
    assert s.stats["skipped"] == len(rows), s.stats


def test_check_verdicts():
    assert Check("x", 1.0, 1.09, tol=0.10).ok is True
    assert Check("x", 1.0, 1.11, tol=0.10).ok is False
    assert Check("x", 1.0, float("nan"), tol=0.10).ok is False
    assert Check("x", "FACK", "FACK", rule=lambda o, p: o == p).ok is True
    assert Check("x", 2.0, 1.0, rule=lambda o, p: o >= 2).verdict == "MISSED"
    assert Check("x", 1.0, 1.2).ok is None and Check("x", 1.0, 1.2).diff == "+20.0 %"


def test_report_summary_counts_misses(tmp_path):
    r = Report("t")
    r.compare([Check("a", 1.0, 1.0, tol=0.1), Check("b", 1.0, 2.0, tol=0.1), Check("c", 1, 1)])
    s = r.summary()
    assert (s["checks"], s["within"], s["missed"]) == (2, 1, ["b"])
    paths = r.write(tmp_path)
    assert "1 of 2 paper comparisons within tolerance" in paths["markdown"].read_text()
    assert "MISSED" in paths["html"].read_text()


def test_headline_counts_paper_checks_only(tmp_path):
    r = Report("t")
    r.compare([Check("p1", 1.0, 1.0, tol=0.1, why="w"), Check("p2", 1.0, 2.0, tol=0.1, why="w"),
               Check("d", 6, 6, tol=0.1, kind="derived"), Check("c", 74, 70, rule=lambda o, p: abs(o - p) <= 10, kind="calibration"),
               Check("s", 0, 1.0, rule=lambda o, p: o < 1e-9, kind="sanity")], "caption")
    s = r.summary()
    assert (s["checks"], s["within"], s["missed"]) == (2, 1, ["p2"])
    assert s["by_kind"]["derived"] == {"checks": 1, "within": 1, "shown": 1} and s["by_kind"]["sanity"]["within"] == 0
    text = r.write(tmp_path)["markdown"].read_text()
    assert "**1 of 2 paper comparisons within tolerance. Not counted (own sections below): 1 derived, 1 calibration, 1 sanity checks.**" in text
    # Each other kind in its own section, after the paper checks; a missed sanity check is not a paper miss.
    assert text.index("## Checks against our own derivations") > text.index("| p2 |")
    assert "## Calibration targets" in text and "## Sanity checks" in text and "Missed: p2." in text
    assert list(pd.read_csv(tmp_path / "checks.csv")["kind"]) == ["paper", "paper", "derived", "calibration", "sanity"]
    with pytest.raises(ValueError, match="kind"):
        Check("x", 1, 1, kind="guess")


def test_a_paper_check_that_cannot_fail_is_caught():
    from tcplab.report import cannot_fail

    # A ±10-point band around a paper value of 97 % over the values a link with a bulk transfer takes (90–100 %).
    util = Check("util", 97, 96.0, rule=lambda o, p: abs(o - p) <= 10, plausible=(90, 100), why="w")
    # ±2 points around a drop rate of 0.5 % (default plausible range: half to twice the paper's value).
    drops = Check("drop", 0.5, 0.3, rule=lambda o, p: abs(o - p) <= 2, why="w")
    # An order whose rule ignores our value (a closure) cannot fail whatever we report.
    closure = Check("order", "a < b", "1.0 vs 2.0", rule=lambda o, p: True, why="w")
    # A bound that passes at 0 as well as at its limit, against a paper value of 3 %, can fail above it.
    bound = Check("rare", 3.0, 0.0, rule=lambda o, p: o <= 15, plausible=(0, 30), why="w")
    unjustified = Check("tight", 1.0, 1.0, tol=0.05)
    sound = Check("ok", 1.0, 1.02, tol=0.05, why="w")
    assert cannot_fail([util, drops, closure, bound, unjustified, sound]) == [util, drops, closure, unjustified]
    assert util.verdict_for(80) is False and util.can_fail() is False and sound.can_fail() is True
    # Kinds other than paper are not held to it.
    assert cannot_fail([Check("fi", 0, 0.0, rule=lambda o, p: True, kind="sanity")]) == []


def test_unknown_experiment_or_scale_is_refused(tmp_path):
    with pytest.raises(ValueError, match="unknown experiment"):
        m97.reproduce(tmp_path, scale="tiny", only=["m9"], log=lambda m: None)
    with pytest.raises(ValueError, match="scale"):
        m97.reproduce(tmp_path, scale="huge", log=lambda m: None)


# --- the report's form (issue 17, item 6) ------------------------------------------------------


def test_report_opens_with_its_provenance(tiny):
    out, res = tiny
    text = res["paths"]["markdown"].read_text()
    head = text.split("paper comparisons within tolerance")[0]
    assert f"**tcplab:** {tcplab.__version__} (commit " in head
    assert tcplab._core.__commit__ in head and tcplab._core.__commit__ != ""
    assert "**command:** " in head and "scale='tiny'" in head
    assert re.search(r"\*\*written:\*\* \d{4}-\d\d-\d\d \d\d:\d\d UTC", head)
    assert re.search(r"\*\*seeds:\*\* T1 1; M1 1; M2 1; M3 1; M4 1", head)
    assert "<b>command:</b>" in res["paths"]["html"].read_text()


def test_report_prose_has_no_python_reprs_and_no_missing_files(tiny):
    out, res = tiny
    text = res["paths"]["markdown"].read_text()
    prose = [l for l in text.splitlines() if l and not l.startswith("|") and not l.startswith("![")]
    for line in prose:
        assert not re.search(r"\[['\d]|\{'|': |\bTrue\b|\bFalse\b", line), line
    assert "min_th 5, max_th 15" in text and "gentle off" in text
    # Every file the report links to exists; no file outside the output is named.
    for link in re.findall(r"\]\(([^)]+)\)", text):
        assert (out / link).exists(), link
    assert "TARGETS" not in text and not re.search(r"\b[A-Z_]+\.md\b", text)
    # The checks table says what each column is, the tolerance as a rule.
    # (M3 runs in ns-2 too, so the report has ns-2's column: its value, or why it has none.)
    assert "| quantity | paper's value | ns-2's value | tcplab's value | difference, (tcplab − paper) / paper | within if | why this tolerance | verdict | note |" in text
    assert "\\|tcplab − paper\\| ≤ 10 % of paper" in text  # the pipes escaped in Markdown
    assert "|tcplab − paper| ≤ 10 % of paper" in set(pd.read_csv(res["paths"]["checks"])["tolerance"])
    # Captions match the markers: the M2 outliers are drawn as large open black squares.
    assert "Large open black squares" in text


def test_legends_are_in_numeric_order():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    df = pd.DataFrame({"topology.delay": ["10ms", "3ms", "300ms", "30ms"], "p": [0.01] * 4, "window": [10.0] * 4, "timeouts": [0] * 4})
    fig, ax = plt.subplots()
    m97._window_plot(ax, df, "window", "topology.delay", "t")
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels[:4] == ["delay 3ms", "delay 10ms", "delay 30ms", "delay 300ms"]
    plt.close(fig)
    assert words([30, 3, 100], "ms") == "3 ms, 30 ms and 100 ms" and words(["x"]) == "x"
    assert pairs({"min_th": 5, "gentle": False, "w_q": 0.002}) == "min_th 5, gentle off, w_q 0.002"


def test_every_paper_check_can_fail(tiny):
    from conftest import assert_check_kinds

    out, res = tiny
    assert_check_kinds(res["checks"], out)


def test_no_ns2_leaves_the_ns2_column_out(tmp_path, monkeypatch):
    """`tcplab reproduce mathis97 --no-ns2`: ns-2 is never started, no ns-2 column or cache is
    written, the report says the column was left out, and the estimate drops ns-2's time."""
    from click.testing import CliRunner

    from tcplab.cli import main
    from tcplab.ns2 import runner

    def refuse(*a, **k):
        raise AssertionError("ns-2 started although --no-ns2")

    monkeypatch.setattr(runner, "run_tcl", refuse)
    out = tmp_path / "m"
    res = CliRunner().invoke(main, ["reproduce", "mathis97", "--scale", "tiny", "--only", "m3", "--no-ns2", "--out", str(out),
                                    "--workers", "0", "-q"])
    assert res.exit_code == 0, res.output
    assert not (out / "ns2").exists()
    assert "ns-2" not in (out / "tables" / "m3_table2.csv").read_text().splitlines()[0]
    text = (out / "report.md").read_text()
    assert "The ns-2 columns were left out" in text and "paper, ns-2 and tcplab" not in text and "--no-ns2" in text
    assert m97.estimate_seconds("full", 2, ns2=False) < m97.estimate_seconds("full", 2)
