"""One-way request/response exchanges in the ns-2 export (tcplab.ns2.webapps; docs/ns2.md).

- Accepted: `kind = "reqresp"` with `mode = "oneway"`, constant sizes of whole packets, a think
  time constant, uniform or exponential; each exchange a request agent and a response agent made
  as the run goes. Refused by key path: two-way exchanges, web clients, sizes that vary or are
  not whole packets, another think distribution.
- With `ns`: a deterministic session runs in both simulators, the exchanges read back as tcplab's
  connections (request and response under one connection, both `a2b`), agreeing at the core; the
  first divergence is the one-way agents' packet 0 (the class "no SYN" in docs/ns2.md).
"""

from __future__ import annotations

import copy

import pytest

import tcplab
from tcplab import ns2
from tcplab.ns2.script import export
from conftest import needs_ns


RR = {
    "topology": {"kind": "custom", "nodes": ["c", "r", "s1", "s2"],
                 "links": [{"a": "c", "b": "r", "rate": "10Mbps", "delay": "5ms"},
                           {"a": "r", "b": "s1", "rate": "1500kbps", "delay": "20ms", "queue": 10},
                           {"a": "r", "b": "s2", "rate": "1500kbps", "delay": "30ms", "queue": 10}]},
    "tcp": {"profile": "ns2", "variant": "newreno", "mss": 1000, "delayed_ack": True, "delack_timeout": "100ms"},
    "apps": [{"kind": "reqresp", "mode": "oneway", "client": "c", "server": "s1", "request": "1000B", "response": "8000B", "count": 5,
              "think": "300ms", "start": "1s"}],
}


def rr(**over) -> dict:
    d = copy.deepcopy(RR)
    d["apps"][0].update(over)
    return d


def test_a_oneway_session_exports_as_agents_made_per_exchange():
    s = export(rr(server=["s1", "s2"], think={"uniform": ["0s", "1s"]}, instances=2, client="c"))
    t = s.tcl
    for line in ("set rr_servers(0) {2 3}", "set rr_req(0) 1", "set rr_resp(0) 8", "set rr_count(0) 5", "set rr_count(1) 5",
                 "$rr_think_rv(0) set max_ 1.0", '$ns at 1.0 "rr_open 0"', "set nextfid 0", "set apps_left 2",
                 "        set a [new Agent/TCP/Newreno]", "        set a [new Agent/TCPSink/DelAck]", "        $a set interval_ 0.1"):
        assert line in t, line
    assert "if {$apps_left > 0} { return 0 }" in t            # the run ends when every session is over
    assert s.dynamic == {"base": 0, "mss": 1000, "full": False, "sessions": ["app0.1", "app0.2"]}


@pytest.mark.parametrize("over, path", [
    ({"mode": "twoway"}, "apps[0].mode"),
    ({"response": {"exponential": "8000B"}}, "apps[0].response"),
    ({"request": "1500B"}, "apps[0].request"),
    ({"think": {"pareto": {"shape": 1.5, "mean": "1s"}}}, "apps[0].think"),
    ({"tcp": {"handshake": True}}, "apps[0].tcp.handshake"),
])
def test_what_oneway_agents_cannot_carry_is_refused(over, path):
    with pytest.raises(tcplab.ScenarioError) as e:
        export(rr(**over))
    assert e.value.path == path, str(e.value)


def test_seddighs_model2_exports():
    s = export(tcplab.__file__.rsplit("/", 1)[0] + "/experiments/seddigh01/model2.toml")
    assert {k: s.dynamic[k] for k in ("base", "mss", "full")} == {"base": 16, "mss": 1000, "full": False} and "set rr_count(9) 1010" in s.tcl


@needs_ns
def test_exchanges_agree_at_the_core_in_both():
    c = ns2.compare(RR)
    assert c.core, c.text
    assert sorted(c.ns2) == sorted(c.tcplab) == [0, 1, 2, 3, 4]
    assert all(c.ns2[k]["data_segs"] == 9 for k in c.ns2)       # one request packet, eight response packets
    # The first divergence: ns-2's packet 0 leaves without its header (TcpAgent::output()) and
    # arrives first; its ACK is delayed in both (the export's SYN_immediate_ack_ false).
    d = c.divergence
    assert d[1] is None and (d[2][1], d[2][3], d[2][4], d[2][5]) == (1, "a2b", 1, 1000) and abs(d[0] / 1e6 - 1.031133) < 1e-6


@needs_ns
def test_a_run_without_trace_logs_each_exchange_as_the_trace_shows_it():
    """`run_log` (no trace, for runs too long to trace): T_GET and T_LAST_ACK of each exchange as
    the script logs them equal the first packet and the last ACK of its connection in the trace."""
    from tcplab.ns2 import runner
    from tcplab.ns2.pair import conn_summary

    logged = runner.run_log(RR)
    traced = runner.run(RR)
    cs = conn_summary(traced.segments, traced.drops)
    o = logged.objects
    assert list(o["object"]) == [1, 2, 3, 4, 5] and o["transfer_time_s"].notna().all()
    for k, row in o.iterrows():
        assert abs(row["transfer_time_s"] - cs[k]["transfer_s"]) < 2e-6, (k, row["transfer_time_s"], cs[k]["transfer_s"])


@needs_ns
def test_a_monitored_link_counts_the_drops_the_trace_shows():
    from tcplab.ns2 import runner

    sc = rr(count=3, think="0s")
    sc["topology"]["links"][1]["queue"] = 2
    sc["tcp"]["initial_window"] = 4
    logged = runner.run_log(sc, monitor=["link1"])
    traced = runner.run(sc)
    row = logged.links.set_index("link").loc["link1:s1->r"]
    assert row["drops"] == (traced.drops["link"] == "link1:s1->r").sum() > 0
    assert set(logged.links["link"]) == {"link1:r->s1", "link1:s1->r"}


PAGES = {"kind": "http10", "mode": "oneway", "client": "c", "server": ["s1", "s2"], "request": "1000B", "response": "8000B",
         "objects": {"exponential": 2}, "objects_rounding": "up", "interobject": {"exponential": "10ms"}, "think": {"exponential": "2s"},
         "page_spacing": "start_to_start", "pages": 10, "start": "1s"}


def pages(**over) -> dict:
    d = copy.deepcopy(RR)
    d["apps"] = [dict(PAGES, **over)]
    d["duration"] = "40s"
    return d


def test_webtraf_pages_export_as_objects_started_interobject_apart():
    t = export(pages()).tcl
    for line in ("set rr_count(0) 10", "set wt_objs_rv(0) [new RandomVariable/Exponential]", "$wt_objs_rv(0) set avg_ 2.0",
                 "set wt_round(0) up", "$wt_gap_rv(0) set avg_ 0.01", "$rr_think_rv(0) set avg_ 2.0", '$ns at 1.0 "wt_page 0"'):
        assert line in t, line
    assert "set apps_left 0" in t        # pages run to the duration


@pytest.mark.parametrize("over, path", [
    ({"mode": "twoway"}, "apps[0].mode"),
    ({"objects": None, "interobject": None, "objects_rounding": None, "embedded": 3}, "apps[0].embedded"),
    ({"page_spacing": "end_to_start"}, "apps[0].page_spacing"),
    ({"interobject": {"pareto": {"shape": 1.5, "mean": "10ms"}}}, "apps[0].interobject"),
])
def test_what_webtraf_pages_cannot_carry_is_refused(over, path):
    d = pages(**over)
    d["apps"][0] = {k: v for k, v in d["apps"][0].items() if v is not None}
    with pytest.raises(tcplab.ScenarioError) as e:
        export(d)
    assert e.value.path == path, str(e.value)


def test_pages_need_a_duration():
    d = pages()
    del d["duration"]
    with pytest.raises(tcplab.ScenarioError) as e:
        export(d)
    assert e.value.path == "duration"


@needs_ns
def test_webtraf_pages_run_in_ns2_as_tcplab_runs_them():
    """ns-2 draws the pages' sizes, servers and times from its own streams: the two runs compare as
    statistics (here: the objects started over 10 pages, and their mean time, within a third)."""
    from tcplab.ns2 import runner

    d = pages(pages=30)
    d["duration"] = "100s"
    for lk in d["topology"]["links"][1:]:
        lk["queue"] = 200            # no loss: an object's time is its path's and its page's sharing
    logged = runner.run_log(d)
    ours = tcplab.run(d).objects
    assert 30 <= len(logged.objects) <= 200 and logged.objects["transfer_time_s"].notna().all()
    assert abs(logged.objects["transfer_time_s"].mean() / ours["transfer_time_s"].mean() - 1) < 0.25


@needs_ns
def test_agents_made_during_the_run_take_the_initial_rto():
    """An exchange's agents are made (or reused) as the run goes: reset before use, they take
    rtxcur_init_ (TcpAgent::reset() sets the RTO; `$ns run` resets only the agents made before
    it). A request that never arrives is sent at 1 s and again 2, 4, 8 s later in both."""
    d = copy.deepcopy(RR)
    d["topology"]["links"][1]["loss"] = 1.0
    d["tcp"]["rto_initial"] = "2s"
    d["apps"][0].update(count=1, think="0s")
    d["duration"] = "20s"
    seg = ns2.run(d).segments
    sim = tcplab.run(d, series=["segments"]).series.segments
    times = [list(s[(s["event"] == "tx") & (s["dir"] == "a2b")]["time_s"]) for s in (seg, sim)]
    assert times[0] == times[1] == [1.0, 3.0, 7.0, 15.0]
