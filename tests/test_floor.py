"""The kernel against itself (python/tcplab/testbed/floor.py): each experiment's measure between
kept runs and between the simulator and each run. No real stack: the "kernel runs" here are
directories laid out as the experiments keep them, their captures and samples made by the
simulator (one of them on a longer path, or with another window), so that each figure is known."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

import tcplab
from tcplab.testbed import floor, simulate
from tcplab.testbed.lab import TestbedError as BedError
from tcplab.testbed import exp_cwnd as ec
from tcplab.testbed import exp_ecn as ee

PORT = 10000  # the testbed's and the simulator's client port


def drops_case(run: Path, name: str, scen: dict, real_scen: dict) -> None:
    """A `drops` case directory as the experiment keeps it: testbed.json with `scen`, and a sender
    capture made by simulating `real_scen` (the "kernel")."""
    d = run / "drops" / name
    d.mkdir(parents=True)
    simulate(real_scen, d, ["sender"])
    (d / "sim-sender.pcap").rename(d / "real-sender.pcap")
    (d / "testbed.json").write_text(json.dumps({"scenario": scen, "sets": [], "connections": [{"sport": PORT}]}))


def drops_scenario(delay_ms: float) -> dict:
    return {"name": "drops-10Mbps-seg5", "topology": {"kind": "single_link", "rate": "10Mbps", "delay": f"{delay_ms:g}ms", "queue": 2000},
            "tcp": {"profile": "linux"}, "flows": [{"bytes": 300 * 1448, "drops": [{"kind": "data", "segment": 5}]}]}


def test_drops_the_kernel_against_itself_and_the_simulator_against_each_run(tmp_path):
    """Run 0 is the simulator's own capture (every segment the same and on time), run 1 a copy of
    it, run 2 a path 5 ms longer each way (the same segments, later than the tolerance's 1 ms)."""
    scen = drops_scenario(10)
    runs = [tmp_path / f"r{i}" for i in range(3)]
    drops_case(runs[0], "10Mbps-20ms-seg5", scen, scen)
    shutil.copytree(runs[0], runs[1])
    drops_case(runs[2], "10Mbps-20ms-seg5", scen, drops_scenario(15))
    res = floor.drops(runs, n=300)
    c = res["cases"]["10Mbps-20ms-seg5"]
    assert c["kernel_kernel"]["0-1"]["ok"] and c["kernel_kernel"]["0-1"]["timed"] == 300
    k02 = c["kernel_kernel"]["0-2"]
    assert not k02["ok"] and k02["first_diff"] is None and k02["late"] is not None and k02["worst_dt_ms"] > 10
    assert [x["ok"] for x in c["sim_kernel"]] == [True, True, False]
    s = res["summary"]
    assert s["kernel_kernel"]["0-1"]["ok"] == 1 and s["kernel_kernel"]["0-2"]["ok"] == 0 and s["kernel_kernel"]["1-2"]["ok"] == 0
    assert [x["ok"] for x in s["sim_kernel"]] == [1, 1, 0] and s["kernel_repeats"] == 0 and s["sim_always"] == 0
    # Runs 0 and 1 alone: the kernel repeats itself, and the simulator matches both.
    two = floor.drops(runs[:2], n=300)["summary"]
    assert two["kernel_repeats"] == 1 and two["sim_matches_there"] == 1 and two["sim_misses_where_kernel_repeats"] == []
    # Runs 1 and 2 with 2's capture as run 0's too: the kernel repeats (the late path, twice), the
    # simulator matches neither: a miss where the kernel repeats.
    shutil.copytree(runs[2], tmp_path / "r3")
    late = floor.drops([runs[2], tmp_path / "r3"], n=300)
    assert late["summary"]["sim_misses_where_kernel_repeats"] == ["10Mbps-20ms-seg5"]
    assert "The kernel repeats itself (within the tolerance in every pair of its runs) in 1 of 1 cases; the simulator matches every run in 0 of them (not in 10Mbps-20ms-seg5)." in floor.report(late)
    # The second capture's connection is found by its own port (two kernel runs' client ports
    # may differ): a port it does not have finds nothing.
    from tcplab.testbed import segmatch

    cap = runs[0] / "drops" / "10Mbps-20ms-seg5" / "real-sender.pcap"
    assert segmatch.match(cap, cap, PORT, n=50, port_b=PORT).ok
    other = segmatch.match(cap, cap, PORT, n=50, port_b=PORT + 1)
    assert other.real_n == 50 and other.sim_n == 0 and not other.ok
    text = floor.report(res)
    assert "| kernel run 1 against kernel run 2 | 1 of 1 | 1 | 300 of 300 |" in text
    assert "| simulator against kernel run 3 | 0 of 1 |" in text


def test_drops_refuses_what_is_not_the_same_case(tmp_path):
    runs = [tmp_path / "a", tmp_path / "b"]
    drops_case(runs[0], "c", drops_scenario(10), drops_scenario(10))
    drops_case(runs[1], "c", drops_scenario(12), drops_scenario(12))
    with pytest.raises(BedError, match=r"drops/c: the runs' scenarios or sets differ"):
        floor.drops(runs)
    with pytest.raises(BedError, match="two runs of the experiment or more, got 1"):
        floor.drops(runs[:1])
    with pytest.raises(BedError, match=r"no cwnd/ directory"):
        floor.cwnd(runs)
    (tmp_path / "e" / "drops" / "other").mkdir(parents=True)
    (tmp_path / "e" / "drops" / "other" / "testbed.json").write_text("{}")
    with pytest.raises(BedError, match="no case of drops/ with testbed.json is in every run"):
        floor.drops([runs[0], tmp_path / "e"])


def cwnd_run(run: Path, seed: int, nseg: int, scale: float) -> None:
    """A `cwnd` run directory: scenario.json, the "kernel's" capture and its `ss` samples, both
    from the simulator, the window multiplied by `scale`."""
    d = run / "cwnd" / f"loss-10Mbps-20ms-s{seed}"
    d.mkdir(parents=True)
    scen = ec.scenario("loss", "10Mbps", 20, seed, nseg, 1448)
    r = tcplab.run(scen, seed=seed, series="tcp", pcap=d / "real-sender.pcap")
    t, c, _, _ = ec.sim_window(r.series.tcp, 1448)
    # `ss` samples: wall-clock seconds (the capture's clock), cwnd in packets, no ssthresh.
    (d / "ss.tsv").write_text("".join(f"{x:.6f}\t{round(y * scale)}\t\n" for x, y in zip(t, c)))
    (d / "scenario.json").write_text(json.dumps({"scenario": scen, "seed": seed, "payload": 1448, "variant": "loss", "rate": "10Mbps",
                                                 "rtt_ms": 20, "segments": nseg}))


def test_cwnd_window_errors_between_runs_and_against_the_simulator(tmp_path):
    """The same window in runs 0 and 1 (0 %), twice the window in run 2: run 2 against run 0 is
    |2w − w|/w = 100 %, the simulator against run 2 |w − 2w|/2w = 50 %. The transfer's length
    may differ between runs (each run is as long as its day's simulator acknowledged in 10 s)."""
    runs = [tmp_path / f"r{i}" for i in range(3)]
    cwnd_run(runs[0], 1, 400, 1)
    cwnd_run(runs[1], 1, 400, 1)
    cwnd_run(runs[2], 1, 401, 2)
    res = floor.cwnd(runs)
    cell = res["cells"]["loss-10Mbps-20ms"]
    assert cell["seeds"] == 1
    assert cell["kernel_kernel"] == {"0-1": 0.0, "0-2": pytest.approx(1.0), "1-2": pytest.approx(1.0)}
    assert cell["sim_kernel"][:2] == [0.0, 0.0] and cell["sim_kernel"][2] == pytest.approx(0.5)
    case = res["cases"]["loss-10Mbps-20ms-s1"]
    assert case["kernel_kernel"]["0-1"]["goodput_ratio"] == 1.0 and case["kernel_kernel"]["0-1"]["points"] > 50
    assert cell["kernel_repeats"] == 0 and cell["sim_matches_there"] == 0  # run 2 parts from runs 0 and 1
    assert "| loss-10Mbps-20ms | 1 | 0.0 % | 100.0 % | 100.0 % | 0.0 % | 0.0 % | 50.0 % | 0 | 0 |" in floor.report(res)
    two = floor.cwnd(runs[:2])["cells"]["loss-10Mbps-20ms"]
    assert two["kernel_repeats"] == 1 and two["sim_matches_there"] == 1
    # A run the experiment's table leaves out (the kernel not sampled) is left out here too.
    cwnd_run(tmp_path / "n", 1, 400, 1)
    (tmp_path / "n" / "cwnd" / "loss-10Mbps-20ms-s1" / "ss.tsv").write_text("")
    res = floor.cwnd([runs[0], tmp_path / "n"])
    assert res["cases"]["loss-10Mbps-20ms-s1"]["invalid_runs"] == [1] and res["cases"]["loss-10Mbps-20ms-s1"]["kernel_kernel"]["0-1"] is None
    assert res["cells"]["loss-10Mbps-20ms"]["kernel_kernel"]["0-1"] is None and res["cells"]["loss-10Mbps-20ms"]["sim_kernel"] == [0.0, None]
    assert "1 kernel runs left out" in floor.report(res)
    # Another seed is another case: the drop patterns differ.
    cwnd_run(tmp_path / "x", 1, 400, 1)
    (tmp_path / "x" / "cwnd" / "loss-10Mbps-20ms-s1" / "scenario.json").write_text(
        json.dumps({**json.loads((runs[0] / "cwnd" / "loss-10Mbps-20ms-s1" / "scenario.json").read_text()), "seed": 2}))
    with pytest.raises(BedError, match="scenarios or seeds differ"):
        floor.cwnd([runs[0], tmp_path / "x"])


def test_cwnd_hystart_exit_and_goodput_between_runs_and_against_the_simulator(tmp_path):
    """Seed 2: the simulator leaves slow start by HyStart at 30 packets. The "kernel's" HyStart
    counters (the window at the detection): 30 in runs 0 and 1, 31 in run 2 (within ±1 of both),
    35 in run 3; run 4 has none (it left slow start by a loss)."""
    runs = [tmp_path / f"r{i}" for i in range(5)]
    for r, cw in zip(runs, (30, 30, 31, 35, None)):
        cwnd_run(r, 2, 400, 1)
        counters = {"TCPHystartTrainDetect": 1, "TCPHystartTrainCwnd": cw} if cw else {"TCPHystartTrainDetect": 0}
        (r / "cwnd" / "loss-10Mbps-20ms-s2" / "hystart.json").write_text(json.dumps(counters))
    res = floor.cwnd(runs)
    h = res["cases"]["loss-10Mbps-20ms-s2"]["hystart"]
    assert h["kernel"] == [30, 30, 31, 35, None] and h["sim"] == 30
    assert h["sim_kernel"] == [True, True, True, False, False]
    assert h["kernel_kernel"]["0-1"] is True and h["kernel_kernel"]["0-2"] is True and h["kernel_kernel"]["2-3"] is False
    assert h["kernel_kernel"]["3-4"] is False
    cell = res["cells"]["loss-10Mbps-20ms"]
    assert cell["hystart"]["seeds"] == 1 and cell["hystart"]["kernel_kernel"]["0-1"] == [1, 1] and cell["hystart"]["kernel_kernel"]["0-3"] == [0, 1]
    assert cell["hystart"]["sim_kernel"] == [[1, 1], [1, 1], [1, 1], [0, 1], [0, 1]]
    assert cell["hystart"]["kernel_repeats"] == 0
    three = floor.cwnd(runs[:3])["cells"]["loss-10Mbps-20ms"]["hystart"]
    assert three["kernel_repeats"] == 1 and three["sim_matches_there"] == 1 and three["sim_misses_where_kernel_repeats"] == []
    # Runs 3 and 3 again: the kernel repeats itself at 35, the simulator misses there.
    shutil.copytree(runs[3], tmp_path / "r3b")
    miss = floor.cwnd([runs[3], tmp_path / "r3b"])["cells"]["loss-10Mbps-20ms"]["hystart"]
    assert miss["kernel_repeats"] == 1 and miss["sim_misses_where_kernel_repeats"] == ["s2"]
    # Goodput: the same captures everywhere, all within the goal.
    g = cell["goodput"]
    assert g["kernel_kernel"]["0-1"] == [1, 1] and g["sim_kernel"][0] == [1, 1] and g["kernel_repeats"] == 1
    assert floor._count([{"goodput_ratio": 1.02}, {"goodput_ratio": 0.96}, None], floor._goodput_ok) == [1, 2]
    text = floor.report(res)
    assert "HyStart's exit: the seeds where both sides leave slow start alike" in text
    assert "Goodput: the seeds within 3 % of the reference run's" in text
    # Pairs 0-1, 0-2, 0-3, 0-4, ..., then the simulator against runs 0 to 4, and the repeats.
    assert "| loss-10Mbps-20ms | 1 | 1 of 1 | 1 of 1 | 0 of 1 | 0 of 1 |" in text
    assert "| 1 of 1 | 1 of 1 | 1 of 1 | 0 of 1 | 0 of 1 | 0 | 0 |" in text


def cwnd_run_on_path(run: Path, seed: int, nseg: int, delay: str, queue_drops: int = 0) -> None:
    """A `cwnd` run directory whose "kernel" ran on a path of one-way delay `delay` (the case's is
    10 ms): its captures at both hosts, its `ss` samples, and the box's statistics with
    `queue_drops` queue drops."""
    d = run / "cwnd" / f"loss-10Mbps-20ms-s{seed}"
    d.mkdir(parents=True)
    scen = ec.scenario("loss", "10Mbps", 20, seed, nseg, 1448)
    real = dict(scen, topology=dict(scen["topology"], delay=delay))
    r = simulate(real, d, ["sender", "receiver"], seed=seed, series="tcp")
    for h in ("sender", "receiver"):
        (d / f"sim-{h}.pcap").rename(d / f"real-{h}.pcap")
    t, c, ss, state = ec.sim_window(r.series.tcp, 1448)
    (d / "ss.tsv").write_text("".join(f"{x:.6f}\t{y}\t\n" for x, y in zip(t, c)))
    (d / "scenario.json").write_text(json.dumps({"scenario": scen, "seed": seed, "payload": 1448, "variant": "loss", "rate": "10Mbps",
                                                 "rtt_ms": 20, "segments": nseg}))
    # The "kernel's" HyStart counters: its own exit by HyStart, if it left slow start that way.
    hy = ec.sim_hystart_exit(t, c, ss, state)
    by = bool(hy and hy["by_hystart"])
    (d / "hystart.json").write_text(json.dumps({"TCPHystartTrainDetect": int(by), "TCPHystartTrainCwnd": hy["ssthresh"] if by else 0}))
    (d / "box-stats.json").write_text(json.dumps({"links": [{"dropped": queue_drops}, {"dropped": 0}]}))


def test_cwnd_calibrated_to_each_runs_measured_path(tmp_path, monkeypatch):
    """Both "kernel" runs on a path 0.5 ms longer each way than the case's, which the measure of
    the path's excess reports (`pathexcess.median_excess_ms`, stood in for here: the simulator's
    own captures are stamped where a host's capture is not, so they are not a real path's): the
    simulator on the measured path is each run exactly (window error 0, the same goodput), where
    the plain simulator is not. A run whose box dropped from its queue is not calibrated (the
    excess model is a FIFO of the packets both ends saw)."""
    from tcplab.testbed import pathexcess

    seen = []

    def excess(sender, receiver, rate_bps, delay_s, ts=True):
        seen.append((Path(sender).name, Path(receiver).name, rate_bps, delay_s))
        return {"forward_ms": 0.5, "reverse_ms": 0.5, "one_way_ms": 0.5, "forward_n": 1, "reverse_n": 1}

    monkeypatch.setattr(pathexcess, "median_excess_ms", excess)
    runs = [tmp_path / "a", tmp_path / "b"]
    for r in runs:
        cwnd_run_on_path(r, 2, 400, "10.5ms")
    res = floor.cwnd(runs)
    assert seen == [("real-sender.pcap", "real-receiver.pcap", 10_000_000, 0.01)] * 2
    c = res["cases"]["loss-10Mbps-20ms-s2"]
    for cal in c["calibrated"]:
        assert cal["one_way_ms"] == pytest.approx(0.5, abs=0.01)
        assert cal["window"]["median"] == 0.0 and cal["window"]["goodput_ratio"] == pytest.approx(1.0, abs=1e-6)
        assert cal["hystart"] is True
    assert c["sim_kernel"][0]["goodput_ratio"] > 1.001  # the plain simulator: a shorter path, a faster transfer
    cell = res["cells"]["loss-10Mbps-20ms"]["calibrated"]
    assert cell["runs_measured"] == [1, 1] and cell["goodput"] == [[1, 1], [1, 1]] and cell["window_misses"] == []
    assert cell["window_repeats"] == 1 and cell["goodput_repeats"] == 1
    assert "Calibrated, shown apart" in floor.report(res)
    # The box dropped from its queue in a third run: that run is not calibrated.
    cwnd_run_on_path(tmp_path / "c", 2, 400, "10.5ms", queue_drops=3)
    three = floor.cwnd(runs + [tmp_path / "c"])
    assert three["cases"]["loss-10Mbps-20ms-s2"]["calibrated"][2] is None
    assert three["cells"]["loss-10Mbps-20ms"]["calibrated"]["runs_measured"] == [1, 1, 0]
    # Box statistics that are not the box's: the error names the file.
    (tmp_path / "c" / "cwnd" / "loss-10Mbps-20ms-s2" / "box-stats.json").write_text("[1, 2]")
    with pytest.raises(BedError, match=r"box-stats.json: not the delay box's statistics"):
        floor.cwnd(runs + [tmp_path / "c"])


def test_cwnd_goodput_misses_and_what_is_not_compared(tmp_path):
    """Two runs on the case's own path and one on a path 5 ms longer each way: the slower run's
    goodput is more than 3 % from the others' and from the simulator's, so the seed is not one
    the kernel repeats. A run without its HyStart counters is not compared on HyStart's exit, nor
    is a run without its box statistics calibrated."""
    runs = [tmp_path / f"r{i}" for i in range(3)]
    cwnd_run_on_path(runs[0], 2, 400, "10ms")
    cwnd_run_on_path(runs[1], 2, 400, "10ms")
    cwnd_run_on_path(runs[2], 2, 400, "15ms")
    res = floor.cwnd(runs)
    c = res["cases"]["loss-10Mbps-20ms-s2"]
    assert c["kernel_kernel"]["0-1"]["goodput_ratio"] == pytest.approx(1.0, abs=1e-6)
    assert c["kernel_kernel"]["0-2"]["goodput_ratio"] < 0.97 and c["sim_kernel"][2]["goodput_ratio"] > 1.03
    g = res["cells"]["loss-10Mbps-20ms"]["goodput"]
    assert g["kernel_kernel"] == {"0-1": [1, 1], "0-2": [0, 1], "1-2": [0, 1]} and g["sim_kernel"] == [[1, 1], [1, 1], [0, 1]]
    assert g["kernel_repeats"] == 0
    two = floor.cwnd(runs[:2])["cells"]["loss-10Mbps-20ms"]["goodput"]
    assert two["kernel_repeats"] == 1 and two["sim_misses_where_kernel_repeats"] == []
    # Run 1 without its HyStart counters, run 2 without its box statistics.
    (runs[1] / "cwnd" / "loss-10Mbps-20ms-s2" / "hystart.json").unlink()
    (runs[2] / "cwnd" / "loss-10Mbps-20ms-s2" / "box-stats.json").unlink()
    res = floor.cwnd(runs)
    h = res["cases"]["loss-10Mbps-20ms-s2"]["hystart"]
    assert h["kernel_known"] == [True, False, True] and h["sim_kernel"][1] is None
    assert h["kernel_kernel"]["0-1"] is None and h["kernel_kernel"]["1-2"] is None and h["kernel_kernel"]["0-2"] is not None
    assert res["cells"]["loss-10Mbps-20ms"]["hystart"]["seeds"] == 0  # not every run tells its exit
    assert res["cases"]["loss-10Mbps-20ms-s2"]["calibrated"][2] is None


def ecn_run(run: Path, k_real: int) -> None:
    """An `ecn` case directory: testbed.json with the K = 20 case, the "kernel's" capture and
    window from the simulator with the threshold at `k_real`."""
    scen = ee.scenario("cubic", 20, "10Mbps", 20, "1MB")
    d = run / "ecn" / "cubic-K20-10Mbps-20ms"
    d.mkdir(parents=True)
    real = ee.scenario("cubic", k_real, "10Mbps", 20, "1MB")
    res = simulate(real, d, ["sender"], series=True)
    (d / "sim-sender.pcap").rename(d / "real-sender.pcap")
    facts = ee.capture_facts(d / "real-sender.pcap")
    tcp = res.series.tcp
    tcp = tcp[tcp["dir"] == "a2b"]
    (d / "cwnd-real.tsv").write_text("".join(f"{float(t) - facts['t0']:.6f}\t{int(c) / 1448:.2f}\n" for t, c in zip(tcp["time_s"], tcp["cwnd"])))
    (d / "testbed.json").write_text(json.dumps({"scenario": scen, "sets": [], "connections": [{"sport": PORT}]}))
    (d / "ecn.json").write_text("{}")


def test_ecn_reductions_paired_between_runs_and_against_the_simulator(tmp_path):
    runs = [tmp_path / "a", tmp_path / "b", tmp_path / "c"]
    ecn_run(runs[0], 20)
    ecn_run(runs[1], 20)
    ecn_run(runs[2], 60)  # a later first reduction, another sawtooth
    res = floor.ecn(runs)
    c = res["cases"]["cubic-K20-10Mbps-20ms"]
    same = c["kernel_kernel"]["0-1"]
    assert same["ok"] and same["reductions"][0] == same["reductions"][1] == same["paired"] == same["within_1rtt"] > 0
    assert same["cwnd_median"] == 0.0
    assert not c["kernel_kernel"]["0-2"]["ok"]
    assert [x["ok"] for x in c["sim_kernel"]] == [True, True, False]
    assert res["summary"]["kernel_kernel"] == {"0-1": 1, "0-2": 0, "1-2": 0} and res["summary"]["sim_kernel"] == [1, 1, 0]
    assert "| kernel run 1 against kernel run 2 | 1 of 1 |" in floor.report(res) and "| simulator against kernel run 3 | 0 of 1 |" in floor.report(res)
    # A stalled attempt kept beside a case (exp_ecn.run_case_quiet) is not a case of its own.
    for r in runs:
        shutil.copytree(r / "ecn" / "cubic-K20-10Mbps-20ms", r / "ecn" / "cubic-K20-10Mbps-20ms.stalled1")
    assert list(floor.ecn(runs)["cases"]) == ["cubic-K20-10Mbps-20ms"]


def test_the_floor_command(tmp_path):
    from tcplab.cli import main as cli

    scen = drops_scenario(10)
    runs = [tmp_path / "r0", tmp_path / "r1"]
    drops_case(runs[0], "c", scen, scen)
    shutil.copytree(runs[0], runs[1])
    out = CliRunner().invoke(cli, ["testbed", "floor", "drops", str(runs[0]), str(runs[1]), "--json", str(tmp_path / "f.json")])
    assert out.exit_code == 0, out.output
    assert "| kernel run 1 against kernel run 2 | 1 of 1 |" in out.output
    assert json.loads((tmp_path / "f.json").read_text())["summary"]["cases"] == 1
    bad = CliRunner().invoke(cli, ["testbed", "floor", "drops", str(runs[0])])
    assert bad.exit_code == 2 and "error: the floor needs two runs of the experiment or more, got 1" in bad.output
    # A kept case without its capture: the error names the file, no traceback.
    (runs[1] / "drops" / "c" / "real-sender.pcap").unlink()
    bad = CliRunner().invoke(cli, ["testbed", "floor", "drops", str(runs[0]), str(runs[1])])
    assert bad.exit_code == 2 and bad.output.startswith("error: ") and "real-sender.pcap" in bad.output, bad.output
    bad = CliRunner().invoke(cli, ["testbed", "floor", "loss", str(runs[0]), str(runs[1])])
    assert bad.exit_code == 2 and "'loss' is not one of" in bad.output


GAINS = {"startup": (739 / 256, 739 / 256), "drain": (88 / 256, 739 / 256), "probe_bw": (1.0, 2.0), "probe_rtt": (1.0, 1.0)}


def bbr_run(run: Path, shift_s: float, bw_scale: float) -> None:
    """A `bbr` run directory whose "kernel" is the simulator: its `ss` rows every 10 ms from the
    simulated series (the gains of each mode, the bandwidth estimate times `bw_scale`), stamped
    `shift_s` later than the capture's clock."""
    from tcplab.testbed import exp_bbr as eb
    from tcplab.testbed import tsphase

    d = run / "bbr" / "clean-10Mbps-40ms"
    d.mkdir(parents=True)
    nseg = eb.transfer_segments("clean", "10Mbps", 40, 1448, 3.0)
    scen = eb.scenario("clean", "10Mbps", 40, nseg, 1448)
    r = tcplab.run(scen, seed=eb.LOSS_SEED, series="tcp", pcap=d / "real-sender.pcap")
    t = r.series.tcp
    t = t[t["dir"] == "a2b"]
    s0 = tsphase.syn_time(d / "real-sender.pcap")
    rows, j, times = [], 0, [float(x) for x in t["time_s"]]
    for k in range(int((times[-1] - s0) / 0.01)):
        g = s0 + k * 0.01
        while j + 1 < len(times) and times[j + 1] <= g:
            j += 1
        mode = str(t["bbr_mode"].iloc[j])
        pg, cg = GAINS[mode]
        bw = float(t["bbr_bw"].iloc[j]) * bw_scale
        pr = t["pacing_rate"].iloc[j]
        rows.append(f"{g + shift_s:.6f}\t{int(t['cwnd'].iloc[j]) // 1448}\t{bw}\t40.0\t{pg}\t{cg}\t{float(pr) * bw_scale if str(pr) not in ('<NA>', 'nan') else ''}\n")
    (d / "ss.tsv").write_text("".join(rows))
    (d / "scenario.json").write_text(json.dumps({"scenario": scen, "payload": 1448, "variant": "clean", "rate": "10Mbps", "rtt_ms": 40, "segments": nseg}))


def test_bbr_mode_changes_and_estimates_between_runs(tmp_path):
    """Runs 0 and 1 the same (every change within a round trip, the estimates equal); run 2's
    samples 0.1 s late (2.5 round trips) with a bandwidth estimate 10 % high: neither its mode
    changes nor its estimates meet the goal against the others or the simulator."""
    runs = [tmp_path / "a", tmp_path / "b", tmp_path / "c"]
    bbr_run(runs[0], 0.0, 1.0)
    bbr_run(runs[1], 0.0, 1.0)
    bbr_run(runs[2], 0.1, 1.1)
    res = floor.bbr(runs)
    c = res["cases"]["clean-10Mbps-40ms"]
    same = c["kernel_kernel"]["0-1"]
    assert same["ok"] and same["changes"] >= 2 and same["within_1rtt"] == same["changes"] and same["bw_error"] == 0.0
    assert same["sequence"][0] == same["sequence"][1] and same["sequence"][0].startswith("SDB")
    late = c["kernel_kernel"]["0-2"]
    assert not late["ok"] and late["within_1rtt"] < late["changes"] and late["bw_error"] == pytest.approx(0.1, abs=0.005)
    assert [x["ok"] for x in c["sim_kernel"]] == [True, True, False]
    assert res["summary"]["kernel_kernel"]["0-1"]["ok"] == 1 and res["summary"]["sim_kernel"][2]["ok"] == 0
    assert "| kernel run 1 against kernel run 2 | 1 of 1 |" in floor.report(res)


def test_interval_gap_is_zero_on_overlap_and_signed_otherwise():
    assert floor.interval_gap(1.0, 2.0, 1.5, 3.0) == 0.0
    assert floor.interval_gap(1.0, 2.0, 2.5, 3.0) == pytest.approx(0.5)
    assert floor.interval_gap(1.0, 2.0, 0.0, 0.25) == pytest.approx(-0.75)
    assert floor.interval_gap(None, 2.0, None, 1.0) == 0.0
    m = floor.compare_kernel_modes([("startup", None, 0.0), ("drain", 0.9, 1.0), ("probe_bw", 1.1, 1.2)],
                                   [("startup", None, 0.0), ("drain", 1.05, 1.1), ("probe_rtt", 1.3, 1.4)], 0.1)
    assert m["matched"] == 2 and m["same_sequence"] is False and m["a"] == "SDB" and m["b"] == "SDR"
    assert m["changes"] == [{"mode": "drain", "dt_s": pytest.approx(0.05), "dt_rtt": pytest.approx(0.5)}] and m["within_1rtt"] == 1


def test_experiments_repeated_write_the_floor(tmp_path, monkeypatch):
    """`run_all(..., repeat=2)` runs each experiment twice (out/run1, out/run2) and measures the
    kernel against itself: an experiment whose runs are the simulator's own captures here."""
    from tcplab.testbed import experiments

    calls = []

    def fake_drops(out, quick):
        calls.append(Path(out).name)
        drops_case(Path(out), "10Mbps-20ms-seg5", drops_scenario(10), drops_scenario(10))
        return "fake", {"summary": {}}

    monkeypatch.setitem(experiments.EXPERIMENTS, "drops", fake_drops)
    md = experiments.run_all(tmp_path, only=["drops"], repeat=2)
    assert calls == ["run1", "run2"]
    assert "# run 1" in md and "## drops: the kernel against itself" in md
    assert "| kernel run 1 against kernel run 2 | 1 of 1 | 1 |" in (tmp_path / "floor.md").read_text()
    assert json.loads((tmp_path / "floor.json").read_text())["drops"]["summary"]["sim_kernel"][1]["ok"] == 1
    assert (tmp_path / "run2" / "experiments.md").read_text().startswith("## drops")
    # An experiment whose runs cannot be compared: its floor says why, the runs are kept.
    def broken_drops(out, quick):
        drops_case(Path(out), "10Mbps-20ms-seg5", drops_scenario(10), drops_scenario(10))
        (Path(out) / "drops" / "10Mbps-20ms-seg5" / "real-sender.pcap").unlink()
        return "broken", {}

    monkeypatch.setitem(experiments.EXPERIMENTS, "drops", broken_drops)
    md = experiments.run_all(tmp_path / "b", only=["drops"], repeat=2)
    assert "## drops: the kernel against itself\n\nnot measured: " in md and "real-sender.pcap" in md
    assert "error" in json.loads((tmp_path / "b" / "floor.json").read_text())["drops"]
    with pytest.raises(ValueError, match="repeat must be at least 1, got 0"):
        experiments.run_all(tmp_path, only=["drops"], repeat=0)
