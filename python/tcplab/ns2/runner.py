"""Run an exported scenario in ns-2 (`ns`, ns-2.35) with a bounded wall time and read its trace
(`$ns trace-all`: one line per enqueue `+`, dequeue `-`, receive `r` and drop `d` at every link)
back into the columns of tcplab's `segments` series and `drops` series (docs/series.md), so that
one analysis reads both simulators.

A packet's `tx` row is its first trace event (its enqueue at its host's first link, or its drop
there by an error model); its `rx` row is its arrival at its destination node. ns-2's one-way
agents number packets, not bytes: packet n carries bytes 1 + (n − s)·MSS … (n − s + 1)·MSS, s = 1
when packet 0 is the SYN (`syn_`), and an ACK of packet a acknowledges 1 + (a + 1 − s)·MSS; the
SYN's ACK stands as the SYN-ACK. ns-2 writes times rounded to the microsecond.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from .script import UDP_FID_BASE, Conn, Script, export

#: How to get `ns` where it is missing (exit status 2 from the command line).
INSTALL_HINT = ("ns-2 (the `ns` program) is not installed: on Debian or Ubuntu `sudo apt-get install ns2` "
                "(or scripts/setup.sh --tools as root); elsewhere build ns-allinone-2.35")
DEFAULT_WALL_S = 120.0


class Ns2NotFound(RuntimeError):
    """`ns` is not on PATH."""


class Ns2Error(RuntimeError):
    """`ns` failed, or ran out of its wall time."""


def ns_binary() -> str:
    ns = shutil.which("ns")
    if ns is None:
        raise Ns2NotFound(INSTALL_HINT)
    return ns


@dataclass
class Ns2Run:
    """One ns-2 run: the script, its trace, and the trace as tcplab's columns."""
    script: Script
    segments: object               # pandas DataFrame, the `segments` series' columns
    drops: object                  # pandas DataFrame, the `drops` series' columns
    wall_time_s: float
    trace_path: Optional[str] = None
    notes: list = field(default_factory=list)


def run_tcl(tcl: str, workdir: str, max_wall: float = DEFAULT_WALL_S) -> str:
    """Run `tcl` in `workdir` with `ns`; returns the trace file's path."""
    ns = ns_binary()
    p = Path(workdir)
    (p / "scenario.tcl").write_text(tcl)
    try:
        out = subprocess.run([ns, "scenario.tcl", "trace.tr"], cwd=p, capture_output=True, text=True, timeout=max_wall)
    except subprocess.TimeoutExpired:
        raise Ns2Error(f"ns ran longer than its wall time of {max_wall:g} s (stopped)") from None
    if out.returncode != 0 or not (p / "trace.tr").is_file():
        tail = (out.stderr or out.stdout).strip().splitlines()[-8:]
        raise Ns2Error("ns failed (exit status %d): %s" % (out.returncode, " | ".join(tail)))
    return str(p / "trace.tr")


#: The columns of `read_trace`'s segments, in order (tcplab's `segments` series').
SEGMENT_COLUMNS = ["conn", "dir", "time_s", "seq", "len", "end", "ack", "tcp_flags", "syn", "fin", "rst", "retx", "dup_ack", "sack",
                   "event", "tx", "flow", "wire_bytes"]


class _Rows:
    """The segment rows of a trace as columns, one typed array each (`SEGMENT_COLUMNS`): 87 bytes
    a row, where a row as a tuple of Python objects took some 600 (reading mathis97's M3 trace of
    181,767 rows peaked at 273 MiB that way, at 178 MiB so), and the frame is made from the arrays
    without a Python object per cell."""

    def __init__(self):
        from array import array

        self.conn, self.time_s, self.seq, self.len, self.end, self.ack = (array("q"), array("d"), array("q"), array("q"),
                                                                          array("q"), array("q"))
        # `tcp_flags` and `flow` take few values: a row holds the index of its value.
        self.tx, self.wire_bytes, self.flags_i, self.flow_i = array("q"), array("q"), array("q"), array("q")
        # dir (1: b2a), syn, fin, rst, retx, dup_ack, event (1: rx): one byte each.
        self.dir, self.syn, self.fin, self.rst, self.retx, self.dup, self.rx = (bytearray() for _ in range(7))
        self.flag_values: dict = {}
        self.flow_values: dict = {}

    def __len__(self):
        return len(self.time_s)

    def add(self, conn, d, t, seq, ln, end, ack, flags, syn, fin, rst, retx, dup, tx, flow, wire) -> int:
        """Append a `tx` row; returns its index."""
        self.conn.append(conn)
        self.dir.append(d == "b2a")
        self.time_s.append(t)
        self.seq.append(seq)
        self.len.append(ln)
        self.end.append(end)
        self.ack.append(-1 if ack is None else ack)
        self.flags_i.append(self.flag_values.setdefault(flags, len(self.flag_values)))
        self.syn.append(syn)
        self.fin.append(fin)
        self.rst.append(rst)
        self.retx.append(retx)
        self.dup.append(dup)
        self.rx.append(False)
        self.tx.append(tx)
        self.flow_i.append(self.flow_values.setdefault(flow, len(self.flow_values)))
        self.wire_bytes.append(wire)
        return len(self.time_s) - 1

    def received(self, i: int, t: float):
        """Append the `rx` row of the packet whose `tx` row is `i`, at `t`."""
        for col in (self.conn, self.dir, self.seq, self.len, self.end, self.ack, self.flags_i, self.syn, self.fin, self.rst,
                    self.retx, self.dup, self.tx, self.flow_i, self.wire_bytes):
            col.append(col[i])
        self.time_s.append(t)
        self.rx.append(True)

    def frame(self):
        """The rows as the segments frame (the dtypes of tcplab's `segments` series)."""
        import numpy as np
        import pandas as pd

        n = len(self)

        def ints(a):
            return np.frombuffer(a, dtype=np.int64) if n else np.zeros(0, np.int64)

        def bools(a):
            return np.frombuffer(bytes(a), dtype=np.uint8).astype(bool)

        def values(index, table):
            names = np.empty(len(table), dtype=object)
            for v, k in table.items():
                names[k] = v
            return names[ints(index)]

        ack = ints(self.ack)
        sack = np.empty(n, dtype=object)
        for i in range(n):
            sack[i] = ()
        return pd.DataFrame({
            "conn": ints(self.conn),
            "dir": pd.Categorical.from_codes(np.frombuffer(bytes(self.dir), dtype=np.uint8).astype(np.int8), ["a2b", "b2a"]),
            "time_s": np.frombuffer(self.time_s, dtype=np.float64) if n else np.zeros(0),
            "seq": ints(self.seq), "len": ints(self.len), "end": ints(self.end),
            "ack": pd.arrays.IntegerArray(ack.copy(), ack < 0),
            "tcp_flags": values(self.flags_i, self.flag_values),
            "syn": bools(self.syn), "fin": bools(self.fin), "rst": bools(self.rst), "retx": bools(self.retx),
            "dup_ack": bools(self.dup), "sack": sack,
            "event": np.array(["tx", "rx"], dtype=object)[np.frombuffer(bytes(self.rx), dtype=np.uint8).astype(np.intp)],
            "tx": ints(self.tx), "flow": values(self.flow_i, self.flow_values), "wire_bytes": ints(self.wire_bytes),
        }, columns=SEGMENT_COLUMNS)


def read_trace(path: str, script: Script):
    """The trace at `path` as (segments, drops) DataFrames."""
    import pandas as pd

    conns = {c.conn: c for c in script.conns}
    node_of = {i: n for i, n in enumerate(script.nodes)}
    link_name = {}
    for lk in script.links:
        link_name[(lk.a, lk.b)] = f"{lk.name}:{lk.a}->{lk.b}"
        link_name[(lk.b, lk.a)] = f"{lk.name}:{lk.b}->{lk.a}"
    rows = _Rows()
    drops = []
    # Both hold only packets still on their way: a packet's uid leaves `seen` when it reaches its
    # destination or is dropped, and (uid, from, to) leaves `enq` once it reached `to` over that
    # link (a route crosses a link once) or was dropped there.
    seen: dict = {}          # uid -> the index of its tx row
    enq: set = set()         # (uid, from, to) enqueued
    sent: dict = {}          # (conn, dir, seq, syn) -> transmissions so far
    last_ack: dict = {}      # conn -> the last ACK number the sink sent
    data_sent: dict = {}     # conn -> whether a data packet has been sent
    with open(path) as fh:
        for line in fh:
            f = line.split()
            if len(f) < 12:
                continue
            ev, t, a, b, kind, size = f[0], float(f[1]), int(f[2]), int(f[3]), f[4], int(f[5])
            fid, src, dst, seqno, uid = int(f[7]), int(f[8].split(".")[0]), int(f[9].split(".")[0]), int(f[10]), int(f[11])
            if kind not in ("tcp", "ack"):
                # A UDP datagram: its drops count per link (conn <NA>, as in tcplab's drops series).
                if ev == "+":
                    enq.add((uid, a, b))
                elif ev == "r":
                    enq.discard((uid, a, b))
                elif ev == "d":
                    drops.append(dict(time_s=t, link=link_name.get((node_of[a], node_of[b]), f"{a}->{b}"),
                                      reason="queue" if (uid, a, b) in enq else "loss", conn=None, dir=None, seq=seqno, len=size,
                                      syn=False, fin=False, retx=False, tx=1, wire_bytes=size))
                    enq.discard((uid, a, b))
                continue
            c = conns.get(fid)
            dyn = script.dynamic
            if c is None and dyn is not None and dyn.get("full") and dyn["base"] <= fid < UDP_FID_BASE and ev == "+" and kind == "tcp":
                # A two-way exchange the script opened as it ran (tcplab.ns2.fullweb): one FullTcp
                # connection, flow id base + e, from the node of its SYN (the client).
                c = conns[fid] = Conn(fid, "app", node_of[src], node_of[dst], "", "", dyn["mss"], True, None, t, "apps", full=True)
            elif c is None and dyn is not None and dyn["base"] <= fid < UDP_FID_BASE and ev == "+" and kind == "tcp":
                # A connection the script opened as it ran (a request/response exchange): one-way,
                # no SYN, from the node of its first data packet.
                # Its request (base + 2e) and response (base + 2e + 1) are tcplab's connection base + e.
                c = conns[fid] = Conn(dyn["base"] + (fid - dyn["base"]) // 2, "app", node_of[src], node_of[dst], "", "", dyn["mss"], False,
                                      None, t, "apps")
            if c is None:
                continue
            if ev == "+":
                enq.add((uid, a, b))
            first = uid not in seen and ev in ("+", "d") and a == src
            if first and c.full:
                # FullTcp: byte sequence numbers from 0 (the SYN), the ACK number and flags from
                # the TCP header fields (`Trace set show_tcphdr_ 1`): ackno, flags, header length.
                ackno, flg, hlen = int(f[12]), int(f[13], 16), int(f[14])
                d = "a2b" if node_of.get(src) == c.src else "b2a"
                syn, fin = bool(flg & 0x02), bool(flg & 0x01)
                ln = size - hlen
                ack = ackno if flg & 0x10 else None
                if ln > 0 or syn or fin:
                    k = (fid, d, seqno, syn, fin)
                    sent[k] = sent.get(k, 0) + 1
                    txn, dup = sent[k], False
                else:
                    txn = 0
                    dup = last_ack.get((fid, d)) == ack
                if ack is not None and ln == 0 and not syn and not fin:
                    last_ack[(fid, d)] = ack
                letters = "".join(ch for bit, ch in ((0x02, "S"), (0x01, "F"), (0x04, "R"), (0x10, "A")) if flg & bit)
                seen[uid] = rows.add(c.conn, d, t, seqno, ln, seqno + ln + int(syn) + int(fin), ack, letters, syn, fin, bool(flg & 0x04),
                                     txn > 1, dup, txn, c.flow, size)
            elif first:
                s = int(c.syn)
                if kind == "tcp":
                    d, syn = "a2b", c.syn and seqno == 0
                    data_sent[fid] = data_sent.get(fid, False) or not syn
                    seq = 0 if syn else 1 + (seqno - s) * c.mss
                    ln = 0 if syn else c.mss
                    ack = None
                    k = (fid, d, seq, syn)
                    sent[k] = sent.get(k, 0) + 1
                    txn, dup = sent[k], False
                else:
                    d = "b2a"
                    # The sink's ACK of packet 0 stands as the SYN-ACK until data was sent; a
                    # later ACK of packet 0 is a duplicate ACK (data segment 1 missing).
                    syn = c.syn and seqno == 0 and not data_sent.get(fid)
                    seq, ln = 0 if syn else 1, 0
                    ack = 1 + (seqno + 1 - s) * c.mss
                    if syn:
                        k = (fid, d, 0, True)
                        sent[k] = sent.get(k, 0) + 1
                        txn = sent[k]
                    else:
                        txn = 0
                    dup = not syn and last_ack.get(fid) == ack
                    last_ack[fid] = ack
                seen[uid] = rows.add(c.conn, d, t, seq, ln, seq + ln + int(syn), ack, ("S" if syn and d == "a2b" else "SA" if syn else "A"),
                                     syn, False, False, txn > 1, dup, txn, c.flow, size)
            if ev == "r":
                enq.discard((uid, a, b))
            i = seen.get(uid)
            if i is None:
                continue
            if ev == "r" and node_of.get(b) == (c.dst if rows.dir[i] == 0 else c.src):
                rows.received(i, t)
                del seen[uid]
            elif ev == "d":
                reason = "queue" if (uid, a, b) in enq else "filter"
                drops.append(dict(time_s=t, link=link_name.get((node_of[a], node_of[b]), f"{a}->{b}"), reason=reason, conn=c.conn,
                                  dir="b2a" if rows.dir[i] else "a2b", seq=rows.seq[i], len=rows.len[i], syn=bool(rows.syn[i]),
                                  fin=bool(rows.fin[i]), retx=bool(rows.retx[i]), tx=rows.tx[i], wire_bytes=size))
                enq.discard((uid, a, b))
                del seen[uid]
    del seen, enq
    seg = rows.frame()
    dcols = ["time_s", "link", "reason", "conn", "dir", "seq", "len", "syn", "fin", "retx", "tx", "wire_bytes"]
    return seg, pd.DataFrame(drops, columns=dcols)


def run(scenario, sets=(), max_wall: float = DEFAULT_WALL_S, keep: Optional[str] = None, seed: Optional[int] = None) -> Ns2Run:
    """Export `scenario`, run it in ns-2 with at most `max_wall` seconds of wall time, and read
    the trace back. `keep` names a directory where the script and trace stay (else a temporary
    one is removed)."""
    import time

    script = export(scenario, sets=sets, seed=seed)
    ns_binary()
    tmp = None
    if keep is None:
        tmp = tempfile.mkdtemp(prefix="tcplab-ns2-")
        work = tmp
    else:
        os.makedirs(keep, exist_ok=True)
        work = keep
    try:
        t0 = time.perf_counter()
        trace = run_tcl(script.tcl, work, max_wall)
        wall = time.perf_counter() - t0
        seg, drops = read_trace(trace, script)
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    return Ns2Run(script, seg, drops, wall, trace_path=None if tmp else trace, notes=list(script.notes))


@dataclass
class Ns2Log:
    """One ns-2 run without a trace: what the script logged itself (`export(monitor=...)`)."""
    script: Script
    objects: object                # DataFrame: session, object, request_s, acked_s, transfer_time_s (NaN: not over), delivered_s
    links: object                  # DataFrame: link ("name:a->b"), arrivals, drops, drop_rate, departed_bytes
    wall_time_s: float
    #: Two-way web pages (tcplab.ns2.fullweb): session, page, start_s, complete_s, delay_s (NaN: not complete).
    pages: object = None


def read_log(path: str, pages: bool = False):
    """The log of a run (`rr_note` lines: "open i k t", "over i k t", "got i k t" (a two-way
    exchange's response delivered), "page i p t", "pdone i p t", "link name arrivals drops
    departed-bytes") as (objects, links) DataFrames, and the pages' frame with `pages`."""
    import pandas as pd

    nan = float("nan")
    opened, over, got, pstart, pdone, part, size, links = {}, {}, {}, {}, {}, {}, {}, []
    marks = {"open": opened, "over": over, "got": got, "page": pstart, "pdone": pdone, "part": part}
    with open(path) as fh:
        for line in fh:
            f = line.split()
            if f[0] in marks:
                marks[f[0]][(int(f[1]), int(f[2]))] = float(f[3])
                if f[0] == "open" and len(f) > 4:
                    size[(int(f[1]), int(f[2]))] = int(f[4])
            elif f[0] == "link":
                a, d = int(f[2]), int(f[3])
                links.append(dict(link=f[1], arrivals=a, drops=d, drop_rate=d / a if a else nan,
                                  departed_bytes=int(f[4]) if len(f) > 4 else None))
    # A two-way exchange's response bytes delivered: all of them once delivered, else what the
    # run's end found ("part"; 0 for an exchange whose receiver had nothing yet).
    rows = [dict(session=i, object=k, request_s=t, acked_s=over.get((i, k), nan), delivered_s=got.get((i, k), nan),
                 response_bytes=size.get((i, k), nan),
                 bytes_delivered=size[(i, k)] if (i, k) in got else part.get((i, k), 0) if (i, k) in size else nan)
            for (i, k), t in sorted(opened.items())]
    obj = pd.DataFrame(rows, columns=["session", "object", "request_s", "acked_s", "delivered_s", "response_bytes", "bytes_delivered"])
    obj["transfer_time_s"] = obj["acked_s"] - obj["request_s"]
    lk = pd.DataFrame(links, columns=["link", "arrivals", "drops", "drop_rate", "departed_bytes"])
    if not pages:
        return obj, lk
    pg = pd.DataFrame([dict(session=i, page=p, start_s=t, complete_s=pdone.get((i, p), nan)) for (i, p), t in sorted(pstart.items())],
                      columns=["session", "page", "start_s", "complete_s"])
    pg["delay_s"] = pg["complete_s"] - pg["start_s"]
    return obj, lk, pg


def run_log(scenario, sets=(), max_wall: float = DEFAULT_WALL_S, seed: Optional[int] = None, monitor=()) -> Ns2Log:
    """Export `scenario` without a trace (runs too long to trace: millions of packets), run it in
    ns-2 with at most `max_wall` seconds of wall time, and read what the script logged: each
    request/response exchange's T_GET and T_LAST_ACK, and the queue counts of the `monitor` links
    (both directions)."""
    import time

    script = export(scenario, sets=sets, seed=seed, trace=False, monitor=monitor)
    ns = ns_binary()
    work = tempfile.mkdtemp(prefix="tcplab-ns2-")
    try:
        p = Path(work)
        (p / "scenario.tcl").write_text(script.tcl)
        t0 = time.perf_counter()
        try:
            out = subprocess.run([ns, "scenario.tcl", "trace.tr", "log.txt"], cwd=p, capture_output=True, text=True, timeout=max_wall)
        except subprocess.TimeoutExpired:
            raise Ns2Error(f"ns ran longer than its wall time of {max_wall:g} s (stopped)") from None
        wall = time.perf_counter() - t0
        if out.returncode != 0 or not (p / "log.txt").is_file():
            tail = (out.stderr or out.stdout).strip().splitlines()[-8:]
            raise Ns2Error("ns failed (exit status %d): %s" % (out.returncode, " | ".join(tail)))
        obj, links, pages = read_log(str(p / "log.txt"), pages=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return Ns2Log(script, obj, links, wall, pages)
