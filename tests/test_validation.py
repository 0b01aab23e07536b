"""The validation boundary (issue 20): the issue's reproducers through the Python front, each
refused as a ScenarioError with its key path and the exact words, from a TOML file, a --set, a
dict and a sweep axis alike."""

from __future__ import annotations

import math
import subprocess
import sys
import time

import pytest

import tcplab

PROB = "expected a probability, a finite number from 0 to 1"
WHOLE = "expected a whole number from 0 to 4294967295"
SIZE = 'expected a size in bytes or with a unit, such as "16KB"'


def refusal(scenario, sets=()) -> tcplab.ScenarioError:
    with pytest.raises(tcplab.ScenarioError) as ei:
        tcplab.validate(scenario, sets=list(sets))
    e = ei.value
    assert str(e) == (f"{e.path}: {e.reason}" if e.path else e.reason)
    return e


@pytest.mark.parametrize(
    "set_, path, reason",
    [
        ("topology.loss=nan", "topology.loss", f"{PROB}, got nan"),
        ("topology.loss=inf", "topology.loss", f"{PROB}, got inf"),
        ("tcp.mss=nan", "tcp.mss", f"{SIZE}, got nan (not a finite number)"),
        ("flows.0.tcp.mss=nan", "flows[0].tcp.mss", f"{SIZE}, got nan (not a finite number)"),
        ("tcp.initial_window=nan", "tcp.initial_window",
         'expected a number of segments (at least 1), "rfc3390", "rfc6928", a size such as "4KB", or { segments = n, bytes = "4KB" }, got nan'),
        ("tcp.rto_backoff=nan", "tcp.rto_backoff", "expected a finite multiplier from 1 to 1000, got nan"),
        ("tcp.abc=nan", "tcp.abc", f"{WHOLE}, got nan"),
        ("tcp.dupthresh=nan", "tcp.dupthresh", f"{WHOLE}, got nan"),
        ("tcp.sack_blocks=nan", "tcp.sack_blocks", f"{WHOLE}, got nan"),
        ("duration=nan", "duration", 'expected a duration with a unit, such as "35ms" or "1.5s", got nan (not a finite number)'),
        ("topology.queue={packets=nan}", "topology.queue.packets", "expected a whole number from 0 to 9223372036854775807, got nan"),
        ("tcp.profile=inf", "tcp.profile", "expected a string, got inf"),
    ],
)
def test_non_finite_overrides_are_refused_by_key(small_toml, set_, path, reason):
    e = refusal(small_toml, [set_])
    assert (e.path, e.reason) == (path, reason)


def test_non_finite_in_a_toml_file(tmp_path, small_toml):
    p = tmp_path / "nan.toml"
    p.write_text(small_toml.replace('delay = "35ms"', 'delay = "35ms"\nloss = nan'))
    e = refusal(p)
    assert (e.path, e.reason) == ("topology.loss", f"{PROB}, got nan")
    p.write_text(small_toml.replace('delay = "35ms"', 'delay = "35ms"\nloss = -inf'))
    assert refusal(p).reason == f"{PROB}, got -inf"


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_non_finite_in_a_dict_names_the_key_not_the_json(small_dict, value):
    small_dict["topology"]["loss"] = value
    with pytest.raises(tcplab.ScenarioError) as ei:
        tcplab.run(small_dict)
    shown = {"nan": "nan", "inf": "inf", "-inf": "-inf"}[repr(value)]
    assert (ei.value.path, ei.value.reason) == ("topology.loss", f"{PROB}, got {shown}")
    assert "invalid JSON" not in str(ei.value)


def test_non_finite_in_a_sweep_is_refused_by_key(small_dict):
    from tcplab.sweep import SweepError, expand, parse_spec

    # An axis value: the sweep refuses it by its axis before any run.
    with pytest.raises(SweepError, match="sweep.axes.topology.loss: nan is not a finite number"):
        parse_spec(small_dict, sweep={"axes": {"topology.loss": [0.0, math.nan]}})
    # A NaN in the base dict reaches the core as JSON `NaN` and is refused there by key.
    small_dict["topology"]["reverse_loss"] = math.nan
    spec = parse_spec(small_dict, sweep={"axes": {"topology.loss": [0.0, 0.1]}})
    errors = {t.error for t in expand(spec)}
    assert errors == {f"ScenarioError: topology.reverse_loss: {PROB}, got nan"}


def test_derived_times_that_overflow(small_toml):
    e = refusal(small_toml, ["flows.0.count=10", 'flows.0.start_spacing="4e18ns"'])
    assert e.path == "flows[0].start_spacing"
    assert e.reason == (
        "flow 10 of this entry would start at 36000000000000000000 ns, which is beyond the largest simulated time "
        "(2^62 ns, about 146 years); keys: flows[0].start = 0s, flows[0].count = 10, flows[0].start_spacing = 4000000000s"
    )
    e = refusal(small_toml, ["flows.0.repeat=6", 'flows.0.think="4.6e18ns"'])
    assert e.path == "flows[0].think"
    assert e.reason == (
        "the 5 thinks between its 6 transfers add up to 23000000000000000000 ns, so the last transfer would start after "
        "23000000000000000000 ns, which is beyond the largest simulated time (2^62 ns, about 146 years); "
        "keys: flows[0].think = 4600000000s, flows[0].repeat = 6, flows[0].start = 0s"
    )


def test_flow_starts_are_as_specified_up_to_the_limit(small_toml):
    s = tcplab.validate(small_toml, sets=["flows.0.count=3", 'flows.0.start_spacing="1s"', 'flows.0.start="2s"'])
    assert s["flows"][0]["start"] == "2s"
    r = tcplab.run(small_toml, sets=["flows.0.count=3", 'flows.0.start_spacing="1s"', 'flows.0.start="2s"', 'flows.0.bytes=1000'])
    assert list(r.connections["start_s"]) == [2.0, 3.0, 4.0]


def test_a_huge_dumbbell_is_refused_quickly_and_the_interpreter_survives():
    # In a child interpreter, so that a regression (an abort) fails this test instead of the run.
    code = """
import time, tcplab
t0 = time.perf_counter()
try:
    tcplab.run({"topology": {"kind": "dumbbell", "pairs": 2147483648, "access_rate": "100Mbps", "access_delay": "1ms",
                              "bottleneck_rate": "10Mbps", "bottleneck_delay": "10ms"},
                "flows": [{"from": "s1", "to": "r1", "bytes": 1000}]})
except tcplab.ScenarioError as e:
    print(e.path, round(time.perf_counter() - t0, 3))
    print(e.reason)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    head, reason = out.stdout.splitlines()[:2]
    path, seconds = head.split()
    assert path == "topology.pairs" and float(seconds) < 1.0
    assert reason == (
        "4294967298 nodes is more than a world can index (4294967295); estimate: 4294967298 nodes, 8589934594 link "
        "directions, 1 flows, 1 transfers, routing 16 B; driven by topology.pairs = 2147483648"
    )


def test_the_memory_limit_is_settable(small_dict, monkeypatch):
    small_dict["topology"] = {"kind": "dumbbell", "pairs": 50, "access_rate": "100Mbps", "access_delay": "1ms",
                              "bottleneck_rate": "10Mbps", "bottleneck_delay": "10ms"}
    small_dict["flows"][0].update({"from": "s1", "to": "r1"})
    tcplab.validate(small_dict)
    monkeypatch.setenv("TCPLAB_MAX_MEMORY", "64KB")
    e = refusal(small_dict)
    assert e.path == "topology.pairs"
    assert e.reason.startswith("the world would take about ")
    assert "above the limit of 64.0 KiB (TCPLAB_MAX_MEMORY)" in e.reason
    monkeypatch.setenv("TCPLAB_MAX_MEMORY", "lots")
    assert refusal(small_dict).path == "TCPLAB_MAX_MEMORY"


def test_a_filter_for_transfer_zero(small_toml):
    e = refusal(small_toml, ['flows.0.drops=[{kind = "syn", transfer = 0}]'])
    assert (e.path, e.reason) == ("flows[0].drops[0].transfer", "expected a transfer number from 1 (transfers count from 1)")


def test_a_lone_surrogate_is_a_scenario_error(small_toml, small_dict):
    lone = "expected text, got a lone surrogate \\ud800 (not a Unicode character)"
    e = refusal(small_toml, ["flows.0.name=\ud800"])
    assert (e.path, e.reason) == ("flows[0].name", lone)
    with pytest.raises(tcplab.ScenarioError) as ei:
        tcplab.run(small_toml, sets=["flows.0.name=\ud800"])
    assert ei.value.path == "flows[0].name"
    small_dict["flows"][0]["name"] = "x\udfff"
    e = refusal(small_dict)
    assert (e.path, e.reason) == ("flows[0].name", lone.replace("d800", "dfff"))
    e = refusal(small_toml.replace('name = "f"', 'name = "\ud800"'))
    assert (e.path, e.reason) == ("", "invalid TOML (line 9, column 9): " + lone)


def test_dict_values_json_cannot_hold_are_refused_by_key(small_dict):
    small_dict["flows"][0]["bytes"] = {1, 2}
    e = refusal(small_dict)
    assert (e.path, e.reason) == ("flows[0].bytes", "expected a string, a number, a boolean, a table or an array, got set")


def test_a_file_that_is_not_utf8(tmp_path):
    p = tmp_path / "bad.toml"
    p.write_bytes(b'name = "\xff"\n')
    e = refusal(p)
    assert e.path == "" and e.reason == f"invalid TOML: {p} is not UTF-8 text (byte 8)"


def test_null_in_a_dict_means_not_given(small_dict):
    small_dict["duration"] = None
    assert "duration" not in tcplab.validate(small_dict)
    small_dict["flows"] = [None]
    e = refusal(small_dict)
    assert (e.path, e.reason) == ("flows[0]", "expected a value, got null")
