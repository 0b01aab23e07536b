"""`tcplab.resolve`: the resolved plan of a scenario, as the core builds it (units, templates,
counts, host groups, profiles and presets resolved once, in Rust)."""

from __future__ import annotations

import pytest

import tcplab

DUMBBELL = """\
name = "plan"
duration = "1s"
[topology]
kind = "dumbbell"
pairs = 2
access_rate = "100Mbps"
access_delay = ["1ms", "2ms"]
bottleneck_rate = "10Mbps"
bottleneck_delay = "20ms"
queue = { packets = 30 }
[[topology.groups]]
name = "x{i}"
count = 2
attach = "left"
rate = "5Mbps"
delay = { uniform = ["1ms", "5ms"] }
[tcp]
profile = "linux"
[[flows]]
from = "s{i}"
to = "r{i}"
count = 2
bytes = "16KB"
start_spacing = "10ms"
tcp = { initial_window = 4 }
drops = [{ kind = "data", segment = 3 }]
[[apps]]
kind = "reqresp"
client = "x{i}"
server = "r1"
instances = 2
response = "10KB"
tcp = { profile = "linux22" }
server_tcp = { profile = "vxworks54" }
[[apps]]
kind = "cbr"
from = "x1"
to = "r2"
rate = "1Mbps"
"""


def test_the_plan_holds_every_resolved_part():
    p = tcplab.resolve(DUMBBELL)
    assert p["nodes"][:6] == ["left", "right", "s1", "r1", "s2", "r2"] and p["nodes"][6:] == ["x1", "x2"]
    bottleneck = p["links"][0]
    assert (bottleneck["name"], bottleneck["rate_bps"], bottleneck["delay_ns"]) == ("bottleneck", 10_000_000, 20_000_000)
    assert bottleneck["queue"]["packets"] == 30
    assert [l["delay_ns"] for l in p["links"][1:5]] == [1_000_000, 1_000_000, 2_000_000, 2_000_000]
    # A host group's delays are drawn with the seed, within the range.
    assert all(1_000_000 <= l["delay_ns"] <= 5_000_000 for l in p["links"][5:])
    f = p["flows"]
    assert [(x["from"], x["to"], x["start_ns"], x["bytes"]) for x in f] == [("s1", "r1", 0, 16384), ("s2", "r2", 10_000_000, 16384)]
    # The profile of [tcp] under the flow's knob, every knob written out.
    linux = tcplab.profiles()["linux"]
    assert f[0]["tcp"]["sender"]["initial_window"] == 4
    assert f[0]["tcp"]["sender"]["rto_min"] == linux["rto_min"]
    assert f[0]["drops"] == [{"kind": "data", "segment": 3, "transmissions": [1], "transfer": None}]
    a = p["apps"]
    assert [(x["name"], x["client"], x["server"]) for x in a] == [("app0.1", "x1", "r1"), ("app0.2", "x2", "r1"), ("app1", "x1", "r2")]
    # Each end of an application has its own stack: the client linux22, the server vxworks54.
    l22, vx = tcplab.profiles()["linux22"], tcplab.profiles()["vxworks54"]
    differ = [k for k in l22 if l22[k] != vx.get(k)]
    assert differ
    for k in differ:
        assert (a[0]["tcp"]["client"][k], a[0]["tcp"]["server"][k]) == (l22[k], vx[k]), k
    assert a[2]["traffic"]["rate_bps"] == 1_000_000 and "tcp" not in a[2]


def test_the_plan_follows_sets_and_seed():
    p = tcplab.resolve(DUMBBELL, sets=["topology.bottleneck_rate=\"20Mbps\""])
    assert p["links"][0]["rate_bps"] == 20_000_000
    one, two = tcplab.resolve(DUMBBELL, seed=1), tcplab.resolve(DUMBBELL, seed=2)
    assert one == tcplab.resolve(DUMBBELL, seed=1)
    assert [l["delay_ns"] for l in one["links"][5:]] != [l["delay_ns"] for l in two["links"][5:]]


def test_a_bad_scenario_is_refused_by_key():
    with pytest.raises(tcplab.ScenarioError) as e:
        tcplab.resolve(DUMBBELL.replace('access_rate = "100Mbps"', 'access_rate = "fast"'))
    assert e.value.path == "topology.access_rate"
