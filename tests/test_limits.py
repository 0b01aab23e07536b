"""Limits on runs: `tcplab.run(max_wall=, max_events=)` stops a run and raises RunLimitError; a
sweep's `run_timeout` records a run that would take hours as `timeout` and goes on, the pool's
watchdog kills a worker stuck outside the event loop, `run_memory` kills a worker over its memory,
and `retry_failed` runs them again. Every test is bounded: the long runs are stopped after about
a second."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

import tcplab
from tcplab import executors
from tcplab.limits import seconds, size_bytes

# An unlimited transfer for a simulated year at 10 Gb/s: hours of wall time if nothing stops it.
HOURS = """\
duration = "8760h"
[topology]
kind = "single_link"
rate = "10Gbps"
delay = "10ms"
[[flows]]
bytes = "unlimited"
"""

# Two short points and one of a simulated year, two replicates each.
SWEEP = """\
name = "limits"
duration = "1s"
[topology]
kind = "single_link"
rate = "10Mbps"
delay = "10ms"
[[flows]]
bytes = "unlimited"
[sweep]
replicates = 2
[sweep.axes]
duration = ["1s", "2s", "8760h"]
"""

DEMO = "experiments/examples/demo.toml"


def test_max_wall_stops_a_run_of_hours_with_where_it_got_to():
    t0 = time.monotonic()
    with pytest.raises(tcplab.RunLimitError) as ei:
        tcplab.run(HOURS, max_wall="0.3s")
    e = ei.value
    assert time.monotonic() - t0 < 20
    assert e.limit == "max_wall" and e.allowed == pytest.approx(0.3)
    assert e.events > 0 and 0 < e.sim_time_s < 8760 * 3600 and e.wall_time_s >= 0.3
    assert str(e).startswith("run stopped at its wall-time limit of 0.3 s before it was over")
    assert not isinstance(e, tcplab.CoreError)  # a limit is not an internal failure


def test_max_events_is_exact_and_a_run_within_its_limits_is_unchanged():
    free = tcplab.run(DEMO, seed=2)
    n = free.meta["events"]
    within = tcplab.run(DEMO, seed=2, max_events=n, max_wall=600)
    assert within.meta == free.meta
    assert within.connections.equals(free.connections) and within.links.equals(free.links)
    with pytest.raises(tcplab.RunLimitError) as ei:
        tcplab.run(DEMO, seed=2, max_events=n - 1)
    assert ei.value.limit == "max_events" and ei.value.events == n and ei.value.allowed == n - 1


@pytest.mark.parametrize(
    "kw, message",
    [
        ({"max_wall": 0}, "max_wall: must be more than 0"),
        ({"max_wall": "-1s"}, "is not a quantity"),
        ({"max_wall": "10 parsecs"}, "is not a quantity"),
        ({"max_wall": True}, "expected a number"),
        ({"max_events": 0}, "max_events: expected an integer from 1"),
        ({"max_events": 1.5}, "max_events: expected an integer from 1"),
    ],
)
def test_bad_limits_are_refused_before_running(kw, message):
    with pytest.raises(ValueError, match=message):
        tcplab.run(DEMO, **kw)


def test_limit_values_take_the_units_of_scenarios():
    assert seconds("250ms", "x") == 0.25 and seconds("2min", "x") == 120 and seconds(3, "x") == 3.0
    assert size_bytes("2GB", "x") == 2 * 1024**3 and size_bytes("512MB", "x") == 512 * 1024**2
    assert seconds(None, "x") is None and size_bytes(None, "x") is None


def test_cli_run_max_wall_and_max_events(cli):
    r = cli("run", DEMO, "--max-events", "100")
    assert r.returncode == 2
    assert r.stderr.startswith(f"error: {DEMO}: run stopped at its limit of 100 events before it was over: 101 events")
    r = cli("run", DEMO, "--max-wall", "10x")
    assert r.returncode == 2 and "--max-wall: '10x' is not a quantity" in r.stderr
    r = cli("run", DEMO, "--max-wall", "60s", "--max-events", "100000000")
    assert r.returncode == 0, r.stderr
    assert "connections" in r.stdout


def _check_timeouts(res: tcplab.SweepResult) -> None:
    runs = res.runs
    assert len(runs) == 6
    slow = runs["duration"] == "8760h"
    assert (runs.loc[~slow, "status"] == "ok").all(), runs.loc[~slow, "error"].tolist()
    assert (runs.loc[slow, "status"] == "timeout").all()
    for _, r in runs[slow].iterrows():
        assert r["error"].startswith("RunLimitError: run stopped at its wall-time limit of 1 s"), r["error"]
        assert r["events"] > 0 and r["sim_time_s"] > 0 and not r["completed"]
    assert set(res.failed["key"]) == set(runs.loc[slow, "key"])
    # A timed-out run has no result rows; the others have all of theirs.
    assert set(res.connections["key"]) == set(runs.loc[~slow, "key"])


@pytest.mark.parametrize("workers", [0, 2])
def test_a_sweep_with_a_run_of_hours_finishes_with_that_run_timed_out(tmp_path, workers):
    f = tmp_path / "limits.toml"
    f.write_text(SWEEP, encoding="utf-8")
    store = tmp_path / "limits.duckdb"
    t0 = time.monotonic()
    res = tcplab.sweep(f, store=store, workers=workers, run_timeout="1s", progress=False)
    assert time.monotonic() - t0 < 60
    _check_timeouts(res)
    assert res.stats["ok"] == 4 and res.stats["failed"] == 2 and res.stats["timeout"] == 2
    # Stored: a rerun runs nothing; --retry-failed runs the timed-out runs again (and only them).
    again = tcplab.sweep(f, store=store, workers=workers, run_timeout="1s", progress=False)
    assert again.stats["skipped"] == 6 and "ok" not in again.stats
    retried = tcplab.sweep(f, store=store, workers=workers, run_timeout="1s", retry_failed=True, progress=False)
    assert retried.stats["skipped"] == 4 and retried.stats["timeout"] == 2
    _check_timeouts(tcplab.load(store))


def test_run_timeout_on_dask_stops_the_run_in_the_core(tmp_path):
    distributed = pytest.importorskip("distributed")
    f = tmp_path / "limits.toml"
    f.write_text(SWEEP, encoding="utf-8")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None) as cluster:
        with distributed.Client(cluster) as client:
            res = tcplab.sweep(f, store=tmp_path / "d.duckdb", dask=client, run_timeout=1, progress=False)
    assert res.stats["executor"] == "dask"
    _check_timeouts(res)


def test_cli_sweep_run_timeout_and_retry_failed(tmp_path, cli):
    f = tmp_path / "limits.toml"
    f.write_text(SWEEP, encoding="utf-8")
    store = tmp_path / "limits.duckdb"
    r = cli("sweep", f, "--workers", "2", "--run-timeout", "1s", "--store", store, "-q")
    assert r.returncode == 1, r.stderr  # every run stored, two of them stopped
    assert "6 runs: 6 run now (4 ok, 2 failed: 2 timeout), 0 already stored" in r.stdout
    assert "2 runs of this sweep are recorded as failed (--retry-failed runs them again)" in r.stderr
    assert "RunLimitError: run stopped at its wall-time limit of 1 s" in r.stderr
    r = cli("sweep", f, "--workers", "2", "--run-timeout", "1s", "--store", store, "-q", "--retry-failed")
    assert r.returncode == 1, r.stderr
    assert "6 runs: 2 run now (0 ok, 2 failed: 2 timeout), 4 already stored" in r.stdout
    r = cli("results", store)
    assert "runs: 6 (4 ok, 2 timeout)" in r.stdout
    r = cli("sweep", f, "--run-timeout", "soon", "--store", store)
    assert r.returncode == 2 and "--run-timeout: 'soon' is not a quantity" in r.stderr


# A hook that makes the run of seed 3 hang outside the event loop (in a pool worker only) or
# take memory, as a run stuck building a huge world or serialising a huge result would.
HOOK = (
    "import multiprocessing, time\n"
    "import tcplab._core as core\n"
    "_real = core.run_scenario\n"
    "def run_scenario(text, fmt='toml', seed=None, sets=(), **limits):\n"
    "    if seed == 3 and multiprocessing.current_process().name.startswith('tcplab-sweep-worker'):\n"
    "        ballast = b'x' * ({mb} * 2**20)  # written, so resident\n"
    "        time.sleep(120)\n"
    "    return _real(text, fmt, seed, sets, **limits)\n"
    "core.run_scenario = run_scenario\n"
)
POINT = {"replicates": 4}  # seeds 1 to 4, the base scenario only


def _hooked(tmp_path, monkeypatch, mb: int) -> None:
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(HOOK.format(mb=mb), encoding="utf-8")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(hook), os.environ.get("PYTHONPATH", "")]))


def test_the_pool_kills_a_worker_that_does_not_answer(tmp_path, monkeypatch):
    _hooked(tmp_path, monkeypatch, mb=0)
    monkeypatch.setattr(executors, "WATCHDOG_GRACE_S", 1.0)
    t0 = time.monotonic()
    # Batches of 2: the batch with seed 3 is killed, its runs are run alone, and seed 3's is
    # killed again and recorded; seed 4 completes.
    res = tcplab.sweep(DEMO, sweep=POINT, store=":memory:", workers=2, batch_size=2, run_timeout=0.5, progress=False)
    assert time.monotonic() - t0 < 60
    runs = res.runs.set_index("seed")
    assert runs.loc[3, "status"] == "timeout"
    assert runs.loc[3, "error"] == "no answer from the worker within 1.5 s (the runs' run_timeout of 0.5 s each + 1 s); worker killed"
    assert (runs.drop(index=3)["status"] == "ok").all()
    assert res.stats["lost_batches"] == 2 and res.stats["timeout"] == 1


def test_the_pool_kills_a_worker_over_the_memory_limit(tmp_path, monkeypatch):
    _hooked(tmp_path, monkeypatch, mb=600)
    t0 = time.monotonic()
    res = tcplab.sweep(DEMO, sweep=POINT, store=":memory:", workers=2, batch_size=1, run_memory="400MB", progress=False)
    assert time.monotonic() - t0 < 60
    runs = res.runs.set_index("seed")
    assert runs.loc[3, "status"] == "memory"
    assert runs.loc[3, "error"].startswith("the worker's resident memory reached ")
    assert runs.loc[3, "error"].endswith("over the run_memory limit of 400.0 MB; worker killed")
    assert (runs.drop(index=3)["status"] == "ok").all()


def test_limits_an_executor_cannot_enforce_are_refused():
    with pytest.raises(tcplab.ExecutorError, match="run_memory is enforced by the local pool"):
        tcplab.sweep(DEMO, sweep=POINT, store=":memory:", workers=0, run_memory="1GB", progress=False)
    with pytest.raises(tcplab.SweepError, match="run_memory: must be more than 0"):
        tcplab.sweep(DEMO, sweep=POINT, store=":memory:", run_memory=0, progress=False)
