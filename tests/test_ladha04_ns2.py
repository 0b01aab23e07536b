"""The ns-2 column of the Ladha et al. 2004 reproduction (docs/reproductions.md, Ladha).

- The variants ns-2 expresses export (NewReno, Sack1 with IW 3 and singledup_); ABC and Early
  Retransmit are refused by key path, and the report says so from the export's own refusals.
- The quantities from ns-2's packets: Limited Transmit segments counted at first and second
  duplicate ACKs; L5's rule judges each simulator's value against its own runs.
- With `ns`: on the tiny scale the checks carry ns-2's values, the ns-2 runs are cached in the
  output folder (a rerun runs no ns-2) and the report shows both columns. Without `ns`: the
  checks say "ns-2 not installed".
"""

from __future__ import annotations

import pandas as pd
import pytest

import tcplab
from tcplab.experiments import ladha04 as l04
from tcplab.ns2 import runner
from tcplab.ns2.script import export
from conftest import needs_ns


@pytest.mark.parametrize("variant", list(l04.NS2_VARIANTS))
def test_the_ns2_variants_export(variant):
    s = export(l04.scenario_path(), sets=l04.ns2_sets(variant, "100KB", 900), seed=1)
    agent = "Agent/TCP/Newreno" if variant == "newreno" else "Agent/TCP/Sack1"
    assert f"set tcp(0) [new {agent}]" in s.tcl
    assert "$tcp(0) set windowInit_ " + ("3" if "iw" in variant else "1") in s.tcl
    assert "$tcp(0) set singledup_ " + ("1" if "lt" in variant else "0") in s.tcl
    assert "$tcp(0) set window_ 13" in s.tcl and s.conns[0].packets == 71
    assert "set mix_rate(0) " in s.tcl and len([c for c in s.conns]) == 1


def test_abc_and_early_retransmit_are_refused_by_key_path():
    why = l04.ns2_unexpressed()
    assert "SACK-IW-LT-ABC1: tcp.abc" in why and "SACK-IW-LT-ABC1-ER: tcp.early_retransmit" in why
    with pytest.raises(tcplab.ScenarioError) as e:
        export(l04.scenario_path(), sets=l04.ns2_sets("sack-iw-lt", "20KB", 0) + ["tcp.abc=1"])
    assert e.value.path == "tcp.abc"


def test_ns2_transfers_are_whole_packets():
    assert l04.ns2_bytes("20KB") == 21900 and l04.ns2_bytes("100KB") == 103660


def test_limited_transmits_are_new_segments_on_the_first_two_duplicate_acks():
    rows = []

    def ack(t, a, dup):
        rows.append(dict(conn=0, dir="b2a", time_s=t, event="rx", len=0, end=1, ack=a, dup_ack=dup, retx=False))

    def data(t, end, retx=False):
        rows.append(dict(conn=0, dir="a2b", time_s=t, event="tx", len=1460, end=end, ack=None, dup_ack=False, retx=retx))

    data(0.0, 1461), data(0.0, 2921), data(0.0, 4381), data(0.0, 5841)
    ack(1.0, 1461, False)
    ack(1.1, 1461, True), data(1.1, 7301)          # first duplicate: LT
    ack(1.2, 1461, True), data(1.2, 8761)          # second: LT
    ack(1.3, 1461, True), data(1.3, 2921, retx=True)   # third: the fast retransmit (recover 8761)
    ack(1.4, 1461, True), data(1.4, 10221)         # in recovery: not LT
    ack(1.5, 4381, False), data(1.5, 4381, retx=True)  # a partial ACK (NewReno)
    ack(1.6, 4381, True), data(1.6, 11681)         # a duplicate after it, still in recovery: not LT
    ack(1.7, 11681, False)                         # recovery over
    data(1.7, 13141), data(1.7, 14601)
    ack(1.8, 11681, True), data(1.8, 16061)        # a first duplicate again: LT
    assert l04.limited_transmits(pd.DataFrame(rows)) == 3


def frame(drops_below, drops_above):
    rows = []
    for load, d in ((600, drops_below), (900, drops_above)):
        rows.append(dict(variant="newreno", size="100KB", load_kbps=load, replicate=0, seed=1, time_s=1.0, drops=d, limited_transmits=0))
    rows.append(dict(variant="newreno", size="20KB", load_kbps=600, replicate=0, seed=1, time_s=1.0, drops=0, limited_transmits=0))
    return pd.DataFrame(rows)


def test_l5_judges_each_simulator_against_its_own_runs():
    # tcplab: 0.5 below, 3 above (within); ns-2: 0.5 below, 0.6 above (drops do not rise: missed).
    c, n = frame(0.5, 3.0), frame(0.5, 0.6)
    l5 = next(k for k in l04._checks(c, n) if k.what.startswith("L5 (100 KB): drops"))
    assert l5.ok is True and l5.verdict_for(l5.ns2) is False
    assert float(l5.ns2) == 0.5 and "ns-2's 0.60" in l5.note


@needs_ns
def test_tiny_reproduction_has_an_ns2_column_cached_in_its_folder(tmp_path, monkeypatch):
    res = l04.reproduce(tmp_path, scale="tiny", workers=0, progress=False, log=lambda m: None)
    n = pd.read_csv(tmp_path / "tables" / "runs_ns2.csv")
    # The tiny grid's NewReno rows (its other variant has ABC and ER): 20 KB at 0, 600, 1000 kb/s.
    assert list(n["variant"]) == ["newreno"] * 3 and list(n["load_kbps"]) == [0, 600, 1000]
    assert (n[n["load_kbps"] <= 600]["drops"] == 0).all() and (n["time_s"] > 0.5).all()
    l1 = next(c for c in res["checks"] if c.what.startswith("L1"))
    assert l1.ns2 == 0 and l1.ns2_value == 0
    er = [c for c in res["checks"] if "Early Retransmit" in c.what and c.what.startswith("L3")]
    assert er and er[0].ns2 == "ns-2: not expressible (tcp.early_retransmit)"
    assert len(list((tmp_path / "ns2").glob("newreno_20KB_*.json"))) == 3
    text = (tmp_path / "report.md").read_text()
    assert "ns-2 column: the rows of NewReno" in text and "time_s ns-2 | time_s tcplab" in text
    # A rerun reads ns-2's cells from the folder: no ns-2 run.
    monkeypatch.setattr(runner, "run", lambda *a, **k: pytest.fail("ns-2 ran again"))
    again = l04.reproduce(tmp_path, scale="tiny", workers=0, progress=False, log=lambda m: None)
    assert next(c for c in again["checks"] if c.what.startswith("L1")).ns2 == 0


def test_without_ns_the_checks_say_so(tmp_path, monkeypatch):
    def missing():
        raise runner.Ns2NotFound(runner.INSTALL_HINT)

    monkeypatch.setattr(runner, "ns_binary", missing)
    res = l04.reproduce(tmp_path, scale="tiny", workers=0, progress=False, log=lambda m: None)
    l1 = next(c for c in res["checks"] if c.what.startswith("L1"))
    assert l1.ns2 == "ns-2 not installed" and l1.ns2_value is None
    assert "ns-2 column: none (ns-2 not installed)" in (tmp_path / "report.md").read_text()
