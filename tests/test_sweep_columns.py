"""Sweep rows as columns: the workers hand each run's result tables over in the core's column form
(`rows.RunRows`: numeric columns as packed bytes) and the store joins them into columns and inserts
them as DuckDB list parameters, without pyarrow, so the coordinator of `tcplab sweep` imports
neither pyarrow nor pandas nor numpy; the stored types and values are those the JSON records and
the Arrow route stored."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import duckdb
import pyarrow as pa

from tcplab import _core
from tcplab.executors import RESULT_TABLES, run_batch
from tcplab.rows import ZERO_WHERE_ABSENT, RunRows, merge
from tcplab.store import Store
from tcplab.sweep import expand, parse_spec
from conftest import tiny_sweep

SWEEP = tiny_sweep("cols", replicates=2, axes='"topology.loss" = [0.0, 0.05]', flows='[[flows]]\nbytes = "16KB"\n[[flows]]\nbytes = "8KB"\nstart = "5ms"\n')

COORDINATOR = """\
import sys
from tcplab.cli import main
try:
    main(sys.argv[1:], standalone_mode=False)
finally:
    print("IMPORTED", sorted(m for m in ("pandas", "pyarrow", "numpy") if m in sys.modules))
"""


def test_tcplab_sweep_coordinator_imports_neither_pyarrow_nor_pandas(tmp_path):
    spec = tmp_path / "cols.toml"
    spec.write_text(SWEEP, encoding="utf-8")
    store = tmp_path / "cols.duckdb"
    cmd = [sys.executable, "-c", COORDINATOR, "sweep", str(spec), "--workers", "1", "--store", str(store), "-q"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "4 runs: 4 run now (4 ok, 0 failed)" in out.stdout
    assert "IMPORTED []" in out.stdout, out.stdout
    with duckdb.connect(str(store), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM connections").fetchone()[0] == 4 * 2
        assert con.execute("SELECT count(*) FROM runs WHERE status = 'ok'").fetchone()[0] == 4


def test_merge_joins_runs_in_the_cores_column_order_with_nulls_and_zeros():
    # Run a: two rows, `x` packed (int64), `y` a list, `z` absent from row 1; run b: no `y`,
    # `x` packed with a missing value, `z` absent from every row.
    a = RunRows("a", {"x": ("<i8", (5).to_bytes(8, "little") + (6).to_bytes(8, "little")), "y": ["p", None], "z": [1, None]}, {"z": [1]}, 2)
    b = RunRows("b", {"x": ("<f8", b"\0" * 8, [0]), "z": None}, {"z": True}, 1)
    assert merge([a, b]) == {"key": ["a", "a", "b"], "x": [5, 6, None], "y": ["p", None, None], "z": [1, None, None]}
    # A counter the core leaves out where it counted nothing reads 0 where a row lacks it.
    assert merge([a, b], zero=("z", "w")) == {"key": ["a", "a", "b"], "x": [5, 6, None], "y": ["p", None, None], "z": [1, 0, 0], "w": [0, 0, 0]}
    # A column no row has is left out; no rows, no table.
    assert "z" not in merge([b])
    assert merge([RunRows("c", {}, {}, 0)]) is None


def _records_route(base: str, tasks: list) -> dict:
    """The result tables as the workers built them before the column form: each run's JSON
    records, a counter the core left out written as 0, one column per key in order of first
    appearance."""
    rows: dict = {name: [] for name in RESULT_TABLES}
    for t in tasks:
        d = json.loads(_core.run_scenario(base, "json", t.seed, list(t.sets)))
        for name, zero in ZERO_WHERE_ABSENT.items():
            for rec in d[name]:
                for c in zero:
                    rec.setdefault(c, 0)
        for name in RESULT_TABLES:
            rows[name].extend({"key": t.key, **rec} for rec in d.get(name, ()))
    out = {}
    for name, rs in rows.items():
        names = dict.fromkeys(k for r in rs for k in r)
        out[name] = {n: [r.get(n) for r in rs] for n in names} if rs else None
    return out


def test_the_column_form_stores_what_the_json_records_stored(tmp_path):
    """A sweep over a scenario with every result table (a TCP transfer, Pareto and CBR sources:
    links with and without UDP) stored from the workers' column form and from the JSON records:
    the same column types and the same rows."""
    text = (Path(__file__).resolve().parents[1] / "experiments" / "examples" / "cross_traffic.toml").read_text(encoding="utf-8")
    text = text.replace('duration = "20s"', 'duration = "4s"') + "\n[sweep]\nreplicates = 2\n[sweep.axes]\n\"topology.queue\" = [5, 20]\n"
    spec = parse_spec(text)
    base = json.dumps(spec.base)
    tasks = expand(spec, base)
    res = run_batch(base, [(t.key, t.seed, list(t.sets)) for t in tasks])
    assert all(isinstance(p, RunRows) for p in res["tables"]["links"])
    for route, tables in (("runs", res["tables"]), ("records", _records_route(base, tasks))):
        with Store(tmp_path / f"{route}.duckdb") as st:
            st.record_spec(spec)
            st.commit(tasks, res["runs"], tables, sweep=spec.name)
    runs, records = _described(tmp_path / "runs.duckdb", by_name=True), _described(tmp_path / "records.duckdb", by_name=True)
    assert runs["types"] == records["types"]
    assert runs["rows"] == records["rows"]
    assert len(runs["rows"]["udp"]) == 4 * 9 and len(runs["rows"]["links"]) > 0
    assert {c[0]: c[1] for c in runs["types"]["links"]}["udp_pkts"] == "BIGINT"


def _described(path: Path, by_name: bool = False) -> dict:
    """A store's tables: their column types and rows (in column order, or with `by_name` in the
    order of the column names, for two stores whose tables were created with their columns in
    another order)."""
    with duckdb.connect(str(path), read_only=True) as con:
        names = [r[0] for r in con.execute("SELECT table_name FROM information_schema.tables WHERE table_schema = 'main' ORDER BY 1").fetchall()]
        types = {n: con.execute(f"DESCRIBE {n}").fetchall() for n in names if n != "tcplab_meta"}
        rows = {}
        for n, cols in types.items():
            keep = [c[0] for c in cols if c[0] != "finished_at"]
            if by_name:
                keep.sort()
                types[n] = sorted(cols)
            rows[n] = con.execute(f"SELECT {', '.join(chr(34) + c + chr(34) for c in keep)} FROM {n} ORDER BY ALL").fetchall()
    return {"types": types, "rows": rows}


def test_columns_and_arrow_tables_store_the_same_types_and_values(tmp_path):
    """The same batches committed as columns (as the store joins the workers' runs) and as Arrow
    tables built from the same rows (the route before): identical column types and rows, in two commits each
    (the second adds to tables the first created), a column empty in one batch included."""
    spec = parse_spec(SWEEP)
    base = json.dumps(spec.base)
    tasks = expand(spec, base)
    batches = [tasks[:1], tasks[1:]]
    results = [run_batch(base, [(t.key, t.seed, list(t.sets)) for t in b]) for b in batches]
    for res in results:
        res["tables"] = {n: merge(parts, ZERO_WHERE_ABSENT.get(n, ())) if parts else None for n, parts in res["tables"].items()}
    # A column all empty in the first batch: typed by the rule for empty columns, then filled.
    results[0]["tables"]["connections"]["extra"] = [None] * len(results[0]["tables"]["connections"]["key"])
    results[1]["tables"]["connections"]["extra"] = [7] * len(results[1]["tables"]["connections"]["key"])
    for route in ("columns", "arrow"):
        with Store(tmp_path / f"{route}.duckdb") as st:
            st.record_spec(spec)
            for b, res in zip(batches, results):
                tables = res["tables"]
                if route == "arrow":
                    tables = {n: (pa.Table.from_pylist([dict(zip(c, v)) for v in zip(*c.values())]) if c else None) for n, c in tables.items()}
                st.commit(b, res["runs"], tables, sweep=spec.name)
    cols, arrow = _described(tmp_path / "columns.duckdb"), _described(tmp_path / "arrow.duckdb")
    assert cols["types"] == arrow["types"]
    assert cols["rows"] == arrow["rows"]
    assert {c[0]: c[1] for c in cols["types"]["connections"]}["extra"] == "DOUBLE"
    assert {c[0]: c[1] for c in cols["types"]["transfers"]}["flow"] == "BIGINT"
    assert len(cols["rows"]["connections"]) == 4 * 2
