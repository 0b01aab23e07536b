"""ECN (RFC 3168) and DCTCP (RFC 8257) through the Python API: a marking queue's `ce_marks`, the
connections' `ecn_reductions` and `ce_received`, the knob's forms, and key-path errors."""

from __future__ import annotations

import pytest

import tcplab

# Two bulk flows through a 10 Mb/s bottleneck whose 100-packet buffer marks ECN-capable arrivals
# that find 20 packets waiting (DCTCP's step threshold K).
ECN_TOML = """\
name = "ecn"
duration = "5s"

[topology]
kind = "dumbbell"
pairs = 2
access_rate = "100Mbps"
access_delay = "1ms"
bottleneck_rate = "10Mbps"
bottleneck_delay = "5ms"
queue = { packets = 100, mark_threshold = 20 }

[tcp]
ecn = true

[[flows]]
from = "s{i}"
to = "r{i}"
count = 2
start_spacing = "100ms"
bytes = "unlimited"
"""


def test_marking_queue_reports_ce_marks_and_reductions():
    r = tcplab.run(ECN_TOML, seed=1)
    b = r.links.set_index("link").loc["bottleneck:left->right"]
    assert b["ce_marks"] > 0
    # Marks instead of drops: the buffer never fills.
    assert b["dropped_pkts"] == 0
    c = r.connections
    assert (c["ecn_reductions"] > 0).all()
    assert (c["ce_received"] >= c["ecn_reductions"]).all()
    assert (c["retransmits"] == 0).all()
    # Links that marked nothing read 0, not a missing column.
    assert (r.links.set_index("link").loc["bottleneck:right->left", "ce_marks"]) == 0


def test_without_ecn_the_columns_read_zero_and_the_buffer_drops():
    r = tcplab.run(ECN_TOML.replace("ecn = true", "ecn = false"), seed=1)
    assert (r.links["ce_marks"] == 0).all()
    assert (r.connections["ecn_reductions"] == 0).all()
    assert r.links.set_index("link").loc["bottleneck:left->right", "dropped_pkts"] > 0


def test_dctcp_holds_the_queue_near_k():
    r = tcplab.run(ECN_TOML.replace("ecn = true", 'cc = "dctcp"'), seed=1)
    b = r.links.set_index("link").loc["bottleneck:left->right"]
    assert b["ce_marks"] > 0 and b["dropped_pkts"] == 0
    assert b["max_queue_pkts"] < 60
    assert b["utilization"] > 0.9


@pytest.mark.parametrize(
    "tcp, queue, where",
    [
        ('ecn = "sometimes"', "100", "tcp.ecn"),
        ("ecn = true", '{ packets = 100, mark_threshold = "many" }', "topology.queue"),
        ("ecn = true", "{ packets = 100, red = { ecn = 1 } }", "topology.queue"),
    ],
)
def test_bad_ecn_input_names_the_key(tcp, queue, where):
    text = ECN_TOML.replace("ecn = true", tcp).replace("{ packets = 100, mark_threshold = 20 }", queue)
    with pytest.raises(tcplab.ScenarioError) as e:
        tcplab.run(text, seed=1)
    assert where in str(e.value)
