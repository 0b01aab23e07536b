"""Run scenarios from Python: `tcplab.run(scenario, seed=...)`.

A scenario is a path to a TOML (or JSON) file, a TOML string, or a dict of the same structure.
Validation happens once, in the Rust core, which names the key path of anything wrong; a
`ScenarioError` carries it as `.path`.
"""

from __future__ import annotations

import json
import operator
import os
import time
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence, Union

from . import _core
from . import limits as _limits

ScenarioLike = Union[str, os.PathLike, Mapping[str, Any]]


def _json_default(o: Any) -> Any:
    """Let dicts built in sweeps carry numpy scalars and paths."""
    if hasattr(o, "item") and callable(o.item):
        return o.item()
    if isinstance(o, os.PathLike):
        return os.fspath(o)
    raise TypeError(f"a scenario value must be JSON-like, not {type(o).__name__}")


def _scenario_error(path: str, reason: str) -> Exception:
    """A ScenarioError found on the Python side of the boundary (text the core cannot be given),
    shaped as the core's: `.path` and `.reason`."""
    e = _core.ScenarioError(f"{path}: {reason}" if path else reason)
    e.path, e.reason = path, reason
    return e


def _key_path(key: str) -> str:
    """An override's key as the core writes paths: `flows.0.name` -> `flows[0].name`."""
    out = ""
    for part in key.strip().split("."):
        out += f"[{part}]" if part.isdigit() and out else ("." if out else "") + part
    return out.encode("utf-8", "backslashreplace").decode()


def _lone_surrogate(s: str) -> Optional[tuple[int, str]]:
    """Where a string holds a lone surrogate (which is not text and cannot reach the core), and
    the refusal's words; None for proper text."""
    try:
        s.encode("utf-8")
        return None
    except UnicodeEncodeError as e:
        return e.start, f"expected text, got a lone surrogate \\u{ord(s[e.start]):04x} (not a Unicode character)"


def _read_file(p: Path) -> tuple[str, str]:
    if p.is_dir():
        raise IsADirectoryError(f"scenario path is a directory, not a file: {p}")
    if not p.is_file():
        raise FileNotFoundError(f"scenario file not found: {p}")
    fmt = "json" if p.suffix.lower() == ".json" else "toml"
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise _scenario_error("", f"invalid {fmt.upper()}: {p} is not UTF-8 text (byte {e.start})") from None
    return text, fmt


def _find_unjsonable(o: Any, path: str = "", seen: Optional[set] = None) -> Optional[tuple[str, str]]:
    """The key path and type name of the first value of a dict scenario that is not JSON-like."""
    seen = set() if seen is None else seen
    if isinstance(o, (Mapping, list, tuple)):
        if id(o) in seen:
            return path, "a reference to a table that contains it"
        seen.add(id(o))
        items = o.items() if isinstance(o, Mapping) else enumerate(o)
        for k, v in items:
            if isinstance(o, Mapping) and not isinstance(k, str):
                return f"{path}.{k!r}".lstrip("."), f"a key of type {type(k).__name__} (keys are strings)"
            sub = f"{path}[{k}]" if not isinstance(o, Mapping) else f"{path}.{k}".lstrip(".")
            found = _find_unjsonable(v, sub, seen)
            if found:
                return found
        seen.discard(id(o))
        return None
    if o is None or isinstance(o, (str, int, float, bool)):
        return None
    try:
        _json_default(o)
        return None
    except TypeError:
        return path, type(o).__name__


def _dict_json(scenario: Mapping) -> str:
    """A dict scenario as JSON text for the core. Non-finite floats go as `NaN` / `Infinity`,
    which the core reads and refuses by key; a lone surrogate goes as its `\\ud800` escape, which
    the core refuses by key; a value JSON cannot hold is refused here by key."""
    try:
        return json.dumps(scenario, default=_json_default)
    except (TypeError, ValueError):
        found = _find_unjsonable(scenario)
        if found is None:
            raise
        path, what = found
        raise _scenario_error(path, f"expected a string, a number, a boolean, a table or an array, got {what}") from None


def _is_file(s: str) -> bool:
    try:
        return Path(s).is_file()
    except (OSError, ValueError):  # a name too long for a path, an embedded NUL, ...
        return False


def load_scenario(scenario: ScenarioLike) -> tuple[str, str]:
    """Return (text, format) for a path, a TOML string or a dict.

    A `pathlib.Path` (any `os.PathLike`) is always a file. A `str` is a file if it is one line
    naming an existing file; otherwise it is TOML if it is blank or contains a newline or `=`, and
    a missing file if not.
    """
    if isinstance(scenario, Mapping):
        return _dict_json(scenario), "json"
    if isinstance(scenario, os.PathLike):
        return _read_file(Path(os.fspath(scenario)))
    if not isinstance(scenario, str):
        raise TypeError(f"a scenario is a path, a TOML string or a dict, not {type(scenario).__name__}")
    if "\n" not in scenario and scenario.strip():
        if _is_file(scenario):
            return _read_file(Path(scenario))
        if "=" not in scenario:
            return _read_file(Path(scenario))  # raises: missing file or a directory
    bad = _lone_surrogate(scenario)
    if bad:
        line = scenario.count("\n", 0, bad[0]) + 1
        column = bad[0] - (scenario.rfind("\n", 0, bad[0]) + 1) + 1
        raise _scenario_error("", f"invalid TOML (line {line}, column {column}): {bad[1]}")
    return scenario, "toml"


def _sets(sets: Union[str, Sequence[str]]) -> list:
    """One override may be given as a plain string. An override holding a lone surrogate (not
    text: it cannot reach the core) is refused with its key path."""
    out = [sets] if isinstance(sets, str) else [str(s) for s in sets]
    for s in out:
        bad = _lone_surrogate(s)
        if bad:
            key, sep, _ = s.partition("=")
            raise _scenario_error(_key_path(key) if sep else _key_path(s), bad[1])
    return out


# The integer rules of a seed live with the other value rules (limits is below api).
_seed = _limits.seed


_TABLES = ("connections", "links", "transfers", "objects", "pages", "udp")


def _links_frame(df):
    """The link rows with their TCP and UDP shares: the core writes `udp_pkts` and `udp_bytes`
    only where UDP crossed (`delayed_filter` only where a delay held packets, `ce_marks` only
    where a queue marked CE), so the columns
    are completed here (0 elsewhere) and `tcp_bytes` and
    `udp_share` (of the bytes sent; None on an idle link) are added."""
    if df.empty:
        return df
    for col in ("udp_pkts", "udp_bytes", "delayed_filter", "ce_marks"):
        df[col] = df[col].fillna(0).astype("int64") if col in df else 0
    df["tcp_bytes"] = df["sent_bytes"] - df["udp_bytes"]
    sent = df["sent_bytes"].where(df["sent_bytes"] > 0)
    df["udp_share"] = (df["udp_bytes"] / sent).astype("float64")
    return df


def _connections_frame(df):
    """The connection rows with the ECN counters completed: the core writes `ecn_reductions` and
    `ce_received` only where ECN acted (RFC 3168), so they are 0 elsewhere."""
    if df.empty:
        return df
    for col in ("ecn_reductions", "ce_received"):
        df[col] = df[col].fillna(0).astype("int64") if col in df else 0
    return df


def _every_knob(tcp: dict) -> dict:
    """A flow's resolved TCP configuration with every knob: the run's JSON leaves out the knobs
    added for the `ns2` profile while they hold their RFC default (so that results recorded before
    them stay byte-identical); those defaults are the `rfc` profile's values."""
    rfc = _rfc_knobs()
    return {**rfc, **tcp} if set(rfc) - set(tcp) else tcp


_RFC_KNOBS: dict = {}


def _rfc_knobs() -> dict:
    if not _RFC_KNOBS:
        _RFC_KNOBS.update(json.loads(_core.profiles())["rfc"])
    return _RFC_KNOBS


from .rows import Table as _Table  # noqa: E402  (the core's column form; also the store's)


def _median(values: list) -> Optional[float]:
    v = sorted(x for x in values if x is not None and x == x)
    if not v:
        return None
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def app_summary(objects: list, pages: list) -> list:
    """Per application (records of `objects` and `pages`, in order of `app`): its name, client
    node, objects fetched and completed, the median transfer time (`acked_s - request_s`) and
    time to the last byte (`delivered_s - start_s`), the response bytes delivered, retransmissions
    and timeouts; for a web client its pages, completed pages and the median page delay. Plain
    records (no pandas), for `tcplab run` and the notebook summary."""
    out: dict = {}
    for o in objects:
        a = out.setdefault(o["app"], {"app": o["app"], "app_name": o.get("app_name") or o.get("client"),
                                      "client_node": o.get("client_node"), "objects": 0, "complete": 0,
                                      "_tt": [], "_dl": [], "bytes_delivered": 0, "retransmits": 0, "timeouts": 0,
                                      "pages": None, "pages_complete": None, "median_page_delay_s": None})
        a["objects"] += 1
        a["complete"] += o.get("delivered_s") is not None
        a["_tt"].append(o.get("transfer_time_s"))
        if o.get("delivered_s") is not None:
            a["_dl"].append(o["delivered_s"] - o["start_s"])
        a["bytes_delivered"] += o.get("bytes_delivered") or 0
        a["retransmits"] += o.get("retransmits") or 0
        a["timeouts"] += o.get("timeouts") or 0
    delays: dict = {}
    for p in pages:
        a = out.get(p["app"])
        if a is None:
            continue
        a["pages"] = (a["pages"] or 0) + 1
        a["pages_complete"] = (a["pages_complete"] or 0) + (p.get("delay_s") is not None)
        delays.setdefault(p["app"], []).append(p.get("delay_s"))
    rows = []
    for k in sorted(out):
        a = out[k]
        a["median_transfer_s"] = _median(a.pop("_tt"))
        a["median_last_byte_s"] = _median(a.pop("_dl"))
        if k in delays:
            a["median_page_delay_s"] = _median(delays[k])
        rows.append(a)
    return rows


class Result:
    """The result of one run: DataFrames of connections, link directions and transfers, the
    objects fetched by applications (``[[apps]]``), the pages of web clients and the UDP sources
    (each empty without them), the scenario as run (every default written out), the TCP settings each flow
    ran with (`tcp`, one dict per flow), and run metadata.

    The core hands the tables over as columns; the DataFrames are built on first use (pandas is
    imported then), so that a command line run that only prints does not pay for pandas. In a
    notebook a result shows a short summary."""

    def __init__(self, data: dict, wall_time_s: float = 0.0, series: Optional[dict] = None):
        """`data`: the run's JSON as a dict (tables as lists of records), or with tables as
        `_Table`s and `flows_tcp` left out for `_tcp` (distinct configurations, index per flow)."""
        self._tables: dict = {k: data[k] for k in _TABLES if k in data}
        self._series_raw = series
        self._series = None
        self._frames: dict = {}
        self.scenario: dict = data["scenario"]
        self._tcp_lazy = data.get("_tcp")
        self._tcp = None if self._tcp_lazy else [_every_knob(t) for t in data["flows_tcp"]]
        self.meta: dict = data["meta"]
        self.wall_time_s = wall_time_s
        # Knobs written over a profile or preset asked for in the same run (`Scenario::tcp_notes`):
        # legal, but shown wherever the run is, so an override never passes unseen.
        self._notes: list = list(data.get("notes", []))
        # (text, fmt, sets) of a run whose notes are read from its scenario on first use.
        self._notes_of: Optional[tuple] = None

    @property
    def notes(self) -> list:
        """Lines naming each TCP knob written over a profile or preset asked for in the same run
        (`notes()`), read from the scenario when first asked for (a second parse of it)."""
        if self._notes_of is not None:
            text, fmt, sets = self._notes_of
            self._notes, self._notes_of = notes(text, fmt, sets), None
        return self._notes

    @notes.setter
    def notes(self, value) -> None:
        self._notes, self._notes_of = list(value), None

    @classmethod
    def from_json(cls, text: str, wall_time_s: float = 0.0, series: Optional[dict] = None) -> "Result":
        return cls(json.loads(text), wall_time_s=wall_time_s, series=series)

    @classmethod
    def from_columns(cls, out: dict, wall_time_s: float = 0.0, series: Optional[dict] = None) -> "Result":
        """From `_core.run_scenario(..., columns=True)`."""
        data = json.loads(out["json"])
        data.pop("flows_tcp", None)
        for name, (columns, absent, n) in out["tables"].items():
            data[name] = _Table(columns, absent, n)
        data["_tcp"] = (out["tcp"], out["tcp_index"])
        return cls(data, wall_time_s=wall_time_s, series=series)

    @property
    def tcp(self) -> list:
        """The TCP settings each flow ran with, every knob (one dict per flow)."""
        if self._tcp is None:
            text, index = self._tcp_lazy
            distinct = [_every_knob(t) for t in json.loads(text)]
            self._tcp = [dict(distinct[i]) for i in index]
            self._tcp_lazy = None
        return self._tcp

    @tcp.setter
    def tcp(self, value: list) -> None:
        self._tcp, self._tcp_lazy = value, None

    def _rows(self, name: str) -> list:
        t = self._tables.get(name, [])
        return t.rows() if isinstance(t, _Table) else t

    @property
    def series(self):
        """The time series of the run (`[[series]]` or `run(series=...)`): a `tcplab.series.Series`,
        a mapping of table name (`tcp`, `segments`, `queue`, `drops`) to DataFrame, empty (and
        false) when nothing was recorded. See docs/series.md."""
        if self._series is None:
            from .series import Series

            self._series = Series(self._series_raw)
            self._series_raw = None
        return self._series

    def _frame(self, name: str):
        if name not in self._frames:
            import pandas as pd

            t = self._tables.get(name, [])
            df = t.frame() if isinstance(t, _Table) else pd.DataFrame(t)
            self._frames[name] = _links_frame(df) if name == "links" else _connections_frame(df) if name == "connections" else df
        return self._frames[name]

    connections = property(lambda self: self._frame("connections"), doc="One row per flow.")
    links = property(lambda self: self._frame("links"), doc="One row per link direction.")
    transfers = property(lambda self: self._frame("transfers"), doc="One row per transfer.")
    objects = property(lambda self: self._frame("objects"), doc="Objects fetched by applications.")
    pages = property(lambda self: self._frame("pages"), doc="Pages of web clients.")
    udp = property(lambda self: self._frame("udp"), doc="UDP sources and their sinks.")

    def to_dict(self) -> dict:
        """Plain JSON-ready form: the scenario as run, the resolved TCP settings of each flow
        (`tcp`), metadata, and the tables as lists of records (NaN as None)."""
        d = {"scenario": self.scenario, "tcp": self.tcp, "meta": self.meta}
        if self.notes:
            d["notes"] = list(self.notes)
        for key in _TABLES:
            rows = self._rows(key)
            if rows or key in ("connections", "links", "transfers"):
                d[key] = rows
        return d

    def __repr__(self) -> str:
        m, s = self.meta, self.scenario
        extra = "".join(f", {len(self._tables[k])} {k if k != 'udp' else 'UDP sources'}" for k in ("objects", "pages", "udp")
                        if len(self._tables.get(k, [])))
        return (f"<tcplab.Result {s.get('name') or '(unnamed)'} seed {m.get('seed')}: "
                f"{len(self._tables.get('connections', []))} connections{extra}, simulated {m.get('sim_time_s', 0):.3f} s>")

    def _repr_html_(self) -> str:
        """A short summary for notebooks: the run, then per flow its variant, goodput,
        retransmissions, timeouts and RTT, and per link direction its drops and utilisation."""
        import html as _html

        m, s = self.meta, self.scenario
        esc = lambda v: _html.escape(str(v))  # noqa: E731

        def num(v, scale=1.0, fmt="{:.4g}"):
            if v is None or (isinstance(v, float) and v != v):
                return "–"
            return fmt.format(v * scale) if isinstance(v, (int, float)) and not isinstance(v, bool) else esc(v)

        def table(rows, cols):
            head = "".join(f"<th>{esc(h)}</th>" for _, h, _ in cols)
            body = "".join(
                "<tr>" + "".join(f"<td>{num(r.get(k), sc) if sc else esc(r.get(k))}</td>" for k, _, sc in cols) + "</tr>"
                for r in rows[:20]
            )
            more = f"<p>… and {len(rows) - 20} more</p>" if len(rows) > 20 else ""
            return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{more}"

        conns = self._rows("connections")
        links = self._rows("links")
        objects, pages, udp = self._rows("objects"), self._rows("pages"), self._rows("udp")
        stop = ""
        if not m.get("completed", True):
            stop = (f" · <b>duration {esc(s['duration'])} reached</b> (unfinished transfers stopped there)" if s.get("duration")
                    else " · <b>stopped before every transfer finished</b>")
        title = (f"<b>tcplab run</b> {esc(s.get('name') or '(unnamed)')} · seed {esc(m.get('seed'))} · "
                 f"simulated {num(m.get('sim_time_s'))} s · {esc(m.get('events'))} events · "
                 f"wall {num(self.wall_time_s * 1e3, fmt='{:.1f}')} ms" + stop)
        parts = [f"<div>{title}"]
        if conns or not (objects or udp):
            parts.append(table(conns, [("name", "flow", None), ("variant", "variant", None), ("bytes_delivered", "delivered B", 1),
                                       ("goodput_bps", "goodput Mb/s", 1e-6), ("retransmits", "retransmits", 1),
                                       ("timeouts", "timeouts", 1), ("rtt_avg_s", "RTT ms", 1e3)]))
        if objects:
            parts.append(f"<p>Applications: {len(objects)} objects" + (f", {len(pages)} pages" if pages else "") + "</p>")
            parts.append(table(app_summary(objects, pages), [
                ("app_name", "application", None), ("client_node", "client", None), ("objects", "objects", 1),
                ("complete", "complete", 1), ("bytes_delivered", "delivered B", 1), ("median_transfer_s", "median transfer s", 1),
                ("retransmits", "retransmits", 1), ("timeouts", "timeouts", 1), ("pages", "pages", 1),
                ("median_page_delay_s", "median page delay s", 1)]))
        if udp:
            parts.append(table(udp, [("name", "UDP source", None), ("kind", "kind", None), ("mean_bps", "mean kb/s", 1e-3),
                                     ("sent_pkts", "sent", 1), ("delivered_pkts", "delivered", 1), ("dropped_pkts", "dropped", 1)]))
        parts.append(table(links, [("link", "link direction", None), ("sent_pkts", "sent", 1), ("dropped_pkts", "dropped", 1),
                                   ("utilization", "utilisation %", 100)]))
        shown = [n for n in _TABLES if n in ("connections", "links", "transfers") or self._rows(n)]
        parts.append("<p>" + ", ".join(f"<code>.{n}</code>" for n in shown) + ": the full DataFrames; "
                     "<code>.tcp</code>: the TCP settings each flow ran with."
                     + (f" <code>.series</code>: {esc(', '.join(self.series))} over time." if self.series else "")
                     + "</p></div>")
        return "".join(parts)


def run(
    scenario: ScenarioLike,
    seed: Optional[int] = None,
    sets: Union[str, Sequence[str]] = (),
    pcap: Optional[Union[str, os.PathLike]] = None,
    max_wall: Union[float, str, None] = None,
    max_events: Optional[int] = None,
    series: Any = None,
) -> Result:
    """Run `scenario` once with `seed` (default: the scenario's own, else 1).

    `sets` are overrides written `key.path=value` (`"tcp.variant=reno"`, `"flows.0.bytes=\\"16KB\\""`).
    `pcap` adds a capture at the first flow's sending node (docs/traces.md) to those of the scenario;
    unlike the scenario's own `[[capture]]` paths (relative, inside the current directory), it may
    name any place.
    `max_wall` (seconds, or `"10s"`, `"2min"`) and `max_events` bound the run: a run still going
    when it reaches either stops and raises `RunLimitError` (`.limit`, `.events`, `.sim_time_s`).
    `series` records time series (`Result.series`, docs/series.md): None records the scenario's
    `[[series]]`, True every kind, a kind (`"tcp"`, `"segments"`, `"queue"`, `"drops"`) or a list
    of kinds those, a dict (or a list of dicts) entries as in `[[series]]`; False none.
    Raises `ScenarioError` for invalid input and `CoreError` if the simulator fails internally.
    """
    text, fmt = load_scenario(scenario)
    seed = _seed(seed)
    limits = {"max_wall_s": _limits.seconds(max_wall, "max_wall"), "max_events": _limits.events(max_events)}
    from . import series as _series

    extra = _series.entries(series)
    if extra:
        d = json.loads(_core.validate(text, fmt, _sets(sets)))
        d["series"] = _series.merge(d.get("series", []), extra)
        text, fmt, sets = json.dumps(d), "json", ()
    # `pcap` is the caller's path, not the scenario's: the core writes it wherever it names (a
    # scenario's own `[[capture]]` paths stay inside the current directory, docs/traces.md).
    limits["pcap"] = None if pcap is None else os.fspath(pcap)
    t0 = time.perf_counter()
    if series is False:
        out, recorded = _core.run_scenario(text, fmt, seed, _sets(sets), columns=True, **limits), None
    else:
        out, recorded = _core.run_scenario(text, fmt, seed, _sets(sets), series=True, columns=True, **limits)
    res = Result.from_columns(out, wall_time_s=time.perf_counter() - t0, series=recorded)
    res._notes_of = (text, fmt, tuple(_sets(sets)))
    return res


def notes(scenario: ScenarioLike, fmt: Optional[str] = None, sets: Union[str, Sequence[str]] = ()) -> list:
    """Lines naming each TCP knob written beside a profile or preset asked for in the same
    scenario (or by `sets`) that overrides a value the profile or preset sets: `preset = "sack"`
    over a file that writes `variant = "newreno"` runs NewReno with SACK only negotiated. Empty
    when nothing asked for is overridden."""
    if fmt is None:
        scenario, fmt = load_scenario(scenario)
    return json.loads(_core.tcp_notes(scenario, fmt, _sets(sets)))


def validate(scenario: ScenarioLike, sets: Union[str, Sequence[str]] = (), tcp: bool = False) -> dict:
    """Validate a scenario without running it; returns it with every default written out.

    With `tcp`, each flow's `tcp` table holds every TCP knob as the flow will run with it (the
    profile, the preset, `[tcp]` and the flow's own knobs resolved; what `tcplab validate`
    prints): the result runs the same and shows what would otherwise be the profile's silent
    defaults."""
    text, fmt = load_scenario(scenario)
    d = json.loads(_core.validate(text, fmt, _sets(sets)))
    if tcp:
        resolved = json.loads(_core.resolve_tcp(text, fmt, _sets(sets)))
        i = 0
        for f in d.get("flows", []):
            # An entry with `count = n` is n flows of one configuration.
            if i < len(resolved):
                f["tcp"] = _every_knob(resolved[i])
            i += int(f.get("count", 1))
    return d


def resolve(scenario: ScenarioLike, sets: Union[str, Sequence[str]] = (), seed: Optional[int] = None) -> dict:
    """The resolved plan of a scenario for a run with `seed` (default: the scenario's own), as the
    core builds it: `nodes`; `links` (`rate_bps`, `delay_ns`, each direction's queue, loss);
    `flows` and `apps` with their nodes, start times in ns and each end's TCP configuration with
    every knob written out (`tcp.sender`/`tcp.receiver` of a flow, `tcp.client`/`tcp.server` of
    an application), their drop and delay rules; `captures` and `series`. Units, templates,
    counts, host groups, profiles and presets are resolved once, in the core: a front end
    translates this plan, never the raw scenario."""
    text, fmt = load_scenario(scenario)
    return json.loads(_core.resolve(text, fmt, _sets(sets), seed))


def profiles() -> dict:
    """The named TCP profiles (`rfc`, `ns2`, `bsd`, ...) and every knob they set."""
    return json.loads(_core.profiles())


def variants(profile: str = "rfc") -> dict:
    """The named stacks (`preset = "..."` in a scenario): the variants of the Mathis and Ladha
    studies. For each: `study`, `summary`, `settings` (the mechanism knobs the preset sets) and
    `config` (the whole TCP configuration it gives over `profile`)."""
    return json.loads(_core.presets(profile))
