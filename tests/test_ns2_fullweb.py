"""Two-way web and FTP clients in the ns-2 export (tcplab.ns2.fullweb; docs/ns2.md).

- Exported: `http10` pages (a primary, then `embedded` objects at once), `reqresp` and `ftp` with
  `mode = "twoway"` on the `ns2-full` profile, each object a FullTcp connection (handshake,
  request, the response once the request is in, FINs); sizes constant, uniform, exponential or a
  CDF (the shipped `named` tables, from the core); `http11` pages, one persistent FullTcp
  connection per page (or per session with `keep_alive`) carrying the page's objects in turn, or
  with `transfer = "page"` one request answered by the page's bytes. Refused by key path: two-way
  clients on one-way agents, http11 without FINs, WebTraf pages two-way, open-loop pages, a size
  with no table, one-way and two-way clients in one script.
- With `ns`: with constant sizes and think time both simulators complete the same pages and
  files at the same times (to the millisecond), agreeing at the core packet by packet; with
  Mah's sizes and a random think time (each simulator its own stream) the page counts, median
  page delay and FTP bytes agree as statistics.
"""

from __future__ import annotations

import copy

import pytest

import tcplab
from tcplab import api, ns2
from tcplab.ns2 import runner
from tcplab.ns2.script import export
from conftest import needs_ns

#: RFC 2415's network (experiments/topologies/rfc2415.toml) with two client and two server hosts,
#: two web clients and one FTP client.
WEB = {
    "duration": "120s",
    "topology": {"kind": "custom", "nodes": ["n0", "n1"],
                 "links": [{"name": "bottleneck", "a": "n1", "b": "n0", "rate": "1.5Mbps", "delay": "50ms", "queue": 25}],
                 "groups": [{"name": "c{i}", "count": 2, "attach": "n0", "rate": "10Mbps", "delay": "1ms", "queue": 25},
                            {"name": "s{i}", "count": 2, "attach": "n1", "rate": "10Mbps", "delay": "1ms", "queue": 25}]},
    "tcp": {"profile": "ns2-full", "mss": 1460, "initial_window": 1, "rwnd": "16060B"},
    "apps": [{"kind": "http10", "name": "web{i}", "instances": 2, "client": "c{i%2}", "server": "s{i%2}",
              "response": {"named": "mah1997_reply"}, "embedded": 3, "pages": "unlimited", "think": {"uniform": ["1s", "5s"]}},
             {"kind": "ftp", "name": "ftp1", "client": "c1", "server": "s1", "file": "100KB", "count": "unlimited"}],
}


def web(**over) -> dict:
    d = copy.deepcopy(WEB)
    for k, v in over.items():
        if k.startswith("web_"):
            d["apps"][0][k[4:]] = v
        else:
            d[k] = v
    d["apps"][0] = {k: v for k, v in d["apps"][0].items() if v is not None}
    return d


def constant() -> dict:
    """One web client and the FTP with constant sizes and think time: nothing drawn at random."""
    return web(duration="10s", web_instances=1, web_response="5000B", web_think="2s")


def test_two_way_clients_export_on_fulltcp_pairs():
    s = export(web())
    t = s.tcl
    for line in ("Class FxRecv -superclass Application", "set rr_count(0) -1", "set rr_count(2) -1", "proc fx_agent_0 {side} {",
                 "        set a [new Agent/TCP/FullTcp]", "        $a set segsize_ 1460", "        $a set window_ 11",
                 "        $a set windowInit_ 1", "        $a set interval_ 0.1", "        $a set nodelay_ 0", '$ns at 0.0 "fw_page 0"',
                 '$ns at 0.0 "fx_open 2"', "$rr_think_rv(0) set min_ 1.0", "$rr_think_rv(0) set max_ 5.0",
                 "$fx_request_rv(2) set val_ 24.0", "$fx_response_rv(2) set val_ 102400.0", "$fx_embedded_rv(0) set val_ 3.0",
                 "set nextfid 0", "set apps_left 0", "global defaultRNG; $defaultRNG seed 1"):
        assert line in t, line
    # Mah's reply sizes: the core's 58-point table, drawn in Tcl as ns-2's Empirical variable.
    draw = next(x for x in t.splitlines() if x.startswith("proc fx_response_0 "))
    assert "fx_emp [$fx_response_u(0) value] {0.0 90.0 103.0" in draw and "1636039.0}" in draw and draw.endswith(" 1] }")
    assert s.dynamic == {"base": 0, "mss": 1460, "full": True, "sessions": ["web1", "web2", "ftp1"]}


def test_http11_exports_a_persistent_connection_per_page():
    s = export(web(web_kind="http11", web_transfer="page"))
    t = s.tcl
    for line in ('$ns at 0.0 "fh_page 0"', "set fh_keep(0) 0", "set fh_page(0) 1", "$fx_embedded_rv(0) set val_ 3.0",
                 '$ns at 0.0 "fx_open 2"', "proc fh_request {i} {"):
        assert line in t, line
    assert s.dynamic["sessions"] == ["web1", "web2", "ftp1"]
    t = export(web(web_kind="http11", web_keep_alive=True)).tcl
    assert "set fh_keep(0) 1" in t and "set fh_page(0) 0" in t


def test_named_tables_come_from_the_core():
    import json

    t = json.loads(tcplab._core.named_table("mah1997_reply", "size"))["empirical"]
    assert t["interpolate"] is True and len(t["cdf"]) == 58 and t["cdf"][25] == ["2112B", 0.5]
    with pytest.raises(ValueError):
        tcplab._core.named_table("surge1998_file", "size")      # a spliced lognormal: no table
    with pytest.raises(ValueError):
        tcplab._core.named_table("mah1997_reply", "duration")   # not a duration


@pytest.mark.parametrize("over, path", [
    ({"tcp": {"profile": "ns2", "mss": 1460}}, "apps[0].mode"),                        # two-way needs FullTcp
    ({"web_kind": "http11", "tcp": {"profile": "ns2", "mss": 1460}}, "apps[0].tcp.fin"),   # http11 closes with FINs
    ({"web_kind": "http11", "web_response": {"named": "surge1998_file"}}, "apps[0].response"),
    ({"web_page_spacing": "start_to_start"}, "apps[0].page_spacing"),
    ({"web_response": {"named": "surge1998_file"}}, "apps[0].response"),
    ({"web_think": {"pareto": {"shape": 1.5, "mean": "2s"}}}, "apps[0].think"),
    ({"web_embedded": None, "web_objects": {"exponential": 2}}, "apps[0].objects"),
])
def test_what_two_way_clients_cannot_carry_is_refused(over, path):
    with pytest.raises(tcplab.ScenarioError) as e:
        export(web(**over))
    assert e.value.path == path, str(e.value)
    assert "ns-2 cannot express this" in str(e.value)


def test_one_way_and_two_way_clients_in_one_script_are_refused():
    d = web()
    d["apps"].append({"kind": "reqresp", "mode": "oneway", "client": "c2", "server": "s2", "request": "1460B", "response": "2920B",
                      "count": 2, "tcp": {"profile": "ns2", "mss": 1460, "rwnd": "16060B"}})
    with pytest.raises(tcplab.ScenarioError) as e:
        export(d)
    assert e.value.path == "apps[2].mode", str(e.value)


@needs_ns
def test_constant_pages_and_files_complete_at_the_same_times_in_both():
    # Nothing random: every page and file should complete at the same instant in both simulators,
    # to within the microseconds by which the same-instant order of the client's reaction differs
    # (ns-2 hears of delivered data inside FullTcpAgent::recv(), before its ACK leaves; tcplab
    # after): 1 ms is far below a page delay (~1 s) and above any such shift.
    sc = constant()
    r = api.run(sc)
    n = runner.run_log(sc, monitor=["bottleneck"])
    ours = r.pages[r.pages["delay_s"].notna()]["delay_s"].tolist()
    theirs = n.pages[n.pages["delay_s"].notna()]["delay_s"].tolist()
    assert len(ours) == len(theirs) == 4
    assert all(abs(a - b) < 1e-3 for a, b in zip(ours, theirs)), (ours, theirs)
    ftp = r.objects[r.objects["client"] == "ftp1"]
    files = (ftp["delivered_s"] - ftp["start_s"]).dropna().tolist()
    nf = n.objects[n.objects["session"] == 1]
    nfiles = (nf["delivered_s"] - nf["request_s"]).dropna().tolist()
    assert len(files) == len(nfiles) >= 6
    assert all(abs(a - b) < 1e-3 for a, b in zip(files, nfiles)), (files, nfiles)
    assert (nf["bytes_delivered"].fillna(0) <= nf["response_bytes"]).all()
    assert n.pages["start_s"].iloc[0] == 0 and (n.objects["response_bytes"] > 0).all()


@needs_ns
def test_constant_run_agrees_at_the_core_packet_by_packet():
    # The trace read back: every exchange a connection (one flow id each), the handshake, request,
    # response and FINs in both; with the FIN on the last data segment (the `ns2-full` profile's
    # `fin_with_data`, as ns-2's close_on_empty_) the first divergence is the same-instant order above.
    c = ns2.compare(constant())
    assert c.core, c.text
    t, a, b = c.divergence
    assert t / 1e6 > 0.45            # past the first object's whole exchange (its FINs at 0.45 s)
    seg = ns2.run(constant()).segments
    syn = seg[(seg["event"] == "tx") & seg["syn"] & (seg["dir"] == "a2b")]
    assert sorted(syn["conn"]) == list(range(len(syn))) and len(syn) > 10
    assert seg[seg["fin"]]["conn"].nunique() >= len(syn) - 1     # all closed, but an exchange the end cut short


@needs_ns
def test_random_pages_agree_as_statistics():
    # Mah's sizes and U(1, 5) s think times, each simulator drawing from its own stream: 120 s of
    # two web clients (about 60 pages in all) and an FTP. Over four seeds the page counts differed
    # by at most 10 % and the median page delays by at most 20 %, the FTP's bytes by 1 %; the
    # bands below are twice that.
    sc = web()
    r = api.run(sc, seed=1)
    n = runner.run_log(sc, seed=1, monitor=["bottleneck"])
    ours = r.pages[r.pages["delay_s"].notna()]
    theirs = n.pages[n.pages["session"].isin([0, 1]) & n.pages["delay_s"].notna()]
    assert abs(len(theirs) - len(ours)) <= 0.2 * len(ours), (len(ours), len(theirs))
    assert abs(theirs["delay_s"].median() / ours["delay_s"].median() - 1) <= 0.4
    ftp = r.objects[r.objects["client"] == "ftp1"]["bytes_delivered"].sum()
    nftp = n.objects[n.objects["session"] == 2]["bytes_delivered"].sum()
    assert abs(nftp / ftp - 1) <= 0.02
    link = n.links.set_index("link").loc["bottleneck:n1->n0"]
    util = link["departed_bytes"] * 8 / (1.5e6 * 120)
    ours_util = r.links.set_index("link").loc["bottleneck:n1->n0", "utilization"]
    assert abs(util - ours_util) <= 0.05


@needs_ns
@pytest.mark.parametrize("over", [{}, {"web_transfer": "page"}, {"web_keep_alive": True}], ids=["objects", "page", "keep_alive"])
def test_constant_http11_pages_complete_at_the_same_times_in_both(over):
    # http11 with nothing random: the page's objects in turn on one connection (or one transfer
    # of the page's bytes; or the connection kept from page to page, idle for the think time and
    # restarting from the initial window, RFC 5681 §4.1 / ns-2's slow_start_restart_). Every page
    # completes at the same instant in both simulators, within the 1 ms of the http10 test above.
    sc = web(duration="10s", web_kind="http11", web_instances=1, web_response="5000B", web_think="2s", **over)
    r = api.run(sc)
    n = runner.run_log(sc, monitor=["bottleneck"])
    ours = r.pages[r.pages["client"] == "web1"]
    theirs = n.pages[n.pages["session"] == 0]
    assert len(ours) == len(theirs) >= 3
    a, b = ours["delay_s"].tolist(), theirs["delay_s"].tolist()
    assert ours["delay_s"].notna().sum() == theirs["delay_s"].notna().sum() >= 3, (a, b)
    assert all(abs(x - y) < 1e-3 for x, y in zip(a, b) if x == x), (a, b)
    assert all(abs(x - y) < 1e-3 for x, y in zip(ours["start_s"], theirs["start_s"])), (ours["start_s"].tolist(), theirs["start_s"].tolist())
    # The objects: one per page with "page" (the four objects' bytes), else four, each delivered
    # at the same time in both.
    wo = r.objects[r.objects["client"] == "web1"]
    no = n.objects[n.objects["session"] == 0]
    assert len(wo) == len(no) and (no["response_bytes"] == (20000 if over.get("web_transfer") == "page" else 5000)).all()
    got = [(x, y) for x, y in zip(wo["delivered_s"], no["delivered_s"]) if x == x or y == y]
    assert got and all(abs(x - y) < 1e-3 for x, y in got), got
