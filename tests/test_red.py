"""RED queues through the Python API: the schema, the new link columns, and a key-path error."""

from __future__ import annotations

import pandas as pd
import pytest

import tcplab

# Four bulk flows through a 10 Mb/s bottleneck with ns-2's default RED (min_th 5, max_th 15) in
# front of a 50-packet buffer: enough traffic for RED to act within 20 s.
RED_TOML = """\
name = "red"
duration = "20s"

[topology]
kind = "dumbbell"
pairs = 4
access_rate = "100Mbps"
access_delay = ["2ms", "4ms", "6ms", "8ms"]
bottleneck_rate = "10Mbps"
bottleneck_delay = "20ms"
queue = { packets = 50, red = { min_th = 5, max_th = 15 } }

[[flows]]
from = "s{i}"
to = "r{i}"
count = 4
start_spacing = "137ms"
bytes = "unlimited"
"""


def test_red_scenario_reports_red_drops_and_average():
    r = tcplab.run(RED_TOML, seed=1)
    links = r.links.set_index("link")
    b = links.loc["bottleneck:left->right"]
    assert b["dropped_red_early"] > 0
    assert 0 < b["red_avg_mean"] < 15
    # Every drop is counted once, under one reason.
    reasons = ["dropped_queue", "dropped_loss", "dropped_filter", "dropped_red_early", "dropped_red_forced"]
    assert (links["dropped_pkts"] == links[reasons].sum(axis=1)).all()
    assert links["dropped_pkts"].sum() == r.meta["packets_dropped"]
    # DropTail directions (the access links) have no RED average.
    assert pd.isna(links.loc["access_s1:s1->left", "red_avg_mean"])
    # The scenario as run writes every RED default out.
    red = r.scenario["topology"]["queue"]["red"]
    assert r.scenario["topology"]["queue"]["kind"] == "red"
    assert (red["max_p"], red["w_q"], red["wait"], red["gentle"], red["mean_pktsize"]) == (0.1, 0.002, True, False, "500B")
    # The same queue through DropTail: a fuller queue, and no RED columns in use.
    dt = tcplab.run(RED_TOML, seed=1, sets=["topology.queue=50"]).links.set_index("link").loc["bottleneck:left->right"]
    assert dt["dropped_red_early"] == dt["dropped_red_forced"] == 0
    assert dt["avg_queue_pkts"] > 2 * b["avg_queue_pkts"]


def test_red_parameters_are_checked_with_their_key_path():
    with pytest.raises(tcplab.ScenarioError) as e:
        tcplab.run(RED_TOML, sets=["topology.queue.red.max_th=4"])
    assert e.value.path == "topology.queue.red.max_th"
    assert "must exceed min_th" in str(e.value)
