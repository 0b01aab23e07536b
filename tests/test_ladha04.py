"""The Ladha et al. 2004 reproduction (simulations) on the tiny scale: the report, its checks and
the per-run table."""

from __future__ import annotations

import pandas as pd
from click.testing import CliRunner

from tcplab.cli import main


def test_tiny_reproduction(tmp_path):
    out = tmp_path / "l"
    res = CliRunner().invoke(main, ["reproduce", "ladha04", "--scale", "tiny", "--out", str(out), "--workers", "0", "-q"])
    assert res.exit_code == 0, res.output
    runs = pd.read_csv(out / "tables" / "runs.csv")
    assert set(runs["variant"]) == {"newreno", "sack-iw-lt-abc1-er"} and set(runs["load_kbps"]) == {0, 600, 1000}
    # No TCP loss without cross traffic nor at 600 kb/s (L1); the 1 Mb/s load costs time.
    assert (runs[runs["load_kbps"] <= 600]["drops"] == 0).all()
    t = runs.groupby("load_kbps")["time_s"].mean()
    assert t[1000] > t[0]
    checks = pd.read_csv(out / "checks.csv", keep_default_na=False)
    l1 = checks[checks["quantity"].str.startswith("L1")]
    assert len(l1) == 1 and l1["verdict"].iloc[0] == "within"
    assert (out / "figures" / "transfer_20KB.png").is_file() and (out / "report.html").is_file()
