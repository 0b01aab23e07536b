"""Sweep rows as columns: the workers hand each result table over as columns and the store inserts
them as DuckDB list parameters, without pyarrow, so the coordinator of `tcplab sweep` imports
neither pyarrow nor pandas; the stored types and values are those the Arrow route stored."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import duckdb
import pyarrow as pa

from tcplab.executors import columns_of, run_batch
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


def test_columns_of_takes_every_key_in_order_of_first_appearance():
    rows = [{"key": "a", "x": 1}, {"key": "b", "y": 2.5}, {"key": "c", "x": 3, "y": None}]
    assert columns_of(rows) == {"key": ["a", "b", "c"], "x": [1, None, 3], "y": [None, 2.5, None]}
    assert columns_of([]) is None


def _described(path: Path) -> dict:
    with duckdb.connect(str(path), read_only=True) as con:
        names = [r[0] for r in con.execute("SELECT table_name FROM information_schema.tables WHERE table_schema = 'main' ORDER BY 1").fetchall()]
        types = {n: con.execute(f"DESCRIBE {n}").fetchall() for n in names if n != "tcplab_meta"}
        rows = {n: con.execute(f"SELECT * EXCLUDE (finished_at) FROM {n} ORDER BY ALL").fetchall() if n == "runs" else
                con.execute(f"SELECT * FROM {n} ORDER BY ALL").fetchall() for n in types}
    return {"types": types, "rows": rows}


def test_columns_and_arrow_tables_store_the_same_types_and_values(tmp_path):
    """The same batches committed as columns (as the workers send them) and as Arrow tables built
    from the same rows (the route before): identical column types and rows, in two commits each
    (the second adds to tables the first created), a column empty in one batch included."""
    spec = parse_spec(SWEEP)
    base = json.dumps(spec.base)
    tasks = expand(spec, base)
    batches = [tasks[:1], tasks[1:]]
    results = [run_batch(base, [(t.key, t.seed, list(t.sets)) for t in b]) for b in batches]
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
