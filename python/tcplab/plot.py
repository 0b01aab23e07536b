"""Plots of what TCP did, packet by packet: the time-sequence graph in tcptrace's style.

    >>> import tcplab
    >>> pk = tcplab.trace.packets("run.pcap")
    >>> ax = tcplab.plot.tsg(pk)                  # the busiest connection's data direction
    >>> ax.figure.savefig("tsg.png")

The plots take a DataFrame of packets with the columns of `tcplab.trace.packets()` (below), not a
file, so that the same function draws a capture and, once the simulator records its own packet
series, a simulation. Command line: `tcplab plot tsg CAPTURE [-o tsg.png] [--conn N]`.
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


def save(ax, path) -> None:
    """Write the figure of `ax` (PNG, SVG or PDF by the suffix of `path`) and close it."""
    import matplotlib.pyplot as plt

    fig = ax.figure
    fig.tight_layout()
    fig.savefig(path, dpi=150)
    plt.close(fig)
