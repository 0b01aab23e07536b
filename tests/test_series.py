"""Time series of a simulation (`[[series]]`, `run(series=...)`, docs/series.md): they agree with
the run's own instruments, the time-sequence graph of a simulation and of its own capture are
drawn from the same segments, cwnd and queue plots, the command line, and bad input."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest

import tcplab
from tcplab.series import SeriesWarning, time_average

LOSSY = """\
name = "series-lossy"
[topology]
kind = "single_link"
rate = "10Mbps"
delay = "20ms"
queue = 30
loss = 0.02
[tcp]
preset = "sack"
[[flows]]
bytes = "300KB"
"""

OVERFLOW = """\
[topology]
kind = "single_link"
rate = "8Mbps"
delay = "50ms"
queue = 10
[tcp]
variant = "newreno"
[[flows]]
bytes = 400000
"""


@pytest.fixture(scope="module")
def overflow():
    return tcplab.run(OVERFLOW, series=True)


def test_series_agree_with_the_run_totals(overflow):
    r = overflow
    s, c, end = r.series, r.connections.iloc[0], r.meta["sim_time_s"]
    assert set(s) == {"tcp", "segments", "queue", "drops"} and not any(s.truncated.values())
    seg = s.segments
    # The last ACKed sequence number at the sender is the bytes delivered (after the SYN's 1, with
    # the FIN's).
    at_sender = seg[(seg.dir == "b2a") & (seg.event == "rx")]
    fin = int(seg[(seg.dir == "a2b") & (seg.event == "tx")].fin.any())
    assert at_sender.ack.max() == 1 + c.bytes_delivered + fin == 1 + 400_000 + fin
    sent = seg[(seg.dir == "a2b") & (seg.event == "tx") & (seg.len > 0)]
    assert len(sent) == c.segs_sent and sent.len.sum() == c.bytes_sent and sent.retx.sum() == c.retransmits > 0
    # The time-averaged cwnd of the series is the instrument `cwnd_avg_bytes`.
    tcp = s.tcp[(s.tcp.conn == 0) & (s.tcp.dir == "a2b")]
    closed = tcp[tcp.state == "closed"].time_s.iloc[0]
    assert time_average(tcp[tcp.time_s < closed], "cwnd", closed) == pytest.approx(c.cwnd_avg_bytes, rel=1e-9)
    assert tcp.cwnd.max() == c.cwnd_max_bytes
    assert {"slow_start", "recovery", "closed"} <= set(tcp.state.astype(str))
    # The time-averaged queue is the link rows'; the drops are theirs.
    for _, link in r.links.iterrows():
        q = s.queue[s.queue.link == link.link]
        assert time_average(q, "pkts", end, start_s=0.0) == pytest.approx(link.avg_queue_pkts, rel=1e-9, abs=1e-12)
        assert q.pkts.max() == link.max_queue_pkts
        assert (s.drops.link == link.link).sum() == link.dropped_pkts
    assert set(s.drops.reason.astype(str)) == {"queue"}
    assert s.connections.to_dict("records") == [{"conn": 0, "flow": 0, "name": "flow0", "transfer": 1, "a": "sender", "b": "receiver"}]


def test_a_simulation_and_its_own_capture_draw_the_same_graph(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    cap = tmp_path / "tx.pcap"
    with contextlib.chdir(tmp_path):  # a scenario's captures are written in the working directory
        r = tcplab.run(LOSSY + f'[[capture]]\npath = "{cap.name}"\nnode = "sender"\n', seed=3, series=["segments"])
    pk = tcplab.trace.packets(cap)
    sim = tcplab.plot.sender_view(r.series.segments, "a2b")
    # The capture at the sender holds exactly the segments of the series' sender view: same
    # times, sequence ranges, ACKs and SACK blocks, in the same order.
    assert len(pk) == len(sim)
    for col in ("seq", "end", "len", "syn", "fin"):
        assert pk[col].tolist() == sim[col].tolist(), col
    assert np.allclose(pk.time_s.to_numpy(), sim.time_s.to_numpy(), rtol=0, atol=1e-9)
    assert pk.ack.fillna(-1).tolist() == sim.ack.fillna(-1).tolist()
    assert [tuple(map(tuple, b)) for b in pk.sack] == [tuple(b) for b in sim.sack]
    assert sim.retx.sum() > 0 and sim.sack.map(len).sum() > 0
    # The two graphs are drawn from the same data: the same bars, ACK line and SACK blocks.
    a, b = tcplab.plot.tsg(pk), tcplab.plot.tsg(r.series.segments)

    def drawn(ax):
        bars = {c.get_label(): np.concatenate(c.get_segments()) for c in ax.collections}
        line = [l for l in ax.get_lines() if l.get_label() == "ACK"][0]
        return bars, line.get_xydata()

    (bars_a, ack_a), (bars_b, ack_b) = drawn(a), drawn(b)
    assert np.allclose(ack_a, ack_b, atol=1e-9)
    assert np.allclose(bars_a["SACK blocks"], bars_b["SACK blocks"], atol=1e-9)
    every = lambda bars: np.concatenate([bars["segments"], bars["retransmissions (R)"]])  # noqa: E731
    key = lambda x: np.lexsort(x.reshape(-1, 2).T[::-1])  # noqa: E731
    ea, eb = every(bars_a).reshape(-1, 2), every(bars_b).reshape(-1, 2)
    assert np.allclose(ea[key(ea)], eb[key(eb)], atol=1e-9)
    # The simulation knows which segments were resent; the analyser infers it.
    assert (sim.retx.to_numpy() == pk.retx.to_numpy()).mean() > 0.99


def test_cwnd_and_queue_plots(overflow, tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    ax = tcplab.plot.cwnd(overflow)
    labels = set(ax.get_legend_handles_labels()[1])
    assert {"cwnd", "ssthresh", "flight size", "fast recovery"} <= labels
    cw = [l for l in ax.get_lines() if l.get_label() == "cwnd"][0]
    assert cw.get_ydata().max() == overflow.connections.cwnd_max_bytes[0]
    ax = tcplab.plot.queue(overflow.series.queue)
    q = [l for l in ax.get_lines()]
    assert [l.get_label() for l in q] == ["link:sender->receiver"]
    assert q[0].get_ydata().max() == overflow.links.max_queue_pkts[0]
    with pytest.raises(ValueError, match="no link direction 'nope'"):
        tcplab.plot.queue(overflow, links="nope")
    with pytest.raises(ValueError, match="no connection 5"):
        tcplab.plot.cwnd(overflow, conn=5)
    tcplab.plot.save(ax, tmp_path / "q.png")
    assert (tmp_path / "q.png").stat().st_size > 0


def test_the_plot_commands_draw_a_scenario(tmp_path, cli):
    sc = tmp_path / "lossy.toml"
    sc.write_text(LOSSY)
    for kind in ("tsg", "cwnd", "queue"):
        out = tmp_path / f"{kind}.svg"
        res = cli("plot", kind, sc, "-o", out, "--seed", "3")
        assert res.returncode == 0, res.stderr
        assert "<svg" in out.read_text()
    res = cli("plot", "cwnd", sc, "--set", "tcp.nope=1")
    assert res.returncode == 2 and "tcp.nope" in res.stderr and res.stderr.startswith("error: ")


def test_series_are_opt_in_and_chosen_by_kind():
    plain = tcplab.run(LOSSY, seed=3)
    assert not plain.series and len(plain.series) == 0
    with pytest.raises(KeyError, match=r'add \[\[series\]\] kind = "tcp"'):
        plain.series.tcp
    one = tcplab.run(LOSSY, seed=3, series="tcp")
    assert list(one.series) == ["tcp"]
    # The series record only: the run is the same.
    assert one.connections.equals(plain.connections) and one.links.equals(plain.links)
    # [[series]] in the scenario, and series=False to leave them out.
    text = LOSSY + '[[series]]\nkind = "queue"\ninterval = "10ms"\n'
    r = tcplab.run(text, seed=3)
    assert list(r.series) == ["queue"] and r.series.interval_s == {"queue": 0.01}
    assert np.allclose(np.round(r.series.queue.time_s / 0.01), r.series.queue.time_s / 0.01)
    assert not tcplab.run(text, seed=3, series=False).series
    # A kind given replaces the scenario's entry of that kind.
    r = tcplab.run(text, seed=3, series=[{"kind": "queue"}, "drops"])
    assert list(r.series) == ["queue", "drops"] and r.series.interval_s["queue"] is None


def test_bad_series_are_refused_by_key():
    with pytest.raises(tcplab.ScenarioError) as e:
        tcplab.run(LOSSY, series={"kind": "tcp", "max_rows": 0})
    assert e.value.path == "series[0].max_rows"
    with pytest.raises(tcplab.ScenarioError) as e:
        tcplab.run(LOSSY, series={"kind": "drops", "interval": "1ms"})
    assert e.value.path == "series[0].interval"
    with pytest.raises(ValueError, match="unknown series kind 'cwnd'"):
        tcplab.run(LOSSY, series="cwnd")
    with pytest.raises(TypeError, match="series must be"):
        tcplab.run(LOSSY, series=3)


def test_a_table_at_its_cap_is_marked_and_warns():
    r = tcplab.run(LOSSY, seed=3, series={"kind": "segments", "max_rows": 50})
    assert r.series.truncated == {"segments": True}
    with pytest.warns(SeriesWarning, match=r"stopped at its max_rows \(50 rows\)"):
        seg = r.series.segments
    assert len(seg) == 50 and seg.attrs["truncated"]


def _sweep_scenario(axes: dict, replicates: int = 1) -> dict:
    d = tcplab.validate(OVERFLOW)
    d["sweep"] = {"axes": axes, "replicates": replicates}
    return d


def test_a_sweep_writes_its_series_to_parquet(tmp_path):
    store = tmp_path / "s.duckdb"
    sc = _sweep_scenario({"topology.queue": [5, 20]}, replicates=2)
    sc["series"] = [{"kind": "tcp", "interval": "20ms"}]
    res = tcplab.sweep(sc, store=store, workers=0, progress=False, series=["queue"])
    assert (res.runs.status == "ok").all() and len(res.runs) == 4
    d = tmp_path / "s.series"
    assert res.series_dir == str(d)
    assert sorted(p.name for p in d.iterdir()) == ["connections", "queue", "tcp"]
    assert len(list((d / "tcp").glob("*.parquet"))) == 4
    tcp = res.series("tcp")
    assert {"topology.queue", "replicate", "seed", "key", "time_s", "cwnd", "state"} <= set(tcp.columns)
    grid = tcp[tcp.state != "closed"].time_s / 0.02  # sampled, then the row where it closes
    assert np.allclose(np.round(grid), grid)
    # Each run's rows are those of the same run made alone.
    row = res.runs.iloc[0]
    alone = tcplab.run(OVERFLOW, seed=int(row.seed), sets=[f"topology.queue={row['topology.queue']}"],
                       series={"kind": "tcp", "interval": "20ms"}).series.tcp
    mine = tcp[tcp.key == row.key].reset_index(drop=True)
    assert mine[alone.columns.tolist()].astype(str).equals(alone.astype(str))
    # The queue's peak per point is the link rows' maximum.
    q = res.series("queue")
    peak = q.groupby(["key", "link"], observed=True).pkts.max().reset_index()
    links = res.links.merge(peak, on=["key", "link"])
    assert len(links) == 8 and (links.pkts == links.max_queue_pkts).all()
    # Series do not change the runs' keys: the sweep again finds every run done.
    again = tcplab.sweep(_sweep_scenario({"topology.queue": [5, 20]}, replicates=2), store=store, workers=0, progress=False)
    assert again.stats["skipped"] == 4
    # Reloaded later, the series are found next to the store.
    assert len(tcplab.load(store).series("tcp")) == len(tcp)


def test_a_sweep_in_a_worker_pool_writes_its_series(tmp_path):
    res = tcplab.sweep(_sweep_scenario({"topology.queue": [5, 20]}), store=tmp_path / "p.duckdb", workers=2, progress=False,
                       series="drops")
    d = res.series("drops")
    assert sorted(d.key.unique()) == sorted(res.runs.key)
    per_run = d.groupby("key").size()
    dropped = res.links.groupby("key").dropped_pkts.sum()
    assert (per_run.reindex(dropped.index, fill_value=0) == dropped).all()


def test_a_sweep_with_series_needs_a_place_for_them():
    with pytest.raises(tcplab.SweepError, match="give series_dir"):
        tcplab.sweep(_sweep_scenario({"topology.queue": [5]}), store=":memory:", workers=0, progress=False, series=True)
    with pytest.raises(tcplab.SweepError, match=r"series\[0\].max_rows"):
        tcplab.sweep(_sweep_scenario({"topology.queue": [5]}), store=":memory:", workers=0, progress=False, series={"kind": "tcp", "max_rows": 0},
                     series_dir="x")


def test_series_filtered_by_flow_and_link():
    r = tcplab.run(LOSSY, seed=3, series=[{"kind": "tcp", "flows": ["flow0"]}, {"kind": "queue", "links": ["link:sender->receiver"]}])
    assert set(r.series.tcp.flow) == {"flow0"}
    assert set(r.series.queue.link.astype(str)) == {"link:sender->receiver"}
    with pytest.raises(tcplab.ScenarioError) as e:
        tcplab.run(LOSSY, series={"kind": "tcp", "flows": ["nope"]})
    assert e.value.path == "series[0].flows[0]" and '"flow0"' in e.value.reason
