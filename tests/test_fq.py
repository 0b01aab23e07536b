"""The fq qdisc on a host's link (`queue = { kind = "fq" }`, docs/scenarios.md, docs/tcp.md) through
`tcplab.run`: a CUBIC flow leaves at len/pacing_rate of its own pacing rate (the departure stamps
of `tcp_update_skb_after_send`, which fq honours), where over a FIFO it leaves in back-to-back
bursts; fq's counters reach the links table; bad fq keys are refused by key path."""

from __future__ import annotations

import numpy as np
import pytest

import tcplab

MSS = 1448
RATE = 100_000_000
DELAY = 0.1


def scenario(queue: str) -> str:
    return f"""\
[topology]
kind = "single_link"
rate = "100Mbps"
delay = "100ms"
queue = {queue}
[tcp]
profile = "linux"
cc = "cubic"
[[flows]]
bytes = 200000
"""


def departures(r):
    """First transmissions of data: (TCP send time, departure from the sender's link, pacing rate
    then, B/s). The departure is the arrival less the delay and the serialisation (the sender's
    link is the only queue)."""
    seg, tcp = r.series.segments, r.series.tcp
    data = seg[(seg.dir == "a2b") & (seg["len"] > 0) & (seg.tx == 1)]
    tx = data[data.event == "tx"].set_index("seq").time_s
    rx = data[data.event == "rx"].set_index("seq").time_s
    rates = tcp[tcp.dir == "a2b"][["time_s", "pacing_rate"]].dropna()
    wire = (MSS + 40 + 12) * 8 / RATE
    out = []
    for seq, t in tx.items():
        if seq not in rx.index:
            continue
        before = rates[rates.time_s <= t]
        rate = float(before.pacing_rate.iloc[-1]) if len(before) else np.nan
        out.append((t, rx[seq] - DELAY - wire, rate))
    return out


@pytest.fixture(scope="module")
def over_fq():
    return tcplab.run(scenario('{ kind = "fq" }'), series=["segments", "tcp"])


def test_cubic_over_fq_leaves_at_len_over_its_pacing_rate(over_fq):
    d = departures(over_fq)
    assert len(d) > 100
    checked = 0
    i = 10  # tcp_update_skb_after_send paces from the skb holding the 10th data segment on
    while i < len(d):
        t = d[i][0]
        burst = [x for x in d[i:] if x[0] == t]
        rate = burst[0][2]
        assert 0 < rate < 2048 * MSS, "two-segment skbs (tcp_tso_autosize) at this rate"
        delta = MSS / rate
        wire = (MSS + 52) * 8 / RATE
        for k, x in enumerate(burst[1:], start=1):
            off = x[1] - burst[0][1]
            # Segment k of a burst belongs to two-segment skb k // 2, which leaves 2·(k // 2)·len/rate
            # after the first (the skb's second segment one serialisation after its first), less
            # up to half of the first skb's 2·len/rate when it was sent late.
            skb = 2 * (k // 2) * delta
            lo = 0.0 if k < 2 else skb - delta
            assert lo - 1e-8 <= off <= skb + (k % 2) * wire + 1e-8, (t, k, off, delta)
            checked += 1
        i += len(burst)
    assert checked > 50


def test_over_a_fifo_the_same_flow_leaves_in_bursts():
    r = tcplab.run(scenario('"unlimited"'), series=["segments", "tcp"])
    d = departures(r)
    wire = (MSS + 52) * 8 / RATE
    bursts = {}
    for t, dep, _ in d:
        bursts.setdefault(t, []).append(dep)
    assert max(len(b) for b in bursts.values()) > 2
    for b in bursts.values():
        assert np.allclose(np.diff(b), wire, atol=1e-8), "back to back at the link rate"


def test_fq_counters_reach_the_links_table(over_fq):
    link = over_fq.links.iloc[0]
    assert link.link == "link:sender->receiver"
    assert link.fq_flows >= 1 and link.fq_throttled > 0
    assert link.dropped_queue == 0


@pytest.mark.parametrize(
    "queue, path",
    [
        ('{ kind = "fq", fq = { quantom = 3000 } }', "topology.queue.fq.quantom"),
        ("{ fq = { quantum = 0 } }", "topology.queue.fq.quantum"),
        ('{ kind = "fq", packets = 10 }', "topology.queue"),
    ],
)
def test_bad_fq_keys_are_refused_by_key_path(queue, path):
    with pytest.raises(tcplab.ScenarioError) as e:
        tcplab.run(scenario(queue))
    assert e.value.path == path, str(e.value)
