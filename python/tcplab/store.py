"""The results store: one embedded DuckDB file per sweep (default `results/<name>.duckdb`).

Tables: `runs` (one row per run: key, scenario hash, overrides, seed, status, error, timings,
tcplab version), `connections`, `links` and `transfers` (the run's result rows, each with its run
key), and `tcplab_meta` (store format, simulator version, the last sweep spec). Only the
coordinator writes, one transaction per finished batch holding the batch's `runs` rows and all
of their result rows, so a killed sweep leaves every finished run complete and nothing else.
"""

from __future__ import annotations

import json
import os
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Optional, Union


from . import _core
from .rows import ZERO_WHERE_ABSENT, merge, run_rows

if TYPE_CHECKING:
    import pandas as pd

STORE_FORMAT = 1
RESULT_TABLES = ("connections", "links", "transfers", "objects", "pages", "udp")
# Rows of each result table within one run, in the order `tcplab.run` gives them.
ROW_ORDER = {"connections": ["flow"], "links": ["link"], "transfers": ["flow", "transfer"], "objects": ["app", "object"], "pages": ["app", "page"],
             "udp": ["app"]}
# Integer columns that may be empty (Option<u64> in the core). A column whose values are all
# empty in the batch that creates its table gets this type, or else DOUBLE, whatever the batch.
NULLABLE_INTEGER_COLUMNS = {("transfers", "bytes")}

RUNS_DDL = """
CREATE TABLE runs (
    key VARCHAR PRIMARY KEY,
    sweep VARCHAR,
    point INTEGER,
    replicate INTEGER,
    seed UBIGINT,
    params VARCHAR,
    overrides VARCHAR,
    scenario_hash VARCHAR,
    status VARCHAR,
    error VARCHAR,
    wall_time_s DOUBLE,
    sim_time_s DOUBLE,
    events BIGINT,
    completed BOOLEAN,
    tcplab_version VARCHAR,
    finished_at TIMESTAMP
)"""
RUN_COLUMNS = [
    "key", "sweep", "point", "replicate", "seed", "params", "overrides", "scenario_hash", "status", "error",
    "wall_time_s", "sim_time_s", "events", "completed", "tcplab_version", "finished_at",
]  # fmt: skip


# How every store is opened. A store may come from someone else, and what it holds runs when it is
# read: a view named `runs` could read local files (`read_text('/etc/...')`) or fetch URLs (httpfs
# would install and load itself). So DuckDB may touch no file but the store (no COPY, no
# read_csv, no ATTACH), installs and loads no extension, and the settings cannot be changed
# afterwards. Nothing tcplab does needs more: batches are inserted as parameters or registered
# Arrow tables (no file), and `tcplab results --to csv|parquet` exports the DataFrames it read
# with pandas, outside DuckDB.
CONNECTION_CONFIG = {
    "enable_external_access": False,
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
    "lock_configuration": True,
}
# The tables a store may hold: each must be a base table (never a view).
STORE_TABLES = ("tcplab_meta", "runs") + RESULT_TABLES


class StoreError(RuntimeError):
    """A results store cannot be used: in use, not a tcplab store, or from another version."""


# DuckDB types of the `runs` columns (RUNS_DDL), as their values are inserted.
RUN_TYPES = {
    "key": "VARCHAR", "sweep": "VARCHAR", "point": "INTEGER", "replicate": "INTEGER", "seed": "UBIGINT", "params": "VARCHAR",
    "overrides": "VARCHAR", "scenario_hash": "VARCHAR", "status": "VARCHAR", "error": "VARCHAR", "wall_time_s": "DOUBLE",
    "sim_time_s": "DOUBLE", "events": "BIGINT", "completed": "BOOLEAN", "tcplab_version": "VARCHAR", "finished_at": "TIMESTAMP",
}  # fmt: skip
INT64_MAX = 2**63 - 1
# Rows of a result table inserted by one statement (`Store._insert_rows`).
INSERT_ROWS = 8192


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _column_type(values: list) -> Optional[str]:
    """The DuckDB type of a column of plain Python values, as Arrow's inference (which stored them
    before) types them: bool -> BOOLEAN, int -> BIGINT (UBIGINT past int64), int and float ->
    DOUBLE, str -> VARCHAR; None when every value is None. Raises TypeError for anything else
    (lists, dicts, mixed kinds), which then goes through Arrow."""
    kinds = {type(v) for v in values}
    kinds.discard(type(None))
    if not kinds:
        return None
    if kinds == {bool}:
        return "BOOLEAN"
    if kinds == {int}:
        return "UBIGINT" if max(v for v in values if v is not None) > INT64_MAX else "BIGINT"
    if kinds <= {int, float}:
        return "DOUBLE"
    if kinds == {str}:
        return "VARCHAR"
    raise TypeError(f"a column of {', '.join(sorted(k.__name__ for k in kinds))}")


def _concat(parts: Any):
    """One Arrow table from one or several (a column empty in one batch is typed by the others)."""
    import pyarrow as pa

    if isinstance(parts, pa.Table):
        parts = [parts]
    parts = [p for p in parts if p is not None and p.num_rows]
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else pa.concat_tables(parts, promote_options="permissive")


def _is_arrow(parts: Any) -> bool:
    first = parts[0] if isinstance(parts, list) and parts else parts
    return hasattr(first, "num_rows")


def _merge_columns(parts: Any) -> Optional[dict]:
    """One table of columns (column name -> values, as `run_batch` gives them) from one or several;
    a column missing from a part is None in its rows. None for no rows."""
    if parts is None:
        return None
    if isinstance(parts, dict):
        parts = [parts]
    parts = [p for p in parts if p and len(next(iter(p.values())))]
    if not parts:
        return None
    if len(parts) == 1:
        return parts[0]
    names = dict.fromkeys(n for p in parts for n in p)
    lengths = [len(next(iter(p.values()))) for p in parts]
    return {n: [v for p, k in zip(parts, lengths) for v in (p[n] if n in p else [None] * k)] for n in names}


class Store:
    """A results store opened for writing (the sweep coordinator) or reading (`tcplab.load`)."""

    def __init__(self, path: Union[str, os.PathLike], read_only: bool = False) -> None:
        import duckdb

        self.path = os.fspath(path)
        self.read_only = read_only
        memory = self.path == ":memory:"
        if read_only and not memory and not Path(self.path).is_file():
            raise StoreError(f"{self.path}: no such results store")
        if not memory and not read_only:
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        try:
            self.con = duckdb.connect(self.path, read_only=read_only, config=dict(CONNECTION_CONFIG))
        except duckdb.Error as e:
            msg = str(e)
            if "lock" in msg.lower():
                raise StoreError(f"{self.path}: the store is open in another process (one sweep writes a store at a time): {msg}") from None
            raise StoreError(f"{self.path}: not a DuckDB results store ({msg})") from None
        try:
            self._tables = self._check_or_create()
        except duckdb.Error as e:
            self.con.close()
            raise StoreError(f"{self.path}: a damaged or unreadable results store ({e})") from None
        except BaseException:
            self.con.close()
            raise
        self._columns: dict = {}  # result table -> {column: DuckDB type}, once known (a commit skips DESCRIBE)
        self._failed: set = set()

    # --- format and version ---

    def _existing_tables(self) -> set:
        """The store's tables; a view in the place of one of tcplab's tables is refused (it would
        run a query of the store's author when read)."""
        rows = self.con.execute("SELECT table_name, table_type FROM information_schema.tables WHERE table_schema = 'main'").fetchall()
        views = sorted(name for name, kind in rows if kind != "BASE TABLE" and name in STORE_TABLES)
        if views:
            raise StoreError(
                f"{self.path}: not a tcplab results store: {', '.join(views)} {'is a view' if len(views) == 1 else 'are views'}, "
                f"not {'a table' if len(views) == 1 else 'tables'} (a tcplab store holds tables only; a view runs a query when it is read)"
            )
        return {r[0] for r in rows}

    def _check_or_create(self) -> set:
        """Check the store's format and version, or create an empty store; its tables."""
        tables = self._existing_tables()
        if "tcplab_meta" not in tables:
            if tables:
                raise StoreError(f"{self.path}: a DuckDB file that is not a tcplab results store (it has tables {', '.join(sorted(tables))})")
            if self.read_only:
                raise StoreError(f"{self.path}: an empty DuckDB file, not a tcplab results store")
            self.con.begin()
            self.con.execute("CREATE TABLE tcplab_meta (key VARCHAR PRIMARY KEY, value VARCHAR)")
            self.con.execute(RUNS_DDL)
            self.con.executemany(
                "INSERT INTO tcplab_meta VALUES (?, ?)",
                [
                    ("store_format", str(STORE_FORMAT)),
                    ("tcplab_version", _core.__version__),
                    ("created_at", datetime.now(timezone.utc).isoformat(timespec="seconds")),
                ],
            )
            self.con.commit()
            return {"tcplab_meta", "runs"}
        meta = dict(self.con.execute("SELECT key, value FROM tcplab_meta").fetchall())
        fmt, version = meta.get("store_format", "?"), meta.get("tcplab_version", "?")
        if fmt != str(STORE_FORMAT):
            raise StoreError(
                f"{self.path}: written by tcplab {version} in store format {fmt}; this tcplab ({_core.__version__}) "
                f"reads store format {STORE_FORMAT} only. Read it with tcplab {version}, or sweep into a new store."
            )
        if not self.read_only and version != _core.__version__:
            raise StoreError(
                f"{self.path}: holds runs of tcplab {version}, and this is tcplab {_core.__version__}: results of two "
                f"simulator versions are not mixed in one store. Sweep into a new store (--store PATH) or move this one; "
                f"tcplab.load() still reads it."
            )
        return tables

    @property
    def meta(self) -> dict:
        return dict(self.con.execute("SELECT key, value FROM tcplab_meta").fetchall())

    def record_spec(self, spec) -> None:
        """Keep the sweep's name and expanded spec (provenance of the store)."""
        self.con.execute(
            "INSERT OR REPLACE INTO tcplab_meta VALUES ('sweep', ?), ('spec', ?)",
            [spec.name, json.dumps(spec.to_dict())],
        )

    # --- writing ---

    def finished_keys(self, include_failed: bool = True) -> set:
        """Keys of runs already finished: ok, and failed unless they are to be run again."""
        rows = self.con.execute("SELECT key, status FROM runs").fetchall()
        self._failed = {k for k, s in rows if s != "ok"}
        return {k for k, s in rows if s == "ok" or include_failed}

    def commit(self, tasks: list, outcomes: list, tables: Optional[dict] = None, sweep: Optional[str] = None) -> None:
        """Store finished runs in one transaction: their `runs` rows (tasks with their outcomes, as
        run_batch gives them) and their result rows (`tables`: name -> the runs' rows as run_batch
        gives them, a table's columns, an Arrow table, or a list of one of these). A run failed earlier is
        replaced. Neither needs pyarrow: columns go to DuckDB as list parameters."""
        by_key = {o["key"]: o for o in outcomes}
        cols: dict = {c: [] for c in RUN_COLUMNS if c not in ("sweep", "tcplab_version", "finished_at")}
        for t in tasks:
            o = by_key[t.key]
            for c, v in (
                ("key", t.key), ("point", t.point), ("replicate", t.replicate), ("seed", t.seed), ("params", json.dumps(dict(t.params))),
                ("overrides", json.dumps(list(t.sets))), ("scenario_hash", t.scenario_hash), ("status", o["status"]),
                ("error", o.get("error")), ("wall_time_s", o.get("wall_time_s")), ("sim_time_s", o.get("sim_time_s")),
                ("events", o.get("events")), ("completed", o.get("completed")),
            ):  # fmt: skip
                cols[c].append(v)
        now = datetime.now(timezone.utc).replace(tzinfo=None)
        runs_sql = ", ".join(f"UNNEST(?::{RUN_TYPES[c]}[]) AS {c}" for c in cols)
        runs_params = [*cols.values(), sweep, _core.__version__, now]
        replace = [t.key for t in tasks if t.key in self._failed]
        con = self.con
        con.begin()
        try:
            if replace:
                for name in ("runs", *RESULT_TABLES):
                    if name == "runs" or name in self._tables:
                        con.execute(f"DELETE FROM {name} WHERE key IN (SELECT UNNEST(?::VARCHAR[]))", [replace])
            con.execute(
                f"INSERT INTO runs BY NAME SELECT {runs_sql}, ?::VARCHAR AS sweep, ?::VARCHAR AS tcplab_version, ?::TIMESTAMP AS finished_at",
                runs_params,
            )
            for name, parts in (tables or {}).items():
                self._insert_rows(name, parts)
            con.commit()
        except BaseException:
            con.rollback()
            self._tables = self._existing_tables()
            self._columns.clear()
            raise
        self._failed.difference_update(replace)

    def _insert_rows(self, name: str, parts: Any) -> None:
        """Insert a result table's rows: the runs' rows as `run_batch` gives them (`RunRows`, or
        lists of them), joined into columns here, or columns (a dict of column name -> values, or a
        list of them), each column a list passed to DuckDB as one parameter; or an Arrow table (or
        a list)."""
        con = self.con
        if _is_arrow(parts):
            tbl = _concat(parts)
            if tbl is None:
                return
            con.register("_rows", tbl)
            try:
                types = {c: (None if t.strip('"').upper() == "NULL" else t) for c, t, *_ in con.execute("DESCRIBE SELECT * FROM _rows").fetchall()}
                self._prepare_table(name, types)
                con.execute(f"INSERT INTO {name} BY NAME SELECT * FROM _rows")
            finally:
                con.unregister("_rows")
            return
        runs = run_rows(parts)
        cols = merge(runs, ZERO_WHERE_ABSENT.get(name, ())) if runs is not None else _merge_columns(parts)
        if cols is None:
            return
        try:
            types = {c: _column_type(v) for c, v in cols.items()}
        except TypeError:  # values Arrow knows how to store (lists, structs): as before
            import pyarrow as pa

            return self._insert_rows(name, pa.Table.from_pydict(cols))
        have = self._prepare_table(name, types)
        sql = ", ".join(f"UNNEST(?::{types[c] or have[c]}[]) AS {_ident(c)}" for c in cols)
        n = len(cols["key"]) if "key" in cols else len(next(iter(cols.values())))
        # In slices: DuckDB turns a list parameter into a value per element (some 100 bytes
        # each) before it inserts, so one statement of a batch's rows of a many-row table (the
        # objects of a web study: 10^5 rows x 20 columns) would take hundreds of MB at once.
        for i in range(0, n, INSERT_ROWS):
            con.execute(f"INSERT INTO {name} BY NAME SELECT {sql}", [v[i : i + INSERT_ROWS] for v in cols.values()])

    def _prepare_table(self, name: str, types: dict) -> dict:
        """Create result table `name`, or add the columns it lacks, for a batch of rows whose
        columns have these DuckDB `types` (None: every value empty, typed BIGINT if the column is
        in NULLABLE_INTEGER_COLUMNS, else DOUBLE, unless the table has it). Returns the table's
        column types."""
        empty = lambda c: "BIGINT" if (name, c) in NULLABLE_INTEGER_COLUMNS else "DOUBLE"  # noqa: E731
        if name not in self._tables:
            self.con.execute(f"CREATE TABLE {name} ({', '.join(f'{_ident(c)} {t or empty(c)}' for c, t in types.items())})")
            self._tables.add(name)
            self._columns[name] = {c: t or empty(c) for c, t in types.items()}
            return self._columns[name]
        have = self._columns.get(name)
        if have is None or not types.keys() <= have.keys():
            have = {r[0]: r[1] for r in self.con.execute(f"DESCRIBE {name}").fetchall()}
            for c, t in types.items():
                if c not in have:
                    self.con.execute(f"ALTER TABLE {name} ADD COLUMN {_ident(c)} {t or empty(c)}")
                    have[c] = t or empty(c)
            self._columns[name] = have
        return have

    # --- reading ---

    def failed_runs(self, keys: list) -> list:
        """The runs among `keys` (tasks of a sweep) that are not ok, in grid order, as dicts of
        `overrides` (a list), `seed`, `status` and `error`."""
        order = {t.key: i for i, t in enumerate(keys)}
        rows = self.con.execute("SELECT key, overrides, seed, status, error FROM runs WHERE status <> 'ok'").fetchall()
        rows = sorted((r for r in rows if r[0] in order), key=lambda r: order[r[0]])
        return [{"overrides": json.loads(o) if o else [], "seed": seed, "status": status, "error": err} for _, o, seed, status, err in rows]

    def load(self, keys: Optional[list] = None, spec: Any = None, sweep: Optional[str] = None, mixed: bool = False,
             columns: Optional[dict] = None):
        """The store's runs as tidy tables (a `SweepResult`). With `keys` (the tasks of a sweep),
        only those runs, in grid order, with the sweep's axis values; otherwise every run, in order
        of (point, replicate, key), with the axis values it was stored with.

        `columns` (result table -> its columns to read) reads only those columns of a table (each
        row still led by its run's axis values, `replicate`, `seed` and `key`; the rows and their
        order are the same): a web study's objects table has some 20 columns and 10^5-10^6 rows,
        of which an analysis may read a handful. A column the table lacks is a StoreError naming
        it; a table not named is read whole.

        Without `keys`, a store that holds more than one sweep (two names, or one name swept over
        different axes) is refused with a StoreError that lists them, rather than mixed: `sweep`
        picks one by name, `mixed=True` takes them all."""
        import pandas as pd

        from .results import SweepResult

        columns = _check_columns(columns)
        runs = self.con.execute(f"SELECT {', '.join(RUN_COLUMNS)} FROM runs ORDER BY point, replicate, key").df()
        if keys is None:
            runs = self._one_sweep(runs, sweep, mixed)
        if keys is not None:
            front = pd.DataFrame(
                [{**dict(t.params), "point": t.point, "replicate": t.replicate, "seed": t.seed, "key": t.key} for t in keys]
            )
            axis_cols = [k for k in front.columns if k not in ("point", "replicate", "seed", "key")]
            if front.empty:
                front = pd.DataFrame(columns=["point", "replicate", "seed", "key"])
            stored = runs.drop(columns=["point", "replicate", "seed"]).set_index("key")
            runs = front.join(stored, on="key", how="inner").reset_index(drop=True)
        else:
            params = [json.loads(p) if p else {} for p in runs["params"]]
            axis_cols = list(dict.fromkeys(k for p in params for k in p))
            for k in reversed(axis_cols):
                runs.insert(0, k, [p.get(k) for p in params])
        runs = runs.astype({"point": "int64", "replicate": "int64", "seed": "uint64"})
        lead = axis_cols + ["point", "replicate", "seed", "key"]
        runs = runs[lead + [c for c in runs.columns if c not in lead]]
        rank = pd.Series(range(len(runs)), index=runs["key"].values)
        head = runs[axis_cols + ["replicate", "seed", "key"]]
        out = {}
        for name in RESULT_TABLES:
            if name not in self._tables:
                out[name] = head.iloc[0:0].copy()
                continue
            out[name] = self._table_of_runs(name, head, rank, columns.get(name))
        return SweepResult(runs=runs.reset_index(drop=True), connections=out["connections"], links=out["links"], transfers=out["transfers"],
                           objects=out["objects"], pages=out["pages"], udp=out["udp"], store=self.path)

    def _table_of_runs(self, name: str, head, rank, only: Optional[list] = None):
        """Result table `name`'s rows of the runs in `rank` (key -> the run's position in `head`),
        in order of run and then of `ROW_ORDER`, each led by its run's `head` columns (and of
        its own columns, `only` those if given). DuckDB
        selects, joins and sorts, so the rows reach pandas once (a web study's objects run to
        10^5-10^6 rows: a frame copied at each step of a pandas join and sort took seconds and
        hundreds of MB)."""
        import numpy as np
        import pandas as pd

        rows = ", ".join(f"t.{_ident(c)} NULLS LAST" for c in ROW_ORDER[name])
        picked = "t.*"
        if only is not None:
            have = self._columns.get(name) or {r[0]: r[1] for r in self.con.execute(f"DESCRIBE {name}").fetchall()}
            missing = [c for c in only if c not in have]
            if missing:
                raise StoreError(f"{self.path}: columns.{name}: no column {', '.join(map(repr, missing))} in the {name} table "
                                 f"(it has: {', '.join(c for c in have if c != 'key')})")
            picked = ", ".join(f"t.{_ident(c)}" for c in ["key", *(c for c in only if c != "key")])
        df = self.con.execute(
            f"SELECT r._rank AS _rank, {picked} FROM {name} t JOIN (SELECT UNNEST(?::VARCHAR[]) AS key, UNNEST(?::BIGINT[]) AS _rank) r "
            f"ON t.key = r.key ORDER BY r._rank, {rows}",
            [[str(k) for k in rank.index], [int(i) for i in rank.values]],
        ).df()
        lead = head.iloc[df.pop("_rank").to_numpy()].reset_index(drop=True)
        rest = df.drop(columns=["key"])
        for c in rest.columns:
            if rest[c].dtype == object:
                # One string object per distinct value (a run's client and application names
                # repeat on each of its rows), not one per cell as DuckDB hands them over.
                codes, uniques = pd.factorize(rest[c], use_na_sentinel=True)
                if len(uniques) * 4 < len(codes):
                    values = np.empty(len(codes), dtype=object)
                    values[:] = None
                    have = codes >= 0
                    values[have] = uniques.to_numpy(dtype=object)[codes[have]]
                    rest[c] = values
        if set(rest.columns) & set(lead.columns):  # a result column named like an axis: pandas' suffixes, as before
            df = head.merge(df, on="key", how="inner", sort=False)
            return df.assign(_rank=df["key"].map(rank).values).sort_values(["_rank"] + ROW_ORDER[name], kind="mergesort").drop(columns=["_rank"]).reset_index(drop=True)
        return pd.concat([lead, rest], axis=1, copy=False)

    def _one_sweep(self, runs, sweep: Optional[str], mixed: bool):
        """The runs of one sweep of the store (see `load`)."""
        names = sorted({str(n) for n in runs["sweep"].dropna()})
        if sweep is not None:
            if sweep not in names:
                raise StoreError(f"{self.path}: no sweep named {sweep!r} in this store (it holds: {', '.join(map(repr, names)) or 'no runs'})")
            runs = runs[runs["sweep"] == sweep].reset_index(drop=True)
        if mixed:
            return runs
        groups: dict = {}
        for name, p in zip(runs["sweep"], runs["params"]):
            axes = tuple(json.loads(p)) if p else ()
            groups[(name, axes)] = groups.get((name, axes), 0) + 1
        if len(groups) > 1:
            desc = "; ".join(f"{name!r}: {n} runs over {', '.join(axes) or 'no axis'}" for (name, axes), n in sorted(groups.items(), key=lambda kv: (str(kv[0][0]), kv[0][1])))
            how = (f"load one with tcplab.load({str(self.path)!r}, sweep=NAME) (tcplab results --sweep NAME)"
                   if len({k[0] for k in groups}) > 1 else "the sweep was run again with other axes into the same store")
            raise StoreError(
                f"{self.path}: holds {len(groups)} sweeps whose runs would be mixed ({desc}); {how}, "
                f"or pass mixed=True to take them all together"
            )
        return runs

    def close(self) -> None:
        self.con.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _check_columns(columns: Optional[dict]) -> dict:
    """`columns` of `Store.load`, checked: result table names to lists of column names."""
    if columns is None:
        return {}
    if not isinstance(columns, Mapping):
        raise StoreError(f"columns: expected a dict of result table -> list of column names, got {type(columns).__name__}")
    out = {}
    for name, cols in columns.items():
        if name not in RESULT_TABLES:
            raise StoreError(f"columns: no result table {name!r} (the tables are {', '.join(RESULT_TABLES)})")
        if isinstance(cols, str) or not all(isinstance(c, str) for c in cols):
            raise StoreError(f"columns.{name}: expected a list of column names, got {cols!r}")
        out[name] = list(dict.fromkeys(cols))
    return out


def load(path: Union[str, os.PathLike], sweep: Optional[str] = None, mixed: bool = False):
    """Read a results store: `tcplab.load("results/demo.duckdb").connections`.

    A store holding more than one sweep is refused (a StoreError listing them) instead of mixing
    their runs: `sweep="name"` picks one, `mixed=True` takes every run."""
    import duckdb

    with Store(path, read_only=True) as st:
        try:
            return st.load(sweep=sweep, mixed=mixed)
        except duckdb.Error as e:
            # A file damaged past its header (a cut transfer, a bad disk): DuckDB finds it out
            # only when it reads the pages; say so about the store, not as DuckDB's own error.
            raise StoreError(f"{os.fspath(path)}: a damaged or unreadable results store ({e})") from None
