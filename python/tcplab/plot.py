"""Plots of what TCP did: the time-sequence graph in tcptrace's style, cwnd and ssthresh over
time, and queues over time.

    >>> import tcplab
    >>> pk = tcplab.trace.packets("run.pcap")
    >>> ax = tcplab.plot.tsg(pk)                  # the busiest connection's data direction
    >>> ax.figure.savefig("tsg.png")
    >>> r = tcplab.run("scenario.toml", series=True)
    >>> tcplab.plot.tsg(r.series.segments)       # the same graph from the simulation's series
    >>> tcplab.plot.cwnd(r.series.tcp)
    >>> tcplab.plot.queue(r.series.queue)

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


def tsg(
    packets: "pd.DataFrame",
    conn: Optional[int] = None,
    direction: Optional[str] = None,
    ax=None,
    relative_time: bool = True,
    title: Optional[str] = None,
):
    """Draw the time-sequence graph of one direction of one connection, as tcptrace does: each
    data segment a vertical bar from its first to its last sequence number at the time it passed
    the capture point (red and marked R if the analyser counts it as a retransmission), the ACK
    line of the other side (green steps: the cumulative ACK over time), its SACK blocks (purple
    bars at the time of the ACK that carried them) and its duplicate ACKs (orange ticks).

    `packets`: a table with the columns `TSG_COLUMNS` (`tcplab.trace.packets()`). `conn` and
    `direction` ('a2b' or 'b2a') choose what to draw (default: `pick()`). Time counts from the
    connection's first packet unless `relative_time` is False. Returns the matplotlib Axes.
    """
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
    t = fwd["time_s"].to_numpy(float) - t0
    lo, hi = fwd["seq"].to_numpy(float), fwd["end"].to_numpy(float)
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
        av = acks["ack"].to_numpy(float)
        ax.step(ta, np.maximum.accumulate(av), where="post", color=ACK_COLOUR, linewidth=0.9, label="ACK")
        if "dup_ack" in acks.columns:
            d = acks["dup_ack"].to_numpy(bool)
            if d.any():
                ax.plot(ta[d], av[d], linestyle="none", marker="_", markersize=6, color=DUPACK_COLOUR, label="duplicate ACK")
        if "sack" in acks.columns:
            sk = [(x, l, r) for x, blocks in zip(ta, acks["sack"]) for (l, r) in (blocks or ())]
            if sk:
                s = np.array(sk, dtype=float)
                ax.add_collection(LineCollection(np.stack([s[:, [0, 1]], s[:, [0, 2]]], axis=1), colors=SACK_COLOUR,
                                                 linewidths=2.0, label="SACK blocks"))
    ax.autoscale_view()
    if len(t):
        ax.set_xlim(min(0.0, t.min()) if relative_time else t.min(), max(t.max(), ax.get_xlim()[1]))
    info = packets.attrs.get("connections") if hasattr(packets, "attrs") else None
    ends = next(((x["a"], x["b"]) for x in info or [] if x.get("conn") == conn), None)
    if ends and direction == "b2a":
        ends = ends[::-1]
    ax.set_title(title if title is not None else f"connection {conn}" + (f": {ends[0]} → {ends[1]}" if ends else f" {direction}"))
    ax.set_xlabel("time since the connection's first packet (s)" if relative_time else "time (s)")
    ax.set_ylabel("relative sequence number (bytes)")
    ax.legend(loc="upper left", fontsize=8)
    ax.grid(True, alpha=0.3)
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


#: Colours of the tcp states (`cwnd`'s background bands).
STATE_COLOURS = {"recovery": "gold", "loss": "salmon"}


def cwnd(tcp, conn: Optional[int] = None, direction: Optional[str] = None, ax=None, segments: bool = False,
         mss: Optional[int] = None, title: Optional[str] = None):
    """cwnd and ssthresh over time of one send half from a simulation's `tcp` series (a
    DataFrame, a `Series` or a `Result`), as steps (each value holds until the next row), with
    fast recovery (gold) and timeout recovery (salmon) shaded and the flight size dotted.
    Default: the connection and direction whose cwnd changed most often. `segments` divides by
    `mss` (default: the connection's largest segment is not known here, so give it) to show
    segments instead of bytes. Returns the matplotlib Axes."""
    import numpy as np

    df = _series_table(tcp, "tcp")
    if df.empty:
        raise ValueError("the tcp series is empty: no connection sent data")
    if conn is None:
        counts = df.groupby(["conn", "dir"], observed=True).size()
        conn, d = counts.idxmax()
        direction = direction or d
    elif conn not in set(df["conn"].unique().tolist()):
        raise ValueError(f"no connection {conn} in the tcp series (connections: {sorted(df['conn'].unique().tolist())[:10]})")
    if direction is None:
        direction = df[df["conn"] == conn]["dir"].value_counts().idxmax()
    c = df[(df["conn"] == conn) & (df["dir"] == direction)]
    if c.empty:
        raise ValueError(f"connection {conn} has no rows in direction {direction}")
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=(8, 4))
    scale = 1.0
    unit = "bytes"
    if segments:
        if not mss:
            raise ValueError("segments=True needs the mss")
        scale, unit = 1.0 / mss, "segments"
    t = c["time_s"].to_numpy(float)
    open_ = ~c["state"].isin(["closed", "failed"]).to_numpy(bool)
    end = t[~open_][0] if (~open_).any() else t[-1]
    tt = np.append(t, end)
    ax.step(tt, np.append(c["cwnd"].to_numpy(float), c["cwnd"].iloc[-1]) * scale, where="post", color="tab:blue", label="cwnd")
    ss = c["ssthresh"].astype("Float64").to_numpy(float, na_value=np.nan)
    if np.isfinite(ss).any():
        ax.step(tt, np.append(ss, ss[-1]) * scale, where="post", color="tab:red", linestyle="--", label="ssthresh")
    ax.step(tt, np.append(c["flight"].to_numpy(float), c["flight"].iloc[-1]) * scale, where="post", color="grey", linestyle=":",
            linewidth=0.8, label="flight size")
    st = c["state"].astype(str).to_numpy()
    for state, colour in STATE_COLOURS.items():
        on = st == state
        starts = np.flatnonzero(on & ~np.r_[False, on[:-1]])
        ends = np.flatnonzero(on & ~np.r_[on[1:], False])
        for k, (a, b) in enumerate(zip(starts, ends)):
            ax.axvspan(tt[a], tt[b + 1], color=colour, alpha=0.3, linewidth=0, label=state if k == 0 else None)
    ax.set_xlabel("time (s)")
    ax.set_ylabel(f"window ({unit})")
    name = c["flow"].iloc[0] if "flow" in c.columns else ""
    ax.set_title(title if title is not None else f"connection {conn} ({name}) {direction}: cwnd and ssthresh")
    ax.legend(loc="upper left", fontsize=8)
    ax.grid(True, alpha=0.3)
    ax.set_ylim(bottom=0)
    return ax


def queue(q, links=None, ax=None, bytes: bool = False, title: Optional[str] = None):
    """Queue length over time of link directions from a simulation's `queue` series (a
    DataFrame, a `Series` or a `Result`), as steps. `links`: a name or a list of names (default:
    every direction whose queue was ever non-empty). `bytes` plots bytes instead of packets.
    Returns the matplotlib Axes."""
    df = _series_table(q, "queue")
    col = "bytes" if bytes else "pkts"
    if links is None:
        peak = df.groupby("link", observed=True)[col].max()
        links = [k for k, v in peak.items() if v > 0] or list(peak.index[:1])
    elif isinstance(links, str):
        links = [links]
    known = set(df["link"].astype(str).unique().tolist())
    for name in links:
        if name not in known:
            raise ValueError(f"no link direction {name!r} in the queue series (they are: {', '.join(sorted(known))})")
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=(8, 4))
    for name in links:
        c = df[df["link"] == name]
        ax.step(c["time_s"].to_numpy(float), c[col].to_numpy(float), where="post", label=str(name), linewidth=0.9)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("queue (bytes)" if bytes else "queue (packets waiting)")
    ax.set_title(title if title is not None else "queue over time")
    ax.legend(loc="upper right", fontsize=8)
    ax.grid(True, alpha=0.3)
    ax.set_ylim(bottom=0)
    return ax


def save(ax, path) -> None:
    """Write the figure of `ax` (PNG, SVG or PDF by the suffix of `path`) and close it."""
    import matplotlib.pyplot as plt

    fig = ax.figure
    fig.tight_layout()
    fig.savefig(path, dpi=150)
    plt.close(fig)
