"""The quick reproduction report says which of its misses come from the quick grid
(report.Report.mark_scale_limits, each study's SCALE_LIMITS, docs/reproductions.md)."""

from __future__ import annotations

import re

import pytest

from tcplab.experiments import allman98, ladha04, mathis97, rfc2415, seddigh01
from tcplab.experiments.study import scale_limits
from tcplab.report import Check, Report


def _report(scale):
    r = Report("t")
    r.scale, r.study = scale, "mathis97"
    r.compare([
        Check("M1: eq. 5 exponent k over p < 0.01", -0.5, -0.7, tol=0.1),          # missed, the quick grid weakens it
        Check("T2 RED: link p", 0.01, 0.02, tol=0.1),                              # missed, not the grid's doing
        Check("M2: C near p = 0.01 from the RTTM fit (Fig. 6)", 1.0, 1.01, tol=0.1),  # within
    ], "c")
    r.mark_scale_limits(scale_limits("mathis97", scale))
    return r


def test_quick_report_says_which_misses_come_from_the_grid(tmp_path):
    r = _report("quick")
    m1, t2, m2 = r.checks
    assert m1.note.startswith("quick grid: M1 runs 3 of the 5 delays")
    assert "quick grid" not in t2.note
    assert "quick grid" in m2.note  # marked even when within: the reader sees it rests on fewer points
    assert r.summary()["missed_from_scale"] == [m1.what]
    md = r.markdown(tmp_path)
    para = next(line for line in md.splitlines() if line.startswith("Scale quick:"))
    assert "1 of the 2 misses" in para and m1.what in para and "The other 1 would be" in para
    assert "Scale quick:" in r.html()


def test_full_report_has_no_scale_notes(tmp_path):
    r = _report("full")
    assert not r.scale_limited and all("grid" not in c.note for c in r.checks)
    assert "Scale " not in r.markdown(tmp_path)


@pytest.mark.parametrize("mod,names", [
    (mathis97, ["M1: eq. 3 fit over p < 0.01 (DA)", "Table 4 eq. 3 C, no DA, reno", "highest W/2 share at p = 0.033, DA"]),
    (rfc2415, ["Table 1 (http10) 8 webs/0 FTPs: IW1 median page delay (s)", "Table 6 x: IW1 clients' goodput (MB)"]),
    (allman98, ["A5 Internet: IW 4 time saved vs IW 1, %", "§6.4 mechanism: share of loss-hit transfers repaired without a timeout, IW 4 minus IW 2 (points)"]),
    (ladha04, ["L1 (20 KB, Fig. 2): TCP drops with aggregate cross traffic below 800 kb/s (every variant and seed)", "L7 (10 MB): runs with an Early Retransmit, %"]),
    (seddigh01, ["E-loss 2.2 %: T_avg at initial RTO 0.5 s", "E-granularity 50 ms: FI at initial RTO 6.5 s"]),
])
def test_each_study_marks_its_quick_grid_checks(mod, names):
    limits = mod.SCALE_LIMITS["quick"]
    for n in names:
        assert any(re.search(p, n) for p, _ in limits), n
    # A check the quick grid runs as the full one does stays unmarked.
    if mod is allman98:
        assert not any(re.search(p, "A1 modem 24 packets, 100ms: time saved by IW 3–16 vs IW 1, mean %") for p, _ in limits)
    if mod is mathis97:
        assert not any(re.search(p, "T2 RED: link p") for p, _ in limits)
