"""The studies' one cached ns-2 run (`tcplab.experiments.study.ns2_cached_run`): a run is made
once and read back from `folder/<stem>_<digest>.json`, the digest that of the exported script and
the cells' version; without `ns` or when ns-2 fails it raises and caches nothing."""

from __future__ import annotations

import hashlib
import json
from types import SimpleNamespace

import pytest

from tcplab.experiments import mathis97 as m97
from tcplab.experiments import study
from tcplab.ns2 import runner
from tcplab.ns2.script import export
from conftest import needs_ns

SCEN = m97.scenario_dir() / "m1_random_loss.toml"
SETS = ['duration="4s"', 'warmup="1s"', "topology.loss=0.01", 'tcp.preset="reno"']


def _digest(version: int, **kw) -> str:
    tcl = export(SCEN, sets=SETS, seed=3, **kw).tcl
    return hashlib.sha256(f"{version}\n{tcl}".encode()).hexdigest()[:16]


@needs_ns
def test_runs_once_then_reads_its_cache(tmp_path, monkeypatch):
    calls = []

    def cells(run):
        calls.append(run)
        return {"data_tx": int(((run.segments["event"] == "tx") & (run.segments["len"] > 0)).sum()), "wall": run.wall_time_s > 0}

    said = []
    c = study.ns2_cached_run(SCEN, SETS, 3, tmp_path / "ns2", "m1_reno", cells, version=4, log=said.append, label="Reno at p = 0.01")
    assert len(calls) == 1 and c["data_tx"] > 100 and c["wall"] is True
    assert said == ["  ns-2: Reno at p = 0.01"]
    # The file is named by the stem and the digest of (version, exported script): a study's old
    # cache files keep their names when it moves to this helper.
    f = tmp_path / "ns2" / f"m1_reno_{_digest(4)}.json"
    rec = json.loads(f.read_text())
    assert list(rec) == ["scenario", "sets", "seed", "ns_wall_s", "cells"]
    assert rec["scenario"] == "mathis97/m1_random_loss.toml" and rec["sets"] == SETS and rec["seed"] == 3 and rec["cells"] == c

    def must_not_run(*a, **k):
        raise AssertionError("ns-2 ran again although the run is cached")

    monkeypatch.setattr(runner, "run", must_not_run)
    assert study.ns2_cached_run(SCEN, SETS, 3, tmp_path / "ns2", "m1_reno", cells, version=4, log=said.append) == c
    assert len(calls) == 1 and len(said) == 1
    # Another version of the cells, or another seed, is another run.
    with pytest.raises(AssertionError, match="ran again"):
        study.ns2_cached_run(SCEN, SETS, 3, tmp_path / "ns2", "m1_reno", cells, version=5)
    with pytest.raises(AssertionError, match="ran again"):
        study.ns2_cached_run(SCEN, SETS, 4, tmp_path / "ns2", "m1_reno", cells, version=4)


def test_without_ns_or_on_failure_it_raises_and_caches_nothing(tmp_path, monkeypatch):
    def absent(*a, **k):
        raise runner.Ns2NotFound(runner.INSTALL_HINT)

    def failing(*a, **k):
        raise runner.Ns2Error("ns ran longer than its wall time of 1 s (stopped)")

    for fake, exc in ((absent, runner.Ns2NotFound), (failing, runner.Ns2Error)):
        monkeypatch.setattr(runner, "run", fake)
        with pytest.raises(exc):
            study.ns2_cached_run(SCEN, SETS, 3, tmp_path / "ns2", "x", lambda r: {"a": 1})
    assert not (tmp_path / "ns2").exists() or not list((tmp_path / "ns2").iterdir())


def test_untraced_runs_go_through_run_log_with_the_monitor(tmp_path, monkeypatch):
    got = {}

    def fake_log(scenario, sets=(), max_wall=0.0, seed=None, monitor=()):
        got.update(sets=list(sets), max_wall=max_wall, seed=seed, monitor=list(monitor))
        return SimpleNamespace(wall_time_s=1.25, links=None)

    def no_trace(*a, **k):
        raise AssertionError("a traced run was made where run_log was asked for")

    monkeypatch.setattr(runner, "run_log", fake_log)
    monkeypatch.setattr(runner, "run", no_trace)
    c = study.ns2_cached_run(SCEN, SETS, 3, tmp_path, "m1", lambda r: {"wall": r.wall_time_s}, trace=False, monitor=["link"],
                             max_wall=7.0, record={"scenario": "m1.toml", "what": "a test"})
    assert c == {"wall": 1.25}
    assert got == {"sets": SETS, "max_wall": 7.0, "seed": 3, "monitor": ["link"]}
    # Keyed by the untraced script (it differs from the traced one: no trace-all).
    f = tmp_path / f"m1_{_digest(1, trace=False, monitor=['link'])}.json"
    rec = json.loads(f.read_text())
    assert list(rec) == ["scenario", "sets", "what", "seed", "ns_wall_s", "cells"]
    assert rec["scenario"] == "m1.toml" and rec["what"] == "a test" and rec["ns_wall_s"] == 1.25


def test_ns2_map_runs_workers_calls_at_once_and_keeps_their_order():
    import threading

    both = threading.Barrier(2, timeout=10)   # only two calls running together pass it

    def call(i):
        def f():
            if i < 2:
                both.wait()
            if i == 3:
                raise runner.Ns2Error("ns-2 failed")
            return i * 10
        return f

    got = study.ns2_map([call(i) for i in range(5)], workers=2)
    assert got[:3] == [0, 10, 20] and got[4] == 40
    assert isinstance(got[3], runner.Ns2Error)      # handed back in its place, the others made
    # One worker: one call after the other, in order (a barrier of two would time out).
    order = []
    assert study.ns2_map([lambda i=i: order.append(i) or i for i in range(4)], workers=1) == [0, 1, 2, 3] and order == [0, 1, 2, 3]
    assert study.ns2_map([], workers=2) == []


def test_ns2_map_raises_what_it_is_not_told_to_keep_once_every_call_is_over():
    done = []

    def call(i):
        def f():
            if i == 1:
                raise ValueError("a bug, not ns-2")
            if i == 2:
                raise runner.Ns2Error("ns-2 failed")
            done.append(i)
            return i
        return f

    for workers in (1, 2):
        done.clear()
        with pytest.raises(ValueError, match="a bug"):
            study.ns2_map([call(i) for i in range(4)], workers=workers, keep=(runner.Ns2Error,))
        assert sorted(done) == [0, 3]               # the other calls were made
    got = study.ns2_map([call(i) for i in (0, 2, 3)], workers=2, keep=(runner.Ns2Error,))
    assert got[0] == 0 and isinstance(got[1], runner.Ns2Error) and got[2] == 3
    with pytest.raises(runner.Ns2Error):
        study.ns2_map([call(2)], keep=())


@needs_ns
def test_two_ns2_runs_at_once_give_the_cells_of_one_after_the_other(tmp_path):
    def cells(r):
        return {"rows": len(r.segments), "drops": len(r.drops)}

    def call(folder, seed):
        return lambda: study.ns2_cached_run(SCEN, SETS, seed, folder, f"m1_{seed}", cells)

    serial = study.ns2_map([call(tmp_path / "a", s) for s in (3, 4)], workers=1)
    parallel = study.ns2_map([call(tmp_path / "b", s) for s in (3, 4)], workers=2)
    assert serial == parallel and serial[0] != serial[1]
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == sorted(p.name for p in (tmp_path / "b").iterdir())
