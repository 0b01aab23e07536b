"""The results store: a sweep killed midway (coordinator or worker) resumes with every run exactly
once and no partial rows; stores of another version or format, or not stores at all, are refused;
`tcplab results` exports the tables."""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import duckdb
import pandas as pd
import pytest

import tcplab
from tcplab import _core
from tcplab.sweep import expand, parse_spec
from conftest import slow_sweep, tiny_sweep, wait_for_done

KILL_SWEEP = slow_sweep("killme")
FLOWS, LINK_DIRECTIONS = 2, 2

TINY_SWEEP = tiny_sweep("tiny", replicates=2)


def start_sweep(*args, env=None) -> tuple:
    """Start `tcplab sweep ARGS` and a thread that queues its stderr lines."""
    p = subprocess.Popen(
        [sys.executable, "-m", "tcplab.cli", "sweep", *map(str, args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    lines: queue.Queue = queue.Queue()

    def pump():
        for line in p.stderr:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    return p, lines


def workers_of(pid: int) -> list:
    import psutil

    return [c for c in psutil.Process(pid).children(recursive=True) if any("_worker_entry" in a for a in c.cmdline())]


def check_complete_runs(store: Path, expected_keys=None) -> pd.DataFrame:
    """Every run in the store once; every ok run with all its rows, no duplicate rows, and no
    orphan rows (rows whose key is not an ok run of the store)."""
    con = duckdb.connect(str(store), read_only=True)
    try:
        runs = con.execute("SELECT key, status FROM runs").df()
        assert runs["key"].is_unique
        if expected_keys is not None:
            assert set(runs["key"]) <= set(expected_keys)
        for table, per_run in (("connections", FLOWS), ("links", LINK_DIRECTIONS), ("transfers", FLOWS)):
            counts = con.execute(f"SELECT key, count(*) AS n FROM {table} GROUP BY key").df().set_index("key")["n"]
            ok = set(runs.loc[runs["status"] == "ok", "key"])
            assert set(counts.index) == ok, f"{table}: rows of runs not recorded as ok, or ok runs without rows"
            assert (counts == per_run).all(), f"{table}: a run with partial rows"
            dup = con.execute(f"SELECT count(*) FROM (SELECT DISTINCT * FROM {table})").fetchone()[0]
            assert dup == con.execute(f"SELECT count(*) FROM {table}").fetchone()[0], f"{table}: duplicate rows"
    finally:
        con.close()
    return runs


# Columns that say when and how fast a run went, not what it computed.
TIMING_COLUMNS = {"runs": ["wall_time_s", "finished_at"]}
SORT_KEYS = {"runs": ["key"], "connections": ["key", "flow"], "links": ["key", "link"], "transfers": ["key", "flow", "transfer"]}


def store_tables(store: Path) -> dict:
    """Every table of a store as DataFrames in a canonical order, timings left out."""
    con = duckdb.connect(str(store), read_only=True)
    try:
        out = {}
        for name, keys in SORT_KEYS.items():
            df = con.execute(f"SELECT * FROM {name}").df().drop(columns=TIMING_COLUMNS.get(name, []))
            out[name] = df.sort_values(keys, kind="mergesort").reset_index(drop=True)
        return out
    finally:
        con.close()


def test_sigkill_of_the_coordinator_loses_nothing_and_resumes(tmp_path):
    """Kill the coordinator midway, resume, and compare the store with that of the same sweep run
    without interruption: the same runs, the same rows, none lost, duplicated or orphaned."""
    f = tmp_path / "killme.toml"
    f.write_text(KILL_SWEEP, encoding="utf-8")
    store = tmp_path / "killme.duckdb"
    keys = [t.key for t in expand(parse_spec(f))]
    assert len(keys) == 300
    args = (f, "--workers", "2", "--batch-size", "2", "--store", store, "--progress-interval", "0")

    # Commits every 0.5 s whatever the machine's load, so the kill lands midway.
    p, lines = start_sweep(*args, env={**os.environ, "TCPLAB_SWEEP_COMMIT_S": "0.5"})
    try:
        wait_for_done(lines, "killme", at_least=30)
        workers = workers_of(p.pid)
        p.send_signal(signal.SIGKILL)
        p.wait(timeout=10)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == -signal.SIGKILL
    # The workers die with their coordinator.
    import psutil

    gone, alive = psutil.wait_procs(workers, timeout=10)
    assert not alive, f"workers outlived the coordinator: {alive}"

    runs = check_complete_runs(store, keys)
    stored = len(runs)
    assert 30 <= stored < 300, stored

    # The rerun runs only what is missing.
    p = subprocess.run([sys.executable, "-m", "tcplab.cli", "sweep", *map(str, args)], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert f"300 runs: {300 - stored} run now ({300 - stored} ok, 0 failed), {stored} already stored" in p.stdout
    runs = check_complete_runs(store, keys)
    assert sorted(runs["key"]) == sorted(keys) and (runs["status"] == "ok").all()

    # The same sweep, never interrupted (other batches, so other commit groups), into its own store.
    whole = tmp_path / "whole.duckdb"
    p = subprocess.run(
        [sys.executable, "-m", "tcplab.cli", "sweep", str(f), "--workers", "2", "--store", str(whole), "-q"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    check_complete_runs(whole, keys)
    resumed, uninterrupted = store_tables(store), store_tables(whole)
    for name in SORT_KEYS:
        assert len(resumed[name]) == len(uninterrupted[name]), name
        pd.testing.assert_frame_equal(resumed[name], uninterrupted[name], check_like=True, obj=name)


def test_sigkill_of_a_worker_and_the_sweep_completes(tmp_path):
    f = tmp_path / "killme.toml"
    f.write_text(KILL_SWEEP, encoding="utf-8")
    store = tmp_path / "killme.duckdb"
    p, lines = start_sweep(f, "--workers", "2", "--batch-size", "5", "--store", store, "--progress-interval", "0")
    try:
        wait_for_done(lines, "killme", at_least=20)
        victim = workers_of(p.pid)[0]
        victim.send_signal(signal.SIGKILL)
        out, _ = p.communicate(timeout=120)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 0
    assert "300 runs: 300 run now (300 ok, 0 failed)" in out
    runs = check_complete_runs(store)
    assert len(runs) == 300 and (runs["status"] == "ok").all()


def test_a_run_that_kills_its_worker_is_recorded_as_failed(tmp_path):
    """A run that takes its worker down (a crash the core cannot catch) is tried twice, then
    recorded as failed; every other run completes."""
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(
        "import multiprocessing, os, signal\n"
        "import tcplab._core as core\n"
        "_real = core.run_scenario\n"
        "def run_scenario(text, fmt='toml', seed=None, sets=(), **limits):\n"
        "    if seed == 3 and multiprocessing.current_process().name.startswith('tcplab-sweep-worker'):\n"
        "        os.kill(os.getpid(), signal.SIGKILL)\n"
        "    return _real(text, fmt, seed, sets, **limits)\n"
        "core.run_scenario = run_scenario\n",
        encoding="utf-8",
    )
    f = tmp_path / "tiny.toml"
    f.write_text(TINY_SWEEP.replace("replicates = 2", "replicates = 4"), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(hook), os.environ.get("PYTHONPATH", "")])}
    store = tmp_path / "tiny.duckdb"
    p = subprocess.run(
        [sys.executable, "-m", "tcplab.cli", "sweep", str(f), "--workers", "2", "--store", str(store), "-q"],
        capture_output=True, text=True, timeout=120, env=env,
    )  # fmt: skip
    assert p.returncode == 1, p.stderr  # every run stored, two of them failed
    assert "8 runs: 8 run now (6 ok, 2 failed)" in p.stdout
    res = tcplab.load(store)
    failed = res.failed
    assert sorted(failed["seed"].tolist()) == [3, 3]
    assert (failed["error"] == "worker process died (killed by SIGKILL), 2 times while running this run").all()
    assert (res.runs.loc[res.runs["seed"] != 3, "status"] == "ok").all()


# --- versions and foreign files ----------------------------------------------------------------


def make_store(path: Path) -> tcplab.SweepResult:
    return tcplab.sweep(TINY_SWEEP, store=path, workers=0, progress=False)


def test_a_store_of_another_simulator_version_is_refused_for_writing_but_read(tmp_path):
    store = tmp_path / "tiny.duckdb"
    first = make_store(store)
    con = duckdb.connect(str(store))
    con.execute("UPDATE tcplab_meta SET value = '0.0.1' WHERE key = 'tcplab_version'")
    con.close()
    with pytest.raises(tcplab.StoreError, match=rf"holds runs of tcplab 0.0.1, and this is tcplab {_core.__version__}"):
        make_store(store)
    pd.testing.assert_frame_equal(tcplab.load(store).connections, first.connections)


def test_a_store_of_another_format_is_refused(tmp_path, cli):
    store = tmp_path / "tiny.duckdb"
    make_store(store)
    con = duckdb.connect(str(store))
    con.execute("UPDATE tcplab_meta SET value = '99' WHERE key = 'store_format'")
    con.close()
    with pytest.raises(tcplab.StoreError, match=r"store format 99; this tcplab .* reads store format 1 only"):
        tcplab.load(store)
    p = cli("results", store)
    assert p.returncode == 2 and p.stderr.startswith("error: ") and "store format 99" in p.stderr


def test_files_that_are_not_stores_are_refused(tmp_path):
    other = tmp_path / "other.duckdb"
    con = duckdb.connect(str(other))
    con.execute("CREATE TABLE t (x INTEGER)")
    con.close()
    with pytest.raises(tcplab.StoreError, match=r"not a tcplab results store \(it has tables t\)"):
        tcplab.sweep(TINY_SWEEP, store=other, workers=0, progress=False)
    text = tmp_path / "notes.duckdb"
    text.write_text("hello", encoding="utf-8")
    with pytest.raises(tcplab.StoreError, match=r"not a DuckDB results store"):
        tcplab.load(text)
    with pytest.raises(tcplab.StoreError, match=r"no such results store"):
        tcplab.load(tmp_path / "missing.duckdb")


def test_a_store_in_use_by_another_sweep_is_refused(tmp_path, cli):
    store = tmp_path / "tiny.duckdb"
    make_store(store)
    f = tmp_path / "tiny.toml"
    f.write_text(TINY_SWEEP, encoding="utf-8")
    holder = duckdb.connect(str(store))  # this process holds the write lock
    try:
        p = cli("sweep", f, "--store", store, "--workers", "0")
    finally:
        holder.close()
    assert p.returncode == 2
    assert "the store is open in another process" in p.stderr


@pytest.mark.parametrize("value", ["nan", "0", "-1", "soon"])
def test_a_pinned_commit_interval_must_be_seconds_above_zero(tmp_path, monkeypatch, value):
    f = tmp_path / "tiny.toml"
    f.write_text(TINY_SWEEP, encoding="utf-8")
    monkeypatch.setenv("TCPLAB_SWEEP_COMMIT_S", value)
    with pytest.raises(tcplab.SweepError, match="TCPLAB_SWEEP_COMMIT_S"):
        tcplab.sweep(str(f), store=str(tmp_path / "tiny.duckdb"), workers=0)


# --- access ------------------------------------------------------------------------------------


def test_load_gives_the_sweep_tables_and_results_exports_them(tmp_path, cli):
    store = tmp_path / "tiny.duckdb"
    res = make_store(store)
    loaded = tcplab.load(store)
    for name in ("runs", "connections", "links", "transfers"):
        a, b = getattr(res, name), getattr(loaded, name)
        if name == "runs":
            a, b = a.drop(columns=["finished_at"]), b.drop(columns=["finished_at"])
        pd.testing.assert_frame_equal(a, b)
    p = cli("results", store)
    assert p.returncode == 0, p.stderr
    assert "runs: 4 (4 ok)" in p.stdout and "connections: 4 rows" in p.stdout and "axes: tcp.variant" in p.stdout
    for fmt, read in (("parquet", pd.read_parquet), ("csv", pd.read_csv)):
        out = tmp_path / f"out-{fmt}"
        p = cli("results", store, "--to", fmt, "--out", out)
        assert p.returncode == 0, p.stderr
        for name in ("runs", "connections", "links", "transfers"):
            df = read(out / f"{name}.{fmt}")
            assert len(df) == len(getattr(loaded, name))
            assert list(df.columns) == list(getattr(loaded, name).columns)
        conn = read(out / f"connections.{fmt}")
        assert conn["bytes_delivered"].tolist() == loaded.connections["bytes_delivered"].tolist()
        assert conn["tcp.variant"].tolist() == ["reno", "reno", "newreno", "newreno"]


def test_columns_reads_only_the_columns_asked_for_with_the_same_rows(tmp_path):
    # A sweep read back with `columns`: each named table has its lead columns (axes, replicate,
    # seed, key) and the columns asked for, with exactly the rows, order and values of a whole
    # read; a table not named is read whole.
    whole = make_store(tmp_path / "whole.duckdb")
    lead = ["tcp.variant", "replicate", "seed", "key"]
    want = {"connections": ["bytes_delivered", "flow"], "links": ["drop_rate"]}
    part = tcplab.sweep(TINY_SWEEP, store=tmp_path / "part.duckdb", workers=0, progress=False, columns=want)
    for name, cols in want.items():
        assert list(getattr(part, name).columns) == lead + cols
        pd.testing.assert_frame_equal(getattr(part, name), getattr(whole, name)[lead + cols])
    pd.testing.assert_frame_equal(part.transfers, whole.transfers)
    assert len(whole.connections) == 4 and whole.connections["bytes_delivered"].gt(0).all()


@pytest.mark.parametrize("columns, message", [
    ({"conections": ["flow"]}, r"columns: no result table 'conections' \(the tables are connections, links,"),
    ({"links": "drop_rate"}, r"columns\.links: expected a list of column names, got 'drop_rate'"),
    ({"links": ["drop_rate", "dropp_rate"]}, r"columns\.links: no column 'dropp_rate' in the links table \(it has: .*drop_rate"),
    (["links"], r"columns: expected a dict of result table -> list of column names, got list"),
])
def test_columns_that_name_no_table_or_column_are_refused(tmp_path, columns, message):
    store = tmp_path / "cols.duckdb"
    make_store(store)
    with pytest.raises(tcplab.StoreError, match=message):
        tcplab.sweep(TINY_SWEEP, store=store, workers=0, progress=False, columns=columns)
