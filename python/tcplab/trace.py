"""Packet traces: analyse any capture (pcap or pcapng; Ethernet, Linux cooked, raw IP; IPv4 and
IPv6) the way tcptrace does, one row per TCP connection, or one row per packet.

    >>> import tcplab
    >>> df = tcplab.trace.analyze("run.pcap")
    >>> df[["a", "b", "unique_bytes", "rexmt_segs", "loss_events", "iw_segs", "rtt_avg_s"]]
    >>> pk = tcplab.trace.packets("run.pcap")          # seq, ack, SACK blocks, retransmissions
    >>> tcplab.plot.tsg(pk)                            # tcptrace's time-sequence graph

Captures come from simulations (`[[capture]]` in a scenario, `tcplab run --pcap PATH`) or from
tcpdump. The columns are defined in docs/traces.md. A file whose header cannot be read raises
`tcplab.TraceError` (a `ValueError`) whose message and `.offset` give the byte offset; a capture
cut short (or corrupted) further on is analysed up to the cut, with a `TraceWarning` naming its
offset (`strict=True` raises instead).

pandas is imported only by the functions that return DataFrames, so that `tcplab trace` starts fast.
"""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Optional, Union

from . import _core

if TYPE_CHECKING:
    import pandas as pd

TraceError = _core.TraceError

PathLike = Union[str, os.PathLike]


class TraceWarning(UserWarning):
    """A capture was read only up to a byte offset (a record cut short or corrupted there)."""


def _path(path: PathLike) -> str:
    p = Path(os.fspath(path))
    if p.is_dir():
        raise IsADirectoryError(f"capture path is a directory, not a file: {p}")
    if not p.is_file():
        raise FileNotFoundError(f"capture file not found: {p}")
    return str(p)


def stopped_message(path: PathLike, rep: dict) -> Optional[str]:
    """One line on where reading stopped early (`reader.stopped`), or None if it read to the end."""
    st = rep["reader"].get("stopped")
    if not st:
        return None
    n = rep["reader"]["packets"]
    return (f"{os.fspath(path)}: byte {st['offset']}: {st['message']}; "
            f"analysed the {n} complete packet{'' if n == 1 else 's'} before it")


def _stopped(path: PathLike, rep: dict, strict: bool) -> None:
    msg = stopped_message(path, rep)
    if msg is None:
        return
    if strict:
        st = rep["reader"]["stopped"]
        e = TraceError(f"byte {st['offset']}: {st['message']}")
        e.offset, e.reason = st["offset"], st["message"]
        raise e
    warnings.warn(msg, TraceWarning, stacklevel=3)


def report(path: PathLike, strict: bool = False) -> dict:
    """The whole analysis as plain data: `{"reader": {...}, "columns": [...], "connections": [...]}`.

    `reader` counts the packets read and those skipped (not IP, not TCP, cut short by the snaplen,
    malformed, an unsupported link type) with the byte offset of the first of each kind. A capture
    that cannot be read to its end (a record cut short, as when tcpdump is killed, or corrupted)
    is analysed up to there: `reader["stopped"]` gives the offset and reason, and a `TraceWarning`
    says so; with `strict` it raises `TraceError` instead.
    """
    text, _ = _core.analyze_trace(_path(path))
    rep = json.loads(text)
    _stopped(path, rep, strict)
    return rep


def analyze(path: PathLike, strict: bool = False) -> "pd.DataFrame":
    """One row per TCP connection of the capture at `path`, in order of first appearance (the
    columns are there even for a capture without any connection).

    The reader's counters are in `df.attrs["reader"]`; `strict` as for `report()`.
    """
    import pandas as pd

    text, _ = _core.analyze_trace(_path(path))
    r = json.loads(text)
    _stopped(path, r, strict)
    df = pd.DataFrame(r["connections"], columns=r["columns"])
    df.attrs["reader"] = r["reader"]
    return df


#: The columns of `packets()`, in order, with their meaning (docs/traces.md, "Per packet").
PACKET_COLUMNS = {
    "conn": "connection, numbered as in analyze()",
    "dir": "'a2b' or 'b2a' (side a is normally the active opener)",
    "time_s": "seconds as in the capture (simulated captures: simulated time)",
    "seq": "relative sequence number of the segment's first byte (a SYN is 0, data starts at 1)",
    "len": "payload bytes",
    "end": "seq + len (+1 for a SYN or FIN): the next sequence number",
    "ack": "relative acknowledgement number (of the other direction's data); <NA> without ACK",
    "win": "window field as sent (unscaled)",
    "tcp_flags": "TCP flags as letters: S, F, R, P, A (e.g. 'SA', 'A', 'FA')",
    "syn": "SYN flag", "fin": "FIN flag", "rst": "RST flag",
    "retx": "the analyser counts this segment as a retransmission (docs/traces.md)",
    "dup_ack": "a duplicate ACK (RFC 5681 §2)",
    "sack": "SACK blocks as ((left, right), ...) relative to the other direction; () without",
    "tsval": "TSval of the timestamps option (RFC 7323); <NA> without the option",
    "tsecr": "TSecr of the timestamps option; <NA> without the option",
}

_FLAG_LETTERS = ((0x02, "S"), (0x01, "F"), (0x04, "R"), (0x08, "P"), (0x10, "A"))


def _optional(col) -> "pd.arrays.IntegerArray":
    """A column with -1 for "absent" as nullable integers."""
    import pandas as pd

    out = pd.array(col, dtype="Int64")
    out[col < 0] = pd.NA
    return out


def packets(path: PathLike, strict: bool = False) -> "pd.DataFrame":
    """One row per TCP packet of the capture at `path`, in file order, through the analyser:
    sequence and ACK numbers relative per direction, SACK blocks, and the analyser's own verdict
    of which segments are retransmissions. The columns are `PACKET_COLUMNS` (docs/traces.md).

    The same table drawn from a simulation will feed the same plots (`tcplab.plot.tsg`).
    `df.attrs` holds `reader` (as `analyze()`) and `connections` (a, b, data_dir per connection).
    """
    import numpy as np
    import pandas as pd

    text, cols = _core.analyze_trace(_path(path), packets=True)
    rep = json.loads(text)
    _stopped(path, rep, strict)
    a = {k: np.frombuffer(b, dtype=dt) for k, (dt, b) in cols.items()}
    flags = a["flags"]
    syn, fin, rst = (flags & 0x02) != 0, (flags & 0x01) != 0, (flags & 0x04) != 0
    # Flags as letters: few distinct values, so a lookup per distinct value.
    uniq, inv = np.unique(flags, return_inverse=True)
    letters = np.array(["".join(c for bit, c in _FLAG_LETTERS if f & bit) for f in uniq.tolist()], dtype=object)
    seq = a["seq"]
    ack = pd.array(a["ack"], dtype="Int64")
    ack[a["ack"] < 0] = pd.NA
    n_sack = sum((a[f"sack{k}_left"] >= 0).astype(np.int8) for k in range(1, 5))
    sack = np.empty(len(seq), dtype=object)
    sack[:] = [()] * len(seq)
    for i in np.flatnonzero(n_sack):
        sack[i] = tuple((int(a[f"sack{k}_left"][i]), int(a[f"sack{k}_right"][i])) for k in range(1, int(n_sack[i]) + 1))
    df = pd.DataFrame({
        "conn": a["conn"].astype(np.int64),
        "dir": pd.Categorical.from_codes(a["dir"].astype(np.int8), ["a2b", "b2a"]),
        "time_s": a["time_ns"] / 1e9,
        "seq": seq,
        "len": a["len"].astype(np.int64),
        "end": seq + a["len"] + syn + fin,
        "ack": ack,
        "win": a["win"].astype(np.int64),
        "tcp_flags": letters[inv.reshape(-1)] if len(flags) else np.array([], dtype=object),
        "syn": syn, "fin": fin, "rst": rst,
        "retx": a["retx"], "dup_ack": a["dup_ack"],
        "sack": sack,
        "tsval": _optional(a["tsval"]), "tsecr": _optional(a["tsecr"]),
    })  # fmt: skip
    df.attrs["reader"] = rep["reader"]
    df.attrs["connections"] = [{k: c[k] for k in ("conn", "a", "b", "data_dir")} for c in rep["connections"]]
    return df


def _f(v, scale: float = 1.0, digits: int = 4) -> str:
    if v is None or (isinstance(v, float) and v != v):
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v * scale:.{digits}g}"
    if isinstance(v, int) and scale != 1.0:
        return f"{v * scale:.{digits}g}"
    if isinstance(v, list):
        return ", ".join(_f(x, scale) for x in v) or "-"
    return str(v)


_SUMMARY = [
    ("conn", "#", 1.0),
    ("a", "a", 1.0),
    ("b", "b", 1.0),
    ("data_dir", "data", 1.0),
    ("unique_bytes", "unique B", 1.0),
    ("rexmt_segs", "rexmt", 1.0),
    ("rexmt_bytes", "rexmt B", 1.0),
    ("loss_events", "loss ev", 1.0),
    ("dup_acks", "dupack", 1.0),
    ("iw_segs", "IW", 1.0),
    ("syn_retransmits", "SYN rx", 1.0),
    ("rtt_avg_s", "RTT ms", 1e3),
    ("transfer_time_s", "time s", 1.0),
    ("throughput_bps", "Mb/s", 1e-6),
]

_LONG = [
    ("segs", "segments", 1.0),
    ("ip_bytes", "IP bytes", 1.0),
    ("data_segs", "data segments", 1.0),
    ("data_bytes", "data bytes", 1.0),
    ("unique_bytes", "unique bytes", 1.0),
    ("rexmt_segs", "retransmitted segments", 1.0),
    ("rexmt_bytes", "retransmitted bytes", 1.0),
    ("dup_segs", "duplicate segments", 1.0),
    ("ooo_segs", "out-of-order segments", 1.0),
    ("above_hole_segs", "segments above a hole", 1.0),
    ("late_fill_segs", "late hole fills", 1.0),
    ("loss_events", "loss events (bursts)", 1.0),
    ("pure_acks", "pure ACKs", 1.0),
    ("dup_acks", "duplicate ACKs", 1.0),
    ("sack_segs", "segments with SACK", 1.0),
    ("sack_blocks", "SACK blocks", 1.0),
    ("syns", "SYN segments", 1.0),
    ("fins", "FIN segments", 1.0),
    ("rsts", "RST segments", 1.0),
    ("mss", "MSS option", 1.0),
    ("window_max", "largest window", 1.0),
    ("iw_segs", "initial window (segments)", 1.0),
    ("iw_bytes", "initial window (bytes)", 1.0),
    ("rtt_samples", "RTT samples", 1.0),
    ("rtt_min_s", "RTT min (ms)", 1e3),
    ("rtt_avg_s", "RTT avg (ms)", 1e3),
    ("rtt_max_s", "RTT max (ms)", 1e3),
    ("first_data_s", "first data (s)", 1.0),
    ("last_data_s", "last data (s)", 1.0),
    ("data_complete_s", "data complete (s)", 1.0),
    ("acked_s", "all acknowledged (s)", 1.0),
]


def _reader_line(r: dict) -> str:
    sk = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in r["skipped"].items() if v)
    return (
        f"{r['format']}  packets {r['packets']}  TCP {r['tcp_packets']}  connections {r['connections']}"
        + (f"  skipped: {sk}" if sk else "")
    )


def _epoch(t: float) -> str:
    import datetime as _dt

    return _dt.datetime.fromtimestamp(t, _dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f UTC")


_VANTAGE_NOTE = {
    "receiver": "captured at the data receiver: RTT is its ACK delay, not the path's (see handshake RTT); "
    "IW counts what arrived before its first ACK",
    "middle": "captured between the ends: RTT is the capture point's share of the path's; IW is what passed it",
}


def render(rep: dict, flows: bool = False) -> str:
    """A readable text form of `report()`: a table of connections, or with `flows` each
    connection in full, both directions side by side (as `tcptrace -l`). Times in `flows` count
    from the capture's first packet, whose date is given once."""
    conns = rep["connections"]
    out = [_reader_line(rep["reader"])]
    if not flows:
        head = [h for _, h, _ in _SUMMARY]
        body = []
        notes = []
        for c in conns:
            row = [_f(c.get(k), s) for k, _, s in _SUMMARY]
            v = c.get("vantage")
            if v in _VANTAGE_NOTE:
                # IW and RTT are not the data sender's own: mark them and say why below.
                mark = "*" if v == "receiver" else "+"
                for k in ("iw_segs", "rtt_avg_s"):
                    i = [x for x, _, _ in _SUMMARY].index(k)
                    row[i] += mark
                hs = c.get("handshake_rtt_s")
                notes.append(f"{mark} connection {c['conn']}: {_VANTAGE_NOTE[v]}"
                             + (f"; handshake RTT {_f(hs, 1e3)} ms" if hs is not None else ""))
            body.append(row)
        widths = [max([len(h)] + [len(b[i]) for b in body]) for i, h in enumerate(head)]
        out.append("")
        out.append("  ".join(h.ljust(w) if i in (1, 2) else h.rjust(w) for i, (h, w) in enumerate(zip(head, widths))))
        for b in body:
            out.append("  ".join(x.ljust(w) if i in (1, 2) else x.rjust(w) for i, (x, w) in enumerate(zip(b, widths))))
        if notes:
            out.append("")
            out += notes[:10]
            if len(notes) > 10:
                out.append(f"(and {len(notes) - 10} more connections captured away from the data sender)")
        return "\n".join(out)
    t0 = rep["reader"].get("first_s") or 0.0
    if conns:
        out.append(f"times in seconds from the first packet, {_epoch(t0)}")

    def rel(v):
        return None if v is None else v - t0

    for c in conns:
        v = c.get("vantage")
        out += [
            "",
            f"connection {c['conn']}: {c['a']} -> {c['b']}  (IPv{c['ip_version']})"
            + (f"  captured near the data {v}" if v in ("sender", "receiver") else "  captured between the ends" if v == "middle" else ""),
            f"  first {_f(rel(c['first_s']))} s  last {_f(rel(c['last_s']))} s  duration {_f(c['duration_s'])} s"
            f"  SYN {_f(c['syn_seen'])}  FIN {_f(c['fin_seen'])}  RST {_f(c['rst_seen'])}"
            f"  SACK permitted {_f(c['sack_permitted'])}",
            f"  SYN retransmissions {c['syn_retransmits']} (intervals s: {_f(c['syn_intervals_s'])})"
            f"  SYN-ACK retransmissions {c['synack_retransmits']} (intervals s: {_f(c['synack_intervals_s'])})"
            f"  handshake RTT {_f(c['handshake_rtt_s'], 1e3)} ms",
            f"  data {c['data_dir']}: transfer time {_f(c['transfer_time_s'])} s  throughput "
            f"{_f(c['throughput_bps'], 1e-6)} Mb/s  loss events {c['loss_events']}",
        ]
        w = max(len(h) for _, h, _ in _LONG)
        out.append(f"  {'':{w}}  {'a->b':>14}  {'b->a':>14}")
        for k, h, s in _LONG:
            x, y = c.get("a2b_" + k), c.get("b2a_" + k)
            if k.endswith("_s") and not k.startswith("rtt"):
                x, y = rel(x), rel(y)
            out.append(f"  {h:{w}}  {_f(x, s, 10):>14}  {_f(y, s, 10):>14}")
    return "\n".join(out)
