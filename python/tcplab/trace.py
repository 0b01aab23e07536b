"""Packet traces: analyse any capture (pcap or pcapng; Ethernet, Linux cooked, raw IP; IPv4 and
IPv6) the way tcptrace does, one row per TCP connection.

    >>> import tcplab
    >>> df = tcplab.trace.analyze("run.pcap")
    >>> df[["a", "b", "unique_bytes", "rexmt_segs", "loss_events", "iw_segs", "rtt_avg_s"]]

Captures come from simulations (`[[capture]]` in a scenario, `tcplab run --pcap PATH`) or from
tcpdump. The columns are defined in docs/traces.md. A file that cannot be read raises
`tcplab.TraceError` (a `ValueError`) whose message and `.offset` give the byte offset.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Union

import pandas as pd

from . import _core

TraceError = _core.TraceError

PathLike = Union[str, os.PathLike]


def _path(path: PathLike) -> str:
    p = Path(os.fspath(path))
    if p.is_dir():
        raise IsADirectoryError(f"capture path is a directory, not a file: {p}")
    if not p.is_file():
        raise FileNotFoundError(f"capture file not found: {p}")
    return str(p)


def report(path: PathLike) -> dict:
    """The whole analysis as plain data: `{"reader": {...}, "connections": [...]}`.

    `reader` counts the packets read and those skipped (not IP, not TCP, cut short by the snaplen,
    malformed, an unsupported link type) with the byte offset of the first of each kind.
    """
    return json.loads(_core.analyze_trace(_path(path)))


def analyze(path: PathLike) -> pd.DataFrame:
    """One row per TCP connection of the capture at `path`, in order of first appearance.

    The reader's counters are in `df.attrs["reader"]`.
    """
    r = report(path)
    df = pd.DataFrame(r["connections"])
    df.attrs["reader"] = r["reader"]
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


def render(rep: dict, flows: bool = False) -> str:
    """A readable text form of `report()`: a table of connections, or with `flows` each
    connection in full, both directions side by side (as `tcptrace -l`)."""
    conns = rep["connections"]
    out = [_reader_line(rep["reader"])]
    if not flows:
        head = [h for _, h, _ in _SUMMARY]
        body = [[_f(c.get(k), s) for k, _, s in _SUMMARY] for c in conns]
        widths = [max([len(h)] + [len(b[i]) for b in body]) for i, h in enumerate(head)]
        out.append("")
        out.append("  ".join(h.ljust(w) if i in (1, 2) else h.rjust(w) for i, (h, w) in enumerate(zip(head, widths))))
        for b in body:
            out.append("  ".join(x.ljust(w) if i in (1, 2) else x.rjust(w) for i, (x, w) in enumerate(zip(b, widths))))
        return "\n".join(out)
    for c in conns:
        out += [
            "",
            f"connection {c['conn']}: {c['a']} -> {c['b']}  (IPv{c['ip_version']})",
            f"  first {_f(c['first_s'])} s  last {_f(c['last_s'])} s  duration {_f(c['duration_s'])} s"
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
            out.append(f"  {h:{w}}  {_f(c.get('a2b_' + k), s, 10):>14}  {_f(c.get('b2a_' + k), s, 10):>14}")
    return "\n".join(out)
