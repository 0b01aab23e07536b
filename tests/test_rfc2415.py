"""The RFC 2415 reproduction: its base scenarios, the metrics of one run, and the whole report on
the tiny scale (a few cells, 60 s runs), read back from its stores on a rerun."""

from __future__ import annotations

import pandas as pd
import pytest
from click.testing import CliRunner

import tcplab

from tcplab.cli import main
from tcplab.experiments import rfc2415 as r2

from conftest import HAVE_NS, assert_check_kinds, needs_ns


def test_base_scenarios_have_the_ftps_asked_for():
    s0, s3 = r2.base(0, "quick"), r2.base(3, "quick")
    assert [a["kind"] for a in s0["apps"]] == ["http10"]
    assert [a["kind"] for a in s3["apps"]] == ["http10", "ftp"] and s3["apps"][1]["instances"] == 3
    assert s0["duration"] == "360s" and r2.base(0, "tiny")["duration"] == "60s"
    assert s3["apps"][0]["response"] == {"named": "mah1997_reply"}
    assert r2.base(1, "quick", r2.ALT_SIZES)["apps"][0]["response"] == {"named": r2.ALT_SIZES}


def test_busy_link_and_light_loss_tolerances_can_fail():
    # ±10 points around a utilization of 98 % and ±2 points around a drop rate of 0.5 % would pass
    # anything a loaded link can give; the tolerances used can fail.
    from tcplab.report import Check

    wide = Check("u", 98, 97.0, rule=lambda o, p: abs(o - p) <= 10, plausible=(90, 100), why="x")
    assert wide.can_fail() is False
    assert r2._util_check("u", 98, 97.0).can_fail() and r2._util_check("u", 34, 36.0).can_fail()
    assert r2._drop_check("d", 0.5, 0.4).can_fail() and r2._drop_check("d", 0.0, 0.0).can_fail()
    assert r2._drop_check("d", 0.5, 1.2).ok is False and r2._drop_check("d", 3.5, 5.0).ok is True
    assert len([1 for (w, f) in r2.ERRATUM for _ in r2.IWS]) == 12


def test_published_tables_are_complete():
    for t in (r2.TABLE1, r2.TABLE4, r2.TABLE2):
        assert set(t) == {(w, f) for w in r2.WEBS for f in r2.FTPS}
    for t in (r2.TABLE3, r2.TABLE5):
        assert set(t) == {(w, f) for w in r2.WEBS for f in (1, 2, 3)}


def test_tiny_reproduction_writes_its_report_and_reruns_from_the_store(tmp_path):
    out = tmp_path / "r"
    res = CliRunner().invoke(main, ["reproduce", "rfc2415", "--scale", "tiny", "--out", str(out), "--workers", "0", "-q"])
    assert res.exit_code == 0, res.output
    assert (out / "report.md").is_file() and (out / "report.html").is_file()
    checks = pd.read_csv(out / "checks.csv", keep_default_na=False)
    for prefix in ("Table 1", "Table 2", "Table 3", "Table 4", "Table 5", "Table 6", "§2.11", "§2.10"):
        assert checks["quantity"].str.startswith(prefix).any(), prefix
    assert set(checks["verdict"]) <= {"within", "MISSED", ""}
    judged = checks[checks["verdict"] != ""]
    assert len(judged) >= 30
    # Web network power rises from IW1 to IW4 by more than the RFC's 15 % in the light cells.
    power = checks[checks["quantity"].str.startswith("§2.11/Fig. 2")]
    assert float(power["tcplab"].iloc[0]) >= 1.15
    runs = pd.read_csv(out / "tables" / "runs.csv")
    assert set(runs["iw"]) == {1, 4} and (runs["pages"] > 0).all() and (runs["util_pct"] <= 100).all()
    for f in ("figures/fig2_normalised_power.png", "figures/page_delay_vs_iw.png", "tables/table1.csv", "tables/sensitivity.csv"):
        assert (out / f).is_file(), f
    # A rerun only reads the stores: no run is added, and the checks are the same.
    stores = sorted((out / "store").glob("*.duckdb"))
    before = {p.name: len(tcplab.load(p).runs) for p in stores}
    res = CliRunner().invoke(main, ["reproduce", "rfc2415", "--scale", "tiny", "--out", str(out), "--workers", "0", "-q"])
    assert res.exit_code == 0, res.output
    assert {p.name: len(tcplab.load(p).runs) for p in stores} == before
    again = pd.read_csv(out / "checks.csv", keep_default_na=False)
    pd.testing.assert_frame_equal(checks, again)
    if HAVE_NS:
        # The ns-2 column: every tiny cell of Tables 1-5 (http1.0 and http1.1, 8 each) and Table
        # 6's six runs (16 and 32 webs all-IW1, all-IW3 and split) run once in ns-2, kept in
        # OUT/ns2/ (the rerun above read them back: the same checks), beside the paper's values.
        assert len(list((out / "ns2").glob("rfc2415_*.json"))) == 8 + 8 + 6
        for t in ("Table 1 (http10)", "Table 4 (http11)"):
            t1 = checks[checks["quantity"].str.startswith(t) & checks["quantity"].str.contains("IW1 median")]
            assert len(t1) == 4 and all(0.2 < float(v) < 5 for v in t1["ns2"]), t
        t2 = checks[checks["quantity"].str.startswith("Table 2 ") & checks["quantity"].str.contains("utilization")]
        assert all(20 < float(v) <= 100 for v in t2["ns2"])
        # Table 2 is http1.0's: its ns-2 value is the http1.0 run's, not a mean with http1.1's.
        nr = pd.read_csv(out / "tables" / "ns2_runs.csv")
        cell = nr[(nr["model"] == "http10") & (nr["webs"] == 16) & (nr["ftps"] == 1) & (nr["iw"] == 1)]["util_pct"]
        assert float(t2[t2["quantity"] == "Table 2 16 webs/1 FTPs IW1: utilization %"]["ns2"].iloc[0]) == round(float(cell.iloc[0]), 1)
        t5 = checks[checks["quantity"].str.startswith("Table 5 (http11)")]
        assert len(t5) == 4 and all(float(v) > 0 for v in t5["ns2"])
        t6 = checks[checks["quantity"].str.startswith("Table 6 ")]
        assert len(t6) == 28 and all(float(v) >= 0 for v in t6["ns2"]) and (t6["ns2"].astype(float) > 0).sum() >= 24
        hurt = checks[checks["quantity"].str.startswith("§2.10")]
        assert len(hurt) == 2 and all(0.5 < float(v) < 2 for v in hurt["ns2"])
    res = r2.reproduce(out, scale="tiny", workers=0, progress=False, log=lambda m: None)
    assert_check_kinds(res["checks"], out)
    # Table 6 repeats Table 1's 16-web runs: shown, not counted twice; its goodput and link are compared.
    t6 = {c.what: c.kind for c in res["checks"] if c.what.startswith("Table 6")}
    assert t6["Table 6 16 webs: IW1 clients' median page delay (s)"] == "sanity"
    assert t6["Table 6 8/8 split: IW1 clients' goodput (MB)"] == "paper" and "Table 6 16/16 split: drop rate % (the split run)" in t6


def test_only_is_for_mathis97():
    res = CliRunner().invoke(main, ["reproduce", "rfc2415", "--scale", "tiny", "--only", "m1"])
    assert res.exit_code != 0 and "--only applies to mathis97" in res.output


@needs_ns
def test_ns2_metrics_read_a_run_as_per_run_reads_tcplabs(tmp_path):
    # One 20 s run of 4 web clients and an FTP in ns-2: its row has per_run()'s columns, and its
    # utilization (departed bytes over the link's capacity) and goodput agree with the log.
    from tcplab.ns2 import runner

    s = r2.base(1, "tiny")
    s["duration"] = "20s"
    n = runner.run_log(s, ["apps.0.instances=4"], seed=1, monitor=["bottleneck"])
    row = r2.ns2_metrics(n, 20.0)
    for k in ("pages", "page_delay_s", "web_MB", "ftp_MB", "ftp_file_s", "ftp_power", "util_pct", "drop_pct", "web_power"):
        assert k in row, k
    assert row["pages"] > 5 and 0.2 < row["page_delay_s"] < 5 and 30 < row["util_pct"] <= 100
    link = n.links.set_index("link").loc[r2.BOTTLENECK]
    assert row["util_pct"] == pytest.approx(link["departed_bytes"] * 8 / (1.5e6 * 20) * 100)
    ftp = n.objects[n.objects["session"] == 4]
    assert row["ftp_MB"] == pytest.approx(ftp["bytes_delivered"].sum() / 1e6) and row["ftp_MB"] > 0.5
