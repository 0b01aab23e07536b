"""`tcplab ns2 compare` on every scenario tcplab ships: each example (`tcplab/examples/`) and each
study scenario (`tcplab/experiments/`) either runs in both simulators and compares, or is refused
by the export with the key path of what ns-2 cannot express (docs/ns2.md).

Each is cut to a few simulated seconds (`duration`, and `warmup` 0 where the scenario has one) so
that the whole set stays within a CI run; what is compared is then the start of each scenario.
A scenario whose runs draw from a random stream (random loss, RED, random sizes or think times)
is compared as statistics: ns-2 draws from its own streams.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import tcplab
from tcplab import ns2
from tcplab.ns2.script import export
from conftest import needs_ns

PKG = Path(tcplab.__file__).resolve().parent
SCENARIOS = sorted(PKG.glob("examples/*.toml")) + sorted(PKG.glob("experiments/*/*.toml"))

#: How long each scenario runs here: long enough for every connection to send (the study
#: scenarios' first flows start within a second or two), short enough for CI.
SECONDS = 6


#: Scenarios with nothing drawn at random in their first seconds (drop-tail queues, fixed sizes and
#: starts): the two simulators agree at the core (docs/ns2.md's definition).
DETERMINISTIC = {"mathis97/m2_droptail.toml", "mathis97/m3_phase.toml"}


def _sets(path: Path) -> list:
    text = path.read_text()
    sets = [f'duration="{SECONDS}s"']
    if "\nwarmup" in text or text.startswith("warmup"):
        sets.append('warmup="0s"')
    return sets


def _id(path: Path) -> str:
    return "/".join(path.parts[-2:])


def test_the_set_is_every_shipped_scenario():
    # A new example or study scenario joins this test by being shipped: none is left out by name.
    assert len(SCENARIOS) >= 20
    assert {p.parent.name for p in SCENARIOS} >= {"examples", "mathis97", "seddigh01", "allman98", "topologies"}


@needs_ns
@pytest.mark.parametrize("path", SCENARIOS, ids=_id)
def test_every_scenario_compares_in_both_simulators_or_is_refused_by_key_path(path):
    sets = _sets(path)
    try:
        export(path, sets=sets)
    except tcplab.ScenarioError as e:
        assert e.path, f"{_id(path)}: refused without a key path: {e}"
        return
    c = ns2.compare(path, sets=sets, max_wall=120)
    assert c.tcplab and c.ns2, f"{_id(path)}: a side made no connection\n{c.text}"
    sent_a = sum(v["data_segs"] for v in c.tcplab.values())
    sent_b = sum(v["data_segs"] for v in c.ns2.values())
    if _id(path) in DETERMINISTIC:
        assert set(c.tcplab) == set(c.ns2) and c.core, c.text
    else:
        # As statistics (each side's own draws: connections that open in the first seconds, sizes,
        # RED's drops): connections and data segments within a factor of 1.5 of each other.
        assert 2 / 3 <= len(c.tcplab) / len(c.ns2) <= 1.5, c.text
    assert sent_a > 0 and sent_b > 0 and 2 / 3 <= sent_a / sent_b <= 1.5, c.text
