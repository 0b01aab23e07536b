"""Every key docs/scenarios.md documents for what the testbed runs (the top level, the
`single_link` and `dumbbell` topologies, flows and their drops, `reqresp` and `http10`
applications and their drops, every `[tcp]` knob) is honoured by the real run or refused by its
key path: none is silently ignored. Tables under a key the testbed refuses whole (other topology
kinds, host groups, RED's keys under `queue.red`, delays, the other application kinds, UDP
sources) are covered by the refusal of that key.

The keys are read from the docs' tables, so a newly documented key fails here until it has a
value below. "Honoured" means the plan for Linux (hosts, links, routes, sysctls, jobs, drops)
differs from the plan of the base scenario; a key that rightly leaves the real run as it is
(a label, free text) is listed in `NEUTRAL` with the reason.
"""

from __future__ import annotations

import copy
import dataclasses
import re
from pathlib import Path

import pytest

import tcplab
from tcplab import testbed

DOCS = (Path(__file__).resolve().parent.parent / "docs" / "scenarios.md").read_text()


def documented(heading: str, stop: str = "\n## ") -> list:
    """The keys of the first table after `heading` in docs/scenarios.md."""
    at = DOCS.index(heading)
    section = DOCS[at:]
    end = section.find(stop, len(heading))
    section = section if end < 0 else section[:end]
    table = re.search(r"\| key \|.*?\n\|---.*?\n((?:\|.*\n)+)", section)
    assert table, f"no key table after {heading!r}"
    keys = []
    for row in table.group(1).splitlines():
        keys += re.findall(r"`(\w+)`", row.split("|")[1])
    return keys


SINGLE = {
    "name": "keys",
    "topology": {"kind": "single_link", "rate": "10Mbps", "delay": "20ms", "queue": 50},
    "tcp": {"profile": "linux"},
    "flows": [{"bytes": "50KB", "drops": [{"kind": "data", "segment": 3}]}],
    "apps": [{"kind": "reqresp", "response": "10KB", "start": "1s", "drops": [{"kind": "response"}]}],
}
DUMBBELL = {
    "name": "keys",
    "topology": {"kind": "dumbbell", "pairs": 2, "access_rate": "100Mbps", "access_delay": "2ms",
                 "bottleneck_rate": "10Mbps", "bottleneck_delay": "20ms", "queue": 50},
    "tcp": {"profile": "linux"},
    "flows": [{"from": "s1", "to": "r1", "bytes": "50KB"}],
}
HTTP10 = dict(SINGLE, apps=[{"kind": "http10", "response": "10KB", "pages": 2, "start": "1s", "drops": [{"kind": "response", "object": 2}]}])

#: Keys whose value does not reach a real run, and why that is right.
NEUTRAL = {
    "name": "a label of the results; the real run is the same",
    "description": "free text",
    "seed": "the real run's random loss draws from nftables' own generator, which no seed reaches (docs/testbed.md)",
}

#: (where, key) -> a value other than the base scenario's. `where` is the table the key is
#: documented in; the value is written at that place in the base scenario.
VALUES = {
    ("top", "seed"): 7,
    ("top", "duration"): "5s",
    ("top", "warmup"): "1s",
    ("top", "capture"): [{"path": "x.pcap", "node": "sender"}],
    ("top", "series"): [{"kind": "cwnd", "interval": "10ms"}],
    ("top", "topology"): None,  # the table itself: its keys are walked below
    ("top", "tcp"): {"profile": "linux", "initial_window": 4},
    ("top", "flows"): [{"bytes": "80KB"}],
    ("top", "apps"): [],
    ("single_link", "rate"): "5Mbps",
    ("single_link", "delay"): "30ms",
    ("single_link", "queue"): 20,
    ("single_link", "loss"): 0.01,
    ("single_link", "reverse_loss"): 0.01,
    ("dumbbell", "pairs"): 3,
    ("dumbbell", "access_rate"): "50Mbps",
    ("dumbbell", "access_delay"): ["2ms", "5ms"],
    ("dumbbell", "access_queue"): 40,
    ("dumbbell", "bottleneck_rate"): "5Mbps",
    ("dumbbell", "bottleneck_delay"): "30ms",
    ("dumbbell", "queue"): {"packets": 30, "bytes": "40KB"},
    ("dumbbell", "loss"): 0.01,
    ("dumbbell", "reverse_loss"): 0.01,
    ("flows", "from"): "receiver",
    ("flows", "to"): "sender",
    ("flows", "count"): 2,
    ("flows", "start"): "100ms",
    ("flows", "start_spacing"): "100ms",
    ("flows", "bytes"): "60KB",
    ("flows", "repeat"): 2,
    ("flows", "think"): "100ms",
    ("flows", "tcp"): {"initial_window": 4},
    ("flows", "drops"): [{"kind": "syn"}],
    ("flows", "delays"): [{"kind": "data", "segment": 3, "by": "30ms"}],
    ("flow drops", "kind"): "fin",
    ("flow drops", "segment"): 5,
    ("flow drops", "number"): 2,
    ("flow drops", "transmissions"): [1, 2],
    ("flow drops", "transfer"): 1,
    ("apps", "kind"): "ftp",
    ("apps", "instances"): 2,
    ("apps", "client"): "sender",
    ("apps", "server"): "receiver",
    ("apps", "mode"): "oneway",
    ("apps", "start"): "2s",
    ("apps", "start_spacing"): "1s",
    ("apps", "request"): "400B",
    ("apps", "response"): "20KB",
    ("apps", "file"): "20KB",
    ("apps", "direction"): "upload",
    ("apps", "count"): 2,
    ("apps", "pages"): 3,
    ("apps", "embedded"): 2,
    ("apps", "objects"): 2,
    ("apps", "objects_rounding"): "up",
    ("apps", "interobject"): "10ms",
    ("apps", "keep_alive"): True,
    ("apps", "transfer"): "page",
    ("apps", "think"): "500ms",
    ("apps", "page_spacing"): "start_to_start",
    ("apps", "tcp"): {"initial_window": 4},
    ("apps", "server_tcp"): {"initial_window": 4},
    ("apps", "drops"): [{"kind": "syn"}],
    ("app drops", "kind"): "synack",
    ("app drops", "object"): 1,
    ("app drops", "segment"): 2,
    ("app drops", "transmissions"): [1, 2],
}

TABLES = {
    "top": documented("## Top level"),
    "single_link": documented('### `kind = "single_link"`', "\n### "),
    "dumbbell": documented('### `kind = "dumbbell"`', "\n### "),
    "flows": documented("## Flows", "\n### "),
    "flow drops": documented("### Drops", "\n### "),
    "apps": documented("## Applications", "\n### "),
    "app drops": documented("### Drops of applications"),
}


def cases():
    for where, keys in TABLES.items():
        for key in keys:
            if key in NEUTRAL or (where == "top" and key == "topology"):
                continue
            if where == "apps":
                yield pytest.param(where, key, "reqresp", id=f"reqresp.{key}")
                yield pytest.param(where, key, "http10", id=f"http10.{key}")
            else:
                yield pytest.param(where, key, None, id=f"{where}.{key}")


def scenario_with(where: str, key: str, app_kind):
    if where == "dumbbell":
        s = copy.deepcopy(DUMBBELL)
    elif app_kind == "http10" or (where == "app drops"):
        s = copy.deepcopy(HTTP10 if app_kind == "http10" else SINGLE)
    else:
        s = copy.deepcopy(SINGLE)
    value = copy.deepcopy(VALUES[(where, key)])
    if where == "top":
        s[key] = value
        if key == "warmup":
            s["duration"] = "5s"  # a warmup needs a duration; the testbed names the warmup first
    elif where in ("single_link", "dumbbell"):
        s["topology"][key] = value
    elif where == "flows":
        s["flows"][0][key] = value
        if key == "delays":
            s["flows"][0].pop("drops")
        if key == "start_spacing":
            s["flows"][0]["count"] = 2
    elif where == "flow drops":
        d = s["flows"][0]["drops"][0]
        d[key] = value
        if key in ("number",):
            d.update(kind="ack")
            d.pop("segment")
        if key == "kind":
            d.pop("segment")
        if key == "transfer":
            s["flows"][0]["repeat"] = 2
    elif where == "apps":
        s["apps"][0][key] = value
    elif where == "app drops":
        s["apps"][0]["drops"][0][key] = value
        if key == "kind":
            s["apps"][0]["drops"][0].pop("object", None)
        if key == "object" and app_kind is None:
            s["apps"][0]["count"] = 2
    return s


def base_of(s: dict, where: str, key: str) -> dict:
    """`s` without the key (where the key has a default) or with the base scenario's value."""
    b = copy.deepcopy(s)
    if where == "top":
        b.pop(key, None)
        if key in SINGLE:
            b[key] = copy.deepcopy(SINGLE[key])
        if key == "warmup":
            b.pop("duration")
    elif where in ("single_link", "dumbbell"):
        b["topology"][key] = (DUMBBELL if where == "dumbbell" else SINGLE)["topology"].get(key)
        if b["topology"][key] is None:
            b["topology"].pop(key)
    elif where == "flows":
        b["flows"][0].pop(key)
        b["flows"][0].setdefault("bytes", "50KB")
    elif where == "flow drops":
        b["flows"][0]["drops"][0].pop(key)
        b["flows"][0]["drops"][0].update(kind="data", segment=3)
        b["flows"][0]["drops"][0].pop("number", None)
    elif where == "apps":
        b["apps"][0].pop(key)
        b["apps"][0].setdefault("response", "10KB")
        b["apps"][0].setdefault("kind", "reqresp")
    elif where == "app drops":
        b["apps"][0]["drops"][0].pop(key)
        b["apps"][0]["drops"][0].setdefault("kind", "response")
    return b


def plan_of(s):
    plan, _ = testbed.build(s)
    return dataclasses.asdict(plan)


def test_the_docs_tables_were_read():
    assert {"rate", "delay", "queue", "loss", "reverse_loss"} <= set(TABLES["single_link"])
    assert {"from", "to", "bytes", "drops", "delays"} <= set(TABLES["flows"])
    assert {"client", "server", "response", "server_tcp", "page_spacing"} <= set(TABLES["apps"])
    assert {"object", "segment", "transmissions"} <= set(TABLES["app drops"])


def test_every_documented_key_has_a_value_here():
    missing = [(w, k) for w, keys in TABLES.items() for k in keys if k not in NEUTRAL and (w, k) not in VALUES]
    assert not missing, f"documented keys with no test value (add them to VALUES or NEUTRAL): {missing}"


@pytest.mark.parametrize("where, key, app_kind", list(cases()))
def test_a_documented_key_is_honoured_or_refused_by_its_path(where, key, app_kind):
    s = scenario_with(where, key, app_kind)
    try:
        tcplab.validate(s)
    except tcplab.ScenarioError as e:
        # The schema refuses it for this kind or combination: not the testbed's to honour.
        assert e.path, str(e)
        return
    base = base_of(s, where, key)
    try:
        changed = plan_of(s)
    except tcplab.ScenarioError as e:
        assert "cannot run this on Linux" in str(e), str(e)
        assert key in e.path or key in str(e), f"refused at {e.path!r}, which does not name {key!r}: {e}"
        return
    assert changed != plan_of(base), f"{where}.{key} = {VALUES[(where, key)]!r} leaves the real run unchanged: ignored"


# -- the `[tcp]` knobs ----------------------------------------------------------------------------
# The tables above do not list the TCP knobs: docs/scenarios.md gives them in their own table
# ("| knob | value | `rfc` | meaning |"). Each is set, over the `linux` profile, to a value other
# than the profile's (the first the schema accepts, from the values the table names and a few of
# the knob's type), and the real run must change or refuse it by its key path.


def tcp_knobs() -> dict:
    """{knob: the table's value column} of docs/scenarios.md's `[tcp]` table."""
    at = DOCS.index("| knob | value | `rfc` | meaning |")
    rows = re.match(r"(?:\|.*\n)+", DOCS[at:]).group(0).splitlines()[2:]
    return {m.group(1): r.split("|")[2] for r in rows if (m := re.match(r"\| `(\w+)` \|", r))}


def other_values(linux_value, value_doc: str) -> list:
    named = [v for v in re.findall(r'`"([^"]+)"`', value_doc) if v != linux_value]
    if isinstance(linux_value, bool):
        return [not linux_value]
    if isinstance(linux_value, int):
        return named + [linux_value + 1, linux_value * 2, 1, 2, 0]
    if isinstance(linux_value, float):
        return named + [linux_value * 2, linux_value / 2, 0.5]
    return named + ["300ms", "2s", "10KB", "1000B", 10, "20ms"]


#: Knobs whose other value needs a partner knob to be legal (the schema's rules between knobs).
TCP_PARTNERS = {
    "sack": {"variant": "newreno", "reduction": "halve"},  # variant "sack" needs sack = true
    "variant": {"reduction": "halve"},  # PRR (the linux profile's) paces variant "sack" only
    "rto_min": {"clock_granularity": "300ms"},  # the testbed: Linux's G is its minimum RTO
    "tlp": {"loss": "rack"},  # the tail loss probe is part of RACK-TLP
    "rcv_buffer": {"delack_model": "linux"},  # the buffer's quick ACKs feed the Linux receiver
    "loss": {"tlp": False},  # the tail loss probe needs RACK
    "ns2_rfc2988": {"rto_model": "ns2", "timer_tick": "10ms"},  # ns-2's older RTO needs its estimator
}
#: Knobs whose other value describes what the kernel does anyway, so the real run rightly stays
#: the same. Every other value of a knob the kernel does not follow (`tlp = false`,
#: `reduction = "halve"`, ...) is a divergence of the plan (`untuned.divergences`), which changes it.
TCP_NEUTRAL: dict = {
    "ts_offset": "it places the simulated timestamps clock's ticks; the kernel's clock has a phase of its own, which no setting moves",
}


@pytest.mark.parametrize("knob", list(tcp_knobs()))
def test_a_documented_tcp_knob_is_honoured_or_refused_by_its_path(knob):
    linux = tcplab.api.profiles()["linux"]
    assert knob in linux, f"tcp.{knob} is documented but not a resolved knob of the linux profile"
    tried = []
    for v in other_values(linux[knob], tcp_knobs()[knob]):
        s = copy.deepcopy(SINGLE)
        s["tcp"].update(TCP_PARTNERS.get(knob, {}), **{knob: v})
        try:
            tcplab.validate(s)
        except tcplab.ScenarioError as e:
            tried.append((v, str(e)))
            continue
        try:
            changed = plan_of(s)
        except tcplab.ScenarioError as e:
            assert "cannot run this on Linux" in str(e), str(e)
            assert e.path == f"tcp.{knob}", f"tcp.{knob} = {v!r} refused at {e.path!r}: {e}"
            return
        if knob in TCP_NEUTRAL:
            assert changed == plan_of(SINGLE), f"tcp.{knob} = {v!r} changes the real run, though {TCP_NEUTRAL[knob]}"
        else:
            assert changed != plan_of(SINGLE), f"tcp.{knob} = {v!r} leaves the real run unchanged: ignored"
        return
    pytest.fail(f"no value of tcp.{knob} other than the linux profile's passes the schema: {tried}")
