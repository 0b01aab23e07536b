"""Hardening: what a scenario, a sweep or a store received from someone else may not do (write
files outside the working directory, read files into errors, read files or URLs through a store,
exhaust memory or CPU), and limits that must be errors, never panics or tracebacks."""

from __future__ import annotations

import os
import time

import duckdb
import pytest

import tcplab
from tcplab import _core
from tcplab.store import Store, StoreError
from conftest import EXAMPLES, SMALL_TOML, tiny_sweep


def with_capture(path: str) -> str:
    return SMALL_TOML + f'[[capture]]\npath = "{path}"\nnode = "sender"\n'


# --- S1: captures ----------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/tmp/x.pcap", "../x.pcap", "a/../../x.pcap"])
def test_a_scenario_capture_outside_the_working_directory_is_refused(path, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for call in (lambda: tcplab.validate(with_capture(path)), lambda: tcplab.run(with_capture(path))):
        with pytest.raises(tcplab.ScenarioError) as e:
            call()
        assert e.value.path == "capture[0].path"
        assert "relative" in e.value.reason and "--pcap" in e.value.reason
    assert not (tmp_path.parent / "x.pcap").exists()


def test_a_scenario_capture_is_written_in_the_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "caps").mkdir()
    tcplab.run(with_capture("caps/run.pcap"))
    assert (tmp_path / "caps" / "run.pcap").stat().st_size > 24
    tcplab.run(with_capture("caps/run.pcap"))  # a second run writes it again
    assert (tmp_path / "caps" / "run.pcap").stat().st_size > 24


def test_a_scenario_capture_does_not_follow_symbolic_links(tmp_path, monkeypatch):
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    victim = tmp_path / "victim"
    victim.write_text("keep me\n")
    (work / "link.pcap").symlink_to(victim)
    (work / "dir").symlink_to(tmp_path)
    for path in ("link.pcap", "dir/new.pcap", "dir/victim"):
        with pytest.raises(tcplab.ScenarioError) as e:
            tcplab.run(with_capture(path))
        assert e.value.path == "capture[0].path" and "symbolic link" in e.value.reason, e.value
    assert victim.read_text() == "keep me\n"
    assert not (tmp_path / "new.pcap").exists()
    # A hard link to another file is not overwritten either.
    os.link(victim, work / "hard.pcap")
    with pytest.raises(tcplab.ScenarioError, match="hard links"):
        tcplab.run(with_capture("hard.pcap"))
    assert victim.read_text() == "keep me\n"


def test_a_path_given_by_the_caller_may_be_anywhere(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "elsewhere" / "x.pcap"
    out.parent.mkdir()
    r = tcplab.run(SMALL_TOML, pcap=out)  # absolute
    assert out.stat().st_size > 24
    assert r.scenario["capture"] == [{"path": str(out), "payload": False, "format": "pcap"}]


def test_a_sweep_refuses_captures(tmp_path):
    text = tiny_sweep("caps", 2) + '[[capture]]\npath = "x.pcap"\n'
    # (the [[capture]] table after [sweep.axes] belongs to the scenario's top level)
    with pytest.raises(tcplab.SweepError, match=r"^capture\[0\]\.path: a sweep does not write captures"):
        tcplab.sweep(text, store=tmp_path / "s.duckdb", workers=0, progress=False)
    with pytest.raises(tcplab.SweepError, match="capture"):
        tcplab.sweep(tiny_sweep("caps2", 1), store=tmp_path / "s2.duckdb", workers=0, progress=False,
                     sets=['capture=[{ path = "x.pcap" }]'])
    assert not (tmp_path / "x.pcap").exists()


# --- S2 and item 9: CDF files ------------------------------------------------------------------


APP = '[[apps]]\nkind = "reqresp"\nclient = "receiver"\nserver = "sender"\nrequest = "300B"\nresponse = "10KB"\n'
CSV_KEY = "apps[0].response.empirical.csv"


def cdf_scenario(path) -> str:
    return SMALL_TOML + APP.replace('response = "10KB"', f'response = {{ empirical = {{ csv = "{path}" }} }}')


def test_a_cdf_file_that_is_not_a_cdf_is_not_echoed(tmp_path):
    secret = tmp_path / "shadow"
    secret.write_text("admin:$6$saltsalt$pwdhashpwdhash:19000:0:99999:7:::\n")
    with pytest.raises(tcplab.ScenarioError) as e:
        tcplab.validate(cdf_scenario(secret))
    assert e.value.path == CSV_KEY
    assert "line 1" in str(e.value) and "admin" not in str(e.value) and "pwdhash" not in str(e.value)
    with pytest.raises(tcplab.ScenarioError) as e:
        tcplab.validate(cdf_scenario("/proc/self/environ"))
    assert "PATH=" not in str(e.value) and "HOME=" not in str(e.value), e.value


def test_a_sweep_does_not_store_a_cdf_files_contents(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("API_TOKEN=hunter2-very-secret\n")
    text = tiny_sweep("cdfsecret", 1, axes=f'"apps.0.response" = ["16KB", {{ empirical = {{ csv = "{secret}" }} }}]', flows=APP)
    store = tmp_path / "s.duckdb"
    try:
        tcplab.sweep(text, store=store, workers=0, progress=False)
    except tcplab.SweepError as e:
        assert "hunter2" not in str(e) and "API_TOKEN" not in str(e)
    if store.exists():
        res = tcplab.load(store)
        errors = " ".join(str(x) for x in res.runs["error"].tolist())
        assert "hunter2" not in errors and "API_TOKEN" not in errors
        assert (res.runs["status"] == "failed").sum() == 1


@pytest.mark.parametrize("kind", ["device", "fifo", "directory"])
def test_a_cdf_file_must_be_a_regular_file(kind, tmp_path):
    path = {"device": "/dev/zero", "directory": str(tmp_path)}.get(kind)
    if kind == "fifo":
        path = str(tmp_path / "fifo")
        os.mkfifo(path)
    t0 = time.monotonic()
    with pytest.raises(tcplab.ScenarioError) as e:
        tcplab.validate(cdf_scenario(path))
    assert time.monotonic() - t0 < 5
    assert e.value.path == CSV_KEY and "not a regular file" in e.value.reason


def test_a_cdf_file_past_the_size_limit_is_refused(tmp_path):
    big = tmp_path / "big.cdf"
    with open(big, "wb") as f:
        f.truncate(16 * 1024 * 1024 + 1)  # sparse: nothing is written
    with pytest.raises(tcplab.ScenarioError) as e:
        tcplab.validate(cdf_scenario(big))
    assert e.value.path == CSV_KEY and "larger than the limit of 16 MiB" in e.value.reason


# --- S3: stores ------------------------------------------------------------------------------


def small_store(tmp_path):
    store = tmp_path / "s.duckdb"
    tcplab.sweep(tiny_sweep("st", 1), store=store, workers=0, progress=False)
    return store


def test_a_store_whose_runs_table_is_a_view_is_refused(tmp_path):
    store = small_store(tmp_path)
    secret = tmp_path / "secret.txt"
    secret.write_text("not for the store\n")
    con = duckdb.connect(str(store))
    con.execute("ALTER TABLE runs RENAME TO runs_real")
    con.execute(f"CREATE VIEW runs AS SELECT r.*, (SELECT content FROM read_text('{secret}')) AS leak FROM runs_real r")
    con.close()
    with pytest.raises(StoreError, match=r"runs is a view, not a table"):
        tcplab.load(store)


def test_a_store_connection_reaches_no_file_and_loads_no_extension(tmp_path):
    store = small_store(tmp_path)
    secret = tmp_path / "secret.txt"
    secret.write_text("not for the store\n")
    with Store(store, read_only=True) as st:
        with pytest.raises(duckdb.Error, match="disabled by configuration"):
            st.con.execute(f"SELECT * FROM read_text('{secret}')").fetchall()
        with pytest.raises(duckdb.Error):
            st.con.execute("SELECT * FROM read_parquet('https://example.invalid/x.parquet')").fetchall()
        with pytest.raises(duckdb.Error):
            st.con.execute("SET enable_external_access = true")
    # Everything tcplab does with a store still works: resume (nothing run again), load, export.
    res = tcplab.sweep(tiny_sweep("st", 1), store=store, workers=0, progress=False)
    assert res.stats["skipped"] == 2 and len(res.runs) == 2


def test_results_export_works_with_the_locked_store(tmp_path, cli):
    store = small_store(tmp_path)
    for fmt in ("csv", "parquet"):
        p = cli("results", store, "--to", fmt, "--out", tmp_path / fmt)
        assert p.returncode == 0, p.stderr
        assert (tmp_path / fmt / f"runs.{fmt}").stat().st_size > 0


# --- item 2: wall-time limits and panics -----------------------------------------------------


def test_a_huge_max_wall_is_an_error_naming_it():
    with pytest.raises(ValueError, match=r"^max_wall: at most 1e\+09 s"):
        tcplab.run(EXAMPLES / "demo.toml", max_wall=1e19)
    with pytest.raises(ValueError, match="max_wall_s must be a number of seconds from 0 to 1e9"):
        _core.run_scenario(SMALL_TOML, max_wall_s=1e19)
    r = tcplab.run(SMALL_TOML, max_wall=1e9)  # the limit itself is allowed
    assert len(r.connections) == 1
    with pytest.raises(tcplab.SweepError, match=r"^run_timeout: at most"):
        tcplab.sweep(tiny_sweep("w", 1), store=":memory:", workers=0, progress=False, run_timeout=1e19)


def test_huge_limits_on_the_command_line(tmp_path, cli):
    scen = tmp_path / "s.toml"
    scen.write_text(tiny_sweep("w", 1))
    p = cli("sweep", scen, "--run-timeout", "1e19s", "--store", tmp_path / "s.duckdb")
    assert p.returncode != 0 and "--run-timeout: at most" in p.stderr and "Traceback" not in p.stderr, p.stderr
    p = cli("run", scen, "--max-wall", "1e19s")
    assert p.returncode != 0 and "--max-wall: at most" in p.stderr and "Traceback" not in p.stderr, p.stderr


def test_a_panic_anywhere_in_the_bindings_is_a_core_error():
    for outside in (False, True):
        with pytest.raises(tcplab.CoreError, match="deliberate test panic"):
            _core._panic_for_test(outside=outside)


# --- item 3: sweep sizes ---------------------------------------------------------------------


def test_a_grid_past_the_limit_is_refused_before_it_is_built(tmp_path, cli):
    axes = '"topology.loss" = { linspace = [0, 0.1, 3163] }\n"topology.delay" = { linspace = [1, 50, 3163], unit = "ms" }'
    t0 = time.monotonic()
    with pytest.raises(tcplab.SweepError, match=r"^sweep\.axes: the grid has 10004569 points \(3163 x 3163\), more than the limit of 1000000"):
        tcplab.sweep(tiny_sweep("big", 1, axes=axes), store=":memory:", workers=0, progress=False)
    assert time.monotonic() - t0 < 10
    scen = tmp_path / "big.toml"
    scen.write_text(tiny_sweep("big", 1, axes=axes))
    p = cli("sweep", scen, "--dry-run", timeout=30)
    assert p.returncode != 0 and "10004569 points" in p.stderr and "Traceback" not in p.stderr, p.stderr


def test_replicates_past_the_limit_are_refused(tmp_path):
    with pytest.raises(tcplab.SweepError, match=r"^sweep\.replicates: 10000000 replicates x 2 points = 20000000 runs, more than the limit"):
        tcplab.sweep(tiny_sweep("reps", 10_000_000), store=":memory:", workers=0, progress=False)
    with pytest.raises(tcplab.SweepError, match=r"^sweep\.axes\.topology\.loss\.linspace: 2000000 values"):
        tcplab.sweep(tiny_sweep("n", 1, axes='"topology.loss" = { linspace = [0, 0.1, 2000000] }'), store=":memory:", workers=0, progress=False)
    with pytest.raises(tcplab.SweepError, match=r"^sweep\.axes\.flows\.0\.bytes\.range: .* gives 100000000 values"):
        tcplab.sweep(tiny_sweep("r", 1, axes='"flows.0.bytes" = { range = [1, 100000001] }'), store=":memory:", workers=0, progress=False)


@pytest.mark.parametrize("gen", ["{ logspace = [0, 400, 3] }", "{ linspace = [-1e308, 1e308, 3] }"])
def test_a_generator_of_non_finite_values_is_refused_by_axis(gen):
    with pytest.raises(tcplab.SweepError, match=r"^sweep\.axes\.topology\.delay\.(log|lin)space: .* not a finite number"):
        tcplab.sweep(tiny_sweep("nf", 1, axes=f'"topology.delay" = {gen}'), store=":memory:", workers=0, progress=False)


def _under_address_limit(limit_bytes: int, *args: str, cwd=None):
    """Run `python -m tcplab.cli ARGS` with RLIMIT_AS set (as `ulimit -v` does)."""
    import resource
    import subprocess
    import sys

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (limit_bytes, limit_bytes))

    env = {k: v for k, v in os.environ.items() if k != "TCPLAB_MAX_MEMORY"}
    return subprocess.run([sys.executable, "-m", "tcplab.cli", *args], capture_output=True, text=True, preexec_fn=limit,
                          env=env, cwd=cwd, timeout=120)


def test_an_address_space_limit_refuses_a_world_that_would_not_fit(tmp_path):
    """Issue reproducer: `ulimit -v 4194304; tcplab run` of a dumbbell of 10^6 pairs aborted with a
    failed allocation (exit 134). The memory limit now takes the room left under RLIMIT_AS."""
    scen = tmp_path / "big.toml"
    scen.write_text('[topology]\nkind = "dumbbell"\npairs = 1000000\n[[flows]]\nbytes = 1000\n')
    p = _under_address_limit(4 << 30, "run", str(scen), cwd=tmp_path)
    assert p.returncode == 2, (p.returncode, p.stderr[-2000:])
    assert "topology.pairs" in p.stderr and "RLIMIT_AS" in p.stderr, p.stderr


def test_a_queue_that_outgrows_the_memory_limit_stops_the_run_naming_it(monkeypatch):
    """An unlimited queue fed by a CBR source every nanosecond grows while the run goes on: the
    run stops with a RunLimitError whose `.limit` is "memory", instead of aborting the process."""
    scen = {"duration": "10s", "topology": {"kind": "single_link", "rate": "1Mbps", "delay": "10ms"},
            "apps": [{"kind": "cbr", "name": "flood", "interval": "1ns", "packet": "1000B"}]}
    monkeypatch.setenv("TCPLAB_MAX_MEMORY", "64MB")
    with pytest.raises(tcplab.RunLimitError) as e:
        tcplab.run(scen)
    assert e.value.limit == "memory" and "queue" in str(e.value)
