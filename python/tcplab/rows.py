"""A run's result tables in the column form the core hands them over in (`_core.run_scenario(...,
columns=True)`): a numeric column as the bytes of a numpy array, any other as a list. `Table`
reads them back as the run's JSON records would hold them (no numpy); `RunRows` and `merge` carry
one run's rows from a sweep's worker to the store's coordinator in that compact form and join
the rows of many runs into columns of plain values there.
"""

from __future__ import annotations

import array
import sys
from typing import Any, Mapping, NamedTuple, Optional

PACKED = {"<i8": "q", "<f8": "d", "?": "?"}  # numpy dtype -> struct code of a packed column


def unpack(dtype: str, data: bytes) -> list:
    """A packed column's values as Python ints, floats or bools (no numpy)."""
    code = PACKED[dtype]
    if code == "?" or sys.byteorder == "little":
        return memoryview(data).cast(code).tolist()
    a = array.array(code)
    a.frombytes(data)
    a.byteswap()
    return a.tolist()


class Table:
    """A result table as the core hands it over, column by column (`columns`, in the order of the
    row's fields): None when no row has a value; a column of one numeric type as (numpy dtype,
    little-endian bytes) or, with missing values (None in the records), (dtype, bytes, their
    rows); any other as a list (None where JSON has null). `absent`: for a column some rows lack
    (the core leaves a link's UDP counters out where no UDP crossed), those rows, or True for
    all. Records and the DataFrame are built from it when first asked for."""

    __slots__ = ("columns", "absent", "_n", "_rows")

    def __init__(self, columns: dict, absent: dict, n: int):
        self.columns = columns
        self.absent = absent
        self._n = n
        self._rows: Optional[list] = None

    def __len__(self) -> int:
        return self._n

    def values(self, name: str) -> list:
        """A column as the records hold it: Python ints, floats, bools, strings, None."""
        v = self.columns[name]
        if v is None:
            return [None] * self._n
        if isinstance(v, list):
            return v
        out = unpack(v[0], v[1])
        for i in v[2] if len(v) > 2 else ():
            out[i] = None
        return out

    def _lacking(self, name: str):
        rows = self.absent.get(name, ())
        return range(self._n) if rows is True else rows

    def rows(self) -> list:
        """The table as the run's JSON records: a dict per row, without the keys a row lacks."""
        if self._rows is None:
            names = list(self.columns)
            rows = [dict(zip(names, values)) for values in zip(*(self.values(k) for k in names))] if names else []
            for col in self.absent:
                for i in self._lacking(col):
                    del rows[i][col]
            self._rows = rows
        return self._rows

    def frame(self):
        """The DataFrame pandas makes of the records: a column no row has is left out, a column
        of nothing but nulls holds None, and a numeric column with missing values is float64
        with NaN for them."""
        import numpy as np
        import pandas as pd

        n = self._n
        if n == 0:
            return pd.DataFrame([])
        cols = {}
        for k, v in self.columns.items():
            if self.absent.get(k) is True:
                continue
            if v is None:
                cols[k] = [None] * n
            elif isinstance(v, list):
                cols[k] = v
            else:
                a = np.frombuffer(v[1], dtype=np.dtype(v[0]))
                if len(v) > 2:
                    a = a.astype(np.float64)
                    a[v[2]] = np.nan
                else:
                    a = a.copy()
                cols[k] = a
        return pd.DataFrame(cols)


# Counters the core writes only where they counted something (a link's UDP and delay counters,
# a connection's ECN counters); a store's table has one set of columns for every run, so a row
# without one holds 0.
ZERO_WHERE_ABSENT = {
    "links": ("udp_pkts", "udp_bytes", "delayed_filter", "ce_marks"),
    "connections": ("ecn_reductions", "ce_received"),
}


class RunRows(NamedTuple):
    """One run's rows of one result table, as the core hands them over: its run key, the columns,
    the rows lacking a column (`Table`) and the number of rows."""

    key: str
    columns: dict
    absent: dict
    n: int


def merge(parts: list, zero: tuple = ()) -> Optional[dict]:
    """The rows of several runs (`RunRows`) as one table of plain columns: column name -> list of
    values, `key` first, then the columns in the order the core declares them (a column first
    seen in a later run after those before). A value a row lacks (a column absent from its run,
    or from its row) is None, or 0 for a column in `zero`; a column no row has is left out unless
    it is in `zero`. None for no rows."""
    parts = [p for p in parts if p.n]
    if not parts:
        return None
    names: dict = {}
    for p in parts:
        for c in p.columns:
            if c in zero or p.absent.get(c) is not True:
                names[c] = None
    for c in zero:
        names.setdefault(c, None)
    cols: dict = {"key": [p.key for p in parts for _ in range(p.n)]}
    for c in names:
        fill = 0 if c in zero else None
        values: list = []
        for p in parts:
            if c not in p.columns:
                values.extend([fill] * p.n)
                continue
            t = Table(p.columns, p.absent, p.n)
            v = list(t.values(c))
            for i in t._lacking(c):
                v[i] = fill
            values.extend(v)
        cols[c] = values
    return cols


def run_rows(parts: Any) -> Optional[list]:
    """`parts` as one flat list of `RunRows` if it is that form (a list of them, or a list of such
    lists, as a sweep's batches give them), else None."""
    if isinstance(parts, RunRows):
        return [parts]
    if not isinstance(parts, list) or not parts:
        return None
    flat: list = []
    for p in parts:
        if isinstance(p, RunRows):
            flat.append(p)
        elif isinstance(p, list) and all(isinstance(q, RunRows) for q in p):
            flat.extend(p)
        else:
            return None
    return flat
