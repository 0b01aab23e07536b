"""The tidy tables of a sweep's runs (`SweepResult`), apart from the sweep machinery so that the
store, which reads them back, does not import the sweep that writes them."""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Optional, Sequence, Union

if TYPE_CHECKING:
    import pandas as pd


def _empty_frame():
    import pandas as pd

    return pd.DataFrame()


@dataclass(repr=False)
class SweepResult:
    """The runs of a sweep as tidy tables. `connections` has one row per run and flow, `links` one
    per run and link direction, `transfers` one per run and transfer, `objects`, `pages` and
    `udp` one per run and application object, web page and UDP source (empty without them); each
    starts with the axis values, `replicate`, `seed` and the run `key`. `runs` has one row per
    run, failed ones included, with `status` (`ok`, `failed`, `timeout`, `memory`) and `error`."""

    runs: pd.DataFrame
    connections: pd.DataFrame
    links: pd.DataFrame
    transfers: pd.DataFrame
    store: Optional[str] = None
    objects: pd.DataFrame = field(default_factory=lambda: _empty_frame())
    pages: pd.DataFrame = field(default_factory=lambda: _empty_frame())
    udp: pd.DataFrame = field(default_factory=lambda: _empty_frame())
    stats: dict = field(default_factory=dict)
    series_dir: Optional[str] = None

    _TABLES = ("connections", "links", "transfers", "objects", "pages", "udp")

    def _counts(self) -> tuple:
        runs = self.runs if self.runs is not None else _empty_frame()
        status = runs["status"].value_counts().to_dict() if "status" in runs else {}
        tables = {t: len(getattr(self, t)) for t in self._TABLES if getattr(self, t) is not None and len(getattr(self, t))}
        return len(runs), status, tables

    def __repr__(self) -> str:
        n, status, tables = self._counts()
        st = ", ".join(f"{v} {k}" for k, v in sorted(status.items())) or "none"
        axes = ", ".join(self.axes) or "no axes"
        rows = ", ".join(f"{t} {v}" for t, v in tables.items()) or "no rows"
        where = f", store {self.store}" if self.store else ""
        return f"<tcplab.SweepResult {n} runs ({st}); axes: {axes}; rows: {rows}{where}>"

    def _repr_html_(self) -> str:
        """A short summary for notebooks: the runs and their status, the axes and their values,
        the rows of each table, and the first failures."""
        import html as _html

        esc = lambda v: _html.escape(str(v))  # noqa: E731
        n, status, tables = self._counts()
        out = [f"<div><b>tcplab sweep</b> · {n} runs (" + esc(", ".join(f"{v} {k}" for k, v in sorted(status.items())) or "none") + ")"
               + (f" · store <code>{esc(self.store)}</code>" if self.store else "")]
        if self.axes:
            out.append("<table><thead><tr><th>axis</th><th>values</th></tr></thead><tbody>")
            for a in self.axes:
                vals = [json.dumps(v) if isinstance(v, (list, dict)) else str(v) for v in pd_unique(self.runs[a])]
                shown = ", ".join(vals[:6]) + (f", … ({len(vals)} values)" if len(vals) > 6 else "")
                out.append(f"<tr><td><code>{esc(a)}</code></td><td>{esc(shown)}</td></tr>")
            out.append("</tbody></table>")
        out.append("<p>" + (", ".join(f"<code>.{t}</code> {v} rows" for t, v in tables.items()) or "no result rows")
                   + "; <code>.summary(columns, table=...)</code>: mean, std, min and max over the seeds per grid point.</p>")
        failed = self.failed if self.runs is not None and "status" in self.runs else None
        if failed is not None and len(failed):
            first = failed.head(3)
            out.append("<p>failed runs (first " + str(len(first)) + f" of {len(failed)}):</p><ul>"
                       + "".join(f"<li><code>{esc(r.get('key'))}</code> {esc(r.get('status'))}: {esc(str(r.get('error'))[:200])}</li>"
                                 for r in first.to_dict("records")) + "</ul>")
        return "".join(out) + "</div>"

    def series(self, table: str = "tcp") -> "pd.DataFrame":
        """One time-series table (`tcp`, `segments`, `queue`, `drops`, or `connections`) of every
        run of the sweep that recorded it, read from its Parquet files, each row starting with
        its run's axis values, `replicate`, `seed` and `key` (docs/series.md)."""
        from . import series as _series

        d = self.series_dir
        if d is None and self.store:
            d = os.fspath(Path(self.store).with_suffix(".series"))
        if d is None or not (Path(d) / table).is_dir():
            raise KeyError(f"no {table!r} series were written for this sweep: record them with [[series]] or sweep(..., series=[{table!r}])")
        df = _series.read_runs(d, table, keys=self.runs["key"].tolist())
        front = [c for c in self.axes + ["replicate", "seed", "key"] if c in self.runs.columns]
        return self.runs[front].merge(df, on="key", how="inner")

    @property
    def failed(self) -> pd.DataFrame:
        return self.runs[self.runs["status"] != "ok"]

    @property
    def axes(self) -> list:
        """The axis columns, as they are named in every table: the scenario's key paths
        (`"topology.loss"`). They are not Python identifiers: write `df["topology.loss"]`, and in
        `df.query()` quote them with backticks (``df.query("`topology.loss` > 0.01")``), or take
        `identifiers()`."""
        cols = list(self.runs.columns)
        return cols[: cols.index("point")] if "point" in cols else []

    def identifiers(self, table: str = "connections") -> "pd.DataFrame":
        """`table` with its axis columns renamed to Python identifiers (`topology.loss` ->
        `topology_loss`, `flows.0.bytes` -> `flows_0_bytes`), for attribute access and `query()`."""
        df = getattr(self, table)
        return df.rename(columns={a: identifier(a) for a in self.axes if a in df.columns})

    def summary(self, columns: Union[str, Sequence[str]] = ("goodput_bps", "retransmits", "timeouts"),
                table: str = "connections") -> "pd.DataFrame":
        """Per grid point (and per flow, for `connections` and `transfers`), the mean, standard
        deviation, minimum and maximum over the replicate seeds of each of `columns`, and `n`, the
        runs behind them: what a figure with error bars plots."""
        return summarise(getattr(self, table), self.axes, columns, table)


def pd_unique(column) -> list:
    """The distinct values of a column in order of first appearance (lists and dicts by their text)."""
    seen, out = set(), []
    for v in column.tolist():
        k = json.dumps(v, sort_keys=True) if isinstance(v, (list, dict)) else v
        if k not in seen:
            seen.add(k)
            out.append(v)
    return out


def identifier(axis: str) -> str:
    """An axis key path as a Python identifier: every character that cannot be in one becomes `_`."""
    out = re.sub(r"\W", "_", axis)
    return f"_{out}" if out[:1].isdigit() else out


def summarise(df: "pd.DataFrame", axes: Sequence[str], columns: Union[str, Sequence[str]], table: str = "connections") -> "pd.DataFrame":
    """Mean, std, min, max and n of `columns` of `df` per value of `axes` (and per flow or link)."""
    import pandas as pd

    cols = [columns] if isinstance(columns, str) else list(columns)
    if df.empty and not len(df.columns):
        raise ValueError(f"{table} has no rows (the runs have none)")
    missing = [c for c in cols if c not in df.columns]
    if missing:
        numeric = [c for c in df.columns if c not in axes and pd.api.types.is_numeric_dtype(df[c]) and c not in ("replicate", "seed")]
        raise ValueError(f"{table} has no column {', '.join(map(repr, missing))}; its numeric columns: {', '.join(numeric)}")
    by = [a for a in axes if a in df.columns]
    # Per flow, link direction or application (`client` holds an application's name in stores
    # written before `app_name`).
    for extra in ("name", "link", "app_name" if "app_name" in df.columns else "client"):
        if extra in df.columns and df[extra].nunique() > 1:
            by.append(extra)
    if df.empty:
        return pd.DataFrame(columns=by + [f"{c}_{s}" for c in cols for s in ("mean", "std", "min", "max")] + ["n"])
    # Axis values may be lists (a zipped or list-valued axis): group on their text.
    keyed = df.assign(**{a: df[a].map(lambda v: json.dumps(v) if isinstance(v, (list, dict)) else v) for a in by})
    g = keyed.groupby(by, sort=False, dropna=False) if by else keyed.groupby(lambda _: 0)
    out = g[cols].agg(["mean", "std", "min", "max"])
    out.columns = [f"{c}_{s}" for c, s in out.columns]
    out["n"] = g.size()
    return out.reset_index() if by else out.reset_index(drop=True)
