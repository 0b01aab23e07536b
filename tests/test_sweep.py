"""Sweeps: the spec (axes, generators, zips, seeds), run keys, the executors (serial, local pool,
Dask) giving identical tables, failures recorded, and bad sweeps refused before anything runs."""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path

import pandas as pd
import pytest

import tcplab
from tcplab import _core
from tcplab.sweep import Batcher, check_axes, expand, parse_spec, run_key, toml_literal

# Four flows' worth of a 16 KB transfer over a lossy link: each run takes well under a millisecond.
BASE = {
    "name": "grid",
    "topology": {"kind": "single_link", "rate": "10Mbps", "delay": "10ms", "loss": 0.01},
    "flows": [{"name": "f", "bytes": "16KB", "count": 2}],
}


def with_sweep(sweep: dict, base: dict = BASE) -> dict:
    d = copy.deepcopy(base)
    d["sweep"] = sweep
    return d


def frames_equal(a: tcplab.SweepResult, b: tcplab.SweepResult) -> None:
    """Every table identical, bit for bit, but for the run's timing columns."""
    for name in ("connections", "links", "transfers"):
        pd.testing.assert_frame_equal(getattr(a, name), getattr(b, name), check_exact=True)
    timing = ["wall_time_s", "finished_at"]
    pd.testing.assert_frame_equal(a.runs.drop(columns=timing), b.runs.drop(columns=timing), check_exact=True)


# --- the spec ----------------------------------------------------------------------------------


def test_grid_is_the_product_of_axes_in_order_with_replicates_innermost():
    spec = parse_spec(with_sweep({"axes": {"tcp.variant": ["reno", "newreno"], "topology.loss": [0.0, 0.01, 0.02]}, "replicates": 2}))
    assert (spec.points, spec.runs) == (6, 12)
    tasks = expand(spec)
    assert [(t.point, t.replicate) for t in tasks[:4]] == [(0, 0), (0, 1), (1, 0), (1, 1)]
    assert [dict(t.params) for t in tasks[::2]] == [
        {"tcp.variant": v, "topology.loss": p} for v in ("reno", "newreno") for p in (0.0, 0.01, 0.02)
    ]
    assert tasks[0].sets == ("tcp.variant=\"reno\"", "topology.loss=0.0")
    assert len({t.key for t in tasks}) == 12


def test_generators_give_exact_values():
    spec = parse_spec(
        with_sweep(
            {
                "axes": {
                    "topology.loss": {"logspace": [-4, -1, 4]},
                    "topology.delay": {"linspace": [10, 40, 4], "unit": "ms"},
                    "tcp.initial_window": {"range": [1, 5]},
                }
            }
        )
    )
    by_key = {a.keys[0]: [v[0] for v in a.values] for a in spec.axes}
    assert by_key["topology.loss"] == [1e-4, 1e-3, 1e-2, 1e-1]
    assert by_key["topology.delay"] == ["10.0ms", "20.0ms", "30.0ms", "40.0ms"]
    assert by_key["tcp.initial_window"] == [1, 2, 3, 4]
    assert spec.points == 64


def test_logspace_matches_numpy_and_the_value_reaches_the_core_unchanged():
    import numpy as np

    spec = parse_spec(with_sweep({"axes": {"topology.loss": {"logspace": [-4.5, -0.5, 40]}}}))
    values = [v[0] for v in spec.axes[0].values]
    # 10 ** x with the C library's pow; numpy may use its own SIMD pow, so allow one ulp
    np.testing.assert_array_max_ulp(np.array(values), np.logspace(-4.5, -0.5, 40), maxulp=1)
    assert values[0] == 10**-4.5 and values[-1] == 10**-0.5
    # the TOML literal of an override reads back as the same float, bit for bit
    for v in values:
        s = tcplab.validate(BASE, sets=[f"topology.loss={toml_literal(v)}"])
        assert s["topology"]["loss"] == v


def test_unquoted_dotted_keys_and_nested_tables_name_the_same_axis():
    toml = """
name = "t"
[topology]
kind = "single_link"
rate = "10Mbps"
delay = "10ms"
[[flows]]
bytes = "16KB"
[sweep.axes]
topology.loss = [0.0, 0.01]
"tcp.variant" = ["reno"]
[sweep.axes.tcp]
mss = { range = [500, 1501, 500] }
"""
    spec = parse_spec(toml)
    assert spec.keys == ["topology.loss", "tcp.variant", "tcp.mss"]
    assert [v[0] for v in spec.axes[2].values] == [500, 1000, 1500]


def test_zipped_axes_vary_together():
    spec = parse_spec(
        with_sweep({"axes": {"tcp.variant": ["reno", "newreno"]}, "zip": [{"tcp.mss": [536, 1460], "flows.0.bytes": ["8KB", "16KB"]}]})
    )
    assert spec.points == 4
    combos = [dict(t.params) for t in expand(spec)]
    assert combos[0] == {"tcp.variant": "reno", "tcp.mss": 536, "flows.0.bytes": "8KB"}
    assert combos[1] == {"tcp.variant": "reno", "tcp.mss": 1460, "flows.0.bytes": "16KB"}


def test_zipped_axes_of_different_lengths_are_refused_naming_them():
    with pytest.raises(tcplab.SweepError, match=r"sweep.zip\[0\].*tcp.mss has 2, flows.0.bytes has 3"):
        parse_spec(with_sweep({"zip": [{"tcp.mss": [536, 1460], "flows.0.bytes": ["8KB", "16KB", "32KB"]}]}))


@pytest.mark.parametrize(
    "sweep, message",
    [
        ({"axes": {"tcp.mss": []}}, r"sweep.axes.tcp.mss: an axis needs at least one value"),
        ({"axes": {"tcp.mss": 536}}, r"sweep.axes.tcp.mss: an axis is a list"),
        ({"axes": {"topology.loss": {"logspace": [-4, -1]}}}, r"logspace: expected \[start, stop, count\]"),
        ({"axes": {"topology.loss": {"logspace": [-4, -1, 3], "base": 2}}}, r"unknown generator key 'base'"),
        ({"axes": {"tcp.mss": {"range": [5, 5]}}}, r"gives no values"),
        ({"axes": {"seed": [1, 2]}}, r"use sweep.replicates or sweep.seeds"),
        ({"axis": {"tcp.mss": [536]}}, r"sweep.axis: unknown key"),
        ({"replicates": 0}, r"sweep.replicates: expected an integer >= 1"),
        ({"seeds": [3, 3]}, r"sweep.seeds: seeds repeat"),
        ({"seeds": [1], "replicates": 2}, r"either seeds"),
        ({"name": "a b"}, r"sweep.name"),
        ({"axes": {"tcp.mss": [536]}, "zip": [{"tcp.mss": [1000]}]}, r"axis 'tcp.mss' is already given"),
    ],
)
def test_bad_specs_are_refused_naming_the_key(sweep, message):
    with pytest.raises(tcplab.SweepError, match=message):
        parse_spec(with_sweep(sweep))


def test_a_scenario_without_a_sweep_is_refused():
    with pytest.raises(tcplab.SweepError, match=r"no sweep"):
        parse_spec(BASE)


# --- seeds and keys ----------------------------------------------------------------------------


def test_replicate_seeds_are_base_plus_index_at_every_point():
    spec = parse_spec(with_sweep({"axes": {"topology.loss": [0.0, 0.01, 0.02]}, "replicates": 4, "seed": 10}))
    assert spec.seeds == [10, 11, 12, 13]
    tasks = expand(spec)
    for point in range(3):
        assert [t.seed for t in tasks if t.point == point] == [10, 11, 12, 13]
    # the default base is the scenario's own seed, else 1
    assert parse_spec(with_sweep({"replicates": 2})).seeds == [1, 2]
    assert parse_spec(with_sweep({"replicates": 2}, {**BASE, "seed": 7})).seeds == [7, 8]
    assert parse_spec(with_sweep({"seeds": [5, 99]})).seeds == [5, 99]


def test_common_random_numbers_same_replicate_same_draws():
    """Replicate r sees the same random loss pattern at every point that differs only in TCP."""
    res = tcplab.sweep(with_sweep({"axes": {"tcp.variant": ["reno", "newreno"]}, "replicates": 2}), store=":memory:", workers=0, progress=False)
    runs = res.connections
    a = runs[(runs["tcp.variant"] == "reno") & (runs["replicate"] == 1)]["seed"].tolist()
    b = runs[(runs["tcp.variant"] == "newreno") & (runs["replicate"] == 1)]["seed"].tolist()
    assert a == b == [2, 2]


def test_run_key_depends_on_resolved_scenario_seed_and_version():
    spec = parse_spec(with_sweep({"axes": {"topology.delay": ["10ms"]}, "replicates": 2}))
    t = expand(spec)
    # "10ms" is the base delay: the key is that of the base scenario with no axis at all
    base = expand(parse_spec(with_sweep({"replicates": 2})))
    assert [x.key for x in t] == [x.key for x in base]
    assert t[0].key != t[1].key
    assert run_key(t[0].scenario_hash, 1, "0.1.0") != run_key(t[0].scenario_hash, 1, "9.9.9")
    # the same sweep twice gives the same keys
    assert [x.key for x in expand(spec)] == [x.key for x in t]


def test_two_values_giving_one_scenario_are_refused():
    with pytest.raises(tcplab.SweepError, match=r"same scenario.*topology.delay=\"10ms\".*topology.delay=\"0.01s\""):
        expand(parse_spec(with_sweep({"axes": {"topology.delay": ["10ms", "0.01s"]}})))


# --- refused before any run --------------------------------------------------------------------


@pytest.mark.parametrize("axis", ["topology.dely", "tcp.msss", "flows.3.bytes", "flows.0.tcp.nope", "nonsense"])
def test_an_unknown_axis_key_is_refused_before_any_run(tmp_path, axis):
    store = tmp_path / "s.duckdb"
    with pytest.raises(tcplab.SweepError, match=f"sweep axis '{axis}'"):
        tcplab.sweep(with_sweep({"axes": {"tcp.variant": ["reno"], axis: [1, 2]}}), store=store, workers=0, progress=False)
    assert not store.exists()  # nothing ran, no store was made


def test_an_unknown_axis_key_on_the_command_line_is_one_error_line(cli, tmp_path):
    f = tmp_path / "s.toml"
    f.write_text(
        'name = "t"\n[topology]\nkind = "single_link"\nrate = "10Mbps"\ndelay = "10ms"\n[[flows]]\nbytes = "16KB"\n'
        '[sweep.axes]\n"topology.dely" = ["1ms", "2ms"]\n',
        encoding="utf-8",
    )
    p = cli("sweep", f, "--workers", "0", "--store", tmp_path / "s.duckdb")
    assert p.returncode == 2
    assert p.stderr.strip().splitlines() == [p.stderr.strip()]
    assert "sweep axis 'topology.dely'" in p.stderr and "unknown field `dely`" in p.stderr
    assert not (tmp_path / "s.duckdb").exists()


def test_a_bad_value_is_not_a_key_error():
    # rwnd = 1000 B cannot hold one MSS: a value problem, recorded per run, not a refused axis
    spec = parse_spec(with_sweep({"axes": {"tcp.rwnd": ["1000B", "64KB"]}}))
    check_axes(spec, json.dumps(spec.base))
    tasks = expand(spec)
    assert "must hold at least one MSS" in tasks[0].error and tasks[1].error is None


# --- running -----------------------------------------------------------------------------------

GRID = {"axes": {"tcp.variant": ["reno", "newreno"], "topology.loss": {"logspace": [-3, -1, 3]}}, "replicates": 3}


def test_result_tables_are_tidy_with_axis_columns():
    res = tcplab.sweep(with_sweep(GRID), store=":memory:", workers=0, progress=False)
    assert len(res.runs) == 18 and (res.runs["status"] == "ok").all()
    assert list(res.connections.columns[:5]) == ["tcp.variant", "topology.loss", "replicate", "seed", "key"]
    assert len(res.connections) == 18 * 2  # one row per run and flow
    assert len(res.links) == 18 * 2 and len(res.transfers) == 18 * 2
    # each row is the run of its point: the same as tcplab.run with those overrides and seed
    row = res.connections.iloc[7]
    one = tcplab.run(BASE, seed=int(row["seed"]), sets=[f"tcp.variant={row['tcp.variant']}", f"topology.loss={float(row['topology.loss'])!r}"])
    assert one.connections.iloc[row["flow"]]["segs_sent"] == row["segs_sent"]
    assert one.connections.iloc[row["flow"]]["rtt_avg_s"] == row["rtt_avg_s"]


def test_serial_pool_and_dask_give_identical_tables(tmp_path):
    distributed = pytest.importorskip("distributed")
    spec = with_sweep(GRID)
    serial = tcplab.sweep(spec, store=tmp_path / "serial.duckdb", workers=0, progress=False)
    pool = tcplab.sweep(spec, store=tmp_path / "pool.duckdb", workers=2, batch_size=2, progress=False)
    frames_equal(serial, pool)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None) as cluster:
        with distributed.Client(cluster) as client:
            dask = tcplab.sweep(spec, store=tmp_path / "dask.duckdb", dask=client, batch_size=3, progress=False)
    frames_equal(serial, dask)
    assert dask.stats["executor"] == "dask" and pool.stats["executor"] == "local"
    # and what the store gives back later is the same again
    frames_equal(serial, tcplab.load(tmp_path / "dask.duckdb"))


def test_dask_local_cluster_from_the_command_line(cli, tmp_path):
    f = tmp_path / "s.toml"
    f.write_text(
        'name = "t"\n[topology]\nkind = "single_link"\nrate = "10Mbps"\ndelay = "10ms"\nloss = 0.01\n[[flows]]\nbytes = "16KB"\n'
        '[sweep]\nreplicates = 3\n[sweep.axes]\n"tcp.variant" = ["reno", "newreno"]\n',
        encoding="utf-8",
    )
    p = cli("sweep", f, "--dask", "local", "--workers", "1", "--store", tmp_path / "d.duckdb", timeout=120)
    assert p.returncode == 0, p.stderr
    assert "6 runs: 6 run now (6 ok, 0 failed)" in p.stdout
    serial = tcplab.sweep(f, store=tmp_path / "s.duckdb", workers=0, progress=False)
    frames_equal(serial, tcplab.load(tmp_path / "d.duckdb"))


def test_failed_runs_are_recorded_and_the_sweep_goes_on(tmp_path, monkeypatch):
    import tcplab.executors as ex

    real = _core.run_scenario

    def flaky(text, fmt, seed, sets, **kw):
        if seed == 2 and 'tcp.variant="reno"' in sets:
            raise _core.CoreError("internal error in the simulator core: deliberate test panic")
        return real(text, fmt, seed, sets, **kw)

    monkeypatch.setattr(ex._core, "run_scenario", flaky)
    sweep = {"axes": {"tcp.variant": ["reno", "newreno"], "tcp.rwnd": ["1000B", "64KB"]}, "replicates": 2}
    store = tmp_path / "f.duckdb"
    res = tcplab.sweep(with_sweep(sweep), store=store, workers=0, progress=False)
    status = res.runs.set_index(["tcp.variant", "tcp.rwnd", "replicate"])["status"]
    assert (status.xs("1000B", level="tcp.rwnd") == "failed").all()  # an invalid combination
    assert status[("reno", "64KB", 1)] == "failed"  # a panic of the core
    assert status[("reno", "64KB", 0)] == "ok" and (status.xs("newreno", level="tcp.variant").xs("64KB") == "ok").all()
    errors = res.failed.set_index(["tcp.variant", "tcp.rwnd", "replicate"])["error"]
    assert errors[("reno", "64KB", 1)] == "CoreError: internal error in the simulator core: deliberate test panic"
    assert errors[("newreno", "1000B", 0)].startswith("ScenarioError: tcp.rwnd: must hold at least one MSS")
    assert len(res.connections) == 3 * 2  # flows of the three ok runs only
    assert res.stats["failed"] == 5 and res.stats["ok"] == 3

    # A rerun skips failed runs too; with retry_failed they run again and replace their rows.
    monkeypatch.setattr(ex._core, "run_scenario", real)
    again = tcplab.sweep(with_sweep(sweep), store=store, workers=0, progress=False)
    assert again.stats["skipped"] == 8 and len(again.failed) == 5
    retried = tcplab.sweep(with_sweep(sweep), store=store, workers=0, progress=False, retry_failed=True)
    assert retried.stats["skipped"] == 3 and retried.stats["ok"] == 1 and retried.stats["failed"] == 4
    stored = tcplab.load(store)
    assert stored.runs["key"].is_unique and len(stored.runs) == 8
    assert len(stored.connections) == 4 * 2


def test_without_tables_the_failed_runs_are_listed_in_grid_order(tmp_path):
    """`tables=False` (what `tcplab sweep` uses) reads no table back; the failed runs of the sweep
    are listed as the tables would give them."""
    sweep = {"axes": {"tcp.variant": ["reno", "newreno"], "tcp.rwnd": ["1000B", "64KB"]}, "replicates": 2}
    store = tmp_path / "t.duckdb"
    res = tcplab.sweep(with_sweep(sweep), store=store, workers=0, progress=False, tables=False)
    assert res.runs is None and res.connections is None and res.store == str(store)
    assert res.stats["ok"] == 4 and res.stats["failed"] == 4
    full = tcplab.load(store).failed
    listed = res.stats["failed_runs"]
    assert [(r["overrides"], r["seed"], r["status"], r["error"]) for r in listed] == [
        (json.loads(o), s, st, e) for o, s, st, e in zip(full["overrides"], full["seed"], full["status"], full["error"])
    ]
    assert [r["overrides"][-1] for r in listed] == ['tcp.rwnd="1000B"'] * 4


def test_batcher_sizes_batches_to_the_target_time():
    b = Batcher(parallelism=2, target_s=0.2)
    assert b.size(10_000) == 4  # nothing measured yet
    b.observe(4, 0.004)  # 1 ms a run
    assert b.size(10_000) == 200
    assert b.size(40) == 5  # a fair share of what is left
    assert Batcher(2, 0.2, size=7).size(3) == 7
    with pytest.raises(tcplab.SweepError):
        Batcher(2, 0.2, size=0)


def test_progress_lines_when_not_a_terminal(cli, tmp_path):
    f = tmp_path / "s.toml"
    f.write_text(
        'name = "t"\n[topology]\nkind = "single_link"\nrate = "10Mbps"\ndelay = "10ms"\n[[flows]]\nbytes = "16KB"\n'
        '[sweep]\nreplicates = 2\n[sweep.axes]\n"tcp.variant" = ["reno", "newreno"]\n',
        encoding="utf-8",
    )
    p = cli("sweep", f, "--workers", "0", "--store", tmp_path / "s.duckdb", "--batch-size", "1", "--progress-interval", "0")
    assert p.returncode == 0, p.stderr
    lines = [x for x in p.stderr.splitlines() if x.startswith("sweep t: ")]
    assert lines and lines[-1].startswith("sweep t: 4/4 runs done (100.0 %), 0 failed, ")
    assert "runs/s, ETA" in lines[-1]
    # a rerun counts what the store already has
    p = cli("sweep", f, "--workers", "0", "--store", tmp_path / "s.duckdb")
    assert "4 runs: 0 run now (0 ok, 0 failed), 4 already stored" in p.stdout


def test_dry_run_prints_the_grid_and_runs_nothing(cli, tmp_path):
    f = tmp_path / "s.toml"
    f.write_text(
        'name = "t"\n[topology]\nkind = "single_link"\nrate = "10Mbps"\ndelay = "10ms"\n[[flows]]\nbytes = "16KB"\n'
        '[sweep]\nreplicates = 3\n[sweep.axes]\n"topology.loss" = { logspace = [-4, -1, 4] }\n',
        encoding="utf-8",
    )
    p = cli("sweep", f, "--dry-run", "--store", tmp_path / "s.duckdb")
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines()[0].startswith("sweep t: 4 points x 3 replicates = 12 runs")
    assert "topology.loss (4 values): 0.0001, 0.001, 0.01, 0.1" in p.stdout
    assert not (tmp_path / "s.duckdb").exists()


def test_run_of_a_sweep_file_points_to_the_sweep_command(cli):
    p = cli("run", Path(__file__).resolve().parent.parent / "experiments" / "sweeps" / "sweep_demo.toml")
    assert p.returncode == 2
    assert "has a [sweep] table; run it with `tcplab sweep" in p.stderr


def test_the_example_sweep_runs(tmp_path):
    example = Path(__file__).resolve().parent.parent / "experiments" / "sweeps" / "sweep_demo.toml"
    res = tcplab.sweep(example, store=tmp_path / "demo.duckdb", workers=0, progress=False)
    assert len(res.runs) == 30 and (res.runs["status"] == "ok").all()
    assert (res.connections["bytes_delivered"] == 1 << 20).all()
    by_loss = res.connections.groupby("topology.loss")["retransmits"].mean()
    assert by_loss.iloc[-1] > by_loss.iloc[0]  # more loss, more retransmissions
    assert math.isclose(by_loss.index[0], 1e-3) and math.isclose(by_loss.index[-1], 0.1)
