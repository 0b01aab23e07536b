"""The Python API: `tcplab.run`, `validate`, `profiles`, `Result`, and the two exception types."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import tcplab
from conftest import EXAMPLES, ONE_WAY_DELAY_S, SMALL_TOML

CONNECTION_COLUMNS = [
    "flow", "name", "src", "dst", "variant", "mss", "delayed_ack", "transfers", "transfers_completed",
    "segs_sent", "bytes_sent", "retransmits", "retransmitted_bytes", "bytes_delivered", "bytes_acked",
    "segs_acked", "timeouts", "fast_retransmits", "ca_events", "non_ca_events", "other_losses",
    "syn_retransmits", "synack_retransmits", "acks_sent", "delack_timeouts", "ooo_segments",
    "dup_segments", "p_ca", "rtt_samples", "rtt_avg_s", "rtt_min_s", "rtt_max_s", "cwnd_max_bytes",
    "cwnd_avg_bytes", "start_s", "first_byte_s", "complete_s", "goodput_bps",
]
LINK_COLUMNS = [
    "link", "src", "dst", "rate_bps", "delay_s", "offered_pkts", "offered_bytes", "sent_pkts",
    "sent_bytes", "dropped_pkts", "dropped_bytes", "dropped_queue", "dropped_loss", "dropped_filter",
    "dropped_red_early", "dropped_red_forced", "drop_rate", "avg_queue_pkts", "avg_queue_bytes",
    "max_queue_pkts", "red_avg_mean", "avg_queue_delay_s", "queue_delay_equiv_s", "utilization",
]
TRANSFER_COLUMNS = [
    "flow", "name", "transfer", "bytes", "bytes_delivered", "start_s", "established_s", "first_byte_s",
    "delivered_s", "acked_s", "transfer_time_s", "segs_sent", "retransmits", "timeouts",
    "fast_retransmits", "syn_retransmits", "synack_retransmits", "delack_timeouts", "aborted",
]
TCP_KNOBS = {
    "variant", "mss", "initial_window", "initial_ssthresh", "rwnd", "dupthresh", "handshake", "fin",
    "delayed_ack", "delack_timeout", "delack_tick", "delack_segments", "rto_initial", "rto_min",
    "rto_max", "clock_granularity", "timer_tick", "rto_backoff", "karn", "handshake_rtt_sample",
    "syn_timeout_rto_3s", "syn_retries", "data_retries",
}


def conn(r: tcplab.Result) -> pd.Series:
    assert len(r.connections) == 1
    return r.connections.iloc[0]


def xfer(r: tcplab.Result) -> pd.Series:
    assert len(r.transfers) == 1
    return r.transfers.iloc[0]


# --- input forms ------------------------------------------------------------------------------


def test_path_str_pathlib_toml_string_and_dict_give_equal_results(small_file, small_dict):
    forms = {
        "str path": str(small_file),
        "pathlib.Path": small_file,
        "TOML string": SMALL_TOML,
        "dict": small_dict,
    }
    results = {k: tcplab.run(v, seed=3).to_dict() for k, v in forms.items()}
    reference = results["TOML string"]
    assert reference["connections"][0]["bytes_delivered"] == 16384
    for k, d in results.items():
        assert d == reference, f"{k} differs from the TOML string"


def test_json_file_is_read_as_json(tmp_path, small_dict):
    import json

    p = tmp_path / "small.json"
    p.write_text(json.dumps(small_dict), encoding="utf-8")
    assert tcplab.run(p, seed=2).to_dict() == tcplab.run(SMALL_TOML, seed=2).to_dict()


def test_a_path_containing_an_equals_sign_is_still_a_file(tmp_path):
    # Sweep outputs are often named like this; the name must not be parsed as TOML.
    p = tmp_path / "loss=0.02.toml"
    p.write_text(SMALL_TOML, encoding="utf-8")
    for form in (p, str(p)):
        assert conn(tcplab.run(form))["bytes_delivered"] == 16384


def test_missing_file_and_bad_types():
    with pytest.raises(FileNotFoundError, match="not found"):
        tcplab.run("no/such/scenario.toml")
    with pytest.raises(FileNotFoundError):
        tcplab.run(Path("no/such/loss=1.toml"))
    with pytest.raises(TypeError):
        tcplab.run(42)
    with pytest.raises(ValueError, match="seed"):
        tcplab.run(SMALL_TOML, seed=-1)
    with pytest.raises(ValueError, match="seed"):
        tcplab.run(SMALL_TOML, seed=1.5)


def test_numpy_integers_are_accepted_as_seed_and_in_dicts(small_dict):
    small_dict["topology"]["queue"] = np.int64(20)
    r = tcplab.run(small_dict, seed=np.int64(4))
    assert r.meta["seed"] == 4
    assert r.scenario["topology"]["queue"]["packets"] == 20


# --- the result -------------------------------------------------------------------------------


def test_result_frames_and_columns(small_toml):
    r = tcplab.run(small_toml, seed=1)
    assert isinstance(r, tcplab.Result)
    for df in (r.connections, r.links, r.transfers):
        assert isinstance(df, pd.DataFrame)
    # (columns may be added; these are documented in docs/scenarios.md and must stay)
    for df, cols in ((r.connections, CONNECTION_COLUMNS), (r.links, LINK_COLUMNS), (r.transfers, TRANSFER_COLUMNS)):
        missing = [c for c in cols if c not in df.columns]
        assert not missing, missing
    assert len(r.connections) == 1 and len(r.transfers) == 1
    # one row per link direction
    assert list(r.links["link"]) == ["link:sender->receiver", "link:receiver->sender"]
    assert list(zip(r.links["src"], r.links["dst"])) == [("sender", "receiver"), ("receiver", "sender")]
    assert (r.links["rate_bps"] == 10_000_000).all()
    assert np.allclose(r.links["delay_s"], ONE_WAY_DELAY_S)
    c = conn(r)
    assert (c["name"], c["src"], c["dst"], c["variant"], c["mss"]) == ("f", "sender", "receiver", "newreno", 1460)
    assert set(r.meta) >= {"seed", "version", "sim_time_s", "events", "completed", "packets_in_flight"}
    assert r.meta["version"] == tcplab.__version__
    d = r.to_dict()
    assert set(d) == {"scenario", "tcp", "meta", "connections", "links", "transfers"}
    assert d["tcp"] == r.tcp and d["tcp"][0]["variant"] == "newreno"  # the resolved settings
    assert d["connections"][0]["name"] == "f"


def test_scenario_as_run_has_its_defaults_written_out(small_toml):
    r = tcplab.run(small_toml)
    s = r.scenario
    assert s["seed"] == 1
    assert s["name"] == "small"
    f = s["flows"][0]
    assert f["bytes"] == "16384B"
    assert (f["count"], f["repeat"], f["start"], f["start_spacing"], f["think"]) == (1, 1, "0s", "0s", "0s")
    assert s["topology"] == {"kind": "single_link", "rate": "10Mbps", "delay": "35ms"}
    # the resolved TCP configuration of each flow: every knob, the rfc profile's values
    assert len(r.tcp) == 1
    assert set(r.tcp[0]) >= TCP_KNOBS
    assert r.tcp[0] == tcplab.profiles()["rfc"]
    assert r.tcp[0]["rto_initial"] == "1s" and r.tcp[0]["mss"] == "1460B" and r.tcp[0]["variant"] == "newreno"


def test_validate_returns_the_scenario_with_defaults(small_toml):
    s = tcplab.validate(small_toml)
    assert s == tcplab.run(small_toml).scenario
    assert s["flows"][0]["repeat"] == 1 and s["seed"] == 1
    assert tcplab.validate(small_toml, sets=["topology.delay=\"50ms\""])["topology"]["delay"] == "50ms"


def test_scenario_seed_is_the_default_run_seed(small_toml, lossy_toml):
    assert tcplab.run(lossy_toml).meta["seed"] == 1
    own = tcplab.run("seed = 9\n" + lossy_toml)
    assert own.meta["seed"] == 9
    assert own.to_dict()["connections"] == tcplab.run(lossy_toml, seed=9).to_dict()["connections"]


def test_the_scenario_as_run_reproduces_the_run(lossy_toml):
    # `Result.scenario` is "the scenario as run": running it again must give the same result,
    # also when the seed came from `run(..., seed=...)` rather than from the scenario.
    r = tcplab.run(lossy_toml, seed=7)
    assert r.scenario["seed"] == r.meta["seed"] == 7
    again = tcplab.run(r.scenario)
    assert again.to_dict() == r.to_dict()


def test_profiles():
    p = tcplab.profiles()
    assert {"rfc", "rfc2988", "ns2", "bsd", "linux22"} <= set(p)
    for name, knobs in p.items():
        assert set(knobs) >= TCP_KNOBS, name
        assert set(knobs) == set(p["rfc"]), name  # every profile sets every knob
    assert p["rfc"]["rto_initial"] == "1s"
    assert p["rfc2988"]["rto_initial"] == "3s"
    assert p["bsd"]["timer_tick"] == "500ms" and p["bsd"]["mss"] == "512B"
    assert p["ns2"]["handshake"] is False


# --- determinism ------------------------------------------------------------------------------


def test_same_scenario_and_seed_give_identical_results(lossy_toml):
    a = tcplab.run(lossy_toml, seed=11).to_dict()
    b = tcplab.run(lossy_toml, seed=11).to_dict()
    assert a == b
    assert a["links"][0]["dropped_loss"] > 0  # there was randomness to reproduce


def test_different_seeds_give_different_random_losses(lossy_toml):
    runs = [tcplab.run(lossy_toml, seed=s) for s in (1, 2, 3)]
    drops = [r.links.loc[0, "dropped_loss"] for r in runs]
    delivered = [conn(r)["bytes_delivered"] for r in runs]
    # all three differ in what was lost and therefore in what got through
    assert len(set(zip(drops, delivered))) == 3, (drops, delivered)
    for r in runs:
        offered = r.links.loc[0, "offered_pkts"]
        # about 2 % of the data packets are lost (binomial: well within 3 sigma)
        assert abs(r.links.loc[0, "dropped_loss"] - 0.02 * offered) < 3 * math.sqrt(0.02 * offered) + 1
        assert r.links.loc[1, "dropped_loss"] == 0  # no loss on the ACK direction
        assert r.meta["completed"] is False  # unlimited flow: the duration ends the run
        assert r.meta["sim_time_s"] == pytest.approx(20.0)


# --- errors -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, path",
    [
        (SMALL_TOML.replace('delay = "35ms"', 'dely = "35ms"'), "topology.dely"),
        (SMALL_TOML.replace('delay = "35ms"', "delay = 35"), "topology.delay"),
        (SMALL_TOML + 'to = "moon"\n', "flows[0].to"),
        (SMALL_TOML + "tcp = { mss = 0 }\n", "flows[0].tcp.mss"),
        (SMALL_TOML + 'tcp = { profile = "win95" }\n', "flows[0].tcp.profile"),
        (SMALL_TOML.replace("[[flows]]", '[tcp]\nprofile = "win95"\n\n[[flows]]'), "tcp.profile"),
        (SMALL_TOML.replace("[[flows]]", "[tcp]\nrto_min = \"2min\"\n\n[[flows]]"), "tcp.rto_min"),
        (SMALL_TOML + 'drops = [{ kind = "data" }]\n', "flows[0].drops[0]"),
        (SMALL_TOML.replace('bytes = "16KB"', 'bytes = "unlimited"'), "flows[0].bytes"),
        (SMALL_TOML.replace('delay = "35ms"', 'delay = "35ms"\npairs = 2'), "topology.pairs"),
        (SMALL_TOML.replace('delay = "35ms"', 'delay = "35ms"\nloss = 1.5'), "topology.loss"),
    ],
    ids=["unknown-key", "bare-number", "unknown-node", "bad-knob", "flow-profile", "profile",
         "rto-min-above-max", "drop-needs-segment", "unlimited-needs-duration", "key-of-other-kind",
         "loss-not-probability"],
)
def test_scenario_errors_name_the_key_path(text, path):
    with pytest.raises(tcplab.ScenarioError) as ei:
        tcplab.run(text)
    e = ei.value
    assert e.path == path
    assert str(e).startswith(path + ": ")
    assert len(str(e)) > len(path) + 2  # and says what is wrong


def test_error_messages_say_what_was_expected(small_toml):
    with pytest.raises(tcplab.ScenarioError, match="unknown field `dely`"):
        tcplab.run(small_toml, sets=["topology.dely=1ms"])
    with pytest.raises(tcplab.ScenarioError, match="write the unit"):
        tcplab.run(small_toml, sets=["topology.delay=35"])
    with pytest.raises(tcplab.ScenarioError, match='"moon"; nodes are: sender, receiver'):
        tcplab.run(small_toml, sets=["flows.0.to=moon"])
    with pytest.raises(tcplab.ScenarioError, match="rfc, rfc2988, ns2, ns2-full, bsd, linux22"):
        tcplab.run(small_toml, sets=["tcp.profile=win95"])


def test_override_of_a_missing_array_index(small_toml):
    with pytest.raises(tcplab.ScenarioError) as ei:
        tcplab.run(small_toml, sets=["flows.3.bytes=1"])
    assert ei.value.path == "flows.3"
    assert "out of range" in str(ei.value)


def test_dict_and_toml_syntax_errors(small_dict):
    small_dict["topology"]["dely"] = "1ms"
    with pytest.raises(tcplab.ScenarioError) as ei:
        tcplab.run(small_dict)
    assert ei.value.path == "topology.dely"
    with pytest.raises(tcplab.ScenarioError, match="line 1"):
        tcplab.run("name = \n[topology]\n")
    with pytest.raises(tcplab.ScenarioError, match="topology"):
        tcplab.run("")  # an empty scenario is TOML missing its topology, not a file name


def test_exception_types():
    assert issubclass(tcplab.ScenarioError, ValueError)
    assert issubclass(tcplab.CoreError, RuntimeError)
    assert not issubclass(tcplab.CoreError, tcplab.ScenarioError)


def test_core_panic_becomes_core_error_and_python_survives(small_toml):
    with pytest.raises(tcplab.CoreError, match="deliberate test panic"):
        tcplab._core._panic_for_test()
    with pytest.raises(RuntimeError):
        tcplab._core._panic_for_test()
    # the interpreter and the core are still usable
    assert conn(tcplab.run(small_toml))["bytes_delivered"] == 16384


# --- overrides ---------------------------------------------------------------------------------


def test_sets_change_the_run(small_toml):
    base = tcplab.run(small_toml)
    reno = tcplab.run(small_toml, sets=["tcp.variant=reno"])
    assert conn(base)["variant"] == "newreno"
    assert conn(reno)["variant"] == "reno"
    assert reno.tcp[0]["variant"] == "reno"
    assert tcplab.run(small_toml, sets="tcp.variant=tahoe").tcp[0]["variant"] == "tahoe"  # one string

    slow = tcplab.run(small_toml, sets=['topology.delay="50ms"', 'flows.0.bytes="32KB"'])
    assert slow.scenario["topology"]["delay"] == "50ms"
    assert conn(slow)["bytes_delivered"] == 32768
    assert xfer(slow)["established_s"] == pytest.approx(2 * 0.050, abs=1e-3)


def test_flow_tcp_knobs_override_the_scenario_tcp_table(small_toml):
    text = small_toml.replace("[[flows]]", '[tcp]\nprofile = "bsd"\nvariant = "tahoe"\n\n[[flows]]')
    r = tcplab.run(text + "tcp = { mss = 1000 }\n")
    t = r.tcp[0]
    assert (t["variant"], t["mss"], t["timer_tick"]) == ("tahoe", "1000B", "500ms")
    assert conn(r)["mss"] == 1000
    assert conn(r)["segs_sent"] == math.ceil(16384 / 1000)


# --- instruments on simple cases ----------------------------------------------------------------


def test_lossless_16kb_transfer(small_toml):
    r = tcplab.run(small_toml)
    c, t = conn(r), xfer(r)
    assert c["retransmits"] == 0 and c["timeouts"] == 0 and c["fast_retransmits"] == 0
    assert c["bytes_delivered"] == 16384 and t["bytes_delivered"] == 16384 and t["bytes"] == 16384
    assert c["segs_sent"] == math.ceil(16384 / 1460)
    assert c["transfers_completed"] == 1 and r.meta["completed"] is True
    # handshake: established after one RTT; first byte after 1.5 RTT; done after more than that
    assert t["established_s"] == pytest.approx(2 * ONE_WAY_DELAY_S, abs=1e-3)
    assert t["first_byte_s"] > 3 * ONE_WAY_DELAY_S
    assert t["transfer_time_s"] > 2 * ONE_WAY_DELAY_S
    assert t["transfer_time_s"] == pytest.approx(t["delivered_s"] - t["start_s"])
    assert t["acked_s"] > t["delivered_s"]
    assert c["complete_s"] == pytest.approx(t["delivered_s"])
    assert c["goodput_bps"] == pytest.approx(16384 * 8 / c["complete_s"])
    # RTT samples are at least the path's round trip
    assert c["rtt_samples"] > 0 and c["rtt_min_s"] >= 2 * ONE_WAY_DELAY_S
    assert (r.links["dropped_pkts"] == 0).all()


def test_sizes_kb_is_1024_bytes_and_lowercase_kb_is_1000(small_toml):
    for spelled, n in [('"16KB"', 16384), ('"10kB"', 10000), ('"1460B"', 1460), ("3000", 3000), ('"1MB"', 1 << 20)]:
        r = tcplab.run(small_toml, sets=[f"flows.0.bytes={spelled}"])
        assert xfer(r)["bytes"] == n and conn(r)["bytes_delivered"] == n, spelled


def test_dropped_syn_is_retransmitted_after_the_initial_rto(small_toml):
    clean = tcplab.run(small_toml)
    lost = tcplab.run(small_toml + 'drops = [{ kind = "syn" }]\n')
    c = conn(lost)
    assert c["syn_retransmits"] == 1
    assert c["bytes_delivered"] == 16384
    assert lost.links.loc[0, "dropped_filter"] == 1
    # rfc profile: initial RTO 1 s, so the connection and its first byte come 1 s later
    for col in ("established_s", "first_byte_s"):
        assert xfer(lost)[col] - xfer(clean)[col] == pytest.approx(1.0, abs=0.01), col
    assert xfer(lost)["transfer_time_s"] > xfer(clean)["transfer_time_s"] + 1.0

    # with the rfc2988 profile the initial RTO is 3 s; a second lost SYN waits twice as long (backoff)
    old = tcplab.run(small_toml + 'drops = [{ kind = "syn" }]\n', sets=["tcp.profile=rfc2988"])
    assert xfer(old)["established_s"] - xfer(clean)["established_s"] == pytest.approx(3.0, abs=0.01)
    twice = tcplab.run(small_toml + 'drops = [{ kind = "syn", transmissions = [1, 2] }]\n')
    assert conn(twice)["syn_retransmits"] == 2
    assert xfer(twice)["established_s"] - xfer(clean)["established_s"] == pytest.approx(3.0, abs=0.01)


def test_connection_is_abandoned_after_syn_retries(small_toml):
    every_syn = 'drops = [{ kind = "syn", transmissions = [1, 2, 3, 4, 5, 6, 7, 8] }]\n'
    r = tcplab.run(small_toml + every_syn, sets=["tcp.syn_retries=1"])
    t, c = xfer(r), conn(r)
    assert bool(t["aborted"]) is True
    assert c["syn_retransmits"] == 1 and c["bytes_delivered"] == 0
    assert c["transfers_completed"] == 0 and c["complete_s"] is None
    # SYN at 0 s, again at 1 s (initial RTO), given up 2 s later (backed-off RTO)
    assert r.meta["sim_time_s"] == pytest.approx(3.0)
    assert r.meta["completed"] is True and r.meta["packets_in_flight"] == 0
    assert bool(xfer(tcplab.run(small_toml))["aborted"]) is False


def test_dropped_data_segment_is_repaired(small_toml):
    r = tcplab.run(small_toml + 'drops = [{ kind = "data", segment = 3 }]\n')
    c = conn(r)
    assert c["retransmits"] == 1
    assert c["bytes_delivered"] == 16384
    assert r.links.loc[0, "dropped_filter"] == 1
    assert c["ooo_segments"] > 0  # the segments after the hole arrived out of order


@pytest.mark.parametrize(
    "extra, seed",
    [
        ("queue = 5", 1),
        ("queue = 10\nloss = 0.01", 1),
        ("queue = 10\nloss = 0.01", 5),  # losses and queue drops both
        ('queue = { bytes = "8KB" }\nreverse_loss = 0.05', 1),
    ],
)
def test_links_offered_equals_sent_plus_dropped(small_toml, extra, seed):
    text = small_toml.replace('delay = "35ms"', 'delay = "35ms"\n' + extra).replace('"16KB"', '"200KB"')
    r = tcplab.run(text, seed=seed)
    assert r.meta["completed"] and r.meta["packets_in_flight"] == 0
    assert conn(r)["bytes_delivered"] == 200 * 1024
    links = r.links
    assert (links["offered_pkts"] == links["sent_pkts"] + links["dropped_pkts"]).all()
    reasons = ["dropped_queue", "dropped_loss", "dropped_filter", "dropped_red_early", "dropped_red_forced"]
    assert (links["dropped_pkts"] == links[reasons].sum(axis=1)).all()
    assert links["dropped_pkts"].sum() > 0  # the case is not trivial
    assert links["dropped_pkts"].sum() == r.meta["packets_dropped"]
    m = r.meta
    assert m["packets_created"] == m["packets_delivered"] + m["packets_dropped"] + m["packets_in_flight"]


def test_example_with_repeats_conserves_packets_on_every_link():
    r = tcplab.run(EXAMPLES / "web_like.toml")
    assert r.meta["completed"] and r.meta["packets_in_flight"] == 0
    assert len(r.links) == 6
    assert (r.links["offered_pkts"] == r.links["sent_pkts"] + r.links["dropped_pkts"]).all()
    # two flows of five 16 KB transfers each
    assert list(r.connections["name"]) == ["iw1", "iw4"]
    assert (r.connections["transfers_completed"] == 5).all()
    for name in ("iw1", "iw4"):
        assert list(r.transfers.loc[r.transfers["name"] == name, "transfer"]) == [1, 2, 3, 4, 5]
    assert (r.transfers["bytes_delivered"] == 16384).all()


def test_count_names_start_spacing_repeat_and_think():
    r = tcplab.run(
        """
[topology]
kind = "dumbbell"
pairs = 2
access_rate = "100Mbps"
access_delay = ["1ms", "2ms"]
bottleneck_rate = "10Mbps"
bottleneck_delay = "10ms"

[[flows]]
name = "bulk{i}"
from = "s{i}"
to = "r{i}"
count = 2
start = "1s"
start_spacing = "500ms"
bytes = "10KB"

[[flows]]
name = "web"
from = "s1"
to = "r2"
bytes = "1kB"
repeat = 3
think = "2s"
"""
    )
    c = r.connections.set_index("name")
    assert list(c.index) == ["bulk1", "bulk2", "web"]
    assert (c.loc["bulk1", "src"], c.loc["bulk1", "dst"]) == ("s1", "r1")
    assert (c.loc["bulk2", "src"], c.loc["bulk2", "dst"]) == ("s2", "r2")
    assert list(c["start_s"]) == [1.0, 1.5, 0.0]
    web = r.transfers[r.transfers["name"] == "web"].reset_index(drop=True)
    assert list(web["transfer"]) == [1, 2, 3]
    # the next transfer starts `think` after the previous one is fully acknowledged
    for k in (1, 2):
        assert web.loc[k, "start_s"] == pytest.approx(web.loc[k - 1, "acked_s"] + 2.0)
    assert c.loc["web", "bytes_delivered"] == 3000
    assert c.loc["web", "transfers_completed"] == 3


def test_objects_of_applications():
    """`[[apps]]` request/response exchanges give one `objects` row each; runs without
    applications have an empty `objects` frame and leave `to_dict` as it was."""
    scenario = {
        "topology": {"kind": "single_link", "rate": "10Mbps", "delay": "10ms"},
        "apps": [{"kind": "reqresp", "name": "web", "response": "6KB", "count": 3, "think": "100ms",
                  "drops": [{"kind": "request", "object": 2}]}],
    }
    r = tcplab.run(scenario, seed=1)
    o = r.objects
    assert list(o["object"]) == [1, 2, 3]
    assert (o["client"] == "web").all() and (o["bytes_delivered"] == 6144).all()
    assert list(o["request_retransmitted"]) == [False, True, False]
    # Seddigh's T_i = T_LAST_ACK - T_GET; the lost GET waits for the initial RTO (1 s in `rfc`).
    assert (o["transfer_time_s"] == o["acked_s"] - o["request_s"]).all()
    assert o["first_byte_s"][1] - o["request_s"][1] >= 1.0
    assert r.to_dict()["objects"][1]["timeouts"] == 1
    plain = tcplab.run(SMALL_TOML, seed=1)
    assert plain.objects.empty and "objects" not in plain.to_dict()
    assert plain.pages.empty and "pages" not in plain.to_dict()


def test_pages_of_web_clients():
    scenario = {
        "topology": {"kind": "single_link", "rate": "1.5Mbps", "delay": "50ms"},
        "apps": [{"kind": "http10", "response": "2KB", "embedded": 3, "pages": 2, "think": "1s"}],
    }
    r = tcplab.run(scenario, seed=1)
    assert list(r.pages["page"]) == [1, 2] and list(r.pages["objects"]) == [4, 4]
    assert ((r.pages["delay_s"] - (r.pages["complete_s"] - r.pages["start_s"])).abs() < 1e-9).all()
    assert list(r.objects.groupby("page").size()) == [4, 4]
