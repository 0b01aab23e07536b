"""Plots of what TCP did: the time-sequence graph in tcptrace's style, cwnd and ssthresh over
time, and queues over time.

    >>> import tcplab
    >>> pk = tcplab.trace.packets("run.pcap")
    >>> ax = tcplab.plot.tsg(pk)                  # every connection's data direction (up to 8), overlaid
    >>> ax.figure.savefig("tsg.png")
    >>> r = tcplab.run("scenario.toml", series=True)
    >>> tcplab.plot.tsg(r)                        # from the simulation's series, drops and RTOs marked
    >>> tcplab.plot.cwnd(r, flows="flow0", segments=True, t_from=1, t_to=3)
    >>> tcplab.plot.queue(r)                      # the bottleneck (most drops), its drops marked

The plots take DataFrames, not files: `tsg` reads the columns of `tcplab.trace.packets()` (below),
which a simulation's `segments` series also has, so that one function draws a capture and a
simulation from the same columns. Command line: `tcplab plot tsg CAPTURE|SCENARIO`,
`tcplab plot cwnd SCENARIO`, `tcplab plot queue SCENARIO`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:
    import pandas as pd

#: What `tsg` reads from a packet table: the columns of `tcplab.trace.packets()` it needs.
#: `sack` and `dup_ack` are optional (no SACK blocks, no duplicate-ACK ticks without them).
TSG_COLUMNS = ("conn", "dir", "time_s", "seq", "end", "len", "ack", "retx")

# tcptrace's colours (xplot): segments white on black there, black here; ACK line green, SACK
# blocks purple, retransmissions red.
SEGMENT_COLOUR = "black"
RETX_COLOUR = "red"
ACK_COLOUR = "green"
SACK_COLOUR = "purple"
DUPACK_COLOUR = "darkorange"


def _check(packets) -> None:
    missing = [c for c in TSG_COLUMNS if c not in packets.columns]
    if missing:
        raise ValueError(
            f"the packet table lacks the column{'s' if len(missing) > 1 else ''} {', '.join(missing)} "
            f"(tsg needs {', '.join(TSG_COLUMNS)}, as tcplab.trace.packets() gives)"
        )


def pick(packets: "pd.DataFrame", conn: Optional[int] = None, direction: Optional[str] = None) -> tuple[int, str]:
    """The connection and data direction a graph shows: by default the connection that carried the
    most payload bytes, and its direction that carried more."""
    _check(packets)
    if packets.empty:
        raise ValueError("the packet table is empty: no TCP packets to draw")
    if conn is None:
        conn = int(packets.groupby("conn")["len"].sum().idxmax())
    elif conn not in set(packets["conn"].unique().tolist()):
        have = sorted(packets["conn"].unique().tolist())
        shown = ", ".join(map(str, have[:10])) + (", ..." if len(have) > 10 else "")
        raise ValueError(f"no connection {conn} in the packet table (connections: {shown})")
    if direction is None:
        by_dir = packets[packets["conn"] == conn].groupby("dir", observed=False)["len"].sum()
        direction = "b2a" if by_dir.get("b2a", 0) > by_dir.get("a2b", 0) else "a2b"
    elif direction not in ("a2b", "b2a"):
        raise ValueError(f"direction must be 'a2b' or 'b2a', got {direction!r}")
    return conn, direction


def _optional(obj, name: str):
    """The table `name` of a `Series` or `Result` if it was recorded, else None."""
    if hasattr(obj, "series") and not hasattr(obj, "columns"):
        obj = obj.series
    if hasattr(obj, "columns") or obj is None:
        return None
    try:
        return obj[name]
    except KeyError:
        return None


def _flow_names(df) -> dict:
    """conn -> the name a legend shows: the flow's name where the table has one."""
    if "flow" in df.columns:
        return {int(c): str(f) for c, f in df.groupby("conn", observed=True)["flow"].first().items()}
    return {int(c): f"connection {c}" for c in df["conn"].unique().tolist()}


def _choose_conns(df, conn, flows, default: list) -> list:
    """The connections to draw: `conn` (a number), `flows` (names or numbers; repeatable in the
    CLI as --flow), else `default`."""
    names = _flow_names(df)
    if conn is not None:
        if conn not in names:
            shown = ", ".join(map(str, sorted(names)[:10])) + (", ..." if len(names) > 10 else "")
            raise ValueError(f"no connection {conn} in the table (connections: {shown})")
        return [int(conn)]
    if flows:
        flows = [flows] if isinstance(flows, (str, int)) else list(flows)
        out = []
        for f in flows:
            hit = [c for c, n in names.items() if n == str(f) or str(c) == str(f)]
            if not hit:
                raise ValueError(f"no flow {f!r} (flows: {', '.join(sorted(set(names.values())))})")
            out += [c for c in hit if c not in out]
        return out
    return default


#: At most this many connections are overlaid by default; more: the busiest alone.
OVERLAY_MAX = 8

#: Marks shared by the plots: a dropped packet, a retransmission timeout.
DROP_MARK = dict(marker="x", color="crimson", linestyle="none", markersize=6, markeredgewidth=1.4)
RTO_COLOUR = "darkred"


def rto_times(tcp, conn: int, direction: str):
    """Times at which a send half's retransmission timer expired: its entries into the tcp
    series' "loss" state (timeout recovery)."""
    import numpy as np

    c = tcp[(tcp["conn"] == conn) & (tcp["dir"] == direction)]
    st = (c["state"].astype(str) == "loss").to_numpy(bool)
    enter = st & ~np.r_[False, st[:-1]]
    return c["time_s"].to_numpy(float)[enter]


def _unit_axis(ax, what: str, unit: Optional[str] = None, axis: str = "y") -> str:
    """Label `ax`'s y axis "`what` (unit)" with ticks in bytes, KB or MB (powers of 1000, as the
    scenario files count) chosen from the axis' span, without matplotlib's offset text; `unit`
    "segments" or "packets" labels the (already scaled) values as they are."""
    from matplotlib.ticker import FuncFormatter, ScalarFormatter

    if unit is None:
        top = max(abs(v) for v in ax.get_ylim())
        unit, div = ("MB", 1e6) if top >= 2e6 else ("KB", 1e3) if top >= 2e3 else ("bytes", 1.0)
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v / div:g}"))
    else:
        f = ScalarFormatter(useOffset=False)
        f.set_scientific(False)
        ax.yaxis.set_major_formatter(f)
    ax.set_ylabel(f"{what} ({unit})")
    return unit


def _zoom(ax, t_from: Optional[float], t_to: Optional[float], floor: Optional[float] = None) -> None:
    """Show only `t_from`..`t_to` (seconds, on the plot's time axis) and fit the y axis to what
    is drawn there."""
    import numpy as np

    if t_from is None and t_to is None:
        return
    lo, hi = ax.get_xlim()
    lo = lo if t_from is None else t_from
    hi = hi if t_to is None else t_to
    if hi <= lo:
        raise ValueError(f"--from must be before --to (got {lo} .. {hi})")
    pts = [l.get_xydata() for l in ax.get_lines() if len(l.get_xdata())]
    for c in ax.collections:
        if hasattr(c, "get_segments"):
            segs = c.get_segments()
            if len(segs):
                pts.append(np.concatenate(segs))
        elif len(c.get_offsets()):
            pts.append(np.asarray(c.get_offsets()))
    ys = []
    for xy in pts:
        xy = np.asarray(xy, dtype=float).reshape(-1, 2)
        x, y = xy[:, 0], xy[:, 1]
        # A step's value before the window holds at its start: keep the last point before it.
        inside = (x >= lo) & (x <= hi)
        before = np.flatnonzero(x < lo)
        if len(before):
            inside[before[-1]] = True
        ys.append(y[inside & np.isfinite(y)])
    y = np.concatenate(ys) if ys else np.array([])
    ax.set_xlim(lo, hi)
    if len(y):
        a, b = float(y.min()), float(y.max())
        if floor is not None:
            a = floor
        pad = 0.05 * (b - a) or 1.0
        ax.set_ylim(a if floor is not None else a - pad, b + pad)


def tsg(
    packets: "pd.DataFrame",
    conn: Optional[int] = None,
    direction: Optional[str] = None,
    ax=None,
    relative_time: bool = True,
    title: Optional[str] = None,
    *,
    flows=None,
    drops=None,
    tcp=None,
    segments: bool = False,
    mss: Optional[int] = None,
    t_from: Optional[float] = None,
    t_to: Optional[float] = None,
):
    """Draw the time-sequence graph of one direction of one connection, as tcptrace does: each
    data segment a vertical bar from its first to its last sequence number at the time it passed
    the capture point (red and marked R if the analyser counts it as a retransmission), the ACK
    line of the other side (green steps: the cumulative ACK over time), its SACK blocks (purple
    bars at the time of the ACK that carried them) and its duplicate ACKs (orange ticks).

    `packets`: a table with the columns `TSG_COLUMNS` (`tcplab.trace.packets()`), or a
    simulation's `Series`/`Result` (its `segments`, and its `drops` and `tcp` if recorded).
    `conn` and `direction` ('a2b' or 'b2a') choose what to draw; `flows` (names or numbers)
    chooses several. By default every connection that carried data is overlaid (each in a colour
    of its own, its ACK line thinner) when there are at most `OVERLAY_MAX`, else the busiest.
    `drops` (the `drops` series) marks each dropped data segment with a cross at its sequence
    number; `tcp` (the `tcp` series) marks each retransmission timeout with a dashed line.
    `segments` shows sequence numbers in segments of `mss` bytes (default: the largest segment
    drawn); otherwise bytes, KB or MB by the range. `t_from`/`t_to` zoom (seconds on the time
    axis). Time counts from the first packet drawn unless `relative_time` is False. Returns the
    matplotlib Axes.
    """
    import numpy as np

    if not hasattr(packets, "columns"):
        drops = drops if drops is not None else _optional(packets, "drops")
        tcp = tcp if tcp is not None else _optional(packets, "tcp")
        packets = _series_table(packets, "segments")
    _check(packets)
    if packets.empty:
        raise ValueError("the packet table is empty: no TCP packets to draw")
    data = packets[packets["len"] > 0]
    busiest = pick(packets)[0]
    carried = data.groupby("conn")["len"].sum()
    default = [int(c) for c in carried[carried > 0].index] if 1 < (carried > 0).sum() <= OVERLAY_MAX else [busiest]
    conns = _choose_conns(packets, conn, flows, default)
    if len(conns) == 1:
        return _tsg_one(packets, conns[0], direction, ax, relative_time, title, drops, tcp, segments, mss, t_from, t_to)
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=(8, 5))
    shown = packets[packets["conn"].isin(conns)]
    t0 = float(shown["time_s"].min()) if relative_time else 0.0
    names = _flow_names(packets)
    colours = [f"C{k % 10}" for k in range(len(conns))]
    scale = 1.0
    if segments:
        mss = mss or int(data[data["conn"].isin(conns)]["len"].max())
        scale = 1.0 / mss
    from matplotlib.collections import LineCollection

    for k, c in enumerate(conns):
        d = pick(packets, c, direction if direction else None)[1]
        other = "b2a" if d == "a2b" else "a2b"
        cc = packets[packets["conn"] == c]
        if "event" in cc.columns:
            cc = sender_view(cc, d)
        fwd = cc[(cc["dir"] == d) & (cc["len"] > 0)]
        t = fwd["time_s"].to_numpy(float) - t0
        lo, hi = fwd["seq"].to_numpy(float) * scale, fwd["end"].to_numpy(float) * scale
        retx = fwd["retx"].to_numpy(bool)
        ax.add_collection(LineCollection(np.stack([np.c_[t, lo], np.c_[t, hi]], axis=1), colors=colours[k], linewidths=0.8,
                                         label=names[c]))
        if retx.any():
            ax.plot(t[retx], hi[retx], linestyle="none", marker="|", markersize=7, color=RETX_COLOUR,
                    label="retransmissions" if k == 0 else None)
        acks = cc[(cc["dir"] == other) & cc["ack"].notna()]
        if len(acks):
            ax.step(acks["time_s"].to_numpy(float) - t0, np.maximum.accumulate(acks["ack"].to_numpy(float)) * scale, where="post",
                    color=colours[k], linewidth=0.6, alpha=0.6)
        _marks(ax, c, d, t0, scale, drops, tcp, first=(k == 0))
    ax.autoscale_view()
    ax.set_title(title if title is not None else f"{len(conns)} connections overlaid (thin lines: their ACKs)")
    ax.set_xlabel("time (s)" if not relative_time else "time since the first packet drawn (s)")
    _finish_tsg(ax, segments, t_from, t_to)
    return ax


def _marks(ax, conn, direction, t0, scale, drops, tcp, first: bool) -> None:
    """Drops of `conn`'s data (crosses at their sequence numbers) and its timeouts (dashed)."""
    if drops is not None and len(drops):
        dd = drops[(drops["conn"] == conn) & (drops["dir"] == direction) & (drops["len"] > 0)]
        if len(dd):
            ax.plot(dd["time_s"].to_numpy(float) - t0, (dd["seq"] + dd["len"]).to_numpy(float) * scale, **DROP_MARK,
                    label="dropped" if first else None)
    if tcp is not None and len(tcp):
        for k, x in enumerate(rto_times(tcp, conn, direction)):
            ax.axvline(x - t0, color=RTO_COLOUR, linestyle="--", linewidth=0.9,
                       label="retransmission timeout" if first and k == 0 else None)


def _finish_tsg(ax, segments: bool, t_from, t_to) -> None:
    _zoom(ax, t_from, t_to)
    _unit_axis(ax, "relative sequence number", "segments" if segments else None)
    ax.legend(loc="upper left", fontsize=8)
    ax.grid(True, alpha=0.3)


def _tsg_one(packets, conn, direction, ax, relative_time, title, drops, tcp, segments, mss, t_from, t_to):
    import numpy as np

    conn, direction = pick(packets, conn, direction)
    other = "b2a" if direction == "a2b" else "a2b"
    c = packets[packets["conn"] == conn]
    if "event" in c.columns:
        c = sender_view(c, direction)
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=(8, 5))
    from matplotlib.collections import LineCollection

    t0 = float(c["time_s"].iloc[0]) if relative_time else 0.0
    fwd = c[(c["dir"] == direction) & ((c["len"] > 0) | (c["end"] > c["seq"]))]
    rev = c[c["dir"] == other]
    scale = 1.0
    if segments:
        mss = mss or int(fwd["len"].max() or 1)
        scale = 1.0 / mss
    t = fwd["time_s"].to_numpy(float) - t0
    lo, hi = fwd["seq"].to_numpy(float) * scale, fwd["end"].to_numpy(float) * scale
    retx = fwd["retx"].to_numpy(bool)
    tick = 0.004 * (np.ptp(t) if len(t) > 1 else 1.0) or 0.004

    def bars(mask, colour, label):
        if not mask.any():
            return
        tt, a, b = t[mask], lo[mask], hi[mask]
        # A vertical bar with a short tick at each end (tcptrace's arrows, simplified).
        segs = np.concatenate([
            np.stack([np.c_[tt, a], np.c_[tt, b]], axis=1),
            np.stack([np.c_[tt - tick, b], np.c_[tt + tick, b]], axis=1),
            np.stack([np.c_[tt - tick, a], np.c_[tt + tick, a]], axis=1),
        ])
        ax.add_collection(LineCollection(segs, colors=colour, linewidths=0.8, label=label))

    bars(~retx, SEGMENT_COLOUR, "segments")
    bars(retx, RETX_COLOUR, "retransmissions (R)")
    for tt, b in zip(t[retx][:200], hi[retx][:200]):
        ax.annotate("R", (tt, b), color=RETX_COLOUR, fontsize=7, xytext=(2, 2), textcoords="offset points")
    acks = rev[rev["ack"].notna()]
    if len(acks):
        ta = acks["time_s"].to_numpy(float) - t0
        av = acks["ack"].to_numpy(float) * scale
        ax.step(ta, np.maximum.accumulate(av), where="post", color=ACK_COLOUR, linewidth=0.9, label="ACK")
        if "dup_ack" in acks.columns:
            d = acks["dup_ack"].to_numpy(bool)
            if d.any():
                ax.plot(ta[d], av[d], linestyle="none", marker="_", markersize=6, color=DUPACK_COLOUR, label="duplicate ACK")
        if "sack" in acks.columns:
            sk = [(x, l * scale, r * scale) for x, blocks in zip(ta, acks["sack"]) for (l, r) in (blocks or ())]
            if sk:
                s = np.array(sk, dtype=float)
                ax.add_collection(LineCollection(np.stack([s[:, [0, 1]], s[:, [0, 2]]], axis=1), colors=SACK_COLOUR,
                                                 linewidths=2.0, label="SACK blocks"))
    _marks(ax, conn, direction, t0, scale, drops, tcp, first=True)
    ax.autoscale_view()
    if len(t):
        ax.set_xlim(min(0.0, t.min()) if relative_time else t.min(), max(t.max(), ax.get_xlim()[1]))
    info = packets.attrs.get("connections") if hasattr(packets, "attrs") else None
    ends = next(((x["a"], x["b"]) for x in info or [] if x.get("conn") == conn), None)
    if ends and direction == "b2a":
        ends = ends[::-1]
    ax.set_title(title if title is not None else f"connection {conn}" + (f": {ends[0]} → {ends[1]}" if ends else f" {direction}"))
    ax.set_xlabel("time since the connection's first packet (s)" if relative_time else "time (s)")
    _finish_tsg(ax, segments, t_from, t_to)
    return ax


def sender_view(segments: "pd.DataFrame", direction: str) -> "pd.DataFrame":
    """The rows of a simulation's `segments` series that a capture at the sending host of
    `direction` would hold: its segments when they leave it (`event` "tx") and the other side's
    when they reach it ("rx"), in time order."""
    other = "b2a" if direction == "a2b" else "a2b"
    keep = ((segments["dir"] == direction) & (segments["event"] == "tx")) | ((segments["dir"] == other) & (segments["event"] == "rx"))
    return segments[keep].sort_values("time_s", kind="stable")


def _series_table(obj, name: str):
    """A DataFrame, or the table `name` of a `Series` or a `Result`."""
    if hasattr(obj, "series") and not hasattr(obj, "columns"):
        obj = obj.series
    if hasattr(obj, "columns"):
        return obj
    return obj[name]


#: Colours of the tcp states (`cwnd`'s background bands) and what the legend calls them.
STATE_COLOURS = {"recovery": "gold", "loss": "salmon"}
STATE_LABELS = {"recovery": "fast recovery", "loss": "timeout recovery (after an RTO)"}


def _mss_from(obj, conns) -> Optional[int]:
    """The largest data segment of `conns` in a run's `segments` or `drops` series, if recorded."""
    for name in ("segments", "drops"):
        t = _optional(obj, name)
        if t is not None and len(t):
            t = t[t["conn"].isin(conns) & (t["len"] > 0)]
            if len(t):
                return int(t["len"].max())
    return None


def cwnd(tcp, conn: Optional[int] = None, direction: Optional[str] = None, ax=None, segments: bool = False,
         mss: Optional[int] = None, title: Optional[str] = None, *, flows=None, drops=None,
         t_from: Optional[float] = None, t_to: Optional[float] = None):
    """cwnd and ssthresh over time of send halves from a simulation's `tcp` series (a DataFrame,
    a `Series` or a `Result`), as steps (each value holds until the next row). One send half:
    fast recovery (gold) and timeout recovery (salmon) shaded, the flight size dotted. By
    default every send half that sent data is overlaid (cwnd solid, ssthresh dashed, a colour
    each); `conn`/`direction` or `flows` (names or numbers) choose. Each retransmission timeout
    is a dashed vertical line; each dropped data segment (`drops`, or the run's `drops` series)
    a cross on the cwnd line of its connection. `segments` divides by `mss` (default: the largest
    data segment of the run's `segments` or `drops` series) to show segments; otherwise bytes, KB
    or MB by the range. `t_from`/`t_to` zoom (seconds). Returns the matplotlib Axes."""
    import numpy as np

    df = _series_table(tcp, "tcp")
    if drops is None:
        drops = _optional(tcp, "drops")
    if df.empty:
        raise ValueError("the tcp series is empty: no connection sent data")
    halves = df.groupby(["conn", "dir"], observed=True).size()
    if conn is not None or flows:
        conns = _choose_conns(df, conn, flows, [])
        pairs = [(c, d) for (c, d) in halves.index if c in conns and (direction is None or d == direction)]
        if conn is not None and direction is None and len(pairs) > 1:
            pairs = [max(pairs, key=lambda p: halves[p])]
    else:
        pairs = [(c, d) for (c, d) in halves.index if direction is None or d == direction]
        if len(pairs) > OVERLAY_MAX:
            pairs = [halves.idxmax()]
    if not pairs:
        raise ValueError(f"connection {conn} has no rows in direction {direction}")
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=(8, 4))
    scale = 1.0
    if segments:
        mss = mss or _mss_from(tcp, [c for c, _ in pairs])
        if not mss:
            raise ValueError("segments=True needs the mss (give it, or a run with the segments series)")
        scale = 1.0 / mss
    names = _flow_names(df)
    one = len(pairs) == 1
    for k, (cn, d) in enumerate(pairs):
        c = df[(df["conn"] == cn) & (df["dir"] == d)]
        colour = "tab:blue" if one else f"C{k % 10}"
        who = "" if one else f"{names[cn]} "
        t = c["time_s"].to_numpy(float)
        open_ = ~c["state"].isin(["closed", "failed"]).to_numpy(bool)
        end = t[~open_][0] if (~open_).any() else t[-1]
        tt = np.append(t, end)
        cw = np.append(c["cwnd"].to_numpy(float), c["cwnd"].iloc[-1]) * scale
        ax.step(tt, cw, where="post", color=colour, label=f"{who}cwnd")
        ss = c["ssthresh"].astype("Float64").to_numpy(float, na_value=np.nan)
        if np.isfinite(ss).any():
            ax.step(tt, np.append(ss, ss[-1]) * scale, where="post", color="tab:red" if one else colour, linestyle="--",
                    linewidth=1.0 if one else 0.7, label=f"{who}ssthresh")
        if one:
            ax.step(tt, np.append(c["flight"].to_numpy(float), c["flight"].iloc[-1]) * scale, where="post", color="grey",
                    linestyle=":", linewidth=0.8, label="flight size")
            st = c["state"].astype(str).to_numpy()
            for state, sc in STATE_COLOURS.items():
                on = st == state
                starts = np.flatnonzero(on & ~np.r_[False, on[:-1]])
                ends = np.flatnonzero(on & ~np.r_[on[1:], False])
                for j, (a, b) in enumerate(zip(starts, ends)):
                    ax.axvspan(tt[a], tt[b + 1], color=sc, alpha=0.3, linewidth=0, label=STATE_LABELS[state] if j == 0 else None)
        for j, x in enumerate(rto_times(df, cn, d)):
            ax.axvline(x, color=RTO_COLOUR if one else colour, linestyle="--", linewidth=0.9,
                       label=(f"{who}retransmission timeout" if j == 0 else None))
        if drops is not None and len(drops):
            dd = drops[(drops["conn"] == cn) & (drops["dir"] == d) & (drops["len"] > 0)]
            if len(dd):
                x = dd["time_s"].to_numpy(float)
                at = np.clip(np.searchsorted(tt, x, side="right") - 1, 0, len(cw) - 1)
                mark = dict(DROP_MARK, color=DROP_MARK["color"] if one else colour)
                ax.plot(x, cw[at], **mark, label=f"{who}dropped")
    ax.set_xlabel("time (s)")
    ax.set_ylim(bottom=0)
    _zoom(ax, t_from, t_to, floor=0.0)
    _unit_axis(ax, "window", "segments" if segments else None)
    if title is None:
        cn, d = pairs[0]
        title = f"connection {cn} ({names[cn]}) {d}: cwnd and ssthresh" if one else f"{len(pairs)} connections: cwnd and ssthresh"
    ax.set_title(title)
    ax.legend(loc="upper left", fontsize=8, ncol=1 if one else 2)
    ax.grid(True, alpha=0.3)
    return ax


def bottleneck(q, drops=None) -> str:
    """The link direction a queue plot shows by default: the one with the most drops, else the
    one whose queue was longest on average over the rows (ties: the longest peak)."""
    if drops is not None and len(drops):
        n = drops["link"].astype(str).value_counts()
        if n.iloc[0] > 0:
            return str(n.index[0])
    g = q.groupby(q["link"].astype(str))["pkts"]
    busy = (g.mean().rename("mean").to_frame().join(g.max().rename("max"))).sort_values(["mean", "max"], ascending=False)
    return str(busy.index[0])


def queue(q, links=None, ax=None, bytes: bool = False, title: Optional[str] = None, *, drops=None,
          t_from: Optional[float] = None, t_to: Optional[float] = None):
    """Queue length over time of link directions from a simulation's `queue` series (a
    DataFrame, a `Series` or a `Result`), as steps, with each packet the direction dropped as a
    cross at the queue's length then (`drops`, or the run's `drops` series). `links`: a name, a
    list of names, or "all" (every direction whose queue was ever non-empty); default: the
    bottleneck (`bottleneck()`: most drops, else the busiest queue). `bytes` plots bytes (KB, MB)
    instead of packets. `t_from`/`t_to` zoom (seconds). Returns the matplotlib Axes."""
    import numpy as np

    df = _series_table(q, "queue")
    if drops is None:
        drops = _optional(q, "drops")
    if df.empty:
        raise ValueError("the queue series is empty")
    col = "bytes" if bytes else "pkts"
    if links is None:
        links = [bottleneck(df, drops)]
    elif links == "all":
        peak = df.groupby("link", observed=True)[col].max()
        links = [str(k) for k, v in peak.items() if v > 0] or [str(peak.index[0])]
    elif isinstance(links, str):
        links = [links]
    known = set(df["link"].astype(str).unique().tolist())
    for name in links:
        if name not in known:
            raise ValueError(f"no link direction {name!r} in the queue series (they are: {', '.join(sorted(known))})")
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=(8, 4))
    for k, name in enumerate(links):
        c = df[df["link"].astype(str) == name]
        t, v = c["time_s"].to_numpy(float), c[col].to_numpy(float)
        ax.step(t, v, where="post", label=str(name), linewidth=0.9, color=f"C{k % 10}")
        if drops is not None and len(drops):
            dd = drops[drops["link"].astype(str) == name]
            if len(dd):
                x = dd["time_s"].to_numpy(float)
                at = np.clip(np.searchsorted(t, x, side="right") - 1, 0, max(len(v) - 1, 0))
                y = v[at] if len(v) else np.zeros(len(x))
                ax.plot(x, y, **DROP_MARK, label=f"dropped ({len(dd)})" if len(links) == 1 else f"{name}: dropped ({len(dd)})")
    ax.set_xlabel("time (s)")
    ax.set_ylim(bottom=0)
    _zoom(ax, t_from, t_to, floor=0.0)
    _unit_axis(ax, "queue", None if bytes else "packets")
    ax.set_title(title if title is not None else ("queue over time" if len(links) > 1 else f"queue over time: {links[0]}"))
    ax.legend(loc="upper right", fontsize=8)
    ax.grid(True, alpha=0.3)
    return ax


def save(ax, path) -> None:
    """Write the figure of `ax` (PNG, SVG or PDF by the suffix of `path`) and close it."""
    import matplotlib.pyplot as plt

    fig = ax.figure
    fig.tight_layout()
    fig.savefig(path, dpi=150)
    plt.close(fig)
