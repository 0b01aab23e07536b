"""`tcplab results`: a sweep's store summarised per grid point, or exported (docs/sweeps.md)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from .common import _fail, _fmt, _table


def _exportable(df):
    """Axis columns may mix types (`[1, "rfc3390"]`); Parquet needs one type per column."""
    df = df.copy()
    for c in df.columns:
        if df[c].dtype == object:
            kinds = {type(v) for v in df[c] if v is not None}
            if len(kinds) > 1:
                df[c] = [None if v is None else json.dumps(v) if not isinstance(v, str) else v for v in df[c]]
    return df


#: The tables `tcplab results` summarises and the columns it summarises by default.
RESULT_COLUMNS = {
    "connections": ["goodput_bps", "retransmits", "timeouts"],
    "links": ["drop_rate", "utilization", "avg_queue_delay_s"],
    "transfers": ["transfer_time_s", "retransmits", "timeouts"],
    "objects": ["transfer_time_s", "bytes_delivered", "retransmits"],
    "pages": ["delay_s", "bytes"],
    "udp": ["mean_bps", "delivered_pkts", "dropped_pkts"],
}


@click.command("results")
@click.argument("store", type=click.Path(dir_okay=False))
@click.option("--columns", default=None, help="Columns summarised per grid point (mean, spread over the seeds); default per table: "
              + "; ".join(f"{t}: {','.join(c)}" for t, c in RESULT_COLUMNS.items()) + ".")
@click.option("--table", type=click.Choice(list(RESULT_COLUMNS)), default=None,
              help="Table the columns are taken from (default: connections, or when the runs have none, the first of objects, udp, links with rows).")
@click.option("--sweep", "sweep_name", default=None, help="The sweep to read, by name, when the store holds more than one.")
@click.option("--to", "fmt", type=click.Choice(["parquet", "csv"]), default=None, help="Export every table in this format.")
@click.option("--out", type=click.Path(file_okay=False), default=None, help="Directory to export to (default: the store's path without .duckdb).")
def results_cmd(store: str, columns: str, table: str, sweep_name, fmt, out) -> None:
    """Summarise a sweep's results STORE: its runs, then per grid point the mean, standard
    deviation, minimum and maximum over the seeds of --columns; or export its tables (runs,
    connections, links, transfers, and objects, pages, udp when the runs have them) with --to."""
    from ..store import Store, StoreError
    from ..sweep import summarise

    try:
        with Store(store, read_only=True) as st:
            meta = st.meta
            res = st.load(sweep=sweep_name)
    except StoreError as e:
        _fail(str(e))
    if fmt is None:
        counts = res.runs["status"].value_counts().to_dict()
        click.echo(f"store {store}: tcplab {meta.get('tcplab_version')}, sweep {sweep_name or meta.get('sweep', '-')}")
        click.echo(f"runs: {len(res.runs)} ({', '.join(f'{n} {s}' for s, n in sorted(counts.items())) or 'none'})")
        for name in ("connections", "links", "transfers", "objects", "pages", "udp"):
            if name in ("connections", "links", "transfers") or len(getattr(res, name)):
                click.echo(f"{name}: {len(getattr(res, name))} rows")
        axes = res.axes
        if axes:
            click.echo(f"axes: {', '.join(axes)}")
        if table is None:
            table = next((t for t in ("connections", "objects", "udp", "links") if len(getattr(res, t))), "connections")
        elif not len(getattr(res, table)) and len(res.runs):
            have = [t for t in RESULT_COLUMNS if len(getattr(res, t))]
            _fail(f"{store}: the runs have no {table} rows; tables with rows: {', '.join(have) or 'none'} (--table NAME)")
        cols = [c.strip() for c in (columns or ",".join(RESULT_COLUMNS[table])).split(",") if c.strip()]
        try:
            summ = summarise(getattr(res, table), axes, cols, table)
        except ValueError as e:
            _fail(f"{store}: {e}")
        click.echo("")
        click.echo(_summary_table(summ, axes, cols, table))
        return
    outdir = Path(out) if out else Path(store).with_suffix("")
    outdir.mkdir(parents=True, exist_ok=True)
    for name in ("runs", "connections", "links", "transfers", "objects", "pages", "udp"):
        if name in ("objects", "pages", "udp") and getattr(res, name).empty:
            continue  # (written only for sweeps of applications and UDP sources)
        df = _exportable(getattr(res, name))
        p = outdir / f"{name}.{fmt}"
        if fmt == "parquet":
            df.to_parquet(p, index=False)
        else:
            df.to_csv(p, index=False)
        click.echo(f"{p}: {len(df)} rows")


def _summary_table(summ, axes: list, cols: list, table: str) -> str:
    """Per grid point: the axis values, then each column as `mean ± std [min, max]`, then n.
    When every point ran more than one seed and each gave the same values (a scenario with nothing
    random: no loss, random sizes or times), the values alone, and a title that says so."""
    stats = {f"{c}_{s}" for c in cols for s in ("mean", "std", "min", "max")}
    keys = [k for k in summ.columns if k not in stats and k != "n"]
    records = summ.to_dict("records")
    same = bool(records) and all(r["n"] > 1 for r in records) and all(
        r[f"{c}_min"] == r[f"{c}_max"] or (r[f"{c}_min"] != r[f"{c}_min"] and r[f"{c}_max"] != r[f"{c}_max"]) for r in records for c in cols)
    if same:
        rows = [{**{k: r[k] for k in keys}, **{c: _fmt(r[f"{c}_mean"]) for c in cols}, "n": r["n"]} for r in records]
        spec = [(k, k, 1) for k in keys] + [(c, c, 1) for c in cols] + [("n", "n", 1)]
        return _table(f"per point ({table}): every seed gave the same values (nothing in the scenario is random: "
                      "no loss rate, random sizes or start times), so the replicates add nothing", rows, spec)
    rows = []
    for r in summ.to_dict("records"):
        row = {k: r[k] for k in summ.columns if not any(k == f"{c}_{s}" for c in cols for s in ("mean", "std", "min", "max"))}
        for c in cols:
            mean, std, lo, hi = (r[f"{c}_{s}"] for s in ("mean", "std", "min", "max"))
            row[c] = f"{_fmt(mean)} ± {_fmt(std if std == std else 0.0)} [{_fmt(lo)}, {_fmt(hi)}]"
        rows.append(row)
    keys = [k for k in summ.columns if k not in {f"{c}_{s}" for c in cols for s in ("mean", "std", "min", "max")} and k != "n"]
    spec = [(k, k, 1) for k in keys] + [(c, c, 1) for c in cols] + [("n", "n", 1)]
    return _table(f"per point ({table}): mean ± standard deviation [min, max] over the seeds", rows, spec)
