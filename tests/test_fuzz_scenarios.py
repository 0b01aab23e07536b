"""Generated scenarios, valid and broken (structure, types, values; as a dict, as overrides and as
TOML text): each either raises ScenarioError naming where it went wrong, or runs to a result that
passes the invariants (packets conserved, counters finite and non-negative, link utilisation at
most 1, goodput within the slowest link's rate, flows starting as specified). Never a crash, an
abort, another exception or a silent default.

A few hundred examples in the normal suite; `TCPLAB_FUZZ_EXAMPLES=5000` for a longer search.
Generated runs are tiny by construction: valid values are drawn from small ones (bytes ≤ 16 KB,
durations ≤ 3 s, rates ≤ 100 Mb/s); the values mutations bring in are broken, at a limit, or
small, so that no mutation turns a scenario into a long run."""

from __future__ import annotations

import copy
import math
import os
import re

import pandas as pd
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import tcplab  # noqa: E402
from tcplab.sweep import toml_literal  # noqa: E402

EXAMPLES = int(os.environ.get("TCPLAB_FUZZ_EXAMPLES", "300"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize="TCPLAB_FUZZ_EXAMPLES" not in os.environ,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

RATES = ["1Mbps", "10Mbps", "100Mbps"]
DELAYS = ["0s", "1ms", "10ms", "35ms"]
QUEUES = [5, 20, "unlimited", {"packets": 10, "bytes": "16KB"}, {"packets": 20, "red": {"min_th": 3, "max_th": 9}},
          {"kind": "red", "packets": 30}]
PROBS = [0, 0.01, 0.1]
UNITS = {"ns": 1, "us": 10**3, "ms": 10**6, "s": 10**9, "min": 60 * 10**9, "h": 3600 * 10**9}

# Values a mutation brings in: broken, at or beyond a limit, of the wrong type, or small.
POOL = [math.nan, math.inf, -math.inf, -1, 0, 1, 2, 0.5, -0.5, 1e300, 2**31, 2**32, 2**63 - 1, 2**64, True, False,
        None, "", "abc", "unlimited", "1s", "-1ms", "1e30s", "4611686018427387905ns", "10Mbps", "0bps", "16KB", "1e400B",
        "nan", "inf", "\ud800", "x\udfffy", "{i}", "s1", "sender", "reno", "rfc", [], [1], [None], {}, {"x": 1},
        {"packets": math.nan}, [{"kind": "syn", "transfer": 0}]]


def _writable(v) -> bool:
    try:
        toml_literal(v)
        return True
    except Exception:
        return False


# The pool values an override can write (TOML has no null).
WRITABLE = [v for v in POOL if _writable(v)]


@st.composite
def tcp_tables(draw):
    t = {}
    for key, values in [("profile", ["rfc", "ns2", "bsd", "linux22", "rfc2988", "win98", "solaris7", "vxworks54", "hpux1020"]), ("preset", ["reno", "sack1", "sack-iw-lt-abc1-er"]),
                        ("variant", ["tahoe", "reno", "newreno", "sack", "sack1", "fack-rh", "sack-rh"]), ("sack", [True, False]),
                        ("mss", [536, 1000, 1460]), ("initial_window", [1, 2, 4, "rfc3390", "rfc6928"]),
                        ("delayed_ack", [True, False]), ("abc", [0, 1, 2]), ("limited_transmit", [True, False]),
                        ("synack_on_dup_syn", [True, False]), ("rto_initial", ["500ms", "3s"]),
                        ("dupthresh_frac", [0, 4]), ("aggressive_maxburst", [True, False]),
                        ("newreno_less_careful", [True, False]), ("newreno_ack_heuristic", [True, False]),
                        ("cc", ["reno", "cubic"]), ("cwnd_validation", ["rfc5681", "linux"])]:
        if draw(st.booleans()) and draw(st.booleans()):
            t[key] = draw(st.sampled_from(values))
    return t


SACK_PRESETS = {"sack1": "sack1", "sack-iw-lt-abc1-er": "sack"}


def sack_consistent(top: dict, own: dict) -> dict:
    """A SACK variant with SACK off is refused (tcp.variant): where the flow's table over the
    scenario's gives one, the flow turns SACK on."""
    merged = {**top, **own}
    variant = merged.get("variant") or SACK_PRESETS.get(merged.get("preset"), "")
    sack = merged["sack"] if "sack" in merged else merged.get("preset") in SACK_PRESETS
    if variant in ("sack", "sack1", "fack-rh") and not sack:
        own = {**own, "sack": True}
    if variant == "sack-rh":
        # ns-2's SackRH has no Limited Transmit, Early Retransmit or byte counting (refused).
        own = {**own, "limited_transmit": False, "early_retransmit": False, "abc": 0}
    return own


@st.composite
def valid_scenarios(draw):
    kind = draw(st.sampled_from(["single_link", "dumbbell", "custom"]))
    s: dict = {"name": "fuzz"}
    if kind == "single_link":
        topo = {"kind": kind, "rate": draw(st.sampled_from(RATES)), "delay": draw(st.sampled_from(DELAYS))}
        ends = ("sender", "receiver")
    elif kind == "dumbbell":
        pairs = draw(st.integers(1, 3))
        topo = {"kind": kind, "pairs": pairs, "access_rate": draw(st.sampled_from(RATES)),
                "access_delay": draw(st.sampled_from(DELAYS[1:])), "bottleneck_rate": draw(st.sampled_from(RATES)),
                "bottleneck_delay": draw(st.sampled_from(DELAYS))}
        ends = ("s1", "r1")
    else:
        topo = {"kind": kind, "nodes": ["a", "b"],
                "links": [{"a": "a", "b": "b", "rate": draw(st.sampled_from(RATES)), "delay": draw(st.sampled_from(DELAYS))}]}
        ends = ("a", "b")
    if kind != "custom":
        if draw(st.booleans()):
            topo["queue"] = draw(st.sampled_from(QUEUES))
        if draw(st.booleans()):
            topo["loss"] = draw(st.sampled_from(PROBS))
        if draw(st.booleans()):
            topo["reverse_loss"] = draw(st.sampled_from(PROBS))
    if draw(st.booleans()):
        topo["loss_pattern"] = draw(st.sampled_from(["random", "periodic"]))
    if draw(st.booleans()):
        # A host group hanging off the first end (its members idle unless a source uses them).
        topo["groups"] = [{"name": "h{i}", "count": draw(st.integers(1, 3)), "attach": ends[0],
                           "rate": draw(st.sampled_from(RATES)),
                           "delay": draw(st.sampled_from(["1ms", {"uniform": ["1ms", "5ms"]}, {"exponential": "2ms"}]))}]
    s["topology"] = topo
    if draw(st.booleans()):
        s["tcp"] = draw(tcp_tables())
    duration = draw(st.sampled_from([None, "1s", "3s"]))
    if duration:
        s["duration"] = duration
        if draw(st.booleans()):
            s["warmup"] = "100ms"
    flows = []
    for _ in range(draw(st.integers(1, 2))):
        f = {"from": ends[0], "to": ends[1], "bytes": draw(st.sampled_from([1, 1000, 4000, "16KB"] + (["unlimited"] if duration else [])))}
        if kind == "dumbbell" and topo["pairs"] > 1 and draw(st.booleans()):
            f.update({"from": "s{i}", "to": "r{i}", "count": topo["pairs"]})
        if draw(st.booleans()):
            f["start"] = draw(st.sampled_from(["0s", "10ms", "100ms"]))
        if draw(st.booleans()):
            f["start_spacing"] = draw(st.sampled_from(["0s", "5ms"]))
        if draw(st.booleans()):
            f["repeat"] = draw(st.integers(1, 3))
            f["think"] = draw(st.sampled_from(["0s", "10ms"]))
        if draw(st.booleans()):
            f["drops"] = [draw(st.sampled_from([{"kind": "syn"}, {"kind": "data", "segment": 2}, {"kind": "ack", "number": 1},
                                                {"kind": "data", "segment": 1, "transmissions": [1, 2]}]))]
        if draw(st.booleans()):
            f["delays"] = [draw(st.sampled_from([{"kind": "data", "segment": 2, "by": "3ms"}, {"kind": "ack", "number": 1, "by": "40ms"},
                                                 {"kind": "syn", "by": "1ms"}, {"kind": "data", "segment": 1, "transmissions": [1, 2], "by": "100ms"}]))]
        if draw(st.booleans()):
            f["tcp"] = draw(tcp_tables())
        own = sack_consistent(s.get("tcp", {}), f.get("tcp", {}))
        if own:
            f["tcp"] = own
        flows.append(f)
    # Names unique across entries: an entry of `count` flows appends 1..count to its name.
    for i, f in enumerate(flows):
        f["name"] = f"f{i}_"
    s["flows"] = flows
    if draw(st.booleans()):
        servers = [ends[0]] + (["s2"] if kind == "dumbbell" and topo["pairs"] > 1 else [])
        app = draw(apps(ends, servers, bool(duration)))
        own = sack_consistent(s.get("tcp", {}), app.get("tcp", {}))
        if own:
            app["tcp"] = own
        s["apps"] = [app]
    if draw(st.booleans()):
        # UDP sources beside the flows (which end the run when there is no duration).
        src = {"kind": draw(st.sampled_from(["onoff", "cbr"])), "name": "u{i}", "instances": draw(st.integers(1, 3)),
               "from": ends[0], "to": ends[1]}
        key = draw(st.sampled_from(["rate", "mean_rate", "aggregate_rate"]))
        src[key] = draw(st.sampled_from(["64kbps", "1Mbps"] + (["0kbps"] if key != "rate" else [])))
        if draw(st.booleans()):
            src["packet"] = draw(st.sampled_from([28, "1500B", {"mix": [{"p": 0.5, "value": "44B"}, {"p": 0.5, "value": "1500B"}]},
                                                  {"uniform": ["40B", "1000B"]}]))
        if src["kind"] == "onoff" and draw(st.booleans()):
            src["on"] = draw(st.sampled_from(["10ms", {"exponential": "10ms"}, {"pareto": {"shape": 1.5, "mean": "5ms"}}]))
            src["off"] = draw(st.sampled_from(["10ms", {"exponential": "50ms"}, {"pareto": {"shape": 1.2, "mean": "20ms"}}]))
        if src["kind"] == "cbr" and draw(st.booleans()):
            src["jitter"] = True
        if draw(st.booleans()):
            src["count"] = draw(st.integers(1, 50))
        if draw(st.booleans()):
            src["start"] = "5ms"
            src["stop"] = draw(st.sampled_from(["5ms", "500ms"]))
        s.setdefault("apps", []).append(src)
    if draw(st.booleans()):
        # Time series (docs/series.md): some kinds, sampled or not, some capped.
        kinds = draw(st.lists(st.sampled_from(["tcp", "segments", "queue", "drops"]), min_size=1, max_size=4, unique=True))
        s["series"] = []
        for k in kinds:
            e = {"kind": k}
            if k in ("tcp", "queue") and draw(st.booleans()):
                e["interval"] = draw(st.sampled_from(["1ms", "10ms", "1s"]))
            if draw(st.booleans()):
                e["max_rows"] = draw(st.sampled_from([1, 10, 1000]))
            s["series"].append(e)
    return s


@st.composite
def apps(draw, ends, servers, timed):
    """One application of any kind and mode, small: a few exchanges (pages) of small messages."""
    kind = draw(st.sampled_from(["reqresp", "http10", "http11", "ftp"]))
    a = {"kind": kind, "name": "app_", "client": ends[1],
         "server": draw(st.sampled_from([servers[0], servers] if kind != "http11" else [servers[0]]))}
    web = kind.startswith("http")
    if kind == "ftp":
        a["file"] = draw(st.sampled_from([1, 1000, "4KB", {"exponential": "2KB"}]))
        if draw(st.booleans()):
            a["direction"] = draw(st.sampled_from(["download", "upload"]))
    else:
        a["response"] = draw(st.sampled_from([1, 1000, "8KB", {"exponential": "2KB"}]))
        if draw(st.booleans()):
            a["request"] = draw(st.sampled_from([1, 300, "2KB"]))
    n = draw(st.integers(1, 3)) if not (timed and draw(st.booleans())) else "unlimited"
    a["pages" if web else "count"] = n
    if kind in ("reqresp", "http10") and draw(st.booleans()):
        a["mode"] = draw(st.sampled_from(["twoway", "oneway"]))
    if kind == "http10" and draw(st.booleans()):
        a["objects"] = draw(st.sampled_from([0, 1, 3, {"exponential": 2}]))
        if draw(st.booleans()):
            a["interobject"] = draw(st.sampled_from(["0s", "10ms", {"exponential": "10ms"}]))
    elif web and draw(st.booleans()):
        a["embedded"] = draw(st.sampled_from([0, 2, {"uniform": [0, 3]}]))
    if kind == "http11" and draw(st.booleans()):
        a["keep_alive"] = True
    if draw(st.booleans()):
        a["think"] = draw(st.sampled_from(["0s", "100ms", {"exponential": "50ms"}]))
    if draw(st.booleans()):
        a["start"] = draw(st.sampled_from(["0s", "10ms"]))
    if draw(st.booleans()):
        a["tcp"] = draw(tcp_tables())
    if draw(st.booleans()):
        # The server's end: knobs other than the profile, preset and SACK, which could give its
        # end another handshake than the client's, and than those a variant may refuse.
        a["server_tcp"] = {k: v for k, v in draw(tcp_tables()).items() if k not in ("profile", "variant", "preset", "sack", "limited_transmit", "abc")}
    if kind != "http11" and draw(st.booleans()):
        a["drops"] = [draw(st.sampled_from([{"kind": "request", "object": 1}, {"kind": "response", "segment": 1},
                                            {"kind": "request", "transmissions": [1, 2]}]))]
    return a


def paths(o, prefix=()):
    """Every key path of a scenario dict (tuples of keys and indices)."""
    out = [prefix] if prefix else []
    if isinstance(o, dict):
        for k, v in o.items():
            out += paths(v, prefix + (k,))
    elif isinstance(o, list):
        for i, v in enumerate(o):
            out += paths(v, prefix + (i,))
    return out


def set_at(o, path, value, delete=False):
    for p in path[:-1]:
        o = o[p]
    if delete:
        del o[path[-1]]
    else:
        o[path[-1]] = value


@st.composite
def cases(draw):
    """(form, scenario, sets): a valid scenario, perhaps broken by a few mutations of the dict, by
    overrides, or sent as TOML text."""
    # Copies: the mutations below must not change the shared tables the strategies draw from.
    s = copy.deepcopy(draw(valid_scenarios()))
    sets = []
    for _ in range(draw(st.integers(0, 2))):
        ps = paths(s)
        path = draw(st.sampled_from(ps))
        how = draw(st.sampled_from(["value", "value", "delete", "unknown", "override"]))
        if how == "value":
            set_at(s, path, copy.deepcopy(draw(st.sampled_from(POOL))))
        elif how == "delete":
            set_at(s, path, None, delete=True)
        elif how == "unknown" and isinstance(s, dict):
            s[draw(st.sampled_from(["colour", "flow", "topologie"]))] = 1
        else:
            value = draw(st.sampled_from(WRITABLE))
            sets.append(".".join(str(p) for p in path) + "=" + toml_literal(value))
    form = draw(st.sampled_from(["dict", "dict", "toml"]))
    return form, s, sets


def as_toml(s: dict) -> str:
    """A scenario dict as TOML text (inline values; None members left out, as a dict reads them)."""
    lines = []
    for k, v in s.items():
        if v is None:
            continue
        try:
            lines.append(f"{k} = {toml_literal(strip_none(v))}")
        except Exception:
            return ""  # a value TOML cannot write: the dict form covers it
    return "\n".join(lines) + "\n"


def strip_none(v):
    if isinstance(v, dict):
        return {k: strip_none(x) for k, x in v.items() if x is not None}
    if isinstance(v, list):
        return [strip_none(x) for x in v]
    return v


def ns(d: str) -> int:
    m = re.fullmatch(r"(\d+)(ns|us|ms|s|min|h)", d)
    return int(m.group(1)) * UNITS[m.group(2)]


def check_invariants(r: tcplab.Result) -> None:
    m = r.meta
    assert m["packets_created"] == m["packets_delivered"] + m["packets_dropped"] + m["packets_in_flight"], m
    for name, df in [("connections", r.connections), ("links", r.links), ("transfers", r.transfers)]:
        for col in df.columns:
            if df[col].dtype.kind in "iuf":
                vals = df[col].dropna()
                assert all(math.isfinite(v) and v >= 0 for v in vals), f"{name}.{col}: {list(vals)}"
                if df[col].dtype.kind in "iu":
                    assert not df[col].isna().any(), f"{name}.{col} has a missing counter"
    for name, df in [("objects", r.objects), ("pages", r.pages)]:
        for col in df.columns:
            if df[col].dtype.kind in "iuf":
                vals = df[col].dropna()
                assert all(math.isfinite(v) and v >= 0 for v in vals), f"{name}.{col}: {list(vals)}"
    if not r.objects.empty:
        o = r.objects
        assert (o["bytes_delivered"] <= o["response_bytes"]).all() and (o["request_delivered"] <= o["request_bytes"]).all()
        done = o.dropna(subset=["acked_s"])
        for _, x in done.iterrows():
            assert abs(x["transfer_time_s"] - (x["acked_s"] - x["request_s"])) < 1e-6, x
    if not r.pages.empty:
        for _, p in r.pages.iterrows():
            if r.objects.empty:  # (a page cut short by the end of the run, before its first object)
                assert p["objects"] == 0 and p["bytes"] == 0, p
                continue
            objs = r.objects[(r.objects["client"] == p["client"]) & (r.objects["page"] == p["page"])]
            assert p["objects"] <= len(objs) and p["bytes"] <= objs["response_bytes"].sum(), (p, objs)
    links = r.links
    assert (links["utilization"] <= 1 + 1e-9).all(), list(links["utilization"])
    assert ((links["udp_bytes"] <= links["sent_bytes"]) & (links["tcp_bytes"] >= 0)).all()
    # A delay filter holds packets only where a flow asked for it.
    if not any(f.get("delays") for f in r.scenario.get("flows", [])):
        assert (links["delayed_filter"] == 0).all(), list(links["delayed_filter"])
    for _, u in r.udp.iterrows():
        if "warmup" not in r.scenario:  # (after a warmup, packets sent before it arrive in the counts)
            assert u["sent_pkts"] == u["delivered_pkts"] + u["dropped_pkts"] + u["in_flight_pkts"], dict(u)
        for col in ("sent_bytes", "delivered_bytes", "dropped_bytes", "rate_bps"):
            assert u[col] >= 0, dict(u)
    # Goodput within the slowest link (every path crosses a link of that rate in these
    # topologies). With a warmup the window opens mid-packet: the packet then on the wire counts
    # whole, so one packet's bits over the window are allowed on top.
    # (Host-group members, access_h*, are off the flows' paths.)
    slowest = links[~links["link"].str.startswith("access_h")]["rate_bps"].min()
    warmup = ns(r.scenario["warmup"]) / 1e9 if "warmup" in r.scenario else None
    for _, c in r.connections.iterrows():
        if pd.isna(c["goodput_bps"]):
            continue
        allowed = slowest * (1 + 1e-9)
        if warmup is not None:
            end = c["complete_s"] if not pd.isna(c["complete_s"]) else r.meta["sim_time_s"]
            window = end - max(c["start_s"], warmup)
            allowed += (c["mss"] + 40) * 8 / window if window > 0 else math.inf
        assert c["goodput_bps"] <= allowed, (c["name"], c["goodput_bps"], slowest, warmup)
    check_series(r)
    # Flows start as specified: flow i of an entry at start + (i - 1)·start_spacing.
    expected = []
    for f in r.scenario["flows"]:
        for i in range(f["count"]):
            expected.append(ns(f["start"]) + i * ns(f["start_spacing"]))
    assert len(expected) == len(r.connections)
    # (A run without flows, UDP sources only, has a connections table without columns.)
    for want, got in zip(expected, r.connections["start_s"] if len(expected) else []):
        if not pd.isna(got):
            assert round(got * 1e9) == want, (want, got)
        else:
            assert "duration" in r.scenario and want > ns(r.scenario["duration"]) - 1, (want, r.scenario.get("duration"))


def check_series(r: tcplab.Result) -> None:
    """The series recorded (if any): within their caps, inside the run's time, and agreeing with
    the link rows (queues never above their maximum; every drop counted, when no warmup hides
    some from the rows and no cap cut the table)."""
    import warnings

    s = r.series
    asked = {e["kind"]: e for e in r.scenario.get("series", [])}
    assert set(s) == set(asked), (list(s), asked)
    end = r.meta["sim_time_s"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", tcplab.series.SeriesWarning)
        for kind in s:
            df = s[kind]
            cap = asked[kind].get("max_rows", 1_000_000)
            assert len(df) <= cap and (s.truncated[kind] == (len(df) == cap) or not s.truncated[kind]), (kind, len(df), cap)
            assert ((df["time_s"] >= 0) & (df["time_s"] <= end + 1e-9)).all(), kind
            assert df["time_s"].is_monotonic_increasing, kind
        if "tcp" in s:
            assert (s.tcp["cwnd"] > 0).all() and (s.tcp["rto_s"] > 0).all()
        if "queue" in s:
            peak = s.queue.groupby("link", observed=True)["pkts"].max()
            rows = r.links.set_index("link")["max_queue_pkts"]
            assert all(v <= rows[k] for k, v in peak.items()), (peak, rows)
        if "drops" in s and not s.truncated["drops"] and "warmup" not in r.scenario:
            n = s.drops.groupby("link", observed=True).size()
            assert all(n.get(l, 0) == d for l, d in zip(r.links["link"], r.links["dropped_pkts"])), (n, r.links["dropped_pkts"])


def attempt(form: str, s: dict, sets: list):
    scenario = s
    if form == "toml":
        text = as_toml(s)
        scenario = text if text.strip() else s
    try:
        return tcplab.run(scenario, sets=sets), None
    except tcplab.ScenarioError as e:
        return None, e


@FUZZ
@given(cases())
def test_generated_scenarios_are_refused_by_key_or_run_clean(monkeypatch_env, case):
    form, s, sets = case
    r, e = attempt(form, s, sets)
    if e is not None:
        msg = str(e)
        assert e.reason, msg
        if e.path:
            assert msg == f"{e.path}: {e.reason}", msg
        else:
            # Only what has no key: a TOML text's syntax (line and column given) or the whole scenario.
            assert e.reason.startswith("invalid TOML (line") or e.reason == "a scenario is a table (a JSON object)", msg
        assert "invalid JSON" not in msg, msg
    else:
        check_invariants(r)


@FUZZ
@given(valid_scenarios())
def test_valid_generated_scenarios_run_and_pass_invariants(monkeypatch_env, s):
    r, e = attempt("dict", s, [])
    assert e is None, f"a valid scenario was refused: {e}\n{s}"
    check_invariants(r)
    # The echo reads back to the same scenario.
    assert tcplab.validate(r.scenario) == r.scenario


@pytest.fixture(scope="module")
def monkeypatch_env():
    # A small memory limit: a mutation to a large count or pair number is refused by size
    # quickly instead of building a large world.
    mp = pytest.MonkeyPatch()
    mp.setenv("TCPLAB_MAX_MEMORY", "64MB")
    yield
    mp.undo()
