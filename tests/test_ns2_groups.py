"""Host groups and per-packet size mixes in the ns-2 export (docs/ns2.md, "What is exported").

- A topology's `groups` are exported from the core's resolved plan (`tcplab.resolve`): the same
  nodes, the same access links with the delays the core drew for the seed, the flows' templated
  endpoints as the core expands them. What a group cannot take is refused by key path.
- An ON/OFF source whose packet size is a mix drawn per packet is a Tcl-level source doing what
  `POO_Traffic::next_interval()` does with the size drawn per packet; its `instances` are the
  plan's sources with the ON rate the core derived.
- With `ns`: a grouped scenario of constant delays is packet-identical in both simulators, one
  with drawn delays agrees at the core; Ladha's cross traffic reaches its aggregate mean rate
  in ns-2 too (a statistic: ns-2 draws from its own streams).
"""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

import tcplab
from tcplab import ns2
from tcplab.ns2.script import export
from conftest import needs_ns


LADHA = Path(tcplab.__file__).resolve().parent / "experiments" / "topologies" / "ladha04.toml"

GROUPED = {
    "topology": {"kind": "custom", "nodes": ["router", "receiver"],
                 "links": [{"a": "router", "b": "receiver", "rate": "1500kbps", "delay": "10ms", "queue": 8}],
                 "groups": [{"name": "h{i}", "count": 2, "attach": "router", "rate": "10Mbps", "delay": "2ms"}]},
    "tcp": {"profile": "ns2", "preset": "reno", "handshake": True, "syn_options": 0},
    "flows": [{"name": "f", "from": "h{i}", "to": "receiver", "count": 2, "bytes": "60000B", "start_spacing": "50ms"}],
}


def grouped(**group) -> dict:
    d = copy.deepcopy(GROUPED)
    d["topology"]["groups"][0].update(group)
    return d


def test_groups_export_as_the_cores_nodes_and_access_links():
    d = grouped(delay={"uniform": ["1ms", "5ms"]})
    s = export(d, seed=3)
    plan = tcplab.resolve(d, seed=3)
    assert s.nodes == plan["nodes"] == ["router", "receiver", "h1", "h2"]
    got = {lk.name: (lk.a, lk.b, lk.rate_bps, lk.delay_s) for lk in s.links}
    for lk in plan["links"][1:]:
        assert got[lk["name"]] == (lk["a"], lk["b"], lk["rate_bps"], lk["delay_ns"] / 1e9)
        assert f"$ns duplex-link $n({s.nodes.index(lk['a'])}) $n({s.nodes.index(lk['b'])}) 10000000 {lk['delay_ns'] / 1e9!r} DropTail" in s.tcl
    # The drawn delays follow the seed, as the core's do.
    other = {lk.name: lk.delay_s for lk in export(d, seed=4).links}
    assert any(other[n] != got[n][3] for n in ("access_h1", "access_h2"))
    # The flows' endpoints are the plan's: h1 and h2, one connection each.
    assert [(c.src, c.dst) for c in s.conns] == [("h1", "receiver"), ("h2", "receiver")]
    assert s.links[0].name == "link0"      # an unnamed custom link keeps tcplab's name


def test_a_groups_queue_ns2_cannot_take_is_refused_at_the_group():
    with pytest.raises(tcplab.ScenarioError) as e:
        export(grouped(queue={"bytes": "20KB"}))
    assert e.value.path == "topology.groups.queue.bytes", str(e.value)


def test_a_size_mix_becomes_a_tcl_source_with_the_cores_on_rate():
    s = export(LADHA, sets=['flows.0.bytes="21900B"', 'tcp.rwnd="18980B"'], seed=2)
    plan = tcplab.resolve(LADHA, seed=2)
    assert len(plan["apps"]) == 32
    assert "proc mix_next {i prev} {" in s.tcl and "$defaultRNG seed 2" in s.tcl
    for n, a in enumerate(plan["apps"]):
        assert f"# UDP source {n}: apps[{n // 16}] {a['name']} (onoff) {a['client']} -> {a['server']}" in s.tcl
        assert f"set mix_rate({n}) {a['traffic']['rate_bps']}" in s.tcl
        assert f"set mix_size({n}) {{44 576 1500}}" in s.tcl and f"set mix_cum({n}) {{0.5 0.75 1}}" in s.tcl
    # The burst length in packets: the ON mean over the mean interval (POO_Traffic::init()).
    mean_iv = (0.5 * 44 + 0.25 * 576 + 0.25 * 1500) * 8 / plan["apps"][0]["traffic"]["rate_bps"]
    assert f"$mix_on(0) set avg_ {0.001 / mean_iv!r}" in s.tcl


def test_a_packet_size_of_another_distribution_is_refused():
    d = {"topology": {"kind": "single_link", "rate": "1500kbps", "delay": "10ms"}, "tcp": {"profile": "ns2"}, "flows": [{"bytes": "20000B"}],
         "apps": [{"kind": "onoff", "rate": "100kbps", "packet": {"uniform": ["100B", "200B"]}, "on": {"exponential": "1s"},
                   "off": {"exponential": "1s"}}]}
    with pytest.raises(tcplab.ScenarioError) as e:
        export(d)
    assert e.value.path == "apps[0].packet", str(e.value)


@needs_ns
def test_a_grouped_scenario_is_packet_identical_in_both():
    c = ns2.compare(GROUPED)
    assert c.identical, c.text
    assert c.ns2[0]["timeouts"] == c.tcplab[0]["timeouts"] == 1


@needs_ns
def test_drawn_group_delays_agree_at_the_core():
    """Delays of whole nanoseconds drawn per node: ns-2's float clock rounds some instants to the
    other microsecond, so the runs agree at the core, not to the microsecond."""
    c = ns2.compare(grouped(delay={"uniform": ["1ms", "5ms"]}))
    assert c.core, c.text


@needs_ns
def test_ladhas_cross_traffic_reaches_its_mean_rate_in_ns2(tmp_path):
    """The Tcl source's long-run rate is the aggregate asked for (800 kb/s each way), as tcplab's is."""
    sets = ['flows.0.bytes="21900B"', 'tcp.rwnd="18980B"', 'duration="40s"']
    run = ns2.run(LADHA, sets, seed=1, keep=str(tmp_path))
    nodes = run.script.nodes
    sinks = {nodes.index(x) for x in ("x1", "x2", "x3", "x4")}
    got = 0
    with open(run.trace_path) as fh:
        for line in fh:
            f = line.split()
            if f[0] == "r" and f[4] == "udp" and int(f[3]) in sinks:
                got += int(f[5])
    rate = got * 8 / 40 / 2
    assert 700e3 < rate < 900e3, rate
