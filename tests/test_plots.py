"""Plots a paper can use (docs/series.md, "Plots"): drops and retransmission timeouts marked,
y axes in KB/MB or segments without an offset, zoom, every connection of a run overlaid or some
chosen by flow, queue plots of the bottleneck, the timeout shading named in the legend, and the
command line's options for all of it."""

from __future__ import annotations

import matplotlib
import numpy as np
import pytest

import tcplab
from tcplab.plot import rto_times

matplotlib.use("Agg")

TWO = """\
[topology]
kind = "single_link"
rate = "8Mbps"
delay = "50ms"
queue = 10
loss = 0.05
[tcp]
variant = "newreno"
[[flows]]
name = "bulk"
bytes = 200000
[[flows]]
name = "late"
bytes = 100000
start = "0.3s"
"""


@pytest.fixture(scope="module")
def run():
    r = tcplab.run(TWO, seed=1, series=True)
    # The run these tests need: both flows time out at least once and lose packets.
    assert all(len(rto_times(r.series.tcp, c, "a2b")) > 0 for c in (0, 1))
    assert len(r.series.drops) > 0
    return r


def labels(ax):
    return ax.get_legend_handles_labels()[1]


def crosses(ax):
    return [l for l in ax.get_lines() if l.get_marker() == "x"]


def test_tsg_overlays_the_runs_connections_and_marks_drops_and_timeouts(run):
    ax = tcplab.plot.tsg(run)
    assert {"bulk", "late", "dropped", "retransmission timeout"} <= set(labels(ax))
    d = run.series.drops
    data_drops = d[d["len"] > 0]
    assert sum(len(l.get_xdata()) for l in crosses(ax)) == len(data_drops)
    rto = [l for l in ax.get_lines() if l.get_linestyle() == "--"]
    assert len(rto) == sum(len(rto_times(run.series.tcp, c, "a2b")) for c in (0, 1))
    # The y axis says its unit and has no offset text ("1e6").
    assert ax.get_ylabel() == "relative sequence number (KB)"
    ax.figure.canvas.draw()
    assert ax.yaxis.get_offset_text().get_text() == ""
    ticks = [t.get_text() for t in ax.get_yticklabels()]
    assert "100" in ticks and "100000" not in ticks


def test_tsg_one_flow_in_segments_zoomed(run):
    ax = tcplab.plot.tsg(run, flows=["late"], segments=True, t_from=0.5, t_to=1.5)
    assert ax.get_ylabel() == "relative sequence number (segments)"
    assert ax.get_xlim() == (0.5, 1.5)
    assert "bulk" not in ax.get_title() and "late" not in labels(ax)  # one connection: tcptrace's colours
    lo, hi = ax.get_ylim()
    late = run.series.segments[(run.series.segments.flow == "late") & (run.series.segments.len > 0)]
    assert hi <= late["end"].max() / late["len"].max() * 1.1  # segments, not bytes
    with pytest.raises(ValueError, match="no flow 'nope'"):
        tcplab.plot.tsg(run, flows=["nope"])


def test_cwnd_overlay_rto_lines_drop_crosses_and_zoom(run):
    ax = tcplab.plot.cwnd(run)
    names = labels(ax)
    assert {"bulk cwnd", "late cwnd", "bulk retransmission timeout", "bulk dropped"} <= set(names)
    assert ax.get_ylabel() == "window (KB)"
    one = tcplab.plot.cwnd(run, flows="bulk", t_from=1.0, t_to=3.0, segments=True)
    # The shading after a timeout says what it is.
    assert "timeout recovery (after an RTO)" in labels(one) and "retransmission timeout" in labels(one)
    assert one.get_xlim() == (1.0, 3.0) and one.get_ylabel() == "window (segments)"
    tcp = run.series.tcp[(run.series.tcp.flow == "bulk")]
    mss = int(run.series.segments[run.series.segments.flow == "bulk"].len.max())
    seen = tcp[(tcp.time_s >= 1.0) & (tcp.time_s <= 3.0)]
    assert one.get_ylim()[1] == pytest.approx(max(seen.cwnd.max(), seen.ssthresh.max(), seen.flight.max()) / mss * 1.05, rel=0.2)
    with pytest.raises(ValueError, match="needs the mss"):
        tcplab.plot.cwnd(run.series.tcp, segments=True)


def test_queue_defaults_to_the_bottleneck_with_its_drops(run):
    ax = tcplab.plot.queue(run)
    lines = [l for l in ax.get_lines() if l.get_marker() != "x"]
    assert [l.get_label() for l in lines] == ["link:sender->receiver"]
    assert sum(len(l.get_xdata()) for l in crosses(ax)) == len(run.series.drops)
    assert ax.get_ylabel() == "queue (packets)"
    assert tcplab.plot.bottleneck(run.series.queue, run.series.drops) == "link:sender->receiver"
    # Without drops: the busiest queue.
    assert tcplab.plot.bottleneck(run.series.queue) == "link:sender->receiver"
    both = tcplab.plot.queue(run, links="all", bytes=True)
    assert {"link:sender->receiver", "link:receiver->sender"} <= set(labels(both))
    assert both.get_ylabel() in ("queue (KB)", "queue (bytes)")


def test_plot_commands_take_the_new_options(tmp_path, cli):
    sc = tmp_path / "two.toml"
    sc.write_text(TWO)
    for args in (["tsg", "--flow", "bulk", "--flow", "late", "--segments", "--from", "0.2", "--to", "2"],
                 ["cwnd", "--flow", "late", "--segments", "--from", "0.5"],
                 ["queue", "--to", "1.5", "--bytes"], ["queue", "--link", "all"]):
        out = tmp_path / f"{args[0]}-{len(list(tmp_path.iterdir()))}.svg"
        res = cli("plot", args[0], sc, *args[1:], "-o", out, "--seed", "1")
        assert res.returncode == 0, (args, res.stderr)
        assert "<svg" in out.read_text()
    res = cli("plot", "cwnd", sc, "--from", "2", "--to", "1")
    assert res.returncode == 2 and "--from" in res.stderr
    res = cli("plot", "tsg", sc, "--flow", "nope")
    assert res.returncode == 2 and "no flow 'nope'" in res.stderr
