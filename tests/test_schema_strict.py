"""The scenario schema refuses by key path what it used to accept silently (issue 34, items 6 to
8): a key of another application kind even at its default value, `[tcp]` values out of range even
when every flow overrides them, counts written as strings, empty node names, and constant
application times beyond the largest draw (2^50 ns). Each case is the reproducer of the report."""

from __future__ import annotations

import pytest

import tcplab
from conftest import SMALL_TOML

BASE = """\
name = "strict"
duration = "2s"

[topology]
kind = "single_link"
rate = "10Mbps"
delay = "10ms"
"""

KINDS = {
    "reqresp": 'kind = "reqresp"\nresponse = "10KB"\n',
    "http10": 'kind = "http10"\nresponse = "10KB"\n',
    "http11": 'kind = "http11"\nresponse = "10KB"\n',
    "ftp": 'kind = "ftp"\nfile = "10KB"\n',
    "onoff": 'kind = "onoff"\nrate = "100kbps"\n',
    "cbr": 'kind = "cbr"\nrate = "100kbps"\n',
}


def app(kind: str, extra: str = "") -> str:
    return BASE + "[[apps]]\n" + KINDS[kind] + extra


def refusal(text: str) -> tcplab.ScenarioError:
    with pytest.raises(tcplab.ScenarioError) as e:
        tcplab.validate(text)
    return e.value


# --- item 7: a key of another kind, at its default value --------------------------------------


@pytest.mark.parametrize(
    "kind, line, key",
    [
        ("reqresp", "embedded = 3", "embedded"),
        ("ftp", "keep_alive = false", "keep_alive"),
        ("cbr", 'mode = "twoway"', "mode"),
        ("http11", 'mode = "twoway"', "mode"),
        ("reqresp", 'page_spacing = "end_to_start"', "page_spacing"),
        ("reqresp", 'transfer = "objects"', "transfer"),
        ("ftp", 'direction = "download"\nrequest = "300B"', "request"),
        ("http10", "count = 1", "count"),
        ("reqresp", "pages = 1", "pages"),
        ("onoff", "jitter = false", "jitter"),
        ("cbr", 'think = "0s"', "think"),
        ("cbr", "tcp = {}", "tcp"),
        ("reqresp", 'from = "sender"', "from"),
        ("onoff", 'client = "receiver"', "client"),
        ("http10", 'objects_rounding = "nearest"\nkeep_alive = false', "keep_alive"),
    ],
)
def test_a_key_of_another_kind_is_refused_at_its_default(kind, line, key):
    e = refusal(app(kind, line + "\n"))
    assert e.path == f"apps[0].{key}", e
    assert "does not apply to kind" in e.reason and f'"{kind}"' in e.reason, e


def test_a_misspelt_key_still_gets_a_did_you_mean():
    e = refusal(app("http10", "embeded = 2\n"))
    assert e.path == "apps[0].embeded" and "did you mean `embedded`" in e.reason, e


def test_the_scenario_as_run_is_valid_input_for_every_kind():
    for kind in KINDS:
        r = tcplab.run(app(kind))
        echoed = r.scenario
        written = set(echoed["apps"][0])
        tcplab.validate(echoed)  # the echo, every default written out, reads back
        assert "kind" in written and ("embedded" in written) == (kind in ("http10", "http11")), (kind, written)


# --- item 8: [tcp] as written, counts as strings, empty node names ----------------------------


@pytest.mark.parametrize("knob, value", [("initial_window", "100001"), ("mss", "0"), ("abc", "7"), ("profile", '"win95"'),
                                         ("cc", '"vegas"'), ("cwnd_validation", '"rfc2861"'), ("reduction", '"rate-halving"')])
def test_tcp_values_are_checked_as_written_even_when_every_flow_overrides_them(knob, value):
    other = {"initial_window": "4", "mss": "1460", "abc": "0", "profile": '"linux"', "cc": '"cubic"', "cwnd_validation": '"linux"', "reduction": '"halve"'}[knob]
    text = SMALL_TOML.replace('[[flows]]', f"[tcp]\n{knob} = {value}\n\n[[flows]]") + f"tcp = {{ {knob} = {other} }}\n"
    e = refusal(text)
    assert e.path == f"tcp.{knob}", e


def test_tcp_knobs_that_need_another_knob_are_judged_where_they_are_combined():
    # variant = "sack" needs sack = true, which each flow gives: legal, as before.
    text = SMALL_TOML.replace('[[flows]]', '[tcp]\nvariant = "sack"\n\n[[flows]]') + "tcp = { sack = true }\n"
    tcplab.validate(text)


@pytest.mark.parametrize("tcp", ['profile = "rfc6675-iw10"\nreduction = "prr"', 'profile = "rfc6675-iw10"\nloss = "rack"\ntlp = true',
                                 'profile = "rfc6675-iw10"\ndelack_model = "linux"\ncomp_sack_nr = 44'])
def test_tcp_knobs_legal_together_in_one_tcp_table_are_legal(tcp):
    # The reproducer: PRR over the rfc6675-iw10 profile's variant "sack", and TLP with RACK written beside
    # it, were refused at tcp.reduction and tcp.tlp (each knob was range-checked alone over a base
    # without SACK recovery, RACK or Linux's receiver).
    tcplab.validate(SMALL_TOML.replace('[[flows]]', f"[tcp]\n{tcp}\n\n[[flows]]"))


def test_a_tcp_knob_its_table_leaves_illegal_is_still_refused():
    e = refusal(SMALL_TOML.replace('[[flows]]', '[tcp]\nprofile = "rfc6675-iw10"\ntlp = true\n\n[[flows]]'))
    assert e.path.endswith("tlp") and "RACK" in str(e), e


@pytest.mark.parametrize(
    "kind, line, key",
    [("http10", 'embedded = "3"', "embedded"), ("http10", 'pages = "3"', "pages"), ("http10", 'objects = "2"', "objects"), ("reqresp", 'count = "2"', "count")],
)
def test_counts_written_as_strings_are_refused(kind, line, key):
    e = refusal(app(kind, line + "\n"))
    assert e.path == f"apps[0].{key}", e


@pytest.mark.parametrize(
    "kind, line, key",
    [("reqresp", 'client = ""', "client"), ("reqresp", 'server = ""', "server"), ("cbr", 'to = ""', "to"), ("http10", 'server = ["sender", ""]', "server[1]")],
)
def test_an_empty_node_name_is_refused(kind, line, key):
    e = refusal(app(kind, line + "\n"))
    assert e.path == f"apps[0].{key}", e
    assert "empty" in e.reason, e


def test_an_empty_flow_end_is_refused():
    e = refusal(SMALL_TOML + 'from = ""\n')
    assert e.path == "flows[0].from" and "empty" in e.reason, e


# --- item 6: constant times beyond the largest draw -------------------------------------------


@pytest.mark.parametrize(
    "kind, line, key",
    [
        ("reqresp", 'think = "480h"', "think"),
        ("reqresp", 'start = "400h"', "start"),
        ("reqresp", 'instances = 2\nstart_spacing = "720000h"', "start_spacing"),
        ("http10", 'objects = 2\ninterobject = { constant = "500h" }', "interobject.constant"),
        ("onoff", 'on = "320h"', "on"),
    ],
)
def test_a_constant_time_beyond_two_to_the_fifty_ns_is_refused(kind, line, key):
    e = refusal(app(kind, line + "\n"))
    assert e.path == f"apps[0].{key}", e
    assert "2^50" in e.reason, e


def test_a_constant_time_up_to_two_to_the_fifty_ns_is_taken_as_written():
    d = tcplab.validate(app("reqresp", 'think = "312h"\n'))
    assert d["apps"][0]["think"] == "1123200s", d["apps"][0]
