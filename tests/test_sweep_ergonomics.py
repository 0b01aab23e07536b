"""Sweep ergonomics (issue 17, item 3): a script without the main guard is told what to do, an
unnamed sweep gets a store of its own, `load()` never mixes two sweeps, `tcplab results` shows the
mean and spread per grid point, and the axis columns have identifier names on request."""

from __future__ import annotations

import copy
import os
import subprocess
import sys
import textwrap

import pytest

import tcplab

BASE = {
    "topology": {"kind": "single_link", "rate": "10Mbps", "delay": "10ms", "loss": 0.01},
    "flows": [{"name": "f", "bytes": "16KB"}],
}


def grid(losses=(0.0, 0.02), replicates=3, name=None, base=BASE):
    d = copy.deepcopy(base)
    d["sweep"] = {"axes": {"topology.loss": list(losses)}, "replicates": replicates}
    if name:
        d["sweep"]["name"] = name
    return d


SCRIPT = """\
import tcplab
scenario = {scenario!r}
{body}
"""


def _script(tmp_path, body: str) -> subprocess.CompletedProcess:
    p = tmp_path / "my_sweep.py"
    p.write_text(SCRIPT.format(scenario=grid(name="scripted"), body=textwrap.dedent(body)))
    return subprocess.run([sys.executable, str(p)], cwd=tmp_path, capture_output=True, text=True, timeout=120)


#: Where the workers do not import the script again (POSIX), the script says they do, so that the
#: refusal outside POSIX is tested on every platform.
AS_OUTSIDE_POSIX = 'import importlib\nimportlib.import_module("tcplab.sweep")._workers_import_the_script = lambda: True\n'


def test_a_script_without_the_main_guard_is_told_what_to_do(tmp_path):
    """Outside POSIX the pool's workers import the script again: a sweep at its top level is
    refused, before anything runs, with what to do instead."""
    pre = "" if os.name != "posix" else AS_OUTSIDE_POSIX
    out = _script(tmp_path, pre + "res = tcplab.sweep(scenario, workers=2, progress=False)\nprint(len(res.runs))\n")
    assert out.returncode != 0
    assert 'if __name__ == "__main__":' in out.stderr and "workers=0" in out.stderr and "my_sweep.py" in out.stderr
    assert "lock" not in out.stderr
    assert not (tmp_path / "results" / "scripted.duckdb").exists()  # refused before anything ran
    # Under the guard it runs; without it but in this process too.
    out = _script(tmp_path, pre + 'if __name__ == "__main__":\n    res = tcplab.sweep(scenario, workers=2, progress=False)\n    print(len(res.runs))\n')
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "6"
    out = _script(tmp_path, "res = tcplab.sweep(scenario, workers=0, progress=False)\nprint(len(res.runs))\n")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "6"


@pytest.mark.skipif(os.name != "posix", reason="outside POSIX the pool's workers import the script again: the guard is needed there")
def test_a_script_needs_no_main_guard_on_posix(tmp_path):
    """The pool's workers import tcplab only, not the script: a sweep at a script's top level runs
    once, with or without the guard."""
    body = "print('script body run')\nres = tcplab.sweep(scenario, workers=2, progress=False)\nprint(len(res.runs))\n"
    out = _script(tmp_path, body)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["script", "body", "run", "6"]
    out = _script(tmp_path, 'if __name__ == "__main__":\n    res = tcplab.sweep(scenario, workers=2, progress=False)\n    print(len(res.runs))\n')
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "6"


def test_an_unnamed_sweep_gets_a_store_of_its_own(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    a = tcplab.sweep(grid(), workers=0, progress=False)
    b = tcplab.sweep(grid(losses=(0.0, 0.05)), workers=0, progress=False)
    assert a.store != b.store and "sweep.duckdb" not in (a.store, b.store)
    assert a.stats["name"].startswith("sweep-") and b.stats["name"].startswith("sweep-")
    # Run again, the same unnamed sweep finds its store and resumes.
    again = tcplab.sweep(grid(), workers=0, progress=False)
    assert again.store == a.store and again.stats["skipped"] == 6
    # A file without a name is named by its stem.
    f = tmp_path / "loss_grid.toml"
    f.write_text('[topology]\nkind = "single_link"\nrate = "10Mbps"\ndelay = "10ms"\n[[flows]]\nbytes = "16KB"\n'
                 '[sweep]\nreplicates = 1\n[sweep.axes]\n"topology.loss" = [0.0, 0.01]\n')
    assert tcplab.sweep(f, workers=0, progress=False).store.endswith("loss_grid.duckdb")


def test_load_never_mixes_two_sweeps(tmp_path, cli):
    store = tmp_path / "shared.duckdb"
    tcplab.sweep(grid(name="first"), store=store, workers=0, progress=False)
    tcplab.sweep(grid(losses=(0.05,), name="second"), store=store, workers=0, progress=False)
    with pytest.raises(tcplab.StoreError, match=r"holds 2 sweeps.*'first': 6 runs.*'second': 3 runs.*sweep=NAME"):
        tcplab.load(store)
    assert len(tcplab.load(store, sweep="first").runs) == 6
    assert set(tcplab.load(store, sweep="second").runs["topology.loss"]) == {0.05}
    assert len(tcplab.load(store, mixed=True).runs) == 9
    with pytest.raises(tcplab.StoreError, match="no sweep named 'third'"):
        tcplab.load(store, sweep="third")
    # One name swept again over other axes: refused too.
    other = grid(name="first")
    other["sweep"]["axes"] = {"topology.delay": ["5ms", "20ms"]}
    tcplab.sweep(other, store=tmp_path / "again.duckdb", workers=0, progress=False)
    tcplab.sweep(grid(name="first"), store=tmp_path / "again.duckdb", workers=0, progress=False)
    with pytest.raises(tcplab.StoreError, match="other axes"):
        tcplab.load(tmp_path / "again.duckdb")
    out = cli("results", store)
    assert out.returncode == 2 and "--sweep NAME" in out.stderr
    assert cli("results", store, "--sweep", "second").returncode == 0


def test_results_shows_mean_and_spread_per_point(tmp_path, cli):
    store = tmp_path / "s.duckdb"
    res = tcplab.sweep(grid(losses=(0.0, 0.05), replicates=4, name="spread"), store=store, workers=0, progress=False)
    s = res.summary(["goodput_bps", "retransmits"])
    assert list(s["topology.loss"]) == [0.0, 0.05] and list(s["n"]) == [4, 4]
    g = res.connections.groupby("topology.loss")["goodput_bps"]
    assert s["goodput_bps_mean"].tolist() == g.mean().tolist()
    assert s["goodput_bps_std"].fillna(0).tolist() == g.std().fillna(0).tolist()
    assert s["retransmits_max"].tolist() == res.connections.groupby("topology.loss")["retransmits"].max().tolist()
    out = cli("results", store, "--columns", "goodput_bps,retransmits")
    assert out.returncode == 0, out.stderr
    assert "mean ± standard deviation [min, max] over the seeds" in out.stdout
    lines = [l for l in out.stdout.splitlines() if l.strip().startswith("0.05")]
    assert len(lines) == 1 and lines[0].split()[-1] == "4"
    m = res.connections[res.connections["topology.loss"] == 0.05]["retransmits"]
    assert f"{m.mean():.4g} ±" in lines[0]
    out = cli("results", store, "--columns", "goodput")
    assert out.returncode == 2 and "no column 'goodput'" in out.stderr and "goodput_bps" in out.stderr


def test_axis_columns_have_identifier_names_on_request(tmp_path):
    res = tcplab.sweep(grid(name="ids"), store=":memory:", workers=0, progress=False)
    assert res.axes == ["topology.loss"]
    df = res.identifiers()
    assert "topology_loss" in df.columns and "topology.loss" not in df.columns
    assert len(df.query("topology_loss > 0")) == 3
    assert len(res.connections.query("`topology.loss` > 0")) == 3  # the documented access


def test_tcplab_sweep_is_callable_whichever_is_imported_first():
    code = """
from tcplab.sweep import parse_spec   # the submodule first: the package attribute is the module
import tcplab
res = tcplab.sweep({"topology": {"kind": "single_link", "rate": "10Mbps", "delay": "1ms"}, "flows": [{"bytes": "1KB"}],
                    "sweep": {"axes": {"topology.loss": [0.0, 0.01]}}}, store=":memory:", workers=0, progress=False)
print(len(res.runs), isinstance(res, tcplab.SweepResult), tcplab.SweepError is __import__("tcplab.sweep").sweep.SweepError)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["2", "True", "True"]
