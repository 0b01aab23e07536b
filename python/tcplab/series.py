"""Time series of a simulation (docs/series.md): what TCP and the queues did over time.

    >>> r = tcplab.run("scenario.toml", series=True)        # or [[series]] in the scenario
    >>> r.series.tcp            # per connection endpoint: cwnd, ssthresh, flight, srtt, rto, state
    >>> r.series.segments       # per TCP segment: sent (tx) and delivered (rx), seq, ack, SACK
    >>> r.series.queue          # per link direction: waiting packets and bytes
    >>> r.series.drops          # per dropped packet: where, why, what
    >>> tcplab.plot.tsg(r.series.segments)                 # the time-sequence graph

Each table is a pandas DataFrame built on first use from the simulator's columns. `segments` has
the columns of `tcplab.trace.packets()` (and `event`, `tx`, `flow`), so the plots that draw a
capture draw a simulation the same way.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Optional, Union

#: The kinds a `[[series]]` entry records.
KINDS = ("tcp", "segments", "queue", "drops")
#: The `bbr_mode` column's categories (tcplab_core::series::BBR_MODES; code 0: not BBR).
BBR_MODES = ("startup", "drain", "probe_bw", "probe_rtt")

SeriesArg = Union[None, bool, str, Mapping, list, tuple]


def entries(series: SeriesArg) -> Optional[list]:
    """`run(series=...)` as `[[series]]` entries: None keeps the scenario's own, False records
    nothing, True every kind, a kind or a list of kinds those (with defaults), a dict or a list of
    dicts those entries."""
    if series is None or series is False:
        return None
    if series is True:
        return [{"kind": k} for k in KINDS]
    items = [series] if isinstance(series, (str, Mapping)) else list(series) if isinstance(series, (list, tuple)) else None
    if items is None:
        raise TypeError(f"series must be True, a kind ({', '.join(KINDS)}), a dict or a list of them, not {type(series).__name__}")
    out = []
    for x in items:
        if isinstance(x, str):
            if x not in KINDS:
                raise ValueError(f"unknown series kind {x!r}; expected one of: {', '.join(KINDS)}")
            out.append({"kind": x})
        elif isinstance(x, Mapping):
            out.append(dict(x))
        else:
            raise TypeError(f"a series entry is a kind or a dict, not {type(x).__name__}")
    return out


def merge(scenario_entries: list, given: list) -> list:
    """The scenario's `[[series]]` with `given` ones added; a kind given replaces the scenario's."""
    kinds = {e.get("kind") for e in given}
    return [e for e in scenario_entries if e.get("kind") not in kinds] + given


class SeriesWarning(UserWarning):
    """A series table stopped at its `max_rows` before the run ended."""


class Series(Mapping):
    """The series of one run: a mapping of table name (`tcp`, `segments`, `queue`, `drops`; only
    those recorded) to DataFrame, also as attributes. `connections` (a DataFrame: `conn`, `flow`,
    `name`, `transfer`, `a`, `b`) says what each `conn` number is; `links` names the link
    directions; `truncated` says which tables stopped at their `max_rows`; `interval_s` is each
    table's sampling interval (None: every change)."""

    def __init__(self, raw: Optional[dict] = None):
        self._info: dict = json.loads(raw["info"]) if raw else {}
        self._tables: dict = raw["tables"] if raw else {}
        self._frames: dict = {}
        self.links: list = self._info.get("links", [])
        self.truncated: dict = self._info.get("truncated", {})
        self.interval_s: dict = self._info.get("interval_s", {})
        self.max_rows: dict = self._info.get("max_rows", {})
        #: When the run ended (the time integrals of the run's rows end there), s.
        self.end_s: float = self._info.get("end_s", 0.0)

    # Mapping interface: the recorded tables.
    def __getitem__(self, name: str):
        if name not in self._tables:
            if name in KINDS:
                raise KeyError(
                    f"no {name!r} series was recorded: add [[series]] kind = \"{name}\" to the scenario, "
                    f"or run it with series=True (or series=[{name!r}])"
                )
            raise KeyError(f"unknown series {name!r}; the kinds are: {', '.join(KINDS)}")
        if name not in self._frames:
            df = getattr(self, f"_build_{name}")(self._arrays(name))
            if self.interval_s.get(name) is not None:
                # Samples are written as each key's state changes: one timeline for all keys.
                df = df.sort_values("time_s", kind="stable", ignore_index=True)
            self._frames[name] = df
            if self.truncated.get(name):
                import warnings

                warnings.warn(
                    f"the {name} series stopped at its max_rows ({self.max_rows.get(name)} rows): what came later is not in it; "
                    f"raise [[series]] max_rows, sample with interval, or record a shorter run",
                    SeriesWarning,
                    stacklevel=3,
                )
            self._frames[name].attrs["truncated"] = bool(self.truncated.get(name))
        return self._frames[name]

    def __iter__(self):
        return iter([k for k in KINDS if k in self._tables])

    def __len__(self) -> int:
        return len(self._tables)

    def __repr__(self) -> str:
        if not self._tables:
            return "<tcplab.Series: nothing recorded>"
        parts = []
        for k in self:
            n = len(self._tables[k]["time_ns"][1]) // 8
            parts.append(f"{k} ({n} rows{', truncated' if self.truncated.get(k) else ''})")
        return "<tcplab.Series " + ", ".join(parts) + ">"

    tcp = property(lambda self: self["tcp"], doc="Per connection endpoint, its send half's state over time.")
    segments = property(lambda self: self["segments"], doc="Per TCP segment, when it was sent and delivered.")
    queue = property(lambda self: self["queue"], doc="Per link direction, its queue over time.")
    drops = property(lambda self: self["drops"], doc="Per dropped packet, where, why and what.")

    @property
    def connections(self):
        import pandas as pd

        cols = ["conn", "flow", "name", "transfer", "a", "b"]
        return pd.DataFrame(self._info.get("connections", []), columns=cols)

    def _frame_quiet(self, name: str):
        """A table without the truncation warning (for writers, which record it apart)."""
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SeriesWarning)
            return self[name]

    def _arrays(self, name: str) -> dict:
        import numpy as np

        return {k: np.frombuffer(b, dtype=dt) for k, (dt, b) in self._tables[name].items()}

    def _names(self, conn):
        import numpy as np

        names = np.array([c["name"] for c in self._info.get("connections", [])] or [""], dtype=object)
        return names[conn] if len(conn) else np.array([], dtype=object)

    @staticmethod
    def _dir(codes):
        import pandas as pd

        return pd.Categorical.from_codes(codes.astype("int8"), ["a2b", "b2a"])

    def _build_tcp(self, a: dict):
        import numpy as np
        import pandas as pd

        def ns(col):
            v = a[col].astype(float) / 1e9
            v[a[col] < 0] = np.nan
            return v

        def na_below_zero(col):
            v = pd.array(a[col].astype(np.int64), dtype="Int64")
            v[a[col] < 0] = pd.NA
            return v

        ssthresh = pd.array(a["ssthresh"].astype(np.int64), dtype="Int64")
        ssthresh[a["ssthresh"] >= 2**61] = pd.NA  # not yet set (the initial "infinite" value)
        conn = a["conn"].astype(np.int64)
        return pd.DataFrame({
            "time_s": a["time_ns"] / 1e9,
            "conn": conn,
            "flow": self._names(conn),
            "dir": self._dir(a["dir"]),
            "state": pd.Categorical.from_codes(a["state"].astype("int8"), self._info["states"]),
            "cwnd": a["cwnd"].astype(np.int64),
            "ssthresh": ssthresh,
            "flight": a["flight"].astype(np.int64),
            "sacked": a["sacked"].astype(np.int64),
            "snd_una": a["snd_una"].astype(np.int64),
            "snd_nxt": a["snd_nxt"].astype(np.int64),
            "snd_max": a["snd_max"].astype(np.int64),
            "srtt_s": ns("srtt_ns"),
            "rttvar_s": ns("rttvar_ns"),
            "rto_s": ns("rto_ns"),
            "dupacks": a["dupacks"].astype(np.int64),
            "pacing_rate": na_below_zero("pacing_rate"),
            "bbr_mode": pd.Categorical.from_codes(a["bbr_mode"].astype("int8") - 1, BBR_MODES),
            "bbr_bw": na_below_zero("bbr_bw"),
        })  # fmt: skip

    def _build_segments(self, a: dict):
        import numpy as np
        import pandas as pd

        from .trace import _FLAG_LETTERS

        n = len(a["time_ns"])
        flags = a["flags"]
        syn, fin = (flags & 0x02) != 0, (flags & 0x01) != 0
        seq = a["seq"].astype(np.int64)
        length = a["len"].astype(np.int64)
        ack = pd.array(a["ack"], dtype="Int64")
        ack[a["ack"] < 0] = pd.NA
        uniq, inv = np.unique(flags, return_inverse=True)
        letters = np.array(["".join(c for bit, c in _FLAG_LETTERS if f & bit) for f in uniq.tolist()], dtype=object)
        sack = np.empty(n, dtype=object)
        sack[:] = [()] * n
        ns = a["n_sack"].astype(np.int64)
        starts = np.concatenate([[0], np.cumsum(ns)])
        left, right = a["sack_left"].astype(np.int64), a["sack_right"].astype(np.int64)
        for i in np.flatnonzero(ns):
            s, e = starts[i], starts[i + 1]
            sack[i] = tuple(zip(left[s:e].tolist(), right[s:e].tolist()))
        conn = a["conn"].astype(np.int64)
        df = pd.DataFrame({
            "conn": conn,
            "dir": self._dir(a["dir"]),
            "time_s": a["time_ns"] / 1e9,
            "seq": seq,
            "len": length,
            "end": seq + length + syn + fin,
            "ack": ack,
            "tcp_flags": letters[inv.reshape(-1)] if n else np.array([], dtype=object),
            "syn": syn, "fin": fin, "rst": np.zeros(n, dtype=bool),
            "retx": a["tx"] > 1,
            "dup_ack": np.zeros(n, dtype=bool),
            "sack": sack,
            "event": pd.Categorical.from_codes(a["event"].astype("int8"), ["tx", "rx"]),
            "tx": a["tx"].astype(np.int64),
            "flow": self._names(conn),
        })  # fmt: skip
        # A duplicate ACK (RFC 5681 §2): no data, no SYN/FIN, the same ACK number as the previous
        # ACK of its connection and direction, seen at the same end.
        if n:
            pure = (length == 0) & ~syn & ~fin & (a["ack"] >= 0)
            prev = df.groupby(["conn", "dir", "event"], observed=True)["ack"].shift()
            df["dup_ack"] = (pure & (df["ack"] == prev).fillna(False).to_numpy(bool)).astype(bool)
        info = self._info.get("connections", [])
        data_dir = {}
        if n:
            by = df[df["event"] == "tx"].groupby(["conn", "dir"], observed=True)["len"].sum()
            for (c, d), v in by.items():
                if v > data_dir.get(c, ("a2b", -1))[1]:
                    data_dir[c] = (d, v)
        df.attrs["connections"] = [{"conn": c["conn"], "a": c["a"], "b": c["b"], "data_dir": data_dir.get(c["conn"], ("a2b", 0))[0]} for c in info]
        df.attrs["source"] = "simulation"
        return df

    def _build_queue(self, a: dict):
        import numpy as np
        import pandas as pd

        return pd.DataFrame({
            "time_s": a["time_ns"] / 1e9,
            "link": pd.Categorical.from_codes(a["link"].astype(np.int64), self.links) if self.links else a["link"],
            "pkts": a["pkts"].astype(np.int64),
            "bytes": a["bytes"].astype(np.int64),
        })  # fmt: skip

    def _build_drops(self, a: dict):
        import numpy as np
        import pandas as pd

        conn = pd.array(a["conn"], dtype="Int64")
        conn[a["conn"] < 0] = pd.NA
        return pd.DataFrame({
            "time_s": a["time_ns"] / 1e9,
            "link": pd.Categorical.from_codes(a["link"].astype(np.int64), self.links) if self.links else a["link"],
            "reason": pd.Categorical.from_codes(a["reason"].astype("int8"), self._info["drop_reasons"]),
            "conn": conn,
            "dir": self._dir(a["dir"]),
            "seq": a["seq"].astype(np.int64),
            "len": a["len"].astype(np.int64),
            "syn": (a["flags"] & 0x02) != 0,
            "fin": (a["flags"] & 0x01) != 0,
            "retx": a["tx"] > 1,
            "tx": a["tx"].astype(np.int64),
            "wire_bytes": a["wire_bytes"].astype(np.int64),
        })  # fmt: skip


def time_average(df, column: str, end_s: float, start_s: Optional[float] = None) -> float:
    """The time average of a step series `column` of `df` (rows at the times its value changed,
    sorted by `time_s`) from `start_s` (default: its first row) to `end_s`: what the run's own
    time-averaged instruments (`cwnd_avg_bytes`, `avg_queue_pkts`) compute."""
    import numpy as np

    t = df["time_s"].to_numpy(float)
    v = df[column].to_numpy(float)
    if not len(t):
        return float("nan")
    t0 = t[0] if start_s is None else start_s
    until = np.append(t[1:], end_s)
    dt = np.clip(until, t0, end_s) - np.clip(t, t0, end_s)
    span = end_s - t0
    return float((v * dt).sum() / span) if span > 0 else float("nan")


def write_run(raw: Optional[dict], directory, key: str) -> list:
    """Write one run's series (`_core.run_scenario(..., series=True)`'s second value) under
    `directory`: `<directory>/<table>/<key>.parquet`, each row carrying `key` (a sweep's run key).
    Each file is written under a temporary name and renamed, so that a run killed half-way leaves
    no partial file. Returns the paths written."""
    import os
    from pathlib import Path

    s = Series(raw)
    if not s:
        return []
    out = []
    frames = {k: s._frame_quiet(k) for k in s}
    frames["connections"] = s.connections
    for name, df in frames.items():
        d = Path(directory) / name
        d.mkdir(parents=True, exist_ok=True)
        df = _parquet_ready(df)
        df.insert(0, "key", key)
        p = d / f"{key}.parquet"
        tmp = d / f".{key}.{os.getpid()}.tmp"
        df.to_parquet(tmp, index=False)
        os.replace(tmp, p)
        out.append(p)
    if any(s.truncated.values()):
        # The runs whose tables stopped at their cap, so that a reader can tell.
        d = Path(directory) / "truncated"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"{key}.json").write_text(json.dumps({k: v for k, v in s.truncated.items() if v}))
    return out


def _parquet_ready(df):
    """SACK blocks (tuples of pairs) as lists of [left, right], which Parquet holds."""
    df = df.copy()
    if "sack" in df.columns:
        df["sack"] = [[list(b) for b in blocks] for blocks in df["sack"]]
    df.attrs = {}
    return df


def read_runs(directory, table: str, keys: Optional[list] = None):
    """The `table` files of `directory` (written by `write_run`) as one DataFrame, only the runs
    of `keys` if given. SACK blocks come back as tuples of pairs."""
    from pathlib import Path

    import pandas as pd

    d = Path(directory) / table
    files = sorted(d.glob("*.parquet"))
    if keys is not None:
        wanted = set(keys)
        files = [f for f in files if f.stem in wanted]
    if not files:
        return pd.DataFrame({"key": pd.Series([], dtype=object)})
    df = pd.concat([pd.read_parquet(f) for f in files], ignore_index=True)
    if "sack" in df.columns:
        df["sack"] = [tuple(tuple(int(x) for x in b) for b in blocks) for blocks in df["sack"]]
    return df
