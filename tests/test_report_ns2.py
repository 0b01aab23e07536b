"""The ns-2 column of the reproduction reports: a check's ns-2 value beside the paper's and
tcplab's, which side of a miss it is on, and Mathis's M3 run in ns-2 at the tiny scale (skipped,
with the reason, where `ns` is not installed)."""

import json

import pandas as pd
import pytest

from tcplab.experiments import mathis97 as m97
from tcplab.report import Check, Report
from conftest import HAVE_NS, NS_MISSING


def test_side_of_a_tolerance_miss():
    # tcplab 30 % off the paper; ns-2 at the paper's value: tcplab's miss.
    assert Check("x", 1.0, 1.3, tol=0.1, ns2=1.0).side == "tcplab differs from ns-2"
    # tcplab and ns-2 together, both off the paper: ns-2's own distance.
    assert Check("x", 1.0, 1.3, tol=0.1, ns2=1.28).side == "ns-2 also differs from the paper"
    # Within, or no ns-2 value (not run, or a reason): no side.
    assert Check("x", 1.0, 1.05, tol=0.1, ns2=1.5).side == ""
    assert Check("x", 1.0, 1.3, tol=0.1).side == ""
    assert Check("x", 1.0, 1.3, tol=0.1, ns2="ns-2 not installed").side == ""
    assert Check("x", 1.0, 1.3, tol=0.1, ns2=float("nan")).side == ""
    # tcplab within 10 % of ns-2, ns-2 itself within: the miss straddles the band's edge.
    c = Check("x", 1.0, 1.12, tol=0.1, ns2=1.08)
    assert c.side.startswith("ns-2 also differs from the paper (marginally")


def test_side_of_a_rule_miss():
    has = dict(rule=lambda o, p: o > 0, tol_text="> 0")
    assert Check("timeouts", 37, 0, ns2=74, **has).side == "tcplab differs from ns-2"
    assert Check("timeouts", 37, 0, ns2=0, **has).side == "ns-2 also differs from the paper"
    assert Check("timeouts", 37, 3, ns2=0, **has).side == ""


def test_report_shows_the_ns2_column_and_says_the_side(tmp_path):
    r = Report("t")
    r.compare([Check("a", 1.0, 1.0, tol=0.1, why="w", ns2=0.98), Check("b", 1.0, 2.0, tol=0.1, why="w", ns2=1.0, note="n"),
               Check("c", 1.0, 2.0, tol=0.1, why="w", ns2=1.9), Check("d", 1.0, 1.0, tol=0.1, why="w")], "cap")
    s = r.summary()
    # The headline counts paper comparisons only, as without ns-2.
    assert (s["checks"], s["within"], s["missed"]) == (4, 2, ["b", "c"])
    assert s["missed_sides"] == {"b": "tcplab differs from ns-2", "c": "ns-2 also differs from the paper"}
    paths = r.write(tmp_path)
    md = paths["markdown"].read_text()
    assert "**2 of 4 paper comparisons within tolerance.**" in md
    header = next(line for line in md.splitlines() if line.startswith("| quantity"))
    cols = [c.strip() for c in header.strip("|").split("|")]
    assert cols[:4] == ["quantity", "paper's value", "ns-2's value", "tcplab's value"]
    row_b = next(line for line in md.splitlines() if line.startswith("| b |"))
    assert "| 1 | 1 | 2 |" in row_b and "tcplab differs from ns-2; n" in row_b
    assert "2 have an ns-2 value: 1 where tcplab differs from ns-2 (b), 1 where ns-2 also differs from the paper (c)" in md
    assert "ns-2&#x27;s value" in paths["html"].read_text() or "ns-2's value" in paths["html"].read_text()
    csv = pd.read_csv(paths["checks"])
    assert list(csv.columns[:5]) == ["kind", "quantity", "paper", "ns2", "tcplab"]
    assert list(csv["ns2"].fillna("")) == ["0.98", "1", "1.9", "—"]


def test_a_report_without_ns2_values_has_no_ns2_column(tmp_path):
    r = Report("t")
    r.compare([Check("a", 1.0, 1.0, tol=0.1, why="w")])
    paths = r.write(tmp_path)
    assert "ns-2" not in paths["markdown"].read_text()
    assert "ns2" not in pd.read_csv(paths["checks"]).columns


def test_m3_without_ns_says_not_installed_and_does_not_fail(tmp_path, monkeypatch):
    from tcplab.ns2 import runner

    def absent(*a, **k):
        raise runner.Ns2NotFound(runner.INSTALL_HINT)

    monkeypatch.setattr(runner, "run", absent)
    res = m97.reproduce(tmp_path, scale="tiny", only=["m3"], workers=0, progress=False, log=lambda m: None)
    md = res["paths"]["markdown"].read_text()
    assert "ns-2's value" in md and "ns-2 not installed" in md
    m3 = [c for c in res["checks"] if c.what.startswith(("T2", "T3"))]
    assert m3 and all(c.ns2 == "ns-2 not installed" and c.side == "" for c in m3)
    t2 = pd.read_csv(tmp_path / "tables" / "m3_table2.csv")
    assert (t2["DT tcp1 ns-2"] == "ns-2 not installed").all()
    # Nothing is cached for a run that did not happen.
    assert not (tmp_path / "ns2").exists() or not list((tmp_path / "ns2").glob("*.json"))


@pytest.fixture(scope="module")
def tiny_m3(tmp_path_factory):
    if not HAVE_NS:
        pytest.skip(NS_MISSING)
    out = tmp_path_factory.mktemp("m97ns2")
    res = m97.reproduce(out, scale="tiny", only=["m3"], workers=0, progress=False, log=lambda m: None)
    return out, res


def test_m3_tiny_has_the_ns2_column_from_ns2_runs(tiny_m3):
    out, res = tiny_m3
    md = res["paths"]["markdown"].read_text()
    assert "ns-2's value" in md
    m3 = [c for c in res["checks"] if c.what.startswith(("T2", "T3"))]
    assert len(m3) == 10
    for c in m3:
        assert isinstance(c.ns2, (int, float)), (c.what, c.ns2)
    # Each table: paper, ns-2 and tcplab for every cell; ns-2's bottleneck carries most of the
    # 0.8 Mb/s and the two connections share it.
    t2 = pd.read_csv(out / "tables" / "m3_table2.csv").set_index("row")
    assert [c for c in t2.columns if c.startswith("DT link")] == ["DT link paper", "DT link ns-2", "DT link tcplab"]
    bw = t2.loc["Bandwidth (kb/s)"]
    assert 600 < float(bw["DT link ns-2"]) <= 800
    assert float(bw["DT tcp1 ns-2"]) + float(bw["DT tcp2 ns-2"]) == pytest.approx(float(bw["DT link ns-2"]), rel=0.1)
    # ns-2's losses cell reads CA events + timeouts + other losses, as tcplab's.
    ca, to, other = (int(x) for x in str(t2.loc["losses (CA+timo+other)", "DT tcp1 ns-2"]).split("+"))
    assert ca + to > 0
    # One cache file per configuration, next to the store.
    files = sorted((out / "ns2").glob("m3_*.json"))
    assert len(files) == 4
    cached = json.loads(files[0].read_text())
    assert {"sets", "seed", "cells"} <= set(cached) and {"link", "tcp1", "tcp2"} == set(cached["cells"])


def test_m3_tiny_miss_attribution(tiny_m3):
    _, res = tiny_m3
    for c in res["checks"]:
        if c.ok is False and c.ns2_value is not None:
            assert c.side in ("tcplab differs from ns-2", "ns-2 also differs from the paper") or c.side.startswith("ns-2 also differs from the paper (")
            ns2_ok = c.verdict_for(c.ns2_value)
            if c.rule is not None:
                assert (c.side == "tcplab differs from ns-2") == bool(ns2_ok)
    s = res["summary"]
    assert set(s["missed_sides"]) <= set(s["missed"])
    md = res["paths"]["markdown"].read_text()
    for what, side in s["missed_sides"].items():
        row = next(line for line in md.splitlines() if line.startswith(f"| {what} |"))
        assert side in row


def test_m3_rerun_reads_ns2_from_its_cache(tiny_m3, monkeypatch):
    from tcplab.ns2 import runner

    out, res = tiny_m3

    def must_not_run(*a, **k):
        raise AssertionError("ns-2 ran again although its results are cached")

    monkeypatch.setattr(runner, "run", must_not_run)
    again = m97.reproduce(out, scale="tiny", only=["m3"], workers=0, progress=False, log=lambda m: None)
    assert [c.ns2 for c in again["checks"]] == [c.ns2 for c in res["checks"]]


def _segments(rows):
    cols = ["conn", "event", "dir", "time_s", "seq", "len", "end", "ack", "retx"]
    return pd.DataFrame([dict(zip(cols, r)) for r in rows], columns=cols)


def _trace(second_repair: bool):
    """A connection (MSS 1000) with one RTT sample, a fast retransmit repaired within its episode
    (with `second_repair`, a second ACK-clocked retransmission in it), then a timeout."""
    tx = lambda t, seq, retx=False: (0, "tx", "a2b", t, seq, 1000, seq + 1000, None, retx)  # noqa: E731
    ack = lambda t, a: [(0, "tx", "b2a", t - 0.05, 1, 0, 1, a, False), (0, "rx", "b2a", t, 1, 0, 1, a, False)]  # noqa: E731
    rows = [tx(0.0, 1), tx(0.1, 1001), *ack(0.2, 1001), tx(0.3, 2001), tx(0.3, 3001), tx(0.3, 4001), *ack(0.5, 2001),
            *ack(0.6, 2001), *ack(0.61, 2001), *ack(0.62, 2001), tx(0.62, 2001, True)]
    if second_repair:
        rows += [*ack(0.7, 3001), tx(0.7, 3001, True)]
    rows += [*ack(0.8, 5001), tx(1.0, 5001), tx(2.5, 5001, True), *ack(2.7, 6001)]
    return _segments(rows)


def test_ns2_instruments_from_packets():
    c = m97._ns2_conn_cells(_trace(False), 0, 1000, 0.0, 3.0)
    # One RTTM sample (the first segment; the next timed one meets a retransmission: Karn).
    assert c["tcp_rtt"] == pytest.approx(200.0)
    # The fast retransmit's episode ends at ACK 5001: a CA event; the timeout's is not.
    assert (c["ca_events"], c["non_ca_events"], c["timeouts"], c["other_losses"]) == (1, 1, 1, 0)
    assert c["losses"] == "1+1+0" and c["packets"] == 6 and c["p"] == pytest.approx(1 / 6)
    assert c["bw"] == pytest.approx(6000 * 8 / 3.0 / 1000)
    # A second ACK-clocked retransmission in the episode: SACK's repair ("other"), or Reno's
    # second fast retransmit (a second reduction: the episode is not a CA event).
    sack = m97._ns2_conn_cells(_trace(True), 0, 1000, 0.0, 3.0)
    reno = m97._ns2_conn_cells(_trace(True), 0, 1000, 0.0, 3.0, each_retx_reduces=True)
    assert (sack["ca_events"], sack["non_ca_events"], sack["other_losses"]) == (1, 1, 1)
    assert (reno["ca_events"], reno["non_ca_events"], reno["other_losses"]) == (0, 2, 0)
    # Counted from the warmup's end: the first episode ended before it.
    late = m97._ns2_conn_cells(_trace(False), 0, 1000, 0.9, 3.0)
    assert (late["ca_events"], late["non_ca_events"], late["timeouts"]) == (0, 1, 1)


def test_m2_tiny_has_ns2_values(tmp_path):
    if not HAVE_NS:
        pytest.skip(NS_MISSING)
    res = m97.reproduce(tmp_path, scale="tiny", only=["m2"], workers=0, progress=False, log=lambda m: None)
    m2 = [c for c in res["checks"] if c.what.startswith("M2:")]
    assert len(m2) == 2 and all(isinstance(c.ns2, float) for c in m2)
    t = pd.read_csv(tmp_path / "tables" / "m2_ns2.csv")
    assert len(t) == len([r for r in m97.m2_rows("tiny") if float(r["topology.rate"].removesuffix("bps")) <= m97.M2_NS2_MAX_RATE])
    assert (t["p ns-2"] > 0).all() and t["C ns-2"].between(0.3, 3).all()
    assert len(list((tmp_path / "ns2").glob("m2_*.json"))) == len(t)


def test_studies_without_ns2_say_why_from_the_export(tmp_path):
    from tcplab.experiments import study

    # The reasons are the export's own refusals, by key path, written as prose (no reprs).
    assert "tcp.rto_model" in study.ns2_refusals("allman98")
    assert "`rfc6298`" in study.ns2_refusals("allman98") and "'rfc6298'" not in study.ns2_refusals("allman98")   # prose, no reprs
    assert study.ns2_refusal(m97.scenario_dir() / "m3_phase.toml") == ""
    report, _ = study.begin("allman98", "t", tmp_path, "tiny", None, lambda: "1", "s", [])
    text = report.write(tmp_path)["markdown"].read_text()
    assert "ns-2: not expressible (modem.toml: tcp.rto_model:" in text
    # Studies with an ns-2 column list no refusal (RFC 2415's two-way web and FTP clients export).
    assert study.ns2_refusals("seddigh01") == study.ns2_refusals("ladha04") == study.ns2_refusals("rfc2415") == ""


def _fake_run(seg, drops, agent):
    from types import SimpleNamespace

    return SimpleNamespace(script=SimpleNamespace(conns=[SimpleNamespace(conn=0, mss=1000, agent=agent)]), segments=seg, drops=drops)


def test_m4_ns2_cells_count_the_links_drops_and_reno_reductions():
    drops = pd.DataFrame([dict(time_s=0.3, link="link:sender->receiver", conn=0, dir="a2b", seq=2001),
                          dict(time_s=1.0, link="link:sender->receiver", conn=0, dir="a2b", seq=5001),
                          dict(time_s=0.05, link="link:sender->receiver", conn=0, dir="a2b", seq=1)])   # before the warmup's end
    c = m97._ns2_m4_cells(_fake_run(_trace(False), drops, "Agent/TCP/Reno"), 0.2, 3.0)
    # Data packets offered after the warmup: three at 0.3, the retransmission at 0.62, 1.0 and 2.5.
    assert (c["offered"], c["dropped"]) == (6, 2) and c["p_link"] == pytest.approx(1 / 3)
    # Reno (no bugFix_): a second ACK-clocked retransmission in an episode is a second reduction;
    # Sack1 repairs it within the episode (`_ns2_conn_cells`'s `each_retx_reduces`).
    reno = m97._ns2_m4_cells(_fake_run(_trace(True), drops, "Agent/TCP/Reno"), 0.0, 3.0)
    sack = m97._ns2_m4_cells(_fake_run(_trace(True), drops, "Agent/TCP/Sack1"), 0.0, 3.0)
    assert (reno["ca_events"], reno["non_ca_events"]) == (0, 2)
    assert (sack["ca_events"], sack["non_ca_events"], sack["other_losses"]) == (1, 1, 1)
    empty = m97._ns2_m4_cells(_fake_run(_trace(False), drops.iloc[0:0], "Agent/TCP"), 0.2, 3.0)
    assert empty["dropped"] == 0 and empty["p_link"] == 0


def test_m4_rows_run_in_ns2_are_the_four_tcps_with_an_agent_at_every_share_point():
    for scale in ("tiny", "full"):
        rows = m97.m4_rows(scale)
        sub = m97.m4_ns2_rows(rows)
        assert {r["tcp.preset"] for r in sub} == {"sack1", "reno", "newreno", "tahoe"}
        assert all(float(r["topology.loss"]) >= m97.M4_NS2_MIN_P for r in sub)
        assert len(sub) == len([r for r in rows if r["tcp.preset"] != "fack-rh" and float(r["topology.loss"]) >= m97.M4_NS2_MIN_P])
    full = {float(r["topology.loss"]) for r in m97.m4_ns2_rows(m97.m4_rows("full"))}
    assert set(m97.SHARE_P) <= full


def test_m4_without_ns_says_not_installed(tmp_path, monkeypatch):
    from tcplab.ns2 import runner

    def absent(*a, **k):
        raise runner.Ns2NotFound(runner.INSTALL_HINT)

    monkeypatch.setattr(runner, "run", absent)
    res = m97.reproduce(tmp_path, scale="tiny", only=["m4"], workers=0, progress=False, log=lambda m: None)
    m4 = {c.what: c for c in res["checks"]}
    for tcp in ("SACK", "Reno", "NewReno", "Tahoe"):
        assert m4[f"Table 4 eq. 3 C, no DA, {tcp}"].ns2 == "ns-2 not installed"
        assert m4[f"no-DA / DA C ratio, {tcp}"].ns2 == "ns-2 not installed"
    assert m4["Table 4 eq. 3 C, DA, FACK"].ns2.startswith("ns-2: FACK-RH is not expressible (tcp.variant:")
    assert m4["lowest W/2 share at p = 0.033, no DA"].ns2 == "ns-2 not installed"
    assert all(c.side == "" for c in m4.values())
    assert not (tmp_path / "tables" / "m4_table4_ns2.csv").exists()


def test_m4_tiny_has_ns2_values(tmp_path):
    if not HAVE_NS:
        pytest.skip(NS_MISSING)
    res = m97.reproduce(tmp_path, scale="tiny", only=["m4"], workers=0, progress=False, log=lambda m: None)
    m4 = {c.what: c for c in res["checks"]}
    for ack in ("no DA", "DA"):
        for tcp in ("SACK", "Reno", "NewReno", "Tahoe"):
            v = m4[f"Table 4 eq. 3 C, {ack}, {tcp}"].ns2
            assert isinstance(v, float) and 0.5 < v < 2.0, (ack, tcp, v)
        # FACK-RH has no ns-2 agent: the export's reason, not a value.
        assert m4[f"Table 4 eq. 3 C, {ack}, FACK"].ns2_value is None
        assert m4[f"highest W/2 share at p = 0.033, {ack}"].ns2_value is None
    for tcp in ("SACK", "Reno", "NewReno", "Tahoe"):
        r = m4[f"no-DA / DA C ratio, {tcp}"]
        assert r.ns2 == pytest.approx(m4[f"Table 4 eq. 3 C, no DA, {tcp}"].ns2 / m4[f"Table 4 eq. 3 C, DA, {tcp}"].ns2)
    assert m4["lowest W/2 share at p = 0.033, no DA"].ns2 in ("SACK", "Reno", "NewReno", "Tahoe")
    t = pd.read_csv(tmp_path / "tables" / "m4_table4_ns2.csv")
    assert len(t) == 8 and (t["N ns-2"] >= 1).all() and t["W/2 @0.033 ns-2"].between(0, 1).all()
    # The tcplab column of that table is the fit over the same grid points (at tiny scale: all of them).
    t4 = pd.read_csv(tmp_path / "tables" / "m4_table4.csv")
    both = t.merge(t4, on=["ACK", "TCP"])
    assert (both["eq3 C tcplab"] - both["eq3 C"]).abs().max() < 1e-9
    files = list((tmp_path / "ns2").glob("m4_*.json"))
    assert len(files) == len(m97.m4_ns2_rows(m97.m4_rows("tiny")))
    md = res["paths"]["markdown"].read_text()
    assert "not run in ns-2 yet" not in md and "Table 4 in ns-2" in md
